"""A notebook executed by a real kernel (nbclient): the saved outputs hold the static forms.

This is what GitHub, nbviewer and nbval see: the SVG graph with the user's names, the
gradients, the memory figures; and an error inside ``%%trace`` fails the run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[2]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

SEED_CELLS = [
    "%load_ext gradnb",
    (
        "import gradnb as torch\n"
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "b = torch.tensor(1.0, requires_grad=True)"
    ),
    "%%trace\ny = w * x + b\nloss = y * y",
    "%backward loss --retain-graph",
    "%backward loss --step",
    "h = torch.ones(8, requires_grad=True)\n(h * 2).exp().sum().backward()\n%memory",
    "%%trace -o before -q\nz = (w * x).exp()",
    "%%trace -o after -q\nz = (w * x + b).exp()",
    "%tracediff before after",
]


def execute(cells: list[str]):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return notebook


def data_of(cell) -> list[dict]:
    return [out.get("data", {}) for out in cell.outputs if out.output_type == "display_data"]


@pytest.fixture(scope="module")
def seed_notebook():
    return execute(SEED_CELLS)


def test_trace_cell_saves_the_svg_graph(seed_notebook):
    outputs = data_of(seed_notebook.cells[2])
    static = [d for d in outputs if "image/svg+xml" in d]
    assert len(static) == 1
    labels = re.findall(r">([^<>]+)</text>", static[0]["image/svg+xml"])
    for label in ("x", "w", "b", "loss", "MulBackward0"):
        assert label in labels
    assert static[0]["text/plain"].startswith("GraphView: 3 ops")
    # No widget for the final graph: its HTML is interactive without ipywidgets.
    assert WIDGET_MIME not in static[0] and "gradnb-igraph" in static[0]["text/html"]
    live = [d for d in outputs if "image/svg+xml" not in d]
    assert [(set(d), d["text/plain"]) for d in live] == [({WIDGET_MIME, "text/plain"}, "")]


def test_backward_cell_saves_graph_image_then_gradients_and_memory(seed_notebook):
    graph, report = data_of(seed_notebook.cells[3])
    text = report["text/plain"]
    assert text.startswith("backward(loss): 6 nodes ran (3 ops, 3 AccumulateGrad)")
    rows = {line.split()[0]: line.split()[3] for line in text.splitlines()[2:5]}
    assert rows == {"w": "28", "x": "42", "b": "14"}
    assert re.search(r"memory: freed \d+ B", text)
    # The graph is its own output: an SVG image (GitHub, nbviewer) and, where scripts run,
    # the interactive HTML whose fallback is that image; never inline SVG inside the report,
    # which a sanitizer would reduce to run-on label text.
    assert 'data-highlight="path"' in graph["image/svg+xml"]
    assert "data:image/svg+xml;base64," in graph["text/html"]
    assert graph["text/plain"].startswith("GraphView: 3 ops")
    assert "<svg" not in report["text/html"]


def test_step_cell_has_widget_and_static_step_table(seed_notebook):
    (stepper,) = data_of(seed_notebook.cells[4])
    assert WIDGET_MIME in stepper
    assert "gradnb-steps" in stepper["text/html"]
    assert "accumulated" in stepper["text/plain"]
    # x, w and y stay alive in the namespace: released by the graph, not freed.
    assert "freed 0 B; released but still referenced 12 B" in stepper["text/plain"]


def test_memory_cell_has_exact_freed_bytes(seed_notebook):
    (meter,) = data_of(seed_notebook.cells[5])
    assert "freed 32 B in total" in meter["text/plain"]  # exp's saved result: 8 float32
    # Each call is labelled by the cell that ran it, in the table and on the log-scale plot.
    cells = [line.split()[1:3] for line in meter["text/plain"].splitlines()[2:]]
    assert cells == [["In", "[4]"], ["In", "[5]"], ["In", "[6]"]]
    assert "data:image/svg+xml;base64," in meter["text/html"]


def test_tracediff_cell_saves_diff_drawing_and_list(seed_notebook):
    (diff,) = data_of(seed_notebook.cells[8])
    assert diff["text/plain"].splitlines()[:2] == [
        "TraceDiff: 2 ops -> 3 ops: 1 added, 0 removed, 0 changed; 0 gradients changed",
        "  + AddBackward0 () float32",
    ]
    assert 'data-highlight="added"' in diff["image/svg+xml"]
    assert "gradnb-trace-diff" in diff["text/html"]


def test_an_error_inside_trace_shows_the_users_line():
    with pytest.raises(CellExecutionError) as raised:
        execute(["%load_ext gradnb", "%%trace\nimport gradnb\nv = gradnb.ones(2)\nv.reshape(3)"])
    message = re.sub(r"\x1b\[[0-9;]*m", "", str(raised.value))
    assert "Cell In[2], line 4" in message and "----> 4 v.reshape(3)" in message
    assert "Could not get source" not in message and "exec(body" not in message


def test_outputs_are_identical_across_runs(seed_notebook):
    again = execute(SEED_CELLS)

    def comparable(notebook):
        return [[{k: v for k, v in d.items() if k != WIDGET_MIME} for d in data_of(cell)]
                for cell in notebook.cells]

    assert comparable(again) == comparable(seed_notebook)


def test_an_error_inside_trace_fails_the_notebook():
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        execute(["%load_ext gradnb", "%%trace\nimport gradnb\n1 / 0"])
