"""Shape ops: reshape/view, permute/transpose, expand, squeeze/unsqueeze, flatten/unflatten,
cat/stack, split/chunk/unbind, narrow, repeat/tile, flip, roll, movedim.

Ops that return NumPy views return tensors that share the input's version counter, so an in-place
change through either is seen by autograd's checks on both. ``split``, ``chunk`` and ``unbind``
record one node with several outputs, as PyTorch does. Derivative rules are built from these same
ops (through ``_on`` for raw arrays), so they are differentiable again under ``create_graph``.
"""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np

from .._core.backend import get_array_module
from .._core.dtype import dtype as _dtype_class
from .._core.dtype import tensor_type_string
from .._core.graph import Node
from .._core.record import record, wrap
from .._core.tensor import Size, _wrap_dim
from .._core.views import shares_memory
from . import dual
from ._args import scalar_type_name
from ._common import Tensor, check_same_device, result_type
from ._out import accepts_out
from .creation import clone, zeros

__all__ = [
    "cat",
    "chunk",
    "concat",
    "concatenate",
    "flatten",
    "flip",
    "moveaxis",
    "movedim",
    "narrow",
    "permute",
    "reshape",
    "roll",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "swapdims",
    "t",
    "tile",
    "transpose",
    "unbind",
    "unflatten",
    "unsqueeze",
]

_ndarray = np.ndarray


def infer_shape(shape, numel: int):
    """Resolve one ``-1`` in ``shape`` and check the element count (PyTorch's messages)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and is "
                               "ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


_UINT64 = (1 << 64) - 1


def shown_as_torch(value):
    """An int (or a tuple of ints) as PyTorch's ``grad_fn._saved_<name>`` shows a saved int64:
    a negative one as its unsigned 64-bit pattern (``dim=-1`` shows 18446744073709551615)."""
    if value is None:
        return None
    if isinstance(value, int):
        return value & _UINT64
    return tuple(v & _UINT64 for v in value)


def torch_int_view(attr: str) -> property:
    """A read-only property showing the node's ``attr`` as PyTorch shows it (``shown_as_torch``):
    what a ``saved_attrs`` entry points at, so the forward keeps the value as the caller gave it
    and pays nothing for the display."""
    return property(lambda node: shown_as_torch(getattr(node, attr, None)))


class _Reshaped(Node):
    """A view whose gradient is ``g`` reshaped back to the input's shape ``in_shape``."""
    rule = "self: grad.reshape(self's shape)"

    __slots__ = ("in_shape",)
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (dual.reshape(g, self.in_shape),)


class ViewBackward0(_Reshaped):
    """Gradient of a view that changed the shape: reshape ``g`` back."""
    rule = "self: grad.reshape_symint(self_sym_sizes)"

    __slots__ = ()
    saved_attrs: ClassVar[dict] = {"self_sym_sizes": "in_shape"}


class UnsafeViewBackward0(ViewBackward0):
    """Gradient of a ``reshape`` that had to copy."""
    rule = "self: grad.reshape_symint(self_sym_sizes)"

    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    """Gradient of a ``reshape`` of a non-contiguous tensor that could still be a view."""
    rule = "self: grad.reshape_symint(self_sym_sizes)"

    __slots__ = ()


def reshape(input: Tensor, *shape) -> Tensor:
    """Same data, new shape (a view when the layout allows, else a copy).

    The node is named as PyTorch names it: ``ViewBackward0`` for a contiguous input,
    ``ReshapeAliasBackward0`` for a view of a non-contiguous one, ``UnsafeViewBackward0`` for a
    copy.
    """
    data = input._data
    shape = infer_shape(shape, data.size)
    out = data.reshape(shape)
    if data.size == 0 or data.flags.c_contiguous:
        cls = ViewBackward0
    elif shares_memory(out, data):
        cls = ReshapeAliasBackward0
    else:  # as PyTorch: ``_unsafe_view(self.clone(contiguous), shape)``, two nodes
        input = clone(input)
        out = input._data.reshape(shape)
        cls = UnsafeViewBackward0
    return record(cls, (input,), out, attrs={"in_shape": data.shape})


def unsafe_view(input: Tensor, shape) -> Tensor:
    """``input`` reshaped, recorded as PyTorch's ``_unsafe_view`` (``UnsafeViewBackward0``):
    what its composite ops (``kron``, ``matmul``) record where they reshape a fresh result."""
    data = input._data
    return record(UnsafeViewBackward0, (input,), data.reshape(infer_shape(shape, data.size)),
                  attrs={"in_shape": data.shape})


