"""Linear algebra beyond products: inverse, determinants, solves, Cholesky, QR, symmetric
eigendecomposition, SVD, matrix exponential, pseudo-inverse, matrix norms (real dtypes).

Each primitive pairs a NumPy forward with a derivative written with gradnb ops (``on_tensors``),
including the primitives themselves (the derivative of ``inv`` uses ``inv``'s output, that of
``matrix_exp`` is a ``matrix_exp``), so gradients of every order come for free. The formulas
are PyTorch's (``FunctionsManual.cpp``).
"""

from __future__ import annotations

import collections
import math
from typing import ClassVar

import numpy as np

from .._core import dtype as _dtype
from .._core.grad_mode import no_grad
from .._core.graph import OUTPUT, Node, Output
from .._core.record import record
from . import elementwise as ew
from . import linalg as la
from . import matrices as mx
from . import reductions as red
from ._args import scalar_type_name, wrap_dim
from ._common import Tensor, wrap
from .creation import eye, ones, zeros
from .lapack import column_major, getrf
from .shape import cat

__all__ = [
    "cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
    "matrix_exp", "matrix_power", "pinverse", "slogdet", "svd", "triangular_solve",
]
# ``gradnb.qr`` and ``gradnb.cross`` are ``torch_qr`` and ``cross`` (see gradnb/__init__.py);
# the ``linalg`` forms live in ``gradnb.linalg``.


