"""conv1d, conv3d and the transposed convolutions: each one ``convolution`` (one
``ConvolutionBackward0``), as PyTorch's; an unbatched input is unsqueezed before and squeezed
after, as PyTorch's ``batchify``."""

from __future__ import annotations

from ..._core import autocast_state as _autocast
from ..._core.tensor import Tensor
from .conv import conv_nd, convolution
from .conv_checks import check_conv, expand_param

__all__ = ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of ``(N, C, L)`` (or ``(C, L)``) input with ``(O, C/groups, k)``
    filters."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of ``(N, C, D, H, W)`` (or unbatched) input with
    ``(O, C/groups, kd, kh, kw)`` filters."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input: Tensor, weight: Tensor, bias, stride, padding, output_padding,
                    groups: int, dilation, n: int, name: str) -> Tensor:
    if input.ndim == n + 1:
        return _conv_transpose(input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                               groups, dilation, n, name).squeeze(0)
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    check_conv(input, weight, bias, stride, padding, dilation, groups, transposed=True)
    stride, padding = expand_param(stride, "stride", n), expand_param(padding, "padding", n)
    dilation = expand_param(dilation, "dilation", n)
    output_padding = expand_param(output_padding, "output_padding", n)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={list(output_padding)}, "
                               f"stride={list(stride)}, dilation={list(dilation)}")
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transpose (gradient) of ``conv1d``, a learnable upsampling of ``(N, C, L)``."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transpose (gradient) of ``conv2d``, a learnable upsampling of ``(N, C, H, W)``."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transpose (gradient) of ``conv3d``."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")
