"""Gradients through sparse COO tensors: ``to_sparse``, ``to_dense``, ``values``, ``sparse.mm``.

A ``SparseTensor`` takes part in a graph through a stand-in dense tensor (``_proxy``: a
zero-memory broadcast of zeros of the dense shape) that carries its ``grad_fn`` (or, for a leaf
made with ``requires_grad=True``, its ``.grad``). Gradients flowing to a sparse tensor are
sparse, as PyTorch's are: ``to_dense``'s and ``sparse.mm``'s are masked to the tensor's
pattern (``grad.sparse_mask(self)``); ``to_sparse``'s backward makes them dense again.

>>> import gradnb
>>> x = gradnb.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True)
>>> gradnb.sparse.mm(x.to_sparse(), gradnb.ones(2, 3)).sum().backward()
>>> x.grad
tensor([[0., 3.],
        [3., 0.]])
"""

from __future__ import annotations

import numpy as np

from ._core.graph import Node
from ._core.record import record
from ._core.tensor import Tensor

__all__ = ["follow", "mask", "proxy_of", "record_to_sparse", "sparse_mm", "to_dense", "values"]


def proxy_of(shape, np_dtype, requires_grad: bool = False) -> Tensor:
    """A dense stand-in of ``shape`` holding no memory (a broadcast zero)."""
    return Tensor._make(np.broadcast_to(np.zeros((), dtype=np_dtype), tuple(shape)),
                        requires_grad=requires_grad)


def _dense(g):
    """A gradient (sparse, tensor or array) as a dense array."""
    if getattr(g, "is_sparse", False):
        return g._dense_array()
    return g._data if isinstance(g, Tensor) else g


def mask(g, sp):
    """``g`` (dense) at ``sp``'s entries, as a sparse tensor of ``sp``'s pattern."""
    g = _dense(g)
    k = sp._idx.shape[0]
    return type(sp)(sp._idx, np.ascontiguousarray(g[tuple(sp._idx[:k])]), sp._shape,
                    is_coalesced=sp._coalesced)


class ToSparseBackward1(Node):
    """Gradient of ``to_sparse``: the incoming (sparse) gradient made dense."""
    rule = "self: to_dense(grad)"
    saves = ("self_self_sym_blocksize_opt",)
    fit_grads = False
    __slots__ = ("self_self_sym_blocksize_opt",)

    def backward(self, g):
        return (_dense(g),)


class ToSparseBackward0(ToSparseBackward1):
    """``to_sparse(sparse_dim)`` (PyTorch's other overload): the same gradient."""
    rule = "self: to_dense(grad)"
    __slots__ = ()


class ToDenseBackward0(Node):
    """Gradient of ``to_dense``: the dense gradient at the sparse tensor's entries."""
    rule = "self: grad.sparse_mask(self)"
    saves = ("self",)  # (packed: the sparse tensor's dense stand-in)
    fit_grads = False
    __slots__ = ("sp",)

    @property
    def _saved_self(self):
        """The sparse tensor itself (what is packed is its dense stand-in)."""
        return self.sp

    def backward(self, g):
        return (mask(g, self.sp),)


class ValuesBackward0(Node):
    """Gradient of ``values()``: a sparse tensor of the same pattern holding the gradient."""
    rule = "self: sparse tensor with self's indices and grad as values"
    fit_grads = False
    __slots__ = ("sp",)

    def backward(self, g):
        sp = self.sp
        return (type(sp)(sp._idx, np.array(_dense(g)), sp._shape, is_coalesced=sp._coalesced),)


class CoalesceBackward0(Node):
    """Gradient of ``coalesce``: the (coalesced) gradient as it is."""
    rule = "self: grad"
    fit_grads = False
    __slots__ = ()

    def backward(self, g):
        return (g,)


class SparseScaled(Node):
    """Gradient of a sparse tensor times a number: the gradient times that number."""
    rule = "self: grad * other"
    torch_name = "MulBackward0"
    fit_grads = False
    __slots__ = ("other",)

    def backward(self, g):
        return (g * self.other,)


