"""Reductions: sum, mean, max/min, amax/amin, argmax/argmin, prod, var/std, norm, logsumexp,
median, the scans cumsum/cumprod, and the gradient-free all/any/count_nonzero.

``dim`` may be an int, a tuple or None; ``keepdim`` as in PyTorch. Gradients are broadcast back
over the reduced dimensions. Derivative rules use operators and the helpers below, which accept
raw arrays (first-order backward) and tensors (``create_graph=True``) alike, so every rule is also
differentiable. Tie-breaking follows PyTorch: a full ``max``/``min``/``median`` and ``amax``/
``amin`` share the gradient evenly among tied extrema; ``max(dim)`` sends it to the returned index.

This module defines ``sum``, ``max``, ``min``, ``all`` and ``any``, shadowing the builtins; the
builtins are spelled ``builtins.max`` here.
"""

from __future__ import annotations

import builtins
import collections
import math
import types
import warnings
from typing import ClassVar

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module, silent
from .._core.graph import OUTPUT, Node, const
from .._core.record import record, wrap
from . import dual
from ._args import check_tensor_or_number, scalar_type_name
from ._common import Tensor
from ._out import OUT_DTYPE_MATCH_INPUT, accepts_out
from .elementwise import maximum, minimum
from .shape import _on, cat, flip, narrow

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "logsumexp",
    "max",
    "mean",
    "median",
    "min",
    "prod",
    "return_types",
    "std",
    "sum",
    "unique",
    "var",
]

# -- dims and dtypes ------------------------------------------------------------------------------
def normalize_dims(dim, ndim: int):
    """``dim`` as a sorted tuple of non-negative axes (None means all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = builtins.max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(sorted(out)) if ndim else ()


def _reduced_axes(dim, ndim: int):
    """Axes for reductions where, as in PyTorch, ``dim=None`` and ``dim=()`` both mean all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return normalize_dims(dim, ndim)


def _single_dim(name: str, dim, ndim: int) -> int:
    """One wrapped axis for ops whose ``dim`` must be an int (0 for a 0-d tensor)."""
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not "
                        f"{type(dim).__name__}")
    axes = normalize_dims(dim, ndim)
    return axes[0] if axes else 0


def _check_nonempty(name: str, shape, axes) -> None:
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _count(shape, axes) -> int:
    return math.prod(shape[a] for a in axes)


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))




def _require_float(data, message: str) -> None:
    if data.dtype.kind not in "fc":
        raise RuntimeError(message)


def _as_dtype(data, dtype):
    return data if dtype is None else data.astype(_dtype.as_dtype(dtype).np, copy=False)


def _integral_to_int64(data, dtype):
    """PyTorch's accumulation dtype: an explicit ``dtype``, else int64 for integers and bools."""
    if dtype is not None:
        return _dtype.as_dtype(dtype).np
    if data.dtype.kind in "bui":
        return _dtype.int64.np
    return None


# -- recording ------------------------------------------------------------------------------------
def _record(cls, input, out, *, save_input=False, save_output=False, consts=(), **attrs) -> Tensor:
    """``record`` for a reduction of ``input``: the saved values its backward reads are, in this
    order, the input, the output, then each of ``consts``. An integer result has no gradient."""
    if not _is_differentiable(out):
        return wrap(out)
    save = (0,) * save_input + (OUTPUT,) * save_output + tuple(const(c) for c in consts)
    return record(cls, (input,), out, save=save, attrs=attrs or None)


def _is_differentiable(out) -> bool:
    return out.dtype.kind in "fc"


# -- helpers for rules that run on arrays and on tensors -------------------------------------------
def _kept(g, in_shape, axes, keepdim):
    """A reduced gradient with its reduced dims restored as size 1 (ready to broadcast)."""
    if keepdim or not axes:
        return g
    return dual.reshape(g, _kept_shape(in_shape, axes))


def expand_reduced(g, in_shape, axes, keepdim):
    """Broadcast a reduced gradient back to ``in_shape``."""
    return dual.expand(_kept(g, in_shape, axes, keepdim), in_shape)


def _weighted(g, weights):
    """``g * weights`` for constant float ``weights`` (cast so a float32 gradient stays float32)."""
    if isinstance(g, Tensor):
        return g * wrap(weights.astype(g._data.dtype, copy=False))  # a tensor keeps its device
    return g * weights.astype(g.dtype, copy=False)


