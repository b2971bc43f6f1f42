"""The magics and views on real PyTorch objects, driven through IPython's InteractiveShell.

The seed example on torch tensors (graph, gradients 42/28/14, freed bytes cross-checked against
what torch really released), an ``nn.Sequential`` traced with its modules framed, ``%grad``,
``%memory`` and ``%gradflow`` on a model, and bad input that changes nothing.
"""

from __future__ import annotations

import re
import warnings
import weakref

import pytest

IPython = pytest.importorskip("IPython")
torch = pytest.importorskip("torch")

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

pytestmark = pytest.mark.torch

SEED = """
import torch
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
"""
MLP = """
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
inputs = torch.randn(5, 3)
targets = torch.randn(5, 1)
"""


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "gradnb")
    shell.run_cell(SEED)
    yield shell
    shell.run_line_magic("unload_ext", "gradnb")
    shell.reset()


def run(shell, code):
    with capture_output() as captured:
        result = shell.run_cell(code)
    return result, captured


def svg_labels(text: str) -> list[str]:
    return re.findall(r">([^<>]+)</text>", text)


def grad_rows(text: str) -> dict[str, str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("name "))
    rows = {}
    for line in lines[start + 1:]:
        if not line or line.startswith("memory:"):
            break
        rows[line.split()[0]] = line.split()[3]
    return rows


def assert_usage_error(result, captured, fragment):
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    message = str(result.error_in_exec)
    assert fragment in message
    assert "\n" not in message
    assert "Traceback" not in captured.stdout + captured.stderr


# -- %%trace ------------------------------------------------------------------------------------
def test_trace_draws_the_seed_example_with_torch_names(ip):
    result, captured = run(ip, "%%trace\nloss = (w * x + b) ** 2\nloss")
    assert result.success and result.result.item() == 49.0
    (output,) = captured.outputs
    labels = svg_labels(output.data["image/svg+xml"])
    for label in ("x", "w", "b", "loss", "MulBackward0", "AddBackward0", "PowBackward0"):
        assert label in labels
    assert output.data["text/plain"].splitlines() == [
        "GraphView: 3 ops, 3 leaves, 1 output; 12 B saved",
        "  MulBackward0(w, x) -> () float32",
        "  AddBackward0(MulBackward0, b) -> () float32",
        "  PowBackward0(AddBackward0) -> loss () float32",
    ]


def test_trace_graph_grows_op_by_op_and_settles_on_grad_fn_graph(ip):
    from gradnb.notebook.torch_adapter.live import LiveTorchTrace

    sizes = []
    recording = LiveTorchTrace()
    recording.listeners.append(lambda t: sizes.append(len(t.ops)))
    with recording:
        loss = torch.nn.functional.cross_entropy(
            torch.randn(2, 3, requires_grad=True) * 2, torch.tensor([0, 2]))
    assert sizes == [1, 3]  # MulBackward0, then LogSoftmaxBackward0 + NllLossBackward0
    assert [op.name for op in recording.ops] == [
        "MulBackward0", "LogSoftmaxBackward0", "NllLossBackward0"]
    assert recording.ops[-1].name == type(loss.grad_fn).__name__
    assert not recording.active


def test_trace_draws_an_earlier_graph_as_its_input(ip):
    ip.run_cell("h = (w * x).exp()")
    result, captured = run(ip, "%%trace -o g -q\nloss = h + b")
    assert result.success and captured.outputs == []
    text = ip.user_ns["g"].text()
    assert text.splitlines()[1:] == [
        "  ExpBackward0() -> () float32",  # made before the trace: drawn as its input
        "  AddBackward0(ExpBackward0, b) -> loss () float32",
    ]


def test_trace_of_a_sequential_groups_each_module(ip):
    from gradnb.notebook.interactive import graph_groups

    ip.run_cell(MLP)
    result, captured = run(ip, "%%trace -o g\nout = model(inputs)\n"
                               "loss = ((out - targets) ** 2).mean()")
    assert result.success
    (output,) = captured.outputs
    view = ip.user_ns["g"]
    groups = {n.label: n.group for n in view.graph.nodes.values() if n.kind != "saved"}
    assert groups["ReluBackward0"] == ("model", "model.1")
    assert groups["model.2.weight"] == ("model", "model.2")  # parameters join their layer
    assert groups["MeanBackward0"] == ()  # ran outside the model
    labels = [g.label for g in graph_groups(view.graph, view.layout)]
    assert {"model", "model.0", "model.1", "model.2"} <= set(labels)
    assert "AddmmBackward0(ReluBackward0, TBackward0, model.2.bias) -> out (5, 1) float32" in (
        output.data["text/plain"])
    for label in ("model.0.weight", "inputs", "out", "loss", "MeanBackward0"):
        assert label in svg_labels(output.data["image/svg+xml"])


