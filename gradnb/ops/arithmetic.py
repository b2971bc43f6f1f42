"""Arithmetic: ``+ - * / **``, negation, reciprocal, and their in-place forms.

Each node class is the derivative of the function right above it. Broadcasting is undone by the
engine (``sum_to``), so rules return gradients in the broadcast shape.
"""

from __future__ import annotations

from ..autograd.graph import Node, record, saved_const, saved_input
from . import dual
from ._common import Tensor, binary_operands, emit, events, grad_state, wrap

__all__ = ["add", "div", "mul", "neg", "pow", "reciprocal", "rpow", "rsub", "sub", "true_divide"]


_CONST = 2  # graph's saved-entry kind for constants (see saved_const)
_NOTHING_SAVED = saved_const(None)


def _needs(ta, tb) -> bool:
    return grad_state.enabled and ((ta is not None and ta._requires_grad)
                                   or (tb is not None and tb._requires_grad))


def _finish(node, out) -> Tensor:
    t = wrap(out, node)
    if events.observers and node is not None:
        emit(node, t)
    return t


class AddBackward0(Node):
    __slots__ = ("alpha",)

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha)


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    ta, tb, a, b = binary_operands(input, other)
    out = a + b if alpha == 1 else a + alpha * b
    if not _needs(ta, tb):
        return wrap(out)
    node = record(AddBackward0, (ta, tb))
    node.alpha = alpha
    return _finish(node, out)


class SubBackward0(Node):
    __slots__ = ("alpha",)

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -self.alpha)


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    _reject_bool_subtraction(input, other)
    ta, tb, a, b = binary_operands(input, other)
    out = a - b if alpha == 1 else a - alpha * b
    node = None
    if _needs(ta, tb):
        node = record(SubBackward0, (ta, tb))
        node.alpha = alpha
    return _finish(node, out)


def _is_bool(x) -> bool:
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._data.dtype.kind == "b")


def _reject_bool_subtraction(a, b) -> None:
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


class RsubBackward1(Node):
    __slots__ = ()

    def backward(self, g):
        return (-g,)


def rsub(input, other) -> Tensor:
    """``other - input`` for a Python-number ``other`` (``2 - x``)."""
    ta, _, a, b = binary_operands(input, other)
    node = None
    if _needs(ta, None):
        node = record(RsubBackward1, (ta,))
    return _finish(node, b - a)


class MulBackward0(Node):
    """d(a * b): ``g * b`` and ``g * a``. A Python-number factor is kept on the node (``scalar``)
    rather than among the saved tensors, so ``x * 2`` saves nothing and frees nothing."""

    __slots__ = ("scalar",)

    def backward(self, g):
        if not self._saved:
            return g * self.scalar, None
        a, b = self.saved(g)
        return (g * b if self.next_functions[0][0] is not None else None,
                g * a if self.next_functions[1][0] is not None else None)


def mul(input, other) -> Tensor:
    """Elementwise product with broadcasting."""
    ta, tb, a, b = binary_operands(input, other)
    out = a * b
    if not _needs(ta, tb):
        return wrap(out)
    if tb is None and not hasattr(b, "shape"):
        node = record(MulBackward0, (ta, None))
        node.scalar = b
        return _finish(node, out)
    node = record(MulBackward0, (ta, tb))
    # Save only what the gradients need: d/da needs b, d/db needs a.
    edges = node.next_functions
    # ``other`` is saved first: saved_tensors_hooks see PyTorch's pack order.
    saved_b = ((saved_input(tb) if tb is not None else (_CONST, b)) if edges[0][0] is not None
               else _NOTHING_SAVED)
    node._saved = (
        (saved_input(ta) if ta is not None else (_CONST, a)) if edges[1][0] is not None
        else _NOTHING_SAVED,
        saved_b,
    )
    return _finish(node, out)


class DivBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        a, b = self.saved(g)
        ga = g / b if self.next_functions[0][0] is not None else None
        gb = -g * a / (b * b) if self.next_functions[1][0] is not None else None
        return ga, gb


def div(input, other, *, rounding_mode=None) -> Tensor:
    """True division (integers divide to the default float dtype), or floor/trunc division."""
    if rounding_mode is not None:
        return _rounded_div(input, other, rounding_mode)
    ta, tb, a, b = binary_operands(input, other)
    if _is_integral(a) and _is_integral(b):
        from .. import _dtype

        ft = _dtype.get_default_dtype().np
        a = a.astype(ft) if hasattr(a, "astype") else float(a)
        b = b.astype(ft) if hasattr(b, "astype") else float(b)
    out = a / b
    node = None
    if _needs(ta, tb):
        node = record(DivBackward0, (ta, tb))
        need_b = node.next_functions[1][0] is not None
        saved_b = saved_input(tb) if tb is not None else saved_const(b)  # PyTorch's pack order
        node._saved = (
            (saved_input(ta) if ta is not None else saved_const(a)) if need_b else saved_const(None),
            saved_b,
        )
    return _finish(node, out)


true_divide = div


def _is_integral(x) -> bool:
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind is not None:
        return kind in "iub"
    return isinstance(x, int)


