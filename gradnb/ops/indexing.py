"""Indexing: ``t[...]`` (basic, advanced, boolean), ``t[...] = v``, gather/scatter,
index_select, index_add, index_put, masked_fill/masked_select, nonzero.

Reading a key follows PyTorch step by step, so graphs show the same nodes: each integer, slice
and None is one view (``SelectBackward0``, ``SliceBackward0``, ``UnsqueezeBackward0``), applied
left to right and sharing the input's version counter; integer-array and boolean indices are then
applied together as one ``IndexBackward0``, a copy whose gradient adds repeated indices up.

Every gradient that writes into a zero tensor goes through ``scatter_into_zeros``: on arrays it
is NumPy assignment or ``add.at``, on tensors (``create_graph=True``) it records ``index_put``, so
higher-order gradients come free.
"""

from __future__ import annotations

import operator
from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record, wrap
from .._core.tensor import _wrap_dim
from . import dual
from ._args import (
    _is_int,
    check_value_fits,
    converted_number,
    int_arg,
    scalar_type_name,
    type_name,
)
from ._common import Tensor
from ._out import OUT_DTYPE_EXPECTED, accepts_out
from .creation import zeros
from .shape import SliceBackward0, UnsqueezeBackward0, alias, expand

__all__ = [
    "argwhere",
    "gather",
    "index_add",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_select",
    "nonzero",
    "nonzero_static",
    "put",
    "scatter",
    "scatter_add",
    "select",
    "take_along_dim",
]

_BAD_INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"


# -- shared helpers -------------------------------------------------------------------------------
def _raw(x, xp):
    """An index or mask argument (tensor, list, array) as an array of ``xp``."""
    if isinstance(x, Tensor):
        return x._data
    return xp.asarray(x)


def _as_saved(x, arr):
    """The tensor a node saves for a non-differentiable tensor argument (an index, a mask): the
    caller's own tensor when it passed one (PyTorch saves that one), else one around ``arr``."""
    return x if isinstance(x, Tensor) else wrap(arr)


_U64 = 1 << 64


def saved_int(value: int) -> int:
    """An int argument (``dim``, ``index``) as PyTorch shows it in ``grad_fn._saved_<name>``: as
    the caller wrote it, a negative one read as an unsigned 64-bit number (-1 is 2**64 - 1)."""
    return value % _U64


def _add_at(xp, target, key, values) -> None:
    """``target[key] += values`` with repeated indices summed (NumPy ``add.at``)."""
    if xp is np:
        np.add.at(target, key, values)
    else:
        import cupyx  # optional (GPU only), so imported where a CuPy array is met

        cupyx.scatter_add(target, key, values)


def scatter_into_zeros(shape, key, g, accumulate: bool = True):
    """Zeros of ``shape`` with ``g`` written (or, with ``accumulate``, added) at ``key``.

    The adjoint of reading ``x[key]``: arrays in, array out; a tensor ``g`` records an
    ``index_put`` so the result can be differentiated again.
    """
    if isinstance(g, Tensor):
        return index_put(zeros(tuple(shape), dtype=g.dtype, device=g.device), key, g,
                         accumulate=accumulate)
    xp = get_array_module(g)
    out = xp.zeros(tuple(shape), dtype=g.dtype)
    if accumulate:
        _add_at(xp, out, key, g)
    else:
        out[key] = g
    return out


def _zero_at(g, key):
    """``g`` with the entries at ``key`` set to zero, as PyTorch writes them: an inf or NaN there
    becomes 0 too, where a product with a mask would give NaN (``where`` keeps the rule
    differentiable)."""
    xp = dual.xp_of(g)
    keep = xp.ones(tuple(g.shape), dtype=bool)
    keep[key] = False
    return dual.where(keep, g, 0)


def sum_all(g):
    """The sum of every entry as a 0-d array or tensor (never a NumPy scalar)."""
    if isinstance(g, Tensor):
        return dual.sum(g)
    return get_array_module(g).asarray(g.sum())


def _check_bounds(arr, size: int, dim: int, exc=IndexError) -> None:
    if arr.size and (int(arr.max()) >= size or int(arr.min()) < -size):
        bad = int(arr.max()) if int(arr.max()) >= size else int(arr.min())
        raise exc(f"index {bad} is out of bounds for dimension {dim} with size {size}")


