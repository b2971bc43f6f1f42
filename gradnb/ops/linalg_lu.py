"""LU factorization with partial pivoting: ``linalg.lu_factor(_ex)``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve`` and the older ``lu``/``lu_solve`` (real dtypes).

NumPy has no LU, so the factorization is a kernel of its own: LAPACK's ``getrf`` done column
by column, each step a vectorised row operation over the whole batch. Its results follow
LAPACK's conventions, as PyTorch returns them: ``L`` (unit diagonal, not stored) and ``U``
packed in one matrix, 1-based int32 pivots (row ``i`` was swapped with row ``pivots[i]``),
and ``info`` the first zero pivot (1-based, 0 when there is none).

Only ``lu_factor_ex`` is a primitive (its derivative is PyTorch's ``lu_factor_ex_backward``,
written with gradnb ops, so it differentiates again); unpacking and solving are composed
from triangular parts and triangular solves, whose own derivatives give PyTorch's.
"""

from __future__ import annotations

import collections

import numpy as np

from .._core.graph import OUTPUT, Node
from .._core.record import record
from . import linalg as la
from . import matrices as mx
from ._args import scalar_type_name
from ._common import Tensor, wrap
from .creation import eye
from .lapack import getrf as _getrf
from .linalg_decompositions import _mT, solve_triangular
from .shape import cat

__all__ = ["lu", "lu_solve", "lu_unpack"]

_lu_factor_result = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
_lu_factor_ex_result = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_lu_result = collections.namedtuple("linalg_lu", ["P", "L", "U"])
_lu_unpack_result = collections.namedtuple("lu_unpack", ["P", "L", "U"])


# -- the kernel ------------------------------------------------------------------------------------
def _permutation(pivots: np.ndarray, m: int, dtype) -> np.ndarray:
    """The matrix ``P`` of LAPACK pivots: ``A = P @ L @ U``."""
    batch = pivots.shape[:-1]
    piv = pivots.reshape((-1, pivots.shape[-1])).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (piv.shape[0], m)).copy()
    rows = np.arange(piv.shape[0])
    for i in range(piv.shape[1]):
        target = piv[:, i]
        perm_i = perm[:, i].copy()
        perm[:, i] = perm[rows, target]
        perm[rows, target] = perm_i
    P = np.zeros((piv.shape[0], m, m), dtype=dtype)
    P[rows[:, None], perm, np.arange(m)] = 1  # row perm[i] of A is row i of L @ U
    return P.reshape(batch + (m, m))


