"""The compiled hot paths (``gradnb/_core/_record.c``, ``gradnb/autograd/_loop.c``) and the
Python code beside them are one algorithm.

The rest of the suite runs with the compiled parts wherever the install built them. Here the
engine's own tests run again in a child process with ``GRADNB_PURE_PYTHON=1``, so the Python
``record`` and the Python loops (what an install without a C compiler runs) pass the same
checks; and a few graphs are run both ways in one process and compared result for result.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradnb
from gradnb._core import record as record_module
from gradnb.autograd import engine

ROOT = Path(__file__).resolve().parents[2]

# The tests that exercise recording and the backward loops hardest: the engine, memory
# accounting, saved tensors, hooks, in-place writes and views, training.
PURE_PYTHON_SUITE = [
    "tests/autograd",
    "--ignore=tests/autograd/test_functional.py",  # (OpInfo oracle sweeps: minutes, no engine)
    "--ignore=tests/autograd/test_forward_ad.py",
    "--ignore=tests/autograd/test_compiled.py",
    "tests/test_training.py",
    "tests/ops/test_inplace.py",
    "tests/ops/test_inplace_forms.py",
    "tests/ops/test_arithmetic.py",
    "tests/ops/test_zero_d_constants.py",
    "tests/ops/test_second_order_edges.py",
    "tests/notebook/test_explain.py",
]


def _compiler_available() -> bool:
    return any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))


@pytest.mark.skipif(bool(os.environ.get("GRADNB_PURE_PYTHON")),
                    reason="GRADNB_PURE_PYTHON is set: the compiled parts are off on purpose")
def test_the_compiled_parts_are_in_use_where_a_compiler_built_them():
    if not _compiler_available():
        pytest.skip("no C compiler: the install runs gradnb's Python code alone")
    assert record_module._compiled is not None, "gradnb._core._record was not built"
    assert engine._loop is not None, "gradnb.autograd._loop was not built"
    assert record_module.record is record_module._compiled.record


def test_the_python_code_passes_the_engine_tests_alone():
    env = dict(os.environ, GRADNB_PURE_PYTHON="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         *PURE_PYTHON_SUITE],
        check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


@pytest.fixture
def pure_python(monkeypatch):
    """Run the Python ``record`` and loops in this process (the compiled ones hand back to
    the Python ``record`` for anything unusual: that function is ``_compiled``'s fallback)."""
    def switch(on: bool):
        if on:
            python_record = record_module._python_record
            _patch_record(monkeypatch, python_record)
            monkeypatch.setattr(engine, "_loop", None)
            assert gradnb.ops.arithmetic.record is python_record
        else:
            monkeypatch.undo()
    return switch


def _patch_record(monkeypatch, fn):
    """Point every module that imported ``record`` at ``fn``."""
    compiled = record_module.record
    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "__name__", "").startswith("gradnb") \
                and getattr(module, "record", None) is compiled:
            monkeypatch.setattr(module, "record", fn)


def _program(rng):
    """A graph with every edge kind the loops treat apart: chains, fan-out and fan-in,
    broadcasting (the gradient is fitted), a cast, several outputs, a leaf used twice, a view,
    a saved input, a saved output, constants as numbers and as 0-d tensors."""
    x = gradnb.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = gradnb.tensor(rng.standard_normal(4), requires_grad=True)
    s = gradnb.tensor(rng.standard_normal(()), dtype=gradnb.float32, requires_grad=True)
    c = gradnb.tensor(0.5)
    h = x * w + 0.25            # broadcast: w's gradient is summed down
    h = h.tanh() * c - x        # fan-in, x used twice
    a, b = h.split(2, dim=0)    # several outputs, views
    y = (a.exp().sum() + (b * b).sum()) * s   # float32 * float64 scalar
    z = (h.t() @ h).sigmoid().mean()
    return (x, w, s), y + z


def _chain_program(rng):
    """The saves the compiled loop releases itself (a lone output array, ``x * number``'s
    constant) beside the ones it leaves to Python: an output array the user still holds, one
    another node saved as its input (watched), ReLU's mask over a gradient it may overwrite."""
    x = gradnb.tensor(rng.standard_normal((5, 6)), requires_grad=True)
    kept = (x * 0.5).tanh()          # held below: released, not freed
    y = kept.tanh()                  # saved by tanh and (as an input) by the product
    z = (y * y).relu() * 2.0 + x.sigmoid().tanh()
    # Three inputs: addmm (F.linear) with a leaf and an intermediate, addcmul with a constant.
    w = gradnb.tensor(rng.standard_normal((3, 6)), requires_grad=True)
    b = gradnb.tensor(rng.standard_normal(3), requires_grad=True)
    h = gradnb.nn.functional.linear(z, w, b)
    h = gradnb.addcmul(h, h.tanh(), gradnb.tensor(rng.standard_normal(3)), value=0.5)
    # One-input views: of a leaf, of a view, written in place through (which bumps the base's
    # version and rebases the view's node), and one made under no_grad.
    v = x.t()[1:].reshape(-1)
    u = (x * 1.0).view(6, 5)
    u[0].mul_(2.0)
    with gradnb.no_grad():
        frozen = x[0]
    return (x, w, b), z.sum() + kept.sum() + h.sum() + (v * v).sum() + u.sum() + frozen.sum()