def test_graph_view_of_torch_tensors(ip):
    from gradnb.notebook import GraphView

    ip.run_cell(MLP)
    view = GraphView(ip.user_ns["model"](ip.user_ns["inputs"]), namespace=ip.user_ns)
    # inputs (60 B, for the first weight's grad), ReLU's result (80 B), the last weight (16 B).
    assert view.text().splitlines()[0] == "GraphView: 5 ops, 5 leaves, 0 outputs; 156 B saved"
    assert view.to_html().startswith("<div")


def test_a_shared_storage_is_counted_once(ip):
    from gradnb.notebook import GraphView

    weight = torch.ones(4, 3, requires_grad=True)
    batch = torch.ones(2, 3)
    out = (weight * weight).sum() + (batch @ weight.T).sum()
    view = GraphView(out, namespace={"weight": weight, "batch": batch, "out": out})
    # weight (48 B, saved by MulBackward0 twice and as weight.T by MmBackward0) + batch (24 B).
    assert view.saved_bytes == 72


def test_trace_follows_inplace_no_grad_detach_and_custom_functions(ip):
    cell = """%%trace -o g -q
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2

h = x * 2
h.add_(1)
with torch.no_grad():
    ignored = h * 3
q = h.detach() * w
d = Double.apply(q).to(torch.bfloat16)
"""
    result, _ = run(ip, cell)
    assert result.success
    # Saved: the 2 of x * 2 (torch keeps a Python number as a 0-d float64: 8 B), the detached
    # h (4 B, a constant to the graph) and q (4 B). h's first box is named too: the in-place
    # add_ rewrote the grad_fn of the very tensor MulBackward0 made.
    assert ip.user_ns["g"].text().splitlines() == [
        "GraphView: 5 ops, 4 leaves, 4 outputs; 16 B saved",
        "  MulBackward0(x, constant) -> h () float32",
        "  AddBackward0(h) -> h () float32",
        "  MulBackward0(w, constant) -> q () float32",
        "  DoubleBackward(q) -> () float32",
        "  ToCopyBackward0(DoubleBackward) -> d () bfloat16",
    ]


def test_backward_inside_a_traced_cell_is_measured_and_frees_the_drawn_saves(ip):
    result, captured = run(ip, "%%trace\nloss = (w * x).exp()\nloss.backward()")
    assert result.success
    svg = captured.outputs[0].data["image/svg+xml"]
    assert "8 B, released" in svg_labels(svg)  # MulBackward0's saved w and x
    assert [ip.user_ns[n].grad.item() for n in "xw"] == pytest.approx(
        [3 * 403.4288, 2 * 403.4288], rel=1e-5)
    _, captured = run(ip, "%memory")
    text = captured.outputs[0].data["text/plain"]
    # loss (exp's saved result) and x, w stay referenced: released, not freed.
    assert text.splitlines()[-1].split()[-7:] == ["4", "0", "B", "12", "B", "0", "B"]


def test_tracediff_compares_two_torch_traces(ip):
    run(ip, "%%trace -o before -q\ny = w * x + b\nloss = y * y")
    run(ip, "%%trace -o after -q\ny = w * x\nloss = y * y")
    _, captured = run(ip, "%tracediff before after")
    assert captured.outputs[0].data["text/plain"].splitlines()[1] == "  - AddBackward0 () float32"


def test_grad_of_everything_reads_no_non_leaf_grad(ip):
    ip.run_cell("loss = (w * x + b) ** 2\nloss.backward()")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result, captured = run(ip, "%grad")
    assert result.success and "non-leaf" not in captured.stderr
    rows = captured.outputs[0].data["text/plain"].splitlines()
    assert [row.split()[:4] for row in rows[1:]] == [
        ["x", "()", "float32", "42"], ["w", "()", "float32", "28"],
        ["b", "()", "float32", "14"], ["loss", "()", "float32", "None"]]


