"""Sorting and order statistics: sort/argsort/msort, topk, kthvalue, nanmedian,
quantile/nanquantile.

Orders are computed on the raw array (NumPy's stable sort, NaN ordered as the largest value, as
in PyTorch); the values picked along a dim record PyTorch's own node (``SortBackward0``,
``TopkBackward0``...), which saves the indices and writes the gradient back at them.
"""

from __future__ import annotations

import functools

import numpy as np

from .._core.backend import get_array_module
from . import indexing as ix
from . import shape as sh
from ._args import scalar_type_name
from ._common import Tensor, wrap
from ._out import accepts_out
from ._refusals import refuse
from .pointwise import lerp
from .reductions import (
    PICKED_SAVES,
    MedianBackward0,
    PickedBackward,
    _check_nonempty,
    _record,
    _return_type,
    empty_median,
    record_picked,
    return_types,
)

__all__ = ["argsort", "bucketize", "kthvalue", "mode", "msort", "nanmedian", "nanquantile", "quantile",
           "searchsorted", "sort", "topk"]

for _name in ("sort", "topk", "kthvalue", "mode", "nanmedian"):
    setattr(return_types, _name, _return_type(_name))


def _dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _check_reduced(input: Tensor, name: str, d: int) -> None:
    """A selection along dim ``d`` needs something to select from (checked before the dtype)."""
    if input.dim():
        _check_nonempty(name, input.shape, (d,))


def _order(data, axis: int, descending: bool):
    """Indices that sort ``data`` along ``axis`` (stable; NaN largest)."""
    xp = get_array_module(data)
    if data.dtype.kind == "b":
        data = data.astype(np.int8)
    if not descending:
        return xp.argsort(data, axis=axis, kind="stable")
    if data.dtype.kind == "f":
        key = xp.where(xp.isnan(data), -np.inf, -data)
        # -x maps a NaN-free tie order onto itself; NaN (largest) first, as in PyTorch
        return xp.argsort(key, axis=axis, kind="stable")
    if data.dtype.kind == "u":
        return xp.argsort(np.iinfo(data.dtype).max - data, axis=axis, kind="stable")
    return xp.argsort(-data.astype(np.int64), axis=axis, kind="stable")


_PICKED_RULE = "self: value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, " \
    "keepdim)"


class SortBackward0(PickedBackward):
    """Gradient of ``sort``: written back where each value came from."""
    rule = "self: value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, true)"

    __slots__ = ()
    saves = ("dim", "indices", "self_sym_sizes")


class SortBackward1(SortBackward0):
    """Gradient of ``sort(stable=...)`` (PyTorch's other overload; the same rule)."""

    __slots__ = ()


class TopkBackward0(SortBackward0):
    """Gradient of ``topk``: written back where each value came from, zeros elsewhere."""

    __slots__ = ()


class KthvalueBackward0(PickedBackward):
    """Gradient of ``kthvalue``: all of it to the returned index."""
    rule = _PICKED_RULE

    __slots__ = ()
    saves = PICKED_SAVES


class ModeBackward0(KthvalueBackward0):
    """Gradient of ``mode``: all of it to the returned index."""

    __slots__ = ()


class NanmedianBackward1(KthvalueBackward0):
    """Gradient of ``nanmedian(dim)``: all of it to the returned index."""

    __slots__ = ()


class NanmedianBackward0(MedianBackward0):
    """Gradient of a full ``nanmedian``: shared evenly among the elements equal to it."""

    __slots__ = ()


