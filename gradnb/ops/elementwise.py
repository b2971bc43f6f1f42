"""Elementwise math: exp/log/trig/activations, clamp, maximum/minimum, where, comparisons.

Each derivative sits right below its function. Unary rules save either the input or the output
(whichever the derivative is cheaper in), never both. For complex inputs PyTorch's gradient of a
holomorphic ``f`` is ``g * conj(f'(z))``: those rules conjugate what they saved first (a no-op
for real tensors).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module, silent
from .._core.graph import Node, donated
from .._core.record import record, wrap
from . import dual
from ._args import (
    check_kernel_dtype,
    check_tensor_only,
    converted_number,
    cpp_type_name,
    number_limits,
    reflected,
    scalar_type_name,
    type_name,
)
from ._common import (
    Tensor,
    binary_operands,
    check_broadcast,
    check_fits_output,
    result_type_of,
)
from ._declare import node, unary
from ._refusals import refuse
from .complex import complex_sgn, sgn_array

__all__ = [
    "abs",
    "absolute",
    "acos",
    "allclose",
    "asin",
    "atan",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_right_shift",
    "ceil",
    "clamp",
    "clamp_max",
    "clamp_min",
    "clip",
    "cos",
    "cosh",
    "eq",
    "equal",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "fix",
    "floor",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "heaviside",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "le",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "maximum",
    "minimum",
    "ne",
    "not_equal",
    "relu",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    "where",
]


def _float_data(x: Tensor):
    """The input as floating point: float-only functions promote integers like PyTorch."""
    d = x._data
    if d.dtype.kind in "iub":
        return d.astype(_dtype.get_default_dtype().np)
    return d


# Functions bounded and smooth on every float (NaN and inf included): they raise no
# floating-point error, so they skip ``silent()``, which costs about as much as the ufunc on
# a small array.
_NEVER_WARN = frozenset((np.tanh, np.arctan))


def _float_math(x: Tensor, ufunc):
    """``ufunc`` (a NumPy ufunc) on ``x`` promoted to float; CuPy arrays use CuPy's namesake.
    The NumPy float case, by far the most common, goes straight to the ufunc."""
    d = x._data
    if type(d) is np.ndarray and d.dtype.kind == "f":
        if ufunc in _NEVER_WARN:
            return ufunc(d)
        with silent():  # log(0), exp(1000): PyTorch is silent
            return ufunc(d)
    with silent():
        return getattr(get_array_module(d), ufunc.__name__)(_float_data(x))


def _xp(x: Tensor):
    return get_array_module(x._data)


def _ufunc_row(op, name, ufunc, formula, **declared):
    """One row: ``op`` is ``ufunc`` on the input promoted to float, recorded with ``name``."""
    return unary(op, name, ufunc, formula, apply=_float_math, module=__name__, **declared)


def _rsqrt_array(input: Tensor):
    with np.errstate(divide="ignore"):  # rsqrt(0) is inf, silently
        return 1.0 / _float_math(input, np.sqrt)


def _sigmoid_array(input: Tensor):
    """``1 / (1 + exp(-x))`` without overflow: ``e^x / (1 + e^x)`` for ``x < 0``."""
    d = _float_data(input)
    xp = _xp(input)
    if d.dtype.kind == "c":  # no overflow-free split in the complex plane: the definition
        return 1.0 / (1.0 + xp.exp(-d))
    e = xp.exp(-xp.abs(d))  # exp of a non-positive number never overflows
    return xp.where(d >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(d.dtype, copy=False)


def _erf_array(input: Tensor):
    refuse("erf", input._data)
    d = _float_data(input)
    return np.vectorize(math.erf, otypes=[d.dtype])(d) if d.size else d.copy()


_LOG2, _LOG10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# One row per op: name, PyTorch's node, forward, what the formula reads, the formula g -> grad.
exp, ExpBackward0 = _ufunc_row(
    "exp", "ExpBackward0", np.exp, lambda g, y: g * y, saves="result",
    rule="self: grad * result", doc="``e ** input``.")
exp2, Exp2Backward0 = _ufunc_row(
    "exp2", "Exp2Backward0", np.exp2, lambda g, y: g * y * _LOG2, saves="result",
    rule="self: grad * result * log(2)")
expm1, Expm1Backward0 = _ufunc_row(
    "expm1", "Expm1Backward0", np.expm1, lambda g, y: g * (y + 1), saves="result",
    rule="self: grad * (result + 1)")
log, LogBackward0 = _ufunc_row(
    "log", "LogBackward0", np.log, lambda g, x: g / x, saves="self",
    rule="self: grad / self", doc="Natural logarithm.",
    why_nonfinite="log of 0: grad / self",
    fix_nonfinite="keep the input away from 0: log(x + eps), or x.clamp_min(eps).log()")
log2, Log2Backward0 = _ufunc_row(
    "log2", "Log2Backward0", np.log2, lambda g, x: g / (x * _LOG2), saves="self",
    rule="self: grad / (self * log(2))", why_nonfinite="log2 of 0: grad / (self * log 2)")
log10, Log10Backward0 = _ufunc_row(
    "log10", "Log10Backward0", np.log10, lambda g, x: g / (x * _LOG10), saves="self",
    rule="self: grad / (self * log(10))", why_nonfinite="log10 of 0: grad / (self * log 10)")
log1p, Log1PBackward0 = _ufunc_row(
    "log1p", "Log1PBackward0", np.log1p, lambda g, x: g / (x + 1), saves="self",
    rule="self: grad / (1 + self)", why_nonfinite="log1p at -1: grad / (1 + self)")
sqrt, SqrtBackward0 = _ufunc_row(
    "sqrt", "SqrtBackward0", np.sqrt, lambda g, y: g / (2 * y), saves="result",
    rule="self: grad / (2 * result)", why_nonfinite="sqrt at 0: grad / (2 * result)",
    fix_nonfinite="keep the input away from 0: sqrt(x + eps)")
rsqrt, RsqrtBackward0 = unary(
    "rsqrt", "RsqrtBackward0", _rsqrt_array, lambda g, y: g * -0.5 * y * y * y, saves="result",
    rule="self: -grad * result**3 / 2", why_nonfinite="rsqrt at 0")
sin, SinBackward0 = _ufunc_row(
    "sin", "SinBackward0", np.sin, lambda g, x: g * dual.cos(x), saves="self",
    rule="self: grad * cos(self)")
cos, CosBackward0 = _ufunc_row(
    "cos", "CosBackward0", np.cos, lambda g, x: -g * dual.sin(x), saves="self",
    rule="self: -grad * sin(self)")
tan, TanBackward0 = _ufunc_row(
    "tan", "TanBackward0", np.tan, lambda g, y: g * (1 + y * y), saves="result",
    rule="self: grad * (1 + result**2)")
tanh, TanhBackward0 = _ufunc_row(
    "tanh", "TanhBackward0", np.tanh, lambda g, y: g * (1 - y * y), saves="result",
    rule="self: grad * (1 - result**2)")
sinh, SinhBackward0 = _ufunc_row(
    "sinh", "SinhBackward0", np.sinh, lambda g, x: g * (dual.exp(x) + dual.exp(-x)) * 0.5,
    saves="self", rule="self: grad * cosh(self)")
cosh, CoshBackward0 = _ufunc_row(
    "cosh", "CoshBackward0", np.cosh, lambda g, x: g * (dual.exp(x) - dual.exp(-x)) * 0.5,
    saves="self", rule="self: grad * sinh(self)")
asin, AsinBackward0 = _ufunc_row(
    "asin", "AsinBackward0", np.arcsin, lambda g, x: g / dual.sqrt(1 - x * x), saves="self",
    rule="self: grad / sqrt(1 - self**2)", why_nonfinite="asin at |x| = 1: 1 / sqrt(1 - x**2)")
acos, AcosBackward0 = _ufunc_row(
    "acos", "AcosBackward0", np.arccos, lambda g, x: -g / dual.sqrt(1 - x * x), saves="self",
    rule="self: -grad / sqrt(1 - self**2)", why_nonfinite="acos at |x| = 1: 1 / sqrt(1 - x**2)")
atan, AtanBackward0 = _ufunc_row(
    "atan", "AtanBackward0", np.arctan, lambda g, x: g / (1 + x * x), saves="self",
    rule="self: grad / (1 + self**2)")
sigmoid, SigmoidBackward0 = unary(
    "sigmoid", "SigmoidBackward0", _sigmoid_array, lambda g, y: g * y * (1 - y),
    saves="result", rule="self: grad * result * (1 - result)",
    doc="``1 / (1 + exp(-x))``, computed without overflow for large ``|x|``.")
erf, ErfBackward0 = unary(
    "erf", "ErfBackward0", _erf_array, lambda g, x: g * _TWO_OVER_SQRT_PI * dual.exp(-(x * x)),
    saves="self", conj=False, rule="self: grad * 2 / sqrt(pi) * exp(-self**2)")


class ReluBackward0(Node):
    rule = "self: grad where result != 0 (a NaN result passes it), else 0"
    why_zero = "a dead ReLU: every input was <= 0"
    __slots__ = ()
    saves = ("result",)

    def backward(self, g):
        (y,) = self.saved(g)
        # The output is >= 0 or NaN, so ``y != 0`` is PyTorch's ``not (y <= 0)``: a NaN output
        # passes its gradient on, as ``threshold_backward`` does.
        if type(g) is np.ndarray and g.shape == y.shape:
            dtype = g.dtype
            bits = _SAME_SIZE_INT.get(dtype) if dtype == y.dtype else None
            if bits is not None:
                # ``where(y != 0, g, 0)`` on bit patterns: a float's bits times a 0/1 mask are
                # its bits or +0.0, exactly, without ``where``'s unpredictable branches
                # (several times faster on the random masks ReLU makes). Into ``g`` itself
                # when the pass gave it to this rule alone, as the hand-written ``g *= y > 0``.
                g_bits = g.view(bits)
                if donated(g):
                    np.multiply(g_bits, y != 0, out=g_bits)
                    return (g,)
                return (np.multiply(g_bits, y != 0, dtype=bits).view(dtype),)
        # where, not a product with the mask: 0 * inf would be NaN where PyTorch gives 0
        return (dual.where(dual.data(y) != 0, g, 0),)


# The signed integer as wide as each real float, for ReluBackward0's bitwise select.
_SAME_SIZE_INT = {np.dtype(np.float16): np.int16, np.dtype(np.float32): np.int32,
                  np.dtype(np.float64): np.int64}


def relu(input: Tensor) -> Tensor:
    """``max(x, 0)``; the gradient at 0 is 0, as in PyTorch."""
    d = input._data
    if type(d) is np.ndarray and d.dtype in _SAME_SIZE_INT:  # a float keeps its dtype
        return record(ReluBackward0, (input,), np.maximum(d, 0))
    refuse("relu", d)
    return record(ReluBackward0, (input,), _xp(input).maximum(d, 0).astype(d.dtype, copy=False))


class AbsBackward0(Node):
    rule = "self: grad * sign(self)"
    __slots__ = ()
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        if dual.data(x).dtype.kind == "c":  # d|z| is the (differentiable) direction z / |z|
            return (g * (complex_sgn(x) if isinstance(x, Tensor) else sgn_array(x)),)
        return (g * _sign_array(dual.data(x)),)


def abs(input: Tensor) -> Tensor:
    check_kernel_dtype("abs_cpu", input._data.dtype, "b")
    return record(AbsBackward0, (input,), _xp(input).abs(input._data))


absolute = abs  # PyTorch's alias: same op, same AbsBackward0


def _sign_array(d):
    """NumPy's sign with PyTorch's ``sign(nan) == 0``."""
    xp = get_array_module(d)
    if d.dtype.kind == "b":  # the sign of a bool is itself
        return d.copy()
    s = xp.sign(d)
    if d.dtype.kind == "f":
        s = xp.where(xp.isnan(d), 0, s).astype(d.dtype, copy=False)
    return s


def _real_sign(input: Tensor):
    if input._data.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, gradnb.sign is not intended to support complex "
                                  "numbers. Please use gradnb.sgn instead.")
    return _sign_array(input._data)


def signbit(input: Tensor) -> Tensor:
    """Whether each element's sign bit is set (``-0.0`` included); a bool tensor."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return wrap(_xp(input).signbit(input._data))


