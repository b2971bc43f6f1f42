"""Max pooling that remembers where each maximum was: ``max_pool3d`` (windows of a fixed size)
and ``adaptive_max_pool1d/2d/3d``; ``fractional.py`` shares the node and the picking.

The forward walks a window's taps, each step one compare over all windows at once (a loop
over the kernel, never over elements): for fixed windows a tap is a strided slice of the input
padded with ``-inf``, for adaptive and fractional ones a gather from a table of flat positions.
The maximum is picked as PyTorch's kernels pick it: the first of equal values, the last
NaN, and the window's first position when every value is ``-inf``. The gradient adds each
output's gradient at its maximum's place (``result1``, the flat index within the ``(N, C)``
plane); on tensors that is an ``index_put``, so double backward comes free.
"""

from __future__ import annotations

import numpy as np

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record, wrap
from ..._core.tensor import Tensor
from ...ops import dual
from ...ops.indexing import scatter_into_zeros
from .pool_checks import (
    check_adaptive_input,
    check_pool_input,
    check_pool_output,
    check_pool_window,
)
from .separable import adaptive_bounds, pool_out_size

__all__ = ["IndicesPoolBackward", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "max_pool3d", "window_max"]


class IndicesPoolBackward(Node):
    """Each output's gradient added at the input element its saved index names (``result1``,
    flat over the ``spatial`` last dims): PyTorch's ``max_pool_double_backward`` adjoint.
    Subclasses name the op, its rank and the plain values it shows. (``result1`` is saved by
    ``record(save=(0, indices))``: the indices are no output of this node.)"""
    rule = "self: grad added at result1 (each window's argmax) into zeros like self"

    __slots__ = ()
    inputs = ("self",)
    saves = ("self", "result1")
    spatial = 2

    def backward(self, g):
        x, indices = self.saved(g)
        shape = tuple(x.shape)
        idx = dual.data(indices)
        planes = int(np.prod(shape[:-self.spatial], dtype=np.int64))
        idx = idx.reshape(planes, int(np.prod(idx.shape[-self.spatial:], dtype=np.int64)))
        rows = get_array_module(idx).arange(planes).reshape(-1, 1)
        size = int(np.prod(shape[-self.spatial:], dtype=np.int64))
        out = scatter_into_zeros((planes, size), (rows, idx), dual.reshape(g, idx.shape))
        return (dual.reshape(out, shape),)


class AdaptiveMaxPool2DBackward0(IndicesPoolBackward):
    __slots__ = ()


class AdaptiveMaxPool3DBackward0(IndicesPoolBackward):
    __slots__ = ()
    spatial = 3


class MaxPool3DWithIndicesBackward0(IndicesPoolBackward):
    __slots__ = ()
    saves = ("self", "result1", "kernel_size", "stride", "padding", "dilation", "ceil_mode")
    spatial = 3


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _has_nan(x) -> bool:
    return x.dtype.kind == "f" and bool(get_array_module(x).isnan(x).any())


def _moves(val, best, nan: bool):
    """Where PyTorch's kernels move a window's maximum to ``val``: ``val > max || isnan(val)``
    (so the first of equal values wins, and the last NaN); ``nan``: whether ``x`` has any."""
    move = val > best
    if nan:
        move |= get_array_module(val).isnan(val)
    return move


def window_max(x, table: np.ndarray):
    """The maximum of each window of ``x`` ``(..., S)`` and its flat position: ``table``
    ``(O, K)`` (or ``(..., O, K)``, one per plane) holds the positions of the K taps of each of
    O windows. Tap by tap over all windows at once, as PyTorch's kernels: the maximum starts at
    ``-inf`` at the window's first place and moves where ``_moves`` says."""
    xp = get_array_module(x)
    table = xp.asarray(table)
    per_plane = table.ndim > 2
    first = table[..., 0] if table.shape[-1] else xp.zeros(table.shape[:-1], dtype=np.int64)
    where = xp.broadcast_to(first, x.shape[:-1] + first.shape[-1:]).copy()
    best = xp.full(where.shape, _lowest(x.dtype), dtype=x.dtype)
    nan = _has_nan(x)
    for k in range(table.shape[-1]):
        tap = table[..., k]
        val = xp.take_along_axis(x, tap, -1) if per_plane else x[..., tap]
        move = _moves(val, best, nan)
        xp.copyto(best, val, where=move)
        xp.copyto(where, xp.broadcast_to(tap, where.shape), where=move)
    return best, where


def _table(coords, sizes) -> np.ndarray:
    """Flat positions ``(O, K)`` of windows given per dim as ``(o_d, k_d)`` input coordinates
    (row-major over the dims, windows and taps alike)."""
    n = len(coords)
    flat, step = 0, 1
    for d in reversed(range(n)):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = coords[d].shape
        flat = flat + coords[d].reshape(shape) * step
        step *= sizes[d]
    outs = tuple(c.shape[0] for c in coords)
    taps = tuple(c.shape[1] for c in coords)
    count, width = (int(np.prod(s, dtype=np.int64)) for s in (outs, taps))
    return np.broadcast_to(flat, outs + taps).reshape(count, width)


