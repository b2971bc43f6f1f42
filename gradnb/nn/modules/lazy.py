"""Lazy layers: Linear, convolutions and batch/instance norms whose input size is read from the
first input.

Until that first call the weight is an empty placeholder; the call gives it its shape,
initialises it as the eager layer would, and turns the module into that layer
(``LazyLinear`` becomes ``Linear``), as PyTorch does.
"""

from __future__ import annotations

from ..._core.tensor import Tensor
from ...ops.creation import empty, zeros
from ..parameter import Parameter
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .module import Module
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]


class _LazyMixin:
    """Materialise the parameters on the first call, then become ``cls_to_become``."""

    cls_to_become: type = Module

    def has_uninitialized_params(self) -> bool:
        """Whether the first call, which sizes the weight, is still to come."""
        return self.weight.numel() == 0

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args)
            object.__setattr__(self, "__class__", self.cls_to_become)
        return Module.__call__(self, *args, **kwargs)


class LazyLinear(_LazyMixin, Linear):
    """``Linear`` with ``in_features`` taken from the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, out_features, bias, device, dtype)

    def reset_parameters(self) -> None:
        if self.in_features:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Give the weight its ``(out_features, input.shape[-1])`` shape and initialise it."""
        self.in_features = input.shape[-1]
        w = self.weight
        # Replaced in its slot, so the parameter order (weight, bias) stays PyTorch's.
        self._parameters["weight"] = Parameter(empty(self.out_features, self.in_features,
                                                     dtype=w.dtype, device=w.device))
        self.reset_parameters()


class _LazyConv(_LazyMixin):
    def __init__(self, out_channels: int, kernel_size, *args, **kwargs) -> None:
        super().__init__(0, out_channels, kernel_size, *args, **kwargs)

    def reset_parameters(self) -> None:
        if self.in_channels:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *rest) -> None:
        """Read ``in_channels`` from dim 1 (dim 0 of unbatched input), then shape and
        initialise the weight."""
        self.in_channels = input.shape[0 if input.ndim == self._n + 1 else 1]
        g = self.groups
        if self._transposed:
            shape = (self.in_channels, self.out_channels // g, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // g, *self.kernel_size)
        w = self.weight
        self._parameters["weight"] = Parameter(empty(*shape, dtype=w.dtype, device=w.device))
        self.reset_parameters()


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` with ``in_channels`` taken from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` with ``in_channels`` taken from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """``Conv3d`` with ``in_channels`` taken from the first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConv, ConvTranspose1d):
    """``ConvTranspose1d`` with ``in_channels`` taken from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConv, ConvTranspose2d):
    """``ConvTranspose2d`` with ``in_channels`` taken from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConv, ConvTranspose3d):
    """``ConvTranspose3d`` with ``in_channels`` taken from the first input."""

    cls_to_become = ConvTranspose3d


class _LazyNorm(_LazyMixin):
    """A norm layer with ``num_features`` read from dim 1 of the first input (PyTorch's rule);
    until then its weight, bias and running statistics are empty placeholders. As in PyTorch,
    the lazy instance norms too default to ``affine=True, track_running_stats=True``."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def has_uninitialized_params(self) -> bool:
        """Whether the first call, which sizes the layer, is still to come."""
        return self.num_features == 0

    def reset_parameters(self) -> None:
        if self.num_features:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Size the weight, bias and running statistics from ``input.shape[1]``, then reset
        them as the eager layer's constructor would."""
        self.num_features = input.shape[1]
        # Each is replaced in its slot, so state_dict() keeps PyTorch's key order.
        for table, name in (("_parameters", "weight"), ("_parameters", "bias"),
                            ("_buffers", "running_mean"), ("_buffers", "running_var")):
            old = self.__dict__[table][name]
            if old is None:
                continue
            new = zeros(self.num_features, dtype=old.dtype, device=old.device)
            self.__dict__[table][name] = Parameter(new) if table == "_parameters" else new
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """``BatchNorm1d`` with ``num_features`` taken from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """``BatchNorm2d`` with ``num_features`` taken from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """``BatchNorm3d`` with ``num_features`` taken from the first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """``InstanceNorm1d`` with ``num_features`` taken from the first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """``InstanceNorm2d`` with ``num_features`` taken from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """``InstanceNorm3d`` with ``num_features`` taken from the first input."""

    cls_to_become = InstanceNorm3d
