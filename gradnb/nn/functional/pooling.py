"""Pooling of every rank: average (``avg_pool1d/2d/3d``), adaptive average and max, and
``max_pool1d`` (``max_pool2d`` over a height of one).

Average pools are separable linear maps (``separable.py``); adaptive max pools take the
``amax`` of each window, whose gradient goes to the window's maximum.
"""

from __future__ import annotations

import numpy as np

from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor
from ...ops.shape import stack
from .conv import max_pool2d
from .separable import adaptive_avg_matrix, adaptive_bounds, apply_along, avg_pool_matrix

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "max_pool1d",
]


def _tuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(v)
    return (v,) * n


def _check_rank(input: Tensor, n: int, name: str) -> None:
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D (batch mode) tensor for "
                           f"input, but got: {list(input.shape)}")


def _avg_pool(input: Tensor, n: int, kernel_size, stride, padding, ceil_mode,
              count_include_pad, divisor_override, name: str) -> Tensor:
    _check_rank(input, n, name)
    kernel = _tuple(kernel_size, n)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, n)
    pads = _tuple(padding, n)
    for k, p in zip(kernel, pads):
        if p > k // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation=1")
    sizes = input.shape[-n:]
    mats = [avg_pool_matrix(s, k, st, p, ceil_mode, count_include_pad,
                            unit=divisor_override is not None)
            for s, k, st, p in zip(sizes, kernel, stride, pads)]
    out = apply_along(input, mats)
    return out / divisor_override if divisor_override is not None else out


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each ``kernel_size`` window along the last dim of ``(N, C, L)``."""
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each ``kernel_size`` window of ``(N, C, H, W)`` (or ``(C, H, W)``)."""
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool2d")


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each ``kernel_size`` window of ``(N, C, D, H, W)``."""
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool3d")


def _out_sizes(output_size, sizes) -> tuple:
    out = _tuple(output_size, len(sizes))
    return tuple(s if o is None else o for o, s in zip(out, sizes))


def _adaptive_avg(input: Tensor, n: int, output_size) -> Tensor:
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_avg_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, "
                           f"but got {list(input.shape)}")
    sizes = tuple(input.shape[-n:])
    outs = _out_sizes(output_size, sizes)
    return apply_along(input, [adaptive_avg_matrix(s, o) for s, o in zip(sizes, outs)])


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average windows of the last dim chosen so that the output has ``output_size``."""
    return _adaptive_avg(input, 1, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average windows chosen so that the output has spatial size ``output_size``."""
    return _adaptive_avg(input, 2, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average windows chosen so that the output has spatial size ``output_size``."""
    return _adaptive_avg(input, 3, output_size)


def _adaptive_max(input: Tensor, n: int, output_size, return_indices: bool):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_max_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, "
                           f"but got {list(input.shape)}")
    sizes = tuple(input.shape[-n:])
    outs = _out_sizes(output_size, sizes)
    bounds = [adaptive_bounds(s, o) for s, o in zip(sizes, outs)]
    dims = tuple(range(-n, 0))
    values = []
    for window in np.ndindex(*outs):
        index = (Ellipsis,) + tuple(slice(*bounds[d][w]) for d, w in enumerate(window))
        values.append(input[index].amax(dim=dims))
    out = stack(values, -1).reshape(*input.shape[:-n], *outs)
    if not return_indices:
        return out
    return out, _tensor(_window_argmax(input.detach().numpy(), bounds, outs))


def _window_argmax(x: np.ndarray, bounds, outs) -> np.ndarray:
    """Flat (row-major over the spatial dims) index of each window's maximum."""
    n = len(outs)
    sizes = x.shape[-n:]
    idx = np.zeros(x.shape[:-n] + tuple(outs), dtype=np.int64)
    for window in np.ndindex(*outs):
        sl = tuple(slice(*bounds[d][w]) for d, w in enumerate(window))
        block = x[(Ellipsis,) + sl]
        flat = block.reshape(*block.shape[:-n], -1).argmax(-1)
        local = np.unravel_index(flat, block.shape[-n:])
        glob = [loc + bounds[d][w][0] for d, (loc, w) in enumerate(zip(local, window))]
        idx[(Ellipsis,) + window] = np.ravel_multi_index(glob, sizes)
    return idx


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of windows of the last dim chosen so that the output has ``output_size``."""
    return _adaptive_max(input, 1, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of windows chosen so that the output has spatial size ``output_size``."""
    return _adaptive_max(input, 2, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The maximum of windows chosen so that the output has spatial size ``output_size``."""
    return _adaptive_max(input, 3, output_size, return_indices)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window along the last dim of ``(N, C, L)`` (or ``(C, L)``)."""
    _check_rank(input, 1, "max_pool1d")
    k = _tuple(kernel_size, 1)[0]
    s = k if stride is None or stride == [] else _tuple(stride, 1)[0]
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _tuple(padding, 1)[0]),
                     (1, _tuple(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)

