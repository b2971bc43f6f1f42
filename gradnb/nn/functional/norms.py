"""rms_norm, group_norm, instance_norm and local_response_norm, composed from layer_norm,
batch_norm and average pooling.

Group norm is layer norm over each group of channels (the input reshaped to ``(N, G, -1)``);
instance norm is batch norm over a batch of one whose channels are the ``N * C`` instances.
Their gradients, double backward included, are those of the ops they are built from.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._core.backend import get_array_module
from ..._core.grad_mode import no_grad
from ..._core.graph import Node, Output
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import dual, elementwise
from ...ops.arithmetic import add_scalar
from .normalization import batch_norm, layer_norm
from .pooling import avg_pool2d, avg_pool3d
from .resample import pad

__all__ = ["group_norm", "instance_norm", "local_response_norm", "rms_norm"]


def _channel_view(t: Tensor, ndim: int) -> Tensor:
    """A per-channel ``(C,)`` tensor shaped to broadcast over ``(N, C, *)``."""
    return t.reshape(1, -1, *([1] * (ndim - 2)))


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x^2) + eps)`` over the trailing ``normalized_shape`` dims, times
    ``weight``; ``eps`` defaults to the machine epsilon of the input's dtype."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    k = len(shape)
    if tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError("Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    if eps is None:
        eps = float(np.finfo(input.detach().numpy().dtype).eps) if input.is_floating_point() \
            else float(np.finfo(np.float32).eps)
    # PyTorch's composite: the trailing dims last to first, ``pow``, ``add(Tensor, Scalar)``
    dims = tuple(range(input.ndim - 1, input.ndim - k - 1, -1))
    out = input * elementwise.rsqrt(add_scalar((input ** 2).mean(dim=dims, keepdim=True), eps))
    return out if weight is None else out * weight


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of ``C / num_groups`` channels (with their spatial dims) of each
    sample, then apply the per-channel ``weight`` and ``bias``."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {input.shape!r} and "
                           f"num_groups={num_groups}")
    x = input._data
    if not x.size:
        grouped = input.reshape(n, num_groups, -1)
        out = layer_norm(grouped, (grouped.shape[-1],), eps=eps).reshape(*input.shape)
        if weight is not None:
            out = out * _channel_view(weight, input.ndim)
        if bias is not None:
            out = out + _channel_view(bias, input.ndim)
        return out
    return native_group_norm_outputs(input, weight, bias, num_groups, eps)[0]


def native_group_norm_outputs(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                              num_groups: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """PyTorch's ``native_group_norm``: the output, and the ``(N, group)`` mean and
    reciprocal standard deviation, three outputs of one ``NativeGroupNormBackward0``."""
    x = input._data
    n, c = x.shape[0], x.shape[1]
    xg = x.reshape(n, num_groups, -1)
    with np.errstate(all="ignore"):  # (an empty group: NaN statistics, as PyTorch's)
        mean = xg.mean(axis=2, keepdims=True)
        centered = xg - mean
        rstd = 1.0 / get_array_module(x).sqrt((centered * centered).mean(axis=2, keepdims=True)
                                              + eps)
    out = (centered * rstd).reshape(x.shape)
    channel = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight._data.reshape(channel)
    if bias is not None:
        out = out + bias._data.reshape(channel)
    dtype = x.dtype
    return record(NativeGroupNormBackward0, (input, weight, bias),
                  (out.astype(dtype, copy=False), mean.reshape(n, num_groups).astype(dtype),
                   rstd.reshape(n, num_groups).astype(dtype)),
                  save=(0, weight, Output(1), Output(2)),
                  attrs={"N": n, "C": c, "HxW": x.size // max(n * c, 1), "group": num_groups,
                         "eps": eps})


class NativeGroupNormBackward0(Node):
    """Layer norm's rule over each group of channels (statistics recomputed from the saved
    input, so the rule holds on tensors too); the weight and bias gradients sum per channel."""
    rule = ("input: (grad*w - mean(grad*w) - x_hat * mean(grad*w * x_hat)) * rstd per group; "
            "weight: sum(grad * x_hat); bias: sum(grad)")

    __slots__ = ("C", "HxW", "N", "eps", "group")
    inputs = ("input", "weight", "bias")
    saves = (0, 1)  # (the spec is the recording's)
    saved_names = ("input", "weight", "result1", "result2")
    saved_attrs: ClassVar[dict] = {"N": "N", "C": "C", "HxW": "HxW", "group": "group",
                                   "eps": "eps"}
    fit_grads = False

    def backward(self, g, g_mean=None, g_rstd=None):
        like = next(v for v in (g, g_mean, g_rstd) if v is not None)
        x, weight, _, _ = self.saved(like)
        if g is None:
            g = dual.zeros_like(x)
        shape = tuple(x.shape)
        grouped = (self.N, self.group, -1)
        xg = dual.reshape(x, grouped)
        k = xg.shape[2]
        centered = xg - dual.sum(xg, 2, True) / k
        rstd = 1 / dual.sqrt(dual.sum(centered * centered, 2, True) / k + self.eps)
        xhat = centered * rstd
        channel = (1, self.C) + (1,) * (len(shape) - 2)
        gxhat = g if weight is None else g * dual.reshape(weight, channel)
        gxhat = dual.reshape(gxhat, grouped)
        gx = gw = gb = None
        if self.needs(0):
            gx = rstd * (gxhat - dual.sum(gxhat, 2, True) / k
                         - xhat * (dual.sum(gxhat * xhat, 2, True) / k))
            # The statistics are outputs too: d mean = 1 / k, d rstd = -rstd^3 (x - mean) / k.
            if g_mean is not None:
                gx = gx + dual.reshape(g_mean, (self.N, self.group, 1)) / k
            if g_rstd is not None:
                gx = gx - dual.reshape(g_rstd, (self.N, self.group, 1)) * rstd * rstd * rstd \
                    * centered / k
            gx = dual.reshape(gx, shape)
        axes = (0,) + tuple(range(2, len(shape)))
        if self.needs(1):
            gw = dual.sum(g * dual.reshape(xhat, shape), axes)
        if self.needs(2):
            gb = dual.sum(g, axes)
        return gx, gw, gb


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims. With running statistics
    and ``use_input_stats`` they are updated with the mean over the batch of each instance's
    statistics; without ``use_input_stats`` they normalise."""
    if input.ndim < 3:
        raise ValueError(f"expected at least 3D input (got {input.ndim}D input)")
    n, c = input.shape[0], input.shape[1]
    spatial = 1
    for s in input.shape[2:]:
        spatial *= s
    if use_input_stats and spatial <= 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{input.shape!r}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    stacked = input.reshape(1, n * c, *input.shape[2:])
    rm = None if running_mean is None else running_mean.detach().repeat(n)
    rv = None if running_var is None else running_var.detach().repeat(n)
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    out = batch_norm(stacked, rm, rv, w, b, True, momentum, eps).reshape(*input.shape)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.reshape(n, c).mean(dim=0))
        if running_var is not None:
            running_var.copy_(rv.reshape(n, c).mean(dim=0))
    return out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``x / (k + alpha * mean of x^2 over the ``size`` neighbouring channels)^beta``."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    div = input * input
    if input.ndim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(*sizes)
    return input / (div * alpha + k).pow(beta)
