"""Parameter: a tensor that a Module registers as a learnable weight."""

from __future__ import annotations

from typing import Self

from .._core.deepcopy import copy_parameter
from .._core.tensor import FACTORY_REQUIRES_GRAD_MESSAGE, Tensor
from ..ops.creation import empty

__all__ = ["Buffer", "Parameter"]


class Parameter(Tensor):
    """A leaf tensor that ``Module`` lists in ``parameters()`` (``requires_grad=True`` by default).

    It shares memory with the tensor it wraps, as in PyTorch.

    >>> import gradnb
    >>> Parameter(gradnb.tensor([1.0, 2.0]))
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Self:
        if data is None:
            data = empty(0)
        p = cls._make(data._data, False, None, 0, data._version_counter)
        p._is_param = True
        if requires_grad:
            p._set_requires_grad(True, FACTORY_REQUIRES_GRAD_MESSAGE)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        """All state is set in ``__new__`` (Tensor itself refuses direct construction)."""

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        raise TypeError("gradnb parameters are not pickled; save state dicts with gradnb.save")

    def __deepcopy__(self, memo):
        """A Parameter with copied data and the same ``requires_grad`` (no ``.grad``)."""
        return copy_parameter(self, memo)


class Buffer:
    """Marks a tensor assigned to a Module attribute as a buffer (``nn.Buffer(t)``): saved in
    ``state_dict`` and moved by ``to()``, but not a parameter."""

    __slots__ = ("data", "persistent")

    def __init__(self, data: Tensor, *, persistent: bool = True) -> None:
        self.data = data
        self.persistent = persistent
