"""Array-level pieces shared by the update rules: every update is a handful of in-place NumPy
(or CuPy) calls per parameter on preallocated buffers, with no Python work per element.

``Workspace`` lends each update one scratch array per shape and dtype, reused across parameters
and steps, so no temporary is allocated per step; it is not optimizer state (``state_dict``
never shows it).
"""

from __future__ import annotations

from .._core.backend import get_array_module
from .._core.graph import bump_version
from .._core.tensor import Tensor

__all__ = [
    "GRAD_SLOT",
    "Workspace",
    "bump",
    "effective_grad",
    "grads_of",
    "lerp_",
    "scalar",
    "state_tensor",
    "step_counter",
]


def scalar(value):
    """A hyper-parameter as a number. A one-element tensor (a tensor ``lr``) gives a NumPy
    scalar of its dtype, so arithmetic with it rounds as PyTorch's 0-d tensor arithmetic does
    (``lr / bias_correction`` is float32 for a float32 ``lr``)."""
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy().reshape(())[()]
    return value


def state_tensor(array) -> Tensor:
    """Wrap an array as an optimizer state tensor."""
    return Tensor._make(array)


def step_counter(xp, value: float = 0.0) -> Tensor:
    """PyTorch's per-parameter ``step``: a 0-d float32 tensor."""
    return Tensor._make(xp.asarray(value, dtype=xp.float32))


class Workspace:
    """Scratch arrays keyed by (array type, shape, dtype)."""

    __slots__ = ("_buffers",)

    def __init__(self) -> None:
        self._buffers: dict = {}

    def like(self, array, slot: int = 0):
        """A scratch array shaped like ``array`` (contents undefined); ``slot`` picks one of
        several when an update needs two at once."""
        key = (type(array), array.shape, array.dtype, slot)
        buffer = self._buffers.get(key)
        if buffer is None:
            buffer = self._buffers[key] = get_array_module(array).empty_like(array)
        return buffer


def lerp_(start, end, weight: float, scratch) -> None:
    """``start += weight * (end - start)`` in place, with PyTorch's two formulas (the one for
    ``weight >= 0.5`` is exact at ``weight == 1``)."""
    xp = get_array_module(start)
    xp.subtract(end, start, out=scratch)
    if weight < 0.5:
        scratch *= weight
        start += scratch
    else:
        scratch *= 1.0 - weight
        xp.subtract(end, scratch, out=start)


def grads_of(group: dict, name: str, *, sparse_ok: bool = False) -> list:
    """``(param, grad array)`` for each parameter of ``group`` that has a gradient (a sparse
    gradient stays a ``SparseTensor``), raising PyTorch's error for a sparse gradient the
    optimizer cannot take before any parameter of the group changes. ``name`` is the
    optimizer's name, or the whole message where PyTorch words it differently."""
    pairs = []
    for p in group["params"]:
        grad = p._grad
        if grad is None:
            continue
        if getattr(grad, "is_sparse", False):
            if not sparse_ok:
                raise RuntimeError(name if " " in name else
                                   f"{name} does not support sparse gradients")
            pairs.append((p, grad))
        else:
            pairs.append((p, grad._data))
    return pairs


GRAD_SLOT = 1  # the workspace slot that holds a modified gradient


def effective_grad(grad, param, maximize: bool, weight_decay: float, workspace: Workspace):
    """``(-grad if maximize else grad) + weight_decay * param``, in a scratch array when it
    differs from ``grad`` (the user's ``.grad`` is never written)."""
    if not maximize and weight_decay == 0:
        return grad
    xp = get_array_module(grad)
    buffer = workspace.like(grad, GRAD_SLOT)
    if weight_decay == 0:
        return xp.negative(grad, out=buffer)
    # The same two roundings as PyTorch's ``grad.add(param, alpha=weight_decay)``.
    xp.multiply(param, weight_decay, out=buffer)
    if maximize:
        return xp.subtract(buffer, grad, out=buffer)
    buffer += grad
    return buffer


# Record an in-place update of a parameter (graphs that saved the old value will refuse it):
# the engine's own version bump, under the name the optimizers use.
bump = bump_version
