"""``max_unpool1d/2d/3d``: the partial inverse of ``max_pool`` with ``return_indices=True``.

Each input value goes back to the position its index names in its ``(N, C)`` plane of the
output (flattened over the spatial dims); every other position is zero. The forward writes
into zeros at the indices, so the gradient is a gather of the output gradient at them
(``MaxUnpool2DBackward0``/``3D``, which save only the indices), and double backward comes
free. ``max_unpool1d`` is PyTorch's composite: the 2-d op on a trailing dim of one.
"""

from __future__ import annotations

import numpy as np

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import dual
from ...ops.indexing import scalar_type_name

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


class MaxUnpool2DBackward0(Node):
    """The gradient of each input value is the output gradient at the place its index sent it
    (a gather per ``(N, C)`` plane; on tensors an indexing op, so double backward follows)."""
    rule = "self: max_pool_double_backward(grad, indices, 2)"

    __slots__ = ()
    inputs = ("self",)
    saves = ("indices",)
    computed = ("indices",)
    spatial = 2

    def backward(self, g):
        (indices,) = self.saved(g)
        idx = dual.data(indices)
        shape = tuple(idx.shape)
        planes = int(np.prod(shape[:-self.spatial], dtype=np.int64))
        idx = idx.reshape(planes, int(np.prod(shape[-self.spatial:], dtype=np.int64)))
        rows = get_array_module(idx).arange(planes).reshape(-1, 1)
        plane = int(np.prod(g.shape[-self.spatial:], dtype=np.int64))
        return (dual.reshape(dual.reshape(g, (planes, plane))[rows, idx], shape),)


class MaxUnpool3DBackward0(MaxUnpool2DBackward0):
    rule = "self: max_pool_double_backward(grad, indices, 3)"
    __slots__ = ()
    spatial = 3

def _tuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _output_size(input: Tensor, kernel_size, stride, padding, output_size) -> list[int]:
    """The spatial size of the output: the pooling's input size by default; an explicit one
    (with or without its ``(N, C)`` lead) must lie within one stride of it (PyTorch's rule)."""
    n = len(kernel_size)
    default = [(input.shape[input.ndim - n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        return default
    sizes = list(output_size)
    if len(sizes) == n + 2:
        sizes = sizes[2:]
    if len(sizes) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(sizes)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < sizes[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{low} and {high})')
    return [int(s) for s in sizes]


def _unpool(input: Tensor, indices: Tensor, size: list[int], name: str) -> Tensor:
    """Scatter ``input`` into zeros of spatial ``size`` at ``indices`` (flat per plane)."""
    n = len(size)
    if str(indices.dtype) != "gradnb.int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_scalar_name(indices)}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {name} should be a {n + 1}d or {n + 2}d Tensor, but got a "
                           f"tensor with {input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_sizes(input)}) but got indices tensor with shape: "
                           f"{_sizes(indices)}")
    for d in range(1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got {_sizes(input)} with dimension "
                               f"{d} being empty.")
    plane = int(np.prod(size))
    lead = tuple(input.shape[:-n])
    planes = int(np.prod(lead, dtype=np.int64))
    taps = int(np.prod(input.shape[input.ndim - n:], dtype=np.int64))
    flat_idx = indices._data.reshape(planes, taps)
    bad = (flat_idx < 0) | (flat_idx >= plane)
    if bad.any():
        # PyTorch's kernel scans every index and reports the last bad one it met.
        raise RuntimeError(f"Found an invalid max index: {int(flat_idx[bad][-1])} (output "
                           f"volumes are of size {'x'.join(str(s) for s in size)})")
    xp = get_array_module(input._data)
    out = xp.zeros((planes, plane), dtype=input._data.dtype)
    out[xp.arange(planes).reshape(-1, 1), flat_idx] = input._data.reshape(planes, taps)
    cls = MaxUnpool2DBackward0 if n == 2 else MaxUnpool3DBackward0
    return record(cls, (input,), out.reshape(*lead, *size), attrs={"indices": indices})


def _scalar_name(t: Tensor) -> str:
    return scalar_type_name(t._data.dtype)


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _spec(kernel_size, stride, padding, n: int):
    kernel = _tuple(kernel_size, n)
    return kernel, (kernel if stride is None else _tuple(stride, n)), _tuple(padding, n)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Undo ``max_pool1d``: ``(N, C, L)`` or ``(C, L)`` values back at their ``indices``."""
    kernel, step, pad = _spec(kernel_size, stride, padding, 1)
    size = _output_size(input, kernel, step, pad, output_size)
    # PyTorch runs the 2-D kernel on a trailing dim of one, so its messages speak of 2-D.
    out = _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1], "max_unpooling2d")
    return out.squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Undo ``max_pool2d``: ``(N, C, H, W)`` or ``(C, H, W)`` values back at their ``indices``."""
    kernel, step, pad = _spec(kernel_size, stride, padding, 2)
    return _unpool(input, indices, _output_size(input, kernel, step, pad, output_size),
                   "max_unpooling2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Undo ``max_pool3d``: ``(N, C, D, H, W)`` or ``(C, D, H, W)`` values back at their
    ``indices``."""
    kernel, step, pad = _spec(kernel_size, stride, padding, 3)
    return _unpool(input, indices, _output_size(input, kernel, step, pad, output_size),
                   "max_unpooling3d")
