"""Margin and embedding losses, composed from gradnb's ops with PyTorch's formulas:
margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss, multilabel_soft_margin_loss,
multi_margin_loss, multilabel_margin_loss."""

from __future__ import annotations

import numpy as np

from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops._args import scalar_type_name
from ...ops.arithmetic import add_scalar, sub, sub_scalar
from ...ops.creation import tensor as _tensor
from .loss import _check_reduction, _reduce
from .pointwise import logsigmoid

__all__ = ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
           "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss"]


def _check_nonempty(input: Tensor) -> None:
    ok = (input.ndim == 1 and input.shape[0] > 0) or (
        input.ndim == 2 and input.shape[1] > 0) or input.ndim == 0
    if not ok:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``."""
    _check_reduction(reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce(elementwise.clamp_min(add_scalar(-target * (input1 - input2), margin), 0),
                   reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``."""
    _check_reduction(reduction)
    loss = elementwise.where(target != 1, elementwise.clamp_min(sub(margin, input), 0), 0.0) \
        + elementwise.where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y = -1``."""
    _check_reduction(reduction)
    dim = 1 if input1.ndim == 2 else 0
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = add_scalar((input1 * input1).sum(dim), eps)
    mag2 = add_scalar((input2 * input2).sum(dim), eps)
    cos = prod / elementwise.sqrt(mag1 * mag2)
    pos = sub(1, cos)
    neg = elementwise.clamp_min(sub_scalar(cos, margin), 0)
    loss = elementwise.where(target == 1, pos, 0.0) + elementwise.where(target == -1, neg, 0.0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over the classes (the last dim)."""
    _check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.ndim - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """``sum_{i != y} max(0, margin - x[y] + x[i])^p / C`` (times ``weight[y]``)."""
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_nonempty(input)
    classes = input.shape[-1] if input.ndim else 1
    rows = input.shape[0] if input.ndim == 2 else 1
    if target.ndim > 1 or target.numel() != rows:
        raise RuntimeError(f"target tensor should be 1-D with size equal to the number of rows "
                           f"of the input. Expected target size [{rows}], but got "
                           f"{list(target.shape)}")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    if target.is_floating_point():
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{scalar_type_name(target.dtype)}")
    unbatched = input.ndim <= 1
    x = input.reshape(1, -1) if unbatched else input
    y = target.reshape(-1)
    classes = x.shape[1]
    picked = x.gather(1, y.reshape(-1, 1))
    z = (margin - picked + x).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y].reshape(-1, 1)
    others = y.detach().numpy().reshape(-1, 1) != np.arange(classes)
    loss = (z * _tensor(others.astype(np.float64), dtype=x.dtype, device=x.device)).sum(1)
    loss = loss / classes
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """``sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C``; each row of
    ``target`` lists class indices and ends at the first -1."""
    _check_reduction(reduction)
    _check_nonempty(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    unbatched = input.ndim <= 1
    x = input.reshape(1, -1) if unbatched else input
    t = target.detach().numpy().reshape(x.shape[0], -1)
    n, classes = x.shape
    pairs = np.zeros((n, classes, classes))
    for row in range(n):
        listed = []
        for c in t[row]:
            if c < 0:
                break
            listed.append(int(c))
        is_target = np.zeros(classes, dtype=bool)
        is_target[listed] = True
        for j in listed:
            pairs[row, j] += ~is_target
    diff = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)
    loss = (diff * _tensor(pairs, dtype=x.dtype, device=x.device)).sum((1, 2)) / classes
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction)
