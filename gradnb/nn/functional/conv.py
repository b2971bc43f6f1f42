"""conv2d (im2col + one matrix product) and max_pool2d, on NCHW arrays.

Both read their sliding windows through a strided view of the (padded) input, so gathering the
windows is a single copy and no Python loop runs over output positions. conv2d's first-order
backward runs on raw arrays; under ``create_graph=True`` its gradients are built as
convolutions (``conv_grad.py``). max_pool2d's backward is a ``scatter_add`` of tensors, so it is
differentiable too.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ...ops.creation import zeros
from ...ops.shape import cat
from ._fused import Tensor
from .conv_checks import check_conv
from .pool_checks import check_pool_input, check_pool_output, check_pool_window

__all__ = ["conv2d", "max_pool2d"]


def _pair(v) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _out_size(size: int, kernel: int, stride: int, dilation: int, pad_total: int) -> int:
    return (size + pad_total - dilation * (kernel - 1) - 1) // stride + 1


def _windows(x, kernel, stride, dilation, out_hw):
    """A strided view ``(N, C, kh, kw, oh, ow)`` of the windows of a padded NCHW array."""
    xp = get_array_module(x)
    n, c = x.shape[:2]
    s_n, s_c, s_h, s_w = x.strides
    shape = (n, c, kernel[0], kernel[1], out_hw[0], out_hw[1])
    strides = (s_n, s_c, s_h * dilation[0], s_w * dilation[1], s_h * stride[0], s_w * stride[1])
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def _pad(x, pads, value=0.0):
    """Pad the last two dims by ``(top, bottom, left, right)``."""
    top, bottom, left, right = pads
    if not any(pads):
        return x
    xp = get_array_module(x)
    return xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def _conv_pads(padding, kernel, dilation):
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        th, tw = dilation[0] * (kernel[0] - 1), dilation[1] * (kernel[1] - 1)
        return (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    ph, pw = _pair(padding)
    return (ph, ph, pw, pw)


class ConvolutionBackward0(Node):
    """im2col backward: ``dW = g . cols``, ``dcols = W.T @ g`` folded back onto the input
    (col2im, one strided add per kernel offset), ``db = sum(g)``."""
    rule = (
        "input: conv_transpose(grad, weight); weight: conv(input, grad); bias: grad summed "
        "over batch and space"
    )

    __slots__ = ("bias_sym_sizes_opt", "dilation", "groups", "in_shape", "out_hw", "padding",
                 "pads", "stride", "w_shape")
    inputs = ("input", "weight", "bias")
    saves = (0, 1)
    saved_names = ("input", "weight")
    saved_attrs: ClassVar[dict] = {
        "bias_sym_sizes_opt": "bias_sym_sizes_opt", "dilation": "dilation", "groups": "groups",
        "output_padding": "output_padding", "padding": "padding", "stride": "stride",
        "transposed": "transposed"}
    transposed = False
    output_padding = (0, 0)

    def backward(self, g):
        x, w = self.saved(g)
        if isinstance(g, Tensor):
            return _grads_on_tensors(self, g, x, w)
        xp = get_array_module(g)
        n, c, h, wd = self.in_shape
        o, cg, kh, kw = self.w_shape
        groups, og, (oh, ow) = self.groups, o // self.groups, self.out_hw
        top, bottom, left, right = self.pads
        g2 = g.reshape(n, groups, og, oh * ow)
        gx_pad = gw = None
        if self.needs(0):
            gx_pad = xp.zeros((n, c, h + top + bottom, wd + left + right), dtype=g.dtype)
        if self.needs(1):
            gw = xp.empty(self.w_shape, dtype=g.dtype)
            xpad = _pad(x, self.pads)
        for gi in range(groups):
            gg = g2[:, gi]
            if gw is not None:
                cols = _windows(xpad[:, gi * cg:(gi + 1) * cg], (kh, kw), self.stride,
                                self.dilation, (oh, ow)).reshape(n, cg * kh * kw, oh * ow)
                gw[gi * og:(gi + 1) * og] = xp.tensordot(
                    gg, cols, axes=([0, 2], [0, 2])).reshape(og, cg, kh, kw)
            if gx_pad is not None:
                wg = w[gi * og:(gi + 1) * og].reshape(og, cg * kh * kw)
                gcols = (wg.T @ gg).reshape(n, cg, kh, kw, oh, ow)
                self._col2im(gx_pad[:, gi * cg:(gi + 1) * cg], gcols, (oh, ow))
        gx = None if gx_pad is None else gx_pad[:, :, top:top + h, left:left + wd]
        gb = g.sum(axis=(0, 2, 3)) if len(self.next_functions) > 2 and self.needs(2) else None
        return gx, gw, gb

    def _col2im(self, target, gcols, out_hw):
        (sh, sw), (dh, dw) = self.stride, self.dilation
        oh, ow = out_hw
        for i in range(gcols.shape[2]):
            for j in range(gcols.shape[3]):
                r0, c0 = i * dh, j * dw
                target[:, :, r0:r0 + sh * (oh - 1) + 1:sh, c0:c0 + sw * (ow - 1) + 1:sw] += \
                    gcols[:, :, i, j]


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``(N, C, H, W)`` (or ``(C, H, W)``) input with
    ``(O, C/groups, kh, kw)`` filters."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    if input.ndim == 3:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    x, w = input._data, weight._data
    if x.ndim != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(x.shape)}")
    check_conv(input, weight, bias, stride, padding, dilation, groups)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input"
            f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead")
    stride, dilation = _pair(stride), _pair(dilation)
    pads = _conv_pads(padding, (kh, kw), dilation)
    oh = _out_size(h, kh, stride[0], dilation[0], pads[0] + pads[1])
    ow = _out_size(wd, kw, stride[1], dilation[1], pads[2] + pads[3])
    if oh <= 0 or ow <= 0:
        raise RuntimeError("Calculated output size is too small: the kernel is larger than the "
                           "(padded) input")
    xp = get_array_module(x)
    xpad = _pad(x, pads)
    og = o // groups
    out = xp.empty((n, o, oh * ow), dtype=np.result_type(x.dtype, w.dtype))
    for gi in range(groups):
        cols = _windows(xpad[:, gi * cg:(gi + 1) * cg], (kh, kw), stride, dilation, (oh, ow))
        cols = cols.reshape(n, cg * kh * kw, oh * ow)
        out[:, gi * og:(gi + 1) * og] = w[gi * og:(gi + 1) * og].reshape(og, -1) @ cols
    out = out.reshape(n, o, oh, ow)
    if bias is not None:
        out += bias._data.reshape(1, o, 1, 1)
    symmetric = pads[0] == pads[1] and pads[2] == pads[3]
    return record(ConvolutionBackward0, (input, weight, bias), out,
                  attrs={"stride": stride, "dilation": dilation, "pads": pads, "groups": groups,
                         "in_shape": x.shape, "w_shape": w.shape, "out_hw": (oh, ow),
                         "padding": (pads[0], pads[2]) if symmetric else pads,
                         "bias_sym_sizes_opt": (o,) if bias is not None else (0,)})


def spread(x: Tensor, dim: int, stride: int, length: int | None = None) -> Tensor:
    """``stride - 1`` zeros between consecutive entries along ``dim``, cut (or zero-extended, by
    less than ``stride``) to ``length`` (default: ending at the last entry)."""
    size = x.shape[dim]
    length = (size - 1) * stride + 1 if length is None else length
    if (stride == 1 and length == size) or size == 0:
        return x
    x = x.unsqueeze(dim + 1)
    shape = list(x.shape)
    shape[dim + 1] = stride - 1
    x = cat([x, zeros(*shape, dtype=x.dtype, device=x.device)], dim + 1)
    shape = list(x.shape)
    x = x.reshape(*shape[:dim], size * stride, *shape[dim + 2:])
    return x.narrow(dim, 0, length)


def _zero_pad(t: Tensor, pads) -> Tensor:
    """``t`` (NCHW) with ``(top, bottom, left, right)`` rows and columns of zeros around it."""
    top, bottom, left, right = pads
    n, c, _, w = t.shape

    def z(*shape):
        return zeros(*shape, dtype=t.dtype, device=t.device)

    t = cat([z(n, c, top, w), t, z(n, c, bottom, w)], 2)
    return cat([z(n, c, t.shape[2], left), t, z(n, c, t.shape[2], right)], 3)


def _grads_on_tensors(node, g: Tensor, x, w) -> tuple:
    """conv2d's gradients as convolutions of tensors (``create_graph=True``), so they record
    and every higher order follows (PyTorch's ``_convolution_double_backward``): the input's
    is the transposed convolution of ``g`` with the weight, the weight's a convolution of the
    input with ``g`` (batch and channels swapped, stride and dilation trading places)."""
    n, _, h, wd = node.in_shape
    o, cg, kh, kw = node.w_shape
    groups, (sh, sw), (dh, dw) = node.groups, node.stride, node.dilation
    top, bottom, left, right = node.pads
    hp, wp = h + top + bottom, wd + left + right
    oh, ow = node.out_hw
    gx = gw = gb = None
    if node.needs(0):
        # g spread stride apart over the padded input's extent (rows past the last window get
        # nothing), fully correlated with the flipped weight, in/out channels swapped per group
        spread_g = spread(spread(g, 2, sh, hp - dh * (kh - 1)), 3, sw, wp - dw * (kw - 1))
        wt = w.reshape(groups, o // groups, cg, kh, kw).transpose(1, 2)
        wt = wt.reshape(groups * cg, o // groups, kh, kw).flip((2, 3))
        full = conv2d(spread_g, wt, None, 1, (dh * (kh - 1), dw * (kw - 1)), (dh, dw), groups)
        gx = full[:, :, top:top + h, left:left + wd]
    if node.needs(1):
        xpad = _zero_pad(x, node.pads) if any(node.pads) else x
        xs = xpad.reshape(n, groups, cg, hp, wp).permute(2, 1, 0, 3, 4)
        xs = xs.reshape(cg, groups * n, hp, wp)
        gs = g.reshape(n, groups, o // groups, oh, ow).permute(1, 2, 0, 3, 4)
        gs = gs.reshape(o, n, oh, ow)
        corr = conv2d(xs, gs, None, (dh, dw), 0, (sh, sw), groups)
        gw = corr[:, :, :kh, :kw].transpose(0, 1)
    if len(node.next_functions) > 2 and node.needs(2):
        gb = g.sum((0, 2, 3))
    return gx, gw, gb


class MaxPool2DWithIndicesBackward0(Node):
    """Each window's gradient goes to the element that was its maximum (summed where windows
    overlap): a ``scatter_add`` into zeros at the saved flat indices (``result1``), so under
    ``create_graph=True`` its own derivative gathers the maxima's places back (PyTorch's
    ``max_pool_double_backward``)."""
    rule = "self: grad routed to the argmax of each window (result1)"

    __slots__ = ("ceil_mode", "dilation", "kernel_size", "padding", "stride")
    on_tensors = True
    inputs = ("self",)
    saves = (0,)  # (the spec is the recording's: self, then the indices)
    saved_names = ("self", "result1")
    saved_attrs: ClassVar[dict] = {"ceil_mode": "ceil_mode", "dilation": "dilation",
                                   "kernel_size": "kernel_size", "padding": "padding",
                                   "stride": "stride"}

    def backward(self, g):
        x, indices = self.saved(g)
        shape = tuple(x.shape)
        planes = 1
        for d in shape[:-2]:
            planes *= d
        grad = zeros(planes, shape[-2] * shape[-1], dtype=g.dtype, device=g.device)
        grad = grad.scatter_add(1, indices.reshape(planes, -1), g.reshape(planes, -1))
        return (grad.reshape(*shape),)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each ``kernel_size`` window of ``(N, C, H, W)`` (or ``(C, H, W)``)."""
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or stride == [] else _pair(stride)
    (ph, pw), dilation = _pair(padding), _pair(dilation)
    check_pool_window("max_pool2d", kernel, stride, (ph, pw), dilation)
    check_pool_input(input, 2)
    x = input._data
    lead = x.shape[:-2]
    h, w = x.shape[-2:]
    x4 = x.reshape(-1, 1, h, w)
    oh, extra_h = _pool_out(h, kernel[0], stride[0], dilation[0], ph, ceil_mode)
    ow, extra_w = _pool_out(w, kernel[1], stride[1], dilation[1], pw, ceil_mode)
    check_pool_output(input, 2, (oh, ow))
    pads = (ph, ph + extra_h, pw, pw + extra_w)
    xp = get_array_module(x)
    xpad = _pad(x4, pads, value=-xp.inf)
    win = _windows(xpad, kernel, stride, dilation, (oh, ow))
    win = win.transpose(0, 1, 4, 5, 2, 3).reshape(x4.shape[0], 1, oh, ow, kernel[0] * kernel[1])
    arg = win.argmax(axis=-1)
    out = xp.take_along_axis(win, arg[..., None], axis=-1)[..., 0].reshape(*lead, oh, ow)
    ki, kj = arg // kernel[1], arg % kernel[1]
    row = xp.arange(oh).reshape(-1, 1) * stride[0] + ki * dilation[0] - ph
    col = xp.arange(ow).reshape(1, -1) * stride[1] + kj * dilation[1] - pw
    indices = Tensor._make((row * w + col).reshape(*lead, oh, ow))
    t = record(MaxPool2DWithIndicesBackward0, (input,), out, save=(0, indices),
               attrs={"kernel_size": kernel, "stride": stride, "padding": (ph, pw),
                      "dilation": dilation, "ceil_mode": ceil_mode})
    if return_indices:
        return t, indices
    return t


def _pool_out(size: int, kernel: int, stride: int, dilation: int, pad: int, ceil_mode: bool):
    """Output length and the extra right padding that ``ceil_mode`` needs."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    extra = max(0, (out - 1) * stride + dilation * (kernel - 1) + 1 - (size + 2 * pad))
    return out, extra
