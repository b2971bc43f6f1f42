"""Sparse COO tensors: the gradient type of ``nn.Embedding(sparse=True)``.

A ``SparseTensor`` stores only the slices that are present: ``indices`` (``sparse_dim x nnz``,
int64) name positions in the first ``sparse_dim`` dimensions and ``values``
(``nnz x dense dims``) hold their slices. For an embedding table that means "the rows this batch
used, and their gradients", so a step on a 100,000-row table touches a few hundred rows instead of
all of them. Duplicate indices are allowed (they add); ``coalesce()`` sums them and sorts.

>>> import gradnb
>>> g = sparse_coo_tensor([[2, 0, 2]], [[1.0], [2.0], [3.0]], (4, 1))
>>> g.coalesce().values()
tensor([[2.],
        [4.]])
>>> g.to_dense().tolist()
[[2.0], [0.0], [4.0], [0.0]]
"""

from __future__ import annotations

import numpy as np

from . import _layout
from . import _sparse_autograd as _grad
from ._core import backend as _backend
from ._core import dtype as _dtype
from ._core.tensor import Size, Tensor
from .ops.creation import tensor

__all__ = ["SparseTensor", "mm", "sparse_coo_tensor", "sparse_mask", "to_sparse"]


def _add_at(target, index, values) -> None:
    if type(target) is np.ndarray:
        np.add.at(target, index, values)
    else:
        import cupyx  # optional (GPU only): imported where a CuPy array is met

        cupyx.scatter_add(target, index, values)