# -- reading: t[key] -----------------------------------------------------------------------------
def _normalize_item(item, xp):
    """One entry of a key as int, bool, slice, None, Ellipsis, or an int/bool array of ``xp``."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        parts = [None if p is None else operator.index(p) for p in (item.start, item.stop, item.step)]
        if parts[2] is not None and parts[2] <= 0:
            raise ValueError("step must be greater than zero")
        return slice(*parts)
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, Tensor):
        arr = item._data
        if type(arr) is not type(xp.empty(0)):
            arr = xp.asarray(arr.get() if hasattr(arr, "get") else arr)
    elif isinstance(item, (list, tuple, range)) or hasattr(item, "__array_interface__") \
            or hasattr(item, "__cuda_array_interface__"):
        arr = xp.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)
    else:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         f"Variables are valid indices (got {type(item).__name__})")
    kind = arr.dtype.kind
    if kind == "b" or arr.dtype == np.uint8:
        return bool(arr) if arr.ndim == 0 else arr.astype(bool, copy=False)
    if kind not in "iu":
        raise IndexError(_BAD_INDEX_DTYPE)
    if arr.ndim == 0 and isinstance(item, Tensor):
        return int(arr)
    return arr


def _items(key, xp):
    """The key as a tuple of normalized entries, and whether it was written as a tuple."""
    is_tuple = isinstance(key, tuple)
    raw = key if is_tuple else (key,)
    items = tuple(_normalize_item(k, xp) for k in raw)
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return items, is_tuple


def _consumed(item) -> int:
    """How many dimensions of the indexed tensor an entry uses up."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, (int, slice)):
        return 1
    return item.ndim if item.dtype == bool else 1


def _is_basic(items) -> bool:
    return all(k is None or k is Ellipsis or isinstance(k, slice)
               or (isinstance(k, int) and not isinstance(k, bool)) for k in items)


def _check_rank(items, ndim: int) -> int:
    used = sum(_consumed(k) for k in items)
    if used > ndim:
        if ndim == 0 and any(isinstance(k, int) and not isinstance(k, bool) for k in items):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return used


def getitem(input: Tensor, key) -> Tensor:
    """``input[key]`` with PyTorch's semantics: views for ints/slices/None/Ellipsis, a copy for
    integer-array and boolean indices (indices may be tensors, lists or arrays)."""
    xp = get_array_module(input._data)
    items, is_tuple = _items(key, xp)
    ndim = input._data.ndim
    used = _check_rank(items, ndim)
    out, dim, advanced = input, 0, []
    # PyTorch's list of index tensors (``IndexBackward0._saved_indices``): each tensor index
    # (the caller's tensor, else one made from the list or array) and the dimension it starts at.
    saved, slots = [], []
    for n, item in enumerate(items):
        if item is Ellipsis:
            dim += ndim - used
        elif item is None:
            out = _unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, bool):
            out = _unsqueeze(out, dim)
            arr = xp.zeros(1 if item else 0, dtype=np.int64)
            advanced.append((dim, arr))
            saved.append(wrap(arr))
            slots.append(dim)
            dim += 1
        elif isinstance(item, int):
            out = select(out, dim, item)
        elif isinstance(item, slice):
            size = out._data.shape[dim]
            if not is_tuple or item.indices(size) != (0, size, 1):
                out = _slice(out, dim, item)
            dim += 1
        elif item.dtype == bool:
            _check_mask(item, out._data.shape, dim)
            advanced.extend((dim + i, nz) for i, nz in enumerate(xp.nonzero(item)))
            raw = key[n] if is_tuple else key
            saved.append(raw if isinstance(raw, Tensor) else wrap(item))
            slots.append(dim)
            dim += item.ndim
        else:
            _check_bounds(item, out._data.shape[dim], dim)
            advanced.append((dim, item))
            raw = key[n] if is_tuple else key
            saved.append(raw if isinstance(raw, Tensor) else wrap(item))
            slots.append(dim)
            dim += 1
    if advanced:
        return _index(out, advanced, saved, slots)
    return alias(input) if out is input else out


def _check_mask(mask, shape, dim: int) -> None:
    for i, n in enumerate(mask.shape):
        if n != shape[dim + i]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {i} does not match "
                             f"the shape of the indexed tensor {list(shape)} at index {dim + i}")