def _square(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _float(A: Tensor, name: str) -> None:
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.name.capitalize()}")


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _mH(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (the transpose for real tensors)."""
    return x.transpose(-2, -1).conj()


def _eye_like(A: Tensor, n: int) -> Tensor:
    return eye(n, dtype=A.dtype, device=A.device)


# -- inverse, determinants ----------------------------------------------------------------------
class LinalgInvExBackward0(Node):
    rule = "A: -at::matmul(inverse.mH(), at::matmul(grad, inverse.mH()))"
    __slots__ = ()
    on_tensors = True
    inputs = ("A",)
    outputs = ("inverse",)
    saves = ("inverse",)

    def backward(self, g):
        (inv_a,) = self.saved(g)
        inv_t = _mT(inv_a)
        return (-la.matmul(la.matmul(inv_t, g), inv_t),)


def inv(A: Tensor) -> Tensor:
    """The inverse of square matrices (batched)."""
    _square(A, "inv")
    _float(A, "inv")
    try:
        out = column_major(np.linalg.inv(A._data))
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not "
                           "be completed because the input matrix is singular.") from None
    return record(LinalgInvExBackward0, (A,), out)


inverse = inv


class LinalgDetBackward0(Node):
    rule = "A: linalg_det_backward(grad, result, A, LU, pivots)"
    __slots__ = ()
    on_tensors = True
    inputs = ("A",)
    outputs = ("result", "LU", "pivots")
    saves = ("A", "LU", "pivots", "result")

    def backward(self, g):
        A, _, _, d = self.saved(g)
        return ((g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inv(A)),)


def det(A: Tensor) -> Tensor:
    """The determinant of square matrices."""
    _square(A, "det")
    _float(A, "det")
    out = np.asarray(np.linalg.det(A._data))
    return record(LinalgDetBackward0, (A,), out, save=lambda: (0, *_lu_tensors(A, True), OUTPUT))


def _lu_tensors(A: Tensor, transposed: bool = False) -> tuple:
    """PyTorch's ``LU`` and ``pivots`` of ``A`` (of ``A.mT`` when ``transposed``: the
    determinants factor the transpose), what ``_linalg_det``/``_linalg_slogdet``/
    ``_linalg_solve_ex`` also return and save for backward."""
    a = A._data
    if transposed:
        a = np.swapaxes(a, -1, -2)
    if a.size == 0:  # (getrf's batch loop cannot reshape an empty batch)
        k = min(a.shape[-2:])
        return (wrap(column_major(a.copy())),
                wrap(np.zeros(a.shape[:-2] + (k,), dtype=np.int32)))
    lu_, pivots, _ = getrf(a)
    return wrap(column_major(lu_)), wrap(pivots)


class LinalgSlogdetBackward0(Node):
    rule = "A: slogdet_backward(grad_sign, grad_logabsdet, A, sign, LU, pivots)"
    __slots__ = ()
    on_tensors = True
    inputs = ("A",)
    outputs = ("sign", "logabsdet", "LU", "pivots")
    saves = ("A", "LU", "pivots", "sign")

    def backward(self, g_sign, g_logabs):
        A = self.saved_as(Tensor)[0]
        if g_logabs is None:
            return (None,)
        return (g_logabs.unsqueeze(-1).unsqueeze(-1) * _mT(inv(A)),)


_slogdet_result = collections.namedtuple("slogdet", ["sign", "logabsdet"])


def slogdet(A: Tensor):
    """``(sign, log|det|)`` of square matrices."""
    _square(A, "slogdet")
    _float(A, "slogdet")
    sign, logabs = np.linalg.slogdet(A._data)
    s, la_ = record(LinalgSlogdetBackward0, (A,), (np.asarray(sign), np.asarray(logabs)),
                    save=lambda: (0, *_lu_tensors(A, True), Output(0)))
    return _slogdet_result(s, la_)


def logdet(A: Tensor) -> Tensor:
    """``log(det(A))`` (NaN for a negative determinant)."""
    sign, logabs = slogdet(A)
    if A.dtype.is_complex:
        return sign.log() + logabs
    return ew.where(sign == -1.0, float("nan"), logabs)


# -- solves ------------------------------------------------------------------------------------
class LinalgSolveExBackward0(Node):
    rule = "A, B: linalg_solve_backward(grad, result, A, LU, pivots, left, grad_input_mask[1])"
    __slots__ = ("left", "vector")
    on_tensors = True
    inputs = ("A", "B")
    outputs = ("result", "LU", "pivots")
    saves = ("A", "LU", "pivots", "result", "left")

    def backward(self, g):
        A, _, _, X = self.saved(g)
        gB = solve(_mH(A), g)
        if self.vector:
            gA = -gB.unsqueeze(-1) * X.conj().unsqueeze(-2)
        else:
            gA = -la.matmul(gB, _mH(X))
        return gA, gB


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A @ X = B`` (``X @ A = B`` when ``left=False``)."""
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    _square(A, "solve")
    if not A.dtype.is_complex:
        _float(A, "solve")
    vector = _is_vector_rhs(A, B)
    a, b = A._data, B._data
    dtype = np.result_type(a, b)
    try:
        if vector:
            out = np.linalg.solve(a.astype(dtype), b.astype(dtype)[..., None])[..., 0]
        else:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            out = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]).astype(dtype),
                                  np.broadcast_to(b, batch + b.shape[-2:]).astype(dtype))
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.solve: The solver failed because the input matrix is "
                           "singular.") from None
    return record(LinalgSolveExBackward0, (A, B), column_major(out), attrs={"vector": vector, "left": True},
                  save=lambda: (0, *_lu_tensors(A), OUTPUT))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``solve`` with only the upper (or lower) triangle of ``A`` (its diagonal taken as ones
    when ``unitriangular``)."""
    if A.dim() < 2 or B.dim() < 2:
        T = mx.triu(A) if upper else mx.tril(A)
        return solve(T, B, left=left)  # (its errors)
    a = np.triu(A._data) if upper else np.tril(A._data)
    if unitriangular:
        a = a.copy()
        idx = np.arange(a.shape[-1])
        a[..., idx, idx] = 1
    b = B._data
    dtype = np.result_type(a, b)
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    try:
        out = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]).astype(dtype),
                              np.broadcast_to(b, batch + b.shape[-2:]).astype(dtype))
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.solve: The solver failed because the input matrix is "
                           "singular.") from None
    if not left:
        out = np.swapaxes(out, -1, -2)
    return record(LinalgSolveTriangularBackward0, (A, B), column_major(out),
                  attrs={"upper": upper, "left": left, "unitriangular": unitriangular})


class LinalgSolveTriangularBackward0(Node):
    rule = ("self, B: linalg_solve_triangular_backward(grad, self, result, upper, left, "
            "unitriangular, grad_input_mask)")
    __slots__ = ("left", "unitriangular", "upper")
    on_tensors = True
    inputs = ("self", "B")
    saves = ("self", "result", "left", "unitriangular", "upper")

    def backward(self, g):
        A, X = self.saved(g)
        upper, left = self.upper, self.left
        gB = solve_triangular(_mH(A), g, upper=not upper, left=left,
                              unitriangular=self.unitriangular)
        gA = None
        if self.needs(0):
            gA = -la.matmul(gB, _mH(X)) if left else -la.matmul(_mH(X), gB)
            k = int(self.unitriangular)
            gA = mx.triu(gA, k) if upper else mx.tril(gA, -k)
        return gA, gB if self.needs(1) else None


_triangular_result = collections.namedtuple("triangular_solve", ["solution",
                                                                 "cloned_coefficient"])


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False):
    """Deprecated form of ``linalg.solve_triangular``: ``(solution, A.clone())``."""
    with no_grad():
        M = _mT(A) if transpose else A
        x = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    X, clone = record(TriangularSolveBackward0, (b, A), (x._data, column_major(A._data.copy())),
                      attrs={"upper": upper, "transpose": transpose,
                             "unitriangular": unitriangular})
    return _triangular_result(X, clone)


class TriangularSolveBackward0(Node):
    rule = ("self, A: triangular_solve_backward(grad_solution, grad_cloned_coefficient, self, A, "
            "solution, upper, transpose, unitriangular, grad_input_mask)")
    __slots__ = ("transpose", "unitriangular", "upper")
    on_tensors = True
    inputs = ("self", "A")
    outputs = ("solution", "cloned_coefficient")
    saves = ("A", "self", "solution", "transpose", "unitriangular", "upper")

    def backward(self, g_x, g_m):
        A, _, X = self.saved(g_x if g_x is not None else g_m)
        gb = gA = None
        if g_x is not None:
            M = _mT(A) if self.transpose else A
            gb = solve_triangular(_mH(M), g_x, upper=self.upper == self.transpose,
                                  unitriangular=self.unitriangular)
            if self.needs(1):
                gA = -la.matmul(X, _mH(gb)) if self.transpose else -la.matmul(gb, _mH(X))
                k = int(self.unitriangular)
                gA = mx.triu(gA, k) if self.upper else mx.tril(gA, -k)
        if g_m is not None and self.needs(1):
            gA = g_m if gA is None else gA + g_m
        return gb if self.needs(0) else None, gA


# -- Cholesky ------------------------------------------------------------------------------------
class _CholeskyRule(Node):
    """PyTorch's ``cholesky_backward`` from the saved factor (``L`` or ``result``)."""
    __slots__ = ("upper",)
    on_tensors = True

    def backward(self, g):
        (L,) = self.saved(g)
        if self.upper:
            L, g = _mT(L), _mT(g)
        phi = mx.tril(la.matmul(_mT(L), g))
        phi = phi - 0.5 * mx.diag_embed(mx.diagonal(phi, 0, -2, -1))
        L_inv = inv(L)
        gA = la.matmul(la.matmul(_mT(L_inv), phi), L_inv)
        return (0.5 * (gA + _mT(gA)),)


