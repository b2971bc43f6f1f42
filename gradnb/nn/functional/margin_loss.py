"""Margin and embedding losses, composed from gradnb's ops with PyTorch's formulas:
margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss, multilabel_soft_margin_loss,
multi_margin_loss, multilabel_margin_loss."""

from __future__ import annotations

import numpy as np

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record, wrap
from ..._core.tensor import Tensor
from ...ops import dual, elementwise
from ...ops._args import scalar_type_name
from ...ops.arithmetic import add_scalar, sub, sub_scalar
from .._reduction import legacy_reduction
from .loss import _REDUCTION_ENUM, _check_reduction, _reduce
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
    reduction = legacy_reduction(size_average, reduce, reduction)
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
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = elementwise.where(target != 1, elementwise.clamp_min(sub(margin, input), 0), 0.0) \
        + elementwise.where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y = -1``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
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
    reduction = legacy_reduction(size_average, reduce, reduction)
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
    reduction = legacy_reduction(size_average, reduce, reduction)
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
    x = input._data.reshape(rows, classes)
    y = target._data.reshape(-1)
    if ((y < 0) | (y >= classes)).any():
        raise RuntimeError("target out of range")
    w = None if weight is None else weight._data
    h = _margins(x, y, p, margin, w)[0]
    loss = h.sum(1) / classes
    if reduction == "none":
        loss = loss.reshape(()) if input.ndim <= 1 else loss
    else:
        loss = loss.mean() if reduction == "mean" else loss.sum()
    loss = get_array_module(x).asarray(loss, dtype=x.dtype)
    return record(MultiMarginLossBackward0, (input,), loss,
                  attrs={"margin": float(margin), "p": p,
                         "reduction": _REDUCTION_ENUM[reduction], "target": target,
                         "weight": weight, "rows": rows, "classes": classes})


def _margins(x, y, p: int, margin: float, w):
    """Each class's hinge ``max(0, margin - x[y] + x[i])^p`` (times ``w[y]``; 0 at ``i = y``),
    and its derivative in ``x[i]``."""
    xp = get_array_module(x)
    rows, classes = x.shape
    z = margin - x[xp.arange(rows), y][:, None] + x
    active = (z > 0) & (y[:, None] != xp.arange(classes))
    h = xp.where(active, z if p == 1 else z * z, 0)
    dh = xp.where(active, 1 if p == 1 else 2 * z, 0).astype(x.dtype, copy=False)
    if w is not None:
        h = h * w[y][:, None]
        dh = dh * w[y][:, None]
    return h, dh


class MultiMarginLossBackward0(Node):
    """Each active hinge ``margin - x[y] + x[i] > 0`` sends ``+d`` to ``x[i]`` and ``-d`` to
    ``x[y]`` (``d`` = 1, or ``2 z`` for ``p = 2``; times ``weight[y] / C``)."""
    rule = "self: multi_margin_loss_backward(grad, self, target, p, margin, weight, reduction)"
    why_zero = "no margin violated: every x[y] beats the others by at least margin"
    inputs = ("self",)
    saves = ("margin", "p", "reduction", "self", "target", "weight")
    computed = ("target", "weight")

    def backward(self, g):
        x, y, w = (None if v is None else dual.data(v) for v in self.saved(g))
        rows, classes = self.rows, self.classes
        y = y.reshape(-1)
        dh = _margins(x.reshape(rows, classes), y, self.p, self.margin, w)[1] / classes
        dh[get_array_module(dh).arange(rows), y] = -dh.sum(1)
        if self.reduction == 0:
            g = g.reshape((rows, 1))
        elif self.reduction == 1:
            g = g / rows
        return ((g * dh).reshape(x.shape),)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """``sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C``; each row of
    ``target`` lists class indices and ends at the first -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_nonempty(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input._data.reshape(-1, input.shape[-1] if input.ndim else 1)
    t = target._data.reshape(x.shape)
    xp = get_array_module(x)
    n, classes = x.shape
    pairs = np.zeros((n, classes, classes), dtype=x.dtype)
    is_target = np.zeros((n, classes), dtype=x.dtype)
    for row in range(n):
        listed = []
        for c in t[row]:
            if c < 0:
                break
            listed.append(int(c))
        is_target[row, listed] = 1
        for j in listed:
            pairs[row, j] += 1 - is_target[row]
    hinge = xp.maximum(1 - x[:, :, None] + x[:, None, :], 0)
    loss = (hinge * xp.asarray(pairs)).sum((1, 2)) / classes
    if reduction == "none":
        loss = loss.reshape(()) if input.ndim <= 1 else loss
    else:
        loss = loss.mean() if reduction == "mean" else loss.sum()
    loss = xp.asarray(loss, dtype=x.dtype)
    return record(MultilabelMarginLossBackward0, (input,), loss,
                  attrs={"reduction": _REDUCTION_ENUM[reduction], "target": target,
                         "is_target": wrap(xp.asarray(is_target.reshape(input.shape))),
                         "pairs": xp.asarray(pairs)})


class MultilabelMarginLossBackward0(Node):
    """Each active pair (``j`` listed, ``i`` not, ``1 - x[j] + x[i] > 0``) sends ``+1/C`` to
    ``x[i]`` and ``-1/C`` to ``x[j]``."""
    rule = "self: multilabel_margin_loss_backward(grad, self, target, reduction, is_target)"
    why_zero = "no margin violated: every listed class beats the others by at least 1"
    inputs = ("self",)
    saves = ("reduction", "self", "target", "is_target")
    computed = ("target", "is_target")

    def backward(self, g):
        x = dual.data(self.saved(g)[0])
        pairs = self.pairs
        n, classes = pairs.shape[:2]
        xr = x.reshape(n, classes)
        active = (1 - xr[:, :, None] + xr[:, None, :] > 0) * pairs
        d = (active.sum(1) - active.sum(2)) / classes
        if self.reduction == 0:
            g = g.reshape((n, 1))
        elif self.reduction == 1:
            g = g / n
        return ((g * d).reshape(x.shape),)