sign, SignBackward0 = unary(
    "sign", "SignBackward0", _real_sign, None, saves=None,
    rule="self: zeros_like(grad)", why_zero="sign() has zero derivative")


def _zero_grad_unary(op: str, name: str, **declared):
    """A piecewise-constant function (floor, ceil, round, trunc): gradient zero everywhere;
    refused for bool and (but round's message) complex inputs, as PyTorch's kernels are."""

    def compute(input):
        data = input._data
        check_kernel_dtype(f"{op}_vml_cpu", data.dtype, "b" if op != "round" else "bc")
        if data.dtype.kind == "c":
            raise NotImplementedError(f"{op} is not supported for complex inputs")
        return getattr(_xp(input), op)(data)

    return unary(op, name, compute, None,
                 saves=None, rule="self: zeros_like(grad)", module=__name__,
                 doc=f"Elementwise {op} (zero gradient).", **declared)


floor, FloorBackward0 = _zero_grad_unary("floor", "FloorBackward0")
ceil, CeilBackward0 = _zero_grad_unary("ceil", "CeilBackward0")
trunc, TruncBackward0 = _zero_grad_unary("trunc", "TruncBackward0")
fix = trunc  # PyTorch's alias: same op, same TruncBackward0
_round_half_even, RoundBackward0 = _zero_grad_unary("round", "RoundBackward0")
RoundBackward1 = node("RoundBackward1", None, rule="self: zeros_like(grad)")


