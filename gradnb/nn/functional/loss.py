"""Losses: mse_loss, nll_loss, cross_entropy and binary_cross_entropy_with_logits.

Cross entropy is ``nll_loss(log_softmax(x))``, so it inherits log_softmax's stability; BCE with
logits never forms ``sigmoid(x)`` in the forward, so logits of magnitude 1e4 give finite losses.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ...ops import dual
from ...ops._common import binary_operands
from ...ops.arithmetic import add_scalar, div_scalar, mul_scalar
from .._reduction import legacy_reduction
from ._fused import Tensor, const_like
from .activation import log_softmax
from .linear import linear

__all__ = ["binary_cross_entropy_with_logits", "cross_entropy", "linear_cross_entropy", "mse_loss",
           "nll_loss"]

_REDUCTIONS = ("none", "mean", "sum")
_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # PyTorch's ``_saved_reduction``


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _scale(g, reduction: int, count: int):
    """The upstream gradient as seen by each element of an (unreduced) loss (``reduction``:
    PyTorch's enum, 1 for the mean)."""
    return g / count if reduction == 1 else g


# -- mean squared error ---------------------------------------------------------------------------
class MseLossBackward0(Node):
    """``d/dx mean((x - y)^2) = 2 (x - y) / n``; the target gets the negation."""
    rule = "self: grad * 2 * (self - target) / n (for mean); target: the negative"

    __slots__ = ("count", "reduction")
    inputs = ("self", "target")
    saves = ("self", "target", "reduction")

    def backward(self, g):
        x, y = self.saved(g)
        gx = 2 * (x - y) * _scale(g, self.reduction, self.count)
        return (gx if self.needs(0) else None, -gx if self.needs(1) else None)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean") -> Tensor:
    """Mean (or summed, or elementwise) squared error."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target = _autocast.to_float32(input, target)
    _check_reduction(reduction)
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    ti, tt, x, y = binary_operands(input, target)
    sq = (x - y) ** 2
    out = _reduce(sq, reduction)
    return record(MseLossBackward0, (ti, tt), out,
                  attrs={"reduction": _REDUCTION_ENUM[reduction], "count": max(sq.size, 1)})


# -- negative log likelihood ----------------------------------------------------------------------
def _canonical(x_shape, target_shape):
    """``(N, C, R)`` for an input of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``."""
    if len(x_shape) == 1:
        if len(target_shape) != 0:
            raise ValueError(f"Expected input batch_size (1) to match target batch_size "
                             f"({target_shape[0]}).")
        return 1, x_shape[0], 1
    n, c = x_shape[0], x_shape[1]
    if len(target_shape) == 0 or target_shape[0] != n:
        got = target_shape[0] if target_shape else 0
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({got}).")
    if tuple(target_shape[1:]) != tuple(x_shape[2:]):
        raise RuntimeError(f"Expected target size {[n, *x_shape[2:]]}, got {list(target_shape)}")
    r = 1
    for d in x_shape[2:]:
        r *= d
    return n, c, r


def _nll_weights(target, weight, ignore_index: int, num_classes: int, dtype):
    """Per-element weights ``w[target]`` (0 where ignored) and the target made safe to index."""
    xp = get_array_module(target)
    valid = target != ignore_index
    # The common case, every target counted, skips building a masked copy.
    safe = target if valid.all() else xp.where(valid, target, 0)
    if safe.size and (safe.min() < 0 or safe.max() >= num_classes):
        bad = (safe < 0) | (safe >= num_classes)
        raise IndexError(f"Target {int(safe[bad].ravel()[0])} is out of bounds.")
    w = valid.astype(dtype) if weight is None else weight[safe] * valid
    return safe, w


def _picked(x3, safe):
    """``x3[n, safe[n, r], r]`` for ``x3`` of shape ``(N, C, R)``: one gather, as an ``(N, R)``
    array."""
    xp = get_array_module(x3)
    n, _, r = x3.shape
    if r == 1:  # (N, C) inputs: plain indexing, several times faster than take_along_axis
        return x3[xp.arange(n), safe[:, 0], 0][:, None]
    return xp.take_along_axis(x3, safe[:, None, :], axis=1)[:, 0, :]


_U64 = 1 << 64


def _raw(value):
    """The array behind a saved value (a tensor under ``create_graph``)."""
    return getattr(value, "_data", value)


class NllLossBackward0(Node):
    """``d loss / d x[n, target[n]] = -w[target[n]]`` (scaled by the reduction), zero elsewhere."""
    rule = "self: nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)"

    __slots__ = ("all_counted", "ignore_index", "reduction")
    inputs = ("self",)
    saves = (0,)
    saved_names = ("self", "target", "weight", "total_weight")
    saved_attrs: ClassVar[dict] = {"ignore_index": "_ignore_index", "reduction": "reduction"}

    @property
    def _ignore_index(self) -> int:
        # PyTorch shows the int64 it keeps as an unsigned number (-100 as 2**64 - 100).
        return self.ignore_index % _U64

    def backward(self, g):
        x, target, weight, total = self.saved(g)
        shape = x.shape
        reduction = self.reduction
        t = _raw(target)
        total = _raw(total)
        if reduction == 1:
            # Every target ignored: total is 0 and so is every one-hot weight. PyTorch then
            # writes no gradient at all (zeros), not ``0 * (g / 0)`` = NaN.
            scale = g / total if total else g
        else:
            scale = g
        if self.all_counted and type(g) is np.ndarray:
            # (N, C) logits with every target counted with weight 1 (plain cross entropy):
            # write ``-scale`` at the targets of a zero array, as PyTorch's kernel does,
            # instead of building the one-hot array and multiplying all of it.
            dtype = scale.dtype  # (``result_type``, a Python call, only when they differ)
            if dtype != self._dtype:
                dtype = np.result_type(self._dtype, scale)
            grad = np.zeros(shape, dtype)
            grad[np.arange(shape[0]), t] = -scale
            return (grad,)
        n, c, r = (1, shape[0], 1) if len(shape) == 1 else \
            (shape[0], shape[1], int(np.prod(shape[2:], dtype=np.int64)))
        safe, w = _nll_weights(t.reshape(n, r), None if weight is None else _raw(weight),
                               self.ignore_index, c, self._dtype)
        if reduction == 0:
            scale = dual.reshape(g, (n, 1, r))
        xp = get_array_module(safe)
        classes = xp.arange(c).reshape(1, c, 1)
        onehot = (classes == safe[:, None, :]) * -w[:, None, :]
        grad = const_like(onehot, g) * scale
        return (dual.reshape(grad, shape),)


class NllLoss2DBackward0(NllLossBackward0):
    """The same rule; PyTorch names it so for inputs with spatial dimensions."""
    rule = "self: nll_loss2d_backward(grad, self, target, weight, reduction, ignore_index, total_weight)"

    __slots__ = ()


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of the target classes, given log-probabilities ``input``."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target, weight = _autocast.to_float32(input, target, weight)
    _check_reduction(reduction)
    x = input._data
    t = target._data
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.capitalize()}")
    if weight is None and reduction != "none" and type(x) is np.ndarray:
        out = _unweighted_batch_loss(x, t, ignore_index, reduction)
        if out is not None:
            return record(NllLossBackward0, (input,), out,
                          save=(0, target, None, Tensor._make(np.asarray(x.shape[0], x.dtype))),
                          attrs={"reduction": _REDUCTION_ENUM[reduction], "all_counted": True,
                                 "ignore_index": ignore_index})
    n, c, r = _canonical(x.shape, t.shape)
    if x.ndim == 3 or x.ndim > 4:
        # PyTorch's nll_loss_nd: the spatial dimensions as one, through nll_loss2d.
        flat = nll_loss(input.reshape(n, c, 1, r), target.reshape(n, 1, r), weight,
                        ignore_index=ignore_index, reduction=reduction)
        return flat.reshape(*t.shape) if reduction == "none" else flat
    x3 = x.reshape(n, c, r)
    t2 = t.reshape(n, r)
    safe, w = _nll_weights(t2, None if weight is None else weight._data, ignore_index, c, x.dtype)
    picked = _picked(x3, safe)
    losses = -picked * w
    total = w.sum()
    if reduction == "none":
        out = losses.reshape(t.shape)
    elif reduction == "sum":
        out = losses.sum()
    elif total:
        out = losses.sum() / total
    else:  # every target ignored: 0 / 0 is NaN, silently, as in PyTorch
        with np.errstate(invalid="ignore"):
            out = losses.sum() / total
    cls = NllLoss2DBackward0 if x.ndim > 2 else NllLossBackward0
    xp = get_array_module(x)
    # PyTorch computes no total for unreduced batches (but does for one unbatched sample).
    saved_total = xp.zeros((), x.dtype) if reduction == "none" and x.ndim > 1 \
        else xp.asarray(total, x.dtype)
    return record(cls, (input,), out.astype(x.dtype, copy=False),
                  save=lambda: (0, target, weight, Tensor._make(saved_total)),
                  attrs={"reduction": _REDUCTION_ENUM[reduction], "all_counted": False,
                         "ignore_index": ignore_index})


def _unweighted_batch_loss(x, t, ignore_index: int, reduction: str):
    """The mean or summed loss of ``(N, C)`` log-probabilities when no class weight is given
    and every target is a class (none equals ``ignore_index``), else None (the general path
    decides, and raises for bad shapes or targets). The same arithmetic as the general path
    with every weight 1: ``-x[n, t[n]]`` summed, divided by ``N`` for the mean."""
    if x.ndim != 2 or t.ndim != 1 or t.shape[0] != x.shape[0] or not t.shape[0]:
        return None
    n, c = x.shape
    if t.dtype == np.int64 and not 0 <= ignore_index < c:
        # Seen as unsigned, a negative target is huge: the largest checks both bounds (and no
        # target can equal an ignore_index outside the classes). NumPy's own reduces here and
        # below: the methods add a Python wrapper each.
        if np.maximum.reduce(t.view(np.uint64)) >= c:
            return None
    else:
        low, high = t.min(), t.max()
        if low < 0 or high >= c or low <= ignore_index <= high:
            return None
    total = -np.add.reduce(x[np.arange(n), t])
    if reduction == "mean":
        total = total / x.dtype.type(n)
    return np.asarray(total, dtype=x.dtype)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits ``input`` (class dimension 1) and class indices or class
    probabilities ``target``; ``nll_loss(log_softmax(input, 1))`` for indices."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target, weight = _autocast.to_float32(input, target, weight)
    _check_reduction(reduction)
    in_shape = input._data.shape
    class_dim = 0 if len(in_shape) == 1 else 1
    logp = log_softmax(input, class_dim)
    if weight is None and label_smoothing <= 0 and target._data.dtype.kind in "iu":
        # Class indices, no weights or smoothing: the common case, with nothing to prepare.
        return nll_loss(logp, target, ignore_index=ignore_index, reduction=reduction)
    num_classes = in_shape[class_dim]
    w_view = None
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = num_classes
        w_view = weight.reshape(*shape)
    if target.is_floating_point():
        if label_smoothing > 0:
            target = add_scalar(mul_scalar(target, 1 - label_smoothing),
                                label_smoothing / num_classes)
        weighted = logp * target if w_view is None else logp * target * w_view
        # As PyTorch's cross_entropy with probabilities: the reduced losses are summed over
        # every element at once, the mean divides by the number of samples.
        if reduction == "none":
            return -weighted.sum(class_dim)
        if reduction == "sum":
            return -weighted.sum()
        return div_scalar(-weighted.sum(), input.numel() // num_classes)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    smooth = -(logp if w_view is None else logp * w_view).sum(class_dim)
    valid = target._data != ignore_index
    # Filled, not multiplied by the mask, as PyTorch does: with every target ignored the mean
    # divides by 0, and the ignored entries must get a zero gradient, not ``0 * inf`` = NaN.
    # ``asarray``: a 0-d mask (unbatched input) must stay an array, not become a NumPy scalar.
    xp = get_array_module(valid)
    smooth = smooth.masked_fill(Tensor._make(xp.asarray(~valid)), 0.0)
    if reduction == "mean":
        if weight is None:
            denom = float(valid.sum())
        else:
            denom = float((weight._data[target._data[valid]]).sum())
        smooth = smooth.sum() / denom
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / num_classes)


# -- binary cross entropy with logits -------------------------------------------------------------
def _sigmoid(x):
    """A sigmoid that works on arrays and tensors and never overflows."""
    return 0.5 * (1 + dual.tanh(0.5 * x))


def _softplus_neg(x):
    """``log(1 + exp(-x))`` without overflow."""
    ax = dual.abs(x)
    return dual.log(1 + dual.exp(-ax)) + 0.5 * (ax - x)


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """``dx = (l * sigmoid(x) - p * y) * w`` with ``l = 1 + (p - 1) y`` (``p`` the positive
    weight, 1 by default); ``dy = (-x + (p - 1) softplus(-x)) * w``."""
    rule = "self: grad * (sigmoid(self) - target) * weight / n"

    __slots__ = ("count", "reduction")
    inputs = ("self", "target")
    saves = (0, 1)
    saved_names = ("self", "target", "weight", "pos_weight")
    saved_attrs: ClassVar[dict] = {"reduction": "reduction"}

    def backward(self, g):
        x, y, weight, pos_weight = self.saved(g)
        scale = _scale(g, self.reduction, self.count)
        if weight is not None:
            scale = scale * weight
        gx = gy = None
        if self.needs(0):
            if pos_weight is None:
                gx = (_sigmoid(x) - y) * scale
            else:
                log_weight = 1 + (pos_weight - 1) * y
                gx = (log_weight * _sigmoid(x) - pos_weight * y) * scale
        if self.needs(1):
            gy = -x if pos_weight is None else -x + (pos_weight - 1) * _softplus_neg(x)
            gy = gy * scale
        return gx, gy


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy on logits: ``-[y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))]``,
    computed as ``(1 - y) x + softplus(-x)`` so it stays finite for any logit."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, target, weight = _autocast.to_float32(input, target, weight)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    ti, tt, x, y = binary_operands(input, target)
    xp = get_array_module(x)
    ax = xp.abs(x)
    softplus_neg = xp.log1p(xp.exp(-ax)) + xp.maximum(-x, 0)
    w_arr = None if weight is None else weight._data
    pw_arr = None if pos_weight is None else pos_weight._data
    if pw_arr is None:
        losses = (1 - y) * x + softplus_neg
    else:
        losses = (1 - y) * x + (1 + (pw_arr - 1) * y) * softplus_neg
    if w_arr is not None:
        losses = losses * w_arr
    out = _reduce(losses, reduction)
    return record(BinaryCrossEntropyWithLogitsBackward0, (ti, tt), out.astype(x.dtype, copy=False),
                  save=(0, 1, weight, pos_weight),
                  attrs={"reduction": _REDUCTION_ENUM[reduction], "count": max(losses.size, 1)})


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """``cross_entropy(linear(input, W, b), target)`` with ``W`` of shape
    ``(C, *out_features, in_features)`` (``options`` selects PyTorch's chunking, which gradnb,
    computing the logits at once, does not need)."""
    if input.ndim not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if out_features and input.ndim == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if linear_bias is not None and tuple(linear_bias.shape) != tuple(linear_weight.shape[:-1]):
        raise RuntimeError(f"expected linear_bias shape {tuple(linear_weight.shape[:-1])}, got "
                           f"{tuple(linear_bias.shape)}")
    # (flattened only when there are out_features: PyTorch's graph has no view otherwise)
    w = linear_weight if not out_features else linear_weight.reshape(-1, in_features)
    b = linear_bias if linear_bias is None or not out_features else linear_bias.reshape(-1)

    logits = linear(input, w, b).reshape(*logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None
                         else ignore_index, reduction=reduction,
                         label_smoothing=label_smoothing)
