"""What the views read from a tensor, for gradnb's tensors and (when torch is loaded) torch's.

The views (grad table, gradient flow, names) ask these functions instead of reaching into a
tensor's internals, so one view serves both engines. Nothing here imports torch: a torch tensor
can only exist once the user imported torch, so ``sys.modules`` is checked first.

>>> import gradnb
>>> t = gradnb.tensor([1.0, 2.0], requires_grad=True)
>>> is_tensor(t), dtype_name(t), grad_array(t) is None
(True, 'float32', True)
"""

from __future__ import annotations

import numpy as np

from gradnb._core.graph import Node
from gradnb._core.tensor import Tensor
from gradnb.notebook import torch_objects
from gradnb.notebook.formatting import host_array

__all__ = ["dtype_name", "grad_array", "is_tensor", "itemsize", "node_key", "output_nr", "values"]


def is_tensor(value: object) -> bool:
    """Whether ``value`` is a gradnb tensor or a torch tensor (``issubclass(type(...))``, not
    ``isinstance``: the latter may read a user object's ``__class__`` property)."""
    return issubclass(type(value), Tensor) or torch_objects.is_torch_tensor(value)


def dtype_name(tensor) -> str:
    """``float32`` for both engines (torch prints ``torch.float32``)."""
    if isinstance(tensor, Tensor):
        return tensor.dtype.name
    return str(tensor.dtype).removeprefix("torch.")


def grad_array(tensor) -> np.ndarray | None:
    """``tensor.grad`` as a NumPy array (None when there is none), read without the warning
    PyTorch gives for the ``.grad`` of a non-leaf."""
    if not isinstance(tensor, Tensor) and not (tensor.is_leaf or tensor.retains_grad):
        return None  # torch warns on any read of a non-leaf's .grad, even through ._grad
    grad = tensor._grad
    if grad is None:
        return None
    return values(grad)


def output_nr(tensor) -> int:
    """Which output of its ``grad_fn`` the tensor is."""
    return tensor._output_nr if isinstance(tensor, Tensor) else tensor.output_nr


def values(tensor) -> np.ndarray:
    """A tensor's values as a NumPy array on the host, for either engine."""
    if isinstance(tensor, Tensor):
        return host_array(tensor._data)
    return torch_objects.to_numpy(tensor)


#: Element sizes of dtypes NumPy does not have (torch's).
_TORCH_ONLY_ITEMSIZE = {"bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1, "complex32": 4}


def itemsize(dtype: str) -> int:
    """Bytes per element of a dtype named as the views name it (``float32``, ``bfloat16``)."""
    if dtype in _TORCH_ONLY_ITEMSIZE:
        return _TORCH_ONLY_ITEMSIZE[dtype]
    return np.dtype(dtype).itemsize


def node_key(node) -> object:
    """A key that tells backward nodes apart while they are alive (gradnb numbers its nodes;
    a torch node is told apart by its identity, so whoever keys on it must hold it)."""
    return node._sequence_nr() if isinstance(node, Node) else id(node)