def round(input: Tensor, *, decimals: int | None = None) -> Tensor:
    """Round half to even, like PyTorch (``round.decimals`` when ``decimals`` is given)."""
    if decimals is None:
        return _round_half_even(input)
    check_kernel_dtype("round_vml_cpu", input._data.dtype, "bc")
    return record(RoundBackward1, (input,), _xp(input).round(input._data, decimals))


# -- clamp -----------------------------------------------------------------------------------
class _ClampNumbers(Node):
    """Number bounds ``lo``/``hi`` (either None): the gradient passes where lo <= x <= hi. Each
    subclass declares its own saves (a subclass of ClampBackward1 would inherit its readers
    ``_saved_max`` and ``_saved_min``, which PyTorch's ClampMinBackward0 does not have)."""

    __slots__ = ("hi", "lo")
    inputs = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        xd = dual.data(x)
        for bound, kernel in ((self.lo, "ge_cpu"), (self.hi, "le_cpu")):
            if isinstance(bound, complex):  # PyTorch compares x with it: a complex comparison
                check_kernel_dtype(kernel, _dtype.complex_of(xd.dtype), "c")
        mask = True
        if self.lo is not None:
            mask = xd >= self.lo
        if self.hi is not None:
            mask = (xd <= self.hi) & mask
        return (dual.where(mask, g, 0),)


class ClampBackward1(_ClampNumbers):
    """Gradient passes where min <= x <= max (bounds included, as in PyTorch); number bounds."""
    rule = "self: clamp_backward(grad, self, min, max): grad where min <= self <= max, else 0"
    why_zero = "a saturated clamp: every input was outside [min, max]"
    __slots__ = ()
    saves = ("max", "min", "self")
    saved_attrs: ClassVar[dict] = {"max": "hi", "min": "lo"}


