"""Explaining gradients: source lines, cut edges, ``why``, the in-place error view, the chain
rules the node classes declare and the step player. The magics are driven through IPython's
InteractiveShell."""

from __future__ import annotations

import importlib
import pkgutil
import re

import numpy as np
import pytest

import gradnb
from gradnb.autograd import events
from gradnb.autograd.graph import Node
from gradnb.notebook import GraphView
from gradnb.notebook.backward_run import watched_backward
from gradnb.notebook.backward_view import BackwardView
from gradnb.notebook.explain import watcher, watching, why
from gradnb.notebook.explain.inplace_view import InplaceErrorView, find_culprit
from gradnb.notebook.explain.notes import CUSTOM_FUNCTION_RULE, note_of, rule_of
from gradnb.notebook.step_view import StepThrough

HERE = __file__.rsplit("/", 1)[-1]


def line_of(marker: str) -> int:
    """The line of this file that contains ``marker`` (a comment on the line under test)."""
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if marker in text and "line_of" not in text:
                return number
    raise AssertionError(marker)


def first_line(t, **names) -> str:
    return why(t, namespace=names).text().splitlines()[0]


# -- provenance ----------------------------------------------------------------------------------
def test_watched_nodes_remember_their_source_line_and_the_graph_shows_it():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with watching() as watch:
        y = (x * 2).exp()  # marker: provenance
    where = watch.where_of(y.grad_fn)
    assert (where.filename.endswith(HERE), where.line) == (True, line_of("marker: provenance"))
    assert str(where) == f"{HERE}:{where.line}" and "marker: provenance" in where.source()
    svg = GraphView(y, namespace={"x": x, "y": y}).to_svg()
    assert f"created at {HERE}:{where.line}" in svg


def test_the_notebook_tracer_watches_while_it_records():
    from gradnb.notebook import graph_trace

    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with graph_trace() as t:
        y = x.exp()  # marker: notebook trace
    assert watcher().where_of(y.grad_fn).line == line_of("marker: notebook trace")
    assert [op.name for op in t.ops] == ["ExpBackward0"] and not watcher().active


def test_unwatched_code_costs_no_observer():
    before = list(events.observers)
    x = gradnb.tensor(2.0, requires_grad=True)
    with watching():
        pass
    assert events.observers == before
    assert watcher().where_of((x * 2).grad_fn) is None


def test_watching_is_per_thread():
    import threading

    x = gradnb.tensor(2.0, requires_grad=True)
    out = {}

    def other():
        out["y"] = x * 5

    with watching() as watch:
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert watch.where_of(out["y"].grad_fn) is None


# -- cut edges -----------------------------------------------------------------------------------
def test_cuts_are_drawn_as_dashed_edges_with_their_line():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    w = gradnb.tensor([3.0, 4.0], requires_grad=True)
    with watching(), gradnb.autograd.graph_trace() as t:
        h = x * 2
        z = h.detach()  # marker: detach
        y = (z * w).sum()
        y.item()
    view = GraphView(t, namespace={"x": x, "w": w, "h": h, "z": z, "y": y})
    cuts = [n for n in view.graph.ordered_nodes() if n.kind == "cut"]
    assert [(n.label, n.sublabel) for n in cuts] == [
        ("detach()", f"{HERE}:{line_of('marker: detach')}"),
        (".item()", f"{HERE}:{line_of('marker: detach') + 2}")]
    by_label = {n.label: n.id for n in view.graph.ordered_nodes()}
    cut_edges = {(view.graph.nodes[e.src].label, view.graph.nodes[e.dst].label)
                 for e in view.graph.edges if e.kind == "cut"}
    assert cut_edges == {("h", "detach()"), ("detach()", "z"), ("y", ".item()")}
    assert by_label["z"] in view.graph.nodes
    svg = view.to_svg()
    assert svg.count("gradnb-edge-cut") == 3 and 'stroke-dasharray="2 3"' in svg
    assert "style=dashed" in view.to_dot()