class LinalgCholeskyExBackward0(_CholeskyRule):
    rule = "self: cholesky_backward(grad, upper, L)"
    __slots__ = ()
    inputs = ("self",)
    outputs = ("L",)
    saves = ("L", "upper")


class CholeskyBackward0(_CholeskyRule):
    """``torch.cholesky`` (deprecated): ``linalg.cholesky``'s rule, saving the factor as
    ``result``."""
    rule = "self: cholesky_backward(grad, upper, result)"
    __slots__ = ()
    inputs = ("self",)
    saves = ("result", "upper")


def _cholesky(A: Tensor, upper: bool, name: str, cls=LinalgCholeskyExBackward0) -> Tensor:
    _square(A, name)
    _float(A, name)
    try:
        L = np.linalg.cholesky(A._data)
    except np.linalg.LinAlgError:
        raise RuntimeError(f"linalg.{name}: The factorization could not be completed because the "
                           "input is not positive-definite.") from None
    if upper:
        L = np.swapaxes(L, -1, -2)
    return record(cls, (A,), column_major(L), attrs={"upper": upper})


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (lower) with ``A = L @ L.mT``."""
    return _cholesky(A, upper, "cholesky")


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky``: the lower (or upper) Cholesky factor."""
    return _cholesky(input, upper, "cholesky", CholeskyBackward0)


class CholeskySolveBackward0(Node):
    rule = ("self, input2: cholesky_solve_backward(grad, self, input2, result, upper, "
            "grad_input_mask)")
    __slots__ = ("upper",)
    on_tensors = True
    inputs = ("self", "input2")
    saves = ("input2", "self", "result", "upper")

    def backward(self, g):
        L, _, X = self.saved(g)
        gB = cholesky_solve(g, L, self.upper)
        gL = None
        if self.needs(1):
            common = la.matmul(gB, _mH(X))
            common = common + _mH(common)
            gL = -la.matmul(L, common) if self.upper else -la.matmul(common, L)
        return gB, gL


def _gram(L: np.ndarray, upper: bool) -> np.ndarray:
    """``L L^H`` (``U^H U`` when ``upper``): the matrix a Cholesky factor stands for."""
    Lh = np.conj(np.swapaxes(L, -1, -2))
    return Lh @ L if upper else L @ Lh


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``(L @ L.mH) @ X = B`` for a Cholesky factor ``L``."""
    a = _gram(L._data, upper)
    b = B._data
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = np.result_type(a, b)
    out = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]).astype(dtype),
                          np.broadcast_to(b, batch + b.shape[-2:]).astype(dtype))
    return record(CholeskySolveBackward0, (B, L), column_major(out), attrs={"upper": upper})


class CholeskyInverseBackward0(Node):
    rule = "self: cholesky_inverse_backward(grad, self, upper, result)"
    __slots__ = ("upper",)
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "result", "upper")

    def backward(self, g):
        L, inv_a = self.saved(g)
        common = la.matmul(inv_a, la.matmul(g + _mH(g), inv_a))
        return (-la.matmul(L, common) if self.upper else -la.matmul(common, L),)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``L @ L.mH`` from its Cholesky factor."""
    if L.dim() < 2 or L.shape[-1] != L.shape[-2]:
        _square(L, "cholesky_inverse")
    out = np.linalg.inv(_gram(L._data, upper)) if L._data.size else L._data.copy()
    return record(CholeskyInverseBackward0, (L,), column_major(out), attrs={"upper": upper})