class SelectBackward0(Node):
    rule = "self: select_backward_symint(grad, self.sym_sizes(), dim, index)"
    saved_attrs: ClassVar[dict] = {"dim": "dim", "index": "index", "self_sym_sizes": "in_shape"}
    __slots__ = ("dim", "in_shape", "index", "key")
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (scatter_into_zeros(self.in_shape, self.key, g, accumulate=False),)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim``, without that dimension (a view)."""
    data = input._data
    if data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    size = data.shape[dim]
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    key = (slice(None),) * dim + (index % size, Ellipsis)
    return record(SelectBackward0, (input,), data[key],
                  attrs={"in_shape": data.shape, "key": key, "dim": raw_dim % _U64,
                         "index": index % _U64})  # saved_int, inline: t[i] is hot


_INT64_MAX = (1 << 63) - 1


def _slice(input: Tensor, dim: int, item: slice) -> Tensor:
    # start/end/step as PyTorch passes them on (an open end is INT64_MAX), for ``_saved_*``.
    data = input._data
    key = (slice(None),) * dim + (slice(*item.indices(data.shape[dim])),)
    return record(SliceBackward0, (input,), data[key], attrs={
        "in_shape": data.shape, "key": key, "dim": dim,
        "start": 0 if item.start is None else item.start % _U64,  # saved_int, inline
        "end": _INT64_MAX if item.stop is None else item.stop % _U64,
        "step": 1 if item.step is None else item.step})


def _unsqueeze(input: Tensor, dim: int) -> Tensor:
    data = input._data
    return record(UnsqueezeBackward0, (input,), data[(slice(None),) * dim + (None,)],
                  attrs={"in_shape": data.shape, "dim": dim})



class IndexBackward0(Node):
    rule = "self: index_backward(grad.new_zeros_symint(self.sym_sizes()), indices, grad)"
    # The index tensors are saved per call (each packed); ``_saved_indices`` puts them back in
    # PyTorch's list, None where a dimension had no tensor.
    saved_attrs: ClassVar[dict] = {"self_sym_sizes": "in_shape"}
    __slots__ = ("in_shape", "index_slots", "key")
    _saved_indices = property(lambda self: _saved_index_list(self))
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (scatter_into_zeros(self.in_shape, self.key, g),)


def _saved_index_list(node) -> tuple:
    """``_saved_indices`` of a node that saved its index tensors in order: PyTorch's list of
    them, each at its position (``index_slots``), None between."""
    saved = node.saved_as(Tensor)
    slots = node.index_slots
    out = [None] * (max(slots) + 1 if slots else 0)
    for t, position in zip(saved, slots):
        out[position] = t
    return tuple(out)


def _index(input: Tensor, advanced, saved: list, slots: list) -> Tensor:
    """Integer-array indexing (a copy); ``advanced`` pairs a dimension with its index array,
    ``saved`` are PyTorch's index tensors (saved) and ``slots`` their positions in its list."""
    key = [slice(None)] * input._data.ndim
    for dim, arr in advanced:
        key[dim] = arr
    key = tuple(key)
    return record(IndexBackward0, (input,), input._data[key], save=tuple(saved),
                  attrs={"in_shape": input._data.shape, "key": key, "index_slots": slots})


def write_key(data, key):
    """A NumPy key that addresses, in ``data``, exactly the entries ``getitem(data, key)`` reads.

    Plain keys are used as they are; keys with tensors, arrays or bools are turned into flat
    positions (read with PyTorch's rules) and unravelled, because NumPy orders mixed integer and
    array indices differently.
    """
    xp = get_array_module(data)
    items, _ = _items(key, xp)
    if _is_basic(items):
        _check_rank(items, data.ndim)
        dim = 0
        for item in items:
            if isinstance(item, int):
                size = data.shape[dim]
                if not -size <= item < size:
                    raise IndexError(f"index {item} is out of bounds for dimension {dim} with size "
                                     f"{size}")
                dim += 1
            elif isinstance(item, slice):
                dim += 1
            elif item is Ellipsis:
                dim += data.ndim - sum(_consumed(k) for k in items)
        return items
    positions = xp.arange(data.size, dtype=np.int64).reshape(data.shape)
    selected = getitem(wrap(positions), items)._data
    if data.ndim == 0:
        # NumPy cannot unravel into no dimensions: a 0-d mask addresses the one entry, or none
        # (a 0-d tensor's advanced keys are masks, selecting it at most once)
        return (xp.asarray(selected.size > 0),)
    return xp.unravel_index(selected, data.shape)


# -- writing: t[key] = value ---------------------------------------------------------------------
class _RegionWrite(Node):
    """``out = input`` with ``values`` written into the entries at ``key``.

    The input's gradient is ``g`` with that region zeroed (or all of ``g`` when accumulating);
    the values get ``g[key]`` (the engine sums it down to their broadcast shape).
    """
    rule = "self: grad with the written region zeroed; value: grad of the region"

    __slots__ = ("accumulate", "key")

    def backward(self, g):
        g_input = g_values = None
        if self.needs(0):
            g_input = g if self.accumulate else _zero_at(g, self.key)
        if self.needs(1):
            g_values = g[self.key]
        return g_input, g_values


class IndexPutBackward0(_RegionWrite):
    rule = ("self: accumulate ? grad : grad.index_put(indices, zeros_like(values), false); "
            "values: grad.index(indices)")
    # The index tensors are saved per call, as ``IndexBackward0``'s.
    saved_attrs: ClassVar[dict] = {"accumulate": "accumulate"}
    inputs = ("self", "values")
    __slots__ = ("index_slots",)
    _saved_indices = property(lambda self: _saved_index_list(self))


