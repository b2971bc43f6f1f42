"""layer_norm and batch_norm: one normalisation rule, two choices of axes.

Both normalise ``x`` to zero mean and unit variance over some axes, then scale and shift. The
backward recomputes the statistics from the saved input (cheap next to the matmuls around it),
which keeps the rule valid on tensors too, so double backward works.
"""

from __future__ import annotations

from typing import ClassVar

from ..._core.backend import get_array_module
from ..._core.graph import Node, bump_version
from ..._core.record import record
from ...ops import dual
from ._fused import Tensor

__all__ = ["batch_norm", "layer_norm"]

_make = Tensor._make


def _stats(x, axes, eps: float):
    """Mean and reciprocal standard deviation (biased variance) over ``axes``, kept as dims."""
    xp = get_array_module(x)
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=axes, keepdims=True)
    return mean, 1.0 / xp.sqrt(var + eps)


def _param_view(w, ndim: int, channel_dim: int | None):
    """``w`` shaped to broadcast against the input (per-channel for batch norm)."""
    if w is None or channel_dim is None:
        return w
    shape = [1] * ndim
    shape[channel_dim] = -1
    return dual.reshape(w, shape) if isinstance(w, Tensor) else w.reshape(shape)


class _NormBackward(Node):
    """``dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))`` over the normalised
    axes, with ``dxhat = g * weight``; ``dweight = sum(g * xhat)``, ``dbias = sum(g)`` over the
    other axes."""
    rule = "self: grad * self * |self|**(p - 2) / result**(p - 1)"

    __slots__ = ("axes", "channel_dim", "count", "eps", "param_axes")
    fit_grads = False  # the rule returns each input's shape itself

    def _grads(self, g, x, weight):
        axes, n = self.axes, self.count
        centered = x - dual.sum(x, axes, True) / n
        rstd = 1 / dual.sqrt(dual.sum(centered * centered, axes, True) / n + self.eps)
        xhat = centered * rstd
        w = _param_view(weight, len(x.shape), self.channel_dim)
        gxhat = g if w is None else g * w
        gx = gw = gb = None
        if self.needs(0):
            gx = rstd * (gxhat - dual.sum(gxhat, axes, True) / n
                         - xhat * (dual.sum(gxhat * xhat, axes, True) / n))
        if len(self.next_functions) > 1 and self.needs(1):
            gw = dual.sum(g * xhat, self.param_axes)
        if len(self.next_functions) > 2 and self.needs(2):
            gb = dual.sum(g, self.param_axes)
        return gx, gw, gb