def _where(mask, a, b):
    """``dual.where`` for a raw boolean ``mask``, wrapped as a tensor when the branches are
    tensors so that it never leaves its device."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        mask = wrap(mask)
    return dual.where(mask, a, b)


def _nan_aware_equal(x, value):
    """Where ``x`` equals ``value``, NaN matching NaN (a NaN extremum is one of the NaNs)."""
    xp = get_array_module(x)
    return (x == value) | (xp.isnan(x) & xp.isnan(value))


# -- sum and mean ---------------------------------------------------------------------------------
class SumBackward0(Node):
    """Gradient of a full sum: the scalar gradient broadcast to the input's shape."""
    rule = "self: grad expanded to self's shape"

    __slots__ = ("in_shape",)

    def backward(self, g):
        return (dual.expand(g, self.in_shape),)


class SumBackward1(Node):
    """Gradient of a sum over ``dim``."""
    rule = "self: grad unsqueezed on the summed dims, expanded to self's shape"

    __slots__ = ("axes", "in_shape", "keepdim")
    saved_attrs: ClassVar[dict] = {"dim": "axes", "keepdim": "keepdim",
                                   "self_sym_sizes": "in_shape"}

    def backward(self, g):
        return (expand_reduced(g, self.in_shape, self.axes, self.keepdim),)


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of all elements, or over ``dim`` (integers and bools sum as int64).

    >>> import gradnb
    >>> gradnb.tensor([[1., 2.], [3., 4.]]).sum(1)
    tensor([3., 7.])
    """
    data = input._data
    out_dtype = _integral_to_int64(data, dtype)
    if dim is None:
        with silent():  # inf - inf is NaN, silently
            out = data.sum(dtype=out_dtype)
        return _record(SumBackward0, input, out, in_shape=data.shape)
    axes = _reduced_axes(dim, data.ndim)
    with silent():  # inf - inf is NaN, silently
        out = data.sum(axis=axes, keepdims=keepdim, dtype=out_dtype)
    return _record(SumBackward1, input, out, in_shape=data.shape, axes=axes, keepdim=keepdim)


class MeanBackward0(Node):
    """Gradient of a full mean: ``g / numel`` everywhere."""
    rule = "self: grad expanded to self's shape / numel"

    __slots__ = ("count", "in_shape")

    def backward(self, g):
        # count is 0 only for an empty input, whose gradient is empty whatever we divide by
        return (dual.expand(g / builtins.max(self.count, 1), self.in_shape),)


class MeanBackward1(Node):
    """Gradient of a mean over ``dim``."""
    rule = "self: grad expanded over the reduced dims / their size"

    __slots__ = ("axes", "count", "in_shape", "keepdim")
    saved_attrs: ClassVar[dict] = {"dim": "axes", "keepdim": "keepdim",
                                   "self_sym_sizes": "in_shape"}

    def backward(self, g):
        count = builtins.max(self.count, 1)  # 0 only when the input, so its gradient, is empty
        return (expand_reduced(g / count, self.in_shape, self.axes, self.keepdim),)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Arithmetic mean (floating-point tensors only, as in PyTorch)."""
    data = input._data
    if dtype is not None:
        if _dtype.as_dtype(dtype).np.kind not in "fc":
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{scalar_type_name(_dtype.as_dtype(dtype))}")
        data = _as_dtype(data, dtype)
    else:
        _require_float(data, "mean(): could not infer output dtype. Input dtype must be either a "
                       "floating point or complex dtype. Got: "
                       f"{scalar_type_name(data.dtype)}")
    xp = get_array_module(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is NaN, silently
        if dim is None:
            out = xp.asarray(data.mean(), dtype=data.dtype)
            return _record(MeanBackward0, input, out, in_shape=data.shape, count=data.size)
        axes = _reduced_axes(dim, data.ndim)
        out = data.mean(axis=axes, keepdims=keepdim).astype(data.dtype, copy=False)
    return _record(MeanBackward1, input, out, in_shape=data.shape, axes=axes, keepdim=keepdim,
                   count=_count(data.shape, axes))


# -- max, min, amax, amin, argmax, argmin -----------------------------------------------------------
def _return_type(name: str):
    base = collections.namedtuple(name, ["values", "indices"])

    def __repr__(self) -> str:
        return f"gradnb.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                               "__doc__": f"``({name} values, indices)`` as a named tuple."})
    cls.__module__ = "gradnb.return_types"
    return cls


return_types = types.ModuleType(
    "gradnb.return_types", "Named tuples returned by reductions that also give indices.")
return_types.max = _return_type("max")
return_types.min = _return_type("min")
return_types.median = _return_type("median")


class MaxBackward1(Node):
    """Gradient of a full ``max``: shared evenly among every element equal to the result."""
    rule = "self: grad to the index that held the max along dim"

    __slots__ = ()

    def backward(self, g):
        x, out = (dual.data(v) for v in self.saved(g))
        mask = _nan_aware_equal(x, out)
        return (_weighted(g, mask / mask.sum()),)


class MinBackward1(MaxBackward1):
    """Gradient of a full ``min`` (same rule as ``max``)."""
    rule = "self: grad to the index that held the min along dim"

    __slots__ = ()


class MaxBackward0(Node):
    """Gradient of ``max(dim)``: all of it to the index that was returned."""
    rule = "self: grad shared evenly among the maximal entries"

    __slots__ = ("axis", "in_shape", "keepdim")

    def backward(self, g):
        if not self.in_shape:
            return (g,)
        (indices,) = self.saved(g)
        indices = dual.data(indices)
        xp = get_array_module(indices)
        positions = xp.arange(self.in_shape[self.axis]).reshape(
            (-1,) + (1,) * (len(self.in_shape) - self.axis - 1))
        one_hot = positions == indices.reshape(_kept_shape(self.in_shape, (self.axis,)))
        g = _kept(g, self.in_shape, (self.axis,), self.keepdim)
        return (_where(one_hot, g, 0.0),)


class MinBackward0(MaxBackward0):
    """Gradient of ``min(dim)`` (same rule as ``max(dim)``)."""
    rule = "self: grad shared evenly among the minimal entries"

    __slots__ = ()


def _extreme(name, full_cls, dim_cls, input, dim, keepdim):
    data = input._data
    if dim is None:
        if data.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        out = getattr(data, name)()
        return _record(full_cls, input, out, save_input=True, save_output=True)
    axis = _single_dim(name, dim, data.ndim)
    if data.ndim == 0:
        indices = get_array_module(data).zeros((), dtype=_dtype.int64.np)
        values = data.copy()
    else:
        _check_nonempty(name, data.shape, (axis,))
        xp = get_array_module(data)
        indices = getattr(xp, "arg" + name)(data, axis=axis, keepdims=True)
        values = xp.take_along_axis(data, indices, axis=axis)
        if not keepdim:
            indices, values = indices.squeeze(axis), values.squeeze(axis)
    values_t = _record(dim_cls, input, values, consts=(indices,), in_shape=data.shape, axis=axis,
                       keepdim=keepdim)
    return getattr(return_types, name)(values_t, wrap(indices))


def max(input: Tensor, dim=None, keepdim: bool = False):
    """The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor as the
    second argument, the elementwise ``maximum``.

    >>> import gradnb
    >>> gradnb.tensor([[1., 5.], [4., 2.]]).max(1)
    gradnb.return_types.max(
    values=tensor([5., 4.]),
    indices=tensor([1, 0]))
    """
    check_tensor_or_number("max", input, *([] if dim is None else [dim]))
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    return _extreme("max", MaxBackward1, MaxBackward0, input, dim, keepdim)


def min(input: Tensor, dim=None, keepdim: bool = False):
    """The smallest element; with ``dim``, ``(values, indices)``; with a tensor, ``minimum``."""
    check_tensor_or_number("min", input, *([] if dim is None else [dim]))
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    return _extreme("min", MinBackward1, MinBackward0, input, dim, keepdim)


class AmaxBackward0(Node):
    """Gradient of ``amax``: shared evenly among the tied maxima of each reduced slice."""
    rule = "self: grad shared evenly among the maximal entries"

    __slots__ = ("axes", "in_shape", "keepdim")

    def backward(self, g):
        x, out = (dual.data(v) for v in self.saved(g))
        out = out.reshape(_kept_shape(self.in_shape, self.axes))
        mask = x == out  # a NaN result matches nothing: 0/0, a NaN gradient, as in PyTorch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            weights = mask / mask.sum(axis=self.axes, keepdims=True)
        return (_weighted(_kept(g, self.in_shape, self.axes, self.keepdim), weights),)


class AminBackward0(AmaxBackward0):
    """Gradient of ``amin`` (same rule as ``amax``)."""
    rule = "self: grad shared evenly among the minimal entries"

    __slots__ = ()


def _amax_like(name, cls, input, dim, keepdim):
    data = input._data
    axes = _reduced_axes(dim, data.ndim)
    if data.size == 0 and (dim is None or not isinstance(dim, int) and len(dim) == 0):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in (dim,) if isinstance(dim, int) else tuple(dim or ()):
        if data.ndim and data.shape[d] == 0:  # PyTorch names the dim as it was given here
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    out = getattr(data, "max" if name == "amax" else "min")(axis=axes, keepdims=keepdim)
    return _record(cls, input, out, save_input=True, save_output=True, in_shape=data.shape,
                   axes=axes, keepdim=keepdim)


@accepts_out("amax", OUT_DTYPE_MATCH_INPUT)
def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims by default); tied maxima share the gradient."""
    return _amax_like("amax", AmaxBackward0, input, dim, keepdim)


@accepts_out("amin", OUT_DTYPE_MATCH_INPUT)
def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims by default); tied minima share the gradient."""
    return _amax_like("amin", AminBackward0, input, dim, keepdim)