@pytest.mark.parametrize("program", [_program, _chain_program])
@pytest.mark.parametrize("seed", range(5))
def test_python_and_compiled_give_the_same_gradients_and_report(seed, program, pure_python):
    if record_module._compiled is None and engine._loop is None:
        pytest.skip("the compiled parts are not built here")
    results = []
    for python in (False, True):
        pure_python(python)
        leaves, out = program(np.random.default_rng(seed))
        out.backward()
        report = gradnb.autograd.memory.last_backward()
        results.append(([leaf.grad.numpy().copy() for leaf in leaves], report.nodes_executed,
                        report.freed_bytes, report.released_bytes,
                        out.grad_fn.name()))
    (grads_c, *rest_c), (grads_p, *rest_p) = results
    for compiled, python in zip(grads_c, grads_p):
        np.testing.assert_array_equal(compiled, python)
    assert rest_c == rest_p  # nodes run, bytes freed and still held, the root's node


def _first_gradients(rng):
    """Leaves whose first gradient arrives in each form ``_accumulate`` tells apart: an array
    the pass alone holds, one gradient handed to two leaves, the caller's own ``gradient=``, a
    transposed (column-major) array, and a transposed view of an array only it sees (the
    weight's gradient of ``F.linear``)."""
    x, a, b, u, m, w = (gradnb.tensor(rng.standard_normal(shape), requires_grad=True)
                        for shape in ((3, 4), (3,), (3,), (2, 3), (4, 3), (2, 4)))
    (x * 3.0).sum().backward()
    ((a + b) * 2.0).sum().backward()  # (AddBackward0 hands one new array to both)
    seed = gradnb.tensor(rng.standard_normal((2, 3)))
    (u + 0).backward(seed)
    (m.t() * gradnb.tensor(rng.standard_normal((3, 4)))).sum().backward()
    gradnb.nn.functional.linear(gradnb.tensor(rng.standard_normal((5, 4))), w).sum().backward()
    grads = [t.grad._data for t in (x, a, b, u, m, w)]
    memory = [(g.flags.c_contiguous, g.flags.writeable, g.base is None) for g in grads]
    shared = [np.shares_memory(grads[1], grads[2]), np.shares_memory(grads[3], seed._data)]
    return [g.copy() for g in grads], memory, shared


def test_a_leafs_first_gradient_is_kept_or_copied_as_python_does(pure_python):
    """The compiled loop keeps a leaf's first gradient itself where ``_owned`` would: the same
    values, layout and sharing as the Python loop, and never memory another holder sees."""
    if engine._loop is None:
        pytest.skip("the compiled loop is not built here")
    results = []
    for python in (False, True):
        pure_python(python)
        results.append(_first_gradients(np.random.default_rng(0)))
    (grads_c, memory_c, shared_c), (grads_p, memory_p, shared_p) = results
    for compiled, python in zip(grads_c, grads_p):
        np.testing.assert_array_equal(compiled, python)
    assert memory_c == memory_p
    assert all(contiguous and writeable for contiguous, writeable, _ in memory_c)
    assert shared_c == shared_p == [False, False]


def _leaf_nodes():
    """What a leaf's AccumulateGrad looks like from outside: one node per leaf within a graph,
    held weakly by the leaf (gone with the graph), and none for a view made under ``no_grad``
    (it requires grad through its base alone)."""
    w = gradnb.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=gradnb.float32, requires_grad=True)
    y = w * w + w.sin()
    first, second = (edge[0] for edge in y.grad_fn.next_functions)
    shared = first.next_functions[0][0] is first.next_functions[1][0] \
        is second.next_functions[0][0]
    node = first.next_functions[0][0]
    described = (type(node).__name__, node.variable is w, node.next_functions, node._shape,
                 node._dtype, node._saved, node.name())
    ordered = node._seq < first._seq
    with gradnb.no_grad():
        v = w[0]
    z = (v * 2.0).sum()
    stops = z.grad_fn.next_functions[0][0].next_functions
    del y, first, second, node
    return shared, described, ordered, w._accumulator(), stops


def test_a_leafs_node_is_made_as_accumulator_makes_it(pure_python):
    """The compiled record builds a leaf's AccumulateGrad itself: the same node as the Python
    ``accumulator`` would give, shared within a graph and held weakly."""
    if record_module._compiled is None:
        pytest.skip("the compiled record is not built here")
    results = []
    for python in (False, True):
        pure_python(python)
        results.append(_leaf_nodes())
    assert results[0] == results[1]
    shared, described, ordered, left, _ = results[0]
    assert shared and ordered and left is None
    assert described[:3] == ("AccumulateGrad", True, ())


def test_a_rule_that_raises_leaves_the_pass_as_python_does(pure_python):
    """An error inside a rule propagates out of the compiled loop unchanged, and grad mode is
    back on afterwards."""
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.0).sum()
    y.backward(retain_graph=False)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert gradnb.is_grad_enabled()


