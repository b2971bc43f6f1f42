"""Padding (``pad``: constant, reflect, replicate, circular; ``constant_pad_nd``),
``interpolate`` (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area) with its old
names ``upsample*``, ``pixel_shuffle`` and ``channel_shuffle``.

Reflect, replicate and circular padding are ``padding_modes.py``'s. Interpolation records
PyTorch's node for its mode and rank (``UpsampleBilinear2DBackward0``...): along each spatial
dim every output reads a few weighted input samples, and the gradient adds them back.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._core.backend import get_array_module
from ..._core.grad_mode import no_grad
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops.indexing import scatter_into_zeros
from ...ops.padding import _constant_pad, constant_pad_nd
from ...ops.padding_modes import circular_pad, index_pad
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["channel_shuffle", "constant_pad_nd", "interpolate", "pad", "pixel_shuffle",
           "pixel_unshuffle", "upsample", "upsample_bilinear", "upsample_nearest"]


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
    """Resize the spatial dims of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``.

    ``antialias`` (bilinear and bicubic, 4-D input): when shrinking, each output averages its
    whole footprint (PIL's filters) instead of reading its nearest samples.
    """
    n = input.ndim - 2
    if n < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    outs, scales = _out_sizes(input, n, size, scale_factor)
    if recompute_scale_factor:
        scales = (None,) * n
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[n - 1](input, outs)
    if mode not in ("nearest", "nearest-exact"):
        expected = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode)
        if expected is None:
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                      f"(got {input.ndim}D) for the modes: nearest | linear | "
                                      f"bilinear | bicubic | trilinear | area | nearest-exact "
                                      f"(got {mode})")
        if expected != n:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{expected + 2}D input")
        align_corners = bool(align_corners)
        if antialias:
            mode += "-aa"
    return _upsample(input, _Resampling(mode, tuple(input.shape[-n:]), outs, scales,
                                        align_corners, input._data.dtype))


# -- interpolate's nodes: one per mode and rank, as PyTorch's ----------------------------------
# Along each spatial dim, output ``o`` reads a few input samples ("taps"): tap ``j`` is three
# arrays over the outputs, the index each reads, its weight (nearest: None) and whether it reads
# at all (None: all do; an antialiased window is shorter at the edges). The forward sums the
# weighted gathers, the last dim first (PyTorch's kernels sum the innermost dim inside); the
# gradient adds each output's gradient back onto the samples it read (``add.at``), so an inf or
# NaN reaches exactly the places it reaches in PyTorch's kernels.

_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"),
                3: ("scales_d", "scales_h", "scales_w")}
_CUBIC_A = -0.75


def _resample(data, taps):
    """``data``'s last ``len(taps)`` dims read through ``taps``."""
    xp = get_array_module(data)
    n = len(taps)
    for k in reversed(range(n)):
        axis = data.ndim - n + k
        shape = [1] * data.ndim
        shape[axis] = -1
        out = None
        for index, weight, valid in taps[k]:
            term = _weighted(xp.take(data, xp.asarray(index), axis=axis), weight, valid, shape)
            if out is None:
                out = term
            else:
                with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN (PyTorch)
                    out = out + term
        data = out
    return data


def _weighted(values, weight, valid, shape):
    """``values`` times ``weight`` along one axis (``shape``: -1 there), 0 where not ``valid``."""
    xp = get_array_module(values)
    if weight is not None:
        with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 is NaN, as in PyTorch
            values = values * xp.asarray(weight, dtype=values.dtype).reshape(shape)
    if valid is not None:
        values = xp.where(xp.asarray(valid).reshape(shape), values, 0)
    return values


def _resample_adjoint(g, taps, in_shape):
    """The gradient of :func:`_resample` at an input of shape ``in_shape``: each tap's weighted
    ``g`` added back at its indices (all taps of a dim in one ``add.at``)."""
    xp = get_array_module(g)
    n = len(taps)
    for k in range(n):
        axis = g.ndim - n + k
        shape = [1] * g.ndim
        shape[axis] = -1
        terms = [_weighted(g, weight, valid, shape) for _, weight, valid in taps[k]]
        index = np.concatenate([tap[0] for tap in taps[k]])
        sizes = list(g.shape)
        sizes[axis] = in_shape[axis]
        g = scatter_into_zeros(sizes, (slice(None),) * axis + (xp.asarray(index),),
                               xp.concatenate(terms, axis=axis))
    return g


def _source_scale(size: int, out: int, align_corners: bool, scale, ftype):
    """PyTorch's ``area_pixel_compute_scale`` in its accumulate type ``ftype``."""
    if align_corners:
        return ftype(size - 1) / ftype(out - 1) if out > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(size) / ftype(out)


def _source_index(size: int, out: int, align_corners: bool, scale, ftype, cubic: bool):
    """PyTorch's ``area_pixel_compute_source_index`` of every output: the (fractional) input
    position, its floor (at most ``size - 1``) and the fraction past it, in ``[0, 1]``."""
    ratio = _source_scale(size, out, align_corners, scale, ftype)
    o = np.arange(out, dtype=ftype)
    src = ratio * o if align_corners else ratio * (o + ftype(0.5)) - ftype(0.5)
    if not cubic:
        src = np.maximum(src, ftype(0))
    base = np.minimum(np.floor(src).astype(np.int64), size - 1)
    return base, np.clip(src - base.astype(ftype), ftype(0), ftype(1))


def _linear_taps(size: int, out: int, align_corners: bool, scale, ftype) -> tuple:
    if size == out:  # PyTorch copies: weights 1 and 0 on the same sample
        o = np.arange(out)
        return (o, np.ones(out, ftype), None), (o, np.zeros(out, ftype), None)
    i0, lam = _source_index(size, out, align_corners, scale, ftype, cubic=False)
    return (i0, ftype(1) - lam, None), (i0 + (i0 < size - 1), lam, None)


def _cubic_taps(size: int, out: int, align_corners: bool, scale, ftype) -> tuple:
    """Four taps, clamped at the edges, with Keys' cubic weights (``a = -0.75``)."""
    base, t = _source_index(size, out, align_corners, scale, ftype, cubic=True)
    a = ftype(_CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return tuple((np.clip(base + j - 1, 0, size - 1), w, None) for j, w in enumerate(weights))


def _nearest_taps(size: int, out: int, scale, exact: bool) -> tuple:
    """``floor(o * s)`` (nearest) or ``floor((o + 0.5) * s)`` (nearest-exact), in float32 as
    PyTorch computes them."""
    ratio = np.float32(1.0 / scale) if scale is not None and scale > 0 \
        else np.float32(size) / np.float32(out)
    o = np.arange(out, dtype=np.float32)
    src = np.floor((o + np.float32(0.5)) * ratio) if exact else np.floor(o * ratio)
    return ((np.minimum(src.astype(np.int64), size - 1), None, None),)


def _antialias_taps(size: int, out: int, align_corners: bool, scale, ftype, cubic: bool):
    """PyTorch's antialiased windows (as PIL's): output ``o`` averages the inputs within
    ``support`` of its center ``ratio (o + 0.5)`` through a triangle (bilinear) or a cubic with
    ``a = -0.5`` (bicubic) stretched by ``ratio`` when downsampling, normalised to sum to 1.
    Each step rounds where PyTorch's kernel does (some steps run in double precision)."""
    ratio = _source_scale(size, out, align_corners, scale, ftype)
    half = 2.0 if cubic else 1.0
    support = ftype(half * float(ratio) if ratio >= 1 else half)
    inv = ftype(1.0 / float(ratio) if ratio >= 1 else 1.0)
    width = int(np.ceil(support)) * 2 + 1
    center = (float(ratio) * (np.arange(out) + 0.5)).astype(ftype)
    low = np.maximum((center - support + 0.5).astype(np.int64), 0)
    count = np.clip(np.minimum((center + support + 0.5).astype(np.int64), size) - low, 0, width)
    j = np.arange(width)[:, None]
    offset = (j + low).astype(ftype) - center
    x = np.abs((offset.astype(np.float64) + 0.5) * float(inv)).astype(ftype)
    with np.errstate(invalid="ignore", over="ignore"):
        if cubic:
            a = ftype(-0.5)
            w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                         np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0))
        else:
            w = np.where(x < 1, 1 - x, 0)
    valid = j < count
    w = np.where(valid, w, 0).astype(ftype)
    total = np.add.accumulate(w, axis=0)[-1] if width else np.zeros(out, ftype)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(ftype)
    return tuple((np.minimum(low + k, size - 1), w[k], valid[k]) for k in range(width))


