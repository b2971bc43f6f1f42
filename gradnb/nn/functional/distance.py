"""normalize, cosine_similarity, pairwise_distance and pdist, composed from gradnb's ops."""

from __future__ import annotations

import numpy as np
from numpy import broadcast_shapes

from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor

__all__ = ["cosine_similarity", "normalize", "pairwise_distance", "pdist"]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    norm = input.norm(p, dim=dim, keepdim=True).clamp(min=eps)
    return input / norm.expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum((x1 / |x1|) * (x2 / |x2|))`` along ``dim``, each norm at least ``eps``; as in
    PyTorch the inputs broadcast first and the clamp passes no gradient of its own."""
    shape = tuple(broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    x1, x2 = x1.expand(*shape), x2.expand(*shape)
    n1 = x1.norm(2, dim=dim, keepdim=True)
    n2 = x2.norm(2, dim=dim, keepdim=True)
    n1 = n1 + (n1.clamp(min=eps) - n1).detach()
    n2 = n2 + (n2.clamp(min=eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    ndim = max(x1.ndim, x2.ndim)
    dim = -1 if ndim else 0
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        diff = diff.reshape(1)
    return diff.norm(p, dim=dim, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between every pair of rows ``i < j`` of an ``(N, M)`` input, in
    row-major order of the pairs: ``N (N - 1) / 2`` values."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input.shape[0], 1)
    first = input.index_select(0, _tensor(rows.astype(np.int64), device=input.device))
    second = input.index_select(0, _tensor(cols.astype(np.int64), device=input.device))
    return (first - second).norm(p, dim=1)
