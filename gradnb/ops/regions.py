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
from . import dual
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


class _RegionScatterBackward(Node):
    """A write of ``src`` into a basic-index region (``key``) of a copy of ``input``: the input's
    gradient is ``g`` with the region zeroed, ``src``'s is the region of ``g``."""
    __slots__ = ("key",)
    on_tensors = True
    inputs = ("self", "src")

    def backward(self, g):
        part = g[self.key]
        attrs = {name: getattr(self, name) for name in self.saved_attrs}
        return _region_scatter(type(self), g, zeros_like(part), self.key, attrs), part


class SelectScatterBackward0(_RegionScatterBackward):
    rule = "self: grad.select_scatter(zeros_like(src), dim, index); src: grad.select(dim, index)"
    saved_attrs: ClassVar[dict] = {"dim": "dim", "index": "index"}
    __slots__ = ("dim", "index")


class SliceScatterBackward0(_RegionScatterBackward):
    rule = ("self: grad.slice_scatter(zeros_like(src), dim, start, end, step); "
            "src: grad.slice(dim, start, end, step)")
    saved_attrs: ClassVar[dict] = {"dim": "dim", "end": "end", "start": "start", "step": "step"}
    __slots__ = ("dim", "end", "start", "step")


def _region_scatter(cls, input: Tensor, src: Tensor, key, attrs) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``key``; ``attrs``: what ``cls`` shows as
    ``_saved_*``."""
    out = input._data.copy()
    region = out[key]
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(region.shape)}")
    out[key] = src._data
    return record(cls, (input, src), out, attrs={"key": key, **attrs})


def _int_or_none(value):
    return None if value is None else ix.saved_int(value)


def _key(ndim: int, dim: int, index) -> tuple:
    d = dim % max(ndim, 1)
    return (slice(None),) * d + (index,)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` of ``dim``."""
    n = input.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return _region_scatter(SelectScatterBackward0, input, src, _key(input.dim(), dim, index),
                           {"dim": ix.saved_int(dim), "index": ix.saved_int(index)})


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``start:end:step`` of ``dim``."""
    return _region_scatter(SliceScatterBackward0, input, src,
                           _key(input.dim(), dim, slice(start, end, step)),
                           {"dim": ix.saved_int(dim), "start": _int_or_none(start),
                            "end": _int_or_none(end), "step": step})


def _dim_hits(input: Tensor, dim: int, index: Tensor):
    """A bool array of ``input``'s shape, True on the slices at ``index`` along ``dim``."""
    data = input._data
    d = dim % max(data.ndim, 1)
    xp = get_array_module(data)
    hit = xp.zeros(data.shape[d] if data.ndim else 1, dtype=bool)
    hit[index._data.reshape(-1)] = True
    if not data.ndim:
        return hit.reshape(())
    shape = [1] * data.ndim
    shape[d] = -1
    return xp.broadcast_to(hit.reshape(shape), data.shape)


class IndexFillBackward0(Node):
    """``index_fill`` with a number: the filled slices get no gradient."""
    rule = "self: grad.index_fill(dim, index, 0)"
    saves = (None,)  # the index, given per call
    saved_names = ("index",)
    saved_attrs: ClassVar[dict] = {"dim": "dim"}
    inputs = ("self",)
    __slots__ = ("dim", "hits")

    def backward(self, g):
        return (ix._zero_at(g, self.hits),)


class IndexFillBackward1(Node):
    """``index_fill`` with a 0-d tensor: the value gets the sum of the filled slices' gradient."""
    rule = ("self: grad.index_fill(dim, index, 0); "
            "value: grad.index_select(dim, std::get<0>(at::_unique(index, false))).sum()")
    saves = (None,)  # the index, given per call
    saved_names = ("index",)
    saved_attrs: ClassVar[dict] = {"dim": "dim"}
    inputs = ("self", "value")
    __slots__ = ("dim", "hits")

    def backward(self, g):
        g_input = ix._zero_at(g, self.hits) if self.needs(0) else None
        g_value = ix.sum_all(g[self.hits]) if self.needs(1) else None
        return g_input, g_value


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of ``input`` with ``value`` at ``index`` along ``dim``."""
    hits = _dim_hits(input, dim, index)
    out = input._data.copy()
    attrs = {"dim": ix.saved_int(dim), "hits": hits}
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        out[hits] = value._data.astype(out.dtype)
        return record(IndexFillBackward1, (input, value), out, save=(index,), attrs=attrs)
    out[hits] = as_tensor_operand(value, input).to(input.dtype)._data
    return record(IndexFillBackward0, (input,), out, save=(index,), attrs=attrs)


class IndexCopyBackward0(Node):
    """``index_copy``: the overwritten slices get no gradient; ``source`` reads them."""
    rule = ("self: grad.index_fill(dim, index, 0); "
            "source: grad.index_select(dim, index).expand_as(source)")
    saves = (None, 1)  # the index (given per call), source
    saved_names = ("index", "source")
    saved_attrs: ClassVar[dict] = {"dim": "dim", "source_dim": "source_dim"}
    inputs = ("self", "source")
    __slots__ = ("dim", "hits", "key", "source_dim", "source_shape")

    def backward(self, g):
        g_input = ix._zero_at(g, self.hits) if self.needs(0) else None
        g_source = g[self.key].reshape(self.source_shape) if self.needs(1) else None
        return g_input, g_source


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` at ``index`` along ``dim``."""
    data = input._data
    hits = _dim_hits(input, dim, index)
    arr = index._data.reshape(-1)
    key = () if data.ndim == 0 else (slice(None),) * (dim % data.ndim) + (arr,)
    out = data.copy()
    src = source._data.astype(data.dtype, copy=False)
    out[key] = src if data.ndim else src.reshape(())
    return record(IndexCopyBackward0, (input, source), out,
                  save=(index, 1 if source._requires_grad else None),
                  attrs={"dim": ix.saved_int(dim), "hits": hits, "key": key,
                         "source_dim": source._data.ndim, "source_shape": source._data.shape})


