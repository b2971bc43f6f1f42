"""Gradient clipping, in place, after ``backward()`` and before ``optimizer.step()``.

As in PyTorch 2.13, ``clip_grad_norm_`` is ``get_total_norm`` over the gradients followed by
``clip_grads_with_norm_`` with that norm; each half is public, so a norm can be computed (or
all-reduced) first and applied later.
"""

from __future__ import annotations

import types
import warnings

from ..._core.backend import get_array_module
from ..._core.grad_mode import no_grad
from ..._core.graph import bump_version
from ..._core.tensor import Tensor
from ...linalg import vector_norm
from ...ops.creation import tensor
from ...ops.elementwise import clamp
from ...ops.shape import stack

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _array(grad):
    """The stored numbers of a gradient: a dense array, or a sparse one's coalesced values."""
    if getattr(grad, "is_sparse", False):
        return grad._coalesce_()._vals
    return grad._data


def _dense(t, norm_type: float):
    """What a tensor's norm is taken over. A sparse gradient (a gradnb extension: PyTorch 2.13's
    CPU ``get_total_norm`` refuses sparse tensors) uses its stored values where the implicit
    zeros add nothing (``norm_type >= 0``), and its dense form where they decide (negative)."""
    if not getattr(t, "is_sparse", False):
        return t
    return Tensor._make(_array(t)) if norm_type >= 0 else t.to_dense()


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` together, as if concatenated into one vector:
    the norm of their norms. Computed without recording a graph; 0-d ``tensor(0.)`` for none."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        norms = [vector_norm(_dense(t, norm_type), norm_type) for t in tensors]
        total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale every gradient in place by ``min(max_norm / (total_norm + 1e-6), 1)``, computed in
    ``total_norm``'s dtype as PyTorch does (a float ``total_norm`` is refused by ``clamp``)."""
    grads = _grads(parameters)
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        clip_coef = clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(clip_coef)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale all gradients together so their joint ``norm_type`` norm is at most ``max_norm``.

    Returns the norm before clipping (a 0-d tensor). As in PyTorch the scale is
    ``min(1, max_norm / (norm + 1e-6))``, and an empty generator warns (nothing is clipped).
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator is read once, for both halves
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    total_norm = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (it warns, as PyTorch's does)."""
    warnings.warn("`gradnb.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`gradnb.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        arr = _array(g)
        xp = get_array_module(arr)
        xp.clip(arr, -clip_value, clip_value, out=arr)
        if not getattr(g, "is_sparse", False):
            bump_version(g)
