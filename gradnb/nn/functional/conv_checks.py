"""The argument checks PyTorch's convolutions make, in ATen's order and with its words.

``conv1d``/``conv2d``/``conv3d`` (and the transposed ones) call ``check_conv`` before computing,
so a bad stride, padding, dilation, groups, weight rank, bias or dtype is refused as PyTorch
refuses it rather than by whatever NumPy does with it.
"""

from __future__ import annotations

from ..._core.tensor import Tensor
from ...ops._args import scalar_type_name

__all__ = ["check_conv", "expand_param"]

# The C++ element type names PyTorch prints in "Input type (...) and bias type (...)".
_CPP_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                   "int8": "signed char", "int16": "short int", "int32": "int",
                   "int64": "long int", "uint8": "unsigned char", "bool": "bool"}


def expand_param(value, name: str, dim: int) -> tuple:
    """A stride/padding/dilation as ``dim`` integers: one value repeats, otherwise exactly
    ``dim`` values (PyTorch's ``expand_param_if_needed``)."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(values) == 1:
        return (int(values[0]),) * dim
    if len(values) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(values)}")
    return tuple(int(v) for v in values)


def check_conv(input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups: int,
               transposed: bool = False) -> None:
    """Refuse what ATen's ``_convolution`` refuses; ``input`` is already batched."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dim = weight.ndim - 2
    stride = expand_param(stride, "stride", dim)
    dilation = expand_param(dilation, "dilation", dim)
    if not isinstance(padding, str) and any(p < 0 for p in expand_param(padding, "padding", dim)):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    w = list(weight.shape)
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {w}, but got {input.ndim}-dimensional input of "
                           f"size {list(input.shape)} instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {w} instead")
    if not transposed:
        if input.shape[1] != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {w}, expected input"
                               f"{list(input.shape)} to have {w[1] * groups} channels, but got "
                               f"{input.shape[1]} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != w[0]):
            raise RuntimeError(f"Given weight of size {w}, expected bias to be 1-dimensional "
                               f"with {w[0]} elements, but got bias of size {list(bias.shape)} "
                               "instead")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_CPP_TYPE_NAMES.get(input.dtype.name)}) and bias type "
                           f"({_CPP_TYPE_NAMES.get(bias.dtype.name)}) should be the same")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(weight.dtype)}")
