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
    # 10-15: #25, the grad-mode switches in both forms and %why on any expression
    ("%%trace -q\nv = torch.tensor([1.0, 2.0], requires_grad=True)\nwith torch.no_grad():\n"
     "    q = v * 2\nloss = (q * x).sum()\nloss.backward()"),
    "%why v q",
    "@torch.no_grad()\ndef double(a):\n    return a * 2",
    ("%%trace -q\nu = torch.tensor([1.0, 2.0], requires_grad=True)\nq2 = double(u)\n"
     "loss2 = (q2 * x).sum()\nloss2.backward()"),
    "%why u q2",
    ("model = torch.nn.Sequential(torch.nn.Linear(2, 1))\nloss3 = model(x).sum()\n"
     "loss3.backward()\n%why model[0].weight list(model.parameters())[1]"),
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


def test_why_names_no_grad_in_a_traced_cell(notebook):
    """#25: the leaf's path was cut by no_grad, at the op's line, in the with block's cell."""
    text = plain(notebook.cells[11])
    assert text.startswith("v: .grad is None because its path was cut by no_grad() at cell [11], "
                           "line 4, so it is not used on the path backward took")
    assert "inside the `with no_grad():` block at cell [11], line 3" in text
    assert "q: requires_grad=False because it was computed under no_grad() at cell [11], line 4" \
        in text


def test_why_names_a_no_grad_decorator(notebook):
    text = plain(notebook.cells[14])
    assert text.startswith("u: .grad is None because its path was cut by no_grad() at cell [13], "
                           "line 3")
    assert "q2: requires_grad=False because it was computed under no_grad() at cell [13], " \
        "line 3" in text
    assert "a function decorated with @no_grad(), called at cell [14], line 3" in text


def test_why_takes_any_expression(notebook):
    text = plain(notebook.cells[15])
    assert "model[0].weight: .grad holds the gradient of one backward pass" in text
    assert "list(model.parameters())[1]: .grad holds the gradient" in text
    assert not [o for o in notebook.cells[15].outputs if o.output_type == "error"]