def _arg_extreme(name, input, dim, keepdim):
    data = input._data
    if data.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    xp = get_array_module(data)
    if dim is None:
        if data.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        index = getattr(xp, name)(data.reshape(-1))
        out = xp.asarray(index, dtype=_dtype.int64.np)
        return wrap(out.reshape((1,) * data.ndim) if keepdim else out)
    axis = _single_dim(name, dim, data.ndim)
    if data.ndim == 0:
        return wrap(xp.zeros((), dtype=_dtype.int64.np))
    _check_nonempty(name, data.shape, (axis,))
    return wrap(getattr(xp, name)(data, axis=axis, keepdims=keepdim).astype(_dtype.int64.np))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the (first) maximum, of the flattened tensor or along ``dim``; NaN counts as the
    maximum, as in PyTorch."""
    return _arg_extreme("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the (first) minimum, of the flattened tensor or along ``dim``."""
    return _arg_extreme("argmin", input, dim, keepdim)


# -- prod ------------------------------------------------------------------------------------------
def _exclusive_cumprod(x, axis: int, reverse: bool):
    """Products of the elements strictly before (or after) each one along ``axis``."""
    def scan(t):
        t = flip(t, axis) if reverse else t
        n = t.shape[axis]
        ones = _constant_like(t, _kept_shape(t.shape, (axis,)), 1)
        shifted = cat([ones, narrow(t, axis, 0, n - 1)], axis)
        out = cumprod(shifted, axis)
        return flip(out, axis) if reverse else out

    return _on(scan, x)


