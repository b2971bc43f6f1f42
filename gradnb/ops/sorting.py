"""Sorting and order statistics: sort/argsort/msort, topk, kthvalue, nanmedian,
quantile/nanquantile.

Orders are computed on the raw array (NumPy's stable sort, NaN ordered as the largest value, as
in PyTorch); values are then picked with ``gather``, so their gradient (and every higher one)
is gather's: it flows back to the positions the values came from.
"""

from __future__ import annotations

import numpy as np

from .._core.backend import get_array_module
from . import elementwise as ew
from . import indexing as ix
from ._common import Tensor, wrap
from ._out import accepts_out
from .reductions import _return_type, return_types
from .shape import stack

__all__ = ["argsort", "kthvalue", "mode", "msort", "nanmedian", "nanquantile", "quantile", "sort",
           "topk"]

for _name in ("sort", "topk", "kthvalue", "mode", "nanmedian"):
    setattr(return_types, _name, _return_type(_name))


def _dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


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


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """``(values, indices)`` sorted along ``dim``."""
    if input.dim() == 0:
        return return_types.sort(input.clone(), wrap(np.zeros((), dtype=np.int64)))
    d = _dim(dim, input.dim())
    idx = wrap(_order(input._data, d, descending).astype(np.int64))
    return return_types.sort(ix.gather(input, d, idx), idx)


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
    values, indices = sort(input, d, descending=largest)
    if input.dim() == 0:
        return return_types.topk(values, indices)
    return return_types.topk(values.narrow(d, 0, k), indices.narrow(d, 0, k))


@accepts_out("kthvalue")
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest element along ``dim`` (counting from 1) and its index."""
    d = _dim(dim, input.dim())
    size = input.shape[d] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    values, indices = sort(input, d)
    if input.dim() == 0:
        return return_types.kthvalue(values, indices)
    v, i = values.narrow(d, k - 1, 1), indices.narrow(d, k - 1, 1)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return return_types.kthvalue(v, i)


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
    if input.dim() == 0:
        return return_types.mode(input.clone(), wrap(np.zeros((), dtype=np.int64)))
    d = _dim(dim, input.dim())
    xp = get_array_module(input._data)
    moved = np.moveaxis(np.asarray(input._data.get() if xp is not np else input._data), d, -1)
    lead = moved.shape[:-1]
    positions = _mode_positions(moved.reshape(-1, moved.shape[-1])).reshape(lead + (1,))
    idx = wrap(xp.asarray(np.moveaxis(positions, -1, d)))
    values, indices = ix.gather(input, d, idx), idx
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return return_types.mode(values, indices)


def nanmedian(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median ignoring NaN; with ``dim``, ``(values, indices)``."""
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _dim(dim, input.dim())
    if x.dim() == 0:
        out = return_types.nanmedian(x.clone(), wrap(np.zeros((), dtype=np.int64)))
        return out.values if dim is None else out
    order = _order(x._data, d, False)
    xp = get_array_module(order)
    count = (~xp.isnan(x._data)).sum(axis=d, keepdims=True) if x._data.dtype.kind == "f" else \
        xp.full_like(order.take([0], axis=d), x.shape[d])
    pos = xp.maximum((count - 1) // 2, 0)
    idx = xp.take_along_axis(order, pos, axis=d).astype(np.int64)
    values = ix.gather(x, d, wrap(idx))
    indices = wrap(idx)
    if dim is None:
        return values.reshape(())
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return return_types.nanmedian(values, indices)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    qs = np.atleast_1d(np.asarray(q._data if isinstance(q, Tensor) else q, dtype=np.float64))
    if qs.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    if x.dim() == 0:
        x = x.reshape(1)
    d = 0 if dim is None else _dim(dim, input.dim())
    x = x.movedim(d, -1)
    data = x._data
    xp = get_array_module(data)
    order = xp.argsort(data, axis=-1, kind="stable")
    isnan = xp.isnan(data)
    n = data.shape[-1]
    count = (~isnan).sum(axis=-1, keepdims=True) if ignore_nan else xp.full(
        data.shape[:-1] + (1,), n)
    has_nan = isnan.any(axis=-1, keepdims=True)
    results = []
    for qv in qs:
        rank = qv * (count - 1)
        lo = xp.floor(rank).astype(np.int64)
        hi = xp.ceil(rank).astype(np.int64)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = xp.round(rank).astype(np.int64)  # half to even, as in PyTorch
        lo_c, hi_c = xp.clip(lo, 0, max(n - 1, 0)), xp.clip(hi, 0, max(n - 1, 0))
        lo_i = xp.take_along_axis(order, lo_c, axis=-1)
        hi_i = xp.take_along_axis(order, hi_c, axis=-1)
        lo_v = ix.gather(x, -1, wrap(lo_i.astype(np.int64)))
        hi_v = ix.gather(x, -1, wrap(hi_i.astype(np.int64)))
        if interpolation == "midpoint":
            w = 0.5 * (hi != lo)
        elif interpolation == "linear":
            w = rank - lo
        else:
            w = xp.zeros(rank.shape)
        w = wrap(xp.asarray(w, dtype=data.dtype))
        v = lo_v + w * (hi_v - lo_v)
        bad = (count == 0) if ignore_nan else has_nan
        v = ew.where(wrap(bad), float("nan"), v)
        results.append(v.squeeze(-1))

    out = stack(results, 0)
    if keepdim and input.dim():
        if dim is None:
            out = out.reshape((len(qs),) + (1,) * input.dim())
        else:
            out = out.unsqueeze(d + 1)
    return out[0] if scalar_q else out


def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles along ``dim`` (NaN where a slice has NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """``quantile`` ignoring NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


TENSOR_METHODS = {
    "argsort": argsort, "kthvalue": kthvalue, "mode": mode, "msort": msort, "nanmedian": nanmedian,
    "nanquantile": nanquantile, "quantile": quantile, "sort": sort, "topk": topk,
}