class CopySlices(_RegionWrite):
    """A write into a slice of a tensor (``t[1:] = v``, or an in-place op on a view)."""
    rule = "self: grad with the written region zeroed; src: grad of the region"

    __slots__ = ()

    def name(self) -> str:
        """As PyTorch names this C++ node (``torch::autograd::CopySlices``), in gradnb's
        namespace; views and reprs show ``CopySlices``."""
        return "gradnb::autograd::CopySlices"


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` put (or, with ``accumulate``, added) at ``indices``.

    ``indices`` is a tuple of index tensors (or a NumPy key used internally by gradients).
    """
    xp = get_array_module(input._data)
    key = tuple(indices) if isinstance(indices, (tuple, list)) else (indices,)
    # PyTorch's list of index tensors: the caller's; a key of arrays, ints and slices (a
    # gradient's own writes) saves its arrays.
    saved, slots = [], []
    for n, k in enumerate(key):
        if isinstance(k, Tensor) or hasattr(k, "shape"):
            saved.append(k if isinstance(k, Tensor) else wrap(k))
            slots.append(n)
    if not all(isinstance(k, slice) or hasattr(k, "shape") and not isinstance(k, Tensor)
               for k in key):
        key = write_key(input._data, key)
    vt = values if isinstance(values, Tensor) else None
    v = _raw(values, xp)
    out = input._data.copy()
    v = v.astype(out.dtype, copy=False)
    if accumulate:
        _add_at(xp, out, key, v)
    else:
        out[key] = v
    return record(IndexPutBackward0, (input, vt), out,
                  save=tuple(saved),
                  attrs={"key": key, "accumulate": accumulate, "index_slots": slots})


def put(input: Tensor, index, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or, with ``accumulate``, added) at the flat
    positions ``index``, as if ``input`` were one-dimensional."""
    data = input._data
    xp = get_array_module(data)
    idx = _raw(index, xp)
    if idx.dtype != np.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(idx.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(data.dtype)} and source.dtype = "
                           f"{scalar_type_name(source._data.dtype)}")
    if idx.size != source._data.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {idx.size}")
    flat_index = idx.reshape(-1)
    bad = flat_index[(flat_index >= data.size) | (flat_index < -data.size)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of "
                         f"{data.size} elements.")
    pos = flat_index % max(data.size, 1)
    out = data.reshape(-1).copy()
    src = source._data.reshape(-1)
    if accumulate:
        _add_at(xp, out, pos, src)
    else:
        out[pos] = src
    return record(PutBackward0, (input, source), out.reshape(data.shape),
                  save=(_as_saved(index, idx), 1 if source._requires_grad else None),
                  attrs={"accumulate": accumulate, "pos": pos, "source_shape": source._data.shape})


class PutBackward0(Node):
    """``put``: the input's gradient is ``g`` with the written positions zeroed (all of ``g``
    when accumulating); the source's is ``g`` read at them."""
    rule = ("self: accumulate ? grad : grad.put(index, zeros_like(source), false); "
            "source: grad.take(index).reshape_as(source)")
    saves = (None, 1)  # the index (given per call), source
    saved_names = ("index", "source")
    saved_attrs: ClassVar[dict] = {"accumulate": "accumulate"}
    inputs = ("self", "source")
    __slots__ = ("accumulate", "pos", "source_shape")

    def backward(self, g):
        g_input = g_source = None
        flat = g.reshape(-1)
        if self.needs(0):
            g_input = g if self.accumulate else _zero_at(flat, self.pos).reshape(g.shape)
        if self.needs(1):
            g_source = flat[self.pos].reshape(self.source_shape)
        return g_input, g_source


class TakeBackward0(Node):
    """``take``: zeros of the input's shape with ``g`` added at the flat positions read."""
    rule = "self: take_backward(grad, self, index)"
    saves = (None, 0)  # the index (given per call), self
    saved_names = ("index", "self")
    inputs = ("self",)
    fit_grads = False  # the rule returns the input's shape itself
    __slots__ = ("in_shape", "pos")

    def backward(self, g):
        size = 1
        for n in self.in_shape:
            size *= n
        flat = scatter_into_zeros((size,), (self.pos,), g.reshape(-1))
        return (flat.reshape(self.in_shape),)


def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened ``input`` at ``index`` (negative indices count from the end),
    in the shape of ``index``."""
    data = input._data
    idx = index._data
    n = data.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)].reshape(-1)[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    pos = idx.reshape(-1) % max(n, 1)
    out = data.reshape(-1)[pos].reshape(idx.shape)
    return record(TakeBackward0, (input,), out, save=(index, 0),
                  attrs={"in_shape": data.shape, "pos": pos})


# -- gather / scatter ----------------------------------------------------------------------------
def _index_array(index, op: str, xp):
    arr = _raw(index, xp)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    return arr


def _along_dim_key(data, idx, dim: int, xp):
    """The key that pairs each position of ``idx`` with data[..., idx[pos], ...] at ``dim``
    (for a 0-d ``data`` the index can only be 0, so the key is ``()``)."""
    if data.ndim == 0:
        return ()
    key = []
    for d, n in enumerate(idx.shape):
        if d == dim:
            key.append(idx)
        else:
            shape = [1] * idx.ndim
            shape[d] = n
            key.append(xp.arange(n).reshape(shape))
    return tuple(key)


class GatherBackward0(Node):
    """``g`` added at the gathered positions into zeros; a 0-d input or index is read as one of
    shape ``(1,)`` (``work_shape``, ``index_shape``), as PyTorch does."""
    rule = "self: grad.new_zeros(self.sym_sizes()).scatter_add(dim, index, grad)"
    # ``index`` (a non-differentiable tensor) is saved per call: the old-style spec.
    saves = (None, 0)
    saved_names = ("index", "self")
    saved_attrs: ClassVar[dict] = {"dim": "dim", "sparse_grad": "sparse_grad"}
    inputs = ("self",)
    __slots__ = ("dim", "in_shape", "index_shape", "key", "sparse_grad", "work_shape")

    def backward(self, g):
        if self.key is None:  # an empty index reads nothing
            if isinstance(g, Tensor):
                return (zeros(self.in_shape, dtype=g.dtype, device=g.device),)
            return (get_array_module(g).zeros(self.in_shape, dtype=g.dtype),)
        g = g.reshape(self.index_shape)
        return (scatter_into_zeros(self.work_shape, self.key, g).reshape(self.in_shape),)


@accepts_out("gather", OUT_DTYPE_EXPECTED)
def gather(input: Tensor, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` (for ``dim=0``); repeated indices add up in the
    gradient. An empty index gives an empty result without any check; a 0-d input or index
    counts as one-dimensional."""
    data = input._data
    xp = get_array_module(data)
    idx = _index_array(index, "gather", xp)
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    work = data.reshape(data.shape or (1,))
    idx_work = idx.reshape(idx.shape or (1,))
    save = (_as_saved(index, idx), 0)
    if idx.size == 0:
        return record(GatherBackward0, (input,), xp.zeros(idx.shape, dtype=data.dtype),
                      save=save, attrs={"in_shape": data.shape, "index_shape": idx_work.shape,
                                        "work_shape": work.shape, "key": None, "dim": saved_int(raw_dim),
                                        "sparse_grad": sparse_grad})
    if idx_work.ndim != work.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (n, m) in enumerate(zip(idx_work.shape, work.shape)):
        if d != dim and n > m:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(idx.shape)} to be no larger than self {list(data.shape)} "
                               f"apart from dimension {dim}")
    _check_bounds(idx_work, work.shape[dim], dim, RuntimeError)
    key = _along_dim_key(work, idx_work, dim, xp)
    return record(GatherBackward0, (input,), work[key].reshape(idx.shape), save=save,
                  attrs={"in_shape": data.shape, "index_shape": idx_work.shape,
                         "work_shape": work.shape, "key": key, "dim": saved_int(raw_dim),
                         "sparse_grad": sparse_grad})


def _scatter_checks(op: str, data, idx, dim, src=None) -> None:
    if src is not None and src.dtype != data.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    if idx.size == 0:
        return
    if idx.ndim != data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and max(src.ndim, 1) != max(idx.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    bad_self = any(n > m for d, (n, m) in enumerate(zip(idx.shape, data.shape)) if d != dim)
    bad_src = src is not None and src.ndim and any(n > m for n, m in zip(idx.shape, src.shape))
    if bad_self or bad_src:
        msg = (f"Expected index {list(idx.shape)} to be no larger than self {list(data.shape)} "
               f"apart from dimension {dim}")
        if src is not None:
            msg += f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(msg)
    _check_bounds(idx, data.shape[dim] if data.ndim else 1, dim, RuntimeError)


def _src_part(src, idx):
    """The part of ``src`` that pairs with the index (PyTorch uses only ``index.shape`` of it)."""
    if src.ndim == 0 or src.shape == idx.shape:
        return src, None
    part = tuple(slice(0, n) for n in idx.shape)
    return src[part], part


def _src_grad(node, g):
    """The gradient of a scattered ``src``: ``g`` read at the written entries, padded with zeros
    where ``src`` is larger than the index."""
    g_src = g[node.key]
    if node.src_part is not None:
        g_src = scatter_into_zeros(node.src_shape, node.src_part, g_src, accumulate=False)
    return g_src


class ScatterBackward0(Node):
    """Scatter of a tensor ``src``: its written entries take their gradient from ``g``."""
    rule = "self: grad.scatter(dim, index, 0); src: grad.gather(dim, index)"
    saves = (None,)  # the index, given per call
    saved_names = ("index",)
    saved_attrs: ClassVar[dict] = {"dim": "dim"}
    inputs = ("self", "src")
    __slots__ = ("dim", "key", "src_part", "src_shape")

    def backward(self, g):
        g_input = _zero_at(g, self.key) if self.needs(0) else None
        return g_input, (_src_grad(self, g) if self.needs(1) else None)


class ScatterBackward1(Node):
    """Scatter of a Python number: only the untouched entries pass gradient to the input."""
    rule = "self: grad.scatter(dim, index, 0)"
    saves = (None,)  # the index, given per call
    saved_names = ("index",)
    saved_attrs: ClassVar[dict] = {"dim": "dim"}
    inputs = ("self",)
    __slots__ = ("dim", "key")

    def backward(self, g):
        return (_zero_at(g, self.key),)


def scatter(input: Tensor, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor or a number) written at ``index`` along ``dim``."""
    if src is None:
        src = value
    if reduce is not None:
        return _scatter_with_reduce(input, dim, index, src, reduce)
    data = input._data
    xp = get_array_module(data)
    idx = _index_array(index, "scatter", xp)
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    st = src if isinstance(src, Tensor) else None
    _scatter_checks("scatter", data, idx, dim, st._data if st is not None else None)
    key = _along_dim_key(data, idx, dim, xp)
    out = data.copy()
    part = None
    if st is not None:
        piece, part = _src_part(st._data, idx)
        out[key] = piece.astype(out.dtype, copy=False)
    else:
        out[key] = src
    save = (_as_saved(index, idx),)
    if st is not None:
        return record(ScatterBackward0, (input, st), out, save=save,
                      attrs={"key": key, "src_shape": st._data.shape, "src_part": part,
                             "dim": saved_int(raw_dim)})
    return record(ScatterBackward1, (input,), out, save=save,
                  attrs={"key": key, "dim": saved_int(raw_dim)})


