"""Every magic and option, and each bad input, driven through IPython's InteractiveShell."""

from __future__ import annotations

import re

import pytest

IPython = pytest.importorskip("IPython")

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

SEED = """
import gradnb as torch
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
"""
FORWARD = "y = w * x + b\nloss = y * y"


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


def assert_usage_error(result, captured, fragment):
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    message = str(result.error_in_exec)
    assert fragment in message
    assert "\n" not in message
    assert "Traceback" not in captured.stdout + captured.stderr


# -- %%trace ------------------------------------------------------------------------------------
def test_trace_runs_the_cell_and_shows_the_graph(ip):
    result, captured = run(ip, f"%%trace\n{FORWARD}\nloss")
    assert result.success
    assert float(result.result) == 49.0
    assert ip.user_ns["loss"].item() == 49.0
    (output,) = captured.outputs
    labels = svg_labels(output.data["image/svg+xml"])
    for label in ("x", "w", "b", "y", "loss", "MulBackward0", "AddBackward0"):
        assert label in labels
    assert output.data["text/plain"].startswith("GraphView: 3 ops, 3 leaves, 2 outputs")


def test_trace_store_and_quiet(ip):
    result, captured = run(ip, f"%%trace -o graph -q\n{FORWARD}")
    assert result.success and result.result is None
    assert captured.outputs == []
    graph = ip.user_ns["graph"]
    assert "MulBackward0" in graph.to_dot()
    result, _ = run(ip, f"%%trace --store=g2 --quiet\n{FORWARD}")
    assert ip.user_ns["g2"].text() == graph.text()


def test_trace_without_saved_boxes(ip):
    _, captured = run(ip, f"%%trace --no-saved --no-live\n{FORWARD}")
    svg = captured.outputs[0].data["image/svg+xml"]
    assert "gradnb-saved" not in svg and "gradnb-op" in svg


def test_an_error_in_a_traced_cell_is_a_real_cell_error(ip):
    result, captured = run(ip, "%%trace\ny = w * x\nraise ValueError('boom')\nz = y + 1")
    assert not result.success
    assert isinstance(result.error_in_exec, ValueError)
    assert "MulBackward0" in svg_labels(captured.outputs[0].data["image/svg+xml"])
    assert "z" not in ip.user_ns


def test_a_syntax_error_in_a_traced_cell_fails_the_cell(ip):
    result, _ = run(ip, "%%trace\ny = (w *\n")
    assert not result.success
    assert isinstance(result.error_in_exec, SyntaxError)


def test_trace_bad_options(ip):
    assert_usage_error(*run(ip, f"%%trace --store 1bad\n{FORWARD}"), "needs a variable name")
    result, captured = run(ip, f"%%trace --bogus\n{FORWARD}")
    assert_usage_error(result, captured, "unrecognized arguments: --bogus")
    assert "loss" not in ip.user_ns


# -- %backward ----------------------------------------------------------------------------------
def test_backward_report_for_the_seed_example(ip):
    run(ip, FORWARD)
    result, captured = run(ip, "%backward loss")
    assert result.success and result.result is None
    graph, output = captured.outputs
    text = output.data["text/plain"]
    assert text.splitlines()[0] == ("backward(loss): 6 nodes ran (3 ops, 3 AccumulateGrad), "
                                    "3 leaves reached")
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:5]}
    assert rows["x"][3] == "42" and rows["w"][3] == "28" and rows["b"][3] == "14"
    assert rows["x"][-1] == "fresh"
    assert "memory: freed 0 B" in text
    assert 'data-highlight="path"' in graph.data["image/svg+xml"]
    assert [ip.user_ns[n].grad.item() for n in "xwb"] == [42.0, 28.0, 14.0]


def test_backward_retain_graph_then_accumulate(ip):
    run(ip, FORWARD)
    _, first = run(ip, "%backward loss --retain-graph")
    assert "retained by the graph 12 B" in first.outputs[1].data["text/plain"]
    _, second = run(ip, "%backward loss")
    assert "accumulated" in second.outputs[1].data["text/plain"]
    assert ip.user_ns["x"].grad.item() == 84.0


def test_backward_with_gradient_and_expression(ip):
    run(ip, "v = x * torch.ones(3)")
    result, captured = run(ip, '%backward v * 2 --gradient "torch.tensor([1.0, 2.0, 3.0])"')
    assert result.success
    assert ip.user_ns["x"].grad.item() == 12.0
    assert captured.outputs[1].data["text/plain"].startswith("backward(v * 2):")


