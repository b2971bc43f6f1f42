"""Joining, splitting and rearranging: atleast_*d, h/v/d/column_stack, h/v/d/tensor_split,
broadcast_tensors/broadcast_to, meshgrid, rot90, flipud/fliplr, ravel, diff, unfold, take,
repeat_interleave, and the ``*_copy`` forms of views.

All are compositions of differentiable gradnb ops (reshape, cat, narrow, expand, flip,
index_select), so their gradients of every order come from those.
"""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record
from .._core.tensor import Size, _wrap_dim
from .._core.views import strided_view
from . import dual
from . import indexing as ix
from . import shape as sh
from ._args import check_nonempty_list, type_name
from ._common import Tensor, wrap
from ._out import accepts_out
from .arithmetic import div_scalar, mul_scalar

__all__ = [
    "alias_copy", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
    "broadcast_tensors", "broadcast_to",
    "column_stack", "diff", "dsplit", "dstack", "expand_copy", "fliplr", "flipud", "gradient",
    "hsplit", "hstack", "meshgrid", "narrow_copy", "permute_copy", "ravel", "repeat_interleave", "rot90",
    "row_stack", "split_with_sizes", "split_with_sizes_copy", "squeeze_copy", "t_copy", "take",
    "tensor_split", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
    "view_copy", "vsplit", "vstack",
]


def _each(tensors):
    return tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors


def _atleast_one(n: int, t: Tensor) -> Tensor:
    d = t.dim()
    if d >= n:
        return t
    if n == 1:
        return t.reshape(1)
    if n == 2:
        return t.reshape(1, 1) if d == 0 else t.unsqueeze(0)
    if d == 2:
        return t.unsqueeze(-1)
    return t.unsqueeze(0).unsqueeze(-1) if d == 1 else t.reshape(1, 1, 1)


def _atleast(n, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _atleast_one(n, tensors[0])
    return tuple(_atleast_one(n, t) for t in _each(tensors))


def atleast_1d(*tensors):
    """Each input with at least 1 dimension."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """Each input with at least 2 dimensions."""
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """Each input with at least 3 dimensions."""
    return _atleast(3, tensors)


def hstack(tensors) -> Tensor:
    """Concatenate column-wise (along dim 0 for 1-D tensors)."""
    check_nonempty_list("hstack", tensors)
    ts = atleast_1d(*tensors)
    ts = (ts,) if isinstance(ts, Tensor) else ts
    return sh.cat(list(ts), 0 if ts[0].dim() == 1 else 1)


def vstack(tensors) -> Tensor:
    """Concatenate row-wise (1-D tensors become rows)."""
    check_nonempty_list("vstack", tensors)
    ts = atleast_2d(*tensors)
    return sh.cat([ts] if isinstance(ts, Tensor) else list(ts), 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    """Concatenate depth-wise (along dim 2)."""
    check_nonempty_list("dstack", tensors)
    ts = atleast_3d(*tensors)
    return sh.cat([ts] if isinstance(ts, Tensor) else list(ts), 2)


def column_stack(tensors) -> Tensor:
    """1-D (and 0-d) tensors as columns, then concatenated along dim 1."""
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return sh.cat(cols, 1)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split into ``n`` nearly equal parts, or at the given indices (views, like ``narrow``)."""
    d = dim % max(input.dim(), 1)
    n = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        v = indices_or_sections.tolist()
        indices_or_sections = v if isinstance(v, list) else int(v)
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (k - r)).tolist()
    else:
        bounds = [0, *(min(max(int(i), 0), n) for i in indices_or_sections), n]
    parts = []
    for a, b in itertools.pairwise(bounds):
        a = min(a, n)
        parts.append(sh.narrow(input, d, a, max(b - a, 0)))
    return tuple(parts)


