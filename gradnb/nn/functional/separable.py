"""Average pooling and adaptive average pooling as separable linear maps: along each spatial
dim the op is a constant ``(out, in)`` matrix with a few nonzeros per row, applied as a short
sum of gathered, scaled slices (its gradient adds them back).

The matrices reproduce PyTorch's window bounds and divisors exactly.
"""

from __future__ import annotations

import numpy as np

from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor
from ...ops.creation import zeros
from ...ops.elementwise import where
from ...ops.indexing import index_select

__all__ = ["adaptive_avg_matrix", "adaptive_bounds", "apply_along", "avg_pool_matrix",
           "pool_out_size"]


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
