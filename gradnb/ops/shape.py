"""Shape ops: reshape/view, permute/transpose, expand (and squeeze, cat, stack, split...).

Ops that return NumPy views return tensors that share the input's version counter, so an in-place
change through either is seen by autograd's checks on both.
"""

from __future__ import annotations

from ..autograd.graph import Node, record
from . import dual
from ._common import Tensor, emit, events, grad_state, wrap
from .._tensor import Size, _wrap_dim


def view_of(input: Tensor, out, node) -> Tensor:
    """Wrap ``out`` (a view of ``input``'s data when NumPy made one) and share the version
    counter when it is a view."""
    t = wrap(out, node)
    if out is not input._data and getattr(out, "base", None) is not None and _shares(out, input._data):
        t._version = input._version
        t._base = input if input._base is None else input._base
    if node is not None and events.observers:
        emit(node, t)
    return t


def _shares(a, b) -> bool:
    base_a = a.base if a.base is not None else a
    base_b = b.base if b.base is not None else b
    return base_a is base_b or base_a is b or a.base is b


def _record(cls, input, out, **attrs) -> Tensor:
    node = None
    if grad_state.enabled and input._requires_grad:
        node = record(cls, (input,), meta=False)
        for k, v in attrs.items():
            setattr(node, k, v)
    return view_of(input, out, node)


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
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class ViewBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g):
        return (dual.reshape(g, self.in_shape),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


def reshape(input: Tensor, *shape) -> Tensor:
    """Same data, new shape (a view when the layout allows, else a copy)."""
    data = input._data
    shape = infer_shape(shape, data.size)
    out = data.reshape(shape)
    cls = ViewBackward0 if _shares(out, data) or data.size == 0 else UnsafeViewBackward0
    return _record(cls, input, out, in_shape=data.shape)


def view(input: Tensor, *shape) -> Tensor:
    """``reshape`` that refuses to copy, with PyTorch's error when it would have to."""
    data = input._data
    shape = infer_shape(shape, data.size)
    out = data.view()
    try:
        out.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return _record(ViewBackward0, input, out, in_shape=data.shape)


class PermuteBackward0(Node):
    __slots__ = ("inverse",)

    def backward(self, g):
        return (dual.permute(g, self.inverse),)


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
    inverse = [0] * ndim
    for i, a in enumerate(axes):
        inverse[a] = i
    return _record(PermuteBackward0, input, input._data.transpose(axes), inverse=tuple(inverse))


class TransposeBackward0(Node):
    __slots__ = ("d0", "d1")

    def backward(self, g):
        if isinstance(g, Tensor):
            return (g.transpose(self.d0, self.d1),)
        return (g.swapaxes(self.d0, self.d1),)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    ndim = input._data.ndim
    d0, d1 = _wrap_dim(dim0, ndim), _wrap_dim(dim1, ndim)
    if ndim < 2:
        return _record(TransposeBackward0, input, input._data.view(), d0=0, d1=0)
    return _record(TransposeBackward0, input, input._data.swapaxes(d0, d1), d0=d0, d1=d1)


class TBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return (dual.mT(g) if len(g.shape) == 2 else g,)


def t(input: Tensor) -> Tensor:
    """Transpose a matrix (0-d and 1-d tensors are returned as they are)."""
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    out = input._data.T if ndim == 2 else input._data.view()
    return _record(TBackward0, input, out)


def T(input: Tensor) -> Tensor:  # noqa: N802 - the property's name
    """``.T``: reverse all dimensions (``PermuteBackward0``, as in PyTorch)."""
    ndim = input._data.ndim
    return permute(input, *reversed(range(ndim)))


class ExpandBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g):
        return (dual.sum_to(g, self.in_shape),)


def expand(input: Tensor, *sizes) -> Tensor:
    """Broadcast to a larger shape without copying; ``-1`` keeps a dimension."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
        sizes = tuple(sizes[0])
    data = input._data
    if len(sizes) < data.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(data.shape)}}}, size={list(sizes)}): the number of "
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
    out = xp.broadcast_to(data, tuple(target))
    return _record(ExpandBackward0, input, out, in_shape=data.shape)


TENSOR_METHODS = dict(
    reshape=reshape, view=view, permute=permute, transpose=transpose, swapaxes=transpose, t=t,
    expand=expand, T=property(T), mT=property(lambda self: transpose(self, -2, -1)),
    expand_as=lambda self, other: expand(self, other.shape),
    reshape_as=lambda self, other: reshape(self, other.shape),
    view_as=lambda self, other: view(self, other.shape),
)
