"""A node class declares its op once: ``saves`` by PyTorch's names, ``inputs``/``outputs``,
``saved_when``, the rule text; ``record`` and ``grad_fn._saved_*`` follow the declaration."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

import gradnb
from gradnb._core.graph import Node
from gradnb._core.record import record


class ScaleBackward0(Node):
    """``self * other`` declared the PyTorch way, for the tests below."""

    __slots__ = ()
    saves = ("other", "self", "self_sym_sizes", "other_scalar_type", "alpha")
    saved_when: ClassVar[dict] = {"self": ("other",), "other": ("self",)}
    rule = "self: grad * other * alpha; other: grad * self * alpha"

    def backward(self, g):
        other, x = self.saved(g)
        return (None if other is None else g * other * self.alpha,
                None if x is None else g * x * self.alpha)


def scale(a, b, alpha=1.0):
    return record(ScaleBackward0, (a, b), a._data * b._data * alpha, attrs={"alpha": alpha})


class SplitHalvesBackward0(Node):
    __slots__ = ()
    inputs = ("input",)
    outputs = ("low", "high")
    saves = ("high", "input")
    rule = "input: cat(grad_low, grad_high)"
    num_outputs = 2

    def backward(self, g_low, g_high):
        return (np.concatenate([g_low, g_high]),)


def test_saves_by_name_give_tensors_plain_values_and_filled_sizes():
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    b = gradnb.tensor([3.0, 4.0], requires_grad=True)
    node = scale(a, b, 2.0).grad_fn
    assert node._saved_self is a and node._saved_other is b
    assert node._saved_self_sym_sizes == (2,)
    assert node._saved_other_scalar_type == gradnb.float32
    assert node._saved_alpha == 2.0
    assert ScaleBackward0.saved_names == ("other", "self")
    assert ScaleBackward0.rule.startswith("self: grad * other")


def test_saved_when_leaves_out_what_no_formula_reads():
    """As PyTorch: ``x * c`` with ``c`` constant never reads ``x`` in backward."""
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor([3.0, 4.0])
    packed = []
    with gradnb.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y = scale(a, c)
    assert y.grad_fn._saved_self is None
    assert packed == [c]
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])


def test_pack_order_is_the_declared_order():
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    b = gradnb.tensor([3.0, 4.0], requires_grad=True)
    packed = []
    with gradnb.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        scale(a, b)
    assert [p is b for p in packed] == [True, False]


def test_output_names_save_that_output():
    x = gradnb.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    low, high = record(SplitHalvesBackward0, (x,), (x._data[:2].copy(), x._data[2:].copy()))
    node = low.grad_fn
    np.testing.assert_array_equal(node._saved_high.detach().numpy(), [3.0, 4.0])
    assert node._saved_input is x
    (low.sum() + high.sum() * 2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 2.0, 2.0])


def test_a_released_node_raises_on_saved_reads():
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = scale(a, a)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn._saved_self
