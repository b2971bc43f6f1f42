"""Gradient clipping, in place, after ``backward()`` and before ``optimizer.step()``."""

from __future__ import annotations

import math

from ..._core.backend import get_array_module
from ..._core.graph import bump_version
from ..._core.tensor import Tensor
from ...ops.creation import tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _array(grad):
    """The stored numbers of a gradient: a dense array, or a sparse one's coalesced values."""
    if getattr(grad, "is_sparse", False):
        return grad._coalesce_()._vals
    return grad._data


def _norm(arr, norm_type: float):
    xp = get_array_module(arr)
    a = xp.abs(arr.ravel())
    if norm_type == math.inf:
        return a.max() if a.size else xp.zeros((), dtype=arr.dtype)
    if norm_type == 2.0:
        return xp.sqrt((a * a).sum())
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale all gradients together so their joint ``norm_type`` norm is at most ``max_norm``.

    Returns the norm before clipping (a 0-d tensor). As in PyTorch the scale is
    ``min(1, max_norm / (norm + 1e-6))``.
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return tensor(0.0)
    arrays = [_array(g) for g in grads]
    xp = get_array_module(arrays[0])
    norms = xp.stack([_norm(a, norm_type) for a in arrays])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    coef = min(float(max_norm) / (float(total) + 1e-6), 1.0)
    for g, arr in zip(grads, arrays):
        if getattr(g, "is_sparse", False):
            g.mul_(coef)
        else:
            arr *= arr.dtype.type(coef)
            bump_version(g)
    return Tensor._make(xp.asarray(total, dtype=arrays[0].dtype))


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        arr = _array(g)
        xp = get_array_module(arr)
        xp.clip(arr, -clip_value, clip_value, out=arr)
        if not getattr(g, "is_sparse", False):
            bump_version(g)
