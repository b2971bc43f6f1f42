"""The interactive graph, module groups, trace diffs and the newcomer fixes, through
IPython's InteractiveShell (the kernel and browser forms are in test_kernel.py and
tests/browser/test_interactive_graph.py)."""

from __future__ import annotations

import re

import pytest

IPython = pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell

import gradnb
from gradnb import nn
from gradnb.notebook import GraphView, TraceDiff, diff
from gradnb.notebook.interactive import graph_groups

from .test_magics import FORWARD, SEED, assert_usage_error, run, svg_labels


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "gradnb")
    shell.run_cell(SEED)
    yield shell
    shell.run_line_magic("unload_ext", "gradnb")
    shell.reset()


def traced_mlp(width_in: int = 3, rows: int = 2, act=None):
    model = nn.Sequential(nn.Linear(width_in, 4), act or nn.Tanh(), nn.Linear(4, 2))
    x = gradnb.randn(rows, width_in)
    with gradnb.autograd.graph_trace() as recording:
        loss = model(x).pow(2).sum()
    loss.backward()
    return GraphView(recording, namespace={"model": model, "x": x, "loss": loss}), model


# -- module groups and the interactive form ------------------------------------------------------
def test_ops_inside_a_module_are_grouped_under_its_name():
    view, _ = traced_mlp()
    groups = {n.label: n.group for n in view.graph.nodes.values()}
    assert groups["model.0.weight"] == ("model", "model.0")  # parameters join their layer
    assert groups["TanhBackward0"] == ("model", "model.1")
    assert groups["SumBackward0"] == ()  # ran outside the model
    labels = [g.label for g in graph_groups(view.graph, view.layout)]
    assert labels == ["model", "model.0", "model.1", "model.2"]


def test_a_module_called_twice_is_two_groups():
    layer = nn.Linear(2, 2)
    x = gradnb.ones(1, 2)
    with gradnb.autograd.graph_trace() as recording:
        out = layer(layer(x)).sum()
    view = GraphView(recording, namespace={"layer": layer, "out": out})
    assert {n.group for n in view.graph.nodes.values() if n.kind == "op"} >= {
        ("layer",), ("layer #2",)}


def test_module_events_stop_when_nobody_observes():
    calls = []

    class Spy:
        def module_entered(self, module):
            calls.append(type(module).__name__)

    with gradnb.autograd.events.subscribe(Spy()):
        nn.Linear(2, 2)(gradnb.ones(1, 2))
    nn.Linear(2, 2)(gradnb.ones(1, 2))
    assert calls == ["Linear"]


def test_interactive_html_is_self_contained_and_deterministic():
    first, _ = traced_mlp()
    html = first.to_html()
    assert "<script>" in html and "http://" not in html.replace(
        "http://www.w3.org/2000/svg", "")  # no CDN: the only URL is the SVG namespace
    assert "require(" not in html and "ipywidgets" not in html
    assert '"label":"model.1"' in html
    gradnb.manual_seed(0)
    again, _ = traced_mlp()
    assert again.to_html() == html


def test_hover_details_have_bytes_and_grad():
    view, _ = traced_mlp()
    weight = next(n for n in view.graph.nodes.values() if n.label == "model.0.weight")
    assert "(4, 3) float32" in weight.detail and "48 B" in weight.detail
    assert "\ngrad: mean" in weight.detail
    op = next(n for n in view.graph.nodes.values() if n.label == "TanhBackward0")
    assert "output: (2, 4) float32, 32 B" in op.detail


def test_a_chain_is_one_folded_group_and_a_long_one_is_folded_in_the_drawing():
    x = gradnb.ones(3, requires_grad=True)
    with gradnb.autograd.graph_trace() as recording:
        y = x
        for _ in range(8):
            y = (y * 1.01).tanh()
    view = GraphView(recording, namespace={"x": x})
    (chain,) = graph_groups(view.graph, view.layout)
    # The last op has no consumer, so the chain is the 15 before it.
    assert chain.label == "MulBackward0 → TanhBackward0 ×7 +1"
    assert chain.folded
    with gradnb.autograd.graph_trace() as recording:
        for _ in range(30):
            y = (y * 1.01).tanh()
    view = GraphView(recording, namespace={"x": x})
    assert graph_groups(view.graph, view.layout) == []
    (fold,) = [n for n in view.layout.graph.nodes.values() if n.kind == "summary"]
    assert fold.label == "TanhBackward0 → MulBackward0 ×28 +1"  # the ends stay drawn


