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

from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.grad_mode import is_grad_enabled
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


class _ReduceIntoBackward(Node):
    """PyTorch's ``scatter_reduce_backward``. The rule works on the shapes the reduction ran on
    (a 0-d tensor as one of shape ``(1,)``, ``src`` cut to the index's shape): ``shapes`` holds
    the input's, its working shape, ``src``'s and the index's, ``src_part`` the cut."""
    rule = (
        "self, src: scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, "
        "result) (sum: grad, grad.gather; mean: both divided by the counts; prod: grad * result "
        "/ factor, zeros: product of the others; amax/amin: grad split evenly among the tied "
        "extremes)"
    )
    saved_attrs: ClassVar[dict] = {"dim": "saved_dim", "include_self": "include_self",
                                   "reduce": "reduce"}
    __slots__ = ("dim", "include_self", "index", "reduce", "saved_dim", "shapes", "src_part")
    on_tensors = True
    fit_grads = False  # the rule returns each input's shape itself

    def backward(self, g):
        _, input, src, result = self.saved(g)
        in_shape, work_shape, src_shape, index_shape = self.shapes
        input, result, g = input.reshape(work_shape), result.reshape(work_shape), g.reshape(
            work_shape)
        src = (src if self.src_part is None else src[self.src_part]).reshape(index_shape)
        dim, index = self.dim, self.index
        if self.reduce == "sum":
            g_input, g_src = g, g.gather(dim, index)
        elif self.reduce == "mean":
            counts = (ones_like(g) if self.include_self else zeros_like(g)).scatter_add(
                dim, index, ones_like(src))
            g_input = g / counts.masked_fill(counts == 0, 1)
            g_src = g_input.gather(dim, index)
        elif self.reduce == "prod":
            g_input, g_src = self._prod(input, src, result, g)
        else:
            value = result.gather(dim, index)
            self_is_result = (input == result).to(input.dtype)
            src_is_result = (src == value).to(input.dtype)
            shared = g / self_is_result.scatter_add(dim, index, src_is_result)
            g_input = self_is_result * shared if self.needs(0) else None
            g_src = src_is_result * shared.gather(dim, index) if self.needs(1) else None
        if not self.needs(0):
            g_input = None
        elif not self.include_self:
            g_input = g_input.scatter(dim, index, 0)
        if g_input is not None:
            g_input = g_input.reshape(in_shape)
        if not self.needs(1):
            g_src = None
        elif self.src_part is not None:
            g_src = ix.scatter_into_zeros(src_shape, self.src_part, g_src, accumulate=False)
        else:
            g_src = g_src.reshape(src_shape)
        return g_input, g_src

    def _prod(self, input, src, result, g):
        dim, index, keep = self.dim, self.index, self.include_self
        g_input = g_src = None
        if self.needs(0):
            masked_input = input.masked_fill(input == 0, 1)
            g_input = g * _reduce_tensors(masked_input, dim, index, src, "prod", keep) \
                / masked_input
        if self.needs(1):
            src_zero = src == 0
            zeros_here = zeros_like(input).scatter_add(dim, index, src_zero.to(input.dtype))
            single_zero = src_zero & (zeros_here.gather(dim, index) == 1)
            others = _reduce_tensors(input, dim, index, src.masked_fill(single_zero, 1), "prod",
                                     keep)
            g_src = ew.where(single_zero, (g * others).gather(dim, index),
                             (g * result).gather(dim, index) / src.masked_fill(src_zero, 1))
        return g_input, g_src


class ScatterReduceBackward0(_ReduceIntoBackward):
    """``scatter_reduce``."""
    # The index is saved per call (the caller's tensor), then self, src, result.
    saves = (None, 0, 1, OUTPUT)
    saved_names = ("index", "self", "src", "result")
    inputs = ("self", "src")
    __slots__ = ()


class IndexReduceBackward0(_ReduceIntoBackward):
    """``index_reduce``: ``scatter_reduce`` with the index vector spread over ``source``."""
    rule = ("self, source: index_reduce_backward(grad, self, dim, index, source, reduce, "
            "include_self, result)")
    saves = (None, 0, 1, OUTPUT)
    saved_names = ("index", "self", "source", "result")
    inputs = ("self", "source")
    __slots__ = ()