def test_a_cut_from_a_temporary_is_drawn_after_its_node_died():
    x = gradnb.tensor([1.0, -2.0], requires_grad=True)
    w = gradnb.tensor([3.0, 4.0], requires_grad=True)
    with watching(), gradnb.autograd.graph_trace() as t:
        hidden = (x * 2).relu().detach()  # nothing keeps ReluBackward0 alive after this line
        loss = (hidden * w).sum()
    view = GraphView(t, namespace={"x": x, "w": w, "hidden": hidden, "loss": loss})
    graph = view.graph
    assert {(graph.nodes[e.src].label, graph.nodes[e.dst].label)
            for e in graph.edges if e.kind == "cut"} == {("ReluBackward0", "detach()"),
                                                          ("detach()", "hidden")}


def test_a_leaf_data_access_outside_the_graph_is_not_drawn():
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with watching():
        w.data.mul_(1.0)
    loss = (w * 2).sum()
    view = GraphView(loss, namespace={"w": w, "loss": loss})
    assert not [n for n in view.graph.ordered_nodes() if n.kind == "cut"]


# -- why -----------------------------------------------------------------------------------------
def test_why_not_a_leaf_names_the_node_and_retain_grad():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with watching():
        h = x * 2  # marker: non-leaf
        h.sum().backward()
    reason = why(h, namespace={"x": x, "h": h})
    text = reason.text()
    assert text.splitlines()[0] == (f"h: .grad is None because h is not a leaf (MulBackward0 at "
                                    f"{HERE}:{line_of('marker: non-leaf')})")
    assert "retain_grad()" in text and "computed from x" in text
    assert "<b>" in reason.to_html() and "retain_grad()" in reason.to_html()


def test_why_requires_grad_false_for_detach_no_grad_and_plain_constants():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor([1.0, 2.0])
    with watching():
        z = (x * 2).detach()
        d = (x * 2).data
        r = gradnb.tensor(x * 2)
        with gradnb.no_grad():
            q = x * 2  # marker: no_grad block
        with gradnb.inference_mode():
            i = x * 2
    assert first_line(z, z=z).startswith("z: requires_grad=False because detach() cut it")
    assert ".data cut it" in first_line(d, d=d)
    assert "tensor() cut it" in first_line(r, r=r)
    assert first_line(q, q=q) == (f"q: requires_grad=False because it was computed under "
                                  f"no_grad() at {HERE}:{line_of('marker: no_grad block')}")
    text = why(q, namespace={"q": q, "x": x}).text()
    assert f"inside the `with no_grad():` block at {HERE}:{line_of('marker: no_grad block') - 1}" \
        in text and "nothing flows back to x" in text
    assert "inference_mode" in first_line(i, i=i)
    assert first_line(c, c=c).startswith("c: requires_grad=False, so autograd does not track")


@gradnb.no_grad()
def halve(t):
    return t / 2  # marker: decorated


@gradnb.inference_mode()
def third(t):
    return t / 3  # marker: inference decorated


@gradnb.set_grad_enabled(False)
def quarter(t):
    return t / 4  # marker: set_grad_enabled decorated


@pytest.mark.parametrize(("form", "switch", "marker"), [
    ("with", "no_grad()", "with no_grad"),
    ("decorator", "no_grad()", "decorated"),
    ("with", "inference_mode()", "with inference_mode"),
    ("decorator", "inference_mode()", "inference decorated"),
    ("with", "set_grad_enabled(False)", "with set_grad_enabled"),
    ("decorator", "set_grad_enabled(False)", "set_grad_enabled decorated"),
    ("call", "set_grad_enabled(False)", "call set_grad_enabled"),
])
def test_every_form_of_every_grad_mode_switch_is_a_cut_with_its_line(form, switch, marker):
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    x = gradnb.tensor([3.0, 4.0], requires_grad=True)
    with watching():
        if form == "decorator":
            q = {"no_grad()": halve, "inference_mode()": third}.get(switch, quarter)(w)
        elif switch == "no_grad()":
            with gradnb.no_grad():
                q = w / 2  # marker: with no_grad
        elif switch == "inference_mode()":
            with gradnb.inference_mode():
                q = w / 2  # marker: with inference_mode
        elif form == "with":
            with gradnb.set_grad_enabled(False):
                q = w / 2  # marker: with set_grad_enabled
        else:
            gradnb.set_grad_enabled(False)
            q = w / 2  # marker: call set_grad_enabled
            gradnb.set_grad_enabled(True)
        (q + x).sum().backward()  # (an inference tensor can be added, not saved)
    assert gradnb.is_grad_enabled()
    assert first_line(q, q=q) == (f"q: requires_grad=False because it was computed under "
                                  f"{switch} at {HERE}:{line_of(f'marker: {marker}')}")
    assert first_line(w, w=w) == (f"w: .grad is None because its path was cut by {switch} at "
                                  f"{HERE}:{line_of(f'marker: {marker}')}, so it is not used on the path "
                                  "backward took")


