"""Average pooling, adaptive average pooling and linear/cubic interpolation as separable linear
maps: along each spatial dim the op is a constant ``(out, in)`` matrix with a few nonzeros per
row, applied as a short sum of gathered, scaled slices (its gradient adds them back).

The matrices reproduce PyTorch's window bounds, divisors and source-index formulas exactly.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor
from ...ops.creation import zeros
from ...ops.elementwise import where
from ...ops.indexing import index_select

__all__ = ["adaptive_avg_matrix", "adaptive_bounds", "apply_along", "avg_pool_matrix",
           "interp_matrix", "nearest_index", "pool_out_size"]


def apply_along(x: Tensor, matrices) -> Tensor:
    """Apply ``matrices[i]`` (``(out_i, in_i)`` arrays) to the last ``len(matrices)`` dims."""
    k = len(matrices)
    for i, m in enumerate(matrices):
        x = _apply_rows(x, x.ndim - k + i, m)
    return x


def _apply_rows(x: Tensor, dim: int, m: np.ndarray) -> Tensor:
    """``m`` applied along ``dim`` as a sum over its taps: tap ``j`` gathers each row's
    ``j``-th nonzero column and scales it. Unlike a matrix product, a NaN or inf in the input
    reaches only the outputs whose window holds it, as in PyTorch."""
    rows = np.arange(m.shape[0])
    nonzero = m != 0
    taps = int(nonzero.sum(1).max()) if m.size else 0
    order = np.argsort(~nonzero, axis=1, kind="stable")
    shape = [1] * x.ndim
    shape[dim] = m.shape[0]
    out = None
    for j in range(taps):
        cols = order[:, j]
        valid = nonzero[rows, cols]
        weight = _tensor(m[rows, cols].reshape(shape), dtype=x.dtype, device=x.device)
        term = index_select(x, dim, _tensor(cols, device=x.device)) * weight
        if not valid.all():
            term = where(_tensor(valid.reshape(shape), device=x.device), term, 0.0)
        out = term if out is None else out + term
    if out is None:
        sizes = list(x.shape)
        sizes[dim] = m.shape[0]
        out = zeros(*sizes, dtype=x.dtype, device=x.device)
    return out


def pool_out_size(size: int, kernel: int, stride: int, pad: int, ceil_mode: bool,
                  dilation: int = 1) -> int:
    """PyTorch's ``pooling_output_shape``."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def avg_pool_matrix(size: int, kernel: int, stride: int, pad: int, ceil_mode: bool,
                    count_include_pad: bool, unit: bool = False) -> np.ndarray:
    """Rows average each window; ``unit`` gives plain window sums (for ``divisor_override``)."""
    out = pool_out_size(size, kernel, stride, pad, ceil_mode)
    m = np.zeros((max(out, 0), size))
    for o in range(out):
        start = o * stride - pad
        end = min(start + kernel, size + pad)
        lo, hi = max(start, 0), min(end, size)
        divisor = (end - start) if count_include_pad else (hi - lo)
        m[o, lo:hi] = 1.0 if unit else 1.0 / max(divisor, 1)
    return m


def adaptive_avg_matrix(size: int, out: int) -> np.ndarray:
    """Rows average ``[floor(o L / out), ceil((o + 1) L / out))``."""
    m = np.zeros((out, size))
    for o in range(out):
        lo, hi = (o * size) // out, -(-((o + 1) * size) // out)
        m[o, lo:hi] = 1.0 / (hi - lo)
    return m


def adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` window of each output of an adaptive pool."""
    return [((o * size) // out, -(-((o + 1) * size) // out)) for o in range(out)]


def _source_scale(size: int, out: int, align_corners: bool, scale: float | None) -> float:
    if align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else size / out


def _cubic(x: float, a: float = -0.75) -> float:
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def interp_matrix(size: int, out: int, mode: str, align_corners: bool,
                  scale: float | None) -> np.ndarray:
    """Rows of ``linear`` (two taps) or ``cubic`` (four taps, clamped at the edges)
    interpolation from ``size`` samples to ``out``."""
    ratio = _source_scale(size, out, align_corners, scale)
    m = np.zeros((out, size))
    for o in range(out):
        src = ratio * o if align_corners else ratio * (o + 0.5) - 0.5
        if mode == "cubic":
            base = math.floor(src)
            t = src - base
            for tap, w in zip(range(-1, 3), (_cubic(t + 1), _cubic(t), _cubic(1 - t),
                                             _cubic(2 - t))):
                m[o, min(max(base + tap, 0), size - 1)] += w
            continue
        src = max(src, 0.0)
        i0 = min(math.floor(src), size - 1)
        i1 = min(i0 + 1, size - 1)
        lam = src - i0
        m[o, i0] += 1 - lam
        m[o, i1] += lam
    return m


def nearest_index(size: int, out: int, scale: float | None, exact: bool) -> np.ndarray:
    """Source index of each output of ``nearest`` (``floor(o * s)``) or ``nearest-exact``
    (``floor((o + 0.5) * s)``) interpolation."""
    ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
    # PyTorch computes these source indices in float32.
    o = np.arange(out, dtype=np.float32)
    r = np.float32(ratio)
    src = np.floor((o + np.float32(0.5)) * r) if exact else np.floor(o * r)
    return np.minimum(src.astype(np.int64), size - 1)