# -- QR ------------------------------------------------------------------------------------------
def _qr_square_backward(Q, R, gQ, gR):
    """The gradient of ``A = Q R`` for ``A`` with at least as many rows as columns (reduced
    QR): ``(gQ + Q copyltu(M)) R^{-H}`` with ``M = R gR^H - gQ^H Q``."""
    M = la.matmul(gR, _mT(R)) if gR is not None else None
    if gQ is not None:
        M = -la.matmul(_mT(Q), gQ) if M is None else M - la.matmul(_mT(Q), gQ)
    M = mx.triu(M)
    M = M + _mT(M) - mx.diag_embed(mx.diagonal(M, 0, -2, -1))
    gA = la.matmul(Q, M)
    if gQ is not None:
        gA = gA + gQ
    return solve_triangular(_mT(R), gA, upper=False, left=False)


class LinalgQrBackward0(Node):
    rule = "self: (gQ + Q copyltu(M)) R^-H, M = R gR^H - gQ^H Q"
    __slots__ = ("mode",)
    on_tensors = True
    inputs = ("A",)
    outputs = ("Q", "R")
    saves = ("Q", "R", "mode")

    def backward(self, *grads):
        if self.mode == "r":  # R is the only output
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        Q, R = self.saved_as(Tensor)
        gQ, gR = grads
        m, n = Q.shape[-2], R.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            return (_qr_square_backward(Q, R, gQ, gR),)
        # Wide: A = [A1 | A2] with A1 = Q R1 (square) and A2 = Q R2, so R2's gradient reaches
        # A2 as Q gR2 and Q through A2 gR2^H = Q R2 gR2^H.
        R1, R2 = R[..., :, :m], R[..., :, m:]
        gR1 = gR2 = None
        if gR is not None:
            gR1, gR2 = gR[..., :, :m], gR[..., :, m:]
            extra = la.matmul(Q, la.matmul(R2, _mT(gR2)))
            gQ = extra if gQ is None else gQ + extra
        gA1 = _qr_square_backward(Q, R1, gQ, gR1)
        gA2 = la.matmul(Q, gR2) if gR2 is not None else 0 * R2
        return (cat([gA1, gA2], -1),)


_qr_result = collections.namedtuple("qr", ["Q", "R"])