def _identity_taps(size: int) -> tuple:
    return ((np.arange(size), None, None),)


class _Resampling:
    """One interpolation: its taps along each spatial dim (and those its gradient adds back
    through), its two node classes and the values they show (``output_size``, ``scales_h``...)."""

    __slots__ = ("adjoint_taps", "backward_node", "node", "shown", "taps")

    def __init__(self, mode: str, sizes: tuple, outs: tuple, scales: tuple, align_corners,
                 dtype) -> None:
        self.node, self.backward_node = _NODES[mode, len(sizes)]
        ftype = np.float64 if dtype == np.float64 else np.float32
        if mode in ("nearest", "nearest-exact"):
            exact = mode == "nearest-exact"
            self.taps = self.adjoint_taps = tuple(_nearest_taps(s, o, f, exact)
                                                  for s, o, f in zip(sizes, outs, scales))
        elif mode.endswith("-aa"):
            cubic = mode == "bicubic-aa"
            self.adjoint_taps = tuple(_antialias_taps(s, o, align_corners, f, ftype, cubic)
                                      for s, o, f in zip(sizes, outs, scales))
            # The forward leaves a dim whose size does not change as it is (the gradient still
            # goes through its one-sample windows).
            self.taps = tuple(_identity_taps(s) if s == o else t
                              for s, o, t in zip(sizes, outs, self.adjoint_taps))
        else:
            make = _cubic_taps if mode == "bicubic" else _linear_taps
            self.taps = self.adjoint_taps = tuple(make(s, o, align_corners, f, ftype)
                                                  for s, o, f in zip(sizes, outs, scales))
            if mode == "bicubic" and sizes == outs:
                # PyTorch's bicubic backward copies the gradient when no size changes (its
                # forward still reads the zero-weighted neighbours: an inf there gives NaN).
                self.adjoint_taps = tuple(_identity_taps(s) for s in sizes)
        self.shown = {"output_size": outs,
                      **dict(zip(_SCALE_NAMES[len(sizes)], scales))}
        if align_corners is not None:
            self.shown["align_corners"] = align_corners