def _dsplit_like(input, sections, dim, name, min_dim):
    if not isinstance(sections, (int, list, tuple, Tensor)) or isinstance(sections, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{type_name(sections)}), but expected one of:\n"
                        " * (Tensor input, int sections)\n * (Tensor input, tuple of ints indices)")
    if input.dim() < min_dim:
        raise RuntimeError(f"gradnb.{name} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[dim] % sections):
        raise RuntimeError(f"gradnb.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {input.shape[dim]} is not divisible by the split_size "
                           f"{sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, sections) -> tuple:
    """Split along dim 1 (dim 0 for 1-D tensors)."""
    return _dsplit_like(input, sections, 0 if input.dim() == 1 else 1, "hsplit", 1)


def vsplit(input: Tensor, sections) -> tuple:
    """Split along dim 0."""
    return _dsplit_like(input, sections, 0, "vsplit", 2)


def dsplit(input: Tensor, sections) -> tuple:
    """Split along dim 2."""
    return _dsplit_like(input, sections, 2, "dsplit", 3)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Split into parts of the given sizes."""
    return tuple(sh.split(input, list(split_sizes), dim))


def broadcast_to(input: Tensor, size) -> Tensor:
    """``input`` expanded to ``size``."""
    return input.expand(*size)


def broadcast_tensors(*tensors) -> tuple:
    """The inputs expanded to their common broadcast shape."""
    tensors = _each(tensors)
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    # As PyTorch's expand_outplace: an input already of the broadcast shape comes back itself
    # (no ExpandBackward0 view), so a leaf stays a leaf.
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors)


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (an int stands for a 1-d shape),
    checked argument by argument as PyTorch's ``_broadcast_shapes`` (whose messages name the
    first argument that does not fit what came before)."""
    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, (tuple, list, Size)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a "  # noqa: TRY004 (PyTorch's type)
                               f"list of ints, got {shape}")
    common = [1] * max(len(shape) for shape in shapes)
    for arg, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} "
                                   f"at {idx}! Mismatching argument at index {arg} had {shape}; "
                                   f"but expected shape should be broadcastable to {common}")
    for i, n in enumerate(common):
        if not isinstance(n, int):
            raise TypeError(f"gradnb.Size() takes an iterable of 'int' (item {i} is "
                            f"'{type(n).__name__}')")
    return Size(common)


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """Coordinate grids from 1-D (or 0-d) tensors; ``indexing='xy'`` swaps the first two."""
    tensors = list(_each(tensors))
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"gradnb.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    n = len(tensors)
    swap = indexing == "xy" and n >= 2  # as PyTorch: the first two inputs swapped, then back
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    grids = [t.view([-1 if i == k else 1 for i in range(n)]).expand(*shape)
             for k, t in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first toward the
    second)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims
    if d0 % input.dim() == d1 % input.dim():
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    data = input._data
    out = get_array_module(data).rot90(data, k % 4, (d0 % data.ndim, d1 % data.ndim)).copy()
    return record(Rot90Backward0, (input,), out, attrs={"k": k, "dims": tuple(dims)})


class Rot90Backward0(Node):
    """Gradient of ``rot90``: ``g`` rotated back."""
    rule = "self: grad.rot90(-k, dims)"

    __slots__ = ("dims", "k")
    fit_grads = False  # the rule returns the input's shape itself
    saved_attrs: ClassVar[dict] = {"dims": "dims_shown", "k": "k_shown"}
    dims_shown = sh.torch_int_view("dims")
    k_shown = sh.torch_int_view("k")

    def backward(self, g):
        if isinstance(g, Tensor):
            return (rot90(g, -self.k, self.dims),)
        ndim = g.ndim
        axes = (self.dims[0] % ndim, self.dims[1] % ndim)
        return (get_array_module(g).rot90(g, -self.k % 4, axes).copy(),)


def flipud(input: Tensor) -> Tensor:
    """Flip along dim 0."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def fliplr(input: Tensor) -> Tensor:
    """Flip along dim 1."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor."""
    return input.reshape(-1)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim``."""
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0:  # PyTorch copies ``input`` alone into zeros (prepend/append are not used)
        return wrap(get_array_module(input._data).zeros_like(input._data)).copy_(input)
    parts = [p for p in (prepend, input, append) if p is not None]
    x = sh.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi = sh.narrow(x, dim, 1, length - 1)
        lo = sh.narrow(x, dim, 0, length - 1)
        x = hi ^ lo if x.dtype.name == "bool" else hi - lo
    return x


def _windows(data, dimension: int, size: int, step: int):
    """``data``'s windows as a strided view (``unfold``'s forward): dim ``dimension`` becomes the
    window count, a last dim of ``size`` is added. A 0-d array counts as one of shape (1,)."""
    xp = get_array_module(data)
    if data.ndim == 0:
        return xp.lib.stride_tricks.as_strided(data.reshape(1), (size,), (data.itemsize,))
    count = (data.shape[dimension] - size) // step + 1
    shape = data.shape[:dimension] + (count,) + data.shape[dimension + 1:] + (size,)
    stride = data.strides[dimension]
    strides = (data.strides[:dimension] + (stride * step,) + data.strides[dimension + 1:]
               + (stride,))
    return xp.lib.stride_tricks.as_strided(data, shape, strides)


class UnfoldBackward0(Node):
    """Gradient of ``unfold``: each window's gradient added back where the window reads (entries
    in several windows get every contribution)."""
    rule = "self: unfold_backward_symint(grad, self_sym_sizes, dimension, size, step)"

    __slots__ = ("axis", "dimension", "in_shape", "size", "step")
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself
    saved_attrs: ClassVar[dict] = {"dimension": "dimension_shown", "self_sym_sizes": "in_shape",
                                   "size": "size", "step": "step"}
    dimension_shown = sh.torch_int_view("dimension")

    def backward(self, g):
        numel = int(np.prod(self.in_shape))
        xp = get_array_module(g._data if isinstance(g, Tensor) else g)
        where = xp.arange(numel, dtype=np.int64).reshape(self.in_shape)
        where = _windows(where, self.axis, self.size, self.step).reshape(-1)
        flat = ix.scatter_into_zeros((numel,), (where,), dual.reshape(g, (-1,)))
        return (dual.reshape(flat, self.in_shape),)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """All windows of ``size`` elements, ``step`` apart, along ``dimension`` (a new last dim):
    a view, as PyTorch's (a write through it reaches ``input``)."""
    data = input._data
    d = _wrap_dim(dimension, max(data.ndim, 1))
    length = data.shape[d] if data.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    windows = _windows(data, d, size, step)
    view = strided_view(windows, data)
    return record(UnfoldBackward0, (input,), windows.copy() if view is None else view,
                  attrs={"axis": d, "dimension": dimension, "in_shape": data.shape,
                         "size": size, "step": step})