class SparseTensor:
    """A sparse COO tensor (PyTorch's ``layout=torch.sparse_coo``) of the same shape as the dense
    tensor it stands for. Supports what training needs: ``+`` with sparse or dense operands,
    scalar ``*``, ``coalesce``, ``to_dense``, ``zero_``, ``to(device)``."""

    is_sparse = True
    is_sparse_csr = False
    layout = _layout.sparse_coo
    # NumPy must hand ``array + sparse`` to ``__radd__`` instead of making an object array.
    __array_ufunc__ = None

    __slots__ = ("__weakref__", "_coalesced", "_idx", "_proxy", "_shape", "_vals")

    def __init__(self, indices, values, size, *, is_coalesced: bool = False) -> None:
        self._proxy = None  # the dense stand-in that carries grad_fn / .grad (_sparse_autograd)
        self._idx = indices
        self._vals = values
        self._shape = tuple(int(s) for s in size)
        self._coalesced = is_coalesced
        if indices.ndim != 2 or indices.shape[1] != values.shape[0]:
            raise RuntimeError(
                f"number of nnz in indices ({indices.shape[-1]}) must match values "
                f"({values.shape[0]})")
        if indices.shape[0] + values.ndim - 1 != len(self._shape):
            raise RuntimeError(f"number of dimensions must be sparse_dim ({indices.shape[0]}) + "
                               f"dense_dim ({values.ndim - 1}), but got {len(self._shape)}")

    # -- autograd -------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to (or through) this tensor."""
        return self._proxy is not None and self._proxy._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        """Make this sparse tensor a leaf that collects a (sparse) ``.grad``."""
        if self._proxy is not None and self._proxy.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if requires_grad and self._vals.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._proxy = _grad.proxy_of(self._shape, self._vals.dtype, bool(requires_grad)) \
            if requires_grad else None
        return self

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf)."""
        return None if self._proxy is None else self._proxy.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        """A leaf's accumulated gradient (sparse, as PyTorch's)."""
        return None if self._proxy is None else self._proxy._grad

    @grad.setter
    def grad(self, value) -> None:
        if self._proxy is not None:
            self._proxy._grad = value

    # -- metadata -------------------------------------------------------------------------------
    @property
    def shape(self):
        """The dense shape this tensor stands for."""
        return Size(self._shape)

    def size(self, dim: int | None = None):
        """The dense shape, or the size of one dimension."""
        return self.shape if dim is None else self._shape[dim]

    @property
    def dtype(self) -> _dtype.dtype:
        """The dtype of the values."""
        return _dtype.from_numpy_dtype(self._vals.dtype)

    @property
    def device(self) -> _backend.device:
        """Where the values live."""
        return _backend.device_of(self._vals)

    @property
    def ndim(self) -> int:
        """Number of dimensions, sparse and dense together."""
        return len(self._shape)

    def get_device(self) -> int:
        """The CUDA device index, or -1 on the CPU."""
        device = self.device
        return -1 if device.type == "cpu" else (device.index or 0)

    def dim(self) -> int:
        """Number of dimensions, sparse and dense together."""
        return len(self._shape)

    def sparse_dim(self) -> int:
        """How many leading dimensions the indices address."""
        return self._idx.shape[0]

    def dense_dim(self) -> int:
        """How many trailing dimensions each stored value has."""
        return self._vals.ndim - 1

    def numel(self) -> int:
        """Elements of the dense tensor this stands for."""
        return int(np.prod(self._shape, dtype=np.int64))

    def _nnz(self) -> int:
        return int(self._idx.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes actually stored (indices and values)."""
        return int(self._idx.nbytes + self._vals.nbytes)

    def is_coalesced(self) -> bool:
        """True when indices are unique and sorted."""
        return self._coalesced

    def __len__(self) -> int:
        return self._shape[0]

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor (call ``coalesce()`` first, as in PyTorch)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return Tensor._make(self._idx)

    def values(self) -> Tensor:
        """The values of a coalesced tensor (call ``coalesce()`` first, as in PyTorch)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return _grad.values(self)

    def _indices(self) -> Tensor:
        return Tensor._make(self._idx)

    def _values(self) -> Tensor:
        return Tensor._make(self._vals)

    # -- conversion -----------------------------------------------------------------------------
    def _linear_index(self):
        """Each entry's position among the ``prod(shape[:sparse_dim])`` sparse slots."""
        xp = _backend.get_array_module(self._idx)
        if self._idx.shape[0] == 1:
            return self._idx[0]
        return xp.ravel_multi_index(tuple(self._idx), self._shape[:self._idx.shape[0]])

    def coalesce(self) -> SparseTensor:
        """Sum duplicate indices and sort them (a no-op on a coalesced tensor)."""
        if self._coalesced:
            return self
        xp = _backend.get_array_module(self._vals)
        linear = self._linear_index()
        unique, inverse = xp.unique(linear, return_inverse=True)
        values = xp.zeros((unique.shape[0],) + self._vals.shape[1:], dtype=self._vals.dtype)
        _add_at(values, inverse.reshape(-1), self._vals)
        k = self._idx.shape[0]
        if k == 1:
            indices = unique.reshape(1, -1).astype(np.int64)
        else:
            indices = xp.stack(xp.unravel_index(unique, self._shape[:k])).astype(np.int64)
        out = SparseTensor(indices, values, self._shape, is_coalesced=True)
        if self._proxy is None:
            return out
        return _grad.follow(_grad.CoalesceBackward0, self, out)

    def _coalesce_(self) -> SparseTensor:
        """Coalesce in place (for in-place edits of the values, such as clipping)."""
        c = self.coalesce()
        self._idx, self._vals, self._coalesced = c._idx, c._vals, True
        return self

    def to_dense(self, dtype=None, *, masked_grad: bool = True) -> Tensor:
        """The dense tensor this stands for (duplicates summed), in the graph."""
        return _grad.to_dense(self, dtype, masked_grad=masked_grad)

    def to_sparse(self, *args, **kwargs) -> SparseTensor:
        """Itself (already sparse COO)."""
        return self

    to_sparse_coo = to_sparse

    def _dense_array(self):
        xp = _backend.get_array_module(self._vals)
        k = self._idx.shape[0]
        slots = int(np.prod(self._shape[:k], dtype=np.int64))
        out = xp.zeros((slots,) + self._shape[k:], dtype=self._vals.dtype)
        _add_at(out, self._linear_index(), self._vals)
        return out.reshape(self._shape)

    def __array__(self, dtype=None, copy=None):
        dense = self._dense_array()
        if type(dense) is not np.ndarray:
            dense = dense.get()
        return dense if dtype is None else dense.astype(dtype)

    def to(self, *args, **kwargs) -> SparseTensor:
        """Move and/or cast the values (and indices): ``g.to('cuda')``, ``g.to(gradnb.float64)``."""
        probe = Tensor._make(self._vals).to(*args, **kwargs)
        idx = _backend.to_device(self._idx, probe.device)
        return SparseTensor(idx, probe._data, self._shape, is_coalesced=self._coalesced)

    def clone(self) -> SparseTensor:
        """A copy with its own index and value arrays."""
        return SparseTensor(self._idx.copy(), self._vals.copy(), self._shape,
                            is_coalesced=self._coalesced)

    def detach(self) -> SparseTensor:
        """The same entries outside any graph."""
        if self._proxy is None:
            return self
        return SparseTensor(self._idx, self._vals, self._shape, is_coalesced=self._coalesced)

    # -- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other):
        """Sparse + sparse stays sparse (entries concatenated); sparse + dense is dense."""
        if isinstance(other, SparseTensor):
            if self.requires_grad or other.requires_grad:
                raise RuntimeError("gradnb: sparse + sparse does not record gradients yet; "
                                   "add their to_dense() tensors")
            if other._shape != self._shape:
                raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                                   f"has size {list(self._shape)} while other has size "
                                   f"{list(other._shape)}")
            xp = _backend.get_array_module(self._vals)
            return SparseTensor(xp.concatenate([self._idx, other._idx], axis=1),
                                xp.concatenate([self._vals, other._vals.astype(self._vals.dtype)]),
                                self._shape)
        if isinstance(other, Tensor):
            return other + self.to_dense()
        if hasattr(other, "shape") and hasattr(other, "dtype"):  # a raw array inside the engine
            dense = self._dense_array()
            return dense + other
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, scalar):
        if isinstance(scalar, Tensor):
            if scalar.numel() != 1:
                return NotImplemented
            scalar = scalar._data.reshape(())
        if not (isinstance(scalar, (int, float)) or getattr(scalar, "ndim", 1) == 0):
            return NotImplemented
        out = SparseTensor(self._idx, self._vals * scalar, self._shape,
                           is_coalesced=self._coalesced)
        if self._proxy is None:
            return out
        return _grad.follow(_grad.SparseScaled, self, out, other=scalar)

    __rmul__ = __mul__

    def __neg__(self) -> SparseTensor:
        return self * -1

    def mul_(self, scalar) -> SparseTensor:
        """Scale the values in place (what ``clip_grad_norm_`` does to a gradient)."""
        if isinstance(scalar, Tensor):
            scalar = scalar._data.reshape(())
        self._vals *= scalar
        return self

    def zero_(self) -> SparseTensor:
        """Drop every entry (the tensor becomes all zeros, with nnz=0)."""
        self._idx = self._idx[:, :0]
        self._vals = self._vals[:0]
        self._coalesced = True
        return self

    def __repr__(self) -> str:
        pad = " " * len("tensor(")
        idx = repr(Tensor._make(self._idx)).replace("\n", "\n" + pad + " " * len("indices="))
        vals = repr(Tensor._make(self._vals)).replace("\n", "\n" + pad + " " * len("values="))
        tail = ""
        if self.grad_fn is not None:
            tail = f", grad_fn=<{self.grad_fn.name()}>"
        elif self.requires_grad:
            tail = ", requires_grad=True"
        return (f"tensor(indices={idx},\n{pad}values={vals},\n{pad}size={self._shape}, "
                f"nnz={self._nnz()}, layout=gradnb.sparse_coo{tail})")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants=None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """Build a sparse COO tensor from ``indices`` (``sparse_dim x nnz``) and ``values``."""
    idx_t = indices if isinstance(indices, Tensor) else tensor(indices, dtype=_dtype.int64)
    val_t = values if isinstance(values, Tensor) else tensor(values, dtype=dtype)
    if dtype is not None:
        val_t = val_t.to(dtype=dtype)
    if device is not None:
        idx_t, val_t = idx_t.to(device), val_t.to(device)
    idx = idx_t._data.astype(np.int64, copy=False)
    vals = val_t._data
    if size is None:
        k = idx.shape[0]
        size = tuple(int(m) + 1 for m in idx.max(axis=1)) + tuple(vals.shape[1:]) if idx.size \
            else (0,) * k + tuple(vals.shape[1:])
    out = SparseTensor(idx, vals, size, is_coalesced=bool(is_coalesced))
    return out.requires_grad_() if requires_grad else out


