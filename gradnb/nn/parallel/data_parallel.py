"""``DataParallel``: PyTorch's single-process wrapper for several GPUs."""

from __future__ import annotations

from typing import Any

from ... import cuda
from ..._core.backend import device as Device
from ..._core.tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _to(obj: Any, device: Device) -> Any:
    """``obj`` with every tensor in it (through tuples, lists and dicts) moved to ``device``."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    return obj


def _device_index(device) -> int:
    return device if isinstance(device, int) else (Device(device).index or 0)


class DataParallel(Module):
    """Run ``module`` on the GPUs ``device_ids`` (default: all). Without a GPU it calls
    ``module`` as it is, as PyTorch does; with GPUs gradnb runs the whole batch on the first of
    them (PyTorch splits it across them: the same numbers, save per-replica batch-norm
    statistics).

    >>> import gradnb
    >>> model = gradnb.nn.DataParallel(gradnb.nn.Linear(2, 1))
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = Device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in (*self.module.parameters(), *self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        return self.module(*_to(inputs, self.src_device_obj),
                           **_to(kwargs, self.src_device_obj))


def data_parallel(module: Module, inputs: Any, device_ids=None, output_device=None,
                  dim: int = 0, module_kwargs: dict | None = None) -> Any:
    """Evaluate ``module(*inputs)`` as :class:`DataParallel` would, without keeping a wrapper."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    wrapper = DataParallel(module, device_ids, output_device, dim)
    return wrapper(*inputs, **(module_kwargs or {}))