@accepts_out("take")
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened ``input`` at ``index`` (negative indices count from the end)."""
    return ix.take(input, index)


def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element repeated ``repeats`` times (an int or one count per element along ``dim``);
    with only a tensor of counts, the indices repeated by their counts."""
    if repeats is None:
        counts = input._data
        return wrap(np.repeat(np.arange(counts.shape[0]), counts).astype(np.int64))
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else dim % max(x.dim(), 1)
    if not isinstance(repeats, Tensor) and x.dim():
        # As PyTorch: a number of repeats is an unsqueeze, an expand and a contiguous copy
        # folded back (so the graph shows those nodes, not an index_select).
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        wide = x.unsqueeze(d + 1)
        shape = list(wide.shape)
        shape[d + 1] = repeats
        out = wide.expand(*shape).clone()
        return out.view(*shape[:d], shape[d] * repeats, *shape[d + 2:])
    counts = repeats._data if isinstance(repeats, Tensor) else repeats
    idx = np.repeat(np.arange(x.shape[d]), counts)
    return ix.index_select(x, d, wrap(idx.astype(np.int64)))


# -- the ``*_copy`` forms of views: the view's node, as PyTorch names it (``ViewBackward0_copy``) --
def _copy_of(view, name: str):
    def fn(input, *args, **kwargs):
        return sh.copied_view(input, view(input, *args, **kwargs))

    fn.__name__ = f"{name}_copy"
    fn.__doc__ = f"``{name}``, as a copy instead of a view."
    return fn


view_copy = _copy_of(lambda input, *shape: input.view(*shape), "view")
unsqueeze_copy = _copy_of(sh.unsqueeze, "unsqueeze")
squeeze_copy = _copy_of(sh.squeeze, "squeeze")
t_copy = _copy_of(sh.t, "t")
transpose_copy = _copy_of(sh.transpose, "transpose")
permute_copy = _copy_of(sh.permute, "permute")
expand_copy = _copy_of(lambda input, size, *, implicit=False: input.expand(*size), "expand")
unbind_copy = _copy_of(sh.unbind, "unbind")
unfold_copy = _copy_of(unfold, "unfold")
split_with_sizes_copy = _copy_of(split_with_sizes, "split_with_sizes")
alias_copy = _copy_of(ix.alias, "alias")


