"""Arithmetic: ``+ - * / **``, negation, reciprocal, and their in-place forms.

Each node class is the derivative of the function right above it. Broadcasting is undone by the
engine (``sum_to``), so rules return gradients in the broadcast shape.
"""

from __future__ import annotations

import cmath
import math
from typing import ClassVar

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module, silent
from .._core.graph import SAVE_SECOND, Node, donated
from .._core.record import record, wrap
from . import dual
from ._args import check_kernel_dtype, check_value_fits, reflected
from ._common import (
    Tensor,
    as_tensor_operand,
    binary_operands,
    reduced_scalar_operand,
    scalar_op_math,
)
from ._declare import record_underivable
from .op_math import fused_multiply_add, half_precision, to_op_math

__all__ = [
    "add",
    "div",
    "divide",
    "floor_divide",
    "mul",
    "multiply",
    "neg",
    "negative",
    "pow",
    "reciprocal",
    "sub",
    "subtract",
    "true_divide",
]


_float32 = np.float32


class AddBackward0(Node):
    rule = "self: grad; other: grad * alpha"
    __slots__ = ()
    alpha = 1
    saved_attrs: ClassVar[dict] = {"alpha": "alpha"}

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha.conjugate())


def add(input, other, *, alpha=1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    # ``x + 0.5``: no call (alpha=True is refused below for non-bool results)
    if type(other) is float and type(input) is Tensor and alpha == 1 and alpha is not True:
        a = input._data
        if a.dtype.kind == "f":
            return record(AddBackward0, (input, None), a + other)
    if type(other) is Tensor and type(input) is Tensor and alpha == 1 and alpha is not True:
        b = _zero_d_float(input, other)
        if b is not None:  # ``x + gradnb.tensor(0.1)``: no promotion work, no cast array
            return record(AddBackward0, (input, other), input._data + b)
    ta, tb, a, b = binary_operands(input, other)
    if alpha == 1 and alpha is not True:
        return record(AddBackward0, (ta, tb), a + b)
    return record(AddBackward0, (ta, tb), _scaled(a, b, alpha, 1), attrs={"alpha": alpha})


def _scaled(a, b, alpha, sign):
    """``a + sign * alpha * b`` for ``add``/``sub`` with ``alpha``: PyTorch's checks of alpha
    against the result dtype, and integer overflow wrapping silently, as in PyTorch."""
    kind = np.result_type(a, b).kind
    if kind in "biu" and isinstance(alpha, (float, complex)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if kind != "c" and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    if kind != "b" and isinstance(alpha, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if (type(b) is float or type(b) is int) and half_precision(a):
        b = np.asarray(b, dtype=a.dtype)  # a Python number: rounded to the dtype, as PyTorch's
    if half_precision(a, b) and not isinstance(alpha, complex):
        # PyTorch's kernel: alpha in the tensors' dtype, ``a + alpha * b`` one fused step in
        # float32 (op_math.py)
        check_value_fits(alpha, a.dtype)  # (PyTorch converts alpha to the dtype, checked)
        scaled_alpha = _float32(np.asarray(sign * alpha, dtype=a.dtype))
        with silent():
            return fused_multiply_add(to_op_math(b), scaled_alpha, to_op_math(a)).astype(a.dtype)
    with silent():
        out = a + alpha * b if sign > 0 else a - alpha * b
    return out.astype(bool) if kind == "b" else out  # bool + alpha * bool stays bool


class AddBackward1(Node):
    """``add(Tensor, Scalar)`` as PyTorch's composites call it (``x + 1`` from Python is
    AddBackward0)."""
    rule = "self: grad"
    __slots__ = ()
    inputs = ("self",)

    def backward(self, g):
        return (g,)


def add_scalar(input: Tensor, other) -> Tensor:
    """``input + other`` recorded as PyTorch's ``add.Scalar`` (AddBackward1)."""
    _, _, a, b = binary_operands(input, other)
    return record(AddBackward1, (input,), a + b)


class SubBackward0(Node):
    rule = "self: grad; other: -grad * alpha"
    __slots__ = ()
    alpha = 1
    saved_attrs: ClassVar[dict] = {"alpha": "alpha"}

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -self.alpha.conjugate())


def sub(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    _reject_bool_subtraction(input, other)
    ta, tb, a, b = binary_operands(input, other)
    if alpha == 1 and alpha is not True:
        return record(SubBackward0, (ta, tb), a - b)
    return record(SubBackward0, (ta, tb), _scaled(a, b, alpha, -1), attrs={"alpha": alpha})


subtract = sub


class SubBackward1(Node):
    """``sub(Tensor, Scalar)`` as PyTorch's composites call it (``x - 1`` from Python is
    SubBackward0)."""
    rule = "self: grad"
    __slots__ = ()
    inputs = ("self",)

    def backward(self, g):
        return (g,)


def sub_scalar(input: Tensor, other) -> Tensor:
    """``input - other`` recorded as PyTorch's ``sub.Scalar`` (SubBackward1)."""
    _, _, a, b = binary_operands(input, other)
    return record(SubBackward1, (input,), a - b)


def _is_bool(x) -> bool:
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._data.dtype.kind == "b")


_BOOL_SUBTRACTION = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you "
                     "are trying to invert a mask, use the `~` or `logical_not()` operator "
                     "instead.")


def _reject_bool_subtraction(a, b) -> None:
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(_BOOL_SUBTRACTION)


class RsubBackward0(Node):
    """``rsub(self, other, alpha) = other - alpha * self`` of two tensors."""
    rule = "self: -grad * alpha; other: grad"
    __slots__ = ()
    saves = ("alpha",)
    alpha = 1

    def backward(self, g):
        return (-g if self.alpha == 1 else g * -dual.conj(self.alpha)), g


class RsubBackward1(Node):
    """``rsub(self, number, alpha) = number - alpha * self`` (``2 - x``)."""
    rule = "self: -grad * alpha"
    __slots__ = ()
    inputs = ("self",)
    saves = ("alpha",)
    alpha = 1

    def backward(self, g):
        return (-g if self.alpha == 1 else g * -dual.conj(self.alpha),)


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input`` (``2 - x`` is ``rsub(x, 2)``)."""
    _reject_bool_subtraction(input, other)
    ta, tb, a, b = binary_operands(input, other)
    out = b - a if alpha == 1 else b - alpha * a
    attrs = None if alpha == 1 else {"alpha": alpha}
    if tb is None and not isinstance(other, Tensor):
        return record(RsubBackward1, (ta,), out, attrs=attrs)
    return record(RsubBackward0, (ta, tb), out, attrs=attrs)


class MulBackward0(Node):
    """d(a * b): ``g * b`` and ``g * a``, each saved only when the other gradient is needed. A
    Python-number factor is saved as a constant, as PyTorch saves it: ``x * 2`` holds no array,
    but a second backward through it is refused like any node that saved a value."""
    rule = "self: grad * other; other: grad * self"
    why_zero = "a multiplication by zeros (a mask)"

    __slots__ = ()
    pack_order = (1, 0)
    saved_names = ("self", "other")

    def backward(self, g):
        a, b = self.saved(g)
        # complex: PyTorch's g * conj(other); a Python float (``x * 0.9``), the commonest
        # factor, and a real array are their own conjugates: no call
        if self._next0 is None:
            ga = None
        elif (type(b) is float and (type(g) is Tensor or g.dtype.itemsize != 2)
              or type(b) is _ndarray and b.dtype.kind != "c"):
            if self._next1 is None and type(g) is _ndarray and g.size >= _DONATED_SIZE \
                    and (type(b) is float or b.dtype == g.dtype
                         and (b.shape == g.shape or not b.ndim)) and donated(g):
                # ``x * 0.5``, dropout's ``x * mask``: into ``g`` itself, which the backward
                # pass gave this rule alone (``g`` is read for nothing else here). Small
                # gradients skip the check, which would cost more than the allocation.
                return np.multiply(g, b, out=g), None
            ga = g * b
        else:  # a complex, a half-precision gradient, a saved tensor (``create_graph``)
            ga = _by_number(g, dual.conj(b))
        return ga, None if self._next1 is None else g * dual.conj(a)


# Elements from which writing a product into a donated gradient pays for the check.
_DONATED_SIZE = 4096


def _by_number(g, b, divide: bool = False):
    """``g * b`` (``g / b``) in a rule: for a float16 or bfloat16 gradient array and a real
    Python number ``b``, in PyTorch's op math (``_common.scalar_op_math``)."""
    if type(b) in _REAL_NUMBERS and not isinstance(g, Tensor) and g.dtype.itemsize == 2:
        # (a gradient is floating, so 2 bytes is float16 or bfloat16)
        return scalar_op_math(np.true_divide if divide else np.multiply, g, b)
    return g / b if divide else g * b


_REAL_NUMBERS = (float, int, bool)


def mul(input, other) -> Tensor:
    """Elementwise product with broadcasting."""
    if type(other) is float and type(input) is Tensor:  # ``x * 0.5``, the commonest: no call
        a = input._data
        if a.dtype.char in "fd":  # (float16 goes on to the general path: PyTorch's op math)
            return record(MulBackward0, (input, None), a * other, save=_SAVE_OTHER,
                          operands=(a, other))
    if type(other) is Tensor and type(input) is Tensor:
        b = _zero_d_float(input, other)
        if b is not None:  # ``x * gradnb.tensor(0.9)``: saves the 0-d tensor, as PyTorch
            return record(MulBackward0, (input, other), input._data * b, save=_SAVE_OTHER)
    ta, tb, a, b = binary_operands(input, other)
    product = _product(a, b, tb)
    # (``type(b) is float`` first: a failed ``hasattr`` costs more than the multiplication)
    if tb is None and (type(b) is float or not hasattr(b, "shape") or isinstance(b, np.generic)):
        # The number is saved as a constant from ``operands`` (position 1 has no tensor).
        return record(MulBackward0, (ta, None), product, save=_SAVE_OTHER, operands=(a, b))
    # Save only what the gradients need: d/da needs b, d/db needs a.
    save = (0 if tb is not None and tb._requires_grad else None,
            1 if ta is not None and ta._requires_grad else None)
    return record(MulBackward0, (ta, tb), product, save=save, operands=(a, b))


_ndarray = np.ndarray
_SAVE_OTHER = SAVE_SECOND  # ``x * 2``: only the number, for d/dx


def _product(a, b, tb=None):
    """``a * b`` of promoted operands (``tb``: the second operand's tensor, None for a
    number); float16 and bfloat16 times a number or a 0-d tensor of another dtype in
    PyTorch's op math (``_common.scalar_op_math``)."""
    scalar = reduced_scalar_operand(a, tb, b)
    return a * b if scalar is None else scalar_op_math(np.multiply, a, scalar)


def _zero_d_float(input, other):
    """What to multiply or add ``input``'s array by when ``other`` is a 0-d float tensor that
    needs no gradient and ``input`` a dimensioned float tensor, both NumPy arrays (the
    constants of ``x * c + d``), else None. PyTorch keeps ``input``'s dtype there. When the
    dtypes are the same (NumPy's one descriptor per built-in dtype: compared by identity, as
    ``==`` between two dtypes costs more than it saves), that is ``other``'s own 0-d array:
    the fastest operand NumPy takes (a third less time than a Python float on a small array).
    Otherwise a Python float, which NumPy casts to ``input``'s dtype (NEP 50: a weak scalar):
    the same numbers as PyTorch's cast, without making the cast array or doing
    ``binary_operands``' promotion (a 0-d array of another dtype would cost a casting loop, or
    widen the result)."""
    b = other._data
    a = input._data
    if type(b) is not _ndarray or type(a) is not _ndarray or b.ndim or other._requires_grad:
        return None
    b_dtype, a_dtype = b.dtype, a.dtype
    if b_dtype.kind != "f" or not a.ndim:
        return None
    if b_dtype is a_dtype:
        return b
    # (float16 with another dtype's constant: the general path, in PyTorch's op math)
    return b.item() if a_dtype.kind == "f" and a_dtype.itemsize != 2 else None


class MulBackward1(Node):
    """``mul(Tensor, Scalar)`` as PyTorch's composites call it (``x * 2`` from Python is
    MulBackward0)."""
    rule = "self: grad * other"
    __slots__ = ("other",)
    inputs = ("self",)
    saves = ("other",)

    def backward(self, g):
        return (_by_number(g, dual.conj(self.other)),)


def mul_scalar(input: Tensor, other) -> Tensor:
    """``input * other`` recorded as PyTorch's ``mul.Scalar`` (MulBackward1)."""
    _, _, a, b = binary_operands(input, other)
    return record(MulBackward1, (input,), _product(a, b), attrs={"other": other})


multiply = mul


class DivBackward0(Node):
    rule = "self: grad / other; other: -grad * self / other**2"
    why_nonfinite = "division by 0 (0/0 gives NaN): grad / other"
    fix_nonfinite = "keep the divisor away from 0: a / (b + eps)"
    __slots__ = ()
    saves = ("self", "other")
    pack_order = (1, 0)

    def backward(self, g):
        a, b = map(dual.conj, self.saved(g))  # complex: PyTorch's g / conj(other)
        ga = _by_number(g, b, divide=True) if self.needs(0) else None
        gb = -g * a / (b * b) if self.needs(1) else None
        return ga, gb


def div(input, other, *, rounding_mode=None) -> Tensor:
    """True division (integers divide to the default float dtype), or floor/trunc division."""
    if rounding_mode is not None:
        return _rounded_div(input, other, rounding_mode)
    ta, tb, a, b = binary_operands(input, other)
    if _is_integral(a) and _is_integral(b):
        ft = _dtype.get_default_dtype().np
        a, b = _true_division_operand(input, a, ft), _true_division_operand(other, b, ft)
    save = (0 if tb is not None and tb._requires_grad else None, 1)
    return record(DivBackward0, (ta, tb), _quotient(a, b, tb), save=save, operands=(a, b))


def _true_division_operand(value, promoted, ft):
    """An integer operand of a true division as float, by its own value: the integer promotion
    (which wraps an int8 0-d tensor or a Python int into uint8) does not apply, as in PyTorch
    (``uint8 / -1`` is -3.0)."""
    if isinstance(value, Tensor):
        return value._data.astype(ft)
    if type(value) is int or type(value) is bool:
        return float(value)
    return promoted.astype(ft) if hasattr(promoted, "astype") else float(promoted)


def _quotient(a, b, tb=None):
    """``a / b`` as PyTorch divides: a zero or infinite divisor gives inf and NaN silently;
    float16 and bfloat16 by a number or a 0-d tensor ``tb`` of another dtype in PyTorch's op
    math (``_common.scalar_op_math``)."""
    scalar = reduced_scalar_operand(a, tb, b)
    if scalar is not None:
        return scalar_op_math(np.true_divide, a, scalar)
    # A finite number of size at least 1 cannot divide to a warning, and skipping
    # ``silent()`` there keeps the common ``x / 2`` cheap.
    if (type(b) is float or type(b) is int) and (b >= 1 or b <= -1) and b - b == 0:
        return a / b
    with silent():
        return a / b


true_divide = div
divide = div


class DivBackward1(Node):
    """``div(Tensor, Scalar)`` as PyTorch's composites call it (``x / 2`` from Python is
    DivBackward0)."""
    rule = "self: grad / other"
    why_nonfinite = "division by 0: grad / other"
    __slots__ = ("other",)
    inputs = ("self",)
    saves = ("other",)

    def backward(self, g):
        return (_by_number(g, dual.conj(self.other), divide=True),)


def div_scalar(input: Tensor, other) -> Tensor:
    """``input / other`` recorded as PyTorch's ``div.Scalar`` (DivBackward1)."""
    _, _, a, b = binary_operands(input, other)
    if _is_integral(a) and _is_integral(b):
        a = a.astype(_dtype.get_default_dtype().np)
    return record(DivBackward1, (input,), _quotient(a, b), attrs={"other": other})


def _is_integral(x) -> bool:
    if type(x) is float:  # the common divisor, without a failing getattr
        return False
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind is not None:
        return kind in "iub"
    return isinstance(x, int)


class DivBackward2(Node):
    """``div(self, other, rounding_mode=...)``: piecewise constant, so zero gradients; PyTorch
    still saves both operands (each only when the other's gradient will be computed)."""
    rule = "self: grad * 0 (rounding_mode set); other: grad * 0 (rounding_mode set)"
    why_zero = "a rounded division (floor or trunc) is flat"
    __slots__ = ("rounding_mode",)
    saves = ("other", "rounding_mode", "self")
    saved_when: ClassVar[dict] = {"self": ("other",), "other": ("self",)}

    def backward(self, g):
        zero = dual.zeros_like(g)
        return (zero if self.needs(0) else None), (zero if self.needs(1) else None)


def _rounded_quotient(a, b, mode):
    """``a / b`` rounded (``mode`` "floor" or "trunc") on the promoted operands."""
    xp = get_array_module(a if hasattr(a, "shape") else b)
    if mode not in ("floor", "trunc"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found '{mode}'")
    check_kernel_dtype(f"div_{mode}_cpu", np.result_type(a, b), "bc")
    if _is_integral(a) and _is_integral(b) and bool(xp.any(xp.asarray(b) == 0)):
        raise RuntimeError("ZeroDivisionError")  # PyTorch's integer division by zero
    # Floats divide by zero to inf and NaN silently, as in PyTorch.
    with silent():
        if mode == "floor":
            return xp.floor_divide(a, b)
        q = a / b
        return xp.trunc(q).astype(q.dtype if not _is_integral(a) or not _is_integral(b)
                                  else xp.result_type(a, b))


def _rounded_div(input, other, mode):
    ta, tb, a, b = binary_operands(input, other)
    out = _rounded_quotient(a, b, mode)
    # Rounded division is piecewise constant: its gradient is zero, like PyTorch's.
    if getattr(out, "dtype", None) is not None and out.dtype.kind in "iub":
        return wrap(out)
    return record(DivBackward2, (ta, tb), out, operands=(a, b), attrs={"rounding_mode": mode})


class NegBackward0(Node):
    rule = "self: -grad"
    __slots__ = ()

    def backward(self, g):
        return (-g,)


def neg(input: Tensor) -> Tensor:
    """``-input``."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return record(NegBackward0, (input,), -input._data)


negative = neg


class PowBackward0(Node):
    """d(a ** c)/da for a constant exponent ``c``."""
    rule = "self: grad * exponent * self**(exponent - 1)"
    why_nonfinite = "a power below 1 at 0: exponent * self**(exponent - 1)"
    fix_nonfinite = "keep the base away from 0 for exponents below 1"

    __slots__ = ("exponent",)
    saves = ("self",)
    saved_attrs: ClassVar[dict] = {"exponent": "exponent"}

    def backward(self, g):
        (a,) = self.saved(g)
        c = self.exponent
        if c == 0:
            return (g * 0.0,)
        if c == 2:
            return (g * 2.0 * dual.conj(a),)
        # complex: g * conj(c a^(c-1)), conjugated after the power (a negative real base lies on
        # the branch cut, where conj(a)^conj(c) is not conj(a^c))
        return (g * dual.conj(c * _power_of(a, c - 1, number_exponent=True)),)


class PowBackward1(Node):
    """d(a ** b) for a tensor exponent: ``b * a**(b-1)`` and ``a**b * log(a)``."""
    rule = "self: grad * other * self**(other - 1); other: grad * result * log(self)"
    why_nonfinite = "a power of 0 or a negative base: log(self)"

    __slots__ = ()
    inputs = ("self", "exponent")
    saves = ("self", "exponent", "result")
    pack_order = (1, 0, 2)

    def backward(self, g):
        # complex: g * conj(derivative), conjugated after the power and the log (a negative real
        # base lies on their branch cut, where conj(a)^conj(b) is not conj(a^b))
        a, b, out = self.saved(g)
        ga = gb = None
        if self.needs(0):
            if dual.data(b).dtype.kind == "b":  # PyTorch's rule computes ``exponent - 1``
                raise RuntimeError(_BOOL_SUBTRACTION)
            # PyTorch's rule: zero where the exponent is 0 (x ** x at 0 has gradient 0, not NaN)
            power = _power_of(a, b - 1, number_exponent=False)
            ga = dual.where(dual.data(b) == 0, 0.0, g * dual.conj(b * power))
        if self.needs(1):
            # At a == 0 and a real b >= 0 the limit of a**b * log(a) is 0 (PyTorch masks it the
            # same way); for b < 0 it is inf * log(0), infinite, silently.
            bd = dual.data(b)
            zero = (dual.data(a) == 0) & (bd.real >= 0) & (bd.imag == 0)
            if dual.data(out).dtype.kind == "c" and dual.data(a).dtype.kind != "c":
                a = a * (1 + 0j)  # a real base to a complex power: log of a negative base is finite
            with silent():
                gb = g * dual.where(zero, 0.0,
                                    dual.conj(out * dual.log(dual.where(zero, 1.0, a))))
        return ga, gb


def pow(input, exponent) -> Tensor:
    """``input ** exponent`` (either may be a tensor)."""
    ta, tb, a, b = binary_operands(input, exponent)
    if ta is not None and tb is not None:
        check_kernel_dtype("pow", a.dtype, "b")  # bool ** bool tensor
    if tb is None and _is_integral(b) and not isinstance(b, bool) and hasattr(a, "dtype") \
            and a.dtype.kind in "iu" and exponent < 0:  # (b may be wrapped to a's dtype)
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    with silent():  # 0 ** -1, (-1) ** 0.5: inf and NaN, silently
        out = _power(a, b, number_exponent=tb is None)
    if tb is None:
        return record(PowBackward0, (ta,), out, attrs={"exponent": b})
    return record(PowBackward1, (ta, tb), out, operands=(a, b))


class PowBackward2(Node):
    """d(c ** b)/db for a Python-number base ``c``: ``c**b * log(c)``; at ``c = 0`` zero where
    the exponent is real and ``>= 0`` (the limit from ``x > 0``), ``result * log(0)`` elsewhere
    (``-inf`` for a negative real exponent, NaN for a complex one), as PyTorch defines it."""
    rule = "exponent: grad * result * log(self) (0 where self == 0 and exponent >= 0)"
    why_nonfinite = "a zero or negative base: log(self)"

    __slots__ = ("base", "log_base")
    inputs = ("exponent",)
    saves = ("self", "exponent", "result")
    saved_attrs: ClassVar[dict] = {"self": "base"}

    def backward(self, g):
        b, out = self.saved(g)
        with silent():  # 0 * log(0) where the mask below replaces it
            grad = g * dual.conj(out * self.log_base)
        if self.base != 0:
            return (grad,)
        bd = dual.data(b)
        return (dual.where((bd.real >= 0) & (bd.imag == 0), 0.0, grad),)


def rpow(input: Tensor, base) -> Tensor:
    """``base ** input`` for a Python-number base (``2 ** x``)."""
    if isinstance(base, Tensor):  # x.__rpow__(y) with a tensor y: y ** x
        return pow(base, input)
    if isinstance(base, bool):  # False ** x is 0 ** x (integer powers as PyTorch's)
        check_kernel_dtype("pow", input._data.dtype, "b")
        base = int(base)
    _, tb, a, b = binary_operands(base, input)
    with silent():
        out = _power(a, b, number_exponent=False)
    return record(PowBackward2, (tb,), out, attrs={"base": base, "log_base": _log_of(
        base, complex_exponent=input._data.dtype.kind == "c")})


def _log_of(base, complex_exponent: bool):
    """``log(base)`` as PyTorch's ``Scalar::log``: complex for a complex base or exponent (``log
    -1`` is ``pi i``), else real (NaN below 0); ``log 0`` is ``-inf``."""
    if isinstance(base, complex) or complex_exponent:
        return cmath.log(base) if base != 0 else complex(-math.inf, 0.0)
    if base > 0:
        return math.log(base)
    return -math.inf if base == 0 else math.nan


def _power_of(a, exponent, number_exponent: bool):
    """``a ** exponent`` in a derivative rule: gradnb's ``pow`` on tensors (under
    ``create_graph``), PyTorch's arithmetic (``_power``) on arrays."""
    if isinstance(a, Tensor) or isinstance(exponent, Tensor):
        return a ** exponent
    with silent():
        return _power(a, exponent, number_exponent)


