"""Converting convolution weights to a memory format (``gradnb.channels_last``), recursively.

gradnb's arrays keep NumPy's layout whatever memory format a copy asks for (see
``Tensor.to(memory_format=...)``): as in PyTorch each converted weight gets fresh data (a
copy, the same Parameter object) and the values are unchanged, but the strides stay NumPy's.
"""

from __future__ import annotations

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, kinds: tuple, memory_format) -> Module:
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Give every ``Conv2d``/``ConvTranspose2d`` weight in ``module`` (recursively) the layout
    ``memory_format``; returns ``module``."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """Give every ``Conv3d``/``ConvTranspose3d`` weight in ``module`` (recursively) the layout
    ``memory_format``; returns ``module``."""
    return _convert(module, (Conv3d, ConvTranspose3d), memory_format)
