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

from gradnb._tensor import Tensor
from gradnb.notebook import torch_adapter
from gradnb.notebook.formatting import host_array


def is_tensor(value: object) -> bool:
    """Whether ``value`` is a gradnb tensor or a torch tensor."""
    return isinstance(value, Tensor) or torch_adapter.is_torch_tensor(value)


def dtype_name(tensor) -> str:
    """``float32`` for both engines (torch prints ``torch.float32``)."""
    if isinstance(tensor, Tensor):
        return tensor.dtype.name
    return str(tensor.dtype).removeprefix("torch.")


def grad_array(tensor) -> np.ndarray | None:
    """``tensor.grad`` as a NumPy array (None when there is none), read without the warning
    PyTorch gives for the ``.grad`` of a non-leaf."""
    grad = tensor._grad
    if grad is None:
        return None
    if isinstance(tensor, Tensor):
        return host_array(grad._data)
    return torch_adapter.to_numpy(grad)


def output_nr(tensor) -> int:
    """Which output of its ``grad_fn`` the tensor is."""
    return tensor._output_nr if isinstance(tensor, Tensor) else tensor.output_nr


def node_key(node) -> object:
    """A key that tells backward nodes apart while they are alive (gradnb numbers its nodes;
    a torch node is told apart by its identity, so whoever keys on it must hold it)."""
    return node._seq if hasattr(node, "_seq") else id(node)