def _picked(cls, input, order, dim: int, d: int, keepdim: bool = True):
    """``(values, indices)`` of ``input`` at the indices ``order`` (kept dims) along ``d``."""
    data = input._data
    if data.ndim == 0:
        return record_picked(cls, input, data.copy(), np.zeros((), dtype=np.int64), dim, 0,
                             keepdim)
    order = order.astype(np.int64, copy=False)
    values = get_array_module(data).take_along_axis(data, order, axis=d)
    if not keepdim:
        values, order = values.squeeze(d), order.squeeze(d)
    return record_picked(cls, input, values, order, dim, d, keepdim)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = None):
    """``(values, indices)`` sorted along ``dim`` (always stably)."""
    refuse("sort", input._data)
    d = _dim(dim, input.dim())
    order = _order(input._data, d, descending) if input.dim() else None
    cls = SortBackward0 if stable is None else SortBackward1
    return return_types.sort(*_picked(cls, input, order, dim, d))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """The indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable).indices


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along dim 0."""
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    d = _dim(dim, input.dim())
    size = input.shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    refuse("topk", input._data)
    if input.dim() == 0:
        return return_types.topk(*_picked(TopkBackward0, input, None, dim, d))
    order = _order(input._data, d, descending=largest)
    order = order.take(np.arange(k), axis=d) if k < size else order
    return return_types.topk(*_picked(TopkBackward0, input, order, dim, d))


@accepts_out("kthvalue")
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest element along ``dim`` (counting from 1) and its index."""
    d = _dim(dim, input.dim())
    _check_reduced(input, "kthvalue", d)
    size = input.shape[d] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.dim() == 0:  # (no kernel runs: any dtype)
        return return_types.kthvalue(*_picked(KthvalueBackward0, input, None, dim, d, keepdim))
    refuse("kthvalue", input._data)
    order = _order(input._data, d, False).take(np.asarray([k - 1]), axis=d)
    return return_types.kthvalue(*_picked(KthvalueBackward0, input, order, dim, d, keepdim))


def _mode_positions(rows):
    """For each row (a 2-d array), the last position of its most frequent value (the smallest
    such value when several are as frequent), as PyTorch's CPU kernel picks it."""
    out = np.zeros(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)
        value = values[int(np.argmax(counts))]
        out[r] = int(np.flatnonzero(row == value)[-1])
    return out