def view(input: Tensor, *shape, dtype=None) -> Tensor:
    """``reshape`` that refuses to copy, with PyTorch's error when it would have to;
    ``view(dtype)`` reads the same bytes as another dtype (``_view_as_dtype``)."""
    if dtype is None and len(shape) == 1 and isinstance(shape[0], _dtype_class):
        (dtype,) = shape
    elif dtype is not None and shape:
        raise TypeError("view() received an invalid combination of arguments: a shape and a "
                        "dtype")
    if dtype is not None:
        return _view_as_dtype(input, dtype)
    data = input._data
    shape = infer_shape(shape, data.size)
    out = data.reshape(shape)
    if data.size and not shares_memory(out, data):  # reshape had to copy: a view is impossible
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return record(ViewBackward0, (input,), out, attrs={"in_shape": data.shape})


def _view_as_dtype(input: Tensor, dtype) -> Tensor:
    """The same memory read as ``dtype``. Elements of another size scale the last dimension,
    which must then be contiguous (PyTorch's checks and words). As in PyTorch the result is no
    autograd view: it records nothing and does not require grad, but it shares the memory and
    version counter, so a write through either is seen by both."""
    if not isinstance(dtype, _dtype_class):
        raise TypeError(f"view(): argument 'dtype' must be gradnb.dtype, not "
                        f"{type(dtype).__name__}")
    data = input._data
    new = dtype.np
    old_size, new_size = data.dtype.itemsize, new.itemsize
    if old_size != new_size:
        names = (f"{scalar_type_name(data.dtype)} as {scalar_type_name(new)} (different element "
                 "sizes)")
        if data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
        stride = input.stride(-1)
        if stride != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {stride}")
        if new_size > old_size:
            ratio = new_size // old_size
            if data.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names}, "
                                   f"but got {data.shape[-1]}")
            offset = input.storage_offset()
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view "
                                   f"{names}, but got {offset}")
            for dim, stride in enumerate(input.stride()[:-1]):
                if stride % ratio:
                    raise RuntimeError(f"self.stride({dim}) must be divisible by {ratio} to view "
                                       f"{names}, but got {stride}")
    out = data.view(new) if data.ndim else data.reshape(1).view(new).reshape(())
    t = Tensor._make(out, False, None, 0, input._version_counter)
    # No autograd view (``_base`` stays None, as PyTorch's), but the same storage: its offset
    # is counted from the storage's start, as ``storage_offset`` reads it.
    t._storage_of = input if input._base is None and input._storage_of is None else (
        input._base if input._base is not None else input._storage_of)
    return t


