"""Fractional max pooling (Graham, 2014): windows of a fixed size at pseudo-random offsets
drawn per sample and channel: one gather of every window's taps and ``max_pool.window_max``,
recorded as PyTorch's ``FractionalMaxPool2DBackward0``/``3D`` (the gradient goes to each
window's maximum, ``result1``).

The offsets follow PyTorch's ``generate_intervals`` exactly, so with the same
``_random_samples`` the result is PyTorch's."""

from __future__ import annotations

import numpy as np

from ..._core.record import record, wrap
from ..._core.tensor import Tensor
from ...ops.creation import rand
from .max_pool import IndicesPoolBackward, window_max

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d"]


class FractionalMaxPool2DBackward0(IndicesPoolBackward):
    __slots__ = ()
    saves = ("self", "result1", "kernel_size", "output_size")


class FractionalMaxPool3DBackward0(FractionalMaxPool2DBackward0):
    __slots__ = ()
    spatial = 3


def _starts(u: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """PyTorch's ``generate_intervals`` for every sample ``u`` at once (in ``u``'s dtype, as
    its kernel computes them): ``(..., out)`` window starts."""
    seq = np.full(u.shape + (out,), size - pool, dtype=np.int64)
    if out > 1:
        alpha = u.dtype.type(size - pool) / u.dtype.type(out - 1)
        i = np.arange(out - 1, dtype=u.dtype)
        seq[..., :-1] = (((i + u[..., None]) * alpha).astype(np.int64)
                         - (u * alpha).astype(np.int64)[..., None])
    return seq


def _fractional(input: Tensor, n: int, kernel_size, output_size, output_ratio,
                return_indices: bool, samples: Tensor | None, name: str):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == n + 1
    kernel = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) \
        else (kernel_size,) * n
    sizes = tuple(input.shape[-n:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an "
                             "output_ratio")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) \
            else (output_ratio,) * n
        outs = tuple(int(s * r) for s, r in zip(sizes, ratio))
    else:
        outs = tuple(output_size) if isinstance(output_size, (tuple, list)) \
            else (output_size,) * n
    for s, o, k in zip(sizes, outs, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}(): pool height/width ({k}) too large relative to input "
                               f"size ({s}) and output size ({o})")
    batch = 1 if unbatched else input.shape[0]
    channels = input.shape[-n - 1]
    if samples is None:
        samples = rand(batch, channels, n, dtype=input.dtype, device=input.device)
    # Only the first ``batch`` rows are read (an unbatched input reads row 0), as in PyTorch.
    u = samples.detach().cpu().numpy()[:batch, :channels]
    # PyTorch's sample order: (w, h) in 2-D, (t, h, w) in 3-D.
    sample_dim = (1, 0) if n == 2 else (0, 1, 2)
    # Flat position of every window's every tap, (B, C, O, K): starts per dim and plane, plus
    # the taps' offsets, row-major over the spatial dims.
    flat, taps = 0, 0
    step = 1
    for d in reversed(range(n)):
        start = _starts(u[..., sample_dim[d]], sizes[d], outs[d], kernel[d])
        shape = [batch, channels] + [1] * n
        shape[2 + d] = outs[d]
        flat = flat + start.reshape(shape) * step
        tap_shape = [1] * n
        tap_shape[d] = kernel[d]
        taps = taps + np.arange(kernel[d]).reshape(tap_shape) * step
        step *= sizes[d]
    count, width = int(np.prod(outs)), int(np.prod(kernel))
    table = flat.reshape(batch, channels, count, 1) + taps.reshape(1, 1, 1, width)
    x = input._data.reshape(batch, channels, step)
    out, where = window_max(x, table)
    lead = input.shape[:-n]
    out, where = out.reshape(*lead, *outs), where.reshape(*lead, *outs)
    indices = wrap(where)
    cls = FractionalMaxPool2DBackward0 if n == 2 else FractionalMaxPool3DBackward0
    t = record(cls, (input,), out, save=(0, indices),
               attrs={"kernel_size": kernel, "output_size": outs})
    return (t, indices) if return_indices else t


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Max pooling of ``(N, C, H, W)`` over ``kernel_size`` windows at pseudo-random offsets,
    down to ``output_size`` (or ``output_ratio`` of the input)."""
    return _fractional(input, 2, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples, "fractional_max_pool2d")


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Max pooling of ``(N, C, T, H, W)`` over windows at pseudo-random offsets."""
    return _fractional(input, 3, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples, "fractional_max_pool3d")
