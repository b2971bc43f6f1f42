"""The dropout variants beside ``dropout``: channel-wise (``dropout1d/2d/3d``), self-normalising
(``alpha_dropout``) and both at once (``feature_alpha_dropout``).

They follow ATen's one recipe (``_dropout_impl``): with probability ``p`` a unit is dropped;
feature dropout draws one Bernoulli per ``(N, C)`` channel and broadcasts it over the spatial
dims; plain dropout scales the kept units by ``1 / (1 - p)``; alpha dropout sets dropped units
to SELU's negative saturation and applies the affine map ``a * x + b`` that keeps zero mean and
unit variance. ``p == 0``, ``training=False`` or an empty input return the input itself; ``p ==
1`` multiplies by zero. The masks come from gradnb's generator (``gradnb.manual_seed``); the
gradient flows through the multiplication and addition, so double backward comes free.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core.backend import to_device
from ...ops import creation
from ._fused import Tensor

__all__ = ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

_SELU_ALPHA = 1.7580993408473766  # -SELU(-inf) = scale * alpha, the value a dropped unit takes


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _constant(array, like: Tensor) -> Tensor:
    """An array as a constant tensor of ``like``'s dtype on ``like``'s device."""
    data = np.asarray(array, dtype=like._data.dtype)
    return Tensor._make(to_device(data, like.device))


def _keep_mask(input: Tensor, p: float, feature: bool) -> np.ndarray:
    """1 where a unit (or a whole ``(N, C)`` channel) is kept, else 0."""
    shape = tuple(input.shape)
    if feature:
        if len(shape) < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (len(shape) - 2)
    return (creation.default_generator._rng.random(shape) >= p).astype(np.float64)


def _apply(input: Tensor, p: float, training: bool, inplace: bool, *, feature: bool,
           alpha: bool) -> Tensor:
    """ATen's ``_dropout_impl``: the four variants differ only in the mask's shape and the
    affine map applied to kept and dropped units."""
    _check_p(p)
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if p == 1.0:
        zero = _constant(0.0, input)
        return input.mul_(zero) if inplace else input * zero
    keep = _keep_mask(input, p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1.0) * (1.0 - p))
        scale = _constant(keep * a, input)
        shift = _constant((keep - 1.0) * _SELU_ALPHA * a + _SELU_ALPHA * a * p, input)
        return input.mul_(scale).add_(shift) if inplace else input * scale + shift
    scale = _constant(keep / (1.0 - p), input)
    return input.mul_(scale) if inplace else input * scale


def _batched(input: Tensor, batched: bool, inplace: bool, run) -> Tensor:
    """Run ``run`` on the input with a batch dim of one added where it has none."""
    if batched:
        return run(input)
    if inplace:
        return run(input.unsqueeze_(0)).squeeze_(0)
    return run(input.unsqueeze(0)).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p``, scaling the rest
    by ``1 / (1 - p)``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
            "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _batched(input, input.ndim == 3, inplace,
                    lambda x: _apply(x, p, training, inplace, feature=True, alpha=False))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)`` with probability ``p``, scaling the rest by
    ``1 / (1 - p)``. As in PyTorch, a 3-D input is read as ``(N, C, L)``, with a warning."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _apply(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` with probability ``p``,
    scaling the rest by ``1 / (1 - p)``."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _batched(input, input.ndim == 5, inplace,
                    lambda x: _apply(x, p, training, inplace, feature=True, alpha=False))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped units take SELU's negative saturation and an affine
    map keeps the mean and variance of the input."""
    return _apply(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole ``(N, C)`` channels."""
    return _apply(input, p, training, inplace, feature=True, alpha=True)