def test_gradnb_own_no_grad_and_ops_on_constants_are_not_cuts():
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor([1.0, 2.0])
    opt = gradnb.optim.SGD([w], lr=0.1)
    watch = watcher()
    with watching():
        (w * 2).sum().backward()
        before = len(watch.cuts)
        opt.step()  # its own no_grad block: not the user's
        with gradnb.no_grad():
            d = c * 2
            w -= 0.1 * w.grad  # an in-place update keeps w a leaf that requires grad
        assert len(watch.cuts) == before and watch.cut_of(d) is None
    assert not watch._unrecorded.running


def test_a_model_called_under_no_grad_cuts_its_parameters():
    model = gradnb.nn.Sequential(gradnb.nn.Linear(2, 2))
    x = gradnb.ones(1, 2)
    with watching(), gradnb.no_grad():
        out = model(x)  # marker: model under no_grad
        score = out.sum()
    names = {"model": model, "out": out, "score": score}
    assert first_line(model[0].weight, **names).endswith(
        f"cut by no_grad() at {HERE}:{line_of('marker: model under no_grad')}, so it is not "
        "used on the path backward took")
    assert "nothing flows back to model.0.weight, model.0.bias" in why(
        score, namespace=names).text()


def test_why_cut_path_unused_parameter_reset_and_not_yet_run():
    fresh = gradnb.tensor([1.0], requires_grad=True)
    watch = watcher()
    watch.backwards.clear()
    assert "backward has not run yet" in first_line(fresh, fresh=fresh)
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    b = gradnb.tensor([1.0, 2.0], requires_grad=True)
    unused = gradnb.tensor([1.0], requires_grad=True)
    with watching():
        scale = (a * 3).sum().item()  # marker: item
        loss = (b * scale).sum()
        other = unused * 2  # marker: other graph
        loss.backward()
    assert first_line(a, a=a) == (f"a: .grad is None because its path was cut by .item() at "
                                  f"{HERE}:{line_of('marker: item')}, so it is not used on the "
                                  "path backward took")
    text = why(unused, namespace={"unused": unused}).text()
    assert "not used on the path to the output that was backpropagated" in text.splitlines()[0]
    assert f"MulBackward0 at {HERE}:{line_of('marker: other graph')}" in text
    assert "another graph" in text
    del other
    b.grad = None  # what zero_grad(set_to_none=True) does
    assert "it was reset" in first_line(b, b=b)


def test_why_copied_leaf_is_no_longer_the_leaf():
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with watching():
        moved = w.to(gradnb.float64)
        scaled = w * 0.1
    text = why(moved, namespace={"w": w, "moved": moved}).text()
    assert "not a leaf (ToCopyBackward0" in text and "no longer the leaf" in text
    assert "w.grad" in text
    assert "computed from w by MulBackward0" in why(scaled, namespace={"w": w, "s": scaled}).text()