def _constant_like(t: Tensor, shape, value) -> Tensor:
    xp = get_array_module(t._data)
    return wrap(xp.full(shape, value, dtype=t._data.dtype))


def _prod_grad(g, x, out, axis):
    """d prod / dx along ``axis`` (or all of a flattened ``x`` when ``axis`` is None), times
    ``g`` broadcast from the kept shape. Without zeros it is ``out / x``; with zeros, as in
    PyTorch, the product of all the other elements, from exclusive scans in both directions."""
    xd = dual.data(x)
    if not (xd == 0).any():
        return g * out / x
    if axis is None:
        flat = dual.reshape(x, (-1,))
        others = _exclusive_cumprod(flat, 0, False) * _exclusive_cumprod(flat, 0, True)
        return g * dual.reshape(others, xd.shape)
    others = _exclusive_cumprod(x, axis, False) * _exclusive_cumprod(x, axis, True)
    return g * others


class ProdBackward0(Node):
    """Gradient of a full product (zero-safe)."""
    rule = "self: grad * result / self (products of the others where self == 0)"

    __slots__ = ()

    def backward(self, g):
        x, out = self.saved(g)
        return (_prod_grad(g, x, out, None),)


class ProdBackward1(Node):
    """Gradient of a product along one dim (zero-safe)."""
    rule = "self: grad * result / self along dim (others' product where self == 0)"

    __slots__ = ("axis", "in_shape", "keepdim")

    def backward(self, g):
        if not self.in_shape:
            return (g,)
        x, out = self.saved(g)
        g = _kept(g, self.in_shape, (self.axis,), self.keepdim)
        out = _kept(out, self.in_shape, (self.axis,), self.keepdim)
        return (_prod_grad(g, x, out, self.axis),)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one ``dim`` (integers multiply as int64)."""
    data = input._data
    out_dtype = _integral_to_int64(data, dtype)
    if dim is None:
        out = data.prod(dtype=out_dtype)
        return _record(ProdBackward0, input, out, save_input=True, save_output=True)
    axis = _single_dim("prod", dim, data.ndim)
    axes = (axis,) if data.ndim else ()
    out = data.prod(axis=axes, keepdims=keepdim, dtype=out_dtype)
    return _record(ProdBackward1, input, out, save_input=True, save_output=True,
                   in_shape=data.shape, axis=axis, keepdim=keepdim)


# -- var and std -----------------------------------------------------------------------------------
def _var_args(name, dim, unbiased, keepdim, correction):
    """Resolve PyTorch's overloads: ``var(unbiased)``, ``var(dim, unbiased, keepdim)`` and
    ``var(dim, *, correction, keepdim)``."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, keepdim, correction


