"""N-d convolution on raw arrays: im2col through a strided view, one matrix product per group.

The three kernels are each other's adjoints, so a convolution and its transpose share them:

* ``conv_forward``: the windows of the padded input (a strided view ``(N, C, *kernel, *out)``,
  copied once) times the flattened filters;
* ``conv_weight_grad``: the same windows contracted with the output's gradient;
* ``conv_input_grad`` (col2im): the filters' transpose times the gradient, added back onto the
  padded input at each kernel offset (one strided add per offset, none per element).

``pads`` is one ``(before, after)`` pair per spatial dim; ``out`` the number of windows per dim.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np

from ..._core.backend import get_array_module

__all__ = ["add_windows", "conv_forward", "conv_input_grad", "conv_weight_grad", "out_size",
           "pad_spatial", "windows"]


def out_size(size: int, kernel: int, stride: int, dilation: int, pad_total: int) -> int:
    """How many windows fit along one dim."""
    return (size + pad_total - dilation * (kernel - 1) - 1) // stride + 1


def pad_spatial(x, pads, value=0.0):
    """``x`` (``N, C, *spatial``) padded by ``pads``, one ``(before, after)`` per spatial dim."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return get_array_module(x).pad(x, ((0, 0), (0, 0), *pads), constant_values=value)


def windows(x, kernel, stride, dilation, out):
    """A strided view ``(N, C, *kernel, *out)`` of the windows of a padded ``(N, C, ...)``
    array."""
    xp = get_array_module(x)
    lead, space = x.strides[:2], x.strides[2:]
    strides = (lead + tuple(s * d for s, d in zip(space, dilation))
               + tuple(s * t for s, t in zip(space, stride)))
    return xp.lib.stride_tricks.as_strided(x, shape=x.shape[:2] + tuple(kernel) + tuple(out),
                                           strides=strides)


def _cols(xpad, gi, cg, kernel, stride, dilation, out):
    n = xpad.shape[0]
    win = windows(xpad[:, gi * cg:(gi + 1) * cg], kernel, stride, dilation, out)
    return win.reshape(n, cg * math.prod(kernel), math.prod(out))


def conv_forward(x, w, stride, pads, dilation, groups: int, out):
    """Cross-correlation of ``x`` with ``w`` (``O, C/groups, *kernel``): ``(N, O, *out)``."""
    xp = get_array_module(x)
    n, o, cg, kernel = x.shape[0], w.shape[0], w.shape[1], w.shape[2:]
    og = o // groups
    xpad = pad_spatial(x, pads)
    y = xp.empty((n, o, math.prod(out)), dtype=np.result_type(x.dtype, w.dtype))
    for gi in range(groups):
        cols = _cols(xpad, gi, cg, kernel, stride, dilation, out)
        y[:, gi * og:(gi + 1) * og] = w[gi * og:(gi + 1) * og].reshape(og, -1) @ cols
    return y.reshape(n, o, *out)


def conv_weight_grad(x, g, w_shape, stride, pads, dilation, groups: int):
    """The gradient of ``conv_forward`` for its filters: ``g`` against the input's windows."""
    xp = get_array_module(g)
    n, o, cg, kernel, out = x.shape[0], w_shape[0], w_shape[1], w_shape[2:], g.shape[2:]
    og = o // groups
    xpad = pad_spatial(x, pads)
    g2 = g.reshape(n, groups, og, math.prod(out))
    gw = xp.empty(w_shape, dtype=np.result_type(x.dtype, g.dtype))
    for gi in range(groups):
        cols = _cols(xpad, gi, cg, kernel, stride, dilation, out)
        gw[gi * og:(gi + 1) * og] = xp.tensordot(g2[:, gi], cols, axes=([0, 2], [0, 2])).reshape(
            og, cg, *kernel)
    return gw


def conv_input_grad(g, w, size, stride, pads, dilation, groups: int):
    """The gradient of ``conv_forward`` for an input of spatial ``size`` (col2im); also the
    transposed convolution of ``g``."""
    xp = get_array_module(g)
    n, o, cg, kernel, out = g.shape[0], w.shape[0], w.shape[1], w.shape[2:], g.shape[2:]
    og = o // groups
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    target = xp.zeros((n, cg * groups, *padded), dtype=np.result_type(g.dtype, w.dtype))
    g2 = g.reshape(n, groups, og, math.prod(out))
    for gi in range(groups):
        wg = w[gi * og:(gi + 1) * og].reshape(og, -1)
        gcols = (wg.T @ g2[:, gi]).reshape(n, cg, *kernel, *out)
        add_windows(target[:, gi * cg:(gi + 1) * cg], gcols, kernel, stride, dilation, out)
    crop = tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, pads))
    return target[(slice(None), slice(None), *crop)]


def add_windows(target, gcols, kernel, stride, dilation, out) -> None:
    """Add ``gcols`` (``N, C, *kernel, *out``) onto the windows of ``target`` (col2im)."""
    every = (slice(None), slice(None))
    places = [[slice(i * d, i * d + s * (o - 1) + 1, s) for i in range(k)]
              for k, d, s, o in zip(kernel, dilation, stride, out)]
    for offset, place in zip(product(*map(range, kernel)), product(*places)):
        target[every + place] += gcols[every + offset]
