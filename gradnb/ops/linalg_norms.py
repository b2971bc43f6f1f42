"""Norms that span both op families: ``norm`` (``torch.norm``: a vector norm, or a matrix norm
for the nuclear norm and other string orders) and ``linalg.vector_norm``.

They sit above ``reductions`` (the vector p-norm kernel) and ``linalg_decompositions`` (the
SVD behind the nuclear and spectral norms), so neither family imports the other.
"""

from __future__ import annotations

from . import reductions as red
from ._common import Tensor
from .linalg_decompositions import matrix_norm

__all__ = ["norm"]


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``sum(|x| ** ord) ** (1 / ord)`` over ``dim`` (all dimensions by default); ``ord`` may
    be ``inf``, ``-inf`` or 0 (the count of nonzeros)."""
    return red.norm(x, ord, dim, keepdim, dtype=dtype)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """``torch.norm``: the vector ``p``-norm over ``dim`` (all dimensions by default;
    ``'fro'`` is the 2-norm), or for ``p='nuc'`` (and other string orders) the matrix norm over
    the two dimensions ``dim``.

    >>> import gradnb
    >>> gradnb.tensor([3., 4.]).norm()
    tensor(5.)
    >>> gradnb.tensor([[3., 0.], [0., 4.]]).norm(p='nuc')
    tensor(7.)
    """
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return red.norm(input, 2, dim, keepdim, dtype=dtype)
        dims = tuple(range(input.dim())) if dim is None else dim
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return red.norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


TENSOR_METHODS = {"norm": norm}