def _var_forward(name, input, dim, keepdim, correction):
    data = input._data
    _require_float(data, "std and var only support floating point and complex dtypes")
    axes = _reduced_axes(dim, data.ndim)
    n = _count(data.shape, axes)
    dof = n - correction
    if dof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        centered = data - data.mean(axis=axes, keepdims=True)
        squares = (centered * centered).sum(axis=axes, keepdims=keepdim)
        out = (squares / builtins.max(dof, 0)).astype(data.dtype, copy=False)
    return data, axes, builtins.max(dof, 0), out


def _var_grad(g, x, axes, dof):
    """d var / dx = 2 (x - mean) / dof, times ``g`` (in the kept shape)."""
    n = _count(dual.data(x).shape, axes)
    mean = dual.sum(x, axis=axes, keepdims=True) / n if n else x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return g * (2.0 / dof if dof else math.inf) * (x - mean)


class VarBackward0(Node):
    """Gradient of ``var``."""
    rule = "self: grad * 2 * (self - mean) / (n - correction)"

    __slots__ = ("axes", "dof", "in_shape", "keepdim")

    def backward(self, g):
        (x,) = self.saved(g)
        g = _kept(g, self.in_shape, self.axes, self.keepdim)
        return (_var_grad(g, x, self.axes, self.dof),)


class StdBackward0(Node):
    """Gradient of ``std``: ``var``'s, divided by ``2 std``; zero where ``std`` is zero."""
    rule = "self: grad * (self - mean) / ((n - correction) * result)"
    why_nonfinite = "std of constant values: divides by result = 0"

    __slots__ = ("axes", "dof", "in_shape", "keepdim")

    def backward(self, g):
        x, out = self.saved(g)
        zero = dual.data(out) == 0
        g = _where(zero, 0.0, g / (2.0 * _where(zero, 1.0, out)))
        g = _kept(g, self.in_shape, self.axes, self.keepdim)
        return (_var_grad(g, x, self.axes, self.dof),)