def _scatter_with_reduce(input: Tensor, dim: int, index, src, reduce: str) -> Tensor:
    """PyTorch's older ``scatter(..., reduce='add' | 'multiply')``: ``src`` (a tensor or a number)
    added into, or multiplied onto, the entries at ``index``, repeats accumulating. PyTorch has
    no derivative for it (``scatter_reduce`` is the differentiable form): its NotImplemented node."""
    from .._core.warn_once import warn_once
    from ._declare import record_underivable

    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    data = input._data
    xp = get_array_module(data)
    idx = _index_array(index, "scatter", xp)
    dim = _wrap_dim(dim, data.ndim)
    st = src if isinstance(src, Tensor) else None
    _scatter_checks("scatter", data, idx, dim, st._data if st is not None else None)
    if st is not None:
        warn_once("scatter reduce with a tensor", "The reduce argument of gradnb.scatter with "
                  "Tensor src is deprecated and will be removed in a future PyTorch release. "
                  "Use gradnb.scatter_reduce instead for more reduction options.", stacklevel=5)
        piece = _src_part(st._data, idx)[0].astype(data.dtype, copy=False)
    else:
        piece = xp.asarray(src).astype(data.dtype)
    key = _along_dim_key(data, idx, dim, xp)
    out = data.copy()
    (xp.add if reduce == "add" else xp.multiply).at(out, key, xp.broadcast_to(piece, idx.shape))
    return record_underivable("scatter", (input, st), out)


