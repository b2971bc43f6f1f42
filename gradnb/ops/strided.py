"""Views by explicit sizes and element strides over a tensor's storage: ``as_strided``,
``as_strided_copy`` and ``as_strided_scatter``.

A tensor's storage is the row-major memory of its base (the tensor itself when it is not a view):
``x[1:].as_strided((2,), (1,))`` starts at the view's own offset, 3 elements into ``x``, as in
PyTorch. The output is a NumPy strided view of that memory. Its gradient adds ``g`` into a zero
storage at the positions the output reads (entries read twice get both contributions), then
reads the input's entries back from it, so storage the input does not cover gets nothing.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record
from .._core.views import positions_in_base
from . import dual
from . import indexing as ix
from ._common import Tensor, wrap
from .shape import copied_view

__all__ = ["as_strided", "as_strided_copy", "as_strided_scatter"]


def _storage(input: Tensor):
    """The flat storage ``input`` lives in, its element offset there, and the storage position of
    each of its entries. A base that is not row-major has no flat memory to share: its row-major
    copy stands in (the result is then no view)."""
    owner = input if input._base is None else input._base
    base = owner._data
    xp = get_array_module(base)
    flat = xp.ascontiguousarray(base).reshape(-1)
    if owner is input:
        return flat, 0, xp.arange(base.size, dtype=np.int64).reshape(base.shape)
    positions = positions_in_base(input._data, base)
    return flat, int(positions.reshape(-1)[0]) if positions.size else 0, positions


def _positions(xp, size, stride, offset: int):
    """The storage position of every entry of a ``size``/``stride`` view starting at ``offset``."""
    pos = xp.full(tuple(size), offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        pos = pos + (xp.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def _check_geometry(size, stride, offset: int, storage_size: int, itemsize: int) -> None:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage_size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size of "
                           f"{needed * itemsize} are out of bounds for storage of size "
                           f"{storage_size * itemsize}")


class AsStridedStorageBackward(Node):
    """``g`` added into zeros of the storage at the output's positions, then the input's entries
    read back from there (PyTorch's ``AsStridedBackward0``; gradnb's class of that name
    regenerates views written in place)."""
    rule = (
        "self: grad added into zeros of the storage at the output's positions, read back at "
        "self's"
    )

    torch_name = "AsStridedBackward0"
    __slots__ = ("input_positions", "output_positions", "size", "storage_offset", "storage_size",
                 "stride")
    saved_attrs: ClassVar[dict] = {"size": "size", "storage_offset": "storage_offset",
                                   "stride": "stride"}
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        storage = ix.scatter_into_zeros((self.storage_size,), (self.output_positions,), g)
        return (storage[self.input_positions],)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given ``size`` and element ``stride``, starting
    ``storage_offset`` elements in (by default where ``input`` starts)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    data = input._data
    xp = get_array_module(data)
    flat, own_offset, input_positions = _storage(input)
    offset = own_offset if storage_offset is None else int(storage_offset)
    _check_geometry(size, stride, offset, flat.size, data.itemsize)
    out = xp.lib.stride_tricks.as_strided(flat[offset:] if flat.size else flat, shape=size,
                                          strides=tuple(s * data.itemsize for s in stride))
    return record(AsStridedStorageBackward, (input,), out,
                  attrs={"storage_size": flat.size, "size": size, "stride": stride,
                         "storage_offset": storage_offset,
                         "output_positions": _positions(xp, size, stride, offset),
                         "input_positions": input_positions})


def as_strided_copy(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """``as_strided`` as a new tensor that shares no memory with ``input``."""
    return copied_view(input, as_strided(input, size, stride, storage_offset))


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` (row-major, so its storage is its entries in order) with ``src``
    written where ``as_strided(size, stride, storage_offset)`` of that copy reads."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    data = input._data
    offset = 0 if storage_offset is None else int(storage_offset)
    _check_geometry(size, stride, offset, data.size, data.itemsize)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    xp = get_array_module(data)
    positions = _positions(xp, size, stride, offset).reshape(-1)
    out = xp.array(data, order="C")
    out.reshape(-1)[positions] = src._data.reshape(-1)  # (a view: ``out`` is row-major)
    return record(AsStridedScatterBackward0, (input, src), out,
                  attrs={"positions": positions, "size": size, "stride": stride,
                         "storage_offset": storage_offset})


class AsStridedScatterBackward0(Node):
    """Gradient of ``as_strided_scatter``: ``self`` gets ``g`` with the written positions zeroed,
    ``src`` reads ``g`` at them."""
    rule = ("self: grad with the positions src was written to zeroed; "
            "src: grad.as_strided(size, stride, storage_offset)")
    __slots__ = ("positions", "size", "storage_offset", "stride")
    inputs = ("self", "src")
    saved_attrs: ClassVar[dict] = {"size": "size", "storage_offset": "storage_offset",
                                   "stride": "stride"}

    def backward(self, g):
        keep = dual.xp_of(g).ones(tuple(g.shape), dtype=bool)
        keep.reshape(-1)[self.positions] = False
        flat = dual.reshape(g, (-1,))
        if isinstance(g, Tensor):
            picked = ix.index_select(flat, 0, wrap(self.positions))
        else:
            picked = flat[self.positions]
        return dual.where(keep, g, 0), dual.reshape(picked, self.size)


TENSOR_METHODS = {"as_strided": as_strided, "as_strided_scatter": as_strided_scatter}