@pytest.mark.parametrize(("make", "kind", "node", "cause"), [
    (lambda p: p.log().sum(), "Inf", "LogBackward0", "log of 0"),
    (lambda p: p.sqrt().sum(), "Inf", "SqrtBackward0", "sqrt at 0"),
    (lambda p: (p / p).sum(), "NaN", "DivBackward0", "0/0"),
])
def test_why_nan_and_inf_name_the_first_node_and_the_input(make, kind, node, cause):
    p = gradnb.tensor([1.0, 0.0], requires_grad=True)
    with watching(), np.errstate(all="ignore"):
        make(p).backward()
    text = why(p, namespace={"p": p}).text()
    assert text.splitlines()[0].startswith(f"p: .grad has {kind}: first made non-finite by {node}")
    assert cause in text and "at index 1" in text


@pytest.mark.parametrize(("make", "node", "words"), [
    (lambda r: r.relu().sum(), "ReluBackward0", "dead ReLU"),
    (lambda r: r.clamp(5.0, 6.0).sum(), "ClampBackward1", "saturated clamp"),
    (lambda r: (r * gradnb.zeros(2)).sum(), "MulBackward0", "mask"),
])
def test_why_zero_names_the_blocking_node(make, node, words):
    r = gradnb.tensor([-1.0, -2.0], requires_grad=True)
    with watching():
        make(r).backward()
    text = why(r, namespace={"r": r}).text()
    assert text.splitlines()[0].startswith(f"r: .grad is all zero: blocked by {node}")
    assert words in text


def test_why_accumulated_and_fresh_gradients():
    w = gradnb.tensor([1.0], requires_grad=True)
    with watching():
        (w * 2).sum().backward()
        assert "one backward pass" in first_line(w, w=w)
        (w * 2).sum().backward()
    assert "sum of 2 backward passes" in first_line(w, w=w)
    assert "zero_grad()" in why(w, namespace={"w": w}).text()


def test_why_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="why\\(\\) explains tensors; got int"):
        why(3)


# -- the in-place error --------------------------------------------------------------------------
def test_inplace_error_view_names_the_saver_and_the_write_with_lines():
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with watching():
        y = a.exp()  # marker: saver
        y.mul_(2)  # marker: write
        loss = y.sum()
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as caught:
            loss.backward()
    culprit = find_culprit([loss.grad_fn])
    assert culprit.node.name() == "ExpBackward0"
    assert (culprit.saved_version, culprit.version) == (0, 1)
    view = InplaceErrorView(gradnb.autograd.trace.snapshot([loss]), [loss.grad_fn],
                            caught.value, {"a": a, "loss": loss}, "loss")
    head = view.text().splitlines()[0]
    assert head == (f"in-place error: the result of ExpBackward0 ((2,) float32) was saved by "
                    f"ExpBackward0 at {HERE}:{line_of('marker: saver')} and then modified in "
                    f"place by mul_ at {HERE}:{line_of('marker: write')} (version 0 -> 1)")
    html = view.to_html()
    svg = view.graph_view.to_svg()
    assert 'data-highlight="active"' in svg and "gradnb-edge-cut" in svg and ">mul_<" in svg
    assert "<svg" not in html and "gradnb-inplace" in html  # an image: sanitizers keep it


# -- chain rules and the step player -------------------------------------------------------------
def all_node_classes() -> list[type[Node]]:
    for module in pkgutil.walk_packages(gradnb.__path__, "gradnb."):
        if ".notebook" not in module.name:
            importlib.import_module(module.name)
    found, stack = [], [Node]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("gradnb."):
                found.append(sub)
    return found


def test_every_node_class_has_a_chain_rule():
    classes = all_node_classes()
    # (private bases such as ``_SavesDim`` only share code between nodes; no node is one)
    missing = sorted(cls.__name__ for cls in classes
                     if cls.rule is None and not cls.__name__.startswith("_"))
    assert not missing, f"no one-line derivative rule for {missing}"
    for cls in classes:
        assert all(isinstance(getattr(cls, note), (str, type(None)))
                   for note in ("rule", "why_nonfinite", "fix_nonfinite", "why_zero")), cls
    by_name = {cls.__name__: cls for cls in classes}
    assert by_name["ExpBackward0"].rule == "self: grad * result"
    assert by_name["CheckpointFunctionBackward"].rule == (
        "re-runs the forward, then backward through it")