# -- factorization ---------------------------------------------------------------------------------
def _unpack(LU: Tensor):
    """``L`` (unit lower, ``m x k``) and ``U`` (upper, ``k x n``) from the packed ``LU``."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = mx.tril(LU[..., :, :k], -1) + eye(m, k, dtype=LU.dtype, device=LU.device)
    U = mx.triu(LU[..., :k, :])
    return L, U


class LinalgLuFactorExBackward0(Node):
    """PyTorch's ``lu_factor_ex_backward``: ``linalg_lu_backward`` of the unpacked factors,
    with the gradient of ``LU`` split into that of ``L`` (strictly lower) and ``U``."""
    rule = (
        "self: P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H (square; tall and wide split L or "
        "U)"
    )

    __slots__ = ("P", "pivot")
    on_tensors = True
    inputs = ("A",)
    outputs = ("LU", "pivots")
    saves = ("LU", "pivots", "pivot")

    def backward(self, g):
        LU, _ = self.saved(g)
        m, n = LU.shape[-2], LU.shape[-1]
        k = min(m, n)
        L, U = _unpack(LU)
        gL, gU = g[..., :, :k], g[..., :k, :]
        if m == n:
            gA = mx.tril(la.matmul(_mT(L), gL), -1) + mx.triu(la.matmul(gU, _mT(U)))
            gA = solve_triangular(_mT(U), gA, upper=False, left=False)
            gA = solve_triangular(_mT(L), gA, upper=True, unitriangular=True)
        elif m < n:  # wide: U = [U1 | U2] with U1 square
            gA = la.matmul(_mT(L), gL) - la.matmul(mx.triu(gU), _mT(U))
            gA = solve_triangular(_mT(U[..., :, :k]), mx.tril(gA, -1), upper=False, left=False)
            gA = cat([gA + mx.triu(gU[..., :, :k]), gU[..., :, k:]], -1)
            gA = solve_triangular(_mT(L), gA, upper=True, unitriangular=True)
        else:  # tall: L = [L1; L2] with L1 square
            gA = la.matmul(gU, _mT(U)) - la.matmul(_mT(L), mx.tril(gL, -1))
            gA = solve_triangular(_mT(L[..., :k, :]), mx.triu(gA), upper=True,
                                  unitriangular=True)
            gA = cat([gA + mx.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
            gA = solve_triangular(_mT(U), gA, upper=False, left=False)
        return (la.matmul(wrap(self.P), gA),)


def _check_lu_input(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"[{', '.join(str(s) for s in A.shape)}] instead")
    if not A.dtype.is_floating_point:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for "
                                  f"'{scalar_type_name(A._data.dtype)}'")


def _raise_singular(info: np.ndarray, name: str) -> None:
    bad = np.flatnonzero(info.reshape(-1))
    if bad.size == 0:
        return
    first = int(bad[0])
    j = int(info.reshape(-1)[first])
    batch = f"(Batch element {first}): " if info.ndim else ""
    raise RuntimeError(f"gradnb.{name}: {batch}U[{j},{j}] is zero and using it on lu_solve "
                       "would result in a division by zero. If you still want to perform the "
                       "factorization, consider calling linalg.lu(A, pivot) or "
                       "linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """``(LU, pivots, info)``: the LU factorization with partial pivoting, packed as LAPACK's
    ``getrf`` returns it; ``info`` is 0, or the (1-based) index of the first zero pivot."""
    _check_lu_input(A, "gradnb.lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    a = A._data
    lu_, pivots, info = _getrf(a)
    if check_errors:
        _raise_singular(info, "linalg.lu_factor_ex")
    P = _permutation(pivots, a.shape[-2], a.dtype)
    pivots = wrap(pivots)
    LU = record(LinalgLuFactorExBackward0, (A,), lu_, attrs={"P": P, "pivot": pivot},
                save=(OUTPUT, pivots))
    return _lu_factor_ex_result(LU, pivots, wrap(info))


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``(LU, pivots)`` of ``lu_factor_ex``; raises for a singular matrix."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _raise_singular(info._data, "linalg.lu_factor")
    return _lu_factor_result(LU, pivots)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``torch.lu``: ``(LU, pivots)``, with ``infos`` when ``get_infos`` (never raises for a
    singular matrix)."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True):
    """``(P, L, U)`` from ``lu_factor``'s output; a part not asked for is an empty tensor."""
    if LU_pivots.dtype.name != "int32":
        raise RuntimeError("gradnb.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of gradnb.int32 dtype.")
    empty = wrap(np.zeros((0,), dtype=LU_data._data.dtype))
    L, U = _unpack(LU_data) if unpack_data else (empty, empty.clone())
    P = wrap(_permutation(LU_pivots._data, LU_data.shape[-2], LU_data._data.dtype)) \
        if unpack_pivots else empty.clone()
    return _lu_unpack_result(P, L, U)


def linalg_lu(A: Tensor, *, pivot: bool = True):
    """``(P, L, U)`` with ``A = P @ L @ U``: ``P`` a permutation, ``L`` unit lower triangular
    (``m x k``), ``U`` upper triangular (``k x n``)."""
    _check_lu_input(A, "linalg.lu")
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return _lu_result(*lu_unpack(LU, pivots))


# -- solving ---------------------------------------------------------------------------------------
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """``X`` with ``A X = B`` for ``A = P L U`` given by ``lu_factor`` (``X A = B`` when not
    ``left``; ``A^H`` in place of ``A`` when ``adjoint``)."""
    if LU.dim() < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError("gradnb.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {LU.shape[-2]} by {LU.shape[-1]} matrices")
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{equation} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    L, U = _unpack(LU)
    P = wrap(_permutation(pivots._data, n, LU._data.dtype))
    if not left:  # X A = B is A^T X^T = B^T
        return _mT(linalg_lu_solve(LU, pivots, _mT(B), adjoint=not adjoint))
    if adjoint:  # U^T L^T P^T X = B
        Y = solve_triangular(_mT(U), B, upper=False)
        Y = solve_triangular(_mT(L), Y, upper=True, unitriangular=True)
        return la.matmul(P, Y)
    Y = solve_triangular(L, la.matmul(_mT(P), B), upper=False, unitriangular=True)
    return solve_triangular(U, Y, upper=True)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve``: ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return linalg_lu_solve(LU_data, LU_pivots, b)


TENSOR_METHODS = {"lu": lu, "lu_solve": lu_solve}
