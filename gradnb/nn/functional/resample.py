"""Padding (``pad``: constant, reflect, replicate, circular; ``constant_pad_nd``),
``interpolate`` (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area) with its old
names ``upsample*``, ``pixel_shuffle`` and ``channel_shuffle``.

Reflect, replicate and circular padding are ``padding_modes.py``'s; nearest interpolation
gathers along each dim with ``index_select`` (whose gradient adds back onto the source
positions); linear and cubic interpolation are the separable matrices of ``separable.py``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._core.grad_mode import no_grad
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor
from ...ops.indexing import index_select
from ...ops.padding import _constant_pad, constant_pad_nd
from .padding_modes import circular_pad, index_pad
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from .separable import apply_along, interp_matrix, nearest_index

__all__ = ["channel_shuffle", "constant_pad_nd", "interpolate", "pad", "pixel_shuffle",
           "pixel_unshuffle", "upsample", "upsample_bilinear", "upsample_nearest"]


def _gather(x: Tensor, dim: int, index: np.ndarray) -> Tensor:
    return index_select(x, dim, _tensor(index, device=x.device))


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists ``(left, right)`` pairs starting from
    the last dim. Negative amounts crop (constant mode)."""
    pads = [int(p) for p in pad]
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length "
                           f"{len(pads)} and input of dimension {input.ndim}")
    if mode == "constant":
        return _constant_pad(input, pads, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    n = len(pads) // 2
    if n > 3 or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for i in range(n):
        dim = input.ndim - 1 - i
        left, right, size = pads[2 * i], pads[2 * i + 1], input.shape[dim]
        if mode == "circular" and (left < 0 or right < 0):
            # A negative amount crops first; the wrap then reads the cropped tensor (PyTorch).
            size -= max(-left, 0) + max(-right, 0)
            left, right = max(left, 0), max(right, 0)
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension {dim} of input "
                f"{list(input.shape)}")
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    if mode == "circular":
        return circular_pad(input, tuple(pads))
    return index_pad(input, tuple(pads), mode)


def _out_sizes(input: Tensor, n: int, size, scale_factor):
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = tuple(input.shape[-n:])
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * n
        if len(sizes) != n:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(in_sizes)} and output size of {list(sizes)}. Please provide "
                             "input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             "(o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), (None,) * n
    scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) \
        else (scale_factor,) * n
    return tuple(int(np.floor(s * f)) for s, f in zip(in_sizes, scales)), \
        tuple(float(f) for f in scales)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``."""
    n = input.ndim - 2
    if n < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by gradnb")
    outs, scales = _out_sizes(input, n, size, scale_factor)
    if recompute_scale_factor:
        scales = (None,) * n
    sizes = tuple(input.shape[-n:])
    if mode in ("nearest", "nearest-exact"):
        x = input
        for i, (s, o, f) in enumerate(zip(sizes, outs, scales)):
            x = _gather(x, input.ndim - n + i, nearest_index(s, o, f, mode == "nearest-exact"))
        return x
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[n - 1](input, outs)
    expected = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
    if expected is None:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.ndim}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | area | nearest-exact (got "
                                  f"{mode})")
    if expected != n:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{expected + 2}D input")
    kind = "cubic" if mode == "bicubic" else "linear"
    mats = [interp_matrix(s, o, kind, bool(align_corners), f)
            for s, o, f in zip(sizes, outs, scales)]
    return apply_along(input, mats)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """``interpolate`` under its old name."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate(mode='nearest')`` under its deprecated name (PyTorch warns too)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate(mode='bilinear', align_corners=True)`` under its deprecated name."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels (dim 1) of ``groups`` groups: channel ``g * k + i`` moves to
    ``i * groups + g`` for ``k = C / groups``."""
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def _pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# -- the rearrangements as PyTorch's nodes: each gradient is the inverse rearrangement ----------
def _rearranged(cls, fn, input: Tensor, factor: int, attrs: dict) -> Tensor:
    """``fn`` (a composition of reshapes) run on ``input``'s data, recorded as one ``cls``."""
    with no_grad():
        out = fn(Tensor._make(input._data), factor)._data
    return record(cls, (input,), out.copy(), attrs=attrs)


class PixelShuffleBackward0(Node):
    rule = "self: pixel_unshuffle(grad, upscale_factor)"
    __slots__ = ("upscale_factor",)
    on_tensors = True
    inputs = ("self",)
    saves = ("upscale_factor",)

    def backward(self, g):
        return (pixel_unshuffle(g, self.upscale_factor),)


class PixelUnshuffleBackward0(Node):
    rule = "self: pixel_shuffle(grad, downscale_factor)"
    __slots__ = ("downscale_factor",)
    on_tensors = True
    inputs = ("self",)
    saves = ("downscale_factor",)

    def backward(self, g):
        return (pixel_shuffle(g, self.downscale_factor),)


class ChannelShuffleBackward0(Node):
    rule = "self: channel_shuffle(grad, grad.size(1) / groups)"
    __slots__ = ("groups",)
    on_tensors = True
    inputs = ("self",)
    saves = ("groups",)

    def backward(self, g):
        return (channel_shuffle(g, g.shape[1] // self.groups),)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``."""
    return _rearranged(PixelShuffleBackward0, _pixel_shuffle, input, upscale_factor,
                       {"upscale_factor": upscale_factor})


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``."""
    return _rearranged(PixelUnshuffleBackward0, _pixel_unshuffle, input, downscale_factor,
                       {"downscale_factor": downscale_factor})


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels (dim 1) of ``groups`` groups: channel ``g * k + i`` moves to
    ``i * groups + g`` for ``k = C / groups``."""
    return _rearranged(ChannelShuffleBackward0, _channel_shuffle, input, groups,
                       {"groups": groups})
