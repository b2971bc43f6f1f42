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

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module, silent
from .._core.graph import Node, switches
from .._core.record import record, would_record, wrap
from . import dual
from ._args import check_kernel_dtype, check_tensor_or_number, scalar_type_name
from ._common import Tensor
from ._out import OUT_DTYPE_MATCH_INPUT, accepts_out
from ._refusals import refuse
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
    "unique_consecutive",
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
    if data.dtype.kind not in "fcV":
        raise RuntimeError(message)


def _as_dtype(data, dtype):
    return data if dtype is None else data.astype(_dtype.as_dtype(dtype).np, copy=False)


def _integral_to_int64(data, dtype):
    """PyTorch's accumulation dtype: an explicit ``dtype``, else int64 for integers and bools."""
    if dtype is not None:
        return _dtype.as_dtype(dtype).np
    if data.dtype.kind in "bui":
        return _dtype.int64.np
    if data.dtype.kind == "V":  # bfloat16 sums in float32 (rounded once after), as PyTorch's
        return _F32
    return None


_F32 = np.dtype(np.float32)


# -- recording ------------------------------------------------------------------------------------
_UINT64 = 1 << 64


def shown_dim(dim):
    """A dim as PyTorch's ``grad_fn._saved_dim`` shows it: as it was given, a negative one read
    as an unsigned 64-bit integer (``-1`` shows as ``18446744073709551615``)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return dim % _UINT64
    return tuple(int(d) % _UINT64 for d in dim)


def shown_dims(dim):
    """``shown_dim`` for a list-of-dims argument: an int shows as a 1-tuple."""
    return shown_dim((dim,) if isinstance(dim, int) else dim)


def _record(cls, input, out, **attrs) -> Tensor:
    """``record`` for a reduction of ``input`` (the class declares what it saves). An integer
    result has no gradient: from an input that requires grad (``dtype=int64``) PyTorch refuses
    to record it."""
    if not _is_differentiable(out):
        if would_record((input,)):
            raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(out.dtype)}")
        return wrap(out)
    return record(cls, (input,), out, attrs=attrs or None)


def record_picked(cls, input, values, indices, dim: int, axis: int, keepdim: bool = True):
    """``(values, indices)`` of an op that picks entries of ``input`` along ``axis`` (``dim`` as
    given), recorded with a :class:`PickedBackward` node that saves ``indices``."""
    indices = wrap(indices)
    if not _is_differentiable(values):
        return wrap(values), indices
    out = record(cls, (input,), values, save=(indices,),
                 attrs={"dim": shown_dim(dim), "axis": axis, "keepdim": keepdim,
                        "self_sym_sizes": input._data.shape})
    return out, indices


def _is_differentiable(out) -> bool:
    return out.dtype.kind in "fcV"


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


PICKED_SAVES = ("dim", "indices", "keepdim", "self_sym_sizes")


class PickedBackward(Node):
    """Gradient of values picked from ``self`` at ``indices`` along ``dim`` (``max(dim)``,
    ``median(dim)``, ``sort``, ``topk``...): the gradient written into zeros at those indices
    (PyTorch's ``value_selecting_reduction_backward``). Subclasses name the op and declare what
    it saves (``PICKED_SAVES``, less ``keepdim`` for ``sort`` and ``topk``)."""
    rule = "self: zeros with grad written at indices along dim"

    __slots__ = ("axis", "dim", "keepdim", "self_sym_sizes")
    inputs = ("self",)
    outputs = ("values", "indices")

    def backward(self, g):
        shape = self.self_sym_sizes
        if not shape:
            return (g,)
        from .indexing import scatter_into_zeros  # (indexing imports this module's users)

        (indices,) = self.saved(g)
        idx = dual.data(indices)
        axis = self.axis
        xp = get_array_module(idx)
        if not self.keepdim:
            idx = xp.expand_dims(idx, axis)
            g = dual.reshape(g, idx.shape)
        key = []
        for d, n in enumerate(idx.shape):
            if d == axis:
                key.append(idx)
            else:
                key.append(xp.arange(n).reshape((1,) * d + (n,) + (1,) * (idx.ndim - d - 1)))
        return (scatter_into_zeros(shape, tuple(key), g, accumulate=False),)


# -- sum and mean ---------------------------------------------------------------------------------
class SumBackward0(Node):
    """Gradient of a full sum: the scalar gradient broadcast to the input's shape."""
    rule = "self: grad.expand_symint(self_sym_sizes)"

    __slots__ = ("self_sym_sizes",)
    inputs = ("self",)
    saves = ("self_sym_sizes",)

    def backward(self, g):
        return (dual.expand(g, self.self_sym_sizes),)


class SumBackward1(Node):
    """Gradient of a sum over ``dim``."""
    rule = "self: sum_backward(grad, self_sym_sizes, dim, keepdim)"

    __slots__ = ("axes", "dim", "keepdim", "self_sym_sizes")
    inputs = ("self",)
    saves = ("dim", "keepdim", "self_sym_sizes")

    def backward(self, g):
        return (expand_reduced(g, self.self_sym_sizes, self.axes, self.keepdim),)


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
        if out_dtype is _F32 and dtype is None:
            out = np.asarray(out).astype(data.dtype)
        return _record(SumBackward0, input, out)
    axes = _reduced_axes(dim, data.ndim)
    with silent():  # inf - inf is NaN, silently
        out = data.sum(axis=axes, keepdims=keepdim, dtype=out_dtype)
    if out_dtype is _F32 and dtype is None:
        out = np.asarray(out).astype(data.dtype)
    return _record(SumBackward1, input, out, axes=axes, dim=shown_dims(dim), keepdim=keepdim)


class MeanBackward0(Node):
    """Gradient of a full mean: ``g / numel`` everywhere."""
    rule = "self: grad.expand_symint(self_sym_sizes) / self_sym_numel"

    __slots__ = ("self_sym_numel", "self_sym_sizes")
    inputs = ("self",)
    saves = ("self_sym_numel", "self_sym_sizes")

    def backward(self, g):
        # numel is 0 only for an empty input, whose gradient is empty whatever we divide by
        return (dual.expand(g / builtins.max(self.self_sym_numel, 1), self.self_sym_sizes),)


class MeanBackward1(Node):
    """Gradient of a mean over ``dim``."""
    rule = "self: mean_backward(grad, self_sym_sizes, dim, self_sym_numel, keepdim)"

    __slots__ = ("axes", "dim", "keepdim", "self_sym_numel", "self_sym_sizes")
    inputs = ("self",)
    saves = ("dim", "keepdim", "self_sym_numel", "self_sym_sizes")

    def backward(self, g):
        shape = self.self_sym_sizes
        count = builtins.max(_count(shape, self.axes), 1)  # 0: the gradient is empty anyway
        return (expand_reduced(g / count, shape, self.axes, self.keepdim),)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Arithmetic mean (floating-point tensors only, as in PyTorch)."""
    data = input._data
    if dtype is not None:
        if _dtype.as_dtype(dtype).np.kind not in "fcV":
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
        acc = _F32 if data.dtype.kind == "V" else None  # bfloat16: float32 accumulation
        if dim is None:
            out = xp.asarray(data.mean(dtype=acc), dtype=data.dtype)
            return _record(MeanBackward0, input, out)
        axes = _reduced_axes(dim, data.ndim)
        out = data.mean(axis=axes, keepdims=keepdim, dtype=acc).astype(data.dtype, copy=False)
    return _record(MeanBackward1, input, out, axes=axes, dim=shown_dims(dim), keepdim=keepdim)


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
    rule = "self: evenly_distribute_backward(grad, self, result)"

    __slots__ = ()
    inputs = ("self",)
    saves = ("self", "result")

    def backward(self, g):
        x, out = (dual.data(v) for v in self.saved(g))
        mask = _nan_aware_equal(x, out)
        return (_weighted(g, mask / mask.sum()),)


class MinBackward1(MaxBackward1):
    """Gradient of a full ``min`` (same rule as ``max``)."""

    __slots__ = ()


class MaxBackward0(PickedBackward):
    """Gradient of ``max(dim)``: all of it to the index that was returned."""
    rule = "self: value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim)"

    __slots__ = ()
    saves = PICKED_SAVES


class MinBackward0(PickedBackward):
    """Gradient of ``min(dim)`` (same rule as ``max(dim)``)."""
    rule = "self: value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim)"

    __slots__ = ()
    saves = PICKED_SAVES


def _extreme(name, full_cls, dim_cls, input, dim, keepdim):
    data = input._data
    if data.dtype.kind == "c":  # complex numbers have no order (PyTorch's two refusals)
        check_kernel_dtype(f"{name}_all", data.dtype, "c" if dim is None else "")
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if data.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        out = getattr(data, name)()
        return _record(full_cls, input, out)
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
    return getattr(return_types, name)(*record_picked(dim_cls, input, values, indices, dim, axis,
                                                      keepdim))


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
    rule = "self: scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), " \
        "restore_reduced_dims(result, dim, keepdim) == self, dim)"

    __slots__ = ("axes", "dim", "keepdim")
    inputs = ("self",)
    saves = ("dim", "keepdim", "self", "result")

    def backward(self, g):
        x, out = (dual.data(v) for v in self.saved(g))
        shape = x.shape
        out = out.reshape(_kept_shape(shape, self.axes))
        mask = x == out  # a NaN result matches nothing: 0/0, a NaN gradient, as in PyTorch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            weights = mask / mask.sum(axis=self.axes, keepdims=True)
        return (_weighted(_kept(g, shape, self.axes, self.keepdim), weights),)


class AminBackward0(AmaxBackward0):
    """Gradient of ``amin`` (same rule as ``amax``)."""

    __slots__ = ()


def _amax_like(name, cls, input, dim, keepdim):
    data = input._data
    check_kernel_dtype(f"{name[1:]}_values_cpu", data.dtype, "c")
    axes = _reduced_axes(dim, data.ndim)
    if data.size == 0 and (dim is None or not isinstance(dim, int) and len(dim) == 0):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in (dim,) if isinstance(dim, int) else tuple(dim or ()):
        if data.ndim and data.shape[d] == 0:  # PyTorch names the dim as it was given here
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    out = getattr(data, "max" if name == "amax" else "min")(axis=axes, keepdims=keepdim)
    return _record(cls, input, out, axes=axes, dim=shown_dims(dim), keepdim=keepdim)


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
    if data.dtype.kind in "bc":
        kind = "bool" if data.dtype.kind == "b" else "complex"
        raise RuntimeError(f"{name}(): does not support {kind} input")
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
    rule = "self: prod_backward(grad, self.to(grad.scalar_type()), result)"

    __slots__ = ()
    inputs = ("self",)
    saves = ("self", "result")

    def backward(self, g):
        x, out = map(dual.conj, self.saved(g))  # complex: g * conj(d out / d x)
        return (_prod_grad(g, x, out, None),)


class ProdBackward1(Node):
    """Gradient of a product along one dim (zero-safe)."""
    rule = "self: grad * result / self along dim (others' product where self == 0)"

    __slots__ = ("axis", "dim", "keepdim")
    inputs = ("self",)
    saves = ("dim", "keepdim", "self", "result")

    def backward(self, g):
        x, out = map(dual.conj, self.saved(g))  # complex: g * conj(d out / d x)
        shape = tuple(x.shape)
        if not shape:
            return (g,)
        g = _kept(g, shape, (self.axis,), self.keepdim)
        out = _kept(out, shape, (self.axis,), self.keepdim)
        return (_prod_grad(g, x, out, self.axis),)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one ``dim`` (integers multiply as int64)."""
    data = input._data
    out_dtype = _integral_to_int64(data, dtype)
    if dim is None:
        out = data.prod(dtype=out_dtype)
        if out_dtype is _F32 and dtype is None:
            out = np.asarray(out).astype(data.dtype)
        return _record(ProdBackward0, input, out)
    axis = _single_dim("prod", dim, data.ndim)
    axes = (axis,) if data.ndim else ()
    out = data.prod(axis=axes, keepdims=keepdim, dtype=out_dtype)
    if out_dtype is _F32 and dtype is None:
        out = out.astype(data.dtype)
    return _record(ProdBackward1, input, out, axis=axis, dim=shown_dim(dim), keepdim=keepdim)


# -- var and std -----------------------------------------------------------------------------------
def _var_args(name, dim, unbiased, keepdim, correction):
    """Resolve PyTorch's overloads: ``var(unbiased)``, ``var(dim, unbiased, keepdim)`` and
    ``var(dim, *, correction, keepdim)``."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'")
    # What PyTorch's ``_saved_correction`` shows: the correction or ``unbiased`` as given; the
    # overload with a dim reads ``unbiased`` as True by default, the one without as None.
    if correction is not None:
        shown = correction
    elif unbiased is not None:
        shown = int(unbiased)
    else:
        shown = None if dim is None else 1
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, keepdim, correction, shown


def _var_forward(name, input, dim, keepdim, correction):
    """``(data, axes, dof, var)``; the variance of a complex tensor is that of its real and
    imaginary parts together (the mean of ``|x - mean|**2``), real, as in PyTorch."""
    data = input._data
    _require_float(data, f"{'std and var' if name in ('std', 'var') else name} only support "
                   "floating point and complex dtypes")
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
        if centered.dtype.kind == "c":
            centered = get_array_module(data).abs(centered)
        squares = (centered * centered).sum(axis=axes, keepdims=keepdim)
        out = (squares / builtins.max(dof, 0)).astype(_dtype.real_of(data.dtype), copy=False)
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

    __slots__ = ("axes", "correction", "dim", "dof", "keepdim")
    inputs = ("self",)
    saves = ("correction", "dim", "keepdim", "self")

    def backward(self, g):
        (x,) = self.saved(g)
        g = _kept(g, tuple(x.shape), self.axes, self.keepdim)
        return (_var_grad(g, x, self.axes, self.dof),)


class StdBackward0(Node):
    """Gradient of ``std``: ``var``'s, divided by ``2 std``; zero where ``std`` is zero."""
    rule = "self: grad * (self - mean) / ((n - correction) * result)"
    why_nonfinite = "std of constant values: divides by result = 0"

    __slots__ = ("axes", "correction", "dim", "dof", "keepdim")
    inputs = ("self",)
    saves = ("correction", "dim", "keepdim", "self", "result")

    def backward(self, g):
        x, out = self.saved(g)
        zero = dual.data(out) == 0
        g = _where(zero, 0.0, g / (2.0 * _where(zero, 1.0, out)))
        g = _kept(g, tuple(x.shape), self.axes, self.keepdim)
        return (_var_grad(g, x, self.axes, self.dof),)


def var(input: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """Variance over ``dim`` (all by default) with Bessel's ``correction`` (1 unless
    ``unbiased=False`` or ``correction=0``)."""
    dim, keepdim, correction, shown = _var_args("var", dim, unbiased, keepdim, correction)
    _, axes, dof, out = _var_forward("var", input, dim, keepdim, correction)
    return _record(VarBackward0, input, out, axes=axes, keepdim=keepdim, dof=dof,
                   dim=shown_dims(dim), correction=shown)


def std(input: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """Standard deviation: the square root of :func:`var`, same arguments."""
    dim, keepdim, correction, shown = _var_args("std", dim, unbiased, keepdim, correction)
    _, axes, dof, out = _var_forward("std", input, dim, keepdim, correction)
    out = get_array_module(out).sqrt(out)
    return _record(StdBackward0, input, out, axes=axes, keepdim=keepdim, dof=dof,
                   dim=shown_dims(dim), correction=shown)


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

    __slots__ = ("axes", "dim", "keepdim", "ord")
    inputs = ("self",)
    saves = ("dim", "keepdim", "ord", "self", "result")

    def backward(self, g):
        if self.ord == 0:
            return (None,)  # a count of nonzeros: PyTorch leaves the gradient undefined
        x, out = self.saved(g)
        return (_norm_grad(g, x, out, self.ord, self.axes, self.keepdim),)


def _norm_grad(g, x, out, p: float, axes, keepdim: bool):
    """The gradient of the ``p``-norm ``out`` of ``x`` over ``axes`` (``p`` not 0)."""
    xd = dual.data(x)
    g = _kept(g, xd.shape, axes, keepdim)
    out = _kept(out, xd.shape, axes, keepdim)
    if p == 1:
        return g * _sgn(x)
    if math.isinf(p):
        mask = dual.abs(xd) == dual.data(out)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            weights = mask / mask.sum(axis=axes, keepdims=True)
        return _weighted(g * _sgn(x), weights)
    # Safe denominators keep the masked branch finite, so double backward has no NaN either.
    out_safe = _where(dual.data(out) == 0, 1.0, out)
    if p == 2:
        return g * x / out_safe
    abs_safe = _where(xd == 0, 1.0, dual.abs(x))
    return g * _sgn(x) * (abs_safe / out_safe) ** (p - 1)


def _sgn(x):
    """``x / |x|`` (0 at 0): the sign of a real value, the direction of a complex one."""
    if isinstance(x, Tensor) and x._data.dtype.kind == "c":
        return x.sgn()
    return dual.sign(x)  # NumPy's sign of a complex array is already z / |z|


class DistBackward0(Node):
    """Gradient of ``dist``: the norm's gradient at ``self - other``, negated for ``other``."""
    rule = "self: norm_backward(grad, self - other, p, result); other: -self's"
    why_nonfinite = "dist of equal tensors: (self - other) / result"

    __slots__ = ("p",)
    saves = ("other", "p", "self", "result")

    def backward(self, g):
        other, x, out = self.saved(g)
        p = float(self.p)
        if p == 0:
            return (None, None)  # a count of nonzeros: PyTorch leaves the gradient undefined
        diff = x - other
        grad = _norm_grad(g, diff, out, p, tuple(range(len(diff.shape))), False)
        return (grad, -grad)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast)."""
    out = norm(input.detach() - other.detach(), p)._data
    if not _is_differentiable(out):
        return wrap(out)
    return record(DistBackward0, (input, other), out, attrs={"p": p})


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
    check_norm_dtype("linalg.vector_norm", input._data.dtype, dtype)
    data = _as_dtype(input._data, dtype)
    axes = _reduced_axes(dim, data.ndim)
    xp = get_array_module(data)
    magnitude = xp.abs(data)
    if math.isinf(order):
        _check_inf_norm_nonempty(data.shape, dim, order)
        out = (magnitude.max if order > 0 else magnitude.min)(axis=axes, keepdims=keepdim)
    elif order == 0:
        out = (magnitude != 0).sum(axis=axes, keepdims=keepdim).astype(magnitude.dtype)
    elif order == 1:
        out = magnitude.sum(axis=axes, keepdims=keepdim)
    elif order == 2:
        out = xp.sqrt((magnitude * magnitude).sum(axis=axes, keepdims=keepdim))
    else:
        # A negative order meets 0 ** -p = inf at zeros, and the norm is then 0, silently.
        with np.errstate(divide="ignore", over="ignore"):
            out = ((magnitude ** order).sum(axis=axes, keepdims=keepdim)) ** (1.0 / order)
    out = out.astype(magnitude.dtype, copy=False)  # real: a complex tensor's norm is real
    return _record(LinalgVectorNormBackward0, input, out, axes=axes, keepdim=keepdim, ord=order,
                   dim=shown_dims(dim))


def check_norm_dtype(name: str, input_dtype, dtype) -> None:
    """PyTorch's checks of a norm's input dtype and of its ``dtype`` argument (the one its
    input is cast to): floating point or complex, complex exactly when the input is, and no
    narrower than the input."""
    input_dtype = np.dtype(input_dtype)
    if input_dtype.kind not in "fcV":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(input_dtype)}")
    if dtype is None:
        return
    target = _dtype.as_dtype(dtype)
    if not (target.is_floating_point or target.is_complex):
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(target.np)}")
    if input_dtype.kind == "c" and not target.is_complex:
        raise RuntimeError(f"{name}: dtype should be complex for complex inputs, but got "
                           f"{scalar_type_name(target.np)}")
    if input_dtype.kind != "c" and target.is_complex:
        raise RuntimeError(f"{name}: dtype should be real for real inputs, but got "
                           f"{scalar_type_name(target.np)}")
    if not _widens(input_dtype, target.np):
        raise RuntimeError(f"{name}: the dtype of the input ({scalar_type_name(input_dtype)}) "
                           "should be convertible without narrowing to the specified dtype "
                           f"({scalar_type_name(target.np)})")


def _widens(src: np.dtype, dst: np.dtype) -> bool:
    """Whether ``src`` converts to ``dst`` (both floating point, or both complex) losing no
    precision (half and bfloat16 convert to neither other)."""
    if src == dst:
        return True
    if _dtype.is_bfloat16_np(src) or _dtype.is_bfloat16_np(dst):
        return not _dtype.is_bfloat16_np(dst) and dst.itemsize >= 4
    return np.promote_types(src, dst) == dst


class RenormBackward0(Node):
    """Gradient of ``renorm``: ``out = self * scale(norm)``, with the scale's own derivative
    through each slice's norm where the slice was rescaled."""
    rule = "self: renorm_backward(grad, self, p, dim, maxnorm)"

    __slots__ = ("axis", "dim", "maxnorm", "p")
    inputs = ("self",)
    saves = ("dim", "maxnorm", "p", "self")
    on_tensors = True

    def backward(self, g):
        from .elementwise import where

        (x,) = self.saved(g)
        others = tuple(i for i in range(x.ndim) if i != self.axis)
        p, maxnorm = float(self.p), self.maxnorm
        norms = norm(x, p, others, keepdim=True)
        rescaled = norms > maxnorm
        shifted = norms + 1e-7
        grad = g * where(rescaled, maxnorm / shifted, 1.0)
        d_scale = where(rescaled, -maxnorm / (shifted * shifted), 0.0)
        along_x = g * x.conj()  # the norm is real: its gradient takes Re(conj(x) g)
        if along_x.is_complex():
            along_x = along_x.real
        inner = sum(along_x * d_scale, others, keepdim=True)
        return (grad + _norm_grad(inner, x, norms, p, others, True),)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` rescaled to it."""
    data = input._data
    axis = _single_dim("renorm", dim, data.ndim)
    others = tuple(i for i in range(data.ndim) if i != axis)
    norms = norm(input.detach(), p, others, keepdim=True)._data
    xp = get_array_module(data)
    with silent():
        scale = xp.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        out = (data * scale).astype(data.dtype, copy=False)
    return _record(RenormBackward0, input, out, axis=axis, dim=shown_dim(dim), maxnorm=maxnorm,
                   p=p)


# -- logsumexp --------------------------------------------------------------------------------------
class LogsumexpBackward0(Node):
    """Gradient of ``logsumexp``: the softmax of the input over the reduced dims."""
    rule = "self: logsumexp_backward(grad, self, result, dim, keepdim)"

    __slots__ = ("axes", "dim", "keepdim")
    inputs = ("self",)
    saves = ("dim", "keepdim", "self", "result")

    def backward(self, g):
        x, out = self.saved(g)
        shape = tuple(x.shape)
        g = _kept(g, shape, self.axes, self.keepdim)
        out = _kept(out, shape, self.axes, self.keepdim)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf: NaN, as in PyTorch
            return (g * dual.conj(dual.exp(x - out)),)


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow (integers as floats)."""
    data = input._data
    if data.dtype.kind not in "fcV":
        data = data.astype(_dtype.get_default_dtype().np)
    axes = _reduced_axes(dim, data.ndim)
    xp = get_array_module(data)
    # Shift by the maximum (of the real parts, for complex: PyTorch's choice, which fixes the
    # branch of the imaginary part) so exp never overflows; an infinite maximum would make
    # inf - inf.
    if _count(data.shape, axes):
        shift = (data.real if data.dtype.kind == "c" else data).max(axis=axes, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0)
    else:
        shift = xp.zeros(_kept_shape(data.shape, axes), dtype=data.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0) is -inf for an empty slice
        out = xp.log(xp.exp(data - shift).sum(axis=axes, keepdims=True)) + shift
    if not keepdim:
        out = out.reshape(tuple(n for i, n in enumerate(data.shape) if i not in axes))
    return _record(LogsumexpBackward0, input, out.astype(data.dtype, copy=False),
                   axes=axes, dim=shown_dims(dim), keepdim=keepdim)


# -- median ------------------------------------------------------------------------------------------
class MedianBackward0(Node):
    """Gradient of a full ``median``: shared evenly among the elements equal to it."""
    rule = "self: evenly_distribute_backward(grad, self, result)"

    __slots__ = ()
    inputs = ("self",)
    saves = ("self", "result")

    def backward(self, g):
        x, out = (dual.data(v) for v in self.saved(g))
        mask = _nan_aware_equal(x, out)
        return (_weighted(g, mask / mask.sum()),)


class MedianBackward1(PickedBackward):
    """Gradient of ``median(dim)``: all of it to the returned index."""
    rule = "self: value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim)"

    __slots__ = ()
    saves = PICKED_SAVES


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


def empty_median(data):
    """The median of no elements: NaN, cast to the dtype as PyTorch's kernel casts it (the
    lowest int64 or int32, 0 for narrower integers, True for bool)."""
    with silent():
        return get_array_module(data).asarray(math.nan).astype(data.dtype)


def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median of all elements; with ``dim``, ``(values, indices)`` along it."""
    data = input._data
    xp = get_array_module(data)
    if dim is None:
        refuse("median", data)
        flat = data.reshape(-1)
        if data.size == 0:
            out = empty_median(data)
        else:
            out = xp.take(flat, _lower_median(flat, 0)).reshape(())
        return _record(MedianBackward0, input, out)
    axis = _single_dim("median", dim, data.ndim)
    if data.ndim:
        _check_nonempty("median", data.shape, (axis,))
    refuse("median_dim", data)
    if data.ndim == 0:
        indices, values = xp.zeros((), dtype=_dtype.int64.np), data.copy()
    else:
        indices = _lower_median(data, axis)
        values = xp.take_along_axis(data, indices, axis=axis)
        if not keepdim:
            indices, values = indices.squeeze(axis), values.squeeze(axis)
    return return_types.median(*record_picked(MedianBackward1, input, values, indices, dim, axis,
                                              keepdim))


# -- scans ------------------------------------------------------------------------------------------
def _reverse_cumsum(g, axis):
    return _on(lambda t: flip(cumsum(flip(t, axis), axis), axis), g)


class CumsumBackward0(Node):
    """Gradient of ``cumsum``: the cumulative sum of ``g`` taken from the end."""
    rule = "self: cumsum_backward(grad.to(self.scalar_type()), dim)"

    __slots__ = ("axis", "dim")
    inputs = ("self",)
    saves = ("dim",)

    def backward(self, g):
        if len(g.shape) == 0:
            return (g,)
        return (_reverse_cumsum(g, self.axis),)


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Cumulative sum along ``dim`` (integers and bools accumulate as int64)."""
    data = input._data
    axis = _single_dim("cumsum", dim, data.ndim)
    out_dtype = _integral_to_int64(data, dtype)
    if data.ndim and out_dtype is not None:  # (a 0-d input is only copied)
        check_kernel_dtype("cumsum_out_cpu", out_dtype, "b")
    out = data.cumsum(axis=axis, dtype=out_dtype) if data.ndim else data.astype(
        out_dtype or data.dtype)
    if out_dtype is _F32 and dtype is None:
        out = out.astype(data.dtype)
    return _record(CumsumBackward0, input, out, axis=axis, dim=shown_dim(dim))


class CumprodBackward0(Node):
    """Gradient of ``cumprod``, exact with zeros in the input.

    Without zeros, ``d out_j / d x_k = out_j / x_k``. With zeros, a first-order backward works on
    arrays: before the first zero of a slice the same rule holds; at the first zero the products
    run over the slice with that zero replaced by one; after it every ``out_j`` contains the zero,
    so the gradient is 0. Under ``create_graph`` that masking would cut second derivatives through
    the zero, so the rule is instead written as a recurrence that is smooth everywhere.
    """
    rule = "self: cumprod_backward(grad.to(self.scalar_type()), self, dim, result)"

    __slots__ = ("axis", "dim")
    inputs = ("self",)
    saves = ("dim", "self", "result")

    def backward(self, g):
        # complex: every product is conjugated (cumprod of conj(x) is conj of the cumprod)
        x, out = map(dual.conj, self.saved(g))
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
    if data.ndim and out_dtype is not None:  # (a 0-d input is only copied)
        check_kernel_dtype("cumprod_out_cpu", out_dtype, "b")
    out = data.cumprod(axis=axis, dtype=out_dtype) if data.ndim else data.astype(
        out_dtype or data.dtype)
    if out_dtype is _F32 and dtype is None:
        out = out.astype(data.dtype)
    return _record(CumprodBackward0, input, out, axis=axis, dim=shown_dim(dim))


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


def _unique_axis(dim: int, shape) -> int:
    """``dim`` of ``unique(dim=...)``, checked as PyTorch checks it: a dimension to take slices
    along, and no empty dimension elsewhere."""
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = normalize_dims(dim, len(shape))[0]
    if builtins.any(n == 0 for i, n in enumerate(shape) if i != axis):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    return axis


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None):
    """The distinct values (sorted), optionally with inverse indices and counts; no gradient,
    as in PyTorch."""
    data = input._data
    refuse("unique" if dim is None else "unique_dim", data)
    xp = dual.xp_of(data)
    axis = None if dim is None else _unique_axis(dim, data.shape)
    values, inverse, counts = xp.unique(data, return_inverse=True, return_counts=True, axis=axis)
    result = [wrap(values)]
    if return_inverse:
        shape = data.shape if axis is None else (data.shape[axis],)
        result.append(wrap(inverse.reshape(shape).astype(_dtype.int64.np)))
    if return_counts:
        result.append(wrap(counts.astype(_dtype.int64.np)))
    return result[0] if len(result) == 1 else tuple(result)


class UniqueConsecutiveBackward0(Node):
    """PyTorch records this node on ``unique_consecutive``'s values but has no derivative for
    it: a backward that reaches it raises."""
    rule = "self: not implemented (backward raises NotImplementedError)"
    runs_user_code = True  # it raises by design: the engine holds leaf gradients back

    __slots__ = ()

    def backward(self, g):
        raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """``input`` with each run of equal consecutive values (or slices along ``dim``) kept once,
    optionally with the run each entry belongs to (``inverse``) and the run lengths
    (``counts``). NaN equals nothing, so each NaN is a run of its own, as in PyTorch."""
    data = input._data
    refuse("unique" if dim is None else "unique_dim", data)
    xp = dual.xp_of(data)
    if dim is None:
        rows, axis, inverse_shape = data.reshape(-1, 1), 0, data.shape
    else:
        axis = _unique_axis(dim, data.shape)
        rest = math.prod(n for i, n in enumerate(data.shape) if i != axis)
        rows = xp.moveaxis(data, axis, 0).reshape(data.shape[axis], rest)
        inverse_shape = (data.shape[axis],)
    starts = xp.ones(rows.shape[0], dtype=bool)
    if rows.shape[0] > 1:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = xp.flatnonzero(starts)
    values = data.reshape(-1)[first] if dim is None else xp.take(data, first, axis=axis)
    if would_record((input,)):
        switches.user_code = True  # the engine must look for nodes that can raise
    result = [record(UniqueConsecutiveBackward0, (input,), values)]
    if return_inverse:
        inverse = xp.cumsum(starts, dtype=np.int64) - 1
        result.append(wrap(inverse.reshape(inverse_shape)))
    if return_counts:
        result.append(wrap(xp.diff(xp.append(first, rows.shape[0])).astype(np.int64)))
    return result[0] if len(result) == 1 else tuple(result)


TENSOR_METHODS = {name: globals()[name] for name in __all__ if name != "return_types"}
