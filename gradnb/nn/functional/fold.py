"""unfold (im2col) and fold (col2im): each other's adjoint, one node each, as PyTorch's.

``unfold`` gathers every ``kernel_size`` block of ``(N, C, H, W)`` into a column of
``(N, C * kh * kw, L)`` (one copy of a strided view); ``fold`` adds each column's entries back
at their block positions (overlaps sum). The gradient of either is the other.
"""

from __future__ import annotations

import math
from typing import ClassVar

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from .conv_kernels import add_windows, out_size, pad_spatial, windows

__all__ = ["fold", "unfold"]

_ATTRS: dict = {"dilation": "dilation", "kernel_size": "kernel_size", "padding": "padding",
                "stride": "stride"}


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def _im2col(x, kernel, dilation, padding, stride, blocks):
    """``(N, C, H, W)`` -> ``(N, C * kh * kw, L)``."""
    xpad = pad_spatial(x, [(p, p) for p in padding])
    win = windows(xpad, kernel, stride, dilation, blocks)
    return win.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(blocks))


def _col2im(cols, size, kernel, dilation, padding, stride, blocks):
    """``(N, C * kh * kw, L)`` -> ``(N, C, H, W)``, overlaps summed."""
    n, c = cols.shape[0], cols.shape[1] // math.prod(kernel)
    padded = tuple(s + 2 * p for s, p in zip(size, padding))
    target = get_array_module(cols).zeros((n, c, *padded), dtype=cols.dtype)
    add_windows(target, cols.reshape(n, c, *kernel, *blocks), kernel, stride, dilation, blocks)
    return target[:, :, padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]


class Im2ColBackward0(Node):
    """The columns' gradient folded back onto the image (col2im)."""
    rule = ("self: col2im(grad, {self.sym_size(-2), self.sym_size(-1)}, kernel_size, dilation, "
            "padding, stride)")

    __slots__ = ("dilation", "kernel_size", "padding", "self_sym_argsize_minus_1",
                 "self_sym_argsize_minus_2", "stride")
    inputs = ("self",)
    saves = ()
    saved_attrs: ClassVar[dict] = {**_ATTRS,
                                   "self_sym_argsize_minus_1": "self_sym_argsize_minus_1",
                                   "self_sym_argsize_minus_2": "self_sym_argsize_minus_2"}

    def backward(self, g):
        size = (self.self_sym_argsize_minus_2, self.self_sym_argsize_minus_1)
        args = (self.kernel_size, self.dilation, self.padding, self.stride)
        if isinstance(g, Tensor):
            return (fold(g, size, *args),)
        batched = g if g.ndim == 3 else g[None]
        blocks = _blocks(size, *args)
        out = _col2im(batched, size, *args, blocks)
        return (out if g.ndim == 3 else out[0],)


class Col2ImBackward0(Node):
    """The image's gradient unfolded into columns (im2col)."""
    rule = "self: im2col(grad, kernel_size, dilation, padding, stride)"

    __slots__ = ("dilation", "kernel_size", "padding", "stride")
    inputs = ("self",)
    saves = ()
    saved_attrs: ClassVar[dict] = _ATTRS

    def backward(self, g):
        args = (self.kernel_size, self.dilation, self.padding, self.stride)
        if isinstance(g, Tensor):
            return (unfold(g, *args),)
        batched = g if g.ndim == 4 else g[None]
        out = _im2col(batched, *args, _blocks(g.shape[-2:], *args))
        return (out if g.ndim == 4 else out[0],)


def _blocks(size, kernel, dilation, padding, stride) -> tuple[int, int]:
    return tuple(out_size(s, k, st, d, 2 * p)
                 for s, k, d, p, st in zip(size, kernel, dilation, padding, stride))


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding ``kernel_size`` blocks of ``(N, C, H, W)`` (or ``(C, H, W)``) as columns."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.ndim}D)")
    args = (_pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    (kh, kw), (dh, dw), (ph, pw), _ = args
    h, w = input.shape[-2:]
    oh, ow = _blocks((h, w), *args)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}),"
                           f" dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of "
                           f"the array of sliding blocks as ({oh}, {ow}), but its components "
                           "must be at least one.")
    x = input._data if input.ndim == 4 else input._data[None]
    out = _im2col(x, *args, (oh, ow))
    return record(Im2ColBackward0, (input,), out if input.ndim == 4 else out[0],
                  attrs={"kernel_size": args[0], "dilation": args[1], "padding": args[2],
                         "stride": args[3], "self_sym_argsize_minus_1": w,
                         "self_sym_argsize_minus_2": h})


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns ``(N, C * kh * kw, L)`` back into an ``(N, C, *output_size)`` image."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {input.ndim}D)")
    size = _pair(output_size)
    args = (_pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = size, *args
    ckk, length = input.shape[-2:]
    if ckk % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ckk} and "
                           f"kernel_size=({kh}, {kw})")
    oh, ow = _blocks(size, *args)
    if oh * ow != length:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), "
                           f"expected size of input's dimension 2 to match the calculated number "
                           f"of sliding blocks {oh} * {ow} = {oh * ow}, but got "
                           f"input.size(2)={length}.")
    cols = input._data if input.ndim == 3 else input._data[None]
    out = _col2im(cols, size, *args, (oh, ow))
    return record(Col2ImBackward0, (input,), out if input.ndim == 3 else out[0],
                  attrs={"kernel_size": args[0], "dilation": args[1], "padding": args[2],
                         "stride": args[3]})