def _power(a, b, number_exponent: bool):
    """``a ** b`` as PyTorch computes it (``number_exponent``: ``b`` is a Python number)."""
    if isinstance(b, (bool, np.bool_)) and getattr(a, "dtype", None) == np.bool_:
        # a bool tensor to a bool power stays bool (NumPy's is int8): x ** True is x, and
        # x ** False is all True
        return a.copy() if b else get_array_module(a).ones_like(a)
    out = _int_power(a, b)
    if getattr(out, "dtype", None) is not None and out.dtype.kind == "c":
        out = _complex_zero_base(a, b, out, number_exponent)
    return out


def _complex_zero_base(a, b, out, number_exponent: bool):
    """PyTorch's complex power is C's ``cpow``, ``exp(b log a)``: at a zero base that is 0 where
    ``Re b > 0``, ``inf + nan j`` where ``Re b < 0``, and NaN where ``Re b == 0`` (``0 ** 0`` of
    a tensor exponent included; a number exponent 0 gives ones). NumPy's complex power gives NaN
    for every non-real exponent there, and 1 for ``0 ** 0``."""
    xp = get_array_module(out)
    zero = xp.asarray(a) == 0
    if (number_exponent and b == 0) or not zero.any():
        return out
    re = xp.real(b)
    at_zero = xp.where(re > 0, 0j, xp.where(re < 0, complex(math.inf, math.nan),
                                            complex(math.nan, math.nan)))
    return xp.where(zero, at_zero, out).astype(out.dtype, copy=False)