def test_rule_of_reads_the_node_class_and_falls_back_for_custom_functions():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    assert rule_of(x.exp().grad_fn) == "self: grad * result"
    assert rule_of((x * x).grad_fn) == "self: grad * other; other: grad * self"
    assert note_of(x.log().grad_fn, "why_nonfinite") == "log of 0: grad / self"
    assert note_of(x.log().grad_fn, "fix_nonfinite").startswith("keep the input away from 0")
    assert note_of(x.relu().grad_fn, "why_zero") == "a dead ReLU: every input was <= 0"
    assert note_of(x.exp().grad_fn, "why_zero") is None
    with pytest.raises(ValueError, match="note must be one of"):
        note_of(x.exp().grad_fn, "rules")

    class Twice(gradnb.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    assert rule_of(Twice.apply(x).grad_fn) == CUSTOM_FUNCTION_RULE
    assert rule_of(x.floor().grad_fn) == "self: zeros_like(grad)"

    class Opaque(Node):  # a node without a rule, whose name is no Function's
        __slots__ = ()

    assert rule_of(object.__new__(Opaque)) == "?"


def test_torch_nodes_get_the_rule_of_gradnbs_node_of_the_same_name():
    torch = pytest.importorskip("torch")
    from gradnb.notebook.torch_adapter.backward import watched_backward as torch_backward

    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = Twice.apply((x * x).exp()).sum()
    steps = torch_backward(loss, keep_steps=True).steps
    assert [(s.name, s.rule) for s in steps] == [
        ("SumBackward0", "self: grad.expand_symint(self_sym_sizes)"),
        ("TwiceBackward", CUSTOM_FUNCTION_RULE),
        ("ExpBackward0", "self: grad * result"),
        ("MulBackward0", "self: grad * other; other: grad * self"),
    ]
    assert note_of(x.log().grad_fn, "why_nonfinite") == "log of 0: grad / self"
    assert note_of(x.relu().grad_fn, "why_zero") == "a dead ReLU: every input was <= 0"


def test_relu_rule_says_what_its_backward_does():
    """ReLU passes the gradient where its result is not 0, so a NaN result passes it too."""
    x = gradnb.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
    x.relu().backward(gradnb.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 3.0, 4.0])
    assert rule_of(x.relu().grad_fn) == (
        "self: grad where result != 0 (a NaN result passes it), else 0")


def test_step_player_shows_rules_reductions_additions_and_freed_bytes():
    w = gradnb.tensor(3.0, requires_grad=True)
    b = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2.0 + b  # w is broadcast to b's shape
    loss = (y * y).sum()
    ns = {"w": w, "b": b, "y": y, "loss": loss}
    stepper = StepThrough(BackwardView(watched_backward(loss, keep_steps=True), ns, "loss"))
    kinds = [f.kind for f in stepper.frames]
    assert kinds == ["node", "node", "add", "node", "reduce", "node", "leaves"]
    assert stepper.frames[1].rule == "self: grad * other; other: grad * self"
    add = stepper.frames[2]
    assert add.title == "2 gradients added for AddBackward0"
    assert add.outgoing == "(2,) [7, 8] + (2,) [7, 8]"
    reduce = stepper.frames[4]
    assert reduce.rule.endswith("(2,) -> ()") and reduce.outgoing.endswith("() 30")
    freed = [f.freed for f in stepper.frames]
    assert freed == sorted(freed) and freed[0] == 0 and freed[-1] == stepper.total_saved > 0
    first, last = stepper.frame_svg(0), stepper.frame_svg(stepper.frame_count - 1)
    assert "freed" not in re.sub(r"<title>backward.*?</title>", "", first, flags=re.DOTALL)
    assert "released" not in first
    assert ", freed" in last
    assert stepper.frame_title(0).startswith("step 1/7")
    assert "saved freed: [####################]" in stepper.text()