class PermuteBackward0(Node):
    """Gradient of ``permute``: the inverse permutation of ``g``."""
    rule = "self: permute_backwards(grad, dims)"

    __slots__ = ("dims",)
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself
    saved_attrs: ClassVar[dict] = {"dims": "dims_shown"}
    dims_shown = torch_int_view("dims")

    def backward(self, g):
        n = len(self.dims)
        inverse = [0] * n
        for i, d in enumerate(self.dims):
            inverse[d % n] = i
        return (dual.permute(g, tuple(inverse)),)


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dimensions (a view)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    ndim = input._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    axes = tuple(_wrap_dim(d, ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return record(PermuteBackward0, (input,), input._data.transpose(axes),
                  attrs={"dims": tuple(dims)})


class TransposeBackward0(Node):
    """Gradient of ``transpose``: swap the same two dims of ``g``."""
    rule = "self: grad.transpose(dim0, dim1)"

    # dims as the caller gave them (PyTorch saves them unwrapped); 1-d and 0-d inputs swap
    # nothing, so their gradient passes through
    __slots__ = ("dim0", "dim1")
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself
    saved_attrs: ClassVar[dict] = {"dim0": "dim0_shown", "dim1": "dim1_shown"}
    dim0_shown = torch_int_view("dim0")
    dim1_shown = torch_int_view("dim1")

    def backward(self, g):
        if len(g.shape) < 2:
            return (g,)
        if isinstance(g, Tensor):
            return (g.transpose(self.dim0, self.dim1),)
        return (g.swapaxes(self.dim0, self.dim1),)


class TransposeBackward1(TransposeBackward0):
    """Gradient of ``transpose_``, the in-place form (PyTorch's composites call it)."""
    rule = "self: grad.transpose(dim0, dim1)"

    __slots__ = ()


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    ndim = input._data.ndim
    d0, d1 = _wrap_dim(dim0, ndim), _wrap_dim(dim1, ndim)
    out = input._data.view() if ndim < 2 else input._data.swapaxes(d0, d1)
    return record(TransposeBackward0, (input,), out, attrs={"dim0": dim0, "dim1": dim1})


class TBackward0(Node):
    """Gradient of ``t``: transpose ``g`` back."""
    rule = "self: grad.T"

    __slots__ = ()
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        if type(g) is _ndarray:  # (first order: the array's own transpose, no dispatch)
            return (g.T if g.ndim == 2 else g,)
        return (dual.mT(g) if len(g.shape) == 2 else g,)


def t(input: Tensor) -> Tensor:
    """Transpose a matrix (0-d and 1-d tensors are returned as they are)."""
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    out = input._data.T if ndim == 2 else input._data.view()
    return record(TBackward0, (input,), out)


def T(input: Tensor) -> Tensor:
    """``.T``: reverse all dimensions (``PermuteBackward0``, as in PyTorch)."""
    ndim = input._data.ndim
    return permute(input, *reversed(range(ndim)))


class ExpandBackward0(Node):
    """Gradient of ``expand``: sum ``g`` over the broadcast dims."""
    rule = "self: at::sum_to(grad, self_sym_sizes)"

    __slots__ = ("in_shape",)
    saved_attrs: ClassVar[dict] = {"self_sym_sizes": "in_shape"}
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (dual.sum_to(g, self.in_shape),)


def expand(input: Tensor, *sizes) -> Tensor:
    """Broadcast to a larger shape without copying; ``-1`` keeps a dimension."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    data = input._data
    if len(sizes) < data.ndim:
        raise RuntimeError(
            f"expand({tensor_type_string(data.dtype)}{{{list(data.shape)}}}, "
            f"size={list(sizes)}): the number of "
            "sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({data.ndim})"
        )
    lead = len(sizes) - data.ndim
    target = []
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            s = data.shape[i - lead]
        elif i >= lead and data.shape[i - lead] not in (1, s):
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size "
                f"({data.shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: "
                f"{list(sizes)}.  Tensor sizes: {list(data.shape)}"
            )
        target.append(s)
    xp = dual.xp_of(data)
    target = tuple(target)
    if data.size and math.prod(target) == data.size:
        # Nothing repeats (only leading 1s are added): a plain view, writable as PyTorch's is,
        # where NumPy's broadcast_to would be read-only.
        out = data[(None,) * lead]
    else:
        out = xp.broadcast_to(data, target)
    return record(ExpandBackward0, (input,), out, attrs={"in_shape": data.shape})


# -- the ``*_copy`` forms of views: the view's node, as PyTorch names it (``ViewBackward0_copy``) --
_COPY_CLASSES: dict = {}


def _copy_class(cls):
    """The node class of the copying form of the view recorded by ``cls``: same saves and rule,
    named ``<name>_copy`` as PyTorch names it, and not a view."""
    copy = _COPY_CLASSES.get(cls)
    if copy is None:
        name = (cls.torch_name or cls.__name__) + "_copy"
        copy = type(name, (cls,), {"__slots__": (), "__doc__": f"Gradient of ``{name}``.",
                                   "is_view": False, "torch_name": name, "rule": cls.rule})
        _COPY_CLASSES[cls] = copy
    return copy


def _node_attrs(node) -> dict:
    """The values a view node keeps (its slots and instance attributes), to give its copy."""
    attrs = {}
    for klass in type(node).__mro__:
        if klass is Node:
            break
        for name in klass.__dict__.get("__slots__", ()):
            if name != "num_outputs" and hasattr(node, name):
                attrs[name] = getattr(node, name)
    attrs.update((k, v) for k, v in vars(node).items() if not k.startswith("_"))
    return attrs


def copied_view(input: Tensor, out, cls=None, attrs=None):
    """What the view op returned for ``input`` (a tensor or a tuple), as new memory, recorded by
    the view node's ``_copy`` twin (or ``cls``) with the view node's values and ``attrs``."""
    outs = out if isinstance(out, tuple) else (out,)
    data = tuple(o._data.copy() for o in outs)
    node = outs[0]._grad_fn if outs else None
    if node is None:  # nothing recorded: plain copies
        return tuple(wrap(d) for d in data) if isinstance(out, tuple) else wrap(data[0])
    kept = _node_attrs(node)
    if attrs:
        kept.update(attrs)
    return record(cls or _copy_class(type(node)), (input,),
                  data if isinstance(out, tuple) else data[0], attrs=kept)


# -- helpers for rules that run on arrays and on tensors -------------------------------------------
def _on(op, x, *args, **kwargs):
    """Apply the tensor op ``op`` to ``x``: directly to a tensor (recording, under create_graph),
    or to a raw array through a throwaway wrapper (backward runs with grad mode off)."""
    if isinstance(x, Tensor):
        return op(x, *args, **kwargs)
    return op(wrap(x), *args, **kwargs)._data


def _zeros_for(like, shape):
    """Zeros of ``shape`` in the dtype and on the device of the gradient ``like``."""
    data = dual.data(like)
    zeros = get_array_module(data).zeros(shape, dtype=data.dtype)
    return wrap(zeros) if isinstance(like, Tensor) else zeros


def _concat_grads(pieces, axis: int):
    if any(isinstance(p, Tensor) for p in pieces):
        return cat(pieces, axis)
    return get_array_module(pieces[0]).concatenate(pieces, axis=axis)


def _slice(g, axis: int, start: int, length: int):
    if isinstance(g, Tensor):
        return narrow(g, axis, start, length)
    return g[(slice(None),) * axis + (slice(start, start + length),)]


def _dims_arg(dims) -> tuple:
    """Dims given as varargs (``flip(0, 1)``) or as one sequence (``flip((0, 1))``)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list, Size)):
        return tuple(dims[0])
    return tuple(dims)