def var(input: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """Variance over ``dim`` (all by default) with Bessel's ``correction`` (1 unless
    ``unbiased=False`` or ``correction=0``)."""
    dim, keepdim, correction = _var_args("var", dim, unbiased, keepdim, correction)
    data, axes, dof, out = _var_forward("var", input, dim, keepdim, correction)
    return _record(VarBackward0, input, out, save_input=True, in_shape=data.shape, axes=axes,
                   keepdim=keepdim, dof=dof)


def std(input: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """Standard deviation: the square root of :func:`var`, same arguments."""
    dim, keepdim, correction = _var_args("std", dim, unbiased, keepdim, correction)
    data, axes, dof, out = _var_forward("std", input, dim, keepdim, correction)
    out = get_array_module(out).sqrt(out)
    return _record(StdBackward0, input, out, save_input=True, save_output=True,
                   in_shape=data.shape, axes=axes, keepdim=keepdim, dof=dof)


# -- norm ------------------------------------------------------------------------------------------
def _norm_order(p, dim):
    if p == "fro":
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dim))
        return 2.0
    if isinstance(p, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")  # noqa: TRY004 - torch's type
    return float(p)


class LinalgVectorNormBackward0(Node):
    """Gradient of a vector p-norm; 0 (PyTorch's subgradient) where the norm is 0."""
    rule = "self: grad * self * |self|**(ord - 2) / result**(ord - 1)"
    why_nonfinite = "norm of a zero vector: self / result"
    fix_nonfinite = "add eps inside the norm: (x * x).sum().add(eps).sqrt()"

    __slots__ = ("axes", "in_shape", "keepdim", "ord")

    def backward(self, g):
        p = self.ord
        if p == 0:
            return (None,)  # a count of nonzeros: PyTorch leaves the gradient undefined
        x, out = self.saved(g)
        xd = dual.data(x)
        g = _kept(g, self.in_shape, self.axes, self.keepdim)
        out = _kept(out, self.in_shape, self.axes, self.keepdim)
        if p == 1:
            return (g * dual.sign(x),)
        if math.isinf(p):
            mask = dual.abs(xd) == dual.data(out)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                weights = mask / mask.sum(axis=self.axes, keepdims=True)
            return (_weighted(g * dual.sign(x), weights),)
        # Safe denominators keep the masked branch finite, so double backward has no NaN either.
        out_safe = _where(dual.data(out) == 0, 1.0, out)
        if p == 2:
            return (g * x / out_safe,)
        abs_safe = _where(xd == 0, 1.0, dual.abs(x))
        return (g * dual.sign(x) * (abs_safe / out_safe) ** (p - 1),)


def _check_inf_norm_nonempty(shape, dim, order) -> None:
    name = "inf" if order > 0 else "-inf"
    if dim is None or not isinstance(dim, int) and len(dim) == 0:
        if math.prod(shape) == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty "
                               "tensor because the operation does not have an identity")
        return
    for d in (dim,) if isinstance(dim, int) else dim:
        if shape and shape[d] == 0:  # PyTorch's message lacks the space before "because"
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the dimension "
                               f"{d}because this dimension is empty and the operation does not "
                               "have an identity")


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (all by default): ``p`` a number, ``inf``, ``-inf`` or
    ``'fro'`` (the 2-norm).

    >>> import gradnb
    >>> gradnb.tensor([3., 4.]).norm()
    tensor(5.)
    """
    order = _norm_order(p, dim)
    data = _as_dtype(input._data, dtype)
    _require_float(data, "linalg.vector_norm: Expected a floating point or complex tensor as "
                   f"input. Got {scalar_type_name(data.dtype)}")
    axes = _reduced_axes(dim, data.ndim)
    xp = get_array_module(data)
    magnitude = xp.abs(data)
    if math.isinf(order):
        _check_inf_norm_nonempty(data.shape, dim, order)
        out = (magnitude.max if order > 0 else magnitude.min)(axis=axes, keepdims=keepdim)
    elif order == 0:
        out = (magnitude != 0).sum(axis=axes, keepdims=keepdim).astype(data.dtype)
    elif order == 1:
        out = magnitude.sum(axis=axes, keepdims=keepdim)
    elif order == 2:
        out = xp.sqrt((magnitude * magnitude).sum(axis=axes, keepdims=keepdim))
    else:
        # A negative order meets 0 ** -p = inf at zeros, and the norm is then 0, silently.
        with np.errstate(divide="ignore", over="ignore"):
            out = ((magnitude ** order).sum(axis=axes, keepdims=keepdim)) ** (1.0 / order)
    out = out.astype(data.dtype, copy=False)
    return _record(LinalgVectorNormBackward0, input, out, save_input=True, save_output=True,
                   in_shape=data.shape, axes=axes, keepdim=keepdim, ord=order)


# -- logsumexp --------------------------------------------------------------------------------------
class LogsumexpBackward0(Node):
    """Gradient of ``logsumexp``: the softmax of the input over the reduced dims."""
    rule = "self: grad * exp(self - result)"

    __slots__ = ("axes", "in_shape", "keepdim")

    def backward(self, g):
        x, out = self.saved(g)
        g = _kept(g, self.in_shape, self.axes, self.keepdim)
        out = _kept(out, self.in_shape, self.axes, self.keepdim)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf: NaN, as in PyTorch
            return (g * dual.exp(x - out),)


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow (integers as floats)."""
    data = input._data
    if data.dtype.kind not in "fc":
        data = data.astype(_dtype.get_default_dtype().np)
    axes = _reduced_axes(dim, data.ndim)
    xp = get_array_module(data)
    # Shift by the maximum so exp never overflows; an infinite maximum would make inf - inf.
    if _count(data.shape, axes):
        shift = data.max(axis=axes, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0)
    else:
        shift = xp.zeros(_kept_shape(data.shape, axes), dtype=data.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0) is -inf for an empty slice
        out = xp.log(xp.exp(data - shift).sum(axis=axes, keepdims=True)) + shift
    if not keepdim:
        out = out.reshape(tuple(n for i, n in enumerate(data.shape) if i not in axes))
    return _record(LogsumexpBackward0, input, out.astype(data.dtype, copy=False),
                   save_input=True, save_output=True, in_shape=data.shape, axes=axes,
                   keepdim=keepdim)