# -- magics through InteractiveShell --------------------------------------------------------------
IPython = pytest.importorskip("IPython")

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "gradnb")
    shell.run_cell("import gradnb as torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                   "w = torch.tensor([3.0, 4.0], requires_grad=True)", store_history=True)
    yield shell
    shell.run_line_magic("unload_ext", "gradnb")
    shell.reset()


def run(shell, code):
    with capture_output() as captured:
        result = shell.run_cell(code, store_history=True)
    return result, captured


def test_the_extension_silences_numpy_warnings_inside_gradnb_only_while_loaded(ip):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        run(ip, "p = torch.tensor([0.0, 1.0], requires_grad=True)\np.log().sum().backward()")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    ip.run_line_magic("unload_ext", "gradnb")
    assert not [f for f in warnings.filters if f[2] is RuntimeWarning and f[0] == "ignore"
                and getattr(f[3], "pattern", None) == r"gradnb\."]
    ip.run_line_magic("load_ext", "gradnb")


def test_why_magic_explains_with_the_cell_and_line(ip):
    result, _ = run(ip, "%%trace -q\nh = x * 2\nz = h.detach()\nloss = (z * w).sum()")
    cell = result.execution_count
    assert result.success
    run(ip, "%backward loss")
    result, captured = run(ip, "%why x z w")
    assert result.success
    (output,) = captured.outputs
    text = output.data["text/plain"]
    lines = text.splitlines()
    assert lines[0] == (f"x: .grad is None because its path was cut by detach() at cell [{cell}], "
                        "line 3, so it is not used on the path backward took")
    assert f"cell [{cell}], line 3: z = h.detach()" in text
    assert "z: requires_grad=False because detach() cut it" in text
    assert "w: .grad holds the gradient" in text
    assert 'class="gradnb-why"' in output.data["text/html"]


@pytest.mark.parametrize(("line", "fragment"), [
    ("%why", "the following arguments are required"),
    ("%why nope", "no variable named 'nope'"),
    ("%why torch", "torch is a module, not a tensor"),
    ("%why 'x", "is not a list of expressions"),
    ("%why x[", "is not a list of expressions"),
    ("%why x.nope", "cannot evaluate 'x.nope': AttributeError"),
    ("%why x.shape", "x.shape is a Size, not a tensor"),
    ("%watch maybe", "invalid choice"),
])
def test_why_and_watch_bad_input_is_one_line(ip, line, fragment):
    grad_before = ip.user_ns["x"].grad
    result, captured = run(ip, line)
    assert isinstance(result.error_in_exec, UsageError)
    message = str(result.error_in_exec)
    assert fragment in message and "\n" not in message
    assert "Traceback" not in captured.stdout + captured.stderr
    assert ip.user_ns["x"].grad is grad_before and not watcher().session


@pytest.mark.parametrize("form", ["with", "decorator"])
def test_why_names_no_grad_in_a_traced_cell(ip, form):
    """#25: ``%why`` on the leaf and on the value names the switch, its form and the lines."""
    if form == "with":
        result, _ = run(ip, "%%trace -q\nwith torch.no_grad():\n    q = w * 2\n"
                            "loss = (q * x).sum()\nloss.backward()")
        cell = result.execution_count
        op = f"cell [{cell}], line 3"
        block = f"the `with no_grad():` block at cell [{cell}], line 2"
    else:
        definition, _ = run(ip, "@torch.no_grad()\ndef double(a):\n    return a * 2")
        result, _ = run(ip, "%%trace -q\nq = double(w)\nloss = (q * x).sum()\nloss.backward()")
        cell = result.execution_count
        op, block = (f"cell [{definition.execution_count}], line 3",
                     f"a function decorated with @no_grad(), called at cell [{cell}], line 2")
    assert result.success
    _, captured = run(ip, "%why w q")
    text = captured.outputs[0].data["text/plain"]
    assert text.splitlines()[0] == (f"w: .grad is None because its path was cut by no_grad() at "
                                    f"{op}, so it is not used on the path backward took")
    assert f"w was used there inside {block}" in text
    assert f"q: requires_grad=False because it was computed under no_grad() at {op}" in text


def test_why_takes_any_expression(ip):
    """#25: subscripts, calls and attributes are evaluated as the user's own code."""
    run(ip, "model = torch.nn.Sequential(torch.nn.Linear(2, 1))\n"
            "class Net(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.used = torch.nn.Linear(2, 1)\n"
            "        self.unused = torch.nn.Linear(2, 1)\n"
            "    def forward(self, t):\n"
            "        return self.used(t)\n"
            "net = Net()")
    run(ip, "%%trace -q\nloss = model(x).sum() + net(w).sum()\nloss.backward()")
    result, captured = run(ip, "%why model[0].weight net.unused.weight list(net.parameters())[0]")
    assert result.success, result.error_in_exec
    text = captured.outputs[0].data["text/plain"]
    reasons = text.split("\n\n")
    assert reasons[0].startswith("model[0].weight: .grad holds the gradient of one backward pass")
    assert reasons[1].startswith("net.unused.weight: .grad is None because net.unused.weight is "
                                 "not used on the path")
    assert reasons[2].startswith("list(net.parameters())[0]: .grad holds the gradient")
    result, captured = run(ip, "%why model.0.weight (x * 2)")
    text = captured.outputs[0].data["text/plain"]
    assert text.startswith("model.0.weight: .grad holds")
    assert "(x * 2): .grad is None because (x * 2) is not a leaf (MulBackward0" in text


def test_watch_on_records_cells_and_off_stops(ip):
    result, captured = run(ip, "%watch on")
    assert captured.stdout.strip() == "watching: on" and watcher().session
    result, _ = run(ip, "y = x * 3\nq = y.detach()")
    cell = result.execution_count
    _, captured = run(ip, "%why q")
    assert f"detach() cut it from the graph at cell [{cell}], line 2" in captured.stdout + \
        captured.outputs[0].data["text/plain"]
    run(ip, "%watch off")
    assert not watcher().active
    result, _ = run(ip, "q2 = (x * 3).detach()")
    _, captured = run(ip, "%why q2")
    assert "at cell" not in captured.outputs[0].data["text/plain"].splitlines()[0]


def test_backward_magic_draws_the_inplace_error(ip):
    result, _ = run(ip, "%%trace -q\ny = x.exp()\ny.mul_(2)")
    cell = result.execution_count
    result, captured = run(ip, "%backward y.sum()")
    assert result.success  # the drawing is the answer, not a traceback
    (output,) = captured.outputs
    assert "RuntimeError: one of the variables needed for gradient computation has been " \
        "modified by an inplace operation" in output.data["text/plain"]
    text = output.data["text/plain"]
    assert text.splitlines()[0] == (
        f"in-place error: y ((2,) float32) was saved by ExpBackward0 at "
        f"cell [{cell}], line 2 and then modified in place by mul_ at cell [{cell}], line 3 "
        "(version 0 -> 1)")
    assert "data:image/svg+xml;base64," in output.data["text/html"]


def test_trace_magic_draws_the_inplace_error(ip):
    result, captured = run(ip, "%%trace\nc = x.sigmoid()\nc += 1\nc.sum().backward()")
    cell = result.execution_count
    assert isinstance(result.error_in_exec, RuntimeError)
    texts = [o.data.get("text/plain", "") for o in captured.outputs]
    assert texts[0].startswith(f"in-place error: c ((2,) float32) was saved by SigmoidBackward0 "
                               f"at cell [{cell}], line 2 and then modified in place by add_ at "
                               f"cell [{cell}], line 3")
    assert texts[1].startswith("GraphView: 3 ops")


def test_backward_step_magic_has_rules_and_freed_bar(ip):
    run(ip, "loss = (x.exp() * w).sum()")
    result, captured = run(ip, "%backward loss --step")
    assert result.success
    (output,) = captured.outputs
    text = output.data["text/plain"]
    assert "self: grad * result" in text and "saved freed:" in text
    assert "gradnb-freed" in output.data["text/html"]