def _unique_axes(dims, ndim: int) -> tuple:
    axes = []
    for d in dims:
        a = _wrap_dim(d, ndim)
        if a in axes:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        axes.append(a)
    return tuple(axes)


# -- squeeze, unsqueeze, flatten, unflatten --------------------------------------------------------
class SqueezeBackward0(_Reshaped):
    """Gradient of ``squeeze()``: reshape back."""
    rule = "self: unsqueeze_to(grad, self_sym_sizes)"

    __slots__ = ()
    saved_attrs: ClassVar[dict] = {"self_sym_sizes": "in_shape"}


class SqueezeBackward1(_Reshaped):
    """Gradient of ``squeeze(dim)``."""
    rule = "self: unsqueeze_to(grad, dim, self_sym_sizes)"

    __slots__ = ("dim",)
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "self_sym_sizes": "in_shape"}
    dim_shown = torch_int_view("dim")


class SqueezeBackward2(SqueezeBackward1):
    """Gradient of ``squeeze(dims)``."""
    rule = "self: unsqueeze_to(grad, dim, self_sym_sizes)"

    __slots__ = ()


class UnsqueezeBackward0(_Reshaped):
    """Gradient of ``unsqueeze``: reshape back."""
    rule = "self: grad.squeeze(dim)"

    __slots__ = ("dim",)
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown"}
    dim_shown = torch_int_view("dim")


class SqueezeBackward4(SqueezeBackward1):
    """Gradient of ``squeeze_(dim)``, the in-place form (PyTorch's composites call it)."""
    rule = "self: unsqueeze_to(grad, dim, self_sym_sizes)"

    __slots__ = ()


class UnsqueezeBackward1(UnsqueezeBackward0):
    """Gradient of ``unsqueeze_``, the in-place form."""
    rule = "self: grad.squeeze(dim)"

    __slots__ = ()


class SqueezeBackward3(SqueezeBackward0):
    """Gradient of ``squeeze_()``, the in-place form."""
    rule = "self: unsqueeze_to(grad, self_sym_sizes)"

    __slots__ = ()


class SqueezeBackward5(SqueezeBackward2):
    """Gradient of ``squeeze_(dims)``, the in-place form."""
    rule = "self: unsqueeze_to(grad, dim, self_sym_sizes)"

    __slots__ = ()


class TBackward1(TBackward0):
    """Gradient of ``t_``, the in-place form."""
    rule = "self: grad.t()"

    __slots__ = ()


# The node PyTorch records for a view op's in-place form (``x.squeeze_(1)``): the same rule and
# saves under another name, so each is a subclass that adds nothing.
INPLACE_VIEW_NODES = {
    SqueezeBackward0: SqueezeBackward3, SqueezeBackward1: SqueezeBackward4,
    SqueezeBackward2: SqueezeBackward5, UnsqueezeBackward0: UnsqueezeBackward1,
    TransposeBackward0: TransposeBackward1, TBackward0: TBackward1,
}


def inplace_view_step(cls, input: Tensor, data, **attrs) -> Tensor:
    """An in-place view step of a composite (``squeeze_``, ``unsqueeze_``, ``transpose_`` on an
    intermediate it owns) recorded as the node PyTorch records for it (``SqueezeBackward4``):
    the composite goes on with the returned tensor, which stands for its intermediate."""
    return record(cls, (input,), data, attrs={"in_shape": input._data.shape, **attrs})


