"""LU factorization with partial pivoting: ``linalg.lu_factor(_ex)``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve`` and the older ``lu``/``lu_solve`` (real and complex).

NumPy has no LU, so the factorization is a kernel of its own: LAPACK's ``getrf`` done column
by column, each step a vectorised row operation over the whole batch. Its results follow
LAPACK's conventions, as PyTorch returns them: ``L`` (unit diagonal, not stored) and ``U``
packed in one matrix, 1-based int32 pivots (row ``i`` was swapped with row ``pivots[i]``),
and ``info`` the first zero pivot (1-based, 0 when there is none).

Each op records PyTorch's one node (``LinalgLuFactorExBackward0``, ``LinalgLuBackward0``,
``LuUnpackBackward0``, ``LinalgLuSolveBackward0``); their derivatives are PyTorch's
(``lu_factor_ex_backward``, ``linalg_lu_backward``, ``lu_unpack_backward``,
``linalg_lu_solve_LU``), written with gradnb ops so they differentiate again.
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
from .creation import eye, zeros_like
from .lapack import check_errors as _check_errors
from .lapack import column_major, getrs
from .lapack import conj_transpose as _adjoint
from .lapack import getrf as _getrf
from .linalg_decompositions import _mH, _mT, _same_dtype, solve_triangular
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
        k = min(LU.shape[-2], LU.shape[-1])
        L, U = _unpack(LU)
        return (_lu_backward(g[..., :, :k], g[..., :k, :], wrap(self.P), L, U),)


def _lu_backward(gL, gU, P, L, U):
    """PyTorch's ``linalg_lu_backward``: the gradient of ``A = P L U`` from those of ``L``
    (``m x k``) and ``U`` (``k x n``); either may be None (no gradient)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if gL is None:
        gL = zeros_like(L)
    if gU is None:
        gU = zeros_like(U)
    if m == n:
        gA = mx.tril(la.matmul(_mH(L), gL), -1) + mx.triu(la.matmul(gU, _mH(U)))
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = solve_triangular(_mH(L), gA, upper=True, unitriangular=True)
    elif m < n:  # wide: U = [U1 | U2] with U1 square
        gA = la.matmul(_mH(L), gL) - la.matmul(mx.triu(gU), _mH(U))
        gA = solve_triangular(_mH(U[..., :, :k]), mx.tril(gA, -1), upper=False, left=False)
        gA = cat([gA + mx.triu(gU[..., :, :k]), gU[..., :, k:]], -1)
        gA = solve_triangular(_mH(L), gA, upper=True, unitriangular=True)
    else:  # tall: L = [L1; L2] with L1 square
        gA = la.matmul(gU, _mH(U)) - la.matmul(_mH(L), mx.tril(gL, -1))
        gA = solve_triangular(_mH(L[..., :k, :]), mx.triu(gA), upper=True,
                              unitriangular=True)
        gA = cat([gA + mx.tril(gL[..., :k, :], -1), gL[..., k:, :]], -2)
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
    return la.matmul(P, gA)


def _check_lu_input(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"[{', '.join(str(s) for s in A.shape)}] instead")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for "
                                  f"'{scalar_type_name(A._data.dtype)}'")


def _raise_singular(info: np.ndarray, name: str) -> None:
    _check_errors(info, f"gradnb.{name}", info.ndim == 0)


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
    LU = record(LinalgLuFactorExBackward0, (A,), column_major(lu_), attrs={"P": P, "pivot": pivot},
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


class LuUnpackBackward0(Node):
    rule = "LU_data: lu_unpack_backward(grad_L, grad_U, LU_data.sym_size(-2), LU_data.sym_size(-1))"
    __slots__ = ("LU_data_sym_argsize_minus_1", "LU_data_sym_argsize_minus_2")
    on_tensors = True
    inputs = ("LU_data",)
    outputs = ("P", "L", "U")
    saves = ("LU_data_sym_argsize_minus_1", "LU_data_sym_argsize_minus_2")

    def backward(self, gP, gL, gU):
        m, n = self.LU_data_sym_argsize_minus_2, self.LU_data_sym_argsize_minus_1
        k = min(m, n)
        parts = []
        if gL is not None:  # L's strictly lower part, in the first k columns
            gL = mx.tril(gL, -1)
            parts.append(gL if k == n else cat([gL, zeros_like(gL[..., :, :1]).expand(
                *gL.shape[:-1], n - k)], -1))
        if gU is not None:  # U's upper part, in the first k rows
            gU = mx.triu(gU)
            parts.append(gU if k == m else cat([gU, zeros_like(gU[..., :1, :]).expand(
                *gU.shape[:-2], m - k, n)], -2))
        if not parts:
            return (None,)
        return (parts[0] if len(parts) == 1 else parts[0] + parts[1],)


def _without_grad(t: Tensor) -> Tensor:
    """A non-differentiable output of a node with several (``P`` of ``lu_unpack``)."""
    return wrap(t._data)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True):
    """``(P, L, U)`` from ``lu_factor``'s output; a part not asked for is an empty tensor."""
    if LU_pivots.dtype.name != "int32":
        raise RuntimeError("gradnb.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of gradnb.int32 dtype.")
    lu_ = LU_data._data
    m, n = lu_.shape[-2:]
    empty = np.zeros((0,), dtype=lu_.dtype)
    if unpack_data:
        L, U = _unpack_arrays(lu_)
    else:
        L, U = empty, empty.copy()
    P = _permutation(LU_pivots._data, m, lu_.dtype) if unpack_pivots else empty.copy()
    P, L, U = record(LuUnpackBackward0, (LU_data,), (P, L, U),
                     attrs={"LU_data_sym_argsize_minus_1": n, "LU_data_sym_argsize_minus_2": m})
    return _lu_unpack_result(_without_grad(P), L, U)