def _rounded_div(input, other, mode):
    from .._backend import get_array_module

    _, _, a, b = binary_operands(input, other)
    xp = get_array_module(a if hasattr(a, "shape") else b)
    if mode == "floor":
        out = xp.floor_divide(a, b)
    elif mode == "trunc":
        q = a / b
        out = xp.trunc(q).astype(q.dtype if not _is_integral(a) or not _is_integral(b)
                                  else xp.result_type(a, b))
    else:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found '{mode}'")
    # Rounded division is piecewise constant: its gradient is zero, like PyTorch's.
    return wrap(out)


class NegBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (-g,)


def neg(input: Tensor) -> Tensor:
    """``-input``."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    node = None
    if grad_state.enabled and input._requires_grad:
        node = record(NegBackward0, (input,))
    return _finish(node, -input._data)


class PowBackward0(Node):
    """d(a ** c)/da for a constant exponent ``c``."""

    __slots__ = ("exponent",)

    def backward(self, g):
        (a,) = self.saved(g)
        c = self.exponent
        if c == 0:
            return (g * 0.0,)
        if c == 2:
            return (g * 2.0 * a,)
        return (g * c * a ** (c - 1),)


class PowBackward1(Node):
    """d(a ** b) for a tensor exponent: ``b * a**(b-1)`` and ``a**b * log(a)``."""

    __slots__ = ()

    def backward(self, g):
        a, b, out = self.saved(g)
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = g * b * a ** (b - 1)
        if self.next_functions[1][0] is not None:
            # At a == 0 the limit of a**b * log(a) is 0 (PyTorch masks it the same way).
            zero = dual.data(a) == 0
            gb = g * dual.where(zero, 0.0, out * dual.log(dual.where(zero, 1.0, a)))
        return ga, gb


def pow(input, exponent) -> Tensor:
    """``input ** exponent`` (either may be a tensor)."""
    ta, tb, a, b = binary_operands(input, exponent)
    if tb is None and _is_integral(b) and not isinstance(b, bool) and hasattr(a, "dtype") \
            and a.dtype.kind in "iu" and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    out = a ** b
    node = None
    if _needs(ta, tb):
        if tb is None:
            node = record(PowBackward0, (ta,))
            node.exponent = b
            node._saved = (saved_input(ta),)
        else:
            node = record(PowBackward1, (ta, tb))
            t = wrap(out, node)
            from ..autograd.graph import saved_output

            saved_b = saved_input(tb)  # PyTorch packs the exponent before the base
            node._saved = (saved_input(ta) if ta is not None else saved_const(a),
                           saved_b, saved_output(t))
            if events.observers:
                emit(node, t)
            return t
    return _finish(node, out)


class PowBackward2(Node):
    """d(c ** b)/db for a Python-number base ``c``: ``c**b * log(c)``."""

    __slots__ = ("log_base",)

    def backward(self, g):
        (out,) = self.saved(g)
        return (g * out * self.log_base,)


def rpow(input: Tensor, base) -> Tensor:
    """``base ** input`` for a Python-number base (``2 ** x``)."""
    import math

    from ..autograd.graph import saved_output

    _, tb, a, b = binary_operands(base, input)
    out = a ** b
    if not _needs(None, tb):
        return wrap(out)
    node = record(PowBackward2, (tb,))
    node.log_base = math.log(base) if base > 0 else float("nan")
    t = wrap(out, node)
    node._saved = (saved_output(t),)
    if events.observers:
        emit(node, t)
    return t


class ReciprocalBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        (out,) = self.saved(g)
        return (-g * out * out,)


def reciprocal(input: Tensor) -> Tensor:
    """``1 / input``."""
    from ..autograd.graph import saved_output

    data = input._data
    if data.dtype.kind in "iub":
        from .. import _dtype

        data = data.astype(_dtype.get_default_dtype().np)
    out = 1.0 / data
    if grad_state.enabled and input._requires_grad:
        node = record(ReciprocalBackward0, (input,))
        t = wrap(out, node)
        node._saved = (saved_output(t),)
        if events.observers:
            emit(node, t)
        return t
    return wrap(out)


def _reflected_sub(self, other):
    return sub(other, self) if isinstance(other, Tensor) else rsub(self, other)


def _reflected_div(self, other):
    # ``2 / x`` is recorded as reciprocal-then-multiply, which PyTorch shows as MulBackward0.
    return div(other, self) if isinstance(other, Tensor) else mul(reciprocal(self), other)


def _floordiv(self, other):
    return div(self, other, rounding_mode="floor")


def _reflected_floordiv(self, other):
    from ._common import as_tensor_operand

    return div(as_tensor_operand(other, self), self, rounding_mode="floor")


TENSOR_METHODS = {
    "__add__": add, "__radd__": lambda self, other: add(other, self), "add": add,
    "__sub__": sub, "__rsub__": _reflected_sub, "sub": sub, "subtract": sub,
    # ``2 * x`` is recorded as ``x * 2`` (tensor first), as PyTorch records it.
    "__mul__": mul, "__rmul__": lambda self, other: mul(self, other), "mul": mul, "multiply": mul,
    "__truediv__": div, "__rtruediv__": _reflected_div, "div": div, "divide": div, "true_divide": div,
    "__floordiv__": _floordiv, "__rfloordiv__": _reflected_floordiv,
    "__neg__": neg, "neg": neg, "negative": neg, "__pos__": lambda self: self,
    "__pow__": pow, "__rpow__": rpow, "pow": pow, "reciprocal": reciprocal,
}
