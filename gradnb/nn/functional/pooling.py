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
from .pool_checks import check_pool_input, check_pool_output, check_pool_window
from .separable import (
    adaptive_avg_matrix,
    adaptive_bounds,
    apply_along,
    avg_pool_matrix,
    pool_out_size,
)

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool3d",
]


def _tuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(v)
    return (v,) * n


def _check_rank(input: Tensor, n: int, name: str) -> None:
    if input.ndim not in (n + 1, n + 2):
        if n == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"{name})")
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for "
                           "input")


def _avg_pool(input: Tensor, n: int, kernel_size, stride, padding, ceil_mode,
              count_include_pad, divisor_override, name: str) -> Tensor:
    _check_rank(input, n, name)
    kernel = _tuple(kernel_size, n)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, n)
    pads = _tuple(padding, n)
    for k, p in zip(kernel, pads):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > k // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation=1")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
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


def _out_sizes(output_size, input: Tensor, n: int, kind: str) -> tuple:
    """An adaptive pool's output sizes (None keeps the input's), checked as PyTorch does for
    ``kind`` "avg" or "max"."""
    sizes = tuple(input.shape[-n:])
    out = _tuple(output_size, n)
    name = f"adaptive_{kind}_pool{n}d"
    if len(out) != n:
        if n == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                               f"{len(out)})")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}"
                           if kind == "max" else f"{name}: output_size must be {n}")
    if any(o is not None and o < 0 for o in out):
        if kind == "max":
            shape = [*input.shape[:-n], *(s if o is None else o for o, s in zip(out, sizes))]
            bad = next(o for o in out if o is not None and o < 0)
            raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(str(o) for o in out)}}}")
    return tuple(s if o is None else o for o, s in zip(out, sizes))


def _adaptive_avg(input: Tensor, n: int, output_size) -> Tensor:
    if n > 1 and input.ndim < n + 1:
        raise ValueError(f"Input dimension should be at least {n + 1}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_avg_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, "
                           f"but got {list(input.shape)}")
    sizes = tuple(input.shape[-n:])
    outs = _out_sizes(output_size, input, n, "avg")
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
    if n > 1 and input.ndim < n + 1:
        raise ValueError(f"Input dimension should be at least {n + 1}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_max_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, "
                           f"but got {list(input.shape)}")
    sizes = tuple(input.shape[-n:])
    outs = _out_sizes(output_size, input, n, "max")
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
    check_pool_input(input, 1)
    k = _tuple(kernel_size, 1)[0]
    s = k if stride is None or stride == [] else _tuple(stride, 1)[0]
    p, d = _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    check_pool_window("max_pool1d", (k,), (s,), (p,), (d,))
    check_pool_output(input, 1, (pool_out_size(input.shape[-1], k, s, p, ceil_mode, d),))
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _tuple(padding, 1)[0]),
                     (1, _tuple(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)



def _lp_pool(input: Tensor, n: int, norm_type: float, kernel_size, stride, ceil_mode: bool):
    kernel = _tuple(kernel_size, n)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    out = pool(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    area = 1
    for k in kernel:
        area *= k
    return (out.sign() * out.abs().relu() * area).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x^p over each window)^(1/p)`` along the last dim."""
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x^p over each window)^(1/p)`` over the last two dims."""
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x^p over each window)^(1/p)`` over the last three dims."""
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window of ``(N, C, D, H, W)`` (or unbatched): the elementwise
    maximum, over the window's depth slices, of their ``max_pool2d`` (with ``return_indices``,
    also the flat index of each maximum within its ``(D, H, W)`` volume)."""
    kernel = _tuple(kernel_size, 3)
    stride = kernel if stride is None or stride == [] else _tuple(stride, 3)
    pads, dil = _tuple(padding, 3), _tuple(dilation, 3)
    check_pool_window("max_pool3d", kernel, stride, pads, dil)
    check_pool_input(input, 3)
    check_pool_output(input, 3, [pool_out_size(size, k, s, p, ceil_mode, d) for size, k, s, p, d
                                 in zip(input.shape[-3:], kernel, stride, pads, dil)])
    depth = input.shape[-3]
    out_d = pool_out_size(depth, kernel[0], stride[0], pads[0], ceil_mode, dil[0])
    flat = input.reshape(-1, *input.shape[-3:])
    planes = []
    for od in range(out_d):
        best = None
        for k in range(kernel[0]):
            d = od * stride[0] - pads[0] + k * dil[0]
            if 0 <= d < depth:
                plane = max_pool2d(flat[:, d].unsqueeze(1), kernel[1:], stride[1:], pads[1:],
                                   dil[1:], ceil_mode)
                best = plane if best is None else best.maximum(plane)
        planes.append(best)
    out = stack(planes, 2).squeeze(1)
    out = out.reshape(*input.shape[:-3], *out.shape[-3:])
    if not return_indices:
        return out
    index = _max3d_indices(input.detach().cpu().numpy(), kernel, stride, pads, dil,
                           tuple(out.shape[-3:]))
    return out, _tensor(index, device=input.device)


def _max3d_indices(x: np.ndarray, kernel, stride, pads, dil, outs) -> np.ndarray:
    """Flat ``d * H * W + h * W + w`` index of each window's maximum (first one on ties)."""
    sizes = x.shape[-3:]
    widths = []
    for size, k, s, p, d, o in zip(sizes, kernel, stride, pads, dil, outs):
        extra = max(0, (o - 1) * s + d * (k - 1) + 1 - (size + 2 * p))
        widths.append((p, p + extra))
    lead = [(0, 0)] * (x.ndim - 3)
    padded = np.pad(x, lead + widths, constant_values=-np.inf)
    st = padded.strides[-3:]
    view = np.lib.stride_tricks.as_strided(
        padded, shape=padded.shape[:-3] + tuple(outs) + tuple(kernel),
        strides=padded.strides[:-3] + tuple(a * s for a, s in zip(st, stride))
        + tuple(a * d for a, d in zip(st, dil)))
    flat = view.reshape(*view.shape[:-3], -1).argmax(-1)
    kd, kh, kw = np.unravel_index(flat, tuple(kernel))
    grids = np.meshgrid(*(np.arange(o) for o in outs), indexing="ij")
    coords = [g * s - p + k * d for g, s, p, k, d in zip(grids, stride, pads, (kd, kh, kw), dil)]
    return (coords[0] * sizes[1] + coords[1]) * sizes[2] + coords[2]