def follow(node_cls, sp, out, **attrs):
    """``out`` (a new sparse tensor) made from ``sp`` by ``node_cls``, in ``sp``'s graph."""
    if sp._proxy is not None and sp._proxy._requires_grad:
        out._proxy = record(node_cls, (sp._proxy,), np.broadcast_to(
            np.zeros((), dtype=out._vals.dtype), out._shape), attrs=attrs or None)
    return out


class SparseAddmmBackward0(Node):
    """Gradient of ``sparse.mm(mat1, mat2)`` (PyTorch's ``addmm`` with ``beta=0``): for the sparse
    ``mat1``, ``grad @ mat2.T`` at its entries; for the dense ``mat2``, ``mat1.T @ grad``."""
    rule = "mat1: (alpha * grad @ mat2.T).sparse_mask(mat1); mat2: alpha * mat1.T @ grad"
    inputs = ("self", "mat1", "mat2")
    saves = ("mat1", "mat2", "mat2_sym_sizes", "mat2_sym_strides", "alpha", "beta")
    fit_grads = False
    __slots__ = ("alpha", "beta", "sp")

    def backward(self, g):
        g = _dense(g)
        _, mat2 = self.saved(g)
        sp = self.sp
        d = mat2._data if isinstance(mat2, Tensor) else mat2
        rows, cols = sp._idx[0], sp._idx[1]
        g1 = g2 = None
        if self._next[1] is not None:
            g1 = type(sp)(sp._idx, np.einsum("nk,nk->n", g[rows], d[cols]), sp._shape,
                          is_coalesced=sp._coalesced)
        if self._next[2] is not None:
            g2 = np.zeros(d.shape, dtype=np.result_type(g.dtype, sp._vals.dtype))
            np.add.at(g2, cols, sp._vals[:, None] * g[rows])
        return (None, g1, g2)


def record_to_sparse(input: Tensor, out, sparse_dim):
    """Put ``out`` (``input`` made sparse) in ``input``'s graph."""
    if input._requires_grad:
        node = ToSparseBackward1 if sparse_dim is None else ToSparseBackward0
        out._proxy = record(node, (input,), np.broadcast_to(
            np.zeros((), dtype=input._data.dtype), input._data.shape),
            attrs={"self_self_sym_blocksize_opt": None})
    return out


def to_dense(sp, dtype=None, *, masked_grad: bool = True) -> Tensor:
    """The dense tensor ``sp`` stands for (duplicates summed), in ``sp``'s graph."""
    dense = sp._dense_array()
    if dtype is not None:
        from ._core import dtype as _dtype

        dense = dense.astype(_dtype.as_dtype(dtype).np)
    if sp._proxy is None:
        return Tensor._make(dense)
    return record(ToDenseBackward0, (sp._proxy,), dense, attrs={"sp": sp})


def values(sp) -> Tensor:
    """The values of a coalesced ``sp``, in its graph."""
    if sp._proxy is None:
        return Tensor._make(sp._vals)
    return record(ValuesBackward0, (sp._proxy,), sp._vals.view(), attrs={"sp": sp})


def sparse_mm(mat1, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for a 2-D sparse COO ``mat1`` and a dense ``mat2``, in the graph."""
    d = mat2._data
    if mat1._shape[1] != d.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1._shape[0]}x"
                           f"{mat1._shape[1]} and {d.shape[0]}x{d.shape[1]})")
    rows, cols = mat1._idx[0], mat1._idx[1]
    out = np.zeros((mat1._shape[0], d.shape[1]), dtype=np.result_type(mat1._vals.dtype, d.dtype))
    np.add.at(out, rows, mat1._vals[:, None] * d[cols])
    return record(SparseAddmmBackward0, (None, mat1._proxy, mat2), out,
                  attrs={"alpha": 1, "beta": 0, "sp": mat1})