def test_a_loop_counts_each_iterations_storages_even_at_a_reused_address():
    from gradnb.notebook.torch_adapter.live import LiveTorchTrace

    weight = torch.ones(64, requires_grad=True)
    with LiveTorchTrace() as recording:
        for _ in range(3):
            (weight.exp() * 2).sum().backward()  # frees exp's result: the next may reuse it
    # Each step: exp's result (256 B) and the 2 (a 0-d float64, 8 B).
    assert recording.saved_bytes == 3 * (256 + 8)
    assert all(op.released for op in recording.ops if op.saved)


# -- %backward ----------------------------------------------------------------------------------
def _saved_tensor_census():
    """Record every tensor torch saves (weakly, through the tensor a view was taken of): after
    backward, the bytes of the distinct storages whose saved tensors all died are the bytes
    torch really released."""
    packed: list[tuple[weakref.ref, tuple, int]] = []

    def pack(tensor):
        storage = tensor.untyped_storage()
        owner = tensor if tensor._base is None else tensor._base
        packed.append((weakref.ref(owner), (tensor.device, storage.data_ptr()), storage.nbytes()))
        return tensor

    def released_bytes() -> int:
        alive = {key for ref, key, _ in packed if ref() is not None}
        sizes = {key: nbytes for _, key, nbytes in packed}
        return sum(nbytes for key, nbytes in sizes.items() if key not in alive)

    return torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), released_bytes


def freed_bytes(text: str) -> int:
    return int(re.search(r"memory: freed ([\d,]+) B", text).group(1).replace(",", ""))


def test_backward_gives_grads_and_the_bytes_torch_released(ip):
    hooks, released = _saved_tensor_census()
    with hooks:
        ip.run_cell("loss = (w * x + b) ** 2")
    result, captured = run(ip, "%backward loss")
    assert result.success
    graph, report = captured.outputs
    text = report.data["text/plain"]
    assert text.splitlines()[0] == (
        "backward(loss): 6 nodes ran (3 ops, 3 AccumulateGrad), 3 leaves reached")
    assert grad_rows(text) == {"w": "28", "x": "42", "b": "14"}
    assert [ip.user_ns[n].grad.item() for n in "xwb"] == [42.0, 28.0, 14.0]
    # w * x + b (4 B) is freed; x and w were saved too but the namespace holds them.
    assert freed_bytes(text) == released() == 4
    assert "released but still referenced 8 B; retained by the graph 0 B" in text
    assert 'data-highlight="path"' in graph.data["image/svg+xml"]


def test_backward_freed_bytes_match_torch_on_a_model(ip):
    ip.run_cell(MLP)
    hooks, released = _saved_tensor_census()
    with hooks:
        ip.run_cell("loss = ((model(inputs).tanh() - targets) ** 2).mean()")
    result, captured = run(ip, "%backward loss")
    assert result.success
    text = captured.outputs[-1].data["text/plain"]
    assert freed_bytes(text) == released() > 0
    for name, param in ip.user_ns["model"].named_parameters():
        assert f"model.{name}" in grad_rows(text)
        assert param.grad is not None


def test_backward_retain_graph_then_accumulate_then_step(ip):
    ip.run_cell("loss = (w * x + b) ** 2")
    result, captured = run(ip, "%backward loss --retain-graph")
    assert "freed 0 B" in captured.outputs[-1].data["text/plain"]
    assert "retained by the graph 12 B" in captured.outputs[-1].data["text/plain"]
    result, captured = run(ip, "%backward loss --step")
    assert result.success
    text = captured.outputs[-1].data["text/plain"]
    assert grad_rows(text) == {"w": "56", "x": "84", "b": "28"}
    assert "accumulated" in text
    steps = text.split("step-through:")[1]
    rows = [line.split()[1] for line in steps.strip().splitlines()[1:] if line[:1].isdigit()]
    assert rows == ["PowBackward0", "AddBackward0", "MulBackward0", ".grad"]  # then .grad written
    assert "w: () 56" not in steps and "x: () 42" in steps  # MulBackward0 sent 42 to x


