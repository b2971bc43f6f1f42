"""The convolution node, ``ConvolutionBackward0``, for every convolution (1-, 2-, 3-d, plain and
transposed, as PyTorch's ``convolution``), ``conv2d``, and ``max_pool2d``.

The arrays are computed by ``conv_kernels`` (im2col through a strided view, no Python loop over
positions). A first-order backward runs on raw arrays; under ``create_graph=True`` the
gradients are built as convolutions of tensors (PyTorch's ``_convolution_double_backward``), so
every higher order follows.
"""

from __future__ import annotations

from typing import ClassVar

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ...ops.creation import zeros
from ...ops.padding import constant_pad_nd
from ._fused import Tensor
from .conv_checks import check_conv, expand_param
from .conv_kernels import (
    conv_forward,
    conv_input_grad,
    conv_weight_grad,
    out_size,
    pad_spatial,
    windows,
)
from .pool_checks import check_pool_input, check_pool_output, check_pool_window

__all__ = ["conv2d", "convolution", "max_pool2d", "same_padding"]


def _pair(v) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _per_dim(values: tuple, n: int) -> tuple:
    """A padding as ``n`` values (PyTorch keeps ``"valid"``'s as one zero)."""
    return values if len(values) == n else values * n


class ConvolutionBackward0(Node):
    """``input``: the transposed convolution of the gradient with the weight (col2im);
    ``weight``: the gradient against the input's windows; ``bias``: the gradient summed over
    batch and space. A transposed convolution swaps the first two."""
    rule = ("input, weight, bias: convolution_backward(grad, input, weight, bias_sym_sizes_opt, "
            "stride, padding, dilation, transposed, output_padding, groups)")

    __slots__ = ("bias_sym_sizes_opt", "dilation", "groups", "output_padding", "padding",
                 "stride", "transposed")
    inputs = ("input", "weight", "bias")
    saves = ("input", "weight")
    saved_attrs: ClassVar[dict] = {
        "bias_sym_sizes_opt": "bias_sym_sizes_opt", "dilation": "dilation", "groups": "groups",
        "output_padding": "output_padding", "padding": "padding", "stride": "stride",
        "transposed": "transposed"}

    def backward(self, g):
        x, w = self.saved(g)
        pad = _per_dim(self.padding, w.ndim - 2)
        if isinstance(g, Tensor):
            gx, gw = _grads_on_tensors(self, g, x, w, pad)
        else:
            gx, gw = _grads_on_arrays(self, g, x, w, pad)
        gb = None
        if len(self.next_functions) > 2 and self.needs(2):
            gb = g.sum((0, *range(2, g.ndim)))
        return gx, gw, gb


def _grads_on_arrays(node, g, x, w, pad):
    pads = [(p, p) for p in pad]
    args = (node.stride, pads, node.dilation, node.groups)
    gx = gw = None
    if node.transposed:  # input: the plain convolution of g; weight: x against g's windows
        if node.needs(0):
            gx = conv_forward(g, w, *args, out=x.shape[2:])
        if node.needs(1):
            gw = conv_weight_grad(g, x, w.shape, *args)
    else:
        if node.needs(0):
            gx = conv_input_grad(g, w, x.shape[2:], *args)
        if node.needs(1):
            gw = conv_weight_grad(x, g, w.shape, *args)
    return gx, gw


def _grads_on_tensors(node, g: Tensor, x: Tensor, w: Tensor, pad) -> tuple:
    """The gradients as recorded convolutions: a convolution's input gradient is the transposed
    convolution of ``g`` (output padding making up the rows no window reached), a transposed
    one's the plain convolution of ``g`` (cut to the input's size); the weight's gradient a
    convolution of the input with ``g``, batch and channels swapped, stride and dilation
    trading places."""
    n = w.ndim - 2
    stride, dilation, groups = node.stride, node.dilation, node.groups
    kernel = tuple(w.shape[2:])
    gx = gw = None
    if node.needs(0):
        if node.transposed:
            gx = convolution(g, w, None, stride, pad, dilation, False, (0,) * n, groups)
            gx = gx[(slice(None), slice(None), *(slice(0, s) for s in x.shape[2:]))]
        else:
            extra = tuple(s - ((o - 1) * st - 2 * p + d * (k - 1) + 1) for s, o, st, p, d, k in
                          zip(x.shape[2:], g.shape[2:], stride, pad, dilation, kernel))
            gx = convolution(g, w, None, stride, pad, dilation, True, extra, groups)
    if node.needs(1):
        source, grad = (g, x) if node.transposed else (x, g)
        gw = _weight_grad(source, grad, kernel, stride, pad, dilation, groups)
    return gx, gw