def _reduce(out, key, values, reduce: str, include_self: bool):
    """``out`` (a fresh array) with ``values`` reduced into it at ``key``."""
    xp = get_array_module(out)
    if not include_self:
        out[key] = 0 if reduce in ("sum", "mean") else _identity(reduce, out.dtype)
    values = values.astype(out.dtype, copy=False)
    if reduce in ("sum", "mean"):
        ix._add_at(xp, out, key, values)
        if reduce == "sum":
            return out
        counts = xp.ones(out.shape, dtype=np.int64) if include_self else xp.zeros(
            out.shape, dtype=np.int64)
        ix._add_at(xp, counts, key, xp.ones(values.shape, dtype=np.int64))
        counts[counts == 0] = 1
        if out.dtype.kind in "fcV":
            return (out / counts).astype(out.dtype, copy=False)
        return (out // counts).astype(out.dtype, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        _UFUNCS[reduce].at(out, key, values)
    return out


def _reduce_tensors(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                    include_self: bool) -> Tensor:
    """The reduction on tensors of one working shape (in the prod rule): recorded as a
    ``ScatterReduceBackward0`` so the rule can be differentiated again."""
    return _record(ScatterReduceBackward0, input, dim, dim, index, index, src, reduce,
                   include_self, None)


def _record(cls, input: Tensor, dim: int, raw_dim: int, index, spread: Tensor, src: Tensor,
            reduce: str, include_self: bool, src_part) -> Tensor:
    """Run the reduction on arrays and record ``cls``: ``spread`` is the index over the
    working shapes (``index`` the caller's, saved), ``src_part`` the cut of ``src`` it covers."""
    data = input._data
    work = data.reshape(data.shape or (1,))
    idx = spread._data
    key = ix._along_dim_key(work, idx, dim, get_array_module(data))
    values = src._data if src_part is None else src._data[src_part]
    out = _reduce(work.copy(), key, values.reshape(idx.shape), reduce, include_self)
    saved = index if isinstance(index, Tensor) else wrap(ix._raw(index, get_array_module(data)))
    return record(cls, (input, src), out.reshape(data.shape), save=(saved, 0, 1, OUTPUT),
                  attrs={"dim": dim, "saved_dim": ix.saved_int(raw_dim), "index": spread,
                         "reduce": reduce, "include_self": include_self, "src_part": src_part,
                         "shapes": (data.shape, work.shape, src._data.shape, idx.shape)})


def _refuse_complex(op: str, kernel: str | None, *tensors: Tensor) -> None:
    """PyTorch's refusals for complex inputs: ``kernel`` (when given) has no complex
    implementation, and the op has no complex derivative (refused when a result would need one)."""
    dtype = tensors[0]._data.dtype
    if dtype.kind != "c":
        return
    if kernel is not None:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{ix.scalar_type_name(dtype)}'")
    if is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"{op} does not support automatic differentiation for outputs with "
                           "complex dtype.")


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
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    ix._scatter_checks("scatter_reduce", data, idx, dim, src._data)
    if idx.size and reduce in ("amax", "amin"):
        _refuse_complex("scatter_reduce", f"scatter_gather_tensor_cpu_reduce_{reduce}", input)
    _refuse_complex("scatter_reduce", None, input, src)
    if idx.size == 0:
        return input.clone()
    part = None
    if src._data.shape != idx.shape:  # torch reads only the part of src the index covers
        part = tuple(slice(0, n) for n in idx.shape)
    spread = wrap(idx.reshape(idx.shape or (1,)))
    return _record(ScatterReduceBackward0, input, dim, raw_dim, index, spread, src, reduce,
                   include_self, part)


def index_reduce(input: Tensor, dim: int, index, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """Reduce the slices of ``source`` into a copy of ``input`` at the positions ``index`` (a
    vector) names along ``dim``: ``reduce`` is "prod", "mean", "amax" or "amin"."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    data = input._data
    xp = get_array_module(data)
    raw_dim = dim
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
    # PyTorch's complex refusals follow its kernels: one for include_self=False, one for 1-D
    # tensors, maximum/minimum for the rest
    if not include_self:
        _refuse_complex("index_reduce", "index_reduce_func_exclude_input_init", input)
    elif data.ndim <= 1:
        _refuse_complex("index_reduce", "index_func_", input)
    elif arr.size and reduce in ("amax", "amin"):
        _refuse_complex("index_reduce", "maximum_cpu" if reduce == "amax" else "minimum_cpu",
                        input)
    _refuse_complex("index_reduce", None, input, source)
    src_shape = source._data.shape or (1,)
    shape = [1] * len(src_shape)
    shape[dim] = -1
    spread = xp.ascontiguousarray(xp.broadcast_to((arr % size).reshape(shape), src_shape))
    return _record(IndexReduceBackward0, input, dim, raw_dim, index, wrap(spread), source,
                   reduce, include_self, None)


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