def mode(input: Tensor, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence; the gradient flows to that entry."""
    d = _dim(dim, input.dim())
    _check_reduced(input, "mode", d)
    if input.dim() == 0:  # (no kernel runs: any dtype)
        return return_types.mode(*_picked(ModeBackward0, input, None, dim, d, keepdim))
    refuse("mode", input._data)
    xp = get_array_module(input._data)
    moved = np.moveaxis(np.asarray(input._data.get() if xp is not np else input._data), d, -1)
    lead = moved.shape[:-1]
    positions = _mode_positions(moved.reshape(-1, moved.shape[-1])).reshape(lead + (1,))
    order = xp.asarray(np.moveaxis(positions, -1, d))
    return return_types.mode(*_picked(ModeBackward0, input, order, dim, d, keepdim))


def _nan_lower_median(data, d: int):
    """Indices (kept dims) of the lower median along ``d`` of the values that are not NaN."""
    order = _order(data, d, False)
    xp = get_array_module(order)
    count = (~xp.isnan(data)).sum(axis=d, keepdims=True) if data.dtype.kind == "f" else \
        xp.full_like(order.take([0], axis=d), data.shape[d])
    pos = xp.maximum((count - 1) // 2, 0)
    picked = xp.take_along_axis(order, pos, axis=d).astype(np.int64)
    if data.dtype.kind == "f" and data.shape[d] > 3:
        picked = xp.where(count == 0, _all_nan_pick(data.shape[d]), picked)
    return picked


@functools.cache
def _all_nan_pick(n: int) -> int:
    """The index PyTorch's CPU nanmedian reports for a slice of ``n`` NaNs: the first element
    after libstdc++'s ``nth_element`` (introselect) has run over ``n`` equal elements (for
    ``n > 3``, each median-of-three step swaps the middle element to the front)."""
    idx = list(range(n))
    last = n
    while last > 3:
        mid = last // 2
        idx[0], idx[mid] = idx[mid], idx[0]
        i, j = 1, last
        while True:  # the unguarded partition: with nothing smaller, it swaps pairs inward
            j -= 1
            if i >= j:
                break
            idx[i], idx[j] = idx[j], idx[i]
            i += 1
        last = i  # the cut is past position 0, the one nth_element is asked for
    return idx[0]


def nanmedian(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median ignoring NaN; with ``dim``, ``(values, indices)``."""
    data = input._data
    if dim is None:
        refuse("median", data)
        if data.size == 0:
            return _record(NanmedianBackward0, input, empty_median(data))
        flat = data.reshape(-1)
        value = data.copy() if data.ndim == 0 else flat[_nan_lower_median(flat, 0)].reshape(())
        return _record(NanmedianBackward0, input, value)
    d = _dim(dim, input.dim())
    _check_reduced(input, "median", d)
    refuse("median_dim", data)
    order = _nan_lower_median(data, d) if data.ndim else None
    return return_types.nanmedian(*_picked(NanmedianBackward1, input, order, dim, d, keepdim))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    """Composed as PyTorch's ``quantile_compute`` (Sorting.cpp): sort, view, gather the ranks
    below (and above), ``lerp_`` between them, then the in-place squeeze (transpose) steps, so
    the graph has PyTorch's nodes."""
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    qs = np.asarray(q._data if isinstance(q, Tensor) else q, dtype=np.float64)
    if qs.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    ndim = input.dim()
    d = None if dim is None else _dim(dim, ndim)
    if d is not None and ndim:
        out_shape = list(input.shape)
        if keepdim:
            out_shape[d] = 1
        else:
            del out_shape[d]
    else:
        out_shape = [1] * ndim if keepdim else []
    if d is None:
        x = input.flatten()
    elif d == ndim - 1:
        x = input
    else:
        x = sh.transpose(sh.unsqueeze(input, -1), d, -1)
    ordered = sort(x)[0]
    in_shape = [*out_shape, ordered.shape[-1]]
    ordered = ordered.view(in_shape)

    data = ordered._data
    xp = get_array_module(data)
    qv = xp.asarray(qs, dtype=data.dtype)
    isnan = xp.isnan(data)
    if ignore_nan:  # ranks among the values that are not NaN (0 when all are NaN)
        ranks = qv * ((~isnan).sum(axis=-1, keepdims=True) - 1).astype(data.dtype)
        ranks = xp.where(ranks < 0, 0, ranks).astype(data.dtype)
    else:  # a NaN puts the rank at the last value: the quantile is NaN
        last = data.shape[-1] - 1
        ranks, has_nan = xp.broadcast_arrays(qv * data.dtype.type(last),
                                             isnan.any(axis=-1, keepdims=True))
        ranks = xp.where(has_nan, data.dtype.type(last), ranks).astype(data.dtype)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)  # half to even, as in PyTorch
    below = ranks.astype(np.int64)
    out = ix.gather(ordered, -1, wrap(below))
    if interpolation in ("linear", "midpoint"):
        weights = xp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = ix.gather(ordered, -1, wrap(xp.ceil(ranks).astype(np.int64)))
        out = lerp(out, above, wrap(weights.astype(data.dtype, copy=False)))
    if qs.ndim == 0:
        return sh.inplace_view_step(sh.SqueezeBackward4, out, out._data.squeeze(-1), dim=-1)
    out = sh.inplace_view_step(sh.UnsqueezeBackward1, out, out._data[None], dim=0)
    out = sh.inplace_view_step(sh.TransposeBackward1, out, out._data.swapaxes(0, -1), dim0=0,
                               dim1=-1)
    return sh.inplace_view_step(sh.SqueezeBackward4, out, out._data.squeeze(-1), dim=-1)


def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles along ``dim`` (NaN where a slice has NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


# -- searchsorted, bucketize ----------------------------------------------------------------------
_SS = "gradnb.searchsorted(): "


def _invalid_arguments(name: str, args) -> TypeError:
    got = ", ".join(type(a).__name__ for a in args)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     "but expected one of:")


def _values_of(input, like: Tensor):
    """``input`` as an array: a tensor's, or a Python number as a 0-d array (PyTorch's Scalar
    overload)."""
    if isinstance(input, Tensor):
        return input._data
    return get_array_module(like._data).asarray(input)