class ClampMinBackward0(_ClampNumbers):
    rule = "self: where(self >= min, grad, 0)"
    why_zero = "a saturated clamp_min: every input was below min"
    __slots__ = ()
    saves = ("min", "self")
    saved_attrs: ClassVar[dict] = {"min": "lo"}


class ClampMaxBackward0(_ClampNumbers):
    rule = "self: where(self <= max, grad, 0)"
    why_zero = "a saturated clamp_max: every input was above max"
    __slots__ = ()
    saves = ("max", "self")
    saved_attrs: ClassVar[dict] = {"max": "hi"}


class ClampBackward0(Node):
    """Tensor bounds (either may be None): ``self`` gets the gradient where it is inside them,
    ``min`` where ``self`` is below it (and ``min < max``), ``max`` where ``self`` is above it
    (or ``max < min``), as PyTorch's ``clamp_backward_min_max``."""
    rule = ("self: grad where min <= self <= max; min: grad where self < min (and min < max); "
            "max: grad where self > max (or max < min)")
    why_zero = "a saturated clamp: every input was outside [min, max]"
    __slots__ = ()
    inputs = ("self", "min", "max")
    saves = ("max", "min", "self")

    def backward(self, g):
        hi, lo, x = (None if v is None else dual.data(v) for v in self.saved(g))
        if lo is not None and hi is not None:
            keep = (x >= lo) & (x <= hi)
            to_lo, to_hi = (x < lo) & (lo < hi), (x > hi) | (hi < lo)
        elif lo is not None:
            keep, to_lo, to_hi = x >= lo, x < lo, None
        else:
            keep, to_lo, to_hi = x <= hi, None, x > hi
        return (dual.where(keep, g, 0.0) if self.needs(0) else None,
                dual.where(to_lo, g, 0.0) if to_lo is not None and self.needs(1) else None,
                dual.where(to_hi, g, 0.0) if to_hi is not None and self.needs(2) else None)


class ClampMinBackward1(Node):
    rule = "self: where(self >= min, grad, 0); min: where(self < min, grad, 0)"
    why_zero = "a saturated clamp_min: every input was below min"
    __slots__ = ()
    inputs = ("self", "min")
    saves = ("min", "self")

    def backward(self, g):
        lo, x = (dual.data(v) for v in self.saved(g))
        return dual.where(x >= lo, g, 0.0), dual.where(x < lo, g, 0.0)


class ClampMaxBackward1(Node):
    rule = "self: where(self <= max, grad, 0); max: where(self > max, grad, 0)"
    why_zero = "a saturated clamp_max: every input was above max"
    __slots__ = ()
    inputs = ("self", "max")
    saves = ("max", "self")

    def backward(self, g):
        hi, x = (dual.data(v) for v in self.saved(g))
        return dual.where(x <= hi, g, 0.0), dual.where(x > hi, g, 0.0)


_COMPLEX_CLAMP = "clamp is not supported for complex types"

# PyTorch's CPU kernel for each (min given, max given), with number and with tensor bounds, and
# the dtype kinds the tensor kernels have no implementation for.
_NUMBER_KERNELS = {(True, True): "clamp_scalar_cpu", (True, False): "clamp_min_scalar_cpu",
                   (False, True): "clamp_max_scalar_cpu"}
_TENSOR_KERNELS = {(True, True): ("clamp_cpu", "bc"), (True, False): ("maximum_cpu", "c"),
                   (False, True): ("minimum_cpu", "c")}
_BOUND_SIGNATURES = {"clamp": ("Tensor min = None, Tensor max = None",
                               "Number min = None, Number max = None"),
                     "clamp_min": ("Tensor min", "Number min"),
                     "clamp_max": ("Tensor max", "Number max")}


_NUMBERS = (bool, int, float, complex)
_REAL = frozenset((int, float, type(None)))
_TENSORS = frozenset((Tensor, type(None)))


def clamp_bounds(op: str, input, min, max, *, method: str | None = None):
    """``min`` and ``max`` as PyTorch's argument parser reads them for ``op`` (``clamp``,
    ``clamp_min`` or ``clamp_max``): both numbers or both tensors (None for one left out). A
    number beside a tensor takes the number signature, which reads a 0-d tensor that does not
    require grad as its number; anything else is refused with the parser's TypeError (worded
    for the Tensor method ``method`` when given)."""
    kinds = {type(min), type(max)}
    if isinstance(input, Tensor) and (kinds <= _REAL or kinds <= _TENSORS) and (
            max is not None if op == "clamp_max" else
            min is not None or (op == "clamp" and max is not None)):
        return min, max  # the common cases: real numbers, or tensors
    bounds = [b.item() if isinstance(b, np.generic) else b for b in (min, max)]
    if any(isinstance(b, Tensor) for b in bounds) and any(isinstance(b, _NUMBERS) for b in bounds):
        bounds = [b.item() if isinstance(b, Tensor) and not b._data.ndim and not b._requires_grad
                  else b for b in bounds]
    given = [b for b in bounds if b is not None]
    if not (isinstance(input, Tensor) and (op == "clamp" or len(given) == 1) and (
            all(isinstance(b, Tensor) for b in given)
            or all(isinstance(b, _NUMBERS) for b in given))):
        raise TypeError(_invalid_bounds(op, input, min, max, method))
    if not given:
        raise RuntimeError("gradnb.clamp: At least one of 'min' or 'max' must not be None")
    return bounds[0], bounds[1]


