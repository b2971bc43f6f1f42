"""``grid_sample`` and its ATen forms ``grid_sampler``, ``grid_sampler_2d``, ``grid_sampler_3d``:
read ``input`` at the (normalised, ``[-1, 1]``) positions of ``grid``.

One node, ``GridSampler2DBackward0`` (``3D``), as PyTorch's. The sampling itself is composed
from gradnb's ops, following ATen's kernel (``GridSampler.h``) step by step: a grid coordinate
is unnormalised to a pixel coordinate (``align_corners`` says whether -1 and 1 are the centres
or the outer edges of the corner pixels), moved inside the image by the padding mode (``border``
clamps, ``reflection`` mirrors; ``zeros`` leaves it and reads zeros outside), then the
neighbouring pixels are gathered and weighted (bilinear/trilinear: the distance to the floor;
bicubic: Keys' cubic convolution with ``A = -0.75``, its taps padded one by one; nearest: the
pixel at the rounded coordinate, half to even). Integer positions are computed outside the
graph (their derivative is zero), the weights inside it. The forward runs that composition
without recording; the node's backward runs it again with recording and takes its
vector-Jacobian product (recording too under ``create_graph``, so every order follows).
"""

from __future__ import annotations

import itertools
import warnings
from typing import ClassVar

import numpy as np

from ... import autograd
from ..._core.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import elementwise, pointwise
from ...ops.creation import tensor as _tensor
from ...ops.indexing import scalar_type_name
from ...ops.shape import stack

