"""conv2d's gradients written as convolutions of tensors, for ``create_graph=True``.

A first-order backward of ``conv2d`` runs on raw arrays (``ConvolutionBackward0`` in
``conv.py``). Under ``create_graph=True`` it calls :func:`conv2d_grads` instead, which builds the
same gradients from differentiable ops, so they record and every higher order follows (as
PyTorch's ``_convolution_double_backward``):

* the input's gradient is the transposed convolution of ``g`` with the weight;
* the weight's gradient is a convolution of the input with ``g``, batch and channels swapped
  (the stride and dilation trade places), one group per weight group;
* the bias's gradient is ``g`` summed over batch and positions.
"""

from __future__ import annotations

from ..._core.tensor import Tensor
from .conv import conv2d
from .conv_nd import conv_transpose2d
from .resample import pad

__all__ = ["conv2d_grads"]


def conv2d_grads(node, g: Tensor, x: Tensor | None, w: Tensor | None) -> tuple:
    """``(grad_input, grad_weight, grad_bias)`` of the ``conv2d`` recorded as ``node`` (None for
    an input that needs no gradient), for the output gradient ``g``."""
    n, _, h, wd = node.in_shape
    o, cg, kh, kw = node.w_shape
    groups, stride, dilation = node.groups, node.stride, node.dilation
    top, bottom, left, right = node.pads
    hp, wp = h + top + bottom, wd + left + right
    gx = gw = gb = None
    if node.needs(0):
        # The windows reach (oh - 1) s + d (k - 1) + 1 rows of the padded input; the rows past
        # them (fewer than the stride) get no gradient: output_padding adds them as zeros.
        oh, ow = node.out_hw
        extra = (hp - (oh - 1) * stride[0] - dilation[0] * (kh - 1) - 1,
                 wp - (ow - 1) * stride[1] - dilation[1] * (kw - 1) - 1)
        full = conv_transpose2d(g, w, None, stride, 0, extra, groups, dilation)
        gx = full[:, :, top:top + h, left:left + wd]
    if node.needs(1):
        xpad = pad(x, (left, right, top, bottom)) if any(node.pads) else x
        # batch <-> channels: xs[c', (group, n)], gs[(group, o'), n]
        xs = xpad.reshape(n, groups, cg, hp, wp).permute(2, 1, 0, 3, 4)
        xs = xs.reshape(cg, groups * n, hp, wp)
        gs = g.reshape(n, groups, o // groups, *g.shape[2:]).permute(1, 2, 0, 3, 4)
        gs = gs.reshape(o, n, *g.shape[2:])
        corr = conv2d(xs, gs, None, dilation, 0, stride, groups)
        gw = corr[:, :, :kh, :kw].transpose(0, 1)
    if len(node.next_functions) > 2 and node.needs(2):
        gb = g.sum((0, 2, 3))
    return gx, gw, gb
