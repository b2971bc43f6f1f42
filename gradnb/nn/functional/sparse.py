"""embedding: rows of a table picked by index, with a dense or a sparse gradient."""

from __future__ import annotations

from typing import ClassVar

from ..._core.backend import get_array_module
from ..._core.graph import Node, bump_version
from ..._core.record import record
from ...ops.creation import zeros
from ...sparse import SparseTensor
from ._fused import Tensor

__all__ = ["embedding", "embedding_renorm_", "one_hot"]


class EmbeddingBackward0(Node):
    """The gradient of each looked-up row is added back to its row of the table: a dense
    ``(num_embeddings, dim)`` tensor (an ``index_add`` into zeros, so under ``create_graph=True``
    its own derivative gathers the rows back), or with ``sparse=True`` a ``SparseTensor`` holding
    only the looked-up rows (so a step costs O(batch), not O(table)); as in PyTorch, a sparse
    gradient is not differentiable further."""
    rule = "weight: grad rows added into the looked-up rows"

    __slots__ = ("num_weights", "padding_idx", "sparse")
    inputs = ("weight",)
    saves = (0,)  # (the spec is the recording's: the index tensor)
    saved_names = ("indices",)
    saved_attrs: ClassVar[dict] = {"padding_idx": "_padding_idx", "sparse": "sparse",
                                   "scale_grad_by_freq": "scale_grad_by_freq",
                                   "weight_sym_argsize_0": "num_weights"}
    scale_grad_by_freq = False
    fit_grads = False  # the rule returns the weight's shape itself
    on_tensors = True

    @property
    def _padding_idx(self) -> int:
        # PyTorch keeps -1 for "no padding row" and shows it as an unsigned 64-bit number.
        return (-1 if self.padding_idx is None else self.padding_idx) % (1 << 64)

    def backward(self, g):
        (indices,) = self.saved(g)
        dim = g.shape[-1]
        rows = indices.reshape(-1) % self.num_weights
        grads = g.reshape(-1, dim)
        if self.scale_grad_by_freq and self.sparse:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                               "gradients")
        if self.scale_grad_by_freq:  # each row's gradient divided by how often it was looked up
            xp = get_array_module(rows._data)
            counts = xp.bincount(rows._data, minlength=self.num_weights)
            scale = (1.0 / counts[rows._data]).astype(grads._data.dtype).reshape(-1, 1)
            grads = grads * type(grads)._make(scale)
        if self.padding_idx is not None:
            keep = rows != self.padding_idx
            rows, grads = rows[keep], grads[keep]
        if self.sparse:
            # The values are a private copy: ``g`` may be a buffer the engine reuses.
            return (SparseTensor(rows._data.reshape(1, -1).astype("int64"), grads._data.copy(),
                                 (self.num_weights, dim)),)
        table = zeros(self.num_weights, dim, dtype=g.dtype, device=g.device)
        return (table.index_add(0, rows, grads),)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm=None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Look up rows of ``weight`` (``num_embeddings x dim``) at the integer ``input``."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {input.dtype} instead (while checking "
                           "arguments for embedding)")
    num = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    if idx.size and (idx.min() < -num or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:  # the looked-up rows are renormalised in the table itself first
        embedding_renorm_(weight, input, max_norm, norm_type)
    out = weight._data[idx]
    attrs = {"num_weights": num, "padding_idx": padding_idx, "sparse": sparse}
    if scale_grad_by_freq:
        attrs["scale_grad_by_freq"] = True
    return record(EmbeddingBackward0, (weight,), out, save=(input,), attrs=attrs)


def embedding_renorm_(input: Tensor, indices, max_norm: float, norm_type: float) -> Tensor:
    """Scale, in place and outside autograd, each row of the table ``input`` named in
    ``indices`` (a tensor or an array) whose ``norm_type`` norm exceeds ``max_norm`` down to
    ``max_norm`` (PyTorch's ``max_norm / (norm + 1e-7)``). An in-place op: the version moves."""
    data = input._data
    xp = get_array_module(data)
    raw = indices._data if isinstance(indices, Tensor) else indices
    rows = xp.unique(xp.asarray(raw).reshape(-1))
    norms = xp.linalg.norm(data[rows].astype(xp.float64, copy=False), ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = max_norm / (norms[over] + 1e-7)
        data[rows[over]] *= scale.astype(data.dtype)[:, None]
    bump_version(input)
    return input


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a trailing dim of ``num_classes`` holding 1 at each index."""
    idx = tensor._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = get_array_module(idx)
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (idx[..., None] == xp.arange(num_classes)).astype(xp.int64)
    return Tensor._make(out)