def _int_power(a, b):
    """``a ** b``; integers to negative integer tensor powers as PyTorch computes them (NumPy
    refuses them): 1 stays 1, -1 alternates in sign, every other base gives 0."""
    if hasattr(b, "dtype") and b.dtype.kind in "iu" and _is_integral(a) \
            and not isinstance(a, bool) and b.dtype.kind != "b":
        xp = get_array_module(b)
        negative = b < 0
        if negative.any():
            a = xp.asarray(a).astype(xp.result_type(a, b), copy=False)  # 1 ** int8: int8
            inverse = xp.where(a == 1, 1, xp.where(a == -1, xp.where(b % 2 == 0, 1, -1), 0))
            out = a ** xp.where(negative, 0, b)
            return xp.where(negative, inverse, out).astype(out.dtype, copy=False)
    return a ** b


class ReciprocalBackward0(Node):
    rule = "self: -grad * (result * result).conj()"
    why_nonfinite = "1/x at 0"
    __slots__ = ()
    saves = ("result",)

    def backward(self, g):
        (out,) = self.saved(g)
        out = dual.conj(out)  # complex: g * conj(-1 / z^2)
        return (-g * (out * out),)  # (PyTorch's order of the products: the same roundings)


def reciprocal(input: Tensor) -> Tensor:
    """``1 / input``."""
    data = input._data
    if data.dtype.kind in "iub":
        data = data.astype(_dtype.get_default_dtype().np)
    with silent():  # 1 / 0 is inf, silently, as in PyTorch
        out = 1.0 / data
    return record(ReciprocalBackward0, (input,), out)