def squeeze(input: Tensor, dim=None) -> Tensor:
    """Drop dimensions of size 1: all of them, or those in ``dim`` (an int or a tuple); a view.

    >>> import gradnb
    >>> gradnb.zeros(2, 1, 3).squeeze().shape
    gradnb.Size([2, 3])
    """
    data = input._data
    if dim is None:
        shape = tuple(n for n in data.shape if n != 1)
        return record(SqueezeBackward0, (input,), data.reshape(shape),
                      attrs={"in_shape": data.shape})
    if isinstance(dim, int):
        cls, axes = SqueezeBackward1, _unique_axes((dim,), data.ndim)
    else:
        cls, axes, dim = SqueezeBackward2, _unique_axes(dim, data.ndim), tuple(dim)
    shape = tuple(n for i, n in enumerate(data.shape) if not (i in axes and n == 1))
    return record(cls, (input,), data.reshape(shape), attrs={"in_shape": data.shape, "dim": dim})


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim`` (a view)."""
    data = input._data
    axis = _wrap_dim(dim, data.ndim + 1)
    shape = data.shape[:axis] + (1,) + data.shape[axis:]
    return record(UnsqueezeBackward0, (input,), data.reshape(shape),
                  attrs={"in_shape": data.shape, "dim": dim})


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one (a view when the layout allows)."""
    data = input._data
    start, end = _wrap_dim(start_dim, data.ndim), _wrap_dim(end_dim, data.ndim)
    if data.ndim == 0:
        return reshape(input, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = math.prod(data.shape[start:end + 1])
    return reshape(input, data.shape[:start] + (merged,) + data.shape[end + 1:])


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one of them may be -1); a view."""
    data = input._data
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    axis = _wrap_dim(dim, data.ndim)
    size = data.shape[axis]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes and known and size % known == 0:
        sizes = tuple(size // known if s == -1 else s for s in sizes)
    if math.prod(sizes) != size:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {axis} ({size}) in the input tensor")
    return view(input, data.shape[:axis] + sizes + data.shape[axis + 1:])


# -- cat and stack ---------------------------------------------------------------------------------
def _promoted_dtype(tensors):
    """PyTorch's result dtype over several dimensioned tensors."""
    dtype = tensors[0]._data.dtype
    for t in tensors[1:]:
        # Both as 1-element tensors: a 0-d input counts fully here (stack of float32 and
        # float64 scalars is float64), not as the lower-priority scalar of binary ops.
        xp = get_array_module(t._data)
        dtype = result_type(wrap(xp.empty((1,), dtype=dtype)),
                            wrap(xp.empty((1,), dtype=t._data.dtype)))
    return dtype


class CatBackward0(Node):
    """Gradient of ``cat``: each input gets its own slice of ``g``."""
    rule = "tensors: cat_tensors_backward(grad, tensors_args_sizes, tensors_args_scalar_types, dim)"

    __slots__ = ("axis", "dim", "spans")
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown"}
    dim_shown = torch_int_view("dim")

    def backward(self, g):
        grads = []
        for i, span in enumerate(self.spans):
            if not self.needs(i):
                grads.append(None)
            elif span is None:  # a skipped legacy empty input
                grads.append(_zeros_for(g, (0,)))
            else:
                grads.append(_slice(g, self.axis, *span))
        return tuple(grads)


def _is_legacy_empty(t: Tensor) -> bool:
    """PyTorch still lets 1-d empty tensors join a cat of any shape, and skips them."""
    return t._data.shape == (0,)


@accepts_out("cat")
def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim``.

    >>> import gradnb
    >>> gradnb.cat([gradnb.zeros(1, 2), gradnb.ones(2, 2)]).shape
    gradnb.Size([3, 2])
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("gradnb.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    joined = [t for t in tensors if not _is_legacy_empty(t)]
    # With only legacy empties there is no shape to check ``dim`` against: the result is empty.
    axis = _wrap_dim(dim, joined[0]._data.ndim) if joined else 0
    joined = joined or tensors[:1]
    ref = joined[0]._data
    for i, t in enumerate(tensors):
        data = t._data
        if _is_legacy_empty(t) and data is not ref:
            continue
        check_same_device(ref, data)
        if data.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                               f"{data.ndim}")
        for a in range(ref.ndim):
            if a != axis and data.shape[a] != ref.shape[a]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected size "
                    f"{ref.shape[a]} but got size {data.shape[a]} for tensor number {i} in the "
                    "list.")
    dtype = _promoted_dtype(tensors)
    xp = get_array_module(ref)
    out = xp.concatenate([t._data.astype(dtype, copy=False) for t in joined], axis=axis)
    spans, start = [], 0
    for t in tensors:
        if _is_legacy_empty(t) and ref.shape != (0,):
            spans.append(None)
            continue
        spans.append((start, t._data.shape[axis]))
        start += t._data.shape[axis]
    return record(CatBackward0, tuple(tensors), out,
                  attrs={"axis": axis, "dim": dim, "spans": tuple(spans)})


concat = cat
concatenate = cat


class StackBackward0(Node):
    """Gradient of ``stack``: input ``i`` gets slice ``i`` of ``g`` along the new dim."""
    rule = "tensors: stack_tensors_backward(grad, dim, tensors_args_scalar_types)"

    __slots__ = ("axis", "dim")
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown"}
    dim_shown = torch_int_view("dim")

    def backward(self, g):
        return tuple(_on(_select, g, self.axis, i) if self.needs(i) else None
                     for i in range(len(self.next_functions)))


