"""The views' static forms: SVG/HTML plus short, deterministic text/plain."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import gradnb
from gradnb.autograd import trace as trace_module
from gradnb.notebook import GradFlow, GradTable, GraphView, MemoryMeter
from gradnb.notebook.backward_run import backward_problem, watched_backward
from gradnb.notebook.backward_view import BackwardView
from gradnb.notebook.grad_flow import _decades
from gradnb.notebook.memory_meter import MemoryLog
from gradnb.notebook.step_view import StepThrough
from gradnb.notebook.tensor_html import tensor_html
from gradnb.notebook.widgets import WIDGET_MIME, WithStaticForm


def seed_namespace():
    x = gradnb.tensor(2.0, requires_grad=True)
    w = gradnb.tensor(3.0, requires_grad=True)
    b = gradnb.tensor(1.0, requires_grad=True)
    y = w * x + b
    loss = y * y
    return {"x": x, "w": w, "b": b, "y": y, "loss": loss}


def labels(svg: str) -> list[str]:
    return re.findall(r">([^<>]+)</text>", svg)


# -- GraphView ---------------------------------------------------------------------------------
def test_graph_view_names_ops_shapes_and_kinds():
    ns = seed_namespace()
    view = GraphView(ns["loss"], namespace=ns)
    svg = view.to_svg()
    for label in ("x", "w", "b", "y", "loss", "MulBackward0", "AddBackward0", "() float32"):
        assert label in labels(svg)
    for kind in ("leaf_grad", "op", "saved", "output"):
        assert f"gradnb-{kind}" in svg
    assert "saved w, x" in labels(svg) and "8 B" in labels(svg)


def test_graph_view_text_is_short_and_deterministic():
    ns = seed_namespace()
    text = GraphView(ns["loss"], namespace=ns).text()
    assert text == (
        "GraphView: 3 ops, 3 leaves, 2 outputs; 12 B saved\n"
        "  MulBackward0(w, x) -> () float32\n"
        "  AddBackward0(MulBackward0, b) -> y () float32\n"
        "  MulBackward0(y) -> loss () float32"
    )
    assert "0x" not in text


def test_graph_view_bundle_has_svg_interactive_html_and_text():
    ns = seed_namespace()
    bundle = GraphView(ns["loss"], namespace=ns)._repr_mimebundle_()
    assert set(bundle) == {"image/svg+xml", "text/html", "text/plain"}
    assert bundle["image/svg+xml"].startswith("<svg")
    # The HTML's fallback (where scripts do not run) is the same SVG as a data-URI image.
    assert 'src="data:image/svg+xml;base64,' in bundle["text/html"]
    assert "<svg" not in bundle["text/html"]


def test_same_program_gives_identical_svg_bytes():
    code = (
        "import gradnb\n"
        "from gradnb.notebook import GraphView\n"
        "x = gradnb.ones(3, requires_grad=True)\n"
        "y = (x * 2).exp().sum()\n"
        "print(GraphView(y, namespace={'x': x, 'y': y}).to_svg())\n"
    )
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)}
    assert len(runs) == 1


def test_graph_view_from_a_trace_and_unnamed_tensors():
    x = gradnb.ones(2, requires_grad=True)
    c = gradnb.tensor([1.0, 2.0])
    with trace_module.graph_trace() as t:
        (x * c).sum()
    view = GraphView(t, namespace={})
    assert "parameter" in labels(view.to_svg())
    assert "constant" in labels(view.to_svg())
    assert "gradnb-leaf\"" in view.to_svg()


def test_export_svg_and_dot(tmp_path):
    ns = seed_namespace()
    view = GraphView(ns["loss"], namespace=ns)
    assert view.save(tmp_path / "g.svg").read_text().startswith("<svg")
    dot = view.save(tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph") and "MulBackward0" in dot and "<b>loss</b>" in dot
    with pytest.raises(ValueError, match="use .svg, .dot"):
        view.save(tmp_path / "g.png")


def test_graph_view_rejects_non_tensors():
    with pytest.raises(TypeError, match="got int"):
        GraphView(3)


def test_graph_view_uses_caller_variables_by_default():
    a = gradnb.ones(2, requires_grad=True)
    total = (a * 3).sum()
    assert {"a", "total"} <= set(labels(GraphView(total).to_svg()))


def test_model_parameters_get_dotted_names():
    class Tiny:
        def __init__(self):
            self.weight = gradnb.ones(2, requires_grad=True)

        def named_parameters(self):
            return [("weight", self.weight)]

    model = Tiny()
    out = (model.weight * 2).sum()
    svg = GraphView(out, namespace={"model": model, "out": out}).to_svg()
    assert "model.weight" in labels(svg)


# -- GradTable ---------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_grad_table_small_values_large_summary_and_flags():
    small = gradnb.tensor([1.0, -2.0], requires_grad=True)
    big = gradnb.ones(4, 5, requires_grad=True)
    bad = gradnb.tensor([1.0, 0.0], requires_grad=True)
    none = gradnb.ones(1, requires_grad=True)
    (small * small).sum().backward()
    (big * 0.5).sum().backward()
    (bad.log() * 0).sum().backward()  # 0 * inf -> nan in d/dx log at 0
    table = GradTable([("small", small), ("big", big), ("bad", bad), ("none", none)])
    rows = {row.name: row for row in table.rows}
    assert rows["small"].grad == "[2, -4]" and rows["small"].norm == "4.472"
    assert rows["big"].grad == "mean 0.5, std 0, min 0.5, max 0.5"
    assert "NaN" in rows["bad"].flags
    assert rows["none"].grad == "None"
    zero = gradnb.ones(2, requires_grad=True)
    (zero * 0).sum().backward()
    assert GradTable({"zero": zero}).rows[0].flags == "all zero"
    assert "<table" in table._repr_mimebundle_()["text/html"]


def test_grad_table_defaults_to_namespace_tensors_requiring_grad():
    ns = seed_namespace()
    ns["c"] = gradnb.ones(2)
    names = [row.name for row in GradTable(namespace=ns).rows]
    assert names == ["x", "w", "b", "y", "loss"]


def test_empty_grad_table():
    assert GradTable([]).text() == "GradTable: no tensors that require grad"


# -- backward report and step-through ------------------------------------------------------------
def test_backward_view_seed_example():
    ns = seed_namespace()
    run = watched_backward(ns["loss"], keep_steps=True)
    view = BackwardView(run, ns, "loss")
    text = view.text()
    assert text.splitlines()[0] == ("backward(loss): 6 nodes ran (3 ops, 3 AccumulateGrad), "
                                    "3 leaves reached")
    grads = {row.name: row.grad for row in view.grads.rows}
    assert grads == {"w": "28", "x": "42", "b": "14"}
    assert {row.update for row in view.grads.rows} == {"fresh"}
    assert "memory: freed 0 B; released but still referenced 12 B" in text
    assert 'data-highlight="path"' in view.graph_view.to_svg()
    html = view.to_html()
    assert "data:image/svg+xml;base64," in html and "<svg" not in html  # kept by sanitizers


def test_backward_view_reports_freed_bytes_and_accumulation():
    w = gradnb.ones(10, requires_grad=True)
    (w * 2).exp().sum().backward()
    loss = (w * 2).exp().sum()  # the exp result (40 B) dies with the graph
    run = watched_backward(loss)
    view = BackwardView(run, {"w": w, "loss": loss}, "loss")
    assert run.report.freed_bytes == 40
    assert "freed 40 B" in view.memory_line()
    assert view.grads.rows[0].update == "accumulated"


def test_step_through_frames_move_the_active_node():
    ns = seed_namespace()
    stepper = StepThrough(BackwardView(watched_backward(ns["loss"], keep_steps=True), ns,
                                       "loss"))
    # loss = y * y sends two gradients to y's AddBackward0: they are added in a frame of their
    # own, before AddBackward0 runs.
    assert [f.kind for f in stepper.frames] == ["node", "add", "node", "node", "leaves"]
    assert stepper.frame_count == 5
    actives = []
    for i in range(stepper.frame_count):
        svg = stepper.frame_svg(i)
        actives.append(re.findall(r'data-node-id="(\d+)" data-highlight="active"', svg))
    assert all(actives) and len({tuple(a) for a in actives}) == 4
    assert actives[1] == actives[2]  # the addition happens at the node about to run
    assert len(actives[-1]) == 3  # the three leaves get their .grad in the last frame
    assert stepper.frame_title(1) == "step 2/5: 2 gradients added for AddBackward0"
    assert stepper.frame_title(2) == "step 3/5: AddBackward0"
    assert "() 7 + () 7" in stepper.text()
    assert "y: () 7" in stepper.text()
    assert "w: () 28; x: () 42" in stepper.text()
    assert "gradnb-steps" in stepper.to_html()


def test_backward_problems_are_found_before_running():
    ns = seed_namespace()
    assert backward_problem(3, None, "n") == "n is a int, not a tensor"
    assert "does not require grad" in backward_problem(gradnb.ones(2), None, "c")
    vec = ns["x"] * gradnb.ones(3)
    assert "pass --gradient" in backward_problem(vec, None, "vec")
    assert "has shape (2,)" in backward_problem(vec, gradnb.ones(2), "vec")
    assert backward_problem(vec, gradnb.ones(3), "vec") is None
    ns["loss"].backward()
    assert "already freed" in backward_problem(ns["loss"], None, "loss")


# -- memory meter and gradient flow --------------------------------------------------------------
def test_memory_meter_counts_exact_bytes_per_call():
    log = MemoryLog().start()
    try:
        w = gradnb.ones(10, requires_grad=True)
        (w * 2).exp().sum().backward()
        keep = (w * 2).exp().sum()
        keep.backward(retain_graph=True)
    finally:
        log.stop()
    meter = MemoryMeter(log)
    assert [(e.freed, e.retained) for e in meter.entries] == [(40, 0), (0, 40)]
    assert meter.text().splitlines()[0] == (
        "MemoryMeter: 2 backward calls; freed 40 B in total; released but still referenced "
        "0 B; retained now 40 B")
    html = meter._repr_mimebundle_()["text/html"]
    # The plot is an image (it survives sanitizers), on a log scale, each call by its cell.
    assert '<img alt="memory per backward call" src="data:image/svg+xml;base64,' in html
    assert "<svg" not in html
    plot = meter.plot_svg()
    assert "bytes (log scale)" in plot and "call 1" in plot
    assert MemoryMeter(log).to_html() == html  # deterministic plot


def test_grad_flow_draws_the_tables_numbers_on_decade_limits():
    """The bars are the table's four-digit numbers, so gradients that differ only in their last
    bits (another BLAS, another CPU) draw the same picture; the axis runs from the decade below
    the smallest bar to the decade above the largest."""
    grads = np.array([0.1234567, 0.02, 3.0], dtype=np.float32)
    svgs = []
    for nudge in (0, 1):
        w = gradnb.zeros(3, requires_grad=True)
        w.grad = gradnb.tensor(np.nextafter(grads, np.float32(1)) if nudge else grads)
        svgs.append(GradFlow([("w", w)]).plot_svg())
    assert svgs[0] == svgs[1]
    assert _decades([0.02, 0.1235, 3.0]) == (0.01, 10.0)
    assert _decades([1.0]) == (0.1, 1.0)


def test_grad_flow_of_a_model_like_object():
    class TwoLayers:
        def __init__(self):
            self.w1 = gradnb.ones(3, 2, requires_grad=True)
            self.w2 = gradnb.ones(2, requires_grad=True)

        def named_parameters(self):
            return [("fc1.weight", self.w1), ("fc2.weight", self.w2)]

    model = TwoLayers()
    x = gradnb.ones(1, 3)
    (x.matmul(model.w1) * model.w2).sum().backward()
    flow = GradFlow(model)
    assert [r.name for r in flow.rows] == ["fc1.weight", "fc2.weight"]
    assert flow.rows[0].mean_abs == 1.0 and flow.rows[1].max_abs == 3.0
    html = flow.to_html()
    assert "gradient flow" in html and "fc2.weight" in html
    assert flow.text().splitlines()[0] == "GradFlow: 2 parameters with gradients"
    with pytest.raises(TypeError):
        GradFlow(x)


# -- tensor HTML and widgets ------------------------------------------------------------------
def test_tensor_html_keeps_small_tensors_only():
    html = tensor_html(gradnb.tensor([[1.0, 2.5], [3.0, 4.0]]))
    assert "<td>2.5</td>" in html and "(2, 2) float32" in html
    assert tensor_html(gradnb.ones(100)) is None
    assert tensor_html(gradnb.ones(2, 2, 2)) is None
    assert "<td>3</td>" in tensor_html(gradnb.tensor([3]))


def test_widget_forms_carry_the_static_bundle():
    pytest.importorskip("ipywidgets")
    ns = seed_namespace()
    view = GraphView(ns["loss"], namespace=ns)
    bundle = WithStaticForm(view.widget(), view)._repr_mimebundle_()
    assert WIDGET_MIME in bundle and "image/svg+xml" in bundle
    assert bundle["text/plain"] == view.text()
    stepper = StepThrough(BackwardView(watched_backward(ns["loss"], keep_steps=True), ns,
                                       "loss"))
    box = stepper.widget()
    controls, graph, detail = box.children
    slider = controls.children[1]
    caption = controls.children[2]
    assert (slider.min, slider.max) == (1, stepper.frame_count)  # counts as the captions do
    before = graph.value
    slider.value = 4
    assert caption.value == stepper.frame_title(3) == "step 4/5: MulBackward0"
    assert graph.value != before and 'data-highlight="active"' in graph.value
    assert "w: () 28" in detail.value