def _invalid_bounds(op: str, input, min, max, method: str | None) -> str:
    passed = (min, max) if op == "clamp" else (min if op == "clamp_min" else max,)
    shown = [v for v in passed if v is not None or op != "clamp"]
    got = ", ".join(type_name(v) for v in (shown if method else (input, *shown)))
    head = "" if method else "Tensor input, "
    tail = "" if method else ", *, Tensor out = None"
    signatures = "".join(f" * ({head}{sig}{tail})\n" for sig in _BOUND_SIGNATURES[op])
    return (f"{method or op}() received an invalid combination of arguments - got ({got}), but "
            f"expected one of:\n{signatures}")


def _refuse_complex(op: str, dtype, min, max) -> None:
    """PyTorch's number clamps refuse a complex input, and clamp_min/clamp_max a complex bound,
    before anything else."""
    bound = min if op == "clamp_min" else max
    if dtype.kind == "c" or (op != "clamp" and isinstance(bound, complex)):
        raise NotImplementedError(_COMPLEX_CLAMP)


def _number_bounds(op: str, dtype, min, max):
    """The number bounds as ``dtype`` (the dtype the clamp computes in) holds them: an integer
    wraps into an unsigned dtype as PyTorch converts it (-3 is 253 in uint8), a value out of
    range raises PyTorch's overflow error, and so does a complex bound with an imaginary part
    (PyTorch reads it as a double)."""
    _refuse_complex(op, dtype, min, max)

    def convert(bound):
        if bound is None:
            return None
        if isinstance(bound, complex):
            if bound.imag:
                raise RuntimeError("value cannot be converted to type double without overflow")
            bound = bound.real
        return converted_number(bound, dtype)

    return convert(min), convert(max)


def _number_clamp_dtype(op: str, input: Tensor, min, max, inplace: bool):
    """The dtype a clamp with number bounds computes in: the input's when it is floating,
    otherwise promoted with the numbers; written in place, it may not promote at all."""
    d = input._data.dtype
    _refuse_complex(op, d, min, max)
    if _dtype.is_float_np(d):
        return d
    dtype = result_type_of(input, min, max)
    if inplace and dtype != d:
        raise RuntimeError(f"result type {scalar_type_name(dtype)} can't be cast to the desired "
                           f"output type {cpp_type_name(d)}")
    if dtype.kind == "c":
        raise NotImplementedError(_COMPLEX_CLAMP)
    return dtype


_NUMBER_NODES = {"clamp": ClampBackward1, "clamp_min": ClampMinBackward0,
                 "clamp_max": ClampMaxBackward0}


def _past(x, bound, upper: bool):
    """Where ``bound`` replaces ``x`` in a clamp: ``x`` is past it (above an upper bound, below
    a lower one) or the bound (an array) is NaN. A tie keeps ``x``, and so does a NaN ``x``."""
    xp = get_array_module(x)
    mask = xp.greater(x, bound) if upper else xp.less(x, bound)
    if getattr(bound, "ndim", 0) and _dtype.is_float_np(bound.dtype):
        mask |= xp.isnan(bound)
    return mask


def clamp_into(out, lo, hi) -> None:
    """Limit the array ``out`` to ``[lo, hi]`` in place (NumPy scalars of its dtype or arrays,
    either None) as PyTorch's kernels do: NaN where ``out`` or a bound is NaN, ``hi`` where
    ``lo > hi``, and ``out`` on a tie (so -0.0 clamped at 0.0 stays -0.0: NumPy's maximum,
    which gives the bound on a tie, is used only where a tie cannot tell the two apart)."""
    xp = get_array_module(out)
    for bound, upper in ((lo, False), (hi, True)):
        if bound is None:
            continue
        if getattr(bound, "ndim", 0) or (bound == 0 and _dtype.is_float_np(out.dtype)):
            xp.copyto(out, bound, where=_past(out, bound, upper))
        else:
            (xp.minimum if upper else xp.maximum)(out, bound, out=out)


def real_bounds_fit(dtype, min, max) -> bool:
    """Whether this is the common case, a float tensor clamped by real numbers (either None):
    the tensor keeps its dtype and the bounds may stay Python numbers, which NumPy reads in it.
    A bound out of the dtype's range raises PyTorch's overflow error."""
    if dtype.kind != "f" or type(min) not in _REAL or type(max) not in _REAL:
        return False
    low, high = number_limits(dtype)
    for bound in (min, max):
        if bound is not None and not low <= bound <= high and math.isfinite(bound):
            converted_number(bound, dtype)  # (raises)
    return True


