"""Reducing values into a copy of a tensor: ``scatter_reduce`` (sum, prod, mean, amax, amin) and
``index_reduce`` (prod, mean, amax, amin), with their in-place forms.

``index_reduce(dim, index, source)`` is ``scatter_reduce`` with the vector ``index`` spread over
``source``'s shape along ``dim``, so both share one forward and one derivative. Sum and mean are
compositions of ``scatter_add``; prod, amax and amin run NumPy's ``ufunc.at`` and record
``ScatterReduceBackward0``, whose rule is PyTorch's ``scatter_reduce_backward`` written in gradnb
ops: prod divides the result by each factor except where a factor is zero (there the product of
the others is computed again), amax/amin split the gradient evenly among the entries that tie
for the extreme.
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module
from .._core.graph import OUTPUT, Node
from .._core.record import record
from .._core.tensor import _wrap_dim
from . import elementwise as ew
from . import indexing as ix
from ._common import Tensor, wrap
from .creation import ones_like, zeros_like
from .inplace import apply_inplace

__all__ = ["index_reduce", "scatter_reduce"]

_UFUNCS = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype):
    """The value a reduction starts from where ``include_self=False`` leaves ``self`` out."""
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


class ScatterReduceBackward0(Node):
    """PyTorch's ``scatter_reduce_backward`` for prod, amax and amin; saved: input, src,
    result."""
    rule = (
        "prod: grad * result / factor (zeros: product of the others); amax/amin: grad split "
        "evenly among the tied extremes"
    )

    __slots__ = ("dim", "include_self", "index", "reduce")
    on_tensors = True
    saves = (0, 1, OUTPUT)

    def backward(self, g):
        input, src, result = self.saved(g)
        dim, index = self.dim, self.index
        if self.reduce == "prod":
            g_input, g_src = self._prod(input, src, result, g)
        else:
            value = result.gather(dim, index)
            self_is_result = (input == result).to(input.dtype)
            src_is_result = (src == value).to(input.dtype)
            shared = g / self_is_result.scatter_add(dim, index, src_is_result)
            g_input = self_is_result * shared if self.needs(0) else None
            g_src = src_is_result * shared.gather(dim, index) if self.needs(1) else None
        if g_input is not None and not self.include_self:
            g_input = g_input.scatter(dim, index, 0)
        return g_input, g_src

    def _prod(self, input, src, result, g):
        dim, index, keep = self.dim, self.index, self.include_self
        g_input = g_src = None
        if self.needs(0):
            masked_input = input.masked_fill(input == 0, 1)
            g_input = g * _reduce_into(masked_input, dim, index, src, "prod", keep) / masked_input
        if self.needs(1):
            src_zero = src == 0
            zeros_here = zeros_like(input).scatter_add(dim, index, src_zero.to(input.dtype))
            single_zero = src_zero & (zeros_here.gather(dim, index) == 1)
            others = _reduce_into(input, dim, index, src.masked_fill(single_zero, 1), "prod", keep)
            g_src = ew.where(single_zero, (g * others).gather(dim, index),
                             (g * result).gather(dim, index) / src.masked_fill(src_zero, 1))
        return g_input, g_src


def _reduce_into(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                 include_self: bool) -> Tensor:
    """The reduction itself, on checked arguments (``index`` has ``src``'s shape)."""
    if reduce in ("sum", "mean"):
        return _sum_or_mean(input, dim, index, src, reduce, include_self)
    data = input._data
    xp = get_array_module(data)
    work = data.reshape(data.shape or (1,))
    idx = index._data.reshape(index._data.shape or (1,))
    key = ix._along_dim_key(work, idx, dim, xp)
    out = work.copy()
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    values = src._data.reshape(idx.shape).astype(out.dtype, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        _UFUNCS[reduce].at(out, key, values)
    return record(ScatterReduceBackward0, (input, src), out.reshape(data.shape),
                  attrs={"dim": dim, "index": index, "reduce": reduce,
                         "include_self": include_self})


def _sum_or_mean(input, dim, index, src, reduce, include_self):
    base = input
    if not include_self:
        hit = ix.scatter(zeros_like(input, dtype=_dtype.bool), dim, index, True)
        base = ew.where(hit, 0, input)
    total = ix.scatter_add(base, dim, index, src)
    if reduce == "sum":
        return total
    counts = ix.scatter_add(ones_like(input) if include_self else zeros_like(input), dim,
                            index, ones_like(src))
    out = total / ew.where(counts == 0, 1, counts)
    if not include_self:
        out = ew.where(counts == 0, input, out)
    if not input.dtype.is_floating_point:
        out = ew.floor(out).to(input.dtype)
    return out


def scatter_reduce(input: Tensor, dim: int, index, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim``: ``reduce`` is "sum",
    "prod", "mean", "amax" or "amin"; with ``include_self=False`` the entries of ``input`` that
    receive values are left out of their reduction."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    data = input._data
    xp = get_array_module(data)
    idx = ix._index_array(index, "scatter_reduce", xp)
    dim = _wrap_dim(dim, data.ndim)
    ix._scatter_checks("scatter_reduce", data, idx, dim, src._data)
    if idx.size == 0:
        return input.clone()
    if src._data.shape != idx.shape:  # torch reads only the part of src the index covers
        src = src[tuple(slice(0, n) for n in idx.shape)]
    return _reduce_into(input, dim, wrap(idx), src, reduce, include_self)


def index_reduce(input: Tensor, dim: int, index, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """Reduce the slices of ``source`` into a copy of ``input`` at the positions ``index`` (a
    vector) names along ``dim``: ``reduce`` is "prod", "mean", "amax" or "amin"."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    data = input._data
    xp = get_array_module(data)
    dim = _wrap_dim(dim, data.ndim)
    arr = ix._raw(index, xp)
    if arr.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{arr.ndim} with type: {ix.scalar_type_name(arr.dtype)} and size: "
                         f"{list(arr.shape)}")
    if arr.dtype.kind not in "iu":
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{ix.scalar_type_name(arr.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({ix.scalar_type_name(data.dtype)}) and source "
                           f"({ix.scalar_type_name(source._data.dtype)}) must have the same "
                           "scalar type")
    arr = arr.reshape(-1)
    n_source = source._data.shape[dim] if source._data.ndim else 1
    if arr.size != n_source:
        raise RuntimeError(f"index_reduce_(): Number of indices ({arr.size}) should be equal to "
                           f"source.size(dim): ({n_source}), for dim: {dim}")
    size = data.shape[dim] if data.ndim else 1
    if arr.size and (int(arr.max()) >= size or int(arr.min()) < -size):
        raise IndexError("index out of range in self")
    work_in = input.reshape(data.shape or (1,))
    work_src = source.reshape(source._data.shape or (1,))
    shape = [1] * work_src.dim()
    shape[dim] = -1
    spread = xp.broadcast_to((arr % size).reshape(shape), tuple(work_src.shape))
    out = _reduce_into(work_in, dim, wrap(xp.ascontiguousarray(spread)), work_src, reduce,
                       include_self)
    return out.reshape(data.shape)


def scatter_reduce_(self: Tensor, dim: int, index, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In-place ``scatter_reduce``."""
    return apply_inplace(self, lambda s: scatter_reduce(s, dim, index, src, reduce,
                                                        include_self=include_self), (src,))


def index_reduce_(self: Tensor, dim: int, index, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """In-place ``index_reduce``."""
    return apply_inplace(self, lambda s: index_reduce(s, dim, index, source, reduce,
                                                      include_self=include_self), (source,))


TENSOR_METHODS = {
    "scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_,
    "index_reduce": index_reduce, "index_reduce_": index_reduce_,
}
