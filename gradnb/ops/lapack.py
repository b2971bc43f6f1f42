"""LAPACK's factorizations that NumPy does not expose, written on arrays (no graph).

``getrf`` is the LU factorization with partial pivoting, pivots and ``info`` as LAPACK returns
them: ``linalg.lu_factor`` returns it, and ``det``/``slogdet`` save the same ``LU`` and
``pivots`` as PyTorch's kernels. ``column_major`` lays a result out as LAPACK writes it, which
is how PyTorch returns its LAPACK-backed results (strides and all).
"""

from __future__ import annotations

import numpy as np

__all__ = ["column_major", "getrf"]


def getrf(a: np.ndarray):
    """``(LU, pivots, info)`` of a batch of ``m x n`` matrices, as LAPACK's ``getrf``."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((-1, m, n)).copy()
    rows = np.arange(lu.shape[0])
    pivots = np.zeros((lu.shape[0], k), dtype=np.int32)
    info = np.zeros(lu.shape[0], dtype=np.int32)
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)  # the first largest, as idamax
        pivots[:, j] = p + 1
        row_j = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = row_j
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
        # a zero pivot means the column below is zero too: LAPACK leaves it unscaled
        lu[:, j + 1:, j] /= np.where(zero, 1.0, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (lu.reshape(batch + (m, n)), pivots.reshape(batch + (k,)),
            info.reshape(batch))


def column_major(x: np.ndarray, rows: int | None = None) -> np.ndarray:
    """``x`` laid out as LAPACK writes a batch of matrices and PyTorch returns it: each matrix
    in column-major order, the batch dimensions outermost (a ``3 x 3`` result has strides
    ``(1, 3)``, a ``2 x 3 x 3`` one ``(9, 1, 3)``, in elements).

    ``rows``: the leading dimension when it exceeds ``x``'s rows (``lstsq``'s solution is the
    top of a ``max(m, n)``-row buffer). Arrays of fewer than two dimensions, and arrays already
    so laid out, come back as they are.
    """
    if x.ndim < 2:
        return x
    *batch, m, n = x.shape
    # PyTorch's ``batched_matrix_contiguous_strides``: an empty dimension counts as one
    ld = max(m if rows is None else rows, 1)
    strides = [x.itemsize, x.itemsize * ld]
    step = x.itemsize * ld * max(n, 1)
    for size in reversed(batch):
        strides.insert(0, step)
        step *= max(size, 1)
    strides = tuple(strides)
    if x.strides == strides and rows is None:
        return x
    buffer = np.empty(step // x.itemsize if x.size else 0, dtype=x.dtype)
    out = np.ndarray(x.shape, x.dtype, buffer, strides=strides)
    out[...] = x
    return out