def _select(t: Tensor, axis: int, index: int) -> Tensor:
    return squeeze(narrow(t, axis, index, 1), axis)


def stack(tensors, dim: int = 0) -> Tensor:
    """Join equally shaped tensors along a new dimension ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]._data
    axis = _wrap_dim(dim, ref.ndim + 1)
    for i, t in enumerate(tensors[1:], start=1):
        check_same_device(ref, t._data)
        if t._data.shape != ref.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ref.shape)} at entry 0 and {list(t._data.shape)} at entry "
                               f"{i}")
    dtype = _promoted_dtype(tensors)
    out = get_array_module(ref).stack([t._data.astype(dtype, copy=False) for t in tensors],
                                      axis=axis)
    return record(StackBackward0, tuple(tensors), out, attrs={"axis": axis, "dim": dim})


# -- split, chunk, unbind: one node, several outputs ----------------------------------------------
class _Split(Node):
    """Gradient of ``split``/``chunk``: the pieces' gradients joined back (zeros for pieces that
    got none)."""
    rule = "self: the pieces' grads concatenated (zeros for unused pieces)"

    __slots__ = ("axis", "dim", "in_shape", "num_outputs", "sizes", "split_size")
    is_view = True
    dim_shown = torch_int_view("dim")
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, *grads):
        like = next(g for g in grads if g is not None)
        pieces = []
        for g, size in zip(grads, self.sizes, strict=True):
            if g is None:
                shape = list(self.in_shape)
                shape[self.axis] = size
                g = _zeros_for(like, shape)
            pieces.append(g)
        return (_concat_grads(pieces, self.axis),)


class SplitBackward0(_Split):
    """Gradient of ``split`` by one size (and of ``chunk``)."""
    rule = "self: split_backward(grads, split_size, dim, self_sym_sizes, self.options())"

    __slots__ = ()
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "self_sym_sizes": "in_shape",
                                   "split_size": "split_size"}


class SplitWithSizesBackward0(_Split):
    """Gradient of ``split`` with a list of sizes."""
    rule = "self: split_with_sizes_backward(grads, split_sizes, dim, self_sym_sizes, self.options())"

    __slots__ = ()
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "self_sym_sizes": "in_shape",
                                   "split_sizes": "sizes"}


class UnsafeSplitBackward0(SplitBackward0):
    """Gradient of ``unsafe_split`` (and ``unsafe_chunk``)."""
    rule = "self: split_backward(grads, split_size, dim, self_sym_sizes, self.options())"

    __slots__ = ()


class UnsafeSplitWithSizesBackward0(SplitWithSizesBackward0):
    """Gradient of ``unsafe_split_with_sizes``."""
    rule = "self: split_with_sizes_backward(grads, split_sizes, dim, self_sym_sizes, self.options())"

    __slots__ = ()


def _split_sizes(size: int, split_size: int) -> list:
    if split_size == 0:
        if size != 0:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        return [0]
    count = max(math.ceil(size / split_size), 1)
    return [split_size] * (count - 1) + [size - split_size * (count - 1)]


def split(tensor: Tensor, split_size_or_sections, dim: int = 0, *, _unsafe: bool = False
          ) -> tuple:
    """Split into pieces of ``split_size`` along ``dim`` (the last may be smaller), or into pieces
    of the listed sizes; the pieces are views. (``_unsafe``: recorded as ``unsafe_split``.)"""
    data = tensor._data
    if data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, int) and split_size_or_sections < 0:
        raise RuntimeError("split expects split_size be non-negative, but got "
                           f"split_size={split_size_or_sections}")
    axis = _wrap_dim(dim, data.ndim)
    size = data.shape[axis]
    if isinstance(split_size_or_sections, int):
        cls = UnsafeSplitBackward0 if _unsafe else SplitBackward0
        sizes = _split_sizes(size, split_size_or_sections)
    else:
        cls = UnsafeSplitWithSizesBackward0 if _unsafe else SplitWithSizesBackward0
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
    outs, start = [], 0
    for s in sizes:
        outs.append(data[(slice(None),) * axis + (slice(start, start + s),)])
        start += s
    return record(cls, (tensor,), tuple(outs),
                  attrs={"axis": axis, "dim": dim, "in_shape": data.shape, "sizes": tuple(sizes),
                         "split_size": split_size_or_sections})


def chunk(input: Tensor, chunks: int, dim: int = 0, *, _unsafe: bool = False) -> tuple:
    """Split into ``chunks`` nearly equal views along ``dim`` (fewer when it does not divide)."""
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = data.shape[_wrap_dim(dim, data.ndim)]
    if size == 0:  # PyTorch still returns ``chunks`` (empty) pieces here
        return split(input, [0] * chunks, dim, _unsafe=_unsafe)
    return split(input, math.ceil(size / chunks), dim, _unsafe=_unsafe)


class UnbindBackward0(Node):
    """Gradient of ``unbind``: the slices' gradients stacked back (zeros where none came)."""
    rule = "self: unbind_backward(grads, dim)"

    __slots__ = ("axis", "dim", "in_shape", "num_outputs")
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown"}
    dim_shown = torch_int_view("dim")
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, *grads):
        like = next(g for g in grads if g is not None)
        shape = self.in_shape[:self.axis] + self.in_shape[self.axis + 1:]
        grads = [_zeros_for(like, shape) if g is None else g for g in grads]
        if any(isinstance(g, Tensor) for g in grads):
            return (stack(grads, self.axis),)
        return (get_array_module(like).stack(grads, axis=self.axis),)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """All slices along ``dim``, as views without that dimension."""
    data = input._data
    axis = _wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    # a slice then squeeze, not data[i]: NumPy returns a copied scalar for one element of 1-D
    outs = [data[(slice(None),) * axis + (slice(i, i + 1),)].squeeze(axis)
            for i in range(data.shape[axis])]
    return record(UnbindBackward0, (input,), tuple(outs),
                  attrs={"axis": axis, "dim": dim, "in_shape": data.shape})