def sliding_max(x, kernel, stride, pads, dilation, outs):
    """The maximum of every ``kernel`` window (``stride``, ``pads``, ``dilation``) over the last
    ``len(kernel)`` dims of ``x`` and its flat position there, tap by tap: one tap of every
    window at once is one strided slice of ``x`` padded with ``-inf`` (which never wins), and
    each window starts at its first place inside ``x``, as in PyTorch's kernels."""
    xp = get_array_module(x)
    n = len(kernel)
    sizes = x.shape[-n:]
    lead = x.shape[:-n]
    widths = [(p, max(0, (o - 1) * s + (k - 1) * d + 1 - p - size))
              for size, k, s, p, d, o in zip(sizes, kernel, stride, pads, dilation, outs)]
    if any(lo or hi for lo, hi in widths):
        x = xp.pad(x, [(0, 0)] * len(lead) + widths, constant_values=_lowest(x.dtype))
    steps = [int(np.prod(sizes[d + 1:], dtype=np.int64)) for d in range(n)]
    base, first = 0, 0
    for d in range(n):
        start = np.arange(outs[d]) * stride[d] - pads[d]
        inside = start - (np.minimum(start, 0) // dilation[d]) * dilation[d]
        shape = [1] * n
        shape[d] = outs[d]
        base = base + (start * steps[d]).reshape(shape)
        first = first + (inside * steps[d]).reshape(shape)
    best = xp.full(lead + tuple(outs), _lowest(x.dtype), dtype=x.dtype)
    # Which tap won (-1: none beat -inf, the window's first place inside): a small int per
    # output, turned into positions once at the end.
    won = xp.full(best.shape, -1, dtype=np.int32)
    nan = _has_nan(x)
    taps = list(np.ndindex(*kernel))
    for number, tap in enumerate(taps):
        window = tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                       for k, d, o, s in zip(tap, dilation, outs, stride))
        val = x[(Ellipsis, *window)]
        move = _moves(val, best, nan)
        xp.copyto(best, val, where=move)
        xp.copyto(won, number, where=move)
    offsets = xp.asarray([sum(k * d * st for k, d, st in zip(tap, dilation, steps))
                          for tap in taps])
    where = xp.where(won < 0, xp.asarray(first), xp.asarray(base) + offsets[won])
    return best, where


def _tuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        return tuple(v) * n if len(v) == 1 else tuple(v)
    return (v,) * n


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window of ``(N, C, D, H, W)`` (or unbatched); with
    ``return_indices`` also the flat index of each maximum within its ``(D, H, W)`` volume."""
    kernel = _tuple(kernel_size, 3)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 3)
    pads, dil = _tuple(padding, 3), _tuple(dilation, 3)
    check_pool_window("max_pool3d", kernel, stride, pads, dil)
    check_pool_input(input, 3)
    sizes = input.shape[-3:]
    outs = [pool_out_size(size, k, s, p, ceil_mode, d)
            for size, k, s, p, d in zip(sizes, kernel, stride, pads, dil)]
    check_pool_output(input, 3, outs)
    out, where = sliding_max(input._data, kernel, stride, pads, dil, outs)
    indices = wrap(where)
    t = record(MaxPool3DWithIndicesBackward0, (input,), out, save=(0, indices),
               attrs={"kernel_size": kernel, "stride": stride, "padding": pads,
                      "dilation": dil, "ceil_mode": ceil_mode})
    return (t, indices) if return_indices else t


def _out_sizes(output_size, input: Tensor, n: int, name: str) -> tuple:
    """An adaptive max pool's output sizes (None keeps the input's), checked as PyTorch does."""
    sizes = tuple(input.shape[-n:])
    out = _tuple(output_size, n)
    if len(out) != n:
        if n == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                               f"{len(out)})")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")
    if any(o is not None and o < 0 for o in out):
        shape = [*input.shape[:-n], *(s if o is None else o for o, s in zip(out, sizes))]
        bad = next(o for o in out if o is not None and o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return tuple(s if o is None else o for o, s in zip(out, sizes))


def _adaptive_max(input: Tensor, n: int, outs: tuple, return_indices: bool):
    """PyTorch's ``adaptive_max_pool2d``/``3d``: window ``o`` of a dim of size L spans
    ``[floor(o L / out), ceil((o + 1) L / out))``; shorter windows repeat their last place."""
    coords = []
    for size, o in zip(input.shape[-n:], outs):
        bounds = np.array(adaptive_bounds(size, o), dtype=np.int64).reshape(-1, 2)
        width = int((bounds[:, 1] - bounds[:, 0]).max()) if o else 0
        coords.append(np.minimum(bounds[:, :1] + np.arange(width), bounds[:, 1:] - 1))
    x = input._data
    plane = int(np.prod(x.shape[-n:], dtype=np.int64))
    out, where = window_max(x.reshape(*x.shape[:-n], plane), _table(coords, x.shape[-n:]))
    lead = (*x.shape[:-n], *outs)
    out, where = out.reshape(lead), where.reshape(lead)
    indices = wrap(where)
    cls = AdaptiveMaxPool2DBackward0 if n == 2 else AdaptiveMaxPool3DBackward0
    t = record(cls, (input,), out, save=(0, indices))
    return (t, indices) if return_indices else t


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of windows of the last dim chosen so that the output has ``output_size``
    (PyTorch's: ``adaptive_max_pool2d`` over a height of one)."""
    check_adaptive_input(input, 1, "max")
    (out,) = _out_sizes(output_size, input, 1, "adaptive_max_pool1d")
    res = _adaptive_max(input.unsqueeze(-2), 2, (1, out), True)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res[0].squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of windows chosen so that the output has spatial size ``output_size``."""
    check_adaptive_input(input, 2, "max")
    outs = _out_sizes(output_size, input, 2, "adaptive_max_pool2d")
    return _adaptive_max(input, 2, outs, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of windows chosen so that the output has spatial size ``output_size``."""
    check_adaptive_input(input, 3, "max")
    outs = _out_sizes(output_size, input, 3, "adaptive_max_pool3d")
    return _adaptive_max(input, 3, outs, return_indices)