def _weight_grad(x: Tensor, g: Tensor, kernel, stride, pad, dilation, groups: int) -> Tensor:
    """``conv_weight_grad`` on tensors: the input (channels as batch) convolved with ``g``
    (batch as channels), cut to the kernel's size."""
    n, space, gspace = x.shape[0], tuple(x.shape[2:]), tuple(g.shape[2:])
    cg, og = x.shape[1] // groups, g.shape[1] // groups
    rest = tuple(range(3, 3 + len(space)))
    xs = x.reshape(n, groups, cg, *space).permute(2, 1, 0, *rest).reshape(cg, groups * n, *space)
    gs = g.reshape(n, groups, og, *gspace).permute(1, 2, 0, *rest).reshape(groups * og, n,
                                                                             *gspace)
    corr = convolution(xs, gs, None, dilation, pad, stride, False, (0,) * len(space), groups)
    return corr[(slice(None), slice(None), *(slice(0, k) for k in kernel))].transpose(0, 1)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """PyTorch's ``convolution`` on a batched input, arguments already checked and expanded
    (``padding`` may be ``(0,)`` for ``"valid"``, as PyTorch keeps it): records
    ``ConvolutionBackward0``."""
    x, w = input._data, weight._data
    n = w.ndim - 2
    pad = _per_dim(padding, n)
    pads = [(p, p) for p in pad]
    kernel, space = w.shape[2:], x.shape[2:]
    if transposed:
        extra = _per_dim(output_padding, n)
        size = tuple((s - 1) * st - 2 * p + d * (k - 1) + 1 + e for s, st, p, d, k, e in
                     zip(space, stride, pad, dilation, kernel, extra))
        out = get_array_module(x).ascontiguousarray(
            conv_input_grad(x, w, size, stride, pads, dilation, groups))
    else:
        size = tuple(out_size(s, k, st, d, 2 * p) for s, k, st, d, p in
                     zip(space, kernel, stride, dilation, pad))
        if min(size) <= 0:
            raise RuntimeError("Calculated output size is too small: the kernel is larger than "
                               "the (padded) input")
        out = conv_forward(x, w, stride, pads, dilation, groups, size)
    if bias is not None:
        out += bias._data.reshape(-1, *(1,) * n)
    return record(ConvolutionBackward0, (input, weight, bias), out,
                  attrs={"stride": tuple(stride), "padding": tuple(padding),
                         "dilation": tuple(dilation), "transposed": transposed,
                         "output_padding": tuple(output_padding), "groups": groups,
                         "bias_sym_sizes_opt": (0,) if bias is None else tuple(bias.shape)})


def same_padding(input: Tensor, kernel, dilation) -> tuple[Tensor, tuple]:
    """``padding="same"`` as PyTorch does it: half the total on each side, the odd one left
    over added at the end by ``constant_pad_nd`` (its own node)."""
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    extra = [t % 2 for t in totals]
    if any(extra):
        input = constant_pad_nd(input, [a for e in reversed(extra) for a in (0, e)])
    return input, tuple(t // 2 for t in totals)


def conv_nd(input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups: int,
            n: int) -> Tensor:
    """``conv1d``/``conv2d``/``conv3d`` (``n`` = 1, 2, 3): checks, unbatched inputs,
    ``"valid"``/``"same"``."""
    name = f"conv{n}d"
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight, bias = _autocast.lower(input, weight, bias)
    if input.ndim == n + 1:
        return conv_nd(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups,
                       n).squeeze(0)
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in expand_param(stride, "stride", n)):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    check_conv(input, weight, bias, stride, padding, dilation, groups)
    stride = expand_param(stride, "stride", n)
    dilation = expand_param(dilation, "dilation", n)
    if padding == "valid":
        padding, output_padding = (0,), (0,)
    else:
        if padding == "same":
            input, padding = same_padding(input, weight.shape[2:], dilation)
        else:
            padding = expand_param(padding, "padding", n)
        output_padding = (0,) * n
    return convolution(input, weight, bias, stride, padding, dilation, False, output_padding,
                       groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``(N, C, H, W)`` (or ``(C, H, W)``) input with
    ``(O, C/groups, kh, kw)`` filters."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


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
    xpad = pad_spatial(x4, (pads[:2], pads[2:]), value=-xp.inf)
    win = windows(xpad, kernel, stride, dilation, (oh, ow))
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
