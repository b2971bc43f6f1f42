"""Randomized low-rank SVD and PCA: ``svd_lowrank`` and ``pca_lowrank`` (Halko, Martinsson and
Tropp 2009, Algorithms 4.4 and 5.1), PyTorch's algorithm step for step.

A random Gaussian test matrix (from gradnb's generator, so ``gradnb.manual_seed`` makes the
result repeatable) is multiplied into the input and orthonormalized by QR, with ``niter``
power iterations; the SVD of the small projected matrix gives the factors. Everything is
gradnb ops (products, QR, SVD), so the outputs differentiate as PyTorch's do.
"""

from __future__ import annotations

from . import linalg as la
from . import reductions as red
from ._common import Tensor
from .creation import randn
from .linalg_decompositions import _mT, linalg_svd, qr

__all__ = ["pca_lowrank", "svd_lowrank"]


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An ``m x q`` matrix with orthonormal columns whose span approximates ``A``'s range
    (of ``A - M`` when ``M`` is given)."""
    R = randn(A.shape[-1], q, dtype=A.dtype, device=A.device)
    X = la.matmul(A, R)
    if M is not None:
        X = X - la.matmul(M, R)
    Q = qr(X).Q
    for _ in range(niter):
        X = la.matmul(_mT(A), Q)
        if M is not None:
            X = X - la.matmul(_mT(M), Q)
        Q = qr(X).Q
        X = la.matmul(A, Q)
        if M is not None:
            X = X - la.matmul(M, Q)
        Q = qr(X).Q
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """``(U, S, V)`` of a rank-``q`` approximation of ``A - M`` (``M`` zero when None):
    ``A - M ~= U @ diag(S) @ V.mT``; ``niter`` power iterations sharpen it."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:  # work on the tall transpose
        A = _mT(A)
        M = _mT(M) if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    B = la.matmul(_mT(Q), A)
    if M is not None:
        B = B - la.matmul(_mT(Q), M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    V = _mT(Vh)
    U = la.matmul(Q, U)
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """``(U, S, V)`` of ``svd_lowrank`` on ``A`` with its column means removed (when
    ``center``): the principal directions are ``V``'s columns, the variances ``S**2 / (m-1)``.
    ``q`` defaults to ``min(6, m, n)``."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - red.mean(A, (-2,), keepdim=True), q, niter=niter)