class NativeLayerNormBackward0(_NormBackward):
    """Gradient of ``layer_norm`` (statistics over the trailing dims)."""
    rule = (
        "input: (grad*w - mean(grad*w) - x_hat * mean(grad*w * x_hat)) / std; weight: sum(grad "
        "* x_hat); bias: sum(grad)"
    )
    __slots__ = ("normalized_shape",)
    inputs = ("input", "weight", "bias")
    saves = (1, 0, 2)  # (the spec is the recording's: PyTorch packs bias, input, weight, ...)
    saved_names = ("bias", "input", "weight", "result1", "result2")
    saved_attrs: ClassVar[dict] = {"normalized_shape": "normalized_shape"}

    def backward(self, g):
        _, x, weight, _, _ = self.saved(g)
        return self._grads(g, x, weight)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    x = input._data
    k = len(normalized_shape)
    if tuple(x.shape[x.ndim - k:]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
            f"{list(x.shape)}")
    axes = tuple(range(x.ndim - k, x.ndim))
    mean, rstd = _stats(x, axes, eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight._data
    if bias is not None:
        out = out + bias._data
    return record(NativeLayerNormBackward0, (input, weight, bias), out.astype(x.dtype, copy=False),
                  save=lambda: (bias, 0, weight, _make(mean.astype(x.dtype, copy=False)),
                                _make(rstd.astype(x.dtype, copy=False))),
                  attrs={"axes": axes, "param_axes": tuple(range(x.ndim - k)), "eps": eps,
                         "channel_dim": None, "count": max(1, _prod(normalized_shape)),
                         "normalized_shape": normalized_shape})


class NativeBatchNormBackward0(_NormBackward):
    """Gradient of ``batch_norm``: batch statistics in training, the (constant) running ones in eval."""
    rule = (
        "input: (grad - mean(grad) - x_hat * mean(grad * x_hat)) * weight / std; weight: "
        "sum(grad * x_hat); bias: sum(grad)"
    )
    __slots__ = ("training",)
    inputs = ("input", "weight", "bias")
    saves = (0, 1)  # (the spec is the recording's)
    saved_names = ("input", "weight", "running_mean", "running_var", "result1", "result2")
    pack_order = (0, 2, 3, 1, 4, 5)  # PyTorch packs the running statistics before the weight
    saved_attrs: ClassVar[dict] = {"eps": "eps", "training": "training"}

    def backward(self, g):
        x, weight, running_mean, running_var, _, _ = self.saved(g)
        if self.training:
            return self._grads(g, x, weight)
        if running_mean is None:  # an empty batch: nothing was normalised
            return self._eval_grads(g, x, weight, 0.0, 1.0)
        shape = [1] * len(x.shape)
        shape[1] = -1
        mean = dual.reshape(running_mean, shape)
        rstd = 1 / dual.sqrt(dual.reshape(running_var, shape) + self.eps)
        return self._eval_grads(g, x, weight, mean, rstd)

    def _eval_grads(self, g, x, weight, mean, rstd):
        """With running statistics the normalisation is affine: ``dx = g * weight * rstd``."""
        xhat = (x - mean) * rstd
        w = _param_view(weight, len(x.shape), self.channel_dim)
        gx = gw = gb = None
        if self.needs(0):
            gx = g * rstd if w is None else g * w * rstd
        if len(self.next_functions) > 1 and self.needs(1):
            gw = dual.sum(g * xhat, self.param_axes)
        if len(self.next_functions) > 2 and self.needs(2):
            gb = dual.sum(g, self.param_axes)
        return gx, gw, gb


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch (and spatial) dims.

    In training the batch statistics normalise, and the running statistics are updated in
    place (unbiased variance, ``momentum`` blend); in eval the running statistics normalise.
    """
    x = input._data
    if x.ndim < 2 and x.size == 0:
        return _empty_without_channels(input, weight, bias)
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if x.ndim < 2:
        n = max(x.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got 1)")
    axes = (0,) + tuple(range(2, x.ndim))
    count = x.size // x.shape[1] if x.shape[1] else 0
    stat_shape = [1] * x.ndim
    stat_shape[1] = -1
    empty = x.size == 0
    if empty:
        # An empty batch normalises nothing and leaves the running statistics alone (PyTorch);
        # its gradients are the empty input's and zero for the parameters.
        xp = get_array_module(x)
        channel_shape = [x.shape[1] if i == 1 else 1 for i in range(x.ndim)]
        mean = xp.zeros(channel_shape, dtype=x.dtype)
        rstd = xp.ones(channel_shape, dtype=x.dtype)
    elif training:
        if count <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape!r}")
        mean, rstd = _stats(x, axes, eps)
        if running_mean is not None:
            _update_running(running_mean, running_var, x, mean, axes, count, momentum)
    else:
        mean = running_mean._data.reshape(stat_shape)
        rstd = 1.0 / get_array_module(x).sqrt(running_var._data.reshape(stat_shape) + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight._data.reshape(stat_shape)
    if bias is not None:
        out = out + bias._data.reshape(stat_shape)

    batch_stats = training and not empty
    xp = get_array_module(x)

    def save():
        if training:
            result1 = mean.reshape(-1).astype(x.dtype, copy=False)
            result2 = rstd.reshape(-1).astype(x.dtype, copy=False)
        else:  # PyTorch returns empty statistics in eval
            result1 = result2 = xp.empty(0, x.dtype)
        return (0, 1 if weight is not None else None, running_mean, running_var, _make(result1),
                _make(result2))

    return record(NativeBatchNormBackward0, (input, weight, bias), out.astype(x.dtype, copy=False),
                  save=save, attrs={"axes": axes, "param_axes": axes, "eps": eps,
                                    "channel_dim": 1, "count": count, "training": batch_stats})


def _empty_without_channels(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """An empty input with no channel dim: PyTorch returns a copy (a new tensor, so the
    gradient chain holds), scaled and shifted by the first weight and bias."""
    out = input.clone()
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def _update_running(running_mean: Tensor, running_var: Tensor, x, mean, axes, count: int,
                    momentum: float) -> None:
    """Blend the batch statistics into the running buffers, in place (a new version)."""
    centered = x - mean
    unbiased = (centered * centered).sum(axis=axes) / (count - 1)
    m = momentum
    running_mean._data[...] = (1 - m) * running_mean._data + m * mean.reshape(-1)
    running_var._data[...] = (1 - m) * running_var._data + m * unbiased
    bump_version(running_mean)
    bump_version(running_var)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
