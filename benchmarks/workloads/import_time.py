"""Workload 5c: ``import gradnb`` in a fresh interpreter, next to the imports it builds on."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import Table, number
from benchmarks.session import Session

TITLE = "5c. Toolkit: import time"
REPOSITORY = Path(__file__).resolve().parents[2]
NOTEBOOK_ONLY = ("IPython", "ipywidgets", "matplotlib")  # the engine must not import these
_IMPORTTIME_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \|(\s*)(\S+)")


def _import_once(module: str, env: dict[str, str]) -> tuple[float, float, list[str]]:
    """Cumulative import µs (``-X importtime``), process wall seconds, notebook modules loaded."""
    probe = f"import {module}, sys; print(*[m for m in {NOTEBOOK_ONLY!r} if m in sys.modules])"
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        check=False,
        cwd=REPOSITORY,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError((completed.stderr.strip().splitlines() or ["failed"])[-1])
    cumulative = [
        int(match.group(1))
        for match in map(_IMPORTTIME_LINE.match, completed.stderr.splitlines())
        if match and match.group(3) == module and match.group(2) == " "
    ]
    return float(cumulative[-1]), wall, completed.stdout.split()


def run(session: Session) -> Table:
    """Median over fresh interpreters of each module's import."""
    settings = session.settings
    env = {k: v for k, v in os.environ.items() if k not in settings.worker_env_removals}
    # Measure what an installed package costs: with its bytecode cached (pip compiles it at
    # install time). Where the environment forbids writing bytecode next to the sources, the
    # cache goes to a private folder, filled by one untimed import of each module first.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cache = tempfile.mkdtemp(prefix="gradnb-pycache-")
    env["PYTHONPYCACHEPREFIX"] = cache
    modules = ["numpy", *(m for m in ("gradnb", "torch") if m in settings.systems)]
    description = (
        f"Median over {settings.import_runs} fresh interpreters: the module's cumulative "
        "import time from `python -X importtime`, and the wall time of the whole "
        "`python -c 'import ...'` process, with bytecode cached as after `pip install` "
        "(one untimed import first). NumPy is the floor gradnb builds on. *Notebook "
        "modules* lists any of IPython/ipywidgets/matplotlib the import pulled in."
    )
    header = ["module", "import (ms)", "process wall (ms)", "notebook modules"]
    table = Table(TITLE, description, header)
    try:
        _measure(modules, env, settings, session, table)
    finally:  # the private bytecode cache is scratch: leave nothing in the temp folder
        shutil.rmtree(cache, ignore_errors=True)
    return table


def _measure(modules: list[str], env: dict, settings, session: Session, table: Table) -> None:
    """One row per module: median import and process times over fresh interpreters."""
    for module in modules:
        try:
            _import_once(module, env)  # fills the bytecode cache
            runs = [_import_once(module, env) for _ in range(settings.import_runs)]
        except (subprocess.SubprocessError, RuntimeError) as error:
            table.rows.append([f"import {module}", f"error: {error}", "", ""])
            continue
        loaded = sorted({name for *_, names in runs for name in names})
        if loaded and module == "gradnb":
            session.notes.append(f"**import gradnb** pulls in {', '.join(loaded)}.\n")
        table.rows.append(
            [
                f"import {module}",
                number(statistics.median(r[0] for r in runs) / 1e3),
                number(statistics.median(r[1] for r in runs) * 1e3),
                ", ".join(loaded) or "none",
            ]
        )
