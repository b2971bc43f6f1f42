"""``pad``'s reflect, replicate and circular modes, as PyTorch records them.

Reflect and replicate are one node each per padded rank (``ReflectionPad2DBackward0``, ...):
the output reads the input at one index array per padded dim (an open mesh), so the forward is
one gather and the gradient one scatter-add of ``grad`` back onto the input. Circular is
PyTorch's composite ``_pad_circular``: an empty output, the input copied into its middle, then
each padded dim's borders copied from the opposite side (``SliceBackward0`` and
``CopySlices`` nodes).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node, bump_version
from .._core.record import record
from .._core.tensor import Tensor
from .creation import zeros
from .indexing import CopySlices, scatter_into_zeros

__all__ = ["circular_pad", "index_pad"]


def _pad_index(size: int, left: int, right: int, mode: str) -> np.ndarray:
    j = np.arange(-left, size + right)
    if mode == "reflect":
        period = 2 * (size - 1)
        j = np.abs(j) % period if period else np.zeros_like(j)
        return np.where(j >= size, period - j, j)
    return np.clip(j, 0, size - 1)  # replicate


def _key(shape: tuple, pads: tuple, mode: str, xp) -> tuple:
    """Where each output element reads the input: slices for the leading dims, an open mesh of
    index arrays (on ``xp``'s device) for the padded ones (``pads`` from the last dim, as
    ``pad`` takes them)."""
    n = len(pads) // 2
    lead = len(shape) - n
    index = [_pad_index(shape[lead + i], pads[2 * (n - 1 - i)], pads[2 * (n - 1 - i) + 1], mode)
             for i in range(n)]
    return (slice(None),) * lead + tuple(xp.asarray(i) for i in np.ix_(*index))


class _IndexPad(Node):
    """Each input element gets the sum of the gradients of the output places that read it."""
    __slots__ = ("mode", "padding")
    inputs = ("self",)
    saves = ("self",)
    unsigned = ("padding",)
    saved_attrs: ClassVar[dict] = {"padding": "padding"}

    def backward(self, g):
        (x,) = self.saved(g)
        xp = get_array_module(g._data if isinstance(g, Tensor) else g)
        key = _key(tuple(x.shape), self.padding, self.mode, xp)
        return (scatter_into_zeros(x.shape, key, g),)


class ReflectionPad1DBackward0(_IndexPad):
    rule = "self: reflection_pad1d_backward(grad, self, padding)"
    __slots__ = ()


class ReflectionPad2DBackward0(_IndexPad):
    rule = "self: reflection_pad2d_backward(grad, self, padding)"
    __slots__ = ()


class ReflectionPad3DBackward0(_IndexPad):
    rule = "self: reflection_pad3d_backward(grad, self, padding)"
    __slots__ = ()


class ReplicationPad1DBackward0(_IndexPad):
    rule = "self: replication_pad1d_backward(grad, self, padding)"
    __slots__ = ()


class ReplicationPad2DBackward0(_IndexPad):
    rule = "self: replication_pad2d_backward(grad, self, padding)"
    __slots__ = ()


class ReplicationPad3DBackward0(_IndexPad):
    rule = "self: replication_pad3d_backward(grad, self, padding)"
    __slots__ = ()


_NODES = {"reflect": (ReflectionPad1DBackward0, ReflectionPad2DBackward0,
                      ReflectionPad3DBackward0),
          "replicate": (ReplicationPad1DBackward0, ReplicationPad2DBackward0,
                        ReplicationPad3DBackward0)}


def index_pad(input: Tensor, pads: tuple, mode: str) -> Tensor:
    """``reflect`` or ``replicate`` padding of the last ``len(pads) // 2`` dims (1 to 3),
    arguments already checked."""
    data = input._data
    xp = get_array_module(data)
    # contiguous, as PyTorch's pad gives it (a gather over an open mesh may not be)
    out = xp.ascontiguousarray(data[_key(data.shape, pads, mode, xp)])
    return record(_NODES[mode][len(pads) // 2 - 1], (input,), out,
                  attrs={"padding": pads, "mode": mode})


def circular_pad(input: Tensor, pads: tuple) -> Tensor:
    """PyTorch's ``_pad_circular``, arguments already checked: the input (cropped where an
    amount is negative) copied into the middle of an empty output, then each padded dim's
    borders copied from the other side, last dim first."""
    ndim, n = input.ndim, len(pads) // 2
    shape = list(input.shape)
    for i in range(n):
        shape[ndim - 1 - i] += pads[2 * i] + pads[2 * i + 1]
    out = zeros(*shape, dtype=input.dtype, device=input.device)
    middle, source = [slice(None)] * ndim, input
    for i in range(n):
        dim, left, right = ndim - 1 - i, max(pads[2 * i], 0), max(pads[2 * i + 1], 0)
        middle[dim] = slice(left, shape[dim] - right)
        start, stop = max(-pads[2 * i], 0), input.shape[dim] - max(-pads[2 * i + 1], 0)
        source = source.narrow(dim, start, stop - start)
    _copy_into(out, tuple(middle), source)
    for i in range(n):
        dim, left, right = ndim - 1 - i, pads[2 * i], pads[2 * i + 1]
        size, at = shape[dim], (slice(None),) * (ndim - 1 - i)
        if left > 0:
            _copy_into(out, (*at, slice(0, left)),
                       out.narrow(dim, size - left - max(right, 0), left))
        if right > 0:
            _copy_into(out, (*at, slice(size - right, size)), out.narrow(dim, max(left, 0), right))
    return out


def _copy_into(out: Tensor, key: tuple, source: Tensor) -> None:
    """``out[key].copy_(source)``, ``source`` possibly a view of ``out`` itself: its history is
    linked before ``out``'s version moves, as PyTorch links it (``t[key] = view_of_t`` would
    find the view stale and regenerate it as ``AsStridedBackward0``)."""
    out._data[key] = source._data
    record(CopySlices, (out, source), None, into=out, attrs={"key": key, "accumulate": False})
    bump_version(out)
