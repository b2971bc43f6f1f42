"""Losses that are an elementwise formula followed by a reduction: l1, smooth L1, Huber,
KL divergence, binary cross entropy (on probabilities), soft margin, Poisson and Gaussian NLL.

Each is composed from gradnb's ops, so gradients (and double backward) come from them;
``where`` branches that would divide by zero or take the log of zero are fed safe values.
"""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module, silent
from ..._core.grad_mode import no_grad
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops._common import binary_operands
from ...ops.arithmetic import add_scalar, mul_scalar
from ...ops.creation import full_like
from ...ops.pointwise import xlogy
from .._reduction import legacy_reduction
from .loss import _REDUCTION_ENUM, _check_reduction, _reduce

__all__ = [
    "binary_cross_entropy", "gaussian_nll_loss", "huber_loss", "kl_div", "l1_loss",
    "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss",
]


def _warn_shape(input: Tensor, target: Tensor) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _reduced(loss, reduction: str, dtype):
    """An elementwise loss array reduced as ``reduction`` says, in ``dtype``."""
    with np.errstate(all="ignore"):
        if reduction == "mean":
            loss = loss.mean()
        elif reduction == "sum":
            loss = loss.sum()
    return get_array_module(loss).asarray(loss).astype(dtype, copy=False)


def _per_element(g, node, x):
    """The upstream gradient as each element of the unreduced loss sees it."""
    return g / max(x.numel(), 1) if node.reduction == 1 else g


class SmoothL1LossBackward0(Node):
    """``d / beta`` inside ``|d| < beta``, ``sign(d)`` outside (``d = self - target``)."""
    rule = "self: grad * clamp(self - target, -beta, beta) / beta; target: the negation"

    __slots__ = ("beta", "reduction")
    on_tensors = True
    inputs = ("self", "target")
    saves = ("self", "target", "beta", "reduction")

    def backward(self, g):
        x, y = self.saved(g)
        d = x - y
        gx = (d.clamp(-self.beta, self.beta) / self.beta) * _per_element(g, self, x)
        return gx, -gx


class HuberLossBackward0(Node):
    """``d`` inside ``|d| < delta``, ``delta sign(d)`` outside (``d = self - target``)."""
    rule = "self: grad * clamp(self - target, -delta, delta); target: the negation"

    __slots__ = ("delta", "reduction")
    on_tensors = True
    inputs = ("self", "target")
    saves = ("self", "target", "delta", "reduction")

    def backward(self, g):
        x, y = self.saved(g)
        gx = (x - y).clamp(-self.delta, self.delta) * _per_element(g, self, x)
        return gx, -gx