def mm(mat1, mat2) -> Tensor:
    """``mat1 @ mat2`` for a sparse COO ``mat1`` (2-D) and a dense ``mat2``, as
    ``torch.sparse.mm``; the gradient of ``mat1`` is sparse, masked to its entries."""
    if not isinstance(mat1, SparseTensor):
        from .ops.linalg import mm as dense_mm

        return dense_mm(mat1, mat2)
    if mat1.ndim != 2 or mat1.sparse_dim() != 2:
        raise RuntimeError("sparse.mm: mat1 must be a 2-D sparse COO matrix")
    return _grad.sparse_mm(mat1, mat2)


def to_sparse(input: Tensor, sparse_dim: int | None = None, *, layout=None,
              blocksize=None, dense_dim=None) -> SparseTensor:
    """A sparse COO copy of a dense tensor (its nonzero entries); ``sparse_dim`` leading
    dimensions are indexed, the rest stay dense in the values."""
    if isinstance(input, SparseTensor):
        return input
    if layout is not None and getattr(layout, "_name", str(layout)).split(".")[-1] != "sparse_coo":
        raise RuntimeError(f"to_sparse: layout {layout} is not supported by gradnb (COO only)")
    data = input._data
    k = data.ndim if sparse_dim is None else int(sparse_dim)
    if data.ndim == k:
        idx = np.stack(np.nonzero(data)).astype(np.int64).reshape(k, -1)
    else:
        flat = data.reshape(data.shape[:k] + (-1,))
        idx = np.stack(np.nonzero(np.any(flat != 0, axis=-1))).astype(np.int64).reshape(k, -1)
    vals = np.ascontiguousarray(data[tuple(idx)])
    out = SparseTensor(idx, vals, data.shape, is_coalesced=True)
    return _grad.record_to_sparse(input, out, sparse_dim)


def sparse_mask(input: Tensor, mask) -> SparseTensor:
    """``input``'s values at ``mask``'s entries, as a sparse tensor of ``mask``'s pattern."""
    if not getattr(mask, "is_sparse", False):
        raise RuntimeError("sparse_mask expects mask to be sparse COO tensor")
    return _grad.mask(input._data, mask.coalesce())


def _sparse_only(name: str, expected: str):
    """A SparseTensor method called on a dense tensor: PyTorch's layout error."""
    def method(self):
        raise RuntimeError(f"{name} expected {expected} layout but got Strided")

    method.__name__ = name
    return method


# Bound to the dense Tensor by gradnb._tensor_methods.
TENSOR_METHODS = {
    "layout": property(lambda self: _layout.strided),
    "to_sparse": to_sparse, "to_sparse_coo": to_sparse, "sparse_mask": sparse_mask,
    "is_coalesced": _sparse_only("is_coalesced", "sparse coordinate tensor"),
    "coalesce": _sparse_only("coalesce", "sparse coordinate tensor"),
    "indices": _sparse_only("indices", "sparse coordinate tensor"),
    "values": _sparse_only("values", "sparse tensor"),
}