def _reflected_sub(self, other):
    return rsub(self, other)


def _reflected_div(self, other):
    # ``2 / x`` is reciprocal-then-multiply, as PyTorch's ``__rdiv__`` (MulBackward0); an
    # infinite reciprocal times a complex number is NaN silently, as in PyTorch.
    with silent():
        return mul(reciprocal(self), other)


def floor_divide(input, other) -> Tensor:
    """``input / other`` rounded down, the values of ``div(input, other, rounding_mode="floor")``.
    PyTorch has no derivative for ``floor_divide`` (``div``'s is zero): its node raises when a
    backward reaches it."""
    return underivable_floor_divide(input, other, "floor_divide")


def underivable_floor_divide(input, other, op: str) -> Tensor:
    """``floor_divide`` recorded with the node of an op without a derivative, named ``op`` (the
    in-place form names itself ``floor_divide_``)."""
    ta, tb, a, b = binary_operands(input, other)
    return record_underivable(op, (ta, tb), _rounded_quotient(a, b, "floor"))


def _reflected_floordiv(self, other):
    _, _, a, b = binary_operands(other, self)
    check_kernel_dtype("div_floor_cpu", np.result_type(a, b), "bc")
    return floor_divide(as_tensor_operand(other, self), self)


TENSOR_METHODS = {
    "__add__": add, "__radd__": reflected("__radd__", lambda self, other: add(other, self)),
    "add": add,
    "__sub__": sub, "__rsub__": reflected("__rsub__", _reflected_sub), "sub": sub,
    "subtract": sub,
    # ``2 * x`` is recorded as ``x * 2`` (tensor first), as PyTorch records it.
    "__mul__": mul, "__rmul__": reflected("__rmul__", mul), "mul": mul, "multiply": mul,
    "__truediv__": div, "__rtruediv__": reflected("__rtruediv__", _reflected_div), "div": div, "divide": div, "true_divide": div,
    "floor_divide": floor_divide, "__floordiv__": floor_divide, "__rfloordiv__": reflected("__rfloordiv__", _reflected_floordiv),
    "__neg__": neg, "neg": neg, "negative": neg, "__pos__": lambda self: self,
    "__pow__": pow, "__rpow__": reflected("__rpow__", rpow), "pow": pow, "reciprocal": reciprocal,
}