def qr(A: Tensor, mode: str = "reduced"):
    """``(Q, R)`` with ``A = Q @ R``, ``Q`` orthonormal columns, ``R`` upper triangular."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    if A.dim() < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _float(A, "qr")
    q, r = np.linalg.qr(A._data, mode="complete" if mode == "complete" else "reduced")
    q, r = column_major(q), column_major(r)
    if mode == "r":  # R stays in the graph; its backward says why it cannot run
        q = np.zeros((0,), dtype=r.dtype)
        return _qr_result(wrap(q), record(LinalgQrBackward0, (A,), r, save=(),
                                          attrs={"mode": mode}))
    Q, R = record(LinalgQrBackward0, (A,), (q, r), attrs={"mode": mode})
    return _qr_result(Q, R)


def torch_qr(input: Tensor, some: bool = True):
    """``torch.qr``: reduced (``some=True``) or complete QR."""
    return qr(input, "reduced" if some else "complete")


# -- symmetric eigendecomposition ---------------------------------------------------------------
class LinalgEighBackward0(Node):
    rule = ("A: linalg_eig_backward(grads[0], grads[1], eigenvalues, eigenvectors, "
            "/*is_hermitian=*/true)")
    __slots__ = ()
    on_tensors = True
    inputs = ("A",)
    outputs = ("eigenvalues", "eigenvectors")
    saves = ("eigenvalues", "eigenvectors")

    def backward(self, gL, gV):
        L, V = self.saved_as(Tensor)
        if gV is None:
            inner = mx.diag_embed(gL)
        else:
            VhgV = la.matmul(_mT(V), gV)
            VhgV = 0.5 * (VhgV - _mT(VhgV))
            E = L.unsqueeze(-2) - L.unsqueeze(-1)
            n = L.shape[-1]
            eye = _eye_like(L, n)
            inner = VhgV / (E + eye) * (1 - eye)
            if gL is not None:
                inner = inner + mx.diag_embed(gL)
        return (la.matmul(la.matmul(V, inner), _mT(V)),)


_eigh_result = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])


def eigh(A: Tensor, UPLO: str = "L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices (only the
    ``UPLO`` triangle is read)."""
    _square(A, "eigh")
    _float(A, "eigh")
    w, v = np.linalg.eigh(A._data, UPLO=UPLO)
    L, V = record(LinalgEighBackward0, (A,), (w, column_major(v)))
    return _eigh_result(L, V)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of symmetric matrices, ascending."""
    return eigh(A, UPLO).eigenvalues


# -- SVD -----------------------------------------------------------------------------------------
class LinalgSvdBackward0(Node):
    rule = "A: svd_backward(full_matrices && grad_U.defined() ? grad_U.narrow_symint(-1, 0, S.sym_size(-1)) : grad_U, grad_S, ..., U, S, Vh)"
    __slots__ = ("S_sym_argsize_minus_1", "full_matrices")
    on_tensors = True
    inputs = ("A",)
    outputs = ("U", "S", "Vh")
    saves = ("S", "U", "Vh", "full_matrices", "S_sym_argsize_minus_1")

    def backward(self, gU, gS, gVh):
        S, U, Vh = self.saved_as(Tensor)
        k = S.shape[-1]
        if self.full_matrices and (gU is not None or gVh is not None):
            U, Vh = U[..., :, :k], Vh[..., :k, :]
            gU = gU[..., :, :k] if gU is not None else None
            gVh = gVh[..., :k, :] if gVh is not None else None
        V = _mT(Vh)
        if gU is None and gVh is None:
            return (la.matmul(U * gS.unsqueeze(-2), Vh),)
        eye = _eye_like(S, k)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
        F = (1 - eye) / (E + eye)
        inner = mx.diag_embed(gS) if gS is not None else 0 * eye
        if gU is not None:
            J = la.matmul(_mT(U), gU)
            inner = inner + F * (J - _mT(J)) * S.unsqueeze(-2)
        if gVh is not None:
            gV = _mT(gVh)
            K = la.matmul(_mT(V), gV)
            inner = inner + S.unsqueeze(-1) * (F * (K - _mT(K)))
        gA = la.matmul(la.matmul(U, inner), Vh)
        m, n = U.shape[-2], V.shape[-2]
        if gU is not None and m > k:
            proj = gU - la.matmul(U, la.matmul(_mT(U), gU))
            gA = gA + la.matmul(proj / S.unsqueeze(-2), Vh)
        if gVh is not None and n > k:
            gV = _mT(gVh)
            proj = gV - la.matmul(V, la.matmul(_mT(V), gV))
            gA = gA + la.matmul(U / S.unsqueeze(-2), _mT(proj))
        return (gA,)


_svd_result = collections.namedtuple("svd", ["U", "S", "Vh"])
_torch_svd_result = collections.namedtuple("svd", ["U", "S", "V"])


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U @ diag(S) @ Vh``, singular values descending."""
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _float(A, "svd")
    u, s, vh = np.linalg.svd(A._data, full_matrices=full_matrices)
    U, S, Vh = record(LinalgSvdBackward0, (A,), (column_major(u), s, column_major(vh)),
                      attrs={"full_matrices": full_matrices, "S_sym_argsize_minus_1": s.shape[-1]})
    return _svd_result(U, S, Vh)


def svdvals(A: Tensor, *, driver=None) -> Tensor:
    """The singular values, descending."""
    return linalg_svd(A, full_matrices=False).S


def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``)."""
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    if not compute_uv:  # PyTorch's: zeros of the full sizes, V the adjoint of a zero Vh
        *batch, m, n = input.shape
        return _torch_svd_result(zeros(*batch, m, m, dtype=input.dtype, device=input.device), S,
                                 _mT(zeros(*batch, n, n, dtype=input.dtype,
                                           device=input.device)))
    return _torch_svd_result(U, S, _mT(Vh))


class LinalgPinvBackward0(Node):
    """PyTorch's ``pinv_backward``: the derivative of the pseudo-inverse as a matrix function,
    which holds for rank-deficient input too (there the SVD's derivative is undefined)."""
    rule = "self: -P^H grad P^H + (I - A P) grad^H P P^H + P^H P grad^H (I - P A), P = result"

    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        A, pinvA = self.saved(g)
        return (_pinv_backward(g, pinvA, A),)


def _pinv_backward(g, pinvA, A):
    """PyTorch's ``pinv_backward``: the gradient of ``A`` from that of ``pinv(A)``."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gh = _mH(pinvA), _mH(g)
    if m <= n:
        K = la.matmul(gh, pinvA)
        KpinvAh = la.matmul(K, pinvAh)
        return (-_mH(la.matmul(pinvA, K)) + KpinvAh
                - la.matmul(la.matmul(A, pinvA), KpinvAh)
                + la.matmul(la.matmul(pinvAh, pinvA), gh - la.matmul(K, A)))
    K = la.matmul(pinvA, gh)
    pinvAhK = la.matmul(pinvAh, K)
    return (-_mH(la.matmul(K, pinvA))
            + la.matmul(la.matmul(gh - la.matmul(A, K), pinvA), pinvAh)
            + pinvAhK - la.matmul(la.matmul(pinvAhK, pinvA), A))


def _pinv_array(a, atol, rtol, hermitian: bool):
    """The pseudo-inverse of ``a``: singular values (absolute eigenvalues when ``hermitian``)
    at or below ``max(atol, rtol * largest)`` are dropped."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        s, u, vh = np.abs(w), v, np.swapaxes(v * np.sign(w)[..., None, :], -1, -2)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    smax = s.max(axis=-1, keepdims=True, initial=0.0)
    tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * smax)
    keep = s > tol
    s_inv = np.where(keep, 1 / np.where(keep, s, 1.0), 0.0)
    return np.swapaxes(vh, -1, -2) * s_inv[..., None, :] @ np.swapaxes(u, -1, -2)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below the tolerance dropped)."""
    if A.dim() < 2 or not A.dtype.is_floating_point:
        shape = ", ".join(str(s) for s in A.shape)
        raise RuntimeError(f"linalg.pinv({scalar_type_name(A._data.dtype)}{{[{shape}]}}): "
                           "expected a tensor with 2 or more dimensions of float, double, cfloat "
                           "or cdouble types")
    a = A._data
    atol, rtol = (t._data if isinstance(t, Tensor) else t for t in (atol, rtol))
    if rtol is None:
        # PyTorch's default: eps * max(m, n), or none at all where a positive atol is given
        default = max(a.shape[-2:]) * np.finfo(a.dtype).eps
        rtol = default if atol is None else np.where(np.asarray(atol) > 0, 0.0, default)
    atol = 0.0 if atol is None else atol
    out = _pinv_array(a, atol, rtol, hermitian).astype(a.dtype, copy=False)
    return record(LinalgPinvBackward0, (A,), out)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with a relative cutoff."""
    return pinv(input, rtol=rcond)


