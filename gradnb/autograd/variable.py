"""``autograd.Variable``: kept, as PyTorch keeps it, for old tutorials.

Since PyTorch 0.4 a Variable *is* a tensor: ``Variable(t)`` returns a tensor sharing ``t``'s data
(a new leaf), with ``requires_grad`` as given, and ``isinstance(t, Variable)`` holds for every
tensor.

>>> import gradnb
>>> from gradnb.autograd import Variable
>>> v = Variable(gradnb.ones(2), requires_grad=True)
>>> v
tensor([1., 1.], requires_grad=True)
>>> isinstance(gradnb.zeros(1), Variable)
True
"""

from __future__ import annotations

from .._core.tensor import FACTORY_REQUIRES_GRAD_MESSAGE, Tensor
from ..ops.creation import empty

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: a leaf tensor sharing ``data``."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach()._set_requires_grad(requires_grad, FACTORY_REQUIRES_GRAD_MESSAGE)