def _clamped_by_numbers(x, lo, hi):
    """A new array: ``x`` limited to the number bounds ``lo`` and ``hi`` (either None)."""
    if (lo == 0 or hi == 0) and _dtype.is_float_np(x.dtype):  # a tie keeps x's sign of zero
        out = x.copy()
        clamp_into(out, lo, hi)
        return out
    xp = get_array_module(x)
    if lo is not None:
        x = xp.maximum(x, lo)
    return x if hi is None else xp.minimum(x, hi)


def _clamp_numbers(op: str, input: Tensor, min, max, inplace: bool) -> Tensor:
    dtype = input._data.dtype
    if real_bounds_fit(dtype, min, max):
        lo, hi = min, max
    else:
        dtype = _number_clamp_dtype(op, input, min, max, inplace)
        check_kernel_dtype(_NUMBER_KERNELS[min is not None, max is not None], dtype, "b")
        lo, hi = _number_bounds(op, dtype, min, max)
    out = _clamped_by_numbers(input._data.astype(dtype, copy=False), lo, hi)
    # (the node compares x with the bounds as given, PyTorch's saved Scalars)
    return record(_NUMBER_NODES[op], (input,), out, attrs={"lo": min, "hi": max})


def _clamp_tensors(op: str, input: Tensor, min, max, inplace: bool) -> Tensor:
    """Tensor bounds: broadcast with the input and promoted with it as one TensorIterator
    does (a 0-d bound of the same category keeps the input's dtype: uint8 clamped with an int64
    0-d -3 is clamped with 253)."""
    d = input._data
    if op == "clamp" and d.dtype.kind == "c":
        raise NotImplementedError(_COMPLEX_CLAMP)
    shape = d.shape
    for bound in (min, max):
        if bound is not None and bound._data.shape != shape:
            check_broadcast(shape, bound._data.shape)
            shape = np.broadcast_shapes(shape, bound._data.shape)
    dtype = result_type_of(input, min, max)
    if inplace:
        check_fits_output(d, shape, dtype)
    kernel, refused = _TENSOR_KERNELS[min is not None, max is not None]
    check_kernel_dtype(kernel, dtype, refused)
    lo, hi = (None if b is None else b._data.astype(dtype, copy=False) for b in (min, max))
    out = d.astype(dtype) if shape == d.shape else get_array_module(d).broadcast_to(
        d.astype(dtype, copy=False), shape).copy()
    clamp_into(out, lo, hi)
    if op == "clamp_min":
        return record(ClampMinBackward1, (input, min), out)
    if op == "clamp_max":
        return record(ClampMaxBackward1, (input, max), out)
    # A bound left out is not saved (PyTorch's ``_saved_min`` is then None).
    save = (None if max is None else 2, None if min is None else 1, 0)
    return record(ClampBackward0, (input, min, max), out, save=save)


def clamp_op(op: str, input: Tensor, min, max, *, inplace: bool = False) -> Tensor:
    """``op`` (``clamp``, ``clamp_min`` or ``clamp_max``) of ``input`` with bounds already read by
    ``clamp_bounds``. ``inplace``: the result goes back into ``input``, which PyTorch checks
    before computing (a promoted dtype is refused, naming the C++ type for number bounds)."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensors(op, input, min, max, inplace)
    return _clamp_numbers(op, input, min, max, inplace)


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` (either bound may be None; bounds may be tensors)."""
    return clamp_op("clamp", input, *clamp_bounds("clamp", input, min, max))


clip = clamp


def clamp_min(input: Tensor, min) -> Tensor:
    return clamp_op("clamp_min", input, *clamp_bounds("clamp_min", input, min, None))


def clamp_max(input: Tensor, max) -> Tensor:
    return clamp_op("clamp_max", input, *clamp_bounds("clamp_max", input, None, max))


def _clamp_method(name: str):
    """``Tensor.<name>`` (``clamp`` or ``clip``): the parser's errors name the method."""
    def method(self: Tensor, min=None, max=None) -> Tensor:
        return clamp_op("clamp", self, *clamp_bounds("clamp", self, min, max, method=name))

    method.__name__ = method.__qualname__ = name
    return method


def _clamp_min_method(self: Tensor, min) -> Tensor:
    return clamp_op("clamp_min", self, *clamp_bounds("clamp_min", self, min, None,
                                                     method="clamp_min"))


def _clamp_max_method(self: Tensor, max) -> Tensor:
    return clamp_op("clamp_max", self, *clamp_bounds("clamp_max", self, None, max,
                                                     method="clamp_max"))


# -- binary elementwise ----------------------------------------------------------------------
class MaximumBackward0(Node):
    """Ties split the gradient equally between both inputs, as PyTorch does."""
    rule = "self: grad where self > other (half on ties); other: the rest"

    __slots__ = ()
    saves = ("self", "other")
    pack_order = (1, 0)
    pick_b = False

    def backward(self, g):
        a, b = self.saved(g)
        ad, bd = dual.data(a), dual.data(b)
        if self.pick_b:
            ad, bd = bd, ad
        # where, not products with 0/1 weights: 0 * inf would be NaN where PyTorch gives 0
        tie = ad == bd
        half = g * 0.5
        return (dual.where(ad > bd, g, dual.where(tie, half, 0)),
                dual.where(bd > ad, g, dual.where(tie, half, 0)))