def _searchsorted_checks(boundaries, values, side_right: bool, sorter) -> None:
    """PyTorch's checks (``searchsorted_pre_check``), in its order."""
    if sorter is not None:
        if sorter._data.dtype != np.int64:
            raise RuntimeError(_SS + "sorter must be a tensor of long dtype but got dtype "
                               f"{scalar_type_name(sorter._data.dtype)}")
        if sorter._data.shape != boundaries.shape:
            raise RuntimeError(_SS + "boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(boundaries.shape)}and got sorter tensor "
                               f"{list(sorter._data.shape)}")
    if boundaries.ndim != 1 and values.ndim == 0:
        raise RuntimeError(_SS + "input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({boundaries.ndim}) "
                           f"and input value's dim({values.ndim}) numel({values.size})")
    if boundaries.ndim == 0:
        raise RuntimeError(_SS + "boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.ndim > 1 and (values.ndim != boundaries.ndim
                                or values.shape[:-1] != boundaries.shape[:-1]):
        raise RuntimeError(_SS + "boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, "
                           f"but we got boundaries tensor {list(boundaries.shape)} and input "
                           f"value tensor {list(values.shape)}")


def _refuse_kernel(boundaries, values) -> None:
    """The kernel's dtype refusal, which PyTorch skips when there are no values to place."""
    if values.size:
        refuse("searchsorted", boundaries)


def _search(boundaries, values, right: bool, out_int32: bool):
    """Per row of the leading dimensions (or against one 1-d sequence), the insertion index of
    each value: NumPy's ``searchsorted``, which orders NaN last as PyTorch does."""
    xp = get_array_module(boundaries)
    common = np.promote_types(boundaries.dtype, values.dtype)
    boundaries, values = boundaries.astype(common, copy=False), values.astype(common, copy=False)
    side = "right" if right else "left"
    if boundaries.ndim == 1:
        out = xp.searchsorted(boundaries, values, side=side)
    else:
        rows = int(np.prod(values.shape[:-1]))
        rows_b = boundaries.reshape(rows, boundaries.shape[-1])
        rows_v = values.reshape(rows, values.shape[-1])
        out = xp.zeros(rows_v.shape, dtype=np.int64)
        for i in range(rows):
            out[i] = xp.searchsorted(rows_b[i], rows_v[i], side=side)
        out = out.reshape(values.shape)
    return wrap(xp.asarray(out).astype(np.int32 if out_int32 else np.int64))


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each of ``input`` would be inserted into ``sorted_sequence`` (along its last
    dimension) to keep it sorted: the first such index, or the last with ``right=True`` or
    ``side='right'``. ``sorter`` sorts an unsorted sequence (as ``argsort`` gives)."""
    if not isinstance(sorted_sequence, Tensor) or not isinstance(input, (Tensor, int, float)):
        raise _invalid_arguments("searchsorted", (sorted_sequence, input))
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(_SS + f"side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError(_SS + "side and right can't be set to opposites, got side of left "
                           "while right was True")
    boundaries, values = sorted_sequence._data, _values_of(input, sorted_sequence)
    _searchsorted_checks(boundaries, values, right or side == "right", sorter)
    _refuse_kernel(boundaries, values)
    if sorter is not None:
        order = sorter._data
        if order.size and (order.min() < 0 or order.max() >= boundaries.shape[-1]):
            raise RuntimeError(_SS + "sorter index out of range")
        xp = get_array_module(boundaries)
        boundaries = xp.take_along_axis(boundaries, order, axis=-1)
    return _search(boundaries, values, right or side == "right", out_int32)


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each of ``input`` among the sorted 1-d ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``<= x <`` with ``right=True``)."""
    if not isinstance(boundaries, Tensor) or not isinstance(input, (Tensor, int, float)):
        raise _invalid_arguments("bucketize", (input, boundaries))
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim"
                           f"({boundaries._data.ndim})")
    values = _values_of(input, boundaries)
    _refuse_kernel(boundaries._data, values)
    return _search(boundaries._data, values, right, out_int32)


TENSOR_METHODS = {
    "argsort": argsort, "kthvalue": kthvalue, "mode": mode, "msort": msort, "nanmedian": nanmedian,
    "nanquantile": nanquantile, "quantile": quantile, "sort": sort, "topk": topk,
}
