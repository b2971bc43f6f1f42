"""normalize, cosine_similarity and pairwise_distance, composed from gradnb's ops."""

from __future__ import annotations

from ..._core.tensor import Tensor
from ...ops import elementwise

__all__ = ["cosine_similarity", "normalize", "pairwise_distance"]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    norm = input.norm(p, dim=dim, keepdim=True).clamp(min=eps)
    return input / norm.expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / sqrt(max(|x1|^2 |x2|^2, eps^2))`` along ``dim`` (PyTorch's formula)."""
    w12 = (x1 * x2).sum(dim)
    w1 = (x1 * x1).sum(dim)
    w2 = (x2 * x2).sum(dim)
    return w12 * elementwise.rsqrt((w1 * w2).clamp(min=eps * eps))


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    ndim = max(x1.ndim, x2.ndim)
    dim = -1 if ndim else 0
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        diff = diff.reshape(1)
    return diff.norm(p, dim=dim, keepdim=keepdim)