def test_backward_create_graph(ip):
    run(ip, "cube = x ** 3")
    run(ip, "%backward cube --create-graph")
    assert ip.user_ns["x"].grad.item() == 12.0
    assert ip.user_ns["x"].grad.grad_fn is not None


def test_backward_step_has_a_static_step_table(ip):
    run(ip, FORWARD)
    result, captured = run(ip, "%backward loss --step")
    assert result.success
    (output,) = captured.outputs
    assert "step-through:" in output.data["text/plain"]
    assert "gradnb-steps" in output.data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" not in output.data  # no kernel here


BAD_BACKWARD = [
    ("%backward nope", "cannot evaluate 'nope': NameError"),
    ("%backward 3", "3 is a int, not a tensor"),
    ("%backward torch.ones(2).sum()", "does not require grad"),
    ("%backward loss --bogus", "unrecognized arguments: --bogus"),
    ("%backward", "the following arguments are required: expr"),
    ("%backward y * torch.ones(2)", "pass --gradient"),
    ("%backward loss --gradient torch.ones(2)", "--gradient has shape (2,)"),
    ("%backward loss --gradient 5", "--gradient is a int, not a tensor"),
    ("%backward loss --gradient nope", "cannot evaluate 'nope'"),
]


@pytest.mark.parametrize(("line", "fragment"), BAD_BACKWARD)
def test_bad_backward_input_changes_nothing(ip, line, fragment):
    run(ip, FORWARD)
    result, captured = run(ip, line)
    assert_usage_error(result, captured, fragment)
    assert all(ip.user_ns[n].grad is None for n in "xwb")
    assert not ip.user_ns["loss"].grad_fn.released
    assert captured.outputs == []


def test_backward_on_a_freed_graph(ip):
    run(ip, FORWARD)
    run(ip, "%backward loss")
    result, captured = run(ip, "%backward loss")
    assert_usage_error(result, captured, "already freed")
    assert ip.user_ns["x"].grad.item() == 42.0


def test_backward_help_comes_from_magic_arguments(ip):
    doc = ip.find_line_magic("backward").__doc__
    assert "--retain-graph" in doc and "--create-graph" in doc and "--step" in doc
    assert "%backward" in doc


# -- %grad --------------------------------------------------------------------------------------
def test_grad_named_and_all(ip):
    run(ip, FORWARD)
    run(ip, "loss.backward()")
    _, captured = run(ip, "%grad x b")
    text = captured.outputs[0].data["text/plain"]
    assert [line.split()[0] for line in text.splitlines()[1:]] == ["x", "b"]
    _, captured = run(ip, "%grad")
    text = captured.outputs[0].data["text/plain"]
    assert [line.split()[0] for line in text.splitlines()[1:]] == ["x", "w", "b", "y", "loss"]


@pytest.mark.parametrize(("line", "fragment"), [
    ("%grad nope", "cannot evaluate 'nope'"),
    ("%grad torch", "torch is a module, not a tensor"),
    ("%grad c", "c does not require grad"),
    ("%grad x --bogus", "unrecognized arguments"),
])
def test_bad_grad_input(ip, line, fragment):
    run(ip, "c = torch.ones(2)")
    assert_usage_error(*run(ip, line), fragment)


# -- %memory and %gradflow ----------------------------------------------------------------------
def test_memory_after_backward_calls(ip):
    run(ip, "big = torch.ones(10, requires_grad=True)")
    run(ip, "(big * 2).exp().sum().backward()")
    run(ip, FORWARD + "\nloss.backward()")
    _, captured = run(ip, "%memory")
    text = captured.outputs[0].data["text/plain"]
    assert text.splitlines()[0].startswith("MemoryMeter: 2 backward calls; freed 40 B in total")
    html = captured.outputs[0].data["text/html"]
    assert "data:image/svg+xml;base64," in html and "<td>In [" in html  # rows name their cell
    _, live = run(ip, "%memory --live")
    assert live.outputs[0].data["text/plain"] == text  # no kernel: static form only


def test_gradflow_default_and_model(ip):
    run(ip, FORWARD + "\nloss.backward()")
    _, captured = run(ip, "%gradflow")
    assert captured.outputs[0].data["text/plain"].startswith("GradFlow: 3 parameters")
    run(ip, "class M:\n    def named_parameters(self):\n        return [('w', w)]\nm = M()")
    _, captured = run(ip, "%gradflow m --live")
    assert "GradFlow: 1 parameter with" in captured.outputs[0].data["text/plain"]
    assert_usage_error(*run(ip, "%gradflow x"), "not a model")