def _loss_operands(input: Tensor, target: Tensor):
    ti, tt, x, y = binary_operands(input, target)
    return ti, tt, x, y, get_array_module(x)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean (or summed, or elementwise) absolute error."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target = _autocast.to_float32(input, target)
    _check_reduction(reduction)
    _warn_shape(input, target)
    loss = elementwise.abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (``d = x - y``)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target = _autocast.to_float32(input, target)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_shape(input, target)
    if beta == 0:  # PyTorch's functional form then calls l1_loss
        return l1_loss(input, target, reduction=reduction)
    ti, tt, x, y, xp = _loss_operands(input, target)
    d = x - y
    ad = xp.abs(d)
    loss = xp.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return record(SmoothL1LossBackward0, (ti, tt), _reduced(loss, reduction, loss.dtype),
                  attrs={"beta": float(beta), "reduction": _REDUCTION_ENUM[reduction]})


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target = _autocast.to_float32(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_shape(input, target)
    if weight is not None:
        diff = input - target
        ad = elementwise.abs(diff)
        loss = elementwise.where(ad < delta, diff * diff * 0.5, (ad - 0.5 * delta) * delta)
        return _reduce(loss * weight, reduction)
    ti, tt, x, y, xp = _loss_operands(input, target)
    d = x - y
    ad = xp.abs(d)
    loss = xp.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return record(HuberLossBackward0, (ti, tt), _reduced(loss, reduction, loss.dtype),
                  attrs={"delta": float(delta), "reduction": _REDUCTION_ENUM[reduction]})


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """``target * (log(target) - input)`` (``input`` holds log-probabilities; 0 where the
    target is 0), or ``exp(t) * (t - input)`` with ``log_target=True``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target = _autocast.to_float32(input, target)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", UserWarning, stacklevel=2)
    if log_target:
        loss = elementwise.exp(target) * (target - input)
    else:
        # PyTorch's composition: ``xlogy(target, target)`` (0 where the target is 0); its C++
        # evaluates the right-hand product first (the order the saved tensors are packed).
        product = target * input
        loss = xlogy(target, target) - product
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``-(y log x + (1 - y) log(1 - x))`` for probabilities ``x``, each log clamped at -100
    as PyTorch does, so a saturated prediction gives a large finite loss."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target, weight = _autocast.to_float32(input, target, weight)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    probs = input.detach()
    if ((probs < 0) | (probs > 1)).any().item():
        raise RuntimeError("all elements of input should be between 0 and 1")
    ti, tt, x, y, xp = _loss_operands(input, target)
    with np.errstate(all="ignore"):
        log_x = xp.maximum(xp.log(x), -100)
        log_1mx = xp.maximum(xp.log1p(-x), -100)
    loss = -(y * log_x + (1 - y) * log_1mx)
    if weight is not None:
        loss = loss * weight._data
    return record(BinaryCrossEntropyBackward0, (ti, tt), _reduced(loss, reduction, x.dtype),
                  save=(0, 1, weight), attrs={"reduction": _REDUCTION_ENUM[reduction]})


class BinaryCrossEntropyBackward0(Node):
    """``(x - y) / max(x (1 - x), 1e-12)`` for ``self``; ``log(1 - x) - log(x)`` (each clamped
    at -100) for ``target``; both times ``weight``."""
    rule = "self: grad * (self - target) / max((1 - self) * self, EPSILON) * weight; target: " \
           "grad * (log(1 - self) - log(self)) * weight"

    __slots__ = ("reduction",)
    on_tensors = True
    inputs = ("self", "target")
    saves = (0, 1)
    saved_names = ("self", "target", "weight")
    saved_attrs: ClassVar[dict] = {"reduction": "reduction"}

    def backward(self, g):
        x, y, weight = self.saved(g)
        scale = _per_element(g, self, x)
        if weight is not None:
            scale = scale * weight
        gx = gy = None
        if self.needs(0):
            gx = (x - y) / ((1 - x) * x).clamp(min=1e-12) * scale
        if self.needs(1):
            gy = (elementwise.log1p(-x).clamp(min=-100)
                  - elementwise.log(x).clamp(min=-100)) * scale
        return gx, gy


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))`` for labels ``y`` in {-1, 1}."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    ti, tt, x, y, xp = _loss_operands(input, target)
    z = -x * y
    with np.errstate(all="ignore"):
        loss = xp.log1p(xp.exp(-xp.abs(z))) + xp.maximum(z, 0)
    return record(SoftMarginLossBackward0, (ti,), _reduced(loss, reduction, loss.dtype),
                  save=(0, tt if tt is not None else Tensor._make(xp.asarray(y))),
                  attrs={"reduction": _REDUCTION_ENUM[reduction]})


class SoftMarginLossBackward0(Node):
    """``-y sigmoid(-y x)``: the target gets no gradient (PyTorch's formula has none)."""
    rule = "self: grad * -target * sigmoid(-target * self)"

    __slots__ = ("reduction",)
    on_tensors = True
    inputs = ("self",)
    saves = (0,)
    saved_names = ("self", "target")
    saved_attrs: ClassVar[dict] = {"reduction": "reduction"}

    def backward(self, g):
        x, y = self.saved(g)
        return (-y * elementwise.sigmoid(-y * x) * _per_element(g, self, x),)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """Negative log likelihood of a Poisson target with rate ``exp(input)`` (``log_input``) or
    ``input``; ``full`` adds Stirling's term for targets above 1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    # PyTorch's C++ composite, its operands evaluated right to left (the order of the packs);
    # C++ numbers are Scalars (AddBackward1, MulBackward1).
    if log_input:
        product = target * input
        loss = elementwise.exp(input) - product
    else:
        loss = input - target * elementwise.log(add_scalar(input, eps))
    if full:
        with silent():  # 0 * log(0) for targets <= 1, filled with 0 below
            half_log = mul_scalar(elementwise.log(mul_scalar(target, 2 * math.pi)), 0.5)
            stirling = target * elementwise.log(target) - target + half_log
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ ``0.5 log 2 pi``
    with ``full``)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    if not isinstance(var, Tensor):
        var = full_like(input.detach(), var)
    in_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape != in_shape:
        if var_shape == in_shape[:-1]:  # one variance per sample, homoscedastic over the last dim
            var = var.unsqueeze(-1)
        elif not (len(var_shape) == len(in_shape) and sum(
                v for i, v in zip(in_shape, var_shape) if i != v) == 1):
            # else var broadcasts along exactly one size-1 dimension (PyTorch's rule)
            raise ValueError("var is of incorrect size")
    if (var.detach() < 0).any().item():
        raise ValueError("var has negative entry/entries")
    # PyTorch clamps a clone without recording: the gradient reaches ``var`` unchanged.
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (elementwise.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
