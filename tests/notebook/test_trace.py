"""gradnb.autograd.graph_trace(): recording graphs through the observer seam, without IPython."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

import gradnb
from gradnb.autograd import events
from gradnb.autograd.trace import LeafRecord, OpRecord, graph_trace, snapshot


def seed_example():
    x = gradnb.tensor(2.0, requires_grad=True)
    w = gradnb.tensor(3.0, requires_grad=True)
    b = gradnb.tensor(1.0, requires_grad=True)
    return x, w, b


def test_records_ops_in_order_with_inputs_and_outputs():
    x, w, b = seed_example()
    with gradnb.autograd.graph_trace() as t:
        y = w * x + b
        loss = y * y
    assert [op.name for op in t.ops] == ["MulBackward0", "AddBackward0", "MulBackward0"]
    mul, add, square = t.ops
    assert [t.record(k).tensor() for k, _ in mul.inputs] == [w, x]
    assert add.inputs[0] == (mul.key, 0)
    assert square.inputs == ((add.key, 0), (add.key, 0))
    assert square.outputs == [((), "float32")]
    assert square.output_tensors[0]() is loss


def test_leaves_are_told_apart_from_constants():
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor([3.0, 4.0])
    with graph_trace() as t:
        (c * w).sum()
    kinds = {leaf.tensor() is w: leaf.requires_grad for leaf in t.leaves}
    assert kinds == {True: True, False: False}
    constant = next(leaf for leaf in t.leaves if not leaf.requires_grad)
    assert constant.tensor() is c and constant.shape == (2,) and constant.nbytes == 8


def test_saved_tensors_carry_exact_bytes_and_their_source():
    x = gradnb.ones(3, 4, requires_grad=True)  # float32: 48 bytes
    with graph_trace() as t:
        y = x.exp()
    (exp,) = t.ops
    assert exp.saved_bytes == 48
    assert exp.saved[0].source == (exp.key, 0)  # exp saves its own result
    assert t.saved_bytes == 48
    assert not exp.released
    y.sum().backward()
    assert exp.released


def test_records_only_inside_the_block_and_unsubscribes():
    x, w, b = seed_example()
    y = w * x
    before = len(events.observers)
    with graph_trace() as t:
        z = y + b
    assert len(events.observers) == before
    w * x  # not recorded
    assert [op.name for op in t.ops] == ["AddBackward0"]
    horizon = t.record(t.ops[0].inputs[0][0])
    assert isinstance(horizon, LeafRecord) and horizon.horizon == "MulBackward0"
    assert horizon.shape == () and horizon.dtype == "float32"
    del z


def test_trace_does_not_keep_the_graph_alive():
    x = gradnb.randn(100, requires_grad=True)
    with graph_trace() as t:
        y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None
    assert all(op.released for op in t.ops)  # a dead node counts as released


def test_backward_reports_are_kept():
    x, w, b = seed_example()
    with graph_trace() as t:
        loss = (w * x + b) ** 2
        loss.backward()
    assert len(t.backward_reports) == 1
    assert t.backward_reports[0].nodes_executed > 0


def test_listeners_see_every_op():
    x, w, b = seed_example()
    seen = []
    t = graph_trace()
    t.listeners.append(lambda tr: seen.append(len(tr)))
    with t:
        (w * x + b).exp()
    assert seen == [1, 2, 3]


def test_snapshot_matches_a_trace_of_the_same_graph():
    x, w, b = seed_example()
    with graph_trace() as live:
        y = w * x + b
        loss = y * y
    after = snapshot([loss])
    assert [(op.name, op.inputs, op.outputs) for op in after.ops] == [
        (op.name, op.inputs, op.outputs) for op in live.ops
    ]
    assert isinstance(after.ops[0], OpRecord)
    assert after.key_of(loss.grad_fn) == after.ops[-1].key


def test_snapshot_of_a_leaf_is_empty():
    x, _, _ = seed_example()
    assert len(snapshot([x])) == 0


def test_trace_of_a_deep_chain_is_iterative():
    x = gradnb.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    deep = snapshot([y])
    assert len(deep.ops) == 3000


def test_engine_import_never_imports_notebook_libraries():
    code = (
        "import sys, gradnb\n"
        "with gradnb.autograd.graph_trace():\n"
        "    (gradnb.ones(2, requires_grad=True) * 2).sum().backward()\n"
        "bad = [m for m in ('IPython', 'ipywidgets', 'matplotlib') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