def test_backward_bad_input_is_one_line_and_changes_nothing(ip):
    ip.run_cell("loss = (w * x + b) ** 2\nvec = w * torch.ones(3)\nconst = torch.ones(())")
    for line, fragment in [
        ("%backward nope", "cannot evaluate 'nope'"),
        ("%backward 3", "is a int, not a tensor"),
        ("%backward const", "does not require grad"),
        ("%backward vec", "pass --gradient"),
        ("%backward vec --gradient torch.ones(2)", "--gradient has shape (2,)"),
        ("%backward loss --gradient 1.0", "not a torch tensor"),
        ("%backward loss --bogus", "unrecognized arguments"),
    ]:
        result, captured = run(ip, line)
        assert_usage_error(result, captured, fragment)
    assert all(ip.user_ns[n].grad is None for n in "xwb")
    assert ip.user_ns["loss"].grad_fn._saved_self.item() == 7.0  # the graph is intact
    run(ip, "%backward loss")
    result, captured = run(ip, "%backward loss")
    assert_usage_error(result, captured, "already freed by an earlier backward")
    assert [ip.user_ns[n].grad.item() for n in "xwb"] == [42.0, 28.0, 14.0]


# -- %grad, %memory, %gradflow -------------------------------------------------------------------
def test_grad_memory_and_gradflow_on_a_model(ip):
    ip.run_cell(MLP)
    result, captured = run(ip, "%%trace -q\nfor _ in range(2):\n"
                               "    model.zero_grad()\n"
                               "    ((model(inputs) - targets) ** 2).mean().backward()")
    assert result.success
    result, captured = run(ip, "%grad model.2.bias inputs")
    assert_usage_error(result, captured, "inputs does not require grad")
    result, captured = run(ip, "%grad model.2.bias\n%memory\n%gradflow model")
    assert result.success
    grad, memory, flow = (o.data["text/plain"] for o in captured.outputs)
    assert grad.splitlines()[1].startswith("model.2.bias  (1,)")
    assert memory.startswith("MemoryMeter: 2 backward calls")
    first, second = (line.split()[-7:] for line in memory.splitlines()[-2:])
    assert first == second == ["12", "100", "B", "76", "B", "0", "B"]  # the same twice
    assert [line.split()[0] for line in flow.splitlines()[2:]] == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    result, captured = run(ip, "%gradflow inputs")
    assert_usage_error(result, captured, "not a model")


def test_torch_tensors_get_the_html_table_until_unload(ip):
    tensor = torch.tensor([1.0, -2.0], requires_grad=True) * 2
    data, _ = ip.display_formatter.format(tensor)
    assert data["text/html"].startswith('<div class="gradnb-tensor"><div>tensor (2,) float32, '
                                        "grad_fn=MulBackward0</div>")
    assert data["text/plain"] == repr(tensor)  # torch's own text
    ip.run_line_magic("unload_ext", "gradnb")
    assert "text/html" not in ip.display_formatter.format(tensor)[0]
    ip.run_line_magic("load_ext", "gradnb")


# -- torch is loaded only when met --------------------------------------------------------------
def test_import_and_load_ext_do_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, gradnb\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "ip.run_line_magic('load_ext', 'gradnb')\n"
        "ip.run_cell('import gradnb as torch\\nx = torch.tensor(2.0, requires_grad=True)')\n"
        "ip.run_cell('%%trace -q\\nloss = x * x')\n"
        "ip.run_line_magic('backward', 'loss')\n"
        "ip.run_line_magic('grad', '')\n"
        "assert not [m for m in sys.modules if m == 'torch' or m.startswith('torch.')]\n"
        "print('no torch')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("no torch")


def test_cuda_tensors_show_their_device_and_allocator_delta(ip):
    if not torch.cuda.is_available():  # torch's own CUDA, not CuPy: not the `cuda` marker
        pytest.skip("torch sees no CUDA device")
    ip.run_cell("xc = torch.full((256,), 2.0, device='cuda', requires_grad=True)\n"
                "wc = torch.full((256,), 3.0, device='cuda', requires_grad=True)\n"
                "(wc * xc).exp().sum().backward()")  # .grad buffers exist: the next adds in place
    _, captured = run(ip, "%%trace\nlc = (wc * xc).exp().sum()")
    assert "() float32 cuda:0" in captured.outputs[-1].data["text/plain"]
    _, captured = run(ip, "%backward lc")
    text = captured.outputs[-1].data["text/plain"]
    # Freed: exp's saved result, 1 KiB (two whole 512-byte allocator blocks); nothing new is
    # allocated, so the allocator goes down by exactly as much.
    assert freed_bytes(text) == 1024
    assert "CUDA allocator -1,024 B (1.0 KiB)" in text