class NarrowCopyBackward0(sh.Sliced):
    """Gradient of ``narrow_copy``: ``g`` written back into zeros at the narrowed range."""
    rule = "self: grad written into zeros at [start, start + length) along dim"

    __slots__ = ("dim", "length", "start")
    is_view = False
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "length": "length",
                                   "self_sym_sizes": "in_shape", "start": "start_shown"}


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow``, as a copy instead of a view."""
    return sh.copied_view(input, sh.narrow(input, dim, start, length), NarrowCopyBackward0,
                   {"start": start, "length": length})


def _gradient_dims(input: Tensor, spacing, dim):
    """The dims to differentiate along, each with its spacing (a number or a 1-d tensor of
    coordinates), checked as PyTorch checks them."""
    ndim = input.dim()
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [d % max(ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim)]
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if spacing is None:
        spacing = [1.0] * len(dims)
    elif not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(dims)
    elif len(spacing) != len(dims):
        if dim is None:
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or "
                               "a list of length equal to 'self.dim() = "
                               f"{ndim}', since dim argument was not given, but got a list of "
                               f"length {len(spacing)}")
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's "
                           "spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {len(spacing)} and a dim argument of "
                           f"length {len(dims)}.")
    return list(zip(dims, spacing))


def slice_along(input: Tensor, dim: int, start: int, end=None) -> Tensor:
    """``input.slice(dim, start, end)`` as PyTorch's C++ composites call it: ``dim`` as given,
    an omitted ``end`` saved as None (``t[a:]`` saves INT64_MAX instead)."""
    data = input._data
    key = (slice(None),) * _wrap_dim(dim, data.ndim) + (slice(start, end),)
    return record(sh.SliceBackward0, (input,), data[key], attrs={
        "in_shape": data.shape, "key": key, "dim": dim, "start": start, "end": end, "step": 1})


def _gradient_uniform(y: Tensor, d: int, h, edge_order: int) -> Tensor:
    """One dim of ``gradient`` with a constant step ``h``, composed as PyTorch's
    ``gradient_helper_float``."""
    center = div_scalar(slice_along(y, d, 2) - slice_along(y, d, 0, -2), h)
    if edge_order == 1:
        first = div_scalar(slice_along(y, d, 1, 2) - slice_along(y, d, 0, 1), h)
        last = div_scalar(slice_along(y, d, -1) - slice_along(y, d, -2, -1), h)
    else:
        first = div_scalar(mul_scalar(slice_along(y, d, 0, 1), -1.5)
                           + mul_scalar(slice_along(y, d, 1, 2), 2)
                           - mul_scalar(slice_along(y, d, 2, 3), 0.5), h)
        last = div_scalar(mul_scalar(slice_along(y, d, -3, -2), 0.5)
                          - mul_scalar(slice_along(y, d, -2, -1), 2)
                          + mul_scalar(slice_along(y, d, -1), 1.5), h)
    return sh.cat([first, div_scalar(center, 2), last], d)


def _gradient_coordinates(y: Tensor, d: int, h: Tensor, edge_order: int) -> Tensor:
    """One dim of ``gradient`` at the coordinates ``h``, composed as PyTorch's
    ``gradient_helper``."""
    shape = [1] * y.dim()
    shape[d] = -1
    dx = diff(h, 1, 0)
    dx1, dx2 = slice_along(dx, 0, 0, -1), slice_along(dx, 0, 1)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = (a * slice_along(y, d, 0, -2) + b * slice_along(y, d, 1, -1)
              + c * slice_along(y, d, 2))
    if edge_order == 1:
        first = (slice_along(y, d, 1, 2) - slice_along(y, d, 0, 1)) / dx[0]
        last = (slice_along(y, d, -1) - slice_along(y, d, -2, -1)) / dx[-1]
    else:
        d0, d1 = dx[0], dx[1]
        a = -(mul_scalar(d0, 2.0) + d1) / (d0 * (d0 + d1))
        b = (d0 + d1) / (d0 * d1)
        c = (-d0) / (d1 * (d0 + d1))
        first = (a * slice_along(y, d, 0, 1) + b * slice_along(y, d, 1, 2)
                 + c * slice_along(y, d, 2, 3))
        d0, d1 = dx[-2], dx[-1]
        a = d1 / (d0 * (d1 + d0))
        b = -(d1 + d0) / (d1 * d0)
        c = (mul_scalar(d1, 2) + d0) / (d1 * (d1 + d0))
        last = (a * slice_along(y, d, -3, -2) + b * slice_along(y, d, -2, -1)
                + c * slice_along(y, d, -1))
    return sh.cat([first, center, last], d)


def gradient(input: Tensor, *, spacing=None, dim=None, edge_order: int = 1) -> tuple:
    """The derivative estimated by central differences inside and one-sided differences of
    ``edge_order`` (1 or 2) at the ends, along each of ``dim`` (all by default). ``spacing`` is
    the step (a number, one per dim, or 1-d tensors of coordinates)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    pairs = _gradient_dims(input, spacing, dim)
    for d, _ in pairs:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return tuple(_gradient_coordinates(input, d, h, edge_order) if isinstance(h, Tensor)
                 else _gradient_uniform(input, d, h, edge_order) for d, h in pairs)


TENSOR_METHODS = {
    "broadcast_to": broadcast_to, "diff": diff, "dsplit": dsplit, "fliplr": fliplr,
    "flipud": flipud, "hsplit": hsplit, "narrow_copy": narrow_copy, "ravel": ravel,
    "repeat_interleave": repeat_interleave, "rot90": rot90,
    "split_with_sizes": split_with_sizes, "take": take, "tensor_split": tensor_split,
    "unfold": unfold, "vsplit": vsplit,
}