class MaskedScatterBackward0(Node):
    """``masked_scatter``: the written entries get no gradient; ``source``'s first entries, in
    order, read them (the rest of ``source`` gets zeros)."""
    rule = ("self: grad.masked_fill(mask, 0); "
            "source: masked_scatter_backward_symint(grad, mask, source.sym_sizes())")
    saves = (None,)  # the mask, given per call
    saved_names = ("mask",)
    saved_attrs: ClassVar[dict] = {"source_sym_sizes": "source_shape"}
    inputs = ("self", "source")
    __slots__ = ("hits", "source_shape")

    def backward(self, g):
        g_input = g_source = None
        if self.needs(0):
            g_input = ix._zero_at(g, self.hits)
        if self.needs(1):
            size = 1
            for n in self.source_shape:
                size *= n
            part = g[self.hits]
            g_source = ix.scatter_into_zeros((size,), (slice(0, part.shape[0]),), part,
                                             accumulate=False).reshape(self.source_shape)
        return g_input, g_source


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the elements of ``source``, in order, where ``mask`` is True."""
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(mask.dtype)}")
    xp = get_array_module(input._data)
    shape = np.broadcast_shapes(mask._data.shape, input._data.shape)
    hits = xp.broadcast_to(mask._data, shape)
    need = int(hits.sum())
    if need > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           "as ones in mask")
    out = xp.broadcast_to(input._data, shape).copy()
    out[hits] = source._data.reshape(-1)[:need].astype(out.dtype, copy=False)
    return record(MaskedScatterBackward0, (input, source), out, save=(mask,),
                  attrs={"hits": hits, "source_shape": source._data.shape})


class FillBackward0(Node):
    """``fill(self, number)``: the output does not depend on ``self``."""
    rule = "self: zeros_like(grad)"
    __slots__ = ()
    inputs = ("self",)

    def backward(self, g):
        return (dual.zeros_like(g),)


class FillBackward1(Node):
    """``fill(self, value)`` with a 0-d tensor ``value``: every element is ``value``."""
    rule = "self: zeros_like(grad); value: grad.sum()"
    __slots__ = ()
    inputs = ("self", "value")

    def backward(self, g):
        return dual.zeros_like(g), dual.sum(g)


def fill(input: Tensor, value) -> Tensor:
    """A tensor of ``input``'s shape and dtype filled with ``value``."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    d = input._data
    v = value._data if isinstance(value, Tensor) else as_tensor_operand(value, input)._data
    out = get_array_module(d).full(d.shape, v, dtype=d.dtype)
    if isinstance(value, Tensor):
        return record(FillBackward1, (input, value), out)
    return record(FillBackward0, (input,), out)


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


class FrexpBackward0(Node):
    """``mantissa = self / 2**exponent``; the exponent output has no gradient."""
    rule = "self: grad / exponent.exp2()"
    __slots__ = ()
    saved_names = ("exponent",)

    def backward(self, g):
        (e,) = self.saved(g)
        return (g / 2.0 ** dual.data(e),)


def frexp(input: Tensor):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("gradnb.frexp() only supports floating-point dtypes")
    mantissa, e = np.frexp(input._data)
    exponent = wrap(e.astype(np.int32))
    # The exponent is an output outside the graph (an integer), saved per recording.
    return _frexp_result(record(FrexpBackward0, (input,), mantissa, save=(exponent,)), exponent)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` rescaled to it."""
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           "dimensions")
    return red.renorm(input, p, dim, maxnorm)  # PyTorch's RenormBackward0 node


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
    # PyTorch's ``__rdiv__`` is ``self.reciprocal() * other`` (MulBackward0)
    "__rdiv__": reflected("__rdiv__", lambda self, other: self.reciprocal() * other),
}