# -- matrix functions -----------------------------------------------------------------------------
def _expm(a: np.ndarray) -> np.ndarray:
    """``exp`` of (batched) square matrices: scaling and squaring with an 18-term Taylor series,
    accurate to double precision for every norm."""
    norm = np.abs(a).sum(axis=-2).max(axis=-1, initial=0.0) if a.size else np.zeros(a.shape[:-2])
    s = int(max(0, math.ceil(math.log2(float(np.max(norm, initial=0.0)) / 0.5)))) if \
        np.max(norm, initial=0.0) > 0.5 else 0
    x = a / (2.0 ** s)
    n = a.shape[-1]
    term = np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape).copy()
    out = term.copy()
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


class LinalgMatrixExpBackward0(Node):
    """The gradient is the top-right block of ``exp([[A^T, G], [0, A^T]])``."""
    rule = "self: the matrix exp of the block [[A^H, grad], [0, A^H]]'s upper-right block"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (A,) = self.saved(g)
        n = A.shape[-1]
        At = _mT(A)
        top = cat([At, g], -1)
        bottom = cat([0 * At, At], -1)
        big = matrix_exp(cat([top, bottom], -2))
        return (big[..., :n, n:],)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential."""
    _square(A, "matrix_exp")
    return record(LinalgMatrixExpBackward0, (A,), _expm(A._data))


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A @ A @ ... @ A`` (``n`` times; the inverse's power for negative ``n``)."""
    _square(A, "matrix_power")
    if n == 0:  # the identity, still in A's graph (with a zero gradient), as in PyTorch
        return A.clone().copy_(_eye_like(A, A.shape[-1]).expand(*A.shape))
    if n == 1:
        return A.clone()
    if n == -1:
        return inv(A)
    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return la.matmul(a, a)
    if n == 3:
        return la.matmul(la.matmul(a, a), a)
    # PyTorch's binary decomposition: squares of a, from the least significant bit up
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else la.matmul(z, z)
        if bit:
            result = z if result is None else la.matmul(result, z)
    return result


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (first and last may be vectors), in the cheapest
    order: PyTorch's (three by comparing the two costs, more by the matrix-chain order), each
    product one ``mm``, the result viewed to its shape."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    if first_vec:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vec:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    shape = ([] if first_vec else [tensors[0].shape[0]]) + \
        ([] if last_vec else [tensors[-1].shape[1]])
    n = len(tensors)
    if n == 2:
        out = la.mm(tensors[0], tensors[1])
    elif n == 3:
        a, b = tensors[0].shape
        c, d = tensors[2].shape
        if (a * c) * (b + d) > (b * d) * (a + c):
            out = la.mm(tensors[0], la.mm(tensors[1], tensors[2]))
        else:
            out = la.mm(la.mm(tensors[0], tensors[1]), tensors[2])
    else:
        out = _chain_product(tensors, _chain_order(tensors), 0, n - 1)
    return out.reshape(shape)