class MinimumBackward0(MaximumBackward0):
    rule = "self: grad where self < other (half on ties); other: the rest"
    __slots__ = ()
    pick_b = True


def _extremum(cls, np_name, input, other):
    check_tensor_only(np_name, input, other)
    ta, tb, a, b = binary_operands(input, other)
    if a.dtype.kind == "c":
        raise RuntimeError(f"{np_name} not implemented for complex tensors.")
    return record(cls, (ta, tb), getattr(get_array_module(a), np_name)(a, b), operands=(a, b))


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum (NaN propagates)."""
    return _extremum(MaximumBackward0, "maximum", input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum (NaN propagates)."""
    return _extremum(MinimumBackward0, "minimum", input, other)


class WhereBackward0(Node):
    """Saves the condition (a tensor that is no input, so passed per recording in ``save``)."""
    rule = "self: where(condition, grad, 0); other: where(condition, 0, grad)"
    why_zero = "a mask (where): the condition never picked this input"
    __slots__ = ()
    saved_names = ("condition",)

    def backward(self, g):
        (c,) = self.saved(g)
        c = dual.data(c)
        zero = 0.0
        return dual.where(c, g, zero), dual.where(c, zero, g)


def where(condition, input=None, other=None):
    """``input`` where ``condition`` else ``other``; with one argument, ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if isinstance(condition, Tensor):
        cond = condition._data
    elif hasattr(condition, "shape") and hasattr(condition, "dtype"):
        cond = condition  # a raw NumPy or CuPy mask (derivative rules pass these)
    else:
        cond = np.asarray(condition)
    if cond.dtype != np.bool_:
        cond = cond.astype(bool)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        like = condition if isinstance(condition, Tensor) else None
        input = _scalar_tensor(input, like)
    ta, tb, a, b = binary_operands(input, other)

    def save():  # only when recording: the condition as a bool tensor, as PyTorch saves it
        saved = condition if isinstance(condition, Tensor) and condition._data is cond else None
        return (saved if saved is not None else wrap(cond),)

    return record(WhereBackward0, (ta, tb), get_array_module(cond).where(cond, a, b), save=save)


def _scalar_tensor(value, like):
    xp = get_array_module(like._data) if like is not None else np
    if isinstance(value, float):
        return wrap(xp.asarray(value, dtype=_dtype.get_default_dtype().np))
    return wrap(xp.asarray(value))


# -- comparisons and logic (no gradient) -----------------------------------------------------
def _compare(np_name, kernel=None, refused="", tensors_only=False):
    """A bool-valued (or bitwise) binary op; ``kernel`` names PyTorch's CPU kernel, which has no
    implementation for the promoted dtype kinds in ``refused``; ``tensors_only``: no Python
    scalar ``other`` (PyTorch's ``logical_and`` takes tensors only)."""

    def fn(input, other) -> Tensor:
        if tensors_only:
            check_tensor_only(np_name, input, other)
        _, _, a, b = binary_operands(input, other)
        if refused:
            check_kernel_dtype(kernel, np.result_type(a, b), refused)
        return wrap(getattr(get_array_module(a if hasattr(a, "shape") else b), np_name)(a, b))

    fn.__name__ = np_name
    fn.__doc__ = f"Elementwise ``{np_name}`` comparison; a bool tensor without gradient."
    return fn


eq = _compare("equal")
ne = _compare("not_equal")
lt = _compare("less", "lt_cpu", "c")
le = _compare("less_equal", "le_cpu", "c")
gt = _compare("greater", "gt_cpu", "c")
ge = _compare("greater_equal", "ge_cpu", "c")
logical_and = _compare("logical_and", tensors_only=True)
logical_or = _compare("logical_or", tensors_only=True)
logical_xor = _compare("logical_xor", tensors_only=True)
bitwise_and = _compare("bitwise_and", "bitwise_and_cpu", "fc")
bitwise_or = _compare("bitwise_or", "bitwise_or_cpu", "fc")
bitwise_xor = _compare("bitwise_xor", "bitwise_xor_cpu", "fc")


def _comparison_nodes(name: str) -> tuple[type, type]:
    """PyTorch's nodes for an in-place comparison of a float tensor (``x.eq_(y)`` writes 0/1 in
    ``x``'s dtype): ``<Name>Backward0`` with a number, ``<Name>Backward1`` with a tensor. The
    gradient of each operand is zero."""
    def number_backward(self, g):
        return (dual.zeros_like(g),)

    def tensor_backward(self, g):
        zero = dual.zeros_like(g)
        return (zero if self.needs(0) else None), (zero if self.needs(1) else None)

    classes = []
    for nr, inputs, backward, rule in (
            (0, ("self",), number_backward, "self: zeros_like(self)"),
            (1, ("self", "other"), tensor_backward,
             "self: zeros_like(self); other: zeros_like(other)")):
        classes.append(type(f"{name}Backward{nr}", (Node,), {
            "__slots__": (), "__module__": __name__, "__qualname__": f"{name}Backward{nr}",
            "inputs": inputs, "saves": (), "rule": rule, "backward": backward,
            "why_zero": "a comparison: its 0/1 values have zero derivative"}))
    return classes[0], classes[1]


COMPARISON_NODES = {op: _comparison_nodes(name) for op, name in (
    ("eq", "Eq"), ("ne", "Ne"), ("lt", "Lt"), ("le", "Le"), ("gt", "Gt"), ("ge", "Ge"))}
EqBackward0, EqBackward1 = COMPARISON_NODES["eq"]
NeBackward0, NeBackward1 = COMPARISON_NODES["ne"]
LtBackward0, LtBackward1 = COMPARISON_NODES["lt"]
LeBackward0, LeBackward1 = COMPARISON_NODES["le"]
GtBackward0, GtBackward1 = COMPARISON_NODES["gt"]
GeBackward0, GeBackward1 = COMPARISON_NODES["ge"]


# PyTorch's longer names of the comparisons.
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _shift(name: str, ufunc, kernel: str):
    def fn(input, other) -> Tensor:
        _, _, a, b = binary_operands(input, other)
        data = a if hasattr(a, "dtype") else b
        if data.dtype.kind not in "iu":
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{scalar_type_name(data.dtype)}'")
        return wrap(get_array_module(data).asarray(ufunc(a, b)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of integer tensors (no gradient)."
    return fn


bitwise_left_shift = _shift("bitwise_left_shift", np.left_shift, "lshift_cpu")
bitwise_right_shift = _shift("bitwise_right_shift", np.right_shift, "rshift_cpu")


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive (no gradient:
    PyTorch has no derivative for it). Computed as PyTorch's kernel does, in the input's dtype:
    ``values if x == 0 else x > 0`` (NaN gives 0, where NumPy's ``heaviside`` gives NaN)."""
    refuse("heaviside", input._data)
    refuse("heaviside", values._data)
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    d, xp = input._data, _xp(input)
    return wrap(xp.where(d == 0, values._data, d > 0).astype(d.dtype, copy=False))


def logical_not(input: Tensor) -> Tensor:
    return wrap(_xp(input).logical_not(input._data))


def bitwise_not(input: Tensor) -> Tensor:
    check_kernel_dtype("bitwise_not_cpu", input._data.dtype, "fc")
    return wrap(_xp(input).invert(input._data))


def isnan(input: Tensor) -> Tensor:
    return wrap(_xp(input).isnan(input._data))


def isinf(input: Tensor) -> Tensor:
    return wrap(_xp(input).isinf(input._data))


def _isinf_of_sign(name: str, sign: float):
    def op(input: Tensor) -> Tensor:
        data = input._data
        if data.dtype.kind == "c":
            raise RuntimeError(f"{name} does not support complex inputs.")
        # integers and bools hold no infinity: all False, as PyTorch
        if not _dtype.is_float_np(data.dtype):
            return wrap(_xp(input).zeros(data.shape, bool))
        return wrap(data == sign)

    op.__name__ = name
    op.__doc__ = f"Where ``input`` is {'+' if sign > 0 else '-'}infinity (a bool tensor)."
    return op


isposinf = _isinf_of_sign("isposinf", np.inf)
isneginf = _isinf_of_sign("isneginf", -np.inf)


def isfinite(input: Tensor) -> Tensor:
    return wrap(_xp(input).isfinite(input._data))


def equal(input: Tensor, other: Tensor) -> bool:
    """True if both tensors have the same shape and elements."""
    return input.shape == other.shape and bool((input._data == other._data).all())


def allclose(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(_xp(input).allclose(input._data, other._data, rtol=rtol, atol=atol,
                                     equal_nan=equal_nan))


def isclose(input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    check_tensor_only("isclose", input, other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{scalar_type_name(input._data.dtype)} did not match "
                           f"{scalar_type_name(other._data.dtype)}")
    return wrap(_xp(input).isclose(input._data, other._data, rtol=rtol, atol=atol,
                                    equal_nan=equal_nan))


TENSOR_METHODS = {
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "greater": gt,
    "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
    "heaviside": heaviside,
    "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor, "__invert__": bitwise_not,
    "__rand__": reflected("__rand__", bitwise_and), "__ror__": reflected("__ror__", bitwise_or),
    "__rxor__": reflected("__rxor__", bitwise_xor),
    "logical_not": logical_not, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "bitwise_not": bitwise_not,
    "__abs__": abs, "abs": abs, "exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log10": log10,
    "log1p": log1p, "sqrt": sqrt, "rsqrt": rsqrt, "sin": sin, "cos": cos, "tan": tan, "tanh": tanh, "sinh": sinh,
    "cosh": cosh, "asin": asin, "acos": acos, "atan": atan, "sigmoid": sigmoid, "relu": relu, "sign": sign, "erf": erf,
    "floor": floor, "ceil": ceil, "trunc": trunc, "fix": fix, "round": round,
    "absolute": absolute,
    "clamp": _clamp_method("clamp"), "clip": _clamp_method("clip"),
    "clamp_min": _clamp_min_method, "clamp_max": _clamp_max_method,
    "signbit": signbit, "maximum": maximum, "minimum": minimum, "isnan": isnan, "isinf": isinf, "isfinite": isfinite,
    "isposinf": isposinf, "isneginf": isneginf,
    "equal": equal, "allclose": allclose, "isclose": isclose,
    "where": lambda self, condition, other: where(condition, self, other),
}
