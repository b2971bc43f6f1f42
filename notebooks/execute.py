"""Run the tutorials top to bottom and store their outputs in static form.

    python notebooks/execute.py                          # every tutorial
    python notebooks/execute.py 04_training_loop.ipynb   # some of them

Each notebook runs in a fresh kernel whose working directory is ``notebooks/`` and whose path
starts with this checkout, so it imports this gradnb. The stored outputs keep only their static
forms (SVG, HTML, text): the live ipywidgets views and the saved widget state are dropped. A saved
widget shows an error ("model not found") or a stale drawing until a kernel runs it (a live
``%%trace`` view would be stored half-drawn), while the SVG reads the same on GitHub, nbviewer
and Binder. Running a cell brings its live view back.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def tutorials(names: list[str]) -> list[Path]:
    """The notebooks named in ``names`` (default: every numbered tutorial)."""
    if names:
        return [HERE / Path(name).name for name in names]
    return sorted(HERE.glob("[0-9][0-9]_*.ipynb"))


def static_only(notebook) -> None:
    """Keep every static form; drop the live widget views, the widget state and run timestamps,
    and merge the pieces the kernel happened to split one print into (so reruns are identical)."""
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        merged = []
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_MIME, None)
            previous = merged[-1] if merged else None
            if (output.output_type == "stream" and previous is not None
                    and previous.output_type == "stream" and previous.name == output.name):
                previous.text += output.text
            else:
                merged.append(output)
        if cell.cell_type == "code":
            cell.outputs = merged


def execute(path: Path) -> float:
    """Execute ``path`` in place; returns the seconds it took."""
    notebook = nbformat.read(path, as_version=4)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE.parent), env.get("PYTHONPATH")) if p)
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     record_timing=False,  # no timestamps: no churn in diffs
                                     resources={"metadata": {"path": str(HERE)}})
    start = time.perf_counter()
    client.execute(env=env)
    took = time.perf_counter() - start
    static_only(notebook)
    nbformat.write(notebook, path)
    return took


def main(names: list[str]) -> None:
    """Execute the tutorials and print how long each took."""
    for path in tutorials(names):
        print(f"{path.name}: {execute(path):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