def _chain_order(tensors) -> list:
    """``split[i][j]``: where the cheapest product of tensors ``i..j`` splits."""
    n = len(tensors)
    p = [t.shape[0] for t in tensors] + [tensors[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(tensors, split, i: int, j: int):
    if i == j:
        return tensors[i]
    k = split[i][j]
    # the right factor first: the order PyTorch's build evaluates the two arguments of its
    # ``at::mm(left, right)`` in (its saved tensors are packed in that order)
    right = _chain_product(tensors, split, k + 1, j)
    return la.mm(_chain_product(tensors, split, i, k), right)


# -- norms -----------------------------------------------------------------------------------------
def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """Frobenius, nuclear, 2-, 1- and inf-norms of matrices."""
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           + " ".join(str(d) for d in dim))
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return red.norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        # PyTorch's: the two dims moved last (a permute, even when they already are)
        perm = [d for d in range(A.dim()) if d not in (d0, d1)] + [d0, d1]
        s = svdvals(A.permute(*perm))
        reduce = red.sum if ord == "nuc" else (red.amax if ord == 2 else red.amin)
        out = reduce(s, -1, keepdim=keepdim)
        if keepdim:
            out = out.unsqueeze(-1).permute(*np.argsort(perm).tolist())
        return out
    if ord in (1, -1, math.inf, -math.inf):
        summed_dim, reduce_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = red.sum(ew.abs(A), summed_dim, keepdim=True)
        out = red.amax(sums, reduce_dim, keepdim=True) if ord > 0 else red.amin(
            sums, reduce_dim, keepdim=True)
        return out if keepdim else out.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``linalg.norm``: a vector norm, or a matrix norm for a 2-D ``dim`` or string ``ord``."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return red.norm(A if dtype is None else A.to(dtype), 2, dim, keepdim)
    if dim is None:
        if A.dim() == 1:
            return red.norm(A if dtype is None else A.to(dtype), ord, None, keepdim)
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return red.norm(A if dtype is None else A.to(dtype), ord, dim, keepdim)


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number in the ``p`` norm (2 by default)."""
    if p in (None, 2, -2):
        s = svdvals(A)  # sorted in descending order
        hi, lo = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (hi / lo if p in (None, 2) else lo / hi).squeeze(-1)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product along ``dim`` (broadcasting the rest), ``x`` conjugated; two vectors
    go through ``vdot``, as in PyTorch."""
    if x.dim() == 1 and y.dim() == 1:
        wrap_dim(dim, 1)
        return mx.vdot(x, y)
    return red.sum(x.conj() * y, dim)


def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    """The 3-D cross product along ``dim`` (the first dimension of size 3 when None, as the
    deprecated ``torch.cross``)."""
    shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    if dim is None:
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim] if input.dim() > dim else 1} and "
                           f"{other.shape[dim] if other.dim() > dim else 1}")
    return _cross(input, other, dim)


class LinalgCrossBackward0(Node):
    rule = "self: at::linalg_cross(other.conj(), grad, dim); other: at::linalg_cross(grad, self.conj(), dim)"
    __slots__ = ("dim",)
    on_tensors = True
    saves = ("dim", "other", "self")
    saved_when: ClassVar[dict] = {"other": ("self",), "self": ("other",)}
    unsigned = ("dim",)

    def backward(self, g):
        other, x = self.saved(g)
        return (_cross(other.conj(), g, self.dim) if self.needs(0) else None,
                _cross(g, x.conj(), self.dim) if self.needs(1) else None)


def _cross(input: Tensor, other: Tensor, dim: int) -> Tensor:
    """PyTorch's ``linalg_cross`` kernel (``dim`` checked, kept as given: the node saves it)."""
    a, b = input._data, other._data
    a, b = np.broadcast_arrays(a, b)
    axis = wrap_dim(dim, a.ndim)
    a0, a1, a2 = (np.take(a, i, axis) for i in range(3))
    b0, b1, b2 = (np.take(b, i, axis) for i in range(3))
    out = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)
    return record(LinalgCrossBackward0, (input, other), out, attrs={"dim": dim})


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``linalg.cross``: the cross product along ``dim`` (default the last)."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return cross(input, other, dim)


