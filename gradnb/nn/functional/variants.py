"""PyTorch's named variants of functional ops: the in-place activations (``F.elu_``,
``F.leaky_relu_``, ...: always in place, whatever the ``inplace=`` flags of ``F.elu`` and the
others do), the ``*_with_indices`` poolings (always ``(values, indices)``), and
``gumbel_softmax``, a composition of differentiable ops around an ``exponential_`` draw."""

from __future__ import annotations

import warnings

from ...ops.creation import empty_like, zeros_like
from . import pointwise as pw
from ._fused import Tensor
from .conv import max_pool2d
from .fractional import fractional_max_pool2d, fractional_max_pool3d
from .max_pool import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, max_pool3d
from .pointwise import in_place as _in_place
from .pooling import max_pool1d
from .resample import channel_shuffle

__all__ = [
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "celu_", "elu_", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "gumbel_softmax", "hardtanh_", "leaky_relu_",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "native_channel_shuffle", "rrelu_", "selu_", "threshold_",
]


# -- in place ---------------------------------------------------------------------------------------
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _in_place(pw.elu, input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _in_place(pw.celu, input, alpha)


def selu_(input: Tensor) -> Tensor:
    return _in_place(pw.selu, input)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return _in_place(pw.hardtanh, input, min_val, max_val)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _in_place(pw.leaky_relu, input, negative_slope)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return _in_place(pw.rrelu, input, lower, upper, training)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _in_place(pw.threshold, input, threshold, value)


# -- (values, indices) whatever return_indices says ---------------------------------------------------
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool3d(input, output_size, True)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` (PyTorch's native kernel of it)."""
    return channel_shuffle(input, groups)


# -- gumbel_softmax ---------------------------------------------------------------------------------
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (Concrete) distribution over ``dim``: ``softmax((logits +
    g) / tau)`` with ``g`` standard Gumbel noise, differentiable in ``logits``. With ``hard``,
    the one-hot of its argmax in the forward pass and the soft sample's gradient in the backward
    (straight-through). Composed as PyTorch composes it, so the graph has its nodes."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
