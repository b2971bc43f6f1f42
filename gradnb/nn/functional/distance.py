"""normalize, cosine_similarity, pairwise_distance and pdist, composed from gradnb's ops."""

from __future__ import annotations

import numpy as np
from numpy import broadcast_shapes

from ..._core.grad_mode import no_grad
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops import reductions as red
from ...ops.arithmetic import add_scalar
from ...ops.creation import tensor as _tensor
from ...ops.creation import zeros_like

__all__ = ["cosine_similarity", "normalize", "pairwise_distance", "pdist"]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    norm = elementwise.clamp_min(input.norm(p, dim=dim, keepdim=True), eps)
    return input / norm.expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum((x1 / |x1|) * (x2 / |x2|))`` along ``dim``, each norm at least ``eps``; as in
    PyTorch the inputs broadcast first and the clamp passes no gradient of its own."""
    shape = tuple(broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    # PyTorch's expand_outplace: an input already of the common shape is not expanded
    if tuple(x1.shape) != shape:
        x1 = x1.expand(*shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(*shape)
    n1 = red.norm(x1, 2, dim, True).clone()
    n2 = red.norm(x2, 2, dim, True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    # (PyTorch's C++ evaluates the right-hand quotient first)
    right = x2 / n2
    return ((x1 / n1) * right).sum(dim)


class NormBackward1(Node):
    """``norm(self, p, dim, keepdim)`` as PyTorch's C++ composites call it (pairwise_distance);
    Python's ``torch.norm`` records LinalgVectorNormBackward0 instead."""
    rule = "self: norm_backward(grad, self, p, result, dim, keepdim)"
    why_nonfinite = "norm of a zero vector: self / result"

    __slots__ = ("axes", "dim", "keepdim", "p")
    inputs = ("self",)
    saves = ("dim", "keepdim", "p", "self", "result")
    unsigned = ("dim",)

    def backward(self, g):
        if self.p == 0:
            return (None,)  # a count of nonzeros: PyTorch leaves the gradient undefined
        x, out = self.saved(g)
        return (red._norm_grad(g, x, out, self.p, self.axes, self.keepdim),)


def _norm_dim(input: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    """``at::norm(input, p, dim, keepdim)``: the ``p``-norm over one dim (a 0-d input is its own
    dim ``-1``), recorded as NormBackward1."""
    axes = (dim,) if input.ndim else ()
    out = red.norm(input.detach(), p, axes or None, keepdim)._data
    return record(NormBackward1, (input,), out,
                  attrs={"dim": (dim,), "keepdim": keepdim, "p": p, "axes": axes})


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim (PyTorch's composite: a SubBackward0, an
    AddBackward1 and a NormBackward1)."""
    diff = add_scalar(x1 - x2, eps)
    return _norm_dim(diff, float(p), max(x1.ndim, x2.ndim) - 1, keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between every pair of rows ``i < j`` of an ``(N, M)`` input, in
    row-major order of the pairs: ``N (N - 1) / 2`` values."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    x = input.detach()
    rows, cols = _pairs(x)
    out = red.norm(x.index_select(0, rows) - x.index_select(0, cols), p, 1)._data
    return record(PdistBackward0, (input,), out, attrs={"p": float(p)})


def _pairs(x: Tensor) -> tuple:
    """The row indices ``i`` and ``j`` of every pair ``i < j``, in row-major order."""
    rows, cols = np.triu_indices(x.shape[0], 1)
    return (_tensor(rows.astype(np.int64), device=x.device),
            _tensor(cols.astype(np.int64), device=x.device))


class PdistBackward0(Node):
    """The norm's gradient for each pair's difference ``x[i] - x[j]``, added to row ``i`` and
    subtracted from row ``j``."""
    rule = "self: _pdist_backward(grad, self, p, result)"
    why_nonfinite = "two equal rows: (x[i] - x[j]) / result"
    inputs = ("self",)
    saves = ("p", "self", "result")
    on_tensors = True

    def backward(self, g):
        x, out = self.saved(g)
        if self.p == 0 or x.shape[0] < 2:
            return (zeros_like(x),)
        rows, cols = _pairs(x)
        diff = x.index_select(0, rows) - x.index_select(0, cols)
        gd = red._norm_grad(g, diff, out, self.p, (1,), False)
        return (zeros_like(x).index_add(0, rows, gd).index_add(0, cols, -gd),)