__all__ = ["grid_sample", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_CUBIC_A = -0.75


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at ``grid`` ``(N, H', W', 2)``
    (or ``(N, D', H', W', 3)``), whose last dim holds ``(x, y[, z])`` in ``[-1, 1]``."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``grid_sample`` with ATen's integer codes: mode 0 bilinear, 1 nearest, 2 bicubic; padding
    0 zeros, 1 border, 2 reflection. A 4-D input goes to ``grid_sampler_2d``, any other to
    ``grid_sampler_3d`` (whose checks then name what is wrong)."""
    sampler = grid_sampler_2d if input.ndim == 4 else grid_sampler_3d
    return sampler(input, grid, interpolation_mode, padding_mode, align_corners)


class GridSampler2DBackward0(Node):
    """The sampling's vector-Jacobian product: the input's gradient is ``grad`` scattered back
    with the interpolation weights, the grid's ``grad`` against the weights' derivatives."""
    rule = ("input, grid: grid_sampler_2d_backward(grad, input, grid, interpolation_mode, "
            "padding_mode, align_corners, grad_input_mask)")

    __slots__ = ("align_corners", "interpolation_mode", "padding_mode")
    on_tensors = True
    inputs = ("input", "grid")
    saves = ("grid", "input")
    saved_attrs: ClassVar[dict] = {"align_corners": "align_corners",
                                   "interpolation_mode": "interpolation_mode",
                                   "padding_mode": "padding_mode"}

    def backward(self, g):
        grid, x = self.saved(g)
        return _vjp(self, x, grid, g)


class GridSampler3DBackward0(GridSampler2DBackward0):
    rule = ("input, grid: grid_sampler_3d_backward(grad, input, grid, interpolation_mode, "
            "padding_mode, align_corners, grad_input_mask)")
    __slots__ = ()


def _vjp(node: Node, x: Tensor, grid: Tensor, g: Tensor) -> tuple:
    """Rerun the sampling with recording and pull ``g`` back through it: from detached copies
    in a first-order pass, from aliases of the saved tensors under ``create_graph`` (so the
    gradients stay functions of them)."""
    create = is_grad_enabled()
    wanted = (node.needs(0), node.needs(1))
    with enable_grad():
        if create:
            leaves = [t.view_as(t) if w else t.detach() for t, w in zip((x, grid), wanted)]
        else:
            leaves = [t.detach().requires_grad_(w) for t, w in zip((x, grid), wanted)]
        out = _sample(*leaves, node.interpolation_mode, node.padding_mode, node.align_corners)
        targets = [t for t, w in zip(leaves, wanted) if w]
        found = iter(autograd.grad(out, targets, g, create_graph=create, allow_unused=True))
    grads = [next(found) if w else None for w in wanted]
    return tuple(t.detach() * 0 if w and d is None else d
                 for t, w, d in zip((x, grid), wanted, grads))


def _sampled(cls, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
             align_corners: bool) -> Tensor:
    with no_grad():
        out = _sample(input, grid, interpolation_mode, padding_mode, bool(align_corners))
    return record(cls, (input, grid), out._data,
                  attrs={"interpolation_mode": interpolation_mode, "padding_mode": padding_mode,
                         "align_corners": bool(align_corners)})


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 4-D input."""
    _check(input, grid, interpolation_mode, 2)
    return _sampled(GridSampler2DBackward0, input, grid, interpolation_mode, padding_mode,
                    align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 5-D input (bilinear means trilinear; no bicubic)."""
    _check(input, grid, interpolation_mode, 3)
    return _sampled(GridSampler3DBackward0, input, grid, interpolation_mode, padding_mode,
                    align_corners)


def _check(input: Tensor, grid: Tensor, mode: int, dims: int) -> None:
    """ATen's checks, in its order: the common ones, then those of the 2-D or 3-D kernel."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found "
                           f"{_scalar_name(grid)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but "
                           f"got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if input.ndim != dims + 2 or grid.ndim != dims + 2:
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number "
                           f"of dimensions, but got {sizes}")
    if mode == 2 and dims == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _scalar_name(t: Tensor) -> str:
    return scalar_type_name(t._data.dtype)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Mirror ``coord`` into ``[low, high]`` as often as it takes (ATen's
    ``reflect_coordinates``)."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    dist = elementwise.abs(coord - low)
    extra = pointwise.fmod(dist, span)
    flips = np.floor(dist.detach().cpu().numpy() / span)
    even = _tensor(flips % 2 == 0, device=coord.device)
    return elementwise.where(even, extra + low, span - extra + low)


def _pad_coordinate(coord: Tensor, size: int, padding: int, align_corners: bool) -> Tensor:
    """Move a pixel coordinate inside the image as the padding mode says (zeros: leave it)."""
    if padding == 0:
        return coord
    if padding == 2:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord = _reflect(coord, *twice)
    # PyTorch's clip sends a NaN coordinate (an infinite one, once reflected) to the low edge
    inside = coord.clamp(0, size - 1)
    return elementwise.where(elementwise.isnan(inside), 0.0, inside)


def _gather(flat: Tensor, positions: list[np.ndarray], sizes: tuple[int, ...]) -> Tensor:
    """``flat`` ``(N, C, prod(sizes))`` read at integer ``positions`` (one ``(N, P)`` array per
    spatial dim, outermost first), zero where a position is outside the image."""
    n, c = flat.shape[0], flat.shape[1]
    inside = np.ones(positions[0].shape, dtype=bool)
    offset = np.zeros(positions[0].shape, dtype=np.int64)
    for pos, size in zip(positions, sizes):
        inside &= (pos >= 0) & (pos < size)
        offset = offset * size + np.clip(pos, 0, size - 1)
    index = _tensor(offset, device=flat.device).unsqueeze(1).expand(n, c, offset.shape[1])
    values = flat.gather(2, index)
    if inside.all():
        return values
    mask = _tensor(inside[:, None, :], dtype=flat.dtype, device=flat.device)
    return values * mask


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights of the four taps around a point at fraction ``t``."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _pixel(position: np.ndarray) -> np.ndarray:
    """Whole pixel positions as integers; a non-finite or huge one becomes -100, outside any
    image (ATen's ``safe_downgrade_to_int_range``)."""
    safe = np.isfinite(position) & (np.abs(position) < 2**31 - 1)
    return np.where(safe, position, -100).astype(np.int64)


def _sample(input: Tensor, grid: Tensor, mode: int, padding: int, align_corners: bool) -> Tensor:
    # A non-finite grid point yields NaN weights (inf - inf): PyTorch computes them silently.
    with np.errstate(invalid="ignore"):
        return _sample_finite_or_not(input, grid, mode, padding, align_corners)


def _sample_finite_or_not(input: Tensor, grid: Tensor, mode: int, padding: int,
                          align_corners: bool) -> Tensor:
    n, c = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])  # (D,) H, W
    out_shape = tuple(grid.shape[1:-1])
    dims = len(sizes)
    flat = input.reshape(n, c, -1)
    points = grid.reshape(n, -1, dims)
    # grid's last dim is (x, y[, z]): x indexes the innermost (width) dim
    raw = [_unnormalize(points[..., dims - 1 - d], sizes[d], align_corners) for d in range(dims)]
    if mode == 2:
        out = _bicubic(flat, raw, sizes, padding, align_corners)
    else:
        coords = [_pad_coordinate(x, s, padding, align_corners) for x, s in zip(raw, sizes)]
        if mode == 1:
            positions = [_pixel(np.rint(x.detach().cpu().numpy())) for x in coords]
            out = _gather(flat, positions, sizes)
        else:
            out = _linear(flat, coords, sizes)
    return out.reshape(n, c, *out_shape)


def _weighted_taps(flat: Tensor, taps: list[list[np.ndarray]], weights: list[Tensor],
                   sizes) -> Tensor:
    """``sum_k weights[k] * flat[taps[k]]``, with all taps read by one gather (so the backward
    scatters into the input once, not once per tap)."""
    n, c = flat.shape[0], flat.shape[1]
    points = taps[0][0].shape[1]
    positions = [np.concatenate([tap[d] for tap in taps], axis=1) for d in range(len(sizes))]
    values = _gather(flat, positions, sizes).reshape(n, c, len(taps), points)
    return (values * stack(weights, 1).unsqueeze(1)).sum(2)


def _linear(flat: Tensor, coords: list[Tensor], sizes) -> Tensor:
    """Bilinear or trilinear: each corner weighted by the opposite sub-box's volume."""
    floors = [np.floor(x.detach().cpu().numpy()) for x in coords]
    fractions = [x - _tensor(f, dtype=x.dtype, device=x.device) for x, f in zip(coords, floors)]
    taps, weights = [], []
    for corner in itertools.product((0, 1), repeat=len(coords)):
        weight = None
        for bit, frac in zip(corner, fractions):
            w = frac if bit else 1 - frac
            weight = w if weight is None else weight * w
        taps.append([_pixel(f) + bit for f, bit in zip(floors, corner)])
        weights.append(weight)
    return _weighted_taps(flat, taps, weights, sizes)


def _bicubic(flat: Tensor, raw: list[Tensor], sizes, padding: int, align_corners: bool) -> Tensor:
    """Bicubic over a 4 x 4 neighbourhood; each tap is moved inside by the padding mode."""
    (y, x), (height, width) = raw, sizes
    y0, x0 = np.floor(y.detach().cpu().numpy()), np.floor(x.detach().cpu().numpy())
    wy = _cubic_weights(y - _tensor(y0, dtype=y.dtype, device=y.device))
    wx = _cubic_weights(x - _tensor(x0, dtype=x.dtype, device=x.device))
    taps, weights = [], []
    for i, j in itertools.product(range(4), range(4)):
        taps.append([_tap(y0 - 1 + i, height, padding, align_corners),
                     _tap(x0 - 1 + j, width, padding, align_corners)])
        weights.append(wy[i] * wx[j])
    return _weighted_taps(flat, taps, weights, sizes)


def _tap(position: np.ndarray, size: int, padding: int, align_corners: bool) -> np.ndarray:
    """The pixel a bicubic tap reads (ATen's ``get_value_bounded``): padded, then truncated."""
    padded = _pad_coordinate(_tensor(position), size, padding, align_corners)
    return _pixel(np.trunc(padded.numpy()))
