"""LAPACK's factorizations that NumPy does not expose, written on arrays (no graph).

``getrf`` is the LU factorization with partial pivoting, pivots and ``info`` as LAPACK returns
them: ``linalg.lu_factor`` returns it, and ``det``/``slogdet`` save the same ``LU`` and
``pivots`` as PyTorch's kernels.
"""

from __future__ import annotations

import numpy as np

__all__ = ["getrf"]


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