def vander(x: Tensor, *, N=None) -> Tensor:
    """The Vandermonde matrix ``[1, x, x**2, ...]`` (increasing powers) of the last dimension."""
    if x.dim() == 0:
        x = x.unsqueeze(-1)
    n = x.shape[-1] if N is None else N
    if n < 1:
        return x.unsqueeze(-1)[..., :0]
    x_ = x.unsqueeze(-1)
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        x_ = x_.to(_dtype.int64)
    first = ones(*x.shape, 1, dtype=x_.dtype, device=x.device)
    if n == 1:
        return first
    # PyTorch's composite: [1, cumprod of x repeated]
    return cat([first, red.cumprod(x_.expand(*x.shape, n - 1), -1)], -1)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||``.

    The solution is ``pinv(A) @ B`` (PyTorch's derivative is exactly that of this product).
    The other outputs follow LAPACK's drivers as PyTorch returns them: ``rank`` from all but
    ``gels``, singular values from ``gelsd``/``gelss``, and the squared residuals only for tall
    ``A`` with a driver other than ``gelsy`` (and full rank for ``gelsd``/``gelss``); an
    output a driver does not give is empty (shape ``[0]``).
    """
    driver = "gelsy" if driver is None else driver
    if A.dim() < 2 or B.dim() < 1:
        raise RuntimeError("gradnb.linalg.lstsq: input must have at least 2 dimensions.")
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("gradnb.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("gradnb.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2], A.shape[-1]
    a = A._data
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    b = Bm._data
    # LAPACK solves in place of B, a max(m, n)-row buffer: the solution is its top n rows
    x = column_major(_pinv_array(a, 0.0, max(m, n) * np.finfo(a.dtype).eps, False) @ b,
                     max(m, n))
    batch = tuple(A.shape[:-2])
    s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(batch + (0,), a.dtype)
    smax = s.max(axis=-1, keepdims=True, initial=0.0)
    rank_array = (s > rcond * smax).sum(axis=-1).astype(np.int64)
    full_rank = bool(np.all(rank_array == n))
    if m > n and driver != "gelsy" and (driver == "gels" or full_rank):
        r = a @ x - b
        residuals = (r * r).sum(axis=-2)
    else:
        residuals = np.zeros((0,), dtype=a.dtype)
    rank = np.zeros((0,), np.int64) if driver == "gels" else rank_array
    singular_values = s if driver in ("gelsd", "gelss") else np.zeros((0,), dtype=a.dtype)
    X, residuals, rank, singular_values = record(
        LinalgLstsqBackward0, (A, B), (x[..., 0] if vector else x, residuals, rank,
                                       singular_values))
    return _lstsq_result(X, residuals, wrap(rank._data), wrap(singular_values._data))


class LinalgLstsqBackward0(Node):
    rule = "self, b: linalg_lstsq_backward(grads[0], grads[1], self, b, solution, grad_input_mask)"
    __slots__ = ()
    on_tensors = True
    inputs = ("self", "b")
    outputs = ("solution", "residuals", "rank", "singular_values")
    saves = ("b", "self", "solution")

    def backward(self, gX, gL, g_rank=None, g_s=None):
        B, A, X = self.saved(gX if gX is not None else gL)
        vector = B.dim() == A.dim() - 1
        if vector:
            B, X = B.unsqueeze(-1), X.unsqueeze(-1)
            gX = None if gX is None else gX.unsqueeze(-1)
        gA = gB = None
        if gX is not None:
            pinvA = pinv(A)
            if self.needs(0):
                gA = _pinv_backward(la.matmul(gX, _mH(B)), pinvA, A)
            if self.needs(1):
                gB = la.matmul(_mH(pinvA), gX)
        if gL is not None and gL.numel() > 0:  # residuals = ||A X - B||^2, X optimal
            res = (la.matmul(A, X) - B) * gL.unsqueeze(-2)
            if self.needs(0):
                gA_L = 2 * la.matmul(res, _mH(X))
                gA = gA_L if gA is None else gA + gA_L
            if self.needs(1):
                gB = -2 * res if gB is None else gB - 2 * res
        if vector and gB is not None:
            gB = gB.squeeze(-1)
        return gA, gB


_lstsq_result = collections.namedtuple("lstsq", ["solution", "residuals", "rank",
                                                 "singular_values"])


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its last dims to its first ``ind``."""
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = int(np.prod(A.shape[:ind]))
    return inv(A.reshape(rows, -1)).reshape(out_shape)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.dim()) = B``."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        rest = [d for d in range(A.dim()) if d not in dims]
        A = A.permute(*rest, *dims)
    x_shape = tuple(A.shape[B.dim():])
    n = int(np.prod(B.shape))
    return solve(A.reshape(n, -1), B.reshape(n)).reshape(x_shape)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``linalg.diagonal``: the diagonal of the last two dimensions by default."""
    return mx.diagonal(A, offset, dim1, dim2)


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``(inverse, info)`` (info zeros: gradnb raises on singular input)."""
    out = inv(A)
    return _ex_result(out, wrap(np.zeros(tuple(A.shape[:-2]), dtype=np.int32)))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``."""
    out = linalg_cholesky(A, upper=upper)
    return _ex_result(out, wrap(np.zeros(tuple(A.shape[:-2]), dtype=np.int32)))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """``(solution, info)``."""
    out = solve(A, B, left=left)
    return _ex_result(out, wrap(np.zeros(tuple(A.shape[:-2]), dtype=np.int32)))


_ex_result = collections.namedtuple("ex", ["result", "info"])


TENSOR_METHODS = {
    "mH": property(_mH, doc="The last two dimensions swapped (conjugated for complex)."),
    "H": property(lambda self: _mH(self) if self.dim() == 2 else self.t(), doc="The conjugate transpose of a matrix."),
    "cholesky": cholesky, "cholesky_inverse": cholesky_inverse, "cholesky_solve": cholesky_solve,
    "det": det, "inverse": inverse, "logdet": logdet, "matrix_exp": matrix_exp,
    "matrix_power": matrix_power, "pinverse": pinverse, "slogdet": slogdet, "svd": svd,
    "triangular_solve": triangular_solve, "cross": cross,
    "qr": torch_qr,
}
