"""``native_layer_norm``, ``native_group_norm`` and ``native_batch_norm``: PyTorch's top-level
forms of the normalisations, which return the statistics they used beside the output.

The output is ``layer_norm``/``group_norm``/``batch_norm``'s (same gradients, double backward
included). The statistics follow PyTorch: layer norm's mean and reciprocal standard deviation
keep the normalised dims as ones and are constants; group norm's are ``(N, group)`` outputs of
its node (differentiable, as PyTorch's); batch norm's are per channel in training (constants)
and empty in eval, where the running statistics normalise.
"""

from __future__ import annotations

from ..._core.grad_mode import no_grad
from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops.creation import empty
from .normalization import batch_norm, layer_norm
from .norms import group_norm, native_group_norm_outputs

__all__ = ["native_batch_norm", "native_group_norm", "native_layer_norm"]


def _mean_rstd(x: Tensor, dims, eps: float, keepdim: bool) -> tuple[Tensor, Tensor]:
    """Mean and ``1 / sqrt(biased variance + eps)`` over ``dims``."""
    mean = x.mean(dim=dims, keepdim=keepdim)
    var = x.var(dim=dims, unbiased=False, keepdim=keepdim)
    return mean, elementwise.rsqrt(var + eps)


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(layer_norm(input), mean, rstd)``; the statistics have the input's leading dims and
    ones for the normalised ones."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(param.shape)} and normalized_shape = "
                               f"{list(shape)}")
    out = layer_norm(input, shape, weight, bias, eps)
    with no_grad():
        mean, rstd = _mean_rstd(input, tuple(range(input.ndim - len(shape), input.ndim)), eps,
                                keepdim=True)
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int,
                      HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(group_norm(input, group), mean, rstd)`` with ``(N, group)`` statistics."""
    if tuple(input.shape[:2]) != (N, C) or input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to be of size {N}x{C}x{HxW}, but got input of "
                           f"size {list(input.shape)}")
    if not input.numel():
        out = group_norm(input, group, weight, bias, eps)
        mean, rstd = _mean_rstd(input.reshape(N, group, -1), (2,), eps, keepdim=False)
        return out, mean, rstd
    return native_group_norm_outputs(input, weight, bias, group, eps)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(batch_norm(input), save_mean, save_invstd)``: the per-channel batch statistics in
    training (the running ones are updated in place), empty tensors in eval."""
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        with no_grad():
            mean, rstd = _mean_rstd(input, dims, eps, keepdim=False)
    else:
        mean = empty(0, dtype=input.dtype, device=input.device)
        rstd = empty(0, dtype=input.dtype, device=input.device)
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, rstd
