"""Between a model's parameters and one flat vector: ``parameters_to_vector`` concatenates them,
``vector_to_parameters`` points each parameter at its slice of a vector (as PyTorch, the
parameters then share the vector's memory)."""

from __future__ import annotations

from collections.abc import Iterable

from ..._core.tensor import Tensor
from ...ops.shape import cat
from ...ops.type_queries import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Flatten an iterable of parameters into a single vector (differentiable: a ``cat`` of
    ``view(-1)``s, so a non-viewable parameter raises ``view``'s error, as in PyTorch)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into ``parameters``, in order: each parameter's ``.data`` becomes a
    view of its slice (no copy, no version bump, as ``param.data = ...`` in PyTorch)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected gradnb.Tensor, but got: {typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The device index of the first parameter (-1 for the CPU); a later parameter elsewhere is
    PyTorch's TypeError (mixed devices are not supported)."""
    on_accelerator = param.device.type == "cuda"
    if old_param_device is None:
        return param.get_device() if on_accelerator else -1
    moved = param.get_device() != old_param_device if on_accelerator else old_param_device != -1
    if moved:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
