"""The top-level linear algebra names PyTorch keeps beside ``torch.linalg``: ``vander``, and the
deprecated ``chain_matmul``, ``frobenius_norm`` and ``nuclear_norm`` (each warns once per
process, as PyTorch's ``TORCH_WARN_ONCE``, then calls its ``linalg`` form), and the functions
PyTorch removed in 1.9 (``torch.eig``, ``torch.solve``, ...), which raise its error naming the
replacement (``torch.matrix_rank``'s beside ``linalg.matrix_rank``, in ``linalg_rank``).

All are compositions of differentiable gradnb ops: their gradients come with them.
"""

from __future__ import annotations

from .._core import dtype as _dtype
from .._core.warn_once import warn_once
from . import linalg_decompositions as lin
from . import linalg_norms as norms
from . import reductions as red
from . import shape as sh
from ._common import Tensor
from .creation import ones

__all__ = ["chain_matmul", "eig", "frobenius_norm", "lstsq", "nuclear_norm", "solve", "symeig",
           "vander"]

def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the vector ``x``: columns ``x**(N-1), ..., x, 1`` (reversed with
    ``increasing``). Integer and bool inputs give int64, as PyTorch's ``cumprod`` promotes."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    np_dtype = x._data.dtype
    dtype = _dtype.int64 if np_dtype.kind in "biu" else x.dtype
    column = sh.unsqueeze(x.to(dtype), 1)
    first = ones(x.shape[0], min(n, 1), dtype=dtype, device=x.device)
    if n > 1:
        powers = red.cumprod(sh.expand(column, x.shape[0], n - 1), 1)
        result = sh.cat([first, powers], 1)
    else:
        result = first
    return result if increasing else sh.flip(result, (1,))


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices, in the cheapest order: deprecated, ``linalg.multi_dot``."""
    warn_once("chain_matmul", "gradnb.chain_matmul is deprecated and will be removed in a "
               "future PyTorch release. Use gradnb.linalg.multi_dot instead, which accepts a "
               "list of two or more tensors rather than multiple parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].ndim != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].ndim}, expected 2 instead.")
        return matrices[0].clone()
    return lin.multi_dot(list(matrices))


def frobenius_norm(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """``sqrt(sum(|x|**2))`` over ``dim`` (at most two): deprecated, ``linalg.vector_norm``."""
    warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    return norms.vector_norm(input, 2, dims or None, keepdim)


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The sum of the singular values over the two dims ``dim`` (the last two by default; a
    bool second argument is ``keepdim``): deprecated, ``linalg.matrix_norm(A, 'nuc')``."""
    warn_once("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return lin.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def _removed(name: str, advice: str):
    message = "This function was deprecated since version 1.9 and is now removed." + advice

    def removed(*args, **kwargs):
        raise RuntimeError(message)

    removed.__name__ = removed.__qualname__ = name
    removed.__doc__ = f"Removed from PyTorch in 1.9: raises its error.{advice}"
    return removed


eig = _removed("eig", " `gradnb.linalg.eig` returns complex tensors of dtype `cfloat` or "
               "`cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = "
               "gradnb.eig(A) should be replaced with:\nL_complex = gradnb.linalg.eigvals(A)"
               "\n\nand\n\nL, V = gradnb.eig(A, eigenvectors=True) should be replaced with:"
               "\nL_complex, V_complex = gradnb.linalg.eig(A)")
lstsq = _removed("lstsq", " `gradnb.lstsq` is deprecated in favor of `gradnb.linalg.lstsq`.\n"
                 "`gradnb.linalg.lstsq` has reversed arguments and does not return the QR "
                 "decomposition in the returned tuple.\nX = gradnb.lstsq(B, A).solution"
                 "[:A.size(1)] should be replaced with:\nX = gradnb.linalg.lstsq(A, B).solution")
solve = _removed("solve", " `gradnb.solve` is deprecated in favor of `gradnb.linalg.solve`. "
                 "`gradnb.linalg.solve` has its arguments reversed and does not return the LU "
                 "factorization.\nX = gradnb.solve(B, A).solution should be replaced with:\n"
                 "X = gradnb.linalg.solve(A, B)")
symeig = _removed("symeig", " The default behavior has changed from using the upper triangular "
                  "portion of the matrix by default to using the lower triangular portion.\n\n"
                  "L, _ = gradnb.symeig(A, upper=upper) should be replaced with:\nL = "
                  "gradnb.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
                  "gradnb.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
                  "gradnb.linalg.eigh(A, UPLO='U' if upper else 'L')")

TENSOR_METHODS = {"eig": eig, "lstsq": lstsq, "solve": solve, "symeig": symeig}