# -- median ------------------------------------------------------------------------------------------
class MedianBackward0(Node):
    """Gradient of a full ``median``: shared evenly among the elements equal to it."""
    rule = "self: grad to the entry that is the median"

    __slots__ = ()

    def backward(self, g):
        x, out = (dual.data(v) for v in self.saved(g))
        mask = _nan_aware_equal(x, out)
        return (_weighted(g, mask / mask.sum()),)


class MedianBackward1(MaxBackward0):
    """Gradient of ``median(dim)``: all of it to the returned index."""
    rule = "self: grad to the index of the median along dim"

    __slots__ = ()


def _lower_median(data, axis: int):
    """Indices (kept dims) of the lower median along ``axis``; a NaN anywhere wins, as the
    first NaN."""
    xp = get_array_module(data)
    order = xp.argsort(data, axis=axis, kind="stable")
    k = (data.shape[axis] - 1) // 2
    index = xp.take(order, xp.asarray([k]), axis=axis)
    nan = xp.isnan(data) if data.dtype.kind == "f" else None
    if nan is not None and nan.any():
        has_nan = nan.any(axis=axis, keepdims=True)
        index = xp.where(has_nan, xp.argmax(nan, axis=axis, keepdims=True), index)
    return index.astype(_dtype.int64.np)


def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median of all elements; with ``dim``, ``(values, indices)`` along it."""
    data = input._data
    if data.dtype.kind == "b":
        raise NotImplementedError('"median_cpu" not implemented for \'Bool\'')
    xp = get_array_module(data)
    if dim is None:
        flat = data.reshape(-1)
        if data.size == 0:
            out = xp.asarray(xp.nan, dtype=data.dtype)
        else:
            out = xp.take(flat, _lower_median(flat, 0)).reshape(())
        return _record(MedianBackward0, input, out, save_input=True, save_output=True)
    axis = _single_dim("median", dim, data.ndim)
    if data.ndim == 0:
        indices, values = xp.zeros((), dtype=_dtype.int64.np), data.copy()
    else:
        _check_nonempty("median", data.shape, (axis,))
        indices = _lower_median(data, axis)
        values = xp.take_along_axis(data, indices, axis=axis)
        if not keepdim:
            indices, values = indices.squeeze(axis), values.squeeze(axis)
    values_t = _record(MedianBackward1, input, values, consts=(indices,), in_shape=data.shape,
                       axis=axis, keepdim=keepdim)
    return return_types.median(values_t, wrap(indices))


# -- scans ------------------------------------------------------------------------------------------
def _reverse_cumsum(g, axis):
    return _on(lambda t: flip(cumsum(flip(t, axis), axis), axis), g)


class CumsumBackward0(Node):
    """Gradient of ``cumsum``: the cumulative sum of ``g`` taken from the end."""
    rule = "self: reversed cumsum of grad along dim"

    __slots__ = ("axis",)

    def backward(self, g):
        if len(g.shape) == 0:
            return (g,)
        return (_reverse_cumsum(g, self.axis),)


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Cumulative sum along ``dim`` (integers and bools accumulate as int64)."""
    data = input._data
    axis = _single_dim("cumsum", dim, data.ndim)
    out_dtype = _integral_to_int64(data, dtype)
    out = data.cumsum(axis=axis, dtype=out_dtype) if data.ndim else data.astype(
        out_dtype or data.dtype)
    return _record(CumsumBackward0, input, out, axis=axis)


