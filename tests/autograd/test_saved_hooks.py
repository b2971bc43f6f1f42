"""autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import gradnb
from gradnb import autograd
from gradnb.autograd.graph import (
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


def leaf(values):
    return gradnb.tensor(values, dtype=gradnb.float64, requires_grad=True)


def to_numpy(t):
    return t.detach().numpy().copy()


class Box:
    """A packed value that can be watched with a weak reference."""

    def __init__(self, array) -> None:
        self.array = array


def test_pack_runs_at_forward_and_unpack_at_backward():
    calls = []

    def pack(t):
        calls.append("pack")
        return to_numpy(t)

    def unpack(array):
        calls.append("unpack")
        return gradnb.from_numpy(array)

    x = leaf([1.0, 2.0])
    with saved_tensors_hooks(pack, unpack):
        y = x * x  # saves both operands
    assert calls == ["pack", "pack"]
    y.sum().backward()
    assert calls == ["pack", "pack", "unpack", "unpack"]
    assert x.grad.tolist() == [2.0, 4.0]


def test_pack_receives_the_saved_input_itself():
    seen = []
    x = leaf([1.0, 2.0])
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        x.pow(3)
    assert len(seen) == 1 and seen[0] is x


def test_saved_outputs_reach_pack_detached_and_make_no_cycle():
    seen = []
    gc.disable()
    try:
        x = leaf([0.0, 1.0])
        with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            y = x.exp()  # saves its output
        assert seen[0].grad_fn is None and seen[0].tolist() == y.tolist()
        node = weakref.ref(y.grad_fn)
        y.sum().backward(retain_graph=True)
        np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))
        del y
        seen.clear()
        assert node() is None
    finally:
        gc.enable()


def test_backward_releases_the_packed_values():
    gc.disable()
    try:
        boxes = []

        def pack(t):
            box = Box(to_numpy(t))
            boxes.append(weakref.ref(box))
            return box

        x = leaf([1.0, 2.0])
        with saved_tensors_hooks(pack, lambda box: gradnb.from_numpy(box.array)):
            loss = (x * x).sum()
        assert all(ref() is not None for ref in boxes)
        loss.backward()
        assert all(ref() is None for ref in boxes)
    finally:
        gc.enable()


def test_double_backward_reaches_inputs_that_were_packed_as_copies():
    x = leaf([1.0, 2.0])
    with saved_tensors_hooks(to_numpy, gradnb.from_numpy):
        y = x.pow(3)
    (gx,) = autograd.grad(y.sum(), x, create_graph=True)
    (ggx,) = autograd.grad(gx.sum(), x)
    assert gx.tolist() == [3.0, 12.0] and ggx.tolist() == [6.0, 12.0]


def test_double_backward_through_a_packed_output():
    x = leaf([0.0, 1.0])
    with saved_tensors_hooks(to_numpy, gradnb.from_numpy):
        y = x.exp()
    (gx,) = autograd.grad(y.sum(), x, create_graph=True)
    (ggx,) = autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.numpy(), np.exp([0.0, 1.0]))


def test_custom_function_saved_tensors_go_through_the_hooks():
    class Cube(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    packed = []
    x = leaf([2.0])
    with saved_tensors_hooks(lambda t: packed.append(1) or to_numpy(t), gradnb.from_numpy):
        y = Cube.apply(x)
    assert packed == [1]
    y.backward()
    assert x.grad.tolist() == [12.0]


def test_nothing_is_packed_without_recording():
    calls = []
    x = leaf([1.0])
    with saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t), gradnb.no_grad():
        x * x
    assert calls == []


def test_innermost_hooks_win_and_exit_restores():
    tags = []

    def tagging(tag):
        return lambda t: tags.append(tag) or t

    x = leaf([1.0])
    with saved_tensors_hooks(tagging("outer"), lambda t: t):
        x.pow(2)
        with saved_tensors_hooks(tagging("inner"), lambda t: t):
            x.pow(2)
        x.pow(2)
    x.pow(2)
    assert tags == ["outer", "inner", "outer"]


def test_unpack_must_return_a_tensor():
    x = leaf([1.0])
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x.pow(2)
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor "
                                        "but got result of type int"):
        y.backward()


def test_pack_may_not_modify_its_input():
    if not hasattr(gradnb.Tensor, "mul_"):
        pytest.skip("in-place ops are not available")

    def bad(t):
        with gradnb.no_grad():
            t.mul_(2)
        return t

    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in "
                                           "place"), saved_tensors_hooks(bad, lambda t: t):
        x.pow(2)


def test_save_on_cpu_on_the_cpu():
    x = leaf([1.0, 2.0])
    with save_on_cpu():
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_disable_saved_tensors_hooks_both_ways():
    with disable_saved_tensors_hooks("hooks are off here"), \
            pytest.raises(RuntimeError, match="^hooks are off here$"), \
            saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    with saved_tensors_hooks(lambda t: t, lambda t: t), \
            pytest.raises(RuntimeError, match="^nope$"), \
            disable_saved_tensors_hooks("nope"):
        pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again afterwards
        pass


def test_names_live_in_autograd_graph():
    assert gradnb.autograd.graph.saved_tensors_hooks is saved_tensors_hooks
    assert issubclass(gradnb.autograd.graph.save_on_cpu, saved_tensors_hooks)


@pytest.mark.torch
def test_pack_counts_and_gradients_match_torch(torch):
    rng = np.random.default_rng(0)
    wv, xv = rng.standard_normal((3, 4)), rng.standard_normal((2, 3))
    results = []
    for lib in (gradnb, torch):
        count = [0, 0]

        def pack(t, count=count):
            count[0] += 1
            return t.detach().numpy().copy()

        def unpack(array, lib=lib, count=count):
            count[1] += 1
            return lib.from_numpy(array)

        w = lib.tensor(wv, requires_grad=True)
        x = lib.tensor(xv)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            loss = ((x @ w).tanh() * 2).sum()
        loss.backward()
        results.append((tuple(count), w.grad.numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