class ScatterAddBackward0(Node):
    rule = "self: grad; src: grad.gather(dim, index)"
    saves = (None,)  # the index, given per call
    saved_names = ("index",)
    saved_attrs: ClassVar[dict] = {"dim": "dim"}
    inputs = ("self", "src")
    __slots__ = ("dim", "key", "src_part", "src_shape")

    def backward(self, g):
        return (g if self.needs(0) else None), (_src_grad(self, g) if self.needs(1) else None)


def scatter_add(input: Tensor, dim: int, index, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats add up)."""
    data = input._data
    xp = get_array_module(data)
    idx = _index_array(index, "scatter_add", xp)
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    _scatter_checks("scatter_add", data, idx, dim, src._data)
    key = _along_dim_key(data, idx, dim, xp)
    out = data.copy()
    piece, part = _src_part(src._data, idx)
    if data.ndim == 0:
        out += piece.astype(out.dtype).sum() if idx.size else 0
    else:
        _add_at(xp, out, key, piece.astype(out.dtype, copy=False))
    return record(ScatterAddBackward0, (input, src), out, save=(_as_saved(index, idx),),
                  attrs={"key": key, "src_shape": src._data.shape, "src_part": part,
                         "dim": saved_int(raw_dim)})


# -- index_select / index_add --------------------------------------------------------------------
def _vector_index(index, op: str, xp, size: int):
    arr = _raw(index, xp)
    if arr.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int32 or int64 for index")
    arr = arr.reshape(-1)
    if arr.size and (int(arr.max()) >= size or int(arr.min()) < -size):
        raise IndexError("index out of range in self")
    return arr


def _dim_key(data, dim: int, arr):
    """The key reading ``arr`` along ``dim`` (a 0-d tensor behaves as one of size 1)."""
    if data.ndim == 0:
        return ()
    return (slice(None),) * dim + (arr,)


class IndexSelectBackward0(Node):
    rule = "self: index_select_backward(grad, self.sym_sizes(), dim, index)"
    saves = (None,)  # the index, given per call
    saved_names = ("index",)
    saved_attrs: ClassVar[dict] = {"dim": "dim", "self_sym_sizes": "in_shape"}
    inputs = ("self",)
    __slots__ = ("dim", "in_shape", "key")

    def backward(self, g):
        return (scatter_into_zeros(self.in_shape, self.key, g),)


@accepts_out("index_select")
def index_select(input: Tensor, dim: int, index) -> Tensor:
    """The entries at ``index`` (a vector) along ``dim``; repeated indices add up in the
    gradient."""
    data = input._data
    xp = get_array_module(data)
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    if data.ndim and data.shape[dim] == 0 and getattr(index, "numel", lambda: 1)():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    arr = _vector_index(index, "index_select", xp, data.shape[dim] if data.ndim else 1)
    key = _dim_key(data, dim, arr)
    return record(IndexSelectBackward0, (input,), data[key], save=(_as_saved(index, arr),),
                  attrs={"in_shape": data.shape, "key": key, "dim": saved_int(raw_dim)})


class IndexAddBackward0(Node):
    rule = "self: grad; source: maybe_multiply(grad.index_select(dim, index).expand_as(source), alpha)"
    saves = (None, 1)  # the index (given per call), source
    saved_names = ("index", "source")
    saved_attrs: ClassVar[dict] = {"alpha": "alpha", "dim": "dim", "source_dim": "source_dim"}
    inputs = ("self", "source")
    __slots__ = ("alpha", "dim", "key", "source_dim")

    def backward(self, g):
        g_src = None
        if self.needs(1):
            g_src = g[self.key]
            if self.alpha != 1:
                g_src = g_src * self.alpha
        return (g if self.needs(0) else None), g_src


def index_add(input: Tensor, dim: int, index, source: Tensor, *, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    data = input._data
    xp = get_array_module(data)
    raw_dim = dim
    dim = _wrap_dim(dim, data.ndim)
    arr = _vector_index(index, "index_add", xp, data.shape[dim] if data.ndim else 1)
    src_shape = source._data.shape
    if data.ndim and (len(src_shape) not in (data.ndim, 0) or any(
            a != b for d, (a, b) in enumerate(zip(data.shape, src_shape)) if d != dim)):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(data.shape)} "
                           f"source.shape = {list(src_shape)}")
    key = _dim_key(data, dim, arr)
    src = source._data if alpha == 1 else source._data * alpha
    out = data.copy()
    if data.ndim == 0:
        out += src.astype(out.dtype).sum()
    else:
        _add_at(xp, out, key, src.astype(out.dtype, copy=False))
    return record(IndexAddBackward0, (input, source), out,
                  save=(_as_saved(index, arr), 1 if source._requires_grad else None),
                  attrs={"key": key, "alpha": alpha, "dim": saved_int(raw_dim),
                         "source_dim": len(src_shape)})


# -- masks ---------------------------------------------------------------------------------------
def _bool_mask(mask, op: str, xp):
    arr = _raw(mask, xp)
    if arr.dtype != bool:
        raise RuntimeError(op.format(dtype=scalar_type_name(arr.dtype).lower()))
    return arr


class MaskedFillBackward0(Node):
    rule = "self: grad.masked_fill(mask, 0)"
    why_zero = "a mask: every entry was filled"
    saves = (None,)  # the mask, given per call
    saved_names = ("mask",)
    inputs = ("self",)
    __slots__ = ("mask",)

    def backward(self, g):
        return (_zero_at(g, self.mask),)


class MaskedFillBackward1(Node):
    rule = "self: grad.masked_fill(mask, 0); value: masked_fill_backward(grad, mask)"
    saves = (None,)  # the mask, given per call
    saved_names = ("mask",)
    inputs = ("self", "value")
    __slots__ = ("mask",)

    def backward(self, g):
        g_input = _zero_at(g, self.mask) if self.needs(0) else None
        g_value = sum_all(g[self.mask]) if self.needs(1) else None
        return g_input, g_value


def masked_fill(input: Tensor, mask, value) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) where ``mask`` is True;
    the mask broadcasts."""
    data = input._data
    xp = get_array_module(data)
    m = _bool_mask(mask, "masked_fill_ only supports boolean masks, but got mask with dtype "
                         "{dtype}", xp)
    vt = value if isinstance(value, Tensor) else None
    check_value_fits(value, data.dtype)
    if vt is not None and vt._data.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {vt._data.ndim} dimension(s).")
    shape = np.broadcast_shapes(data.shape, m.shape)
    m0, m = m, xp.broadcast_to(m, shape)
    out = xp.broadcast_to(data, shape).copy()
    if vt is None:  # a number converts as PyTorch's Scalar does (-3 is 253 in uint8)
        out[m] = converted_number(value, data.dtype)
    else:
        v = vt._data
        if v.dtype.kind == "c" and data.dtype.kind != "c":  # (checked: no imaginary part)
            v = v != 0 if data.dtype.kind == "b" else v.real
        out[m] = v
    save = (_as_saved(mask, m0),)
    if vt is not None:
        return record(MaskedFillBackward1, (input, vt), out, save=save, attrs={"mask": m})
    return record(MaskedFillBackward0, (input,), out, save=save, attrs={"mask": m})


