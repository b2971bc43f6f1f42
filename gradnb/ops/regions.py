"""Writing into regions of a copy: select_scatter, slice_scatter, index_fill, index_copy,
masked_scatter, fill; and the small forms torch keeps for real
tensors (resolve_neg), sum_to_size, frexp, renorm, combinations.

``select_scatter``/``slice_scatter`` share one primitive (write ``src`` at a basic-index key;
its derivative reads and writes that key again); the others compose ``where``, ``gather``,
``index_add`` and reductions.
"""

from __future__ import annotations

import collections
from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record
from . import elementwise as ew
from . import indexing as ix
from . import reductions as red
from . import shape as sh
from ._args import reflected, scalar_type_name
from ._common import Tensor, as_tensor_operand, wrap
from .creation import zeros_like
from .joining import meshgrid

__all__ = [
    "combinations", "fill", "frexp", "index_copy", "index_fill",
    "masked_scatter", "renorm", "resolve_neg",
    "select_scatter", "slice_scatter", "unsafe_chunk",
    "unsafe_split", "zero_",
]


class RegionScatterBackward(Node):
    rule = "self: grad with the region zeroed; src: grad of the region"
    __slots__ = ("key",)
    on_tensors = True

    def backward(self, g):
        part = g[self.key]
        return _region_scatter(g, zeros_like(part), self.key), part


class SelectScatterBackward0(RegionScatterBackward):
    rule = "self: grad.select_scatter(zeros_like(src), dim, index); src: grad.select(dim, index)"
    __slots__ = ("dim", "index")
    inputs = ("self", "src")
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "index": "index_shown"}
    dim_shown = sh.torch_int_view("dim")
    index_shown = sh.torch_int_view("index")


class SliceScatterBackward0(RegionScatterBackward):
    rule = ("self: slice_scatter_symint(grad, zeros_like(src), dim, start, end, step); "
            "src: grad.slice_symint(dim, start, end, step)")
    __slots__ = ("dim", "end", "start", "step")
    inputs = ("self", "src")
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "end": "end_shown",
                                   "start": "start_shown", "step": "step_shown"}
    dim_shown = sh.torch_int_view("dim")
    end_shown = sh.torch_int_view("end")
    start_shown = sh.torch_int_view("start")
    step_shown = sh.torch_int_view("step")


def _region_scatter(input: Tensor, src: Tensor, key, cls=RegionScatterBackward,
                    attrs=None) -> Tensor:
    out = input._data.copy()
    region = out[key]
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(region.shape)}")
    out[key] = src._data
    return record(cls, (input, src), out, attrs={"key": key, **(attrs or {})})


def _key(ndim: int, dim: int, index) -> tuple:
    d = dim % max(ndim, 1)
    return (slice(None),) * d + (index,)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` of ``dim``."""
    n = input.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return _region_scatter(input, src, _key(input.dim(), dim, index), SelectScatterBackward0,
                           {"dim": dim, "index": index})


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``start:end:step`` of ``dim``."""
    return _region_scatter(input, src, _key(input.dim(), dim, slice(start, end, step)),
                           SliceScatterBackward0,
                           {"dim": dim, "start": start, "end": end, "step": step})


def _dim_mask(input: Tensor, dim: int, index: Tensor):
    d = dim % max(input.dim(), 1)
    xp = get_array_module(input._data)
    hit = xp.zeros(input.shape[d] if input.dim() else 1, dtype=bool)
    hit[index._data.reshape(-1)] = True
    shape = [1] * input.dim()
    if input.dim():
        shape[d] = -1
    return wrap(hit.reshape(shape) if input.dim() else hit.reshape(()))


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of ``input`` with ``value`` at ``index`` along ``dim``."""
    mask = _dim_mask(input, dim, index)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        value = value.to(input.dtype)
    else:
        value = as_tensor_operand(value, input).to(input.dtype)
    return ew.where(mask, value, input)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` at ``index`` along ``dim``."""
    mask = _dim_mask(input, dim, index)
    kept = ew.where(mask, 0, input)
    if input.dim() == 0:
        return ew.where(mask, source.reshape(()), input)
    return ix.index_add(kept, dim, index, source.to(input.dtype)) + zeros_like(input)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the elements of ``source``, in order, where ``mask`` is True."""
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(mask.dtype)}")
    m = np.broadcast_to(mask._data, np.broadcast_shapes(mask._data.shape, input._data.shape))
    shape = m.shape
    flat = m.reshape(-1)
    need = int(flat.sum())
    if need > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           "as ones in mask")
    order = np.cumsum(flat) - 1
    order = np.where(flat, order, 0).astype(np.int64)
    picked = ix.index_select(source.reshape(-1), 0, wrap(order)).reshape(shape)
    return ew.where(wrap(np.ascontiguousarray(m)), picked, input.expand(*shape))