def test_config_show_says_which_hot_paths_run_compiled():
    text = gradnb.__config__.show()
    assert text.startswith(f"gradnb {gradnb.__version__}\n")
    parts = gradnb.__config__.compiled_parts()
    expected = ", ".join(parts) if parts else "none ("
    assert f"Compiled hot paths: {expected}" in text


def test_a_constant_tensor_saved_by_many_nodes_is_checked_and_freed_per_node():
    """``x * c`` down a chain: the nodes may share what they saved of ``c`` (the compiled
    ``record`` does), yet each node checks ``c``'s version as of its own recording, the saved
    value reads back as ``c``, and nothing keeps ``c`` alive once the graph is gone."""
    import gc
    import weakref

    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor(0.5)
    y1 = x * c
    y2 = y1 * c
    assert y1.grad_fn._saved_other is c and y2.grad_fn._saved_other is c
    c.add_(1.0)  # both nodes saved c at version 0
    y3 = y2 * c   # saved at version 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y3.sum().backward()
    z = x * c * c  # after the write: saved at version 1, backward runs
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.25, 2.25])
    ref = weakref.ref(c)
    del y1, y2, y3, z, c
    gc.collect()
    assert ref() is None


def test_saved_tensor_hooks_pack_a_shared_constant_once_per_node():
    packed = []

    def pack(t):
        packed.append(t)
        return t

    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor(0.5)
    with gradnb.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x * c * c * c
    assert sum(t is c for t in packed) == 3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.125, 0.125])


def test_record_refuses_a_stale_no_grad_view_as_the_python_function_does(pure_python):
    """A view made under ``no_grad`` of a tensor that requires grad, whose base is then written
    in place, cannot be brought up to date (PyTorch's refusal): the compiled and the Python
    ``record`` refuse it alike, before linking anything."""
    from gradnb._core.graph import Node

    class Two(Node):
        __slots__ = ()

        def backward(self, g):
            return g, g

    refusals = []
    for python in (False, True):
        pure_python(python)
        x = gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        with gradnb.no_grad():
            v = y[0:2]
        y.mul_(3)
        b = gradnb.tensor([1.0, 1.0], requires_grad=True)
        with pytest.raises(RuntimeError) as refused:
            record_module.record(Two, (v, b), v._data + b._data)
        refusals.append(str(refused.value))
        assert v._grad_fn is None and b._accumulator is None  # nothing linked
    assert refusals[0] == refusals[1]
    assert refusals[0].startswith("A view was created in no_grad mode and its base or another "
                                  "view of its base has been modified inplace with grad mode "
                                  "enabled.")


def test_record_answers_odd_calls_as_the_python_function_does(pure_python):
    """What ``record``'s compiled case does not handle, it hands over or refuses exactly as the
    Python function: a tensor whose state was never set, ``attrs`` that is a mapping but not a
    dict, a number's save spec without the operands it reads."""
    import types

    from gradnb._core.graph import SAVE_SECOND
    from gradnb._core.tensor import Tensor
    from gradnb.ops.arithmetic import AddBackward0, MulBackward0

    answers = []
    for python in (False, True):
        pure_python(python)
        record = record_module.record
        bare = object.__new__(Tensor)
        bare._data, bare._grad_fn, bare._output_nr, bare._version_counter = \
            np.ones(2), None, 0, [0]
        x = gradnb.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        try:
            record(AddBackward0, (bare, x), np.ones(2))
        except AttributeError as error:
            seen.append(("unset", str(error)))
        out = record(AddBackward0, (x, None), x._data + 1,
                     attrs=types.MappingProxyType({"alpha": 1}))
        seen.append(("mapping", out.grad_fn.name(), out.grad_fn.alpha))
        try:
            record(MulBackward0, (x, None), x._data * 2, save=SAVE_SECOND)
        except TypeError as error:
            seen.append(("no operands", str(error)))
        answers.append(seen)
    assert answers[0] == answers[1]
    assert [entry[0] for entry in answers[0]] == ["unset", "mapping", "no operands"]


@pytest.mark.parametrize("bias_grad", [True, False])
def test_a_three_input_node_links_as_the_python_record_links_it(bias_grad, pure_python):
    """addmm's node: edges to a leaf, to an output other than a node's first (``split``), and
    none for a bias that needs no gradient; the same output numbers either way."""
    if record_module._compiled is None:
        pytest.skip("the compiled record is not built here")

    def edges(python):
        pure_python(python)
        rng = np.random.default_rng(0)
        x = gradnb.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        w = gradnb.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        b = gradnb.tensor(rng.standard_normal(2), requires_grad=bias_grad)
        _, second = x.split(2)
        node = gradnb.addmm(b, second, w).grad_fn
        links = [(type(f).__name__ if f is not None else None, nr)
                 for f, nr in node.next_functions]
        pure_python(False)
        return links, node._next_nr, node._seq is not None

    compiled, python = edges(False), edges(True)
    assert compiled == python
    assert compiled[0][1] == ("SplitBackward0", 1)