def _unpack_arrays(lu_: np.ndarray):
    """``_unpack`` on arrays."""
    m, n = lu_.shape[-2:]
    k = min(m, n)
    L = np.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=lu_.dtype)
    U = np.triu(lu_[..., :k, :])
    return L, U


class LinalgLuBackward0(Node):
    rule = "A: linalg_lu_backward(grad_L, grad_U, P, L, U, pivot)"
    __slots__ = ("pivot",)
    on_tensors = True
    inputs = ("A",)
    outputs = ("P", "L", "U")
    saves = ("L", "P", "U", "pivot")

    def backward(self, gP, gL, gU):
        L, P, U = self.saved(gL if gL is not None else gU)
        return (_lu_backward(gL, gU, P, L, U),)


def linalg_lu(A: Tensor, *, pivot: bool = True):
    """``(P, L, U)`` with ``A = P @ L @ U``: ``P`` a permutation, ``L`` unit lower triangular
    (``m x k``), ``U`` upper triangular (``k x n``)."""
    _check_lu_input(A, "linalg.lu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    a = A._data
    lu_, pivots, _ = _getrf(a)
    L, U = _unpack_arrays(lu_)
    P = _permutation(pivots, a.shape[-2], a.dtype)
    P, L, U = record(LinalgLuBackward0, (A,), (P, L, U), attrs={"pivot": pivot})
    return _lu_result(_without_grad(P), L, U)


# -- solving ---------------------------------------------------------------------------------------
class LinalgLuSolveBackward0(Node):
    rule = ("LU: linalg_lu_solve_LU(grad, LU, pivots, result, left, adjoint); "
            "B: at::linalg_lu_solve(LU, pivots, grad, left, !adjoint)")
    __slots__ = ("adjoint", "left")
    on_tensors = True
    inputs = ("LU", "B")
    computed = ("pivots",)
    saves = ("LU", "pivots", "result", "adjoint", "left")

    def backward(self, g):
        LU, pivots, X = self.saved(g)
        left, adjoint = self.left, self.adjoint
        gB = linalg_lu_solve(LU, pivots, g, left=left, adjoint=not adjoint) \
            if self.needs(1) else None
        gLU = _lu_solve_LU(g, LU, pivots, X, left, adjoint) if self.needs(0) else None
        return gLU, gB


def _lu_solve_LU(gX, LU, pivots, X, left: bool, adjoint: bool):
    """PyTorch's ``linalg_lu_solve_LU``: the gradient of the packed ``LU`` of a solve."""
    L, U = _unpack(LU)
    if left != adjoint:
        gR = -(la.matmul(gX, _mH(X)) if left else la.matmul(_mH(gX), X))
        gR = solve_triangular(_mH(U), gR, upper=False)
        gL = solve_triangular(_mH(L), la.matmul(gR, _mH(U)), upper=True,
                              unitriangular=True)
        return mx.tril(gL, -1) + mx.triu(gR)
    P = wrap(_permutation(pivots._data, LU.shape[-1], LU._data.dtype))
    gR = -la.matmul(la.matmul(la.matmul(_mT(P), X if left else _mH(X)),
                              _mH(gX) if left else gX), P)
    gR = solve_triangular(_mH(L), gR, upper=True, left=False, unitriangular=True)
    gU = mx.triu(solve_triangular(_mH(U), la.matmul(_mH(L), gR), upper=False, left=False))
    return mx.tril(gR, -1) + gU


def _lu_solve_array(lu_, pivots, b, left: bool, adjoint: bool):
    """``linalg.lu_solve`` on arrays (batch dimensions broadcast), as LAPACK's ``getrs``: a
    zero on ``U``'s diagonal gives infinities and NaNs, not an error."""
    if left:
        return column_major(getrs(lu_, pivots, b, adjoint=adjoint))
    # X A = B is A^H X^H = B^H (X A^H = B is A X^H = B^H), solved for X^H, which is
    # column-major: X is row-major, as PyTorch's
    out = getrs(lu_, pivots, _adjoint(b), adjoint=not adjoint)
    return np.ascontiguousarray(_adjoint(out))


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
    _same_dtype(LU, B, "linalg.lu_solve: ", "LU", "B")
    out = _lu_solve_array(LU._data, pivots._data, B._data, left, adjoint)
    return record(LinalgLuSolveBackward0, (LU, B), out,
                  attrs={"pivots": pivots, "left": left, "adjoint": adjoint})


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve``: ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return linalg_lu_solve(LU_data, LU_pivots, b)


TENSOR_METHODS = {"lu": lu, "lu_solve": lu_solve}