def fill(input: Tensor, value) -> Tensor:
    """A tensor of ``input``'s shape and dtype filled with ``value``."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    v = value.to(input.dtype) if isinstance(value, Tensor) else as_tensor_operand(
        value, input).to(input.dtype)
    everywhere = wrap(get_array_module(input._data).ones(tuple(input.shape), dtype=bool))
    return ew.where(everywhere, v, input)


def zero_(input: Tensor) -> Tensor:
    """``input.zero_()``."""
    return input.zero_()




def resolve_neg(input: Tensor) -> Tensor:
    """``input`` (gradnb has no lazy negation)."""
    return input


def sum_to_size(input: Tensor, *size) -> Tensor:
    """``input`` summed down to ``size`` (which it must broadcast to)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:
        np.broadcast_shapes(tuple(size), tuple(input.shape))
        ok = np.broadcast_shapes(tuple(size), tuple(input.shape)) == tuple(input.shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(input.shape)}}}.")
    # as PyTorch's ``sum_to``: a full sum to a 0-d size; else one keepdim sum over the dims to
    # reduce, then a view dropping the leading ones (no node at all when there is nothing to do)
    if not size:
        return red.sum(input)
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [i for i in range(lead, len(shape))
                                if size[i - lead] == 1 and shape[i] != 1]
    out = red.sum(input, dims, keepdim=True) if dims else input
    return out.view(size) if lead > 0 else out


_frexp_result = collections.namedtuple("frexp", ["mantissa", "exponent"])


def frexp(input: Tensor):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("gradnb.frexp() only supports floating-point dtypes")
    _, e = np.frexp(input._data)
    exponent = wrap(e.astype(np.int32))
    return _frexp_result(input / ew.exp2(wrap(e.astype(input._data.dtype))), exponent)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` rescaled to it."""
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           "dimensions")
    d = dim % input.dim()
    others = tuple(i for i in range(input.dim()) if i != d)
    norms = red.norm(input, p, others, keepdim=True)
    scale = ew.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * scale


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of the elements of a 1-D tensor, as rows."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r == 0:
        return input[:0]
    # as PyTorch: an r-fold meshgrid of the input, each grid masked to the increasing (or, with
    # replacement, non-decreasing) index tuples, the picks stacked as columns
    n = input.shape[0]
    index = np.indices((n,) * r)
    keep = np.ones((n,) * r, dtype=bool)
    for i in range(r - 1):
        keep &= index[i] <= index[i + 1] if with_replacement else index[i] < index[i + 1]
    mask = wrap(get_array_module(input._data).asarray(keep))
    grids = meshgrid(*([input] * r), indexing="ij")
    return sh.stack([ix.masked_select(g, mask) for g in grids], 1)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` (gradnb's views are always safe), recorded as PyTorch records it."""
    return sh.chunk(input, chunks, dim, _unsafe=True)


def unsafe_split(input: Tensor, split_size, dim: int = 0) -> tuple:
    """``split`` (gradnb's views are always safe), recorded as PyTorch records it."""
    return sh.split(input, split_size, dim, _unsafe=True)


TENSOR_METHODS = {
    "fill": fill, "frexp": frexp,
    "index_copy": index_copy, "index_fill": index_fill,
    "masked_scatter": masked_scatter, "renorm": renorm,
    "resolve_neg": resolve_neg,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "sum_to_size": sum_to_size, "unsafe_chunk": unsafe_chunk, "unsafe_split": unsafe_split,
    "__rdiv__": reflected("__rdiv__", lambda self, other: other / self),
}
