"""Triplet losses: ``triplet_margin_loss`` (``p``-norm distances) and
``triplet_margin_with_distance_loss`` (any distance function), composed from gradnb's ops with
PyTorch's formula ``max(d(a, p) - d(a, n) + margin, 0)``; with ``swap`` the negative distance
is the smaller of ``d(a, n)`` and ``d(p, n)``."""

from __future__ import annotations

from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops.arithmetic import add_scalar
from .._reduction import legacy_reduction
from .distance import pairwise_distance
from .loss import _check_reduction, _reduce

__all__ = ["triplet_margin_loss", "triplet_margin_with_distance_loss"]


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, and "
                           f"negative {n}D inputs")


def _loss(dist_pos: Tensor, dist_neg: Tensor, dist_swap: Tensor | None, margin: float,
          reduction: str, python: bool = False) -> Tensor:
    """``clamp_min(margin + dist_pos - dist_neg, 0)``: PyTorch's C++ adds ``margin`` as a Scalar
    (AddBackward1), its Python ``triplet_margin_with_distance_loss`` as a number (AddBackward0)."""
    if dist_swap is not None:
        dist_neg = elementwise.minimum(dist_neg, dist_swap)
    shifted = dist_pos + margin if python else add_scalar(dist_pos, margin)
    return _reduce(elementwise.clamp_min(shifted - dist_neg, 0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """``max(||a - p||_p - ||a - n||_p + margin, 0)`` (distances as in ``pairwise_distance``)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative, margin)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    dist_swap = pairwise_distance(positive, negative, p, eps) if swap else None
    return _loss(dist_pos, dist_neg, dist_swap, margin, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` for a ``distance_function`` ``d`` (default
    ``pairwise_distance``)."""
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative, margin)
    d = pairwise_distance if distance_function is None else distance_function
    dist_pos = d(anchor, positive)
    dist_neg = d(anchor, negative)
    dist_swap = d(positive, negative) if swap else None
    return _loss(dist_pos, dist_neg, dist_swap, margin, reduction, python=True)
