"""``affine_grid``: the sampling grid of a batch of affine maps, for ``grid_sample``.

Each output point is ``theta @ (x, y[, z], 1)`` for the base grid's normalised coordinates, one
matrix product per batch; the gradient of ``theta`` is the output's gradient against the base
grid (``AffineGridGeneratorBackward0``, as PyTorch's ``affine_grid_generator``).
"""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor

__all__ = ["affine_grid"]


def _base_grid(spatial: tuple, align_corners: bool, dtype) -> np.ndarray:
    """``(prod(spatial), k + 1)``: each point's ``(x, y[, z], 1)``, x along the last dim."""
    axes = []
    for steps in spatial:
        line = np.linspace(-1.0, 1.0, steps) if steps > 1 else np.zeros(steps)
        axes.append(line if align_corners else line * (steps - 1) / steps)
    mesh = np.meshgrid(*axes, indexing="ij")  # outermost (z or y) first
    coords = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(math.prod(spatial))]
    return np.stack(coords, axis=1).astype(dtype)


class AffineGridGeneratorBackward0(Node):
    """``theta``'s gradient: the grid's gradient against the base grid's coordinates."""
    rule = "theta: affine_grid_generator_backward_symint(grad, size, align_corners)"

    __slots__ = ("align_corners", "size")
    on_tensors = True
    inputs = ("theta",)
    saves = ()
    saved_attrs: ClassVar[dict] = {"align_corners": "align_corners", "size": "size"}

    def backward(self, g):
        n, k = self.size[0], len(self.size) - 2
        base = _tensor(_base_grid(tuple(self.size[2:]), self.align_corners, g._data.dtype),
                       device=g.device)
        return (g.reshape(n, -1, k).transpose(1, 2) @ base,)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) grid that ``grid_sample`` reads to apply
    the affine maps ``theta`` ``(N, 2, 3)`` (or ``(N, 3, 4)``) to an image of ``size``."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    if theta._data.dtype.kind not in "fc":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    k = len(size) - 2
    if k not in (2, 3):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (k, k + 1):
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for "
                         f"size {size}. Got {theta.shape}.")
    spatial = tuple(int(s) for s in size[2:])
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    xp = get_array_module(theta._data)
    base = xp.asarray(_base_grid(spatial, bool(align_corners), theta._data.dtype))
    out = (base @ theta._data.swapaxes(1, 2)).reshape(theta.shape[0], *spatial, k)
    return record(AffineGridGeneratorBackward0, (theta,), out,
                  attrs={"size": tuple(int(s) for s in size),
                         "align_corners": bool(align_corners)})
