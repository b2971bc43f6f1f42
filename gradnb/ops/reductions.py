"""Reductions: sum, mean (and, from the same mould, max/min/prod/var/std/norm/logsumexp).

``dim`` may be an int, a tuple or None; ``keepdim`` as in PyTorch. Gradients are broadcast back
over the reduced dimensions.
"""

from __future__ import annotations

from .. import _dtype
from ..autograd.graph import Node, record
from . import dual
from ._common import Tensor, emit, events, grad_state, wrap


def normalize_dims(dim, ndim: int):
    """``dim`` as a sorted tuple of non-negative axes (None means all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
        out.append(d % n)
    if len(set(out)) != len(out):
        raise RuntimeError("dim appears multiple times in the list of dims")
    return tuple(sorted(out)) if ndim else ()


def expand_reduced(g, in_shape, axes, keepdim):
    """Broadcast a reduced gradient back to ``in_shape``."""
    if not keepdim and axes:
        shape = list(in_shape)
        for a in axes:
            shape[a] = 1
        g = dual.reshape(g, shape)
    return dual.expand(g, in_shape)


def _record(cls, input, out, **attrs) -> Tensor:
    if not (grad_state.enabled and input._requires_grad):
        return wrap(out)
    node = record(cls, (input,))
    for k, v in attrs.items():
        setattr(node, k, v)
    t = wrap(out, node)
    if events.observers:
        emit(node, t)
    return t


def _sum_dtype(data, dtype):
    if dtype is not None:
        return _dtype.as_dtype(dtype).np
    if data.dtype.kind in "bui":
        return _dtype.int64.np  # PyTorch sums integers and bools as int64
    return None


class SumBackward0(Node):
    """Gradient of a full sum: the scalar gradient broadcast to the input's shape."""

    __slots__ = ("in_shape",)

    def backward(self, g):
        return (dual.expand(g, self.in_shape),)


class SumBackward1(Node):
    """Gradient of a sum over ``dim``."""

    __slots__ = ("in_shape", "axes", "keepdim")

    def backward(self, g):
        return (expand_reduced(g, self.in_shape, self.axes, self.keepdim),)


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over ``dim``."""
    data = input._data
    out_dtype = _sum_dtype(data, dtype)
    if dim is None:
        out = data.sum(dtype=out_dtype)
        return _record(SumBackward0, input, out, in_shape=data.shape)
    axes = normalize_dims(dim, data.ndim)
    out = data.sum(axis=axes, keepdims=keepdim, dtype=out_dtype)
    return _record(SumBackward1, input, out, in_shape=data.shape, axes=axes, keepdim=keepdim)


class MeanBackward0(Node):
    __slots__ = ("in_shape", "count")

    def backward(self, g):
        return (dual.expand(g / self.count, self.in_shape),)


class MeanBackward1(Node):
    __slots__ = ("in_shape", "axes", "keepdim", "count")

    def backward(self, g):
        return (expand_reduced(g / self.count, self.in_shape, self.axes, self.keepdim),)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Arithmetic mean (floating-point tensors only, as in PyTorch)."""
    data = input._data
    if dtype is not None:
        data = data.astype(_dtype.as_dtype(dtype).np)
    elif data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {input.dtype.name.capitalize()}"
        )
    if dim is None:
        out = data.mean()
        return _record(MeanBackward0, input, out.astype(data.dtype), in_shape=data.shape,
                       count=max(data.size, 1) if data.size else 0)
    axes = normalize_dims(dim, data.ndim)
    out = data.mean(axis=axes, keepdims=keepdim)
    count = 1
    for a in axes:
        count *= data.shape[a]
    return _record(MeanBackward1, input, out.astype(data.dtype, copy=False), in_shape=data.shape,
                   axes=axes, keepdim=keepdim, count=count)


TENSOR_METHODS = dict(sum=sum, mean=mean)
