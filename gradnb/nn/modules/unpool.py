"""MaxUnpool1d/2d/3d: the layers of ``F.max_unpool*``."""

from __future__ import annotations

from ..._core.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


def _ntuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _MaxUnpoolNd(Module):
    dims = 0
    unpool = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self.dims)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self.dims)
        self.padding = _ntuple(padding, self.dims)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self).unpool(input, indices, self.kernel_size, self.stride, self.padding,
                                 output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Put the values of ``MaxPool1d(return_indices=True)`` back at their positions."""

    dims = 1
    unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Put the values of ``MaxPool2d(return_indices=True)`` back at their positions."""

    dims = 2
    unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Put the values of ``MaxPool3d(return_indices=True)`` back at their positions."""

    dims = 3
    unpool = staticmethod(F.max_unpool3d)