# -- saved tensors -------------------------------------------------------------------------------
def test_a_buffer_saved_by_two_ops_is_drawn_once_and_labelled_by_its_op():
    x = gradnb.ones(1000, requires_grad=True)
    with gradnb.autograd.graph_trace() as recording:
        t = (x * 2).tanh()
        out = (t * t).sum() + (x * 3).sin().sum()
    view = GraphView(recording, namespace={"x": x})
    saved = {n.label: n for n in view.graph.nodes.values() if n.kind == "saved"}
    tanh_result = saved["saved result"]  # TanhBackward0's output, saved again by t * t
    assert tanh_result.sublabel.startswith("4,000 B")
    consumers = {view.graph.nodes[e.dst].label for e in view.graph.edges
                 if e.src == tanh_result.id}
    assert consumers == {"TanhBackward0", "MulBackward0"}
    assert "saved MulBackward0 out" in saved  # sin's input: named by the op that made it
    assert not any("(1000,)" in label for label in saved)
    del out


# -- diff ----------------------------------------------------------------------------------------
def test_diff_reports_added_removed_reshaped_and_gradients():
    before, _ = traced_mlp()
    after, _ = traced_mlp(rows=5, act=nn.ReLU())
    result = diff(before, after)
    text = result.text()
    assert text.splitlines()[0] == ("TraceDiff: 7 ops -> 7 ops: 1 added, 1 removed, 3 changed; "
                                    "4 gradients changed")
    assert "- TanhBackward0 in model.1 (2, 4) float32" in text
    assert "+ ReluBackward0 in model.1 (5, 4) float32" in text
    assert "~ AddmmBackward0 in model.0: (2, 4) float32 -> (5, 4) float32" in text
    svg = result.to_svg()
    assert svg.count('data-highlight="removed"') == 1
    assert svg.count('data-highlight="added"') == 1
    assert isinstance(result, TraceDiff)
    with pytest.raises(TypeError, match="traced GraphView"):
        diff(before, "after")


def test_tracediff_magic_and_its_usage_errors(ip):
    run(ip, f"%%trace -o before -q\n{FORWARD}")
    run(ip, "%%trace -o after -q\ny = w * x\nloss = y * y")
    result, captured = run(ip, "%tracediff before after")
    assert result.success
    (output,) = captured.outputs
    assert output.data["text/plain"].startswith("TraceDiff: 3 ops -> 2 ops: 0 added, 1 removed")
    assert_usage_error(*run(ip, "%tracediff before x"), "not a traced graph")
    assert_usage_error(*run(ip, "%tracediff before nothing_here"), "cannot evaluate")


# -- magics robustness ---------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "%backward 'loss", "%grad 'w", "%gradflow 'm", "%memory '", "%tracediff 'a b",
    "%%trace -o 'v\ny = w * x",
])
def test_an_unbalanced_quote_is_a_one_line_usage_error(ip, line):
    run(ip, FORWARD)
    assert_usage_error(*run(ip, line), "No closing quotation")


def test_backward_gradient_takes_the_rest_of_the_line(ip):
    run(ip, "v = torch.ones(3, requires_grad=True)\nz = v * 2")
    result, _ = run(ip, "%backward z --gradient torch.tensor([1.0, 1.0, 1.0]) --retain-graph")
    assert result.success, result.error_in_exec
    assert ip.user_ns["v"].grad.tolist() == [2.0, 2.0, 2.0]
    result, _ = run(ip, "%backward z --gradient torch.tensor([1.0, 2.0, 3.0])")
    assert result.success
    assert ip.user_ns["v"].grad.tolist() == [4.0, 6.0, 8.0]
    assert "--gradient torch.tensor([1.0, 1.0, 1.0])" in ip.find_line_magic("backward").__doc__


class RaisingGetattr:
    def __getattr__(self, name):
        raise KeyError(name)


class PropertyWithEffect:
    reads = 0

    @property
    def named_parameters(self):
        PropertyWithEffect.reads += 1
        raise RuntimeError("side effect")


@pytest.mark.parametrize("magic", ["%backward loss", "%grad", "%gradflow",
                                   "%%trace\nz = w * x"])
def test_naming_never_runs_user_code(ip, magic):
    run(ip, FORWARD)
    ip.user_ns["odd"] = RaisingGetattr()
    ip.user_ns["lazy"] = PropertyWithEffect()
    result, _ = run(ip, magic)
    assert result.success, result.error_in_exec
    assert PropertyWithEffect.reads == 0


def test_trace_output_has_svg_html_and_readable_text(ip):
    _, captured = run(ip, f"%%trace\n{FORWARD}")
    (output,) = captured.outputs
    assert set(output.data) == {"image/svg+xml", "text/html", "text/plain"}
    assert output.data["text/plain"].splitlines()[1].strip() == "MulBackward0(w, x) -> () float32"
    assert "loss" in svg_labels(output.data["image/svg+xml"])
    assert re.search(r'<img class="gradnb-igraph-static"', output.data["text/html"])