def _upsample(input: Tensor, plan: _Resampling) -> Tensor:
    return record(plan.node, (input,), _resample(input._data, plan.taps),
                  attrs={"plan": plan, **plan.shown})


def _upsample_backward(grad: Tensor, plan: _Resampling, in_shape: tuple) -> Tensor:
    return record(plan.backward_node, (grad,),
                  _resample_adjoint(grad._data, plan.adjoint_taps, in_shape),
                  attrs={"plan": plan, **plan.shown})


class _UpsampleBackward(Node):
    """An interpolation's gradient: the adjoint of its taps (``_resample_adjoint``)."""

    __slots__ = ("plan",)
    on_tensors = True
    inputs = ("self",)

    def backward(self, g):
        return (_upsample_backward(g, self.plan, self.self_sym_sizes),)


class _UpsampleBackwardBackward(Node):
    """The gradient of an interpolation's gradient: the interpolation itself (it is linear)."""

    __slots__ = ("plan",)
    on_tensors = True
    inputs = ("grad_output",)

    def backward(self, g):
        return (_upsample(g, self.plan),)


def _declare(stem: str, op: str, rank: int, align: bool) -> tuple:
    """PyTorch's node of ``op`` (``upsample_bilinear2d``) and of its backward."""
    names = ("output_size",) + (("align_corners",) if align else ()) + _SCALE_NAMES[rank]
    args = ", ".join(names[1:])
    made = []
    for base, suffix, rule in (
            (_UpsampleBackward, "Backward0",
             f"self: {op}_backward_symint(grad, output_size, self.sym_sizes(), {args})"),
            (_UpsampleBackwardBackward, "BackwardBackward0",
             f"grad_output: {op}_symint(grad, output_size, {args})")):
        name = stem + suffix
        saves = names + (("self_sym_sizes",) if base is _UpsampleBackward else ())
        made.append(type(name, (base,), {"__slots__": (), "__module__": __name__,
                                         "__qualname__": name, "saves": saves, "rule": rule}))
    return tuple(made)


_NODES = {
    ("nearest", 1): _declare("UpsampleNearest1D", "upsample_nearest1d", 1, align=False),
    ("nearest", 2): _declare("UpsampleNearest2D", "upsample_nearest2d", 2, align=False),
    ("nearest", 3): _declare("UpsampleNearest3D", "upsample_nearest3d", 3, align=False),
    ("nearest-exact", 1): _declare("UpsampleNearestExact1D", "_upsample_nearest_exact1d", 1,
                                   align=False),
    ("nearest-exact", 2): _declare("UpsampleNearestExact2D", "_upsample_nearest_exact2d", 2,
                                   align=False),
    ("nearest-exact", 3): _declare("UpsampleNearestExact3D", "_upsample_nearest_exact3d", 3,
                                   align=False),
    ("linear", 1): _declare("UpsampleLinear1D", "upsample_linear1d", 1, align=True),
    ("bilinear", 2): _declare("UpsampleBilinear2D", "upsample_bilinear2d", 2, align=True),
    ("bicubic", 2): _declare("UpsampleBicubic2D", "upsample_bicubic2d", 2, align=True),
    ("trilinear", 3): _declare("UpsampleTrilinear3D", "upsample_trilinear3d", 3, align=True),
    ("bilinear-aa", 2): _declare("UpsampleBilinear2DAa", "_upsample_bilinear2d_aa", 2,
                                 align=True),
    ("bicubic-aa", 2): _declare("UpsampleBicubic2DAa", "_upsample_bicubic2d_aa", 2, align=True),
}


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
