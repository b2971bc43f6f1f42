"""The toolkit on PyTorch objects in a notebook executed by a real kernel (nbclient): the
static outputs a saved notebook keeps (SVG graph, gradients, freed bytes, module frames) and
one-line errors for bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("torch")

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]

CENSUS = '''
import weakref
packed = []
def pack(t):
    s = t.untyped_storage()
    packed.append((weakref.ref(t if t._base is None else t._base), s.data_ptr(), s.nbytes()))
    return t
def torch_released():
    alive = {key for ref, key, _ in packed if ref() is not None}
    return sum(n for key, n in {key: n for _, key, n in packed}.items() if key not in alive)
'''

CELLS = [
    "%load_ext gradnb",
    ("import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
    "w = torch.tensor(3.0, requires_grad=True)\nb = torch.tensor(1.0, requires_grad=True)"),
    CENSUS,
    ("%%trace\nwith torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):\n"
    "    loss = (w * x + b) ** 2"),
    "%backward loss",
    "print(torch_released())",
    ("import torch.nn as nn\ntorch.manual_seed(0)\n"
    "model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
    "inputs = torch.randn(5, 3)"),
    "%%trace\nout = model(inputs)\nmse = (out ** 2).mean()",
    "%backward out",
    "print(out.grad_fn is not None, [p.grad for p in model.parameters()] == [None] * 4)",
    # 10-13: #25, %why on torch code with lines (%%trace and %watch on), any expression
    ("%%trace -q\nv = torch.tensor([1.0, 2.0], requires_grad=True)\nh = v * 2\n"
     "with torch.no_grad():\n    q = v * 3\nloss = (h + q).sum()\nloss.backward()"),
    "%why h q",
    "%watch on\npred = model(inputs)\nwith torch.no_grad():\n    frozen = model(inputs)",
    "%why pred frozen model[0].weight",
]
BAD_INPUT = 8  # a non-scalar output without --gradient


def execute(cells: list[str]):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.cells[BAD_INPUT].metadata["tags"] = ["raises-exception"]  # the kernel reports it
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return notebook


def data_of(cell) -> list[dict]:
    return [out.get("data", {}) for out in cell.outputs if out.output_type == "display_data"]


@pytest.fixture(scope="module")
def notebook():
    return execute(CELLS)


def test_trace_saves_the_torch_graph(notebook):
    static = [d for d in data_of(notebook.cells[3]) if "image/svg+xml" in d]
    assert len(static) == 1
    labels = re.findall(r">([^<>]+)</text>", static[0]["image/svg+xml"])
    for label in ("x", "w", "b", "loss", "MulBackward0", "AddBackward0"):
        assert label in labels


def test_backward_saves_gradients_and_the_bytes_torch_released(notebook):
    graph, report = data_of(notebook.cells[4])
    assert 'data-highlight="path"' in graph["image/svg+xml"]
    text = report["text/plain"]
    rows = {line.split()[0]: line.split()[3] for line in text.splitlines()[2:5]}
    assert rows == {"w": "28", "x": "42", "b": "14"}
    freed = int(re.search(r"memory: freed (\d+) B", text).group(1))
    assert freed == int(notebook.cells[5].outputs[0]["text"]) == 4


def test_sequential_is_traced_with_its_modules_grouped(notebook):
    (static,) = [d for d in data_of(notebook.cells[7]) if "image/svg+xml" in d]
    labels = re.findall(r">([^<>]+)</text>", static["image/svg+xml"])
    assert {"model.0.weight", "model.2.bias", "ReluBackward0", "out", "mse"} <= set(labels)
    # The interactive form frames each module call and folds it on a click.
    for group in ("model.0", "model.1", "model.2"):
        assert f'"label":"{group}"' in static["text/html"]


def test_bad_input_is_one_line_and_changes_nothing(notebook):
    # IPython prints a UsageError as one stderr line, without a traceback.
    assert [(o.output_type, o.get("text")) for o in notebook.cells[BAD_INPUT].outputs] == [
        ("stream", ("UsageError: %backward: out has shape (5, 1); pass --gradient for a "
                   "non-scalar output\n"))]
    assert notebook.cells[9].outputs[0]["text"] == "True True\n"


def test_why_gives_lines_for_torch_code(notebook):
    """#25: %%trace's TorchFunctionMode and %watch on give torch tensors their lines."""
    text = "".join(d.get("text/plain", "") for d in data_of(notebook.cells[11]))
    assert "h: .grad is None because h is not a leaf (MulBackward0 at cell [11], line 3)" in text
    assert "q: requires_grad=False because it was computed under no_grad() at cell [11], line 5" \
        in text
    text = "".join(d.get("text/plain", "") for d in data_of(notebook.cells[13]))
    assert "pred: .grad is None because pred is not a leaf (AddmmBackward0 at cell [13], line 2)" \
        in text
    assert "frozen: requires_grad=False because it was computed under no_grad() at cell [13], " \
        "line 4" in text
    assert "model[0].weight: .grad" in text
