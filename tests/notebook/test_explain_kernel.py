"""The explaining views in a real kernel (nbclient): ``%watch``, ``%why`` with cell numbers,
the in-place error drawn, and the chain-rule step player, as a saved notebook keeps them."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    "%load_ext gradnb",
    "%watch on",
    ("import gradnb as torch\n"
     "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
     "w = torch.tensor([3.0, 4.0], requires_grad=True)"),
    "h = x * 2\nz = h.detach()\nloss = (z * w).sum()\nloss.backward()",
    "%why x z h w",
    "y = x.exp()\ny.mul_(2)",
    "%backward y.sum()",
    "%%trace\np = torch.tensor([0.0, 1.0], requires_grad=True)\np.log().sum().backward()",
    "%why p",
    "%backward (x * w).sum() --step",
]


@pytest.fixture(scope="module")
def notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return nb


def plain(cell) -> str:
    return "\n".join(out.get("data", {}).get("text/plain", "") + out.get("text", "")
                     for out in cell.outputs)


def test_why_names_cells_and_lines(notebook):
    text = plain(notebook.cells[4])
    assert "x: .grad is None because its path was cut by detach() at cell [4], line 2" in text
    assert "z: requires_grad=False because detach() cut it from the graph at cell [4], line 2" \
        in text
    assert "h: .grad is None because h is not a leaf (MulBackward0 at cell [4], line 1)" in text
    assert "w: .grad holds the gradient of one backward pass at cell [4], line 4" in text


def test_backward_draws_the_inplace_error(notebook):
    cell = notebook.cells[6]
    (display,) = [o for o in cell.outputs if o.output_type == "display_data"]
    assert display["data"]["text/plain"].startswith(
        "in-place error: y ((2,) float32) was saved by ExpBackward0 at cell [6], line 1 and then "
        "modified in place by mul_ at cell [6], line 2 (version 0 -> 1)")
    assert "data:image/svg+xml;base64," in display["data"]["text/html"]
    assert not [o for o in cell.outputs if o.output_type in ("error", "stream")]


def test_drawings_name_lines_not_cell_numbers(notebook):
    """Cell numbers depend on how often cells ran (nbval runs them all as [1]): drawings give
    the line and its code instead, so a stored drawing reads the same on every run."""
    (svg,) = [o["data"]["image/svg+xml"] for o in notebook.cells[7].outputs
              if "image/svg+xml" in o.get("data", {})]
    assert "created at line 3: p.log().sum().backward()" in svg
    assert "cell [" not in svg


def test_why_finds_the_log_of_zero(notebook):
    text = plain(notebook.cells[8])
    assert text.startswith("p: .grad has Inf: first made non-finite by LogBackward0 at cell [8], "
                           "line 3")
    assert "log of 0" in text and "self = 0.0 at index 0" in text


def test_step_player_static_form_has_rules(notebook):
    data = [o["data"] for o in notebook.cells[9].outputs if o.output_type == "display_data"]
    static = [d for d in data if "text/html" in d and "gradnb-steps" in d["text/html"]]
    assert static
    assert "self: grad * other; other: grad * self" in static[0]["text/plain"]