# -- narrow, contiguous -------------------------------------------------------------------------------
class Sliced(Node):
    """A node whose gradient is ``g`` written back at the basic-index ``key`` among zeros of the
    input's shape ``in_shape`` (slices, ``narrow_copy``)."""
    rule = "self: zeros with grad written into the slice"

    __slots__ = ("in_shape", "key")
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself
    dim_shown = torch_int_view("dim")
    end_shown = torch_int_view("end")
    start_shown = torch_int_view("start")
    step_shown = torch_int_view("step")

    def backward(self, g):
        if isinstance(g, Tensor):  # under create_graph: recorded, so differentiable again
            return (zeros(self.in_shape, dtype=g.dtype, device=g.device).index_put(self.key, g),)
        out = get_array_module(g).zeros(self.in_shape, dtype=g.dtype)
        out[self.key] = g
        return (out,)


class SliceBackward0(Sliced):
    """Gradient of a slice (``narrow``, ``t[a:b:c]``)."""
    rule = "self: slice_backward_wrapper(grad, self_sym_sizes, dim, start, end, step)"

    # ``dim``, ``start``, ``end``, ``step`` as PyTorch saves them (``key`` is what backward reads)
    __slots__ = ("dim", "end", "start", "step")
    saved_attrs: ClassVar[dict] = {"dim": "dim_shown", "end": "end_shown",
                                   "self_sym_sizes": "in_shape", "start": "start_shown",
                                   "step": "step_shown"}


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` elements from ``start`` along ``dim`` (a view)."""
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):
        if start.ndim != 0 or start._data.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    axis = _wrap_dim(dim, data.ndim)
    size = data.shape[axis]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * axis + (slice(start, start + length),)
    return record(SliceBackward0, (input,), data[key],
                  attrs={"in_shape": data.shape, "key": key, "dim": dim, "start": start,
                         "end": start + length, "step": 1})


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """``input`` itself when its memory is already C-contiguous, else a contiguous copy."""
    if input._data.flags.c_contiguous:
        return input
    return clone(input)


# -- repeat, tile, flip, roll, movedim -----------------------------------------------------------------
class RepeatBackward0(Node):
    """Gradient of ``repeat``: the copies' gradients summed into one."""
    rule = "self: repeat_backward(grad, repeats, self_sym_sizes)"

    __slots__ = ("in_shape", "repeats")
    saved_attrs: ClassVar[dict] = {"repeats": "repeats_shown", "self_sym_sizes": "in_shape"}
    repeats_shown = torch_int_view("repeats")
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        padded = (1,) * (len(self.repeats) - len(self.in_shape)) + tuple(self.in_shape)
        interleaved = [n for pair in zip(self.repeats, padded, strict=True) for n in pair]
        copies = tuple(range(0, 2 * len(padded), 2))
        summed = dual.sum(dual.reshape(g, interleaved), axis=copies)
        return (dual.reshape(summed, self.in_shape),)


def repeat(input: Tensor, *sizes) -> Tensor:
    """Tile ``input`` ``sizes[i]`` times along each dimension (a copy; extra leading sizes add
    dimensions)."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    sizes = _dims_arg(sizes)
    data = input._data
    if len(sizes) < data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded = (1,) * (len(sizes) - data.ndim) + data.shape
    target = [r * n for r, n in zip(sizes, padded, strict=True)]
    for n in target:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {target}")
    out = get_array_module(data).tile(data.reshape(padded), sizes)
    return record(RepeatBackward0, (input,), out,
                  attrs={"in_shape": data.shape, "repeats": tuple(sizes)})


def tile(input: Tensor, dims) -> Tensor:
    """``repeat`` that accepts fewer sizes than dimensions (missing leading ones are 1)."""
    dims = tuple(dims)
    return repeat(input, (1,) * (input._data.ndim - len(dims)) + dims)


class FlipBackward0(Node):
    """Gradient of ``flip``: flip ``g`` back."""
    rule = "self: grad.flip(dims)"

    __slots__ = ("axes", "dims")
    saved_attrs: ClassVar[dict] = {"dims": "dims_shown"}
    dims_shown = torch_int_view("dims")
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (_on(flip, g, self.axes),)


def flip(input: Tensor, *dims, **kwargs) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch)."""
    if "dims" in kwargs:
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
    data = input._data
    axes = _unique_axes(_dims_arg(dims), data.ndim) if data.ndim else ()
    if not data.ndim:
        _unique_axes(_dims_arg(dims), 0)  # still validated: a 0-d tensor accepts dims 0 and -1
    out = get_array_module(data).flip(data, axes).copy() if axes else data.copy()
    return record(FlipBackward0, (input,), out, attrs={"axes": axes, "dims": _dims_arg(dims)})


class RollBackward0(Node):
    """Gradient of ``roll``: roll ``g`` back."""
    rule = "self: grad.roll_symint(fmap(reverse_list_symint(shifts), [](c10::SymInt i){return -i;}), reverse_list(dims))"

    __slots__ = ("axes", "dims", "shifts")
    inputs = ("self",)
    saves = ("dims", "shifts")
    unsigned = ("dims", "shifts")
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (_on(roll, g, tuple(-s for s in self.shifts), self.axes),)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements circularly along ``dims`` (of the flattened tensor when ``dims`` is None)."""
    data = input._data
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    xp = get_array_module(data)
    if not dims and len(shifts) == 1:
        out = xp.roll(data.reshape(-1), shifts[0]).reshape(data.shape)
    elif len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    else:
        wrapped = tuple(_wrap_dim(d, data.ndim) for d in dims)
        if data.ndim == 0:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        out = xp.roll(data, shifts, wrapped)
        return record(RollBackward0, (input,), out,
                      attrs={"shifts": shifts, "axes": wrapped, "dims": dims})
    return record(RollBackward0, (input,), out, attrs={"shifts": shifts, "axes": None, "dims": dims})


class AliasBackward0(Node):
    rule = "self: grad"
    __slots__ = ()
    is_view = True
    fit_grads = False  # the rule returns the input's shape itself

    def backward(self, g):
        return (g,)


def alias(input: Tensor) -> Tensor:
    """The same data as a new view (what ``t[...]`` returns)."""
    return record(AliasBackward0, (input,), input._data.view())


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dimensions ``source`` to positions ``destination`` (a permuting view)."""
    ndim = input._data.ndim
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(destination)} dims)")
    src = [_wrap_dim(d, ndim) for d in source]
    dst = [_wrap_dim(d, ndim) for d in destination]
    for name, given, wrapped in (("source", source, src), ("destination", destination, dst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if ndim == 0:  # PyTorch returns an alias of a 0-d tensor (there is nothing to permute)
        return alias(input)
    order = [d for d in range(ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute(input, order)


def _mT(self: Tensor) -> Tensor:
    """The last two dimensions swapped (a batch of matrices transposed)."""
    ndim = self._data.ndim
    if ndim == 1:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor.")
    if ndim == 0:
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.", UserWarning, stacklevel=2)
        return self
    return transpose(self, -2, -1)


moveaxis = movedim
swapaxes = transpose
swapdims = transpose


TENSOR_METHODS = {
    "reshape": reshape, "view": view, "permute": permute, "transpose": transpose,
    "swapaxes": transpose, "swapdims": transpose, "t": t, "expand": expand,
    "T": property(T), "mT": property(_mT),
    "expand_as": lambda self, other: expand(self, other.shape),
    "reshape_as": lambda self, other: reshape(self, other.shape),
    "view_as": lambda self, other: view(self, other.shape),
    "squeeze": squeeze, "unsqueeze": unsqueeze, "flatten": flatten, "unflatten": unflatten,
    "split": split, "chunk": chunk, "unbind": unbind, "narrow": narrow, "contiguous": contiguous,
    "repeat": repeat, "tile": tile, "flip": flip, "roll": roll, "movedim": movedim,
    "moveaxis": movedim,
}
