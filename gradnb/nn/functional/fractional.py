"""Fractional max pooling (Graham, 2014): windows of a fixed size at pseudo-random offsets
drawn per sample and channel, gathered with ``gather`` and reduced with ``amax``.

The offsets follow PyTorch's ``generate_intervals`` exactly, so with the same
``_random_samples`` the result is PyTorch's."""

from __future__ import annotations

import numpy as np

from ..._core.tensor import Tensor
from ...ops.creation import rand
from ...ops.creation import tensor as _tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d"]


def _intervals(sample: float, size: int, out: int, pool: int) -> np.ndarray:
    seq = np.empty(out, dtype=np.int64)
    if out > 1:
        alpha = (size - pool) / (out - 1)
        for i in range(out - 1):
            seq[i] = int((i + sample) * alpha) - int(sample * alpha)
    seq[out - 1] = size - pool
    return seq


def _fractional(input: Tensor, n: int, kernel_size, output_size, output_ratio,
                return_indices: bool, samples: Tensor | None, name: str):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == n + 1
    x = input.unsqueeze(0) if unbatched else input
    kernel = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) \
        else (kernel_size,) * n
    sizes = tuple(x.shape[2:])
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
    batch, channels = x.shape[0], x.shape[1]
    if samples is None:
        samples = rand(batch, channels, n, dtype=x.dtype, device=x.device)
    # Only the first ``batch`` rows are read (an unbatched input reads row 0), as in PyTorch.
    u = samples.detach().cpu().numpy()[:batch, :channels]
    # PyTorch's sample order: (w, h) in 2-D, (t, h, w) in 3-D.
    sample_dim = (1, 0) if n == 2 else (0, 1, 2)
    strides = np.cumprod((1,) + sizes[::-1])[:-1][::-1]
    offsets = np.array(np.meshgrid(*(np.arange(k) for k in kernel), indexing="ij"))
    window = (offsets.reshape(n, -1) * strides.reshape(n, 1)).sum(0)
    index = np.empty((batch, channels, *outs, window.size), dtype=np.int64)
    for b in range(batch):
        for c in range(channels):
            starts = [_intervals(float(u[b, c, sample_dim[d]]), sizes[d], outs[d], kernel[d])
                      for d in range(n)]
            grid = np.meshgrid(*starts, indexing="ij")
            base = sum(g * st for g, st in zip(grid, strides))
            index[b, c] = base[..., None] + window
    flat = x.reshape(batch, channels, -1)
    picked = flat.gather(2, _tensor(index.reshape(batch, channels, -1), device=x.device))
    picked = picked.reshape(batch, channels, *outs, window.size)
    out = picked.amax(dim=-1)
    if unbatched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    best = picked.detach().cpu().numpy().argmax(-1)
    where = np.take_along_axis(index, best[..., None], -1)[..., 0]
    return out, _tensor(where[0] if unbatched else where, device=x.device)


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