class CumprodBackward0(Node):
    """Gradient of ``cumprod``, exact with zeros in the input.

    Without zeros, ``d out_j / d x_k = out_j / x_k``. With zeros, a first-order backward works on
    arrays: before the first zero of a slice the same rule holds; at the first zero the products
    run over the slice with that zero replaced by one; after it every ``out_j`` contains the zero,
    so the gradient is 0. Under ``create_graph`` that masking would cut second derivatives through
    the zero, so the rule is instead written as a recurrence that is smooth everywhere.
    """
    rule = "self: reversed cumsum of grad * result, divided by self"

    __slots__ = ("axis",)

    def backward(self, g):
        x, out = self.saved(g)
        if len(g.shape) == 0:
            return (g,)
        axis = self.axis
        xd = dual.data(x)
        zeros = xd == 0
        if not zeros.any():
            return (_reverse_cumsum(g * out, axis) / x,)
        if isinstance(g, Tensor):
            return (_cumprod_grad_by_recurrence(g, x, axis),)
        zeros_so_far = get_array_module(xd).cumsum(zeros, axis=axis)
        before = zeros_so_far == 0
        first_zero = zeros & (zeros_so_far == 1)
        grad_before = _reverse_cumsum(g * out, axis) / _where(before, x, 1.0)
        skipping_zero = _on(cumprod, _where(first_zero, 1.0, x), axis)
        grad_at_zero = _reverse_cumsum(g * skipping_zero, axis)
        return (_where(before, grad_before, _where(first_zero, grad_at_zero, 0.0)),)


def _cumprod_grad_by_recurrence(g: Tensor, x: Tensor, axis: int) -> Tensor:
    """``grad_k = (prod_{i<k} x_i) * t_k`` with ``t_k = g_k + x_{k+1} t_{k+1}``: no division, so
    it is differentiable at zeros too (one small op per position along ``axis``)."""
    n = x.shape[axis]
    tails = [narrow(g, axis, n - 1, 1)]
    for k in range(n - 2, -1, -1):
        tails.append(narrow(g, axis, k, 1) + narrow(x, axis, k + 1, 1) * tails[-1])
    return _exclusive_cumprod(x, axis, False) * cat(tails[::-1], axis)


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Cumulative product along ``dim`` (integers and bools accumulate as int64)."""
    data = input._data
    axis = _single_dim("cumprod", dim, data.ndim)
    out_dtype = _integral_to_int64(data, dtype)
    out = data.cumprod(axis=axis, dtype=out_dtype) if data.ndim else data.astype(
        out_dtype or data.dtype)
    return _record(CumprodBackward0, input, out, save_input=True, save_output=True, axis=axis)


# -- logical reductions (no gradient) ------------------------------------------------------------------
def _logical(name, input, dim, keepdim):
    data = input._data
    axes = normalize_dims(dim, data.ndim)  # here, unlike in sum, dim=() reduces nothing
    out = getattr(data, name)(axis=axes, keepdims=keepdim)
    if data.dtype == _dtype.uint8.np:  # PyTorch keeps uint8 for uint8 inputs
        out = out.astype(data.dtype)
    return wrap(out)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """True if every element (over ``dim``) is nonzero."""
    return _logical("all", input, dim, keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """True if some element (over ``dim``) is nonzero."""
    return _logical("any", input, dim, keepdim)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """Number of nonzero elements (over ``dim``), as int64."""
    data = input._data
    axes = _reduced_axes(dim, data.ndim)
    return wrap((data != 0).sum(axis=axes, dtype=_dtype.int64.np))


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None):
    """The distinct values (sorted), optionally with inverse indices and counts; no gradient,
    as in PyTorch."""
    data = input._data
    xp = dual.xp_of(data)
    axis = None if dim is None else normalize_dims(dim, data.ndim)[0]
    values, inverse, counts = xp.unique(data, return_inverse=True, return_counts=True, axis=axis)
    result = [wrap(values)]
    if return_inverse:
        shape = data.shape if axis is None else (data.shape[axis],)
        result.append(wrap(inverse.reshape(shape).astype(_dtype.int64.np)))
    if return_counts:
        result.append(wrap(counts.astype(_dtype.int64.np)))
    return result[0] if len(result) == 1 else tuple(result)


TENSOR_METHODS = {name: globals()[name] for name in __all__ if name != "return_types"}
