"""conv1d, conv3d and the transposed convolutions, built on ``conv2d``.

* ``conv1d`` is ``conv2d`` over a height of one.
* ``conv3d`` sums, for each output depth, the ``conv2d`` of the input slices its kernel
  covers (one call per output depth and kernel depth: fine for the small volumes it is used on).
* ``conv_transpose{1,2,3}d`` is the convolution, with the kernel flipped and its in/out
  channels swapped, of the input spread ``stride`` apart (zeros between) and padded by
  ``dilation (k - 1) - padding`` (plus ``output_padding`` at the end).
"""

from __future__ import annotations

from ..._core import autocast_state as _autocast
from ..._core.tensor import Tensor
from ...ops.shape import stack
from .conv import conv2d, spread
from .conv_checks import check_conv
from .resample import pad

__all__ = ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v) if len(v) != 1 else (int(v[0]),) * n
    return (int(v),) * n


def _batched(input: Tensor, n: int, name: str) -> tuple[Tensor, bool]:
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    return input, False


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of ``(N, C, L)`` (or ``(C, L)``) input with ``(O, C/groups, k)``
    filters."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    x, unbatched = _batched(input, 1, "conv1d")
    check_conv(x, weight, bias, stride, padding, dilation, groups)
    pad2 = padding if isinstance(padding, str) else (0, _ntuple(padding, 1)[0])
    out = conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, _ntuple(stride, 1)[0]), pad2,
                 (1, _ntuple(dilation, 1)[0]), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


def _same_pads(kernel, dilation):
    return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)]


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of ``(N, C, D, H, W)`` (or unbatched) input with
    ``(O, C/groups, kd, kh, kw)`` filters."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    x, unbatched = _batched(input, 3, "conv3d")
    check_conv(x, weight, bias, stride, padding, dilation, groups)
    kernel = tuple(weight.shape[2:])
    stride, dilation = _ntuple(stride, 3), _ntuple(dilation, 3)
    if padding == "valid":
        pads = [(0, 0)] * 3
    elif padding == "same":
        pads = _same_pads(kernel, dilation)
    else:
        pads = [(p, p) for p in _ntuple(padding, 3)]
    flat = [a for pair in reversed(pads) for a in pair]
    if any(flat):
        x = pad(x, flat)
    depth = x.shape[2]
    kd = kernel[0]
    out_d = (depth - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if out_d <= 0:
        raise RuntimeError("Calculated output size is too small: the kernel is larger than the "
                           "(padded) input")
    slices = []
    for od in range(out_d):
        total = None
        for k in range(kd):
            term = conv2d(x[:, :, od * stride[0] + k * dilation[0]], weight[:, :, k], None,
                          stride[1:], 0, dilation[1:], groups)
            total = term if total is None else total + term
        slices.append(total)
    out = stack(slices, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def _conv_transpose(input: Tensor, weight: Tensor, bias, stride, padding, output_padding,
                    groups: int, dilation, n: int, name: str) -> Tensor:
    x, unbatched = _batched(input, n, name)
    check_conv(x, weight, bias, stride, padding, dilation, groups, transposed=True)
    stride, padding = _ntuple(stride, n), _ntuple(padding, n)
    output_padding, dilation = _ntuple(output_padding, n), _ntuple(dilation, n)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={list(output_padding)}, "
                               f"stride={list(stride)}, dilation={list(dilation)}")
    kernel = tuple(weight.shape[2:])
    for i in range(n):
        x = spread(x, 2 + i, stride[i])
    flat = []
    for i in reversed(range(n)):
        edge = dilation[i] * (kernel[i] - 1) - padding[i]
        flat += [edge, edge + output_padding[i]]
    if any(flat):
        x = pad(x, flat)
    cin, cout_g = weight.shape[0], weight.shape[1]
    w = weight.reshape(groups, cin // groups, cout_g, *kernel).transpose(1, 2)
    w = w.reshape(groups * cout_g, cin // groups, *kernel).flip(tuple(range(2, 2 + n)))
    conv = {1: conv1d, 2: conv2d, 3: conv3d}[n]
    out = conv(x, w, bias, 1, 0, dilation, groups)
    return out.squeeze(0) if unbatched else out


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
