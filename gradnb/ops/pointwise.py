"""More elementwise math: square, xlogy, lerp, atan2, hypot, logaddexp, fmod/remainder, sinc,
fmin/fmax, nan_to_num, inverse hyperbolics, erfc/erfinv.

Ops built from differentiable gradnb ops need no derivative of their own; the others pair a
NumPy forward with a derivative written in gradnb ops (``on_tensors``) right below it. Masked branches use ``where`` on a
"safe" operand so that no NaN or inf from the unused branch reaches a gradient.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module
from .._core.grad_mode import is_grad_enabled
from .._core.graph import Node
from .._core.record import record
from . import arithmetic, dual
from . import elementwise as ew
from ._args import check_kernel_dtype, check_tensor_only, check_tensor_or_number, reflected
from ._common import Tensor, as_tensor_operand, binary_operands
from ._declare import node, record_underivable, unary
from ._refusals import refuse
from .complex import SgnBackward0, complex_sgn
from .op_math import fused_multiply_add, half_precision, to_op_math

__all__ = [
    "acosh", "addcdiv", "addcmul", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "asinh",
    "atan2", "atanh", "copysign", "deg2rad", "erfc", "erfinv", "float_power", "fmax", "fmin",
    "fmod", "frac", "hypot", "ldexp", "lerp", "logaddexp", "logaddexp2", "logit", "nan_to_num", "nextafter",
    "positive", "rad2deg", "remainder", "rsub", "sgn", "sinc", "square", "xlogy",
]


def _float(x: Tensor) -> Tensor:
    """``x`` itself if floating point, else cast to the default float dtype (as PyTorch)."""
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return x
    return x.to(_dtype.get_default_dtype())


def _operand(x, like: Tensor) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor_operand(x, like)


def _pair(a, b):
    """Two operands as tensors of their promoted floating dtype."""
    ta, tb, xa, xb = binary_operands(a, b)
    like = ta if ta is not None else tb
    dt = np.result_type(xa, xb) if hasattr(xa, "dtype") and hasattr(xb, "dtype") else None
    if dt is not None and dt.kind in "iub":
        dt = _dtype.get_default_dtype().np
    a = a if isinstance(a, Tensor) else _number_operand(a, like, dt)
    b = b if isinstance(b, Tensor) else _number_operand(b, like, dt)
    if dt is not None:
        a = a if a._data.dtype == dt else a.to(_dtype.as_dtype(dt))
        b = b if b._data.dtype == dt else b.to(_dtype.as_dtype(dt))
    return _float(a), _float(b)


def _number_operand(x, like: Tensor, dtype) -> Tensor:
    """A number operand of a floating op: in the op's floating ``dtype`` directly (``-1`` beside
    a uint8 tensor is -1.0, not the wrapped 255 an integer op would see)."""
    if dtype is None:
        return as_tensor_operand(x, like)
    return Tensor._make(get_array_module(like._data).asarray(x).astype(dtype))


def _quiet(fn, *arrays):
    with np.errstate(all="ignore"):
        return fn(*arrays)


# -- compositions ----------------------------------------------------------------------------
def square(input: Tensor) -> Tensor:
    """``input ** 2``, as PyTorch composes it (bool squares to int64)."""
    if input.dtype == _dtype.bool:
        input = input.to(_dtype.int64)
    return input ** 2


def positive(input: Tensor) -> Tensor:
    """``input`` itself (refused for bool, as in PyTorch)."""
    if input.dtype == _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sgn(input: Tensor) -> Tensor:
    """The sign: ``sign`` for real tensors, ``z / |z|`` (0 at 0) for complex ones (both record
    PyTorch's SgnBackward0)."""
    if input._data.dtype.kind == "c":
        return complex_sgn(input)
    return record(SgnBackward0, (input,), ew._sign_array(input._data))


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    check_tensor_or_number("rsub", input, other)
    return arithmetic.rsub(input, other, alpha=alpha)


class XlogyBackward0(Node):
    """``xlogy(self, other)`` of two tensors; ``log1p`` set: ``special.xlog1py``."""
    rule = "self: grad * at::xlogy((self != 0), other); other: grad * self / other"
    __slots__ = ()
    on_tensors = True
    saves = ("other", "self")
    log1p = False

    def backward(self, g):
        y, x = self.saved(g)
        return (self._dself(g, x, y) if self.needs(0) else None,
                self._dother(g, x, y) if self.needs(1) else None)

    def _dself(self, g, x, y):
        # xlogy(x != 0, y): log(y) where x != 0, 0 elsewhere unless y is NaN
        return g * ew.where((x != 0) | ew.isnan(y), ew.log1p(y) if self.log1p else ew.log(y), 0.0)

    def _dother(self, g, x, y):
        return g * x / (y + 1 if self.log1p else y)


class XlogyBackward1(XlogyBackward0):
    """``xlogy(number, tensor)``: only ``other`` has a gradient."""
    rule = "other: grad * self / other"
    __slots__ = ("self_value",)
    inputs = ("other",)
    saves = ("other", "self")
    saved_attrs: ClassVar[dict] = {"self": "self_value"}

    def backward(self, g):
        (y,) = self.saved(g)
        return (self._dother(g, self.self_value, y),)


class XlogyBackward2(XlogyBackward0):
    """``xlogy(tensor, number)``: only ``self`` has a gradient."""
    rule = "self: grad * at::xlogy((self != 0), other)"
    __slots__ = ("other",)
    inputs = ("self",)
    saves = ("other", "self")

    def backward(self, g):
        (x,) = self.saved(g)
        y = as_tensor_operand(self.other, x)
        return (self._dself(g, x, y),)


class SpecialXlog1PyBackward0(XlogyBackward0):
    rule = "self: grad * at::xlog1py((self != 0), other); other: grad * self / (other + 1)"
    __slots__ = ()
    log1p = True


class SpecialXlog1PyBackward1(XlogyBackward1):
    rule = "other: grad * self / (other + 1)"
    __slots__ = ()
    log1p = True


class SpecialXlog1PyBackward2(XlogyBackward2):
    rule = "self: grad * at::xlog1py((self != 0), other)"
    __slots__ = ()
    log1p = True


def _xlogy(input, other, log1p: bool, classes):
    x, y = _pair(input, other)
    xd, yd = x._data, y._data
    refuse("xlog1py" if log1p else "xlogy", xd.dtype)
    with np.errstate(all="ignore"):
        out = xd * (np.log1p(yd) if log1p else np.log(yd))
        out = np.where((xd == 0) & ~np.isnan(yd), 0.0, out).astype(out.dtype, copy=False)
    both, number_self, number_other = classes
    if not isinstance(input, Tensor):
        return record(number_self, (y,), out, attrs={"self_value": input})
    if not isinstance(other, Tensor):
        return record(number_other, (x,), out, attrs={"other": other})
    return record(both, (x, y), out)


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return _xlogy(input, other, False, (XlogyBackward0, XlogyBackward1, XlogyBackward2))


def xlog1py(input, other) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return _xlogy(input, other, True, (SpecialXlog1PyBackward0, SpecialXlog1PyBackward1,
                                       SpecialXlog1PyBackward2))


class LogitBackward0(Node):
    """PyTorch's ``logit_backward``: NaN outside ``[0, 1]`` without ``eps``, 0 outside
    ``[eps, 1 - eps]`` with it."""
    rule = "self: logit_backward(grad, self, eps): grad / (self * (1 - self)) inside the bounds"
    __slots__ = ("eps",)
    on_tensors = True
    inputs = ("self",)
    saves = ("eps", "self")

    def backward(self, g):
        (x,) = self.saved(g)
        d = g / (x * (1 - x))
        if self.eps is None:
            return (ew.where((x < 0) | (x > 1), math.nan, d),)
        return (ew.where((x < self.eps) | (x > 1 - self.eps), 0.0, d),)


def logit(input: Tensor, eps=None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    refuse("logit", input._data)
    x = _float(input)
    p = x._data
    with np.errstate(all="ignore"):
        if eps is not None:
            p = np.clip(p, eps, 1 - eps)
        out = np.log(p / (1 - p)).astype(x._data.dtype, copy=False)
    return record(LogitBackward0, (x,), out, attrs={"eps": eps})


class LerpBackward0(Node):
    """``lerp`` with a number weight."""
    rule = "self: grad * (1 - weight); end: grad * weight"
    __slots__ = ("weight",)
    inputs = ("self", "end")
    saves = ("weight",)

    def backward(self, g):
        w = dual.conj(self.weight)
        return g * (1 - w), g * w


class LerpBackward1(Node):
    """``lerp`` with a tensor weight."""
    rule = "self: grad * (1 - weight); end: grad * weight; weight: grad * (end - self)"
    __slots__ = ()
    inputs = ("self", "end", "weight")
    saves = ("end", "self", "weight")
    saved_when: ClassVar[dict] = {"end": ("weight",), "self": ("weight",),
                                  "weight": ("self", "end")}

    def backward(self, g):
        e, x, w = (None if v is None else dual.conj(v) for v in self.saved(g))
        return (g * (1 - w) if self.needs(0) else None, g * w if self.needs(1) else None,
                g * (e - x) if self.needs(2) else None)


def _lerp_array(a, b, w):
    """PyTorch's two-sided formula: exact at both ends (weight 0 gives a, 1 gives b). Half
    precision in float32 op math, each side one fused step (op_math.py)."""
    with np.errstate(all="ignore"):
        if half_precision(a, b) and (not hasattr(w, "dtype") or half_precision(a, w)):
            x, y = to_op_math(a), to_op_math(b)
            w = to_op_math(w) if hasattr(w, "dtype") else np.float32(w)
            diff = y - x
            return np.where(np.abs(w) < 0.5, fused_multiply_add(w, diff, x),
                            fused_multiply_add(-diff, 1 - w, y)).astype(a.dtype)
        return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def lerp(input: Tensor, end, weight) -> Tensor:
    """``input + weight * (end - input)``."""
    check_tensor_only("lerp", input, end)
    a, b = input._data, end._data
    if isinstance(weight, Tensor):
        out = _lerp_array(a, b, weight._data).astype(np.result_type(a, b), copy=False)
        return record(LerpBackward1, (input, end, weight), out)
    out = _lerp_array(a, b, weight).astype(np.result_type(a, b), copy=False)
    return record(LerpBackward0, (input, end), out, attrs={"weight": weight})


class FracBackward0(Node):
    rule = "self: grad"
    __slots__ = ()

    def backward(self, g):
        return (g,)


def frac(input: Tensor) -> Tensor:
    """The fractional part, ``input - trunc(input)`` (gradient 1)."""
    d = input._data
    check_kernel_dtype("frac_cpu", d.dtype, "biuc")
    return record(FracBackward0, (input,), _quiet(lambda a: a - np.trunc(a), d))


_DEG, _RAD = math.pi / 180.0, 180.0 / math.pi


def _angle_units(op: str, factor: float):
    def forward(input):
        refuse(op, input._data)
        return _float(input)._data * factor

    return forward


deg2rad, Deg2RadBackward0 = unary(
    "deg2rad", "Deg2RadBackward0", _angle_units("deg2rad", _DEG),
    lambda g: g * _DEG, saves=None, rule="self: grad * M_PI / 180")
rad2deg, Rad2DegBackward0 = unary(
    "rad2deg", "Rad2DegBackward0", _angle_units("rad2deg", _RAD),
    lambda g: g * _RAD, saves=None, rule="self: grad * 180 / M_PI")


def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` computed in double precision (complex128 for complex)."""
    def cast(x):
        if not isinstance(x, Tensor):
            return x
        return x.to(_dtype.complex128 if x.dtype.is_complex else _dtype.float64)

    base, exp = cast(input), cast(exponent)
    if not isinstance(base, Tensor):
        base = as_tensor_operand(float(base), exp)
    return base ** exp


class FmaxBackward0(Node):
    """The gradient goes to the input picked (``self`` on ties and where ``other`` is NaN)."""
    rule = ("self: grad where (self >= other or other is NaN), else 0; other: grad where not "
            "that, else 0")
    __slots__ = ()
    saves = ("other", "self")
    pick = np.greater_equal

    def backward(self, g):
        b, a = self.saved(g)
        ad, bd = dual.data(a), dual.data(b)
        take_a = self.pick(ad, bd) | dual.xp_of(bd).isnan(bd)
        return dual.where(take_a, g, 0.0), dual.where(take_a, 0.0, g)


class FminBackward0(FmaxBackward0):
    rule = ("self: grad where (self <= other or other is NaN), else 0; other: grad where not "
            "that, else 0")
    __slots__ = ()
    pick = np.less_equal


def _fextremum(cls, name, input, other):
    check_tensor_only(name, input, other)
    ta, tb, a, b = binary_operands(input, other)
    refuse(name, a.dtype)
    return record(cls, (ta, tb), getattr(get_array_module(a), name)(a, b))


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN (ties go to ``input``)."""
    return _fextremum(FmaxBackward0, "fmax", input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN (ties go to ``input``)."""
    return _fextremum(FminBackward0, "fmin", input, other)


class HypotBackward0(Node):
    rule = "self: grad * self / result; other: grad * other / result"
    __slots__ = ()
    saves = ("other", "self", "result")

    def backward(self, g):
        b, a, out = map(dual.conj, self.saved(g))
        return g * a / out, g * b / out


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)``."""
    check_tensor_only("hypot", input, other)
    ta, tb, a, b = binary_operands(input, other)
    check_kernel_dtype("hypot_cpu", a.dtype, "biuc")
    return record(HypotBackward0, (ta, tb), _quiet(np.hypot, a, b))


class NanToNumBackward0(Node):
    rule = "self: grad * at::isfinite(self)"
    why_zero = "nan_to_num: every input was NaN or infinite"
    __slots__ = ()
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        xd = dual.data(x)
        return (dual.where(dual.xp_of(xd).isfinite(xd), g, 0.0),)


def nan_to_num(input: Tensor, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """NaN, +inf and -inf replaced by finite numbers (the dtype's extremes by default)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        return input.clone()
    if input.dtype.is_complex and input.requires_grad and is_grad_enabled():
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs "
                           "with complex dtype.")
    d = input._data
    info = np.finfo(d.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = get_array_module(d).nan_to_num(d, nan=nan, posinf=posinf, neginf=neginf)
    return record(NanToNumBackward0, (input,), out)


class LdexpBackward0(Node):
    rule = "self: grad * pow(2, other); other: grad * result * ln(2)"
    __slots__ = ()
    saves = ("other", "result")

    def backward(self, g):
        b, out = map(dual.conj, self.saved(g))
        return g * 2.0 ** b, g * out * math.log(2.0)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other``."""
    check_tensor_only("ldexp", input, other)
    a, b = _float(input), _operand(other, input)
    with np.errstate(all="ignore"):
        out = a._data * np.exp2(_float(b)._data)
    return record(LdexpBackward0, (a, b), out)


class AddcmulBackward0(Node):
    rule = ("self: grad; tensor1: grad * (tensor2 * value).conj(); "
            "tensor2: grad * (tensor1 * value).conj()")
    __slots__ = ("value",)
    inputs = ("self", "tensor1", "tensor2")
    saves = ("tensor1", "tensor2", "value")
    saved_when: ClassVar[dict] = {"tensor1": ("tensor2",), "tensor2": ("tensor1",)}

    def backward(self, g):
        t1, t2 = self.saved(g)
        v = self.value
        return (g if self.needs(0) else None,
                g * dual.conj(t2 * v) if self.needs(1) else None,
                g * dual.conj(t1 * v) if self.needs(2) else None)


class AddcdivBackward0(Node):
    rule = ("self: grad; tensor1: grad * (value / tensor2).conj(); "
            "tensor2: -grad * (value * tensor1 / (tensor2 * tensor2)).conj()")
    __slots__ = ("value",)
    inputs = ("self", "tensor1", "tensor2")
    saves = ("tensor1", "tensor2", "value")
    saved_when: ClassVar[dict] = {"tensor1": ("tensor2",)}

    def backward(self, g):
        t1, t2 = self.saved(g)
        v = self.value
        return (g if self.needs(0) else None,
                g * dual.conj(v / t2) if self.needs(1) else None,
                -g * dual.conj(v * t1 / (t2 * t2)) if self.needs(2) else None)


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    a, b, c = input._data, tensor1._data, tensor2._data
    if half_precision(a, b, c) and not isinstance(value, complex):
        # PyTorch's kernel: ``value * t1`` in float32, then ``* t2 + self`` one fused step
        with np.errstate(all="ignore"):  # (an overflow to inf is silent, as in PyTorch)
            out = fused_multiply_add(np.float32(value) * to_op_math(b), to_op_math(c),
                                     to_op_math(a)).astype(a.dtype)
    else:
        out = a + value * b * c
    return record(AddcmulBackward0, (input, tensor1, tensor2), out, attrs={"value": value})


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``."""
    if tensor1.dtype.is_floating_point is False and tensor2.dtype.is_floating_point is False:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           "release addcdiv will perform a true division of tensor1 and tensor2. "
                           "The historic addcdiv behavior can be implemented as (input + value * "
                           "gradnb.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs "
                           "and as (input + value * tensor1 / tensor2) for float inputs. The "
                           "future addcdiv behavior is just the latter implementation: (input + "
                           "value * tensor1 / tensor2), for all dtypes.")
    a, b, c = input._data, tensor1._data, tensor2._data
    with np.errstate(all="ignore"):  # division by 0 gives inf and NaN silently, as in PyTorch
        if half_precision(a, b, c) and not isinstance(value, complex):  # float32 op math
            out = (to_op_math(a) + np.float32(value) * to_op_math(b) / to_op_math(c)).astype(
                a.dtype)
        else:
            out = a + value * b / c
    return record(AddcdivBackward0, (input, tensor1, tensor2), out, attrs={"value": value})


# -- rules -----------------------------------------------------------------------------------
class Atan2Backward0(Node):
    rule = "self: grad * other / (self**2 + other**2); other: -grad * self / (self**2 + other**2)"
    __slots__ = ()
    on_tensors = True
    saves = ("other", "self")

    def backward(self, g):
        x, y = self.saved(g)
        r2 = x * x + y * y
        return g * x / r2, -g * y / r2


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of ``(other, input)``, i.e. ``atan(input / other)`` in the right quadrant."""
    check_tensor_only("atan2", input, other)
    y, x = _pair(input, other)
    check_kernel_dtype("atan2_cpu", y._data.dtype, "c")
    return record(Atan2Backward0, (y, x), _quiet(np.arctan2, y._data, x._data))


class LogaddexpBackward0(Node):
    rule = "self: grad * exp(self - result); other: grad * exp(other - result)"
    __slots__ = ()
    on_tensors = True
    saves = ("other", "self")
    base2 = False

    def backward(self, g):
        # PyTorch's ``g / (1 + exp(other - self))`` (base 2 for logaddexp2), literally: where an
        # operand is infinite its second derivative is NaN there, as torch's is
        b, a = self.saved(g)
        power = ew.exp2 if self.base2 else ew.exp
        wa = 1 / (1 + power(b - a))
        wb = 1 / (1 + power(a - b))
        if wa.is_complex():  # g * conj(derivative), as for every holomorphic op
            wa, wb = wa.conj(), wb.conj()
        return g * ew.where(a == b, 0.5, wa), g * ew.where(a == b, 0.5, wb)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow."""
    check_tensor_only("logaddexp", input, other)
    refuse("logaddexp", binary_operands(input, other)[2].dtype)
    a, b = _pair(input, other)
    if a._data.dtype.kind == "c":
        return record(LogaddexpBackward0, (a, b), complex_logaddexp(a._data, b._data))
    return record(LogaddexpBackward0, (a, b), _quiet(np.logaddexp, a._data, b._data))


def complex_logaddexp(x, y):
    """PyTorch's complex ``log(exp(x) + exp(y))``: ``hi + log1p(exp(lo - hi))`` with ``lo`` and
    ``hi`` ordered by real part; NaN (both parts) where either is NaN; where both real parts
    are the same infinity, ``lo`` itself for ``-inf`` and ``log(exp(lo) + exp(hi))`` for
    ``+inf``."""
    x, y = np.broadcast_arrays(x, y)
    x_first = x.real < y.real
    lo, hi = np.where(x_first, x, y), np.where(x_first, y, x)
    with np.errstate(all="ignore"):
        out = np.log1p(np.exp(lo - hi)) + hi
        infinite = ~np.isfinite(lo.real) & (lo.real == hi.real)
        if infinite.any():
            out = np.where(infinite, np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi))),
                           out)
    out = np.where(np.isnan(x) | np.isnan(y), complex(math.nan, math.nan), out)
    return out.astype(x.dtype, copy=False)


class Logaddexp2Backward0(LogaddexpBackward0):
    rule = "self: grad * 2**(self - result); other: grad * 2**(other - result)"
    __slots__ = ()
    base2 = True


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow."""
    check_tensor_only("logaddexp2", input, other)
    refuse("logaddexp2", binary_operands(input, other)[2].dtype)
    a, b = _pair(input, other)
    return record(Logaddexp2Backward0, (a, b), _quiet(np.logaddexp2, a._data, b._data))


class CopysignBackward0(Node):
    rule = "self: grad * sign(self) * sign(result); other: zeros"
    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        a, out = self.saved(g)
        ratio = ew.where(a == 0, 0.0, out / ew.where(a == 0, 1.0, a))
        return g * ratio, None


class CopysignBackward1(CopysignBackward0):
    """``copysign(tensor, number)``: one input."""
    rule = "self: grad * sign(self) * sign(result)"
    __slots__ = ()
    inputs = ("self",)
    saves = ("self", "result")

    def backward(self, g):
        return super().backward(g)[:1]


def copysign(input: Tensor, other) -> Tensor:
    """``|input|`` with the sign of ``other``."""
    check_tensor_or_number("copysign", input, other)
    a, b = _pair(input, other)
    check_kernel_dtype("copysign_cpu", a._data.dtype, "c")
    if not isinstance(other, Tensor):
        return record(CopysignBackward1, (a,), np.copysign(a._data, b._data))
    return record(CopysignBackward0, (a, b), np.copysign(a._data, b._data))


class NextafterBackward0(Node):
    """One step to the next float moves by a negligible amount: ``input`` passes ``g`` through
    and ``other`` gets nothing, as in PyTorch."""
    rule = "self: grad; other: zeros"

    __slots__ = ()
    on_tensors = True
    saves = ("other", "self")  # unread, but PyTorch saves them

    def backward(self, g):
        return g, None


def nextafter(input: Tensor, other) -> Tensor:
    """The next floating-point value after ``input`` towards ``other``."""
    refuse("nextafter", binary_operands(input, other)[2].dtype)
    a, b = _pair(input, other)
    return record(NextafterBackward0, (a, b), np.nextafter(a._data, b._data))


class FmodBackward1(Node):
    """d/da = 1; d/db = -(a / b rounded toward zero)."""
    rule = "self: grad; other: -grad * self.div(other, rounding_mode='trunc')"

    __slots__ = ()
    on_tensors = True
    saves = ("other", "self")
    floor = False

    def backward(self, g):
        b, a = self.saved(g)
        q = a / b
        q = (ew.floor(q) if self.floor else ew.trunc(q)).detach()
        return g, -g * q


class RemainderBackward1(FmodBackward1):
    """d/da = 1; d/db = -(a / b rounded down)."""
    rule = "self: grad; other: -grad * self.div(other, rounding_mode='floor')"
    __slots__ = ()
    floor = True


FmodBackward0 = node("FmodBackward0", lambda g: g, rule="self: grad")
RemainderBackward0 = node("RemainderBackward0", lambda g: g, rule="self: grad")


def _modulo(a, b, floor):
    ta, tb, xa, xb = binary_operands(a, b)
    like = ta if ta is not None else tb
    scalar_other = not isinstance(b, Tensor)
    ta = ta if ta is not None else as_tensor_operand(xa, like)
    tb = tb if tb is not None else as_tensor_operand(xb, like)
    xp = get_array_module(ta._data)
    # xa, xb carry PyTorch's promotion (a 0-d tensor does not widen a dimensioned one)
    dtype = np.result_type(xa, xb)
    check_kernel_dtype("remainder_cpu" if floor else "fmod_cpu", dtype, "bc")
    integral = dtype.kind in "iub"
    if integral and np.any(xb == 0):
        raise RuntimeError("ZeroDivisionError")
    fn = xp.remainder if floor else xp.fmod
    out = _quiet(fn, xa, xb)
    if integral:
        return record(FmodBackward1, (), out)
    if not isinstance(a, Tensor):  # ``2 % x``: PyTorch has no derivative for remainder.Scalar_Tensor
        return record_underivable("remainder", (tb,), out)
    if scalar_other:  # PyTorch's Scalar overload: one input, nothing saved
        return record(RemainderBackward0 if floor else FmodBackward0, (ta,), out)
    return record(RemainderBackward1 if floor else FmodBackward1, (ta, tb), out)


def fmod(input, other) -> Tensor:
    """The remainder of ``input / other`` rounded toward zero (C's ``fmod``)."""
    check_tensor_or_number("fmod", input, other)
    return _modulo(input, other, floor=False)


def remainder(input, other) -> Tensor:
    """The remainder with the sign of ``other`` (Python's ``%``)."""
    return _modulo(input, other, floor=True)


class SincBackward0(Node):
    """PyTorch's ``sinc_backward``: ``g (pi x cos(pi x) - sin(pi x)) / (pi x^2)``, zero where
    ``pi x^2`` is; its own derivative there is NaN (``0 * inf``), as in PyTorch."""
    rule = "self: grad * (cos(pi x) - sinc(x)) / x (0 at x = 0)"

    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        x = dual.conj(x)  # complex: g * conj(sinc'(x)), and sinc'(conj x) = conj(sinc'(x))
        px = x * math.pi
        den = x * x * math.pi
        out = g * (px * ew.cos(px) - ew.sin(px)) / den
        return (ew.where(den == 0, 0.0, out),)


def sinc(input: Tensor) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = _float(input)
    return record(SincBackward0, (x,), _quiet(np.sinc, x._data))


def _inverse_hyperbolic(op, name, ufunc, formula, rule):
    return unary(op, name, lambda input: _quiet(ufunc, _float(input)._data), formula,
                 saves="self", rule=rule, module=__name__)


asinh, AsinhBackward0 = _inverse_hyperbolic(
    "asinh", "AsinhBackward0", np.arcsinh, lambda g, x: g / dual.sqrt(x * x + 1),
    "self: grad * (self.pow(2) + 1).rsqrt().conj()")
acosh, AcoshBackward0 = _inverse_hyperbolic(
    # sqrt(x - 1) sqrt(x + 1), not sqrt(x^2 - 1): the same for real x, and the right branch for
    # complex x (PyTorch's formula)
    "acosh", "AcoshBackward0", np.arccosh,
    lambda g, x: g / (dual.sqrt(x - 1) * dual.sqrt(x + 1)),
    "self: grad * ((self - 1).rsqrt() * (self + 1).rsqrt()).conj()")
atanh, AtanhBackward0 = _inverse_hyperbolic(
    "atanh", "AtanhBackward0", np.arctanh, lambda g, x: g / (1 - x * x),
    "self: grad * 1 / (1 - self.pow(2)).conj()")
arcsinh, arccosh, arctanh = asinh, acosh, atanh
arcsin, arccos, arctan, arctan2 = ew.asin, ew.acos, ew.atan, atan2


class ErfcBackward0(Node):
    rule = "self: -grad * 2 / sqrt(pi) * exp(-self**2)"
    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        return (g * (-2.0 / math.sqrt(math.pi)) * ew.exp(-(x * x)),)


def erfc(input: Tensor) -> Tensor:
    """``1 - erf(input)``, accurate where it is tiny."""
    refuse("erfc", input._data)
    x = _float(input)
    d = x._data
    out = np.vectorize(math.erfc, otypes=[d.dtype])(d) if d.size else d.copy()
    return record(ErfcBackward0, (x,), out)


class ErfinvBackward0(Node):
    rule = "self: grad * sqrt(pi) / 2 * exp(erfinv(self)**2)"
    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        y = erfinv(x)
        return (g * (math.sqrt(math.pi) / 2) * ew.exp(y * y),)


def _erfinv_array(p):
    """Inverse error function: Giles' single-precision approximation refined by Newton steps on
    ``math.erf`` to double precision."""
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - p) * (1.0 + p))
        small = w < 5.0
        ws = w - 2.5
        wl = np.sqrt(w) - 3.0
        cs = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
        cl = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]
        ps = np.full_like(p, cs[0])
        pl = np.full_like(p, cl[0])
        for c in cs[1:]:
            ps = ps * ws + c
        for c in cl[1:]:
            pl = pl * wl + c
        x = np.where(small, ps, pl) * p
        erf = np.vectorize(math.erf, otypes=[np.float64])
        for _ in range(3):
            x = x - (erf(x) - p) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
        x = np.where(p == 1, np.inf, np.where(p == -1, -np.inf, x))
        return np.where(np.abs(p) > 1, np.nan, x)


def erfinv(input: Tensor) -> Tensor:
    """The inverse of ``erf`` on ``[-1, 1]``."""
    refuse("erfinv", input._data)
    x = _float(input)
    d = x._data
    out = _erfinv_array(d.astype(np.float64)).astype(d.dtype) if d.size else d.copy()
    return record(ErfinvBackward0, (x,), out)


TENSOR_METHODS = {
    name: globals()[name] for name in [
        "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
        "asinh", "atan2", "atanh", "copysign", "deg2rad", "erfc", "erfinv", "float_power",
        "fmax", "fmin", "fmod", "frac", "hypot", "ldexp", "lerp", "logaddexp", "logaddexp2",
        "logit", "nan_to_num", "nextafter", "positive", "rad2deg", "remainder", "sgn", "sinc", "square",
        "xlogy",
    ]
}
TENSOR_METHODS["__mod__"] = remainder
TENSOR_METHODS["__rmod__"] = reflected("__rmod__", lambda self, other: remainder(other, self))