class MaskedSelectBackward0(Node):
    rule = "self: masked_select_backward(grad, self, mask)"
    saves = (None, 0)  # the mask (given per call), self
    saved_names = ("mask", "self")
    inputs = ("self",)
    __slots__ = ("mask", "shape")

    def backward(self, g):
        return (scatter_into_zeros(self.shape, self.mask, g, accumulate=False),)


@accepts_out("masked_select")
def masked_select(input: Tensor, mask) -> Tensor:
    """The entries where ``mask`` (broadcast with ``input``) is True, as a 1-d tensor."""
    data = input._data
    xp = get_array_module(data)
    m = _bool_mask(mask, "masked_select: expected BoolTensor for mask", xp)
    shape = np.broadcast_shapes(data.shape, m.shape)
    m0, m = m, xp.broadcast_to(m, shape)
    out = xp.broadcast_to(data, shape)[m]
    return record(MaskedSelectBackward0, (input,), out, save=(_as_saved(mask, m0), 0),
                  attrs={"shape": shape, "mask": m})


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the non-zero entries: an ``(n, ndim)`` int64 tensor, or with ``as_tuple`` one
    1-d tensor per dimension."""
    data = input._data
    xp = get_array_module(data)
    if as_tuple:
        return tuple(wrap(a.astype(np.int64, copy=False)) for a in xp.nonzero(data.reshape(
            data.shape or (1,))))
    return wrap(xp.argwhere(data).astype(np.int64, copy=False))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the ``(n, ndim)`` indices of the non-zero entries."""
    return nonzero(input)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` cut or padded (with ``fill_value`` rows) to exactly ``size`` rows: a
    shape known before the values, as compilers want."""
    size = int_arg("nonzero_static", "size", 2, size)
    if not _is_int(fill_value):
        raise TypeError("nonzero_static(): argument 'fill_value' must be int, not "
                        f"{type_name(fill_value)}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input)._data[:size]
    xp = get_array_module(found)
    out = xp.full((size, found.shape[1]), fill_value, dtype=np.int64)
    out[:found.shape[0]] = found
    return wrap(out)


def take_along_dim(input: Tensor, indices, dim: int | None = None) -> Tensor:
    """``gather`` after broadcasting ``input`` and ``indices`` (all but ``dim``); without ``dim``
    both are flattened first. As PyTorch, ``input`` is always expanded (an ``ExpandBackward0``,
    even to its own shape)."""
    xp = get_array_module(input._data)
    idx = _index_array(indices, "gradnb.take_along_dim", xp)
    if dim is None:
        flat = input.view(-1)
        return gather(flat, 0, wrap(_nonnegative(idx.reshape(-1), flat._data.shape[0], xp)))
    ndim = input._data.ndim
    dim = _wrap_dim(dim, ndim)
    if idx.ndim != ndim:
        raise RuntimeError("gradnb.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    in_shape, idx_shape = list(input._data.shape), list(idx.shape)
    in_shape[dim] = idx_shape[dim] = 1
    common = list(np.broadcast_shapes(tuple(in_shape), tuple(idx_shape)))
    target = list(common)
    target[dim] = input._data.shape[dim]
    common[dim] = idx.shape[dim]
    idx = _nonnegative(idx, input._data.shape[dim], xp)
    return gather(expand(input, tuple(target)), dim, wrap(xp.broadcast_to(idx, tuple(common))))


def _nonnegative(idx, size: int, xp):
    """``idx`` with negative indices counted from the end (PyTorch's take_along_dim saves them
    so in its ``gather``)."""
    return xp.where(idx < 0, idx + size, idx) if idx.size and int(idx.min()) < 0 else idx


def _iterate(input: Tensor):
    if input._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (select(input, 0, i) for i in range(input._data.shape[0]))


TENSOR_METHODS = {
    "__getitem__": getitem, "__iter__": _iterate,
    "select": select, "gather": gather, "scatter": scatter,
    "scatter_add": scatter_add, "index_select": index_select, "index_add": index_add,
    "index_put": index_put, "masked_fill": masked_fill, "masked_select": masked_select,
    "nonzero": nonzero, "argwhere": argwhere, "nonzero_static": nonzero_static, "put": put, "take_along_dim": take_along_dim,
}