def test_why_explains_torch_tensors_from_torch_facts(ip):
    run(ip, "loss = (w * x + b) ** 2\nloss.backward()\n"
            "c = torch.tensor(1.0)\n"
            "z = torch.tensor(0.0, requires_grad=True)\n(torch.log(z) * 0).backward()\n"
            "unused = torch.tensor(5.0, requires_grad=True)")
    expected = {
        "loss": "loss: .grad is None because loss is not a leaf (PowBackward0)",
        "c": "c: requires_grad=False",
        "z": "z: .grad has NaN values",
        "unused": "unused: .grad is None: backward has not reached it",
        "x": "x: .grad is finite and not all zero",
    }
    for name, headline in expected.items():
        result, captured = run(ip, f"%why {name}")
        assert result.success, result.error_in_exec
        assert captured.outputs[0].data["text/plain"].startswith(headline)
    assert ip.user_ns["x"].grad.item() == 42.0  # %why reads, never changes


def test_why_on_a_non_tensor_is_a_usage_error(ip):
    ip.user_ns["n"] = 3
    with pytest.raises(UsageError, match="not a tensor"):
        ip.run_line_magic("why", "n")


@pytest.mark.parametrize("form", ["with", "decorator"])
def test_why_gives_lines_for_torch_code_in_a_traced_cell(ip, form):
    """#25: %%trace's mode sees every torch op, so %why says where nodes and cuts were made."""
    if form == "with":
        result, _ = run(ip, "%%trace -q\nh = w * x\nwith torch.no_grad():\n    q = w * 2\n"
                            "z = h.detach()\nloss = (q * x + z).sum()\nloss.backward()")
        op, block = "line 4", "the `with no_grad():` block at cell [{cell}], line 3"
    else:
        run(ip, "@torch.no_grad()\ndef double(a):\n    return a * 2\nh = w * x")
        result, _ = run(ip, "%%trace -q\nh = w * x\nq = double(w)\nz = h.detach()\n"
                            "loss = (q * x + z).sum()\nloss.backward()")
        op, block = None, "a function decorated with @no_grad(), called at cell [{cell}], line 3"
    cell = result.execution_count
    block = block.format(cell=cell)
    assert result.success, result.error_in_exec
    _, captured = run(ip, "%why h q w z")
    reasons = captured.outputs[0].data["text/plain"].split("\n\n")
    assert reasons[0].startswith(f"h: .grad is None because h is not a leaf (MulBackward0 at "
                                 f"cell [{cell}], line 2)")
    assert f"the op ran inside {block}" in reasons[1]
    if op is not None:
        assert reasons[1].startswith(f"q: requires_grad=False because it was computed under "
                                     f"no_grad() at cell [{cell}], {op}")
    assert reasons[2].startswith(f"w: .grad is None because its path was cut by detach() at "
                                 f"cell [{cell}], line {5 if form == 'with' else 4}")
    assert reasons[3].startswith(f"z: requires_grad=False because detach() cut it from the graph"
                                 f" at cell [{cell}]")


def test_watch_on_gives_lines_for_torch_code_and_off_stops(ip):
    run(ip, "%watch on")
    result, _ = run(ip, "model = torch.nn.Sequential(torch.nn.Linear(1, 1))\n"
                        "out = model(x.reshape(1, 1))\nwith torch.no_grad():\n"
                        "    pred = model(x.reshape(1, 1))")
    cell = result.execution_count
    _, captured = run(ip, "%why out pred model[0].weight")
    text = captured.outputs[0].data["text/plain"]
    assert f"out: .grad is None because out is not a leaf (AddmmBackward0 at cell [{cell}], " \
        "line 2)" in text
    assert f"pred: requires_grad=False because it was computed under no_grad() at cell [{cell}], " \
        "line 4" in text
    assert "nothing flows back to model.0.weight, model.0.bias" in text
    run(ip, "%watch off")
    run(ip, "out2 = model(x.reshape(1, 1))")
    _, captured = run(ip, "%why out2")
    assert captured.outputs[0].data["text/plain"].startswith(
        "out2: .grad is None because out2 is not a leaf (AddmmBackward0)")
