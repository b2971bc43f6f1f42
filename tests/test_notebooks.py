"""The tutorials in ``notebooks/``, beyond what nbval checks.

nbval (``python -m pytest`` runs it over ``notebooks/``) compares each cell's outputs with the
stored ones, but it lets some failures through: a magic's ``UsageError`` is printed, not raised,
so the cell "passes"; outputs it is told to ignore are not looked at. This module executes every
tutorial again with nbclient and fails on any error, traceback or stderr output and on any cell
whose outputs differ in kind from the stored ones; runs every exercise with its solution, where
each check cell must then say ``Correct!``; and builds the Binder environment from exactly the
files in ``binder/`` (as repo2docker does, minus Docker) and runs the tutorials with nbval there.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tomllib
import venv
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SOLUTION = re.compile(r"<summary>Solution</summary>.*?```python\n(.*?)```", re.DOTALL)


def kernel_env() -> dict:
    """The environment for kernels: this checkout's gradnb first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def execute(notebook) -> None:
    """Run ``notebook`` top to bottom in a fresh kernel, in ``notebooks/`` as Jupyter would."""
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", allow_errors=True,
        resources={"metadata": {"path": str(ROOT / "notebooks")}})
    client.execute(env=kernel_env())


def installed(name: str) -> bool:
    """Whether the module ``name`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses the module
        return False


def output_kinds(cell) -> list[tuple]:
    """What a cell shows, without the content: stream names and MIME types, streams merged."""
    kinds: list[tuple] = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            kind = ("stream", output.name)
            if kinds and kinds[-1] == kind:
                continue  # the kernel may split one print into several stream messages
        else:
            mimes = sorted(m for m in output.get("data", {}) if m != WIDGET_MIME)
            kind = (output.output_type, *mimes)
        kinds.append(kind)
    return kinds


def problems_of(cell) -> list[str]:
    """Errors a reader would see in the cell's outputs."""
    found = []
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            found.append(f"{output.ename}: {output.evalue}")
        elif output.output_type == "stream" and output.name == "stderr":
            found.append(f"stderr: {output.text.strip()[:300]}")
        elif output.output_type == "stream" and re.search(r"UsageError|Traceback", output.text):
            found.append(f"stdout: {output.text.strip()[:300]}")
    return found


def tagged(cell, tag: str) -> bool:
    return tag in cell.get("metadata", {}).get("tags", [])


@pytest.fixture(params=NOTEBOOKS, ids=lambda path: path.stem, scope="module")
def stored(request):
    notebook = nbformat.read(request.param, as_version=4)
    missing = [name for name in notebook.metadata.get("gradnb", {}).get("requires", [])
               if not installed(name)]
    if missing:
        pytest.skip(f"{request.param.name} needs {', '.join(missing)}, which is not installed")
    return request.param, notebook


def test_the_series_is_complete():
    numbers = [path.name[:2] for path in NOTEBOOKS]
    assert numbers == sorted(set(numbers))
    assert {f"{n:02d}" for n in (*range(1, 8), 9)} <= set(numbers)


def test_stored_outputs_exist_and_hold_no_errors(stored):
    path, notebook = stored
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code), f"{path.name} is not executed"
    for cell in code:
        assert not problems_of(cell), (path.name, cell.source[:80])


def test_stored_outputs_are_static(stored):
    """No saved widget views or state: run ``python notebooks/execute.py`` to refresh outputs."""
    path, notebook = stored
    assert "widgets" not in notebook.metadata, path.name
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            assert WIDGET_MIME not in output.get("data", {}), (path.name, cell.source[:80])


def test_graphs_are_stored_as_static_svg(stored):
    path, notebook = stored
    traced = [cell for cell in notebook.cells if cell.source.startswith("%%trace")
              and not {"-q", "--quiet"} & set(cell.source.splitlines()[0].split())]
    for cell in traced:
        svgs = [out for out in cell.outputs if "image/svg+xml" in out.get("data", {})]
        assert len(svgs) == 1, (path.name, cell.source[:80])


def test_a_fresh_run_is_clean_and_matches_the_stored_outputs(stored):
    path, notebook = stored
    fresh = nbformat.from_dict(notebook)
    for cell in fresh.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    execute(fresh)
    for before, after in zip(notebook.cells, fresh.cells, strict=True):
        if after.cell_type != "code":
            continue
        assert not problems_of(after), (path.name, after.source[:80], problems_of(after))
        assert output_kinds(after) == output_kinds(before), (path.name, after.source[:80])


def test_every_exercise_is_solved_by_its_solution(stored):
    path, notebook = stored
    solved = nbformat.from_dict(notebook)
    cells = solved.cells
    exercises = [i for i, cell in enumerate(cells) if tagged(cell, "exercise")]
    assert exercises, f"{path.name} has no exercise"
    for index in exercises:
        following = [c for c in cells[index + 1:] if c.cell_type == "markdown"]
        solution = SOLUTION.search(following[0].source) if following else None
        assert solution, f"{path.name}: no solution after exercise cell {index}"
        cells[index].source = solution.group(1)
    for cell in cells:
        if cell.cell_type == "code":
            cell.outputs = []
    execute(solved)
    checks = [cell for cell in cells if tagged(cell, "check")]
    assert len(checks) == len(exercises)
    for cell in cells:
        if cell.cell_type == "code":
            assert not problems_of(cell), (path.name, cell.source[:80], problems_of(cell))
    for cell in checks:
        text = "".join(out.get("text", "") for out in cell.outputs)
        assert text.strip() == "Correct!", (path.name, cell.source[:80], text)


# -- Binder --------------------------------------------------------------------------------------


def test_binder_requirements_are_the_notebook_extra():
    """binder/requirements.txt must not drift from gradnb's dependencies plus its `notebook`
    extra in pyproject.toml (postBuild installs gradnb without dependencies)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    expected = project["dependencies"] + project["optional-dependencies"]["notebook"]
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    required = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert sorted(required) == sorted(expected)
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() >= "python-3.11"
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)


def _repository_copy(target: Path) -> Path:
    ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build",
                                    ".pytest_cache", ".hypothesis", ".ruff_cache", "out")
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


@pytest.mark.binder
def test_the_binder_environment_runs_the_tutorials(tmp_path):
    """As repo2docker would: a fresh Python, ``pip install -r binder/requirements.txt`` and
    ``binder/postBuild`` from the repository root; then nbval over the tutorials in it."""
    repo = _repository_copy(tmp_path / "repo")
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter")  # postBuild's `jupyter trust` writes here

    def run(*command, cwd=repo):
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    run(python, "-m", "pip", "install", "-q", "-r", "binder/requirements.txt")
    run("bash", "binder/postBuild")
    location = run(python, "-c", "import gradnb; print(gradnb.__file__)", cwd=tmp_path)
    assert Path(location.strip()).is_relative_to(repo)
    # The test tools are not part of the Binder image; add them to run the notebooks.
    run(python, "-m", "pip", "install", "-q", "pytest", "nbval")
    out = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "notebooks/")
    assert re.search(r"\d+ passed", out) and "failed" not in out, out[-2000:]

