"""Linear algebra beyond products: inverse, determinants, solves, Cholesky, QR, symmetric
eigendecomposition, SVD, matrix exponential, pseudo-inverse, matrix norms (real and complex
dtypes).

Each primitive pairs a NumPy forward with a derivative written with gradnb ops (``on_tensors``),
including the primitives themselves (the derivative of ``inv`` uses ``inv``'s output, that of
``matrix_exp`` is a ``matrix_exp``), so gradients of every order come for free. The formulas
are PyTorch's (``FunctionsManual.cpp``), conjugate transposes and all.

A matrix a routine fails on (singular, not positive-definite, non-finite for the SVD) raises
PyTorch's ``LinAlgError`` with its message (``lapack.check_errors``); the ``_ex`` variants
return LAPACK's ``info`` instead, and their result is what LAPACK leaves (infinities for a
singular matrix), as PyTorch's.
"""

from __future__ import annotations

import collections
import math
import warnings
from typing import ClassVar

import numpy as np

from .._core import dtype as _dtype
from .._core.grad_mode import is_grad_enabled, no_grad
from .._core.graph import OUTPUT, Node, Output
from .._core.record import record
from . import elementwise as ew
from . import linalg as la
from . import matrices as mx
from . import reductions as red
from ._args import scalar_type_name, wrap_dim
from ._common import Tensor, wrap
from .creation import eye, ones, zeros
from .indexing import index_put
from .lapack import check_errors, column_major, getrf, getrs, potf2, trsm
from .lapack import conj_transpose as _adjoint
from .shape import cat, movedim

__all__ = [
    "adjoint", "cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
    "matrix_exp", "matrix_power", "pinverse", "slogdet", "svd", "triangular_solve",
]
# ``gradnb.qr`` and ``gradnb.cross`` are ``torch_qr`` and ``cross`` (see gradnb/__init__.py);
# the ``linalg`` forms live in ``gradnb.linalg``.


def _square(A: Tensor, name: str, api_name: str | None = None) -> None:
    """PyTorch's ``squareCheckInputs``, its messages starting ``linalg.<name>`` (or
    ``api_name``)."""
    where = f"linalg.{name}" if api_name is None else api_name
    if A.dim() < 2:
        raise RuntimeError(f"{where}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{where}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _float(A: Tensor, name: str) -> None:
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(A._data.dtype)}")


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _mH(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (the transpose for real tensors)."""
    return x.transpose(-2, -1).conj()


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions, as ``input.mH``."""
    if input._data.ndim == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return input.conj()
    if input._data.ndim == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    return _mH(input)


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
        inv_h = _mH(inv_a)
        return (-la.matmul(inv_h, la.matmul(g, inv_h)),)


def _no_info(a: np.ndarray) -> np.ndarray:
    return np.zeros(a.shape[:-2], dtype=np.int32)


def _solve_arrays(a: np.ndarray, b: np.ndarray):
    """``(X, info)`` with ``A X = B`` (matrices, batches broadcast): NumPy's solver, and where it
    finds ``A`` singular LAPACK's ``getrf``/``getrs``, whose ``info`` (per batch of ``A``) is
    PyTorch's, as is their result for a singular ``A`` (infinities and NaNs)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = np.result_type(a, b)
    try:
        out = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]).astype(dtype),
                              np.broadcast_to(b, batch + b.shape[-2:]).astype(dtype))
        return out, _no_info(a)
    except np.linalg.LinAlgError:
        lu_, pivots, info = getrf(a.astype(dtype))
        return getrs(lu_, pivots, b), info


def _inv_arrays(a: np.ndarray):
    """``(inverse, info)`` of (batches of) square ``a``: ``solve(A, I)``, as PyTorch's."""
    if a.size == 0:
        return a.copy(), _no_info(a)
    try:
        return np.linalg.inv(a), _no_info(a)
    except np.linalg.LinAlgError:
        return _solve_arrays(a, np.eye(a.shape[-1], dtype=a.dtype))


def _inv(A: Tensor, api_name: str | None, is_matrix: bool | None = None):
    """``(inverse, info)``; a singular ``A`` raises as ``api_name`` (None: no check, as
    ``inv_ex``), ``tensorinv``'s never naming a batch element."""
    _square(A, "inv")
    _float(A, "inv")
    out, info = _inv_arrays(A._data)
    if api_name is not None:
        check_errors(info, api_name, A.dim() == 2 if is_matrix is None else is_matrix)
    return record(LinalgInvExBackward0, (A,), column_major(out)), info


def inv(A: Tensor) -> Tensor:
    """The inverse of square matrices (batched)."""
    return _inv(A, "linalg.inv")[0]


inverse = inv


def _lu_adjoint_solve(A: Tensor, LU: Tensor, pivots: Tensor, scale: Tensor,
                      nudge: bool) -> Tensor:
    """PyTorch's first-order solve of ``A^H G = scale I`` with the ``LU`` the op saved (of
    ``A^T`` for a real ``A``, where the solve is then a plain one); ``nudge`` moves a zero
    pivot to eps, as ``det``'s rule does (det is C^1: its gradient at a singular ``A`` is the
    limit)."""
    lu_ = LU._data
    n = lu_.shape[-1]
    if nudge:
        lu_ = lu_.copy()
        k = np.arange(n)
        diagonal = lu_[..., k, k]
        eps = np.finfo(_dtype.real_of(lu_.dtype)).eps
        lu_[..., k, k] = np.where(diagonal == 0, eps, diagonal)
    rhs = np.asarray(scale._data)[..., None, None] * np.eye(n, dtype=lu_.dtype)
    return wrap(getrs(lu_, pivots._data, rhs, adjoint=A.dtype.is_complex))


def _masked_fmap(mask: np.ndarray, f_true, f_false, t: Tensor, *ts: Tensor) -> Tensor:
    """PyTorch's ``masked_fmap``: ``f_true`` of the batch elements where ``mask`` holds,
    ``f_false`` of the others, put together in a new tensor (one call when all agree)."""
    if mask.all():
        return f_true(t, *ts)
    if not mask.any():
        return f_false(t, *ts)
    keep, drop = wrap(mask), wrap(~mask)
    out = index_put(t.new_zeros(t.shape), (keep,), f_true(t[keep], *(x[keep] for x in ts)))
    return index_put(out, (drop,), f_false(t[drop], *(x[drop] for x in ts)))


def _det_nonsingular_grad(A: Tensor, scale: Tensor, g: Tensor) -> Tensor:
    """``G`` with ``A^H G = conj(det) grad I``."""
    return solve(_mH(A), scale.unsqueeze(-1).unsqueeze(-1) * _eye_like(A, A.shape[-1]))


def _det_singular_grad(A: Tensor, scale: Tensor, g: Tensor) -> Tensor:
    """The gradient of ``det`` at any (also singular) ``A`` from its SVD: the cofactors,
    ``U diag(prod of the other singular values) Vh`` times ``conj(det U det Vh)``."""
    U, S, Vh = linalg_svd(A)
    alpha = (det(U) * det(Vh)).conj() * g
    return la.matmul(U * _prod_others(alpha.unsqueeze(-1), S).unsqueeze(-2), Vh)


def _prod_others(g: Tensor, s: Tensor) -> Tensor:
    """PyTorch's ``prod_safe_zeros_backward`` over the last dimension: ``g`` times the product
    of the other entries of ``s`` (exclusive cumulative products, safe for zeros)."""
    n = s.shape[-1]
    if n == 1:
        return g.expand(*s.shape)
    one = ones(*s.shape[:-1], 1, dtype=s.dtype, device=s.device)
    before = red.cumprod(cat([one, s.narrow(-1, 0, n - 1)], -1), -1)
    after = red.cumprod(cat([one, s.narrow(-1, 1, n - 1).flip(-1)], -1), -1).flip(-1)
    return g * (before * after).conj()


class LinalgDetBackward0(Node):
    rule = "A: linalg_det_backward(grad, result, A, LU, pivots)"
    __slots__ = ()
    on_tensors = True
    inputs = ("A",)
    outputs = ("result", "LU", "pivots")
    saves = ("A", "LU", "pivots", "result")

    def backward(self, g):
        A, LU, pivots, d = self.saved(g)
        if A.numel() == 0:
            return (None,)
        scale = g * d.conj()
        if not is_grad_enabled():
            return (_lu_adjoint_solve(A, LU, pivots, scale, nudge=True),)
        # Differentiable again: a solve where det is away from 0, the SVD's cofactors near it,
        # batch element by batch element
        eps = np.finfo(_dtype.real_of(A._data.dtype)).eps
        singular = np.abs(d._data) < 100 * eps
        return (_masked_fmap(singular, _det_singular_grad, _det_nonsingular_grad, A, scale, g),)


def det(A: Tensor) -> Tensor:
    """The determinant of square matrices."""
    _square(A, "det")
    _float(A, "det")
    with np.errstate(invalid="ignore"):  # a NaN in, a NaN out, silently (as PyTorch)
        out = np.asarray(np.linalg.det(A._data))
    return record(LinalgDetBackward0, (A,), out,
                  save=lambda: (0, *_lu_tensors(A, not A.dtype.is_complex), OUTPUT))


def _lu_tensors(A: Tensor, transposed: bool = False) -> tuple:
    """PyTorch's ``LU`` and ``pivots`` of ``A`` (of ``A.mT`` when ``transposed``: the
    determinants of a real ``A`` factor the transpose), what ``_linalg_det``/
    ``_linalg_slogdet``/``_linalg_solve_ex`` also return and save for backward."""
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
        A, LU, pivots, sign = self.saved_as(Tensor)
        complex_ = A.dtype.is_complex
        if g_logabs is None and (g_sign is None or not complex_):
            return (None,)  # a real sign's gradient is zero
        g = g_logabs
        if complex_:
            # the sign's part: Re(conj(g_sign) d sign) = -Im(conj(g_sign) sign) Im(tr(A^-1 dA))
            if g_sign is not None:
                turn = -1j * (g_sign.conj() * sign).imag
                g = turn if g is None else g + turn
            else:
                g = g.to(A.dtype)
        if not is_grad_enabled():
            return (_lu_adjoint_solve(A, LU, pivots, g, nudge=False),)
        return (solve(_mH(A), g.unsqueeze(-1).unsqueeze(-1) * _eye_like(A, A.shape[-1])),)


_slogdet_result = collections.namedtuple("slogdet", ["sign", "logabsdet"])


def slogdet(A: Tensor):
    """``(sign, log|det|)`` of square matrices."""
    _square(A, "slogdet")
    _float(A, "slogdet")
    sign, logabs = np.linalg.slogdet(A._data)
    s, la_ = record(LinalgSlogdetBackward0, (A,), (np.asarray(sign), np.asarray(logabs)),
                    save=lambda: (0, *_lu_tensors(A, not A.dtype.is_complex), Output(0)))
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
        if is_grad_enabled():
            gB = solve(_mH(A), g)
        else:  # PyTorch's first-order rule reuses the LU: a singular A gives infinities
            gB = wrap(_solve_data(_adjoint(A._data), g._data, self.vector)[0])
        if self.vector:
            gA = -gB.unsqueeze(-1) * X.conj().unsqueeze(-2)
        else:
            gA = -la.matmul(gB, _mH(X))
        return gA, gB


def _same_dtype(x: Tensor, y: Tensor, where: str, x_name: str, y_name: str) -> None:
    """PyTorch's check that a solver's two operands share a dtype."""
    if x.dtype != y.dtype:
        raise RuntimeError(f"{where}Expected {x_name} and {y_name} to have the same dtype, but "
                           f"found {x_name} of type {scalar_type_name(x._data.dtype)} and "
                           f"{y_name} of type {scalar_type_name(y._data.dtype)} instead")


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_data(a: np.ndarray, b: np.ndarray, vector: bool):
    """``(X, info)`` of ``_solve_arrays``, ``b`` a (batch of) vector(s) when ``vector``."""
    if vector:
        out, info = _solve_arrays(a, b[..., None])
        return out[..., 0], info
    return _solve_arrays(a, b)


def _solve(A: Tensor, B: Tensor, left: bool, api_name: str | None):
    """``(X, info)``; a singular ``A`` raises as ``api_name`` (None: no check, as ``solve_ex``)."""
    if not left:  # X A = B is A^T X^T = B^T
        X, info = _solve(_mT(A), _mT(B), True, api_name)
        return _mT(X), info
    _square(A, "solve")
    _float(A, "solve")
    _same_dtype(A, B, "linalg.solve: ", "A", "B")
    vector = _is_vector_rhs(A, B)
    out, info = _solve_data(A._data, B._data, vector)
    if api_name is not None:
        check_errors(info, api_name, A.dim() == 2)
    X = record(LinalgSolveExBackward0, (A, B), column_major(out),
               attrs={"vector": vector, "left": True}, save=lambda: (0, *_lu_tensors(A), OUTPUT))
    return X, info


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A @ X = B`` (``X @ A = B`` when ``left=False``)."""
    return _solve(A, B, left, "gradnb.linalg.solve")[0]


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``solve`` with only the upper (or lower) triangle of ``A`` (its diagonal taken as ones
    when ``unitriangular``)."""
    _check_triangular_solve(A, B, left)
    a, b = A._data, B._data
    if b.dtype != a.dtype:  # B is cast to A's dtype (PyTorch's), its imaginary part dropped
        if b.dtype.kind == "c" and a.dtype.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=2)
            b = b.real
        b = b.astype(a.dtype)
    if not left:  # X A = B is A^T X^T = B^T, A^T triangular the other way
        a, b, upper_ = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper
    else:
        upper_ = upper
    out = trsm(a, b, upper_, unit=unitriangular)  # a zero on A's diagonal: inf/NaN, no error
    if not left:
        out = np.swapaxes(out, -1, -2)
    return record(LinalgSolveTriangularBackward0, (A, B), column_major(out),
                  attrs={"upper": upper, "left": left, "unitriangular": unitriangular})


def _check_triangular_solve(A: Tensor, B: Tensor, left: bool) -> None:
    """PyTorch's checks of ``linalg.solve_triangular``'s arguments."""
    where = "linalg.solve_triangular"
    for name, t in (("A", A), ("B", B)):
        if t.dim() < 2:
            raise RuntimeError(f"{where}: The input tensor {name} must have at least 2 "
                               "dimensions.")
    _square(A, "", where)
    for t in (A, B):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for "
                                      f"'{scalar_type_name(t._data.dtype)}'")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{where}: Incompatible shapes of A and B for the equation {equation} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")


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
    if b.dtype != A.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(b._data.dtype)} and A of type "
                           f"{scalar_type_name(A._data.dtype)} instead.")
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
                gA = (-la.matmul(X.conj(), _mT(gb)) if self.transpose
                      else -la.matmul(gb, _mH(X)))
                k = int(self.unitriangular)
                gA = mx.triu(gA, k) if self.upper else mx.tril(gA, -k)
        if g_m is not None and self.needs(1):
            gA = g_m if gA is None else gA + g_m
        return gb if self.needs(0) else None, gA


# -- Cholesky ------------------------------------------------------------------------------------
class _CholeskyRule(Node):
    """PyTorch's ``cholesky_backward`` from the saved factor (``L`` or ``result``):
    ``gA = L^{-H} pi*(tril(L^H gL)) L^{-1}`` with ``pi*(X) = (X + X^H - diag(X)) / 2`` (for the
    upper factor, ``L = U^H``)."""
    __slots__ = ("upper",)
    on_tensors = True

    def backward(self, g):
        (L,) = self.saved(g)
        if self.upper:
            L, g = _mH(L), _mH(g)
        gA = mx.tril(la.matmul(_mH(L), g))
        gA = 0.5 * (gA + _mH(mx.tril(gA, -1)))
        gA = solve_triangular(_mH(L), gA, upper=True, left=True)
        return (solve_triangular(L, gA, upper=False, left=False),)


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


def _cholesky_arrays(a: np.ndarray, upper: bool):
    """``(factor, info)``: ``L`` with ``A = L L^H`` from ``A``'s lower triangle, or ``U`` with
    ``A = U^H U`` from its upper one, as LAPACK's ``potrf``; where ``A`` is not
    positive-definite (or holds a NaN) ``info`` says where, and the factor is what LAPACK
    leaves."""
    if upper:  # U^H U = A from A's upper triangle: the lower factor of A^H
        a = _adjoint(a)
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    try:
        L = np.linalg.cholesky(a)
        failed = not np.isfinite(L).all()  # NumPy lets a NaN through
    except np.linalg.LinAlgError:
        failed = True
    if failed:
        L, info = potf2(a)
    return (_adjoint(L) if upper else L), info


def _cholesky(A: Tensor, upper: bool, api_name: str | None, cls=LinalgCholeskyExBackward0):
    """``(factor, info)``; a matrix that is not positive-definite raises as ``api_name``
    (None: no check, as ``cholesky_ex``)."""
    if cls is CholeskyBackward0:  # torch.cholesky's own checks
        _square(A, "", "cholesky")
        if not (A.dtype.is_floating_point or A.dtype.is_complex):
            raise NotImplementedError("\"cholesky_cpu\" not implemented for "
                                      f"'{scalar_type_name(A._data.dtype)}'")
    _square(A, "cholesky")
    _float(A, "cholesky")
    L, info = _cholesky_arrays(A._data, upper)
    if api_name is not None:
        check_errors(info, api_name, A.dim() == 2)
    return record(cls, (A,), column_major(L), attrs={"upper": upper}), info


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (lower) with ``A = L @ L.mH`` (``U = L.mH`` when ``upper``)."""
    return _cholesky(A, upper, "linalg.cholesky")[0]


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky``: the lower (or upper) Cholesky factor."""
    return _cholesky(input, upper, "cholesky", CholeskyBackward0)[0]


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


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``(L @ L.mH) @ X = B`` (``(U.mH @ U) @ X = B`` when ``upper``) for a Cholesky
    factor, of which only the triangle is read: two triangular solves, as LAPACK's ``potrs``."""
    if B.dtype != L.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(B._data.dtype)} and A of type "
                           f"{scalar_type_name(L._data.dtype)} instead.")
    lower = _adjoint(L._data) if upper else L._data
    y = trsm(lower, B._data, upper=False)
    out = trsm(_adjoint(lower), y, upper=True)
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
    """The inverse of ``L @ L.mH`` (``U.mH @ U`` when ``upper``) from its Cholesky factor, of
    which only the triangle is read."""
    _square(L, "", "cholesky_inverse")
    if not (L.dtype.is_floating_point or L.dtype.is_complex):
        raise NotImplementedError("\"cholesky_inverse_out_cpu\" not implemented for "
                                  f"'{scalar_type_name(L._data.dtype)}'")
    out, info = _potri(L._data, upper)
    check_errors(info, "cholesky_inverse", L.dim() == 2)
    return record(CholeskyInverseBackward0, (L,), column_major(out), attrs={"upper": upper})


def _potri(factor: np.ndarray, upper: bool):
    """``(inverse, info)`` as LAPACK's ``potri``: the factor's inverse ``M`` (``trtri``; ``info``
    its first zero diagonal entry), then ``M^H M`` (``M M^H`` when ``upper``) as ``lauu2``
    computes it, reading ``M``'s diagonal as real: that makes a difference only for a factor
    whose diagonal is not real, and then the last diagonal entry is ``Re(m) m``, not
    ``Re(m)^2``."""
    n = factor.shape[-1]
    k = np.arange(n)
    info = np.zeros(factor.shape[:-2], dtype=np.int32)
    if factor.size == 0:
        return factor.copy(), info
    zero = factor[..., k, k] == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    M = trsm(factor, np.eye(n, dtype=factor.dtype), upper=upper)
    M = np.triu(M) if upper else np.tril(M)
    last = M[..., n - 1, n - 1].copy()
    M[..., k, k] = M[..., k, k].real
    with np.errstate(all="ignore"):  # a singular factor's infinities (its info raises)
        out = M @ _adjoint(M) if upper else _adjoint(M) @ M
    out[..., k, k] = out[..., k, k].real
    out[..., n - 1, n - 1] = last.real * last
    return out, info


# -- QR ------------------------------------------------------------------------------------------
def _real_diagonal_halved(X: Tensor) -> Tensor:
    """``X`` with the real part of its diagonal halved."""
    d = mx.diagonal(X, 0, -2, -1)
    return X - 0.5 * mx.diag_embed(d.real if X.dtype.is_complex else d)


class LinalgQrBackward0(Node):
    """PyTorch's ``linalg_qr_backward``: with ``M = gR R^H - Q^H gQ``, a tall (or square) ``A``
    gets ``(gQ + Q syminvadj(triu(M))) R^{-H}``, a wide one
    ``[Q trilImInvAdjSkew(-M) R_1^{-H} | 0] + Q gR`` (``R_1`` the leading square block)."""
    rule = ("A: (gQ + Q syminvadj(triu(M))) R^-H, M = gR R^H - Q^H gQ (A tall); "
            "[Q trilImInvAdjSkew(-M) R_1^-H | 0] + Q gR (A wide)")
    __slots__ = ("mode",)
    on_tensors = True
    inputs = ("A",)
    outputs = ("Q", "R")
    saves = ("Q", "R", "mode")

    def backward(self, gQ, gR):
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        Q, R = self.saved_as(Tensor)
        m, n = Q.shape[-2], R.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if gQ is None and gR is None:
            return (None,)
        if gQ is None:
            M = la.matmul(gR, _mH(R))
        else:
            QhgQ = la.matmul(_mH(Q), gQ)
            M = -QhgQ if gR is None else la.matmul(gR, _mH(R)) - QhgQ
        if m >= n:
            X = mx.triu(M)
            gA = la.matmul(Q, _real_diagonal_halved(X + _mH(X)))
            if gQ is not None:
                gA = gA + gQ
            return (solve_triangular(_mH(R), gA, upper=False, left=False),)
        skew = mx.tril(-M - _mH(-M))
        if skew.dtype.is_complex:  # the imaginary part of the diagonal halved
            skew = skew - 0.5j * mx.diag_embed(mx.diagonal(skew, 0, -2, -1).imag)
        gA = solve_triangular(_mH(R[..., :, :m]), la.matmul(Q, skew), upper=False, left=False)
        gA = cat([gA, zeros(*gA.shape[:-1], n - m, dtype=gA.dtype, device=gA.device)], -1)
        return (gA if gR is None else gA + la.matmul(Q, gR),)


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
    if mode == "r":  # Q is empty, still an output of the node (whose backward says why not)
        q = np.zeros((0,), dtype=r.dtype)
    Q, R = record(LinalgQrBackward0, (A,), (column_major(q), column_major(r)),
                  attrs={"mode": mode})
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
        Vh = _mH(V)
        if gV is None:  # eigvalsh: V diag(gL) V^H
            return (la.matmul(V * gL.unsqueeze(-2), Vh),)
        VhgV = la.matmul(Vh, gV)
        if V.dtype.is_complex:
            phase = mx.diagonal(VhgV, 0, -2, -1).imag._data
            if not np.allclose(phase, 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError(
                    "linalg_eigh_backward: The eigenvectors in the complex case are specified up "
                    "to multiplication by e^{i phi}. The specified loss function depends on this "
                    "quantity, so it is ill-defined.")
        VhgV = 0.5 * (VhgV - _mH(VhgV))  # onto the skew-Hermitian matrices
        n = L.shape[-1]
        eye = _eye_like(L, n)
        gaps = L.unsqueeze(-2) - L.unsqueeze(-1) + eye  # (real eigenvalues: conj is a no-op)
        inner = VhgV / gaps
        if gL is not None:  # the diagonal is gL's
            inner = inner - mx.diag_embed(mx.diagonal(inner, 0, -2, -1)) + mx.diag_embed(
                gL.to(inner.dtype))
        return (la.matmul(V, la.matmul(inner, Vh)),)


_eigh_result = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])


def eigh(A: Tensor, UPLO: str = "L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices (only the
    ``UPLO`` triangle is read)."""
    _square(A, "eigh")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError("\"linalg_eigh_cpu\" not implemented for "
                                  f"'{scalar_type_name(A._data.dtype)}'")
    w, v = np.linalg.eigh(A._data, UPLO=UPLO)
    L, V = record(LinalgEighBackward0, (A,), (w, column_major(v)))
    return _eigh_result(L, V)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of symmetric matrices, ascending."""
    return eigh(A, UPLO).eigenvalues


# -- SVD -----------------------------------------------------------------------------------------
class LinalgSvdBackward0(Node):
    """PyTorch's ``svd_backward``: with ``E_jk = S_k^2 - S_j^2`` off the diagonal,
    ``gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS) + i Im diag(U^H gU) / S] V^H``,
    plus the parts of ``gU`` (``gV``) outside ``U``'s (``V``'s) span for a tall (wide) ``A``.
    A complex loss must not depend on the singular vectors' phases."""
    rule = "A: svd_backward(full_matrices && grad_U.defined() ? grad_U.narrow_symint(-1, 0, S.sym_size(-1)) : grad_U, grad_S, ..., U, S, Vh)"
    __slots__ = ("S_sym_argsize_minus_1", "full_matrices")
    on_tensors = True
    inputs = ("A",)
    outputs = ("U", "S", "Vh")
    saves = ("S", "U", "Vh", "full_matrices", "S_sym_argsize_minus_1")

    def backward(self, gU, gS, gVh):
        S, U, Vh = self.saved_as(Tensor)
        k = S.shape[-1]
        if self.full_matrices:
            U, Vh = U[..., :, :k], Vh[..., :k, :]
            gU = gU[..., :, :k] if gU is not None else None
            gVh = gVh[..., :k, :] if gVh is not None else None
        if gU is None and gVh is None and gS is None:
            return (None,)
        m, n = U.shape[-2], Vh.shape[-1]
        if gU is None and gVh is None:  # svdvals: U diag(gS) Vh
            return ((la.matmul(U, gS.unsqueeze(-1) * Vh) if m >= n
                     else la.matmul(U * gS.unsqueeze(-2), Vh)),)
        UhgU = _skew(la.matmul(_mH(U), gU)) if gU is not None else None
        VhgV = _skew(la.matmul(Vh, _mH(gVh))) if gVh is not None else None
        if U.dtype.is_complex:
            _check_svd_phase(UhgU, VhgV, S)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(S, k)  # (0 / 1 on the diagonal)
        if gU is not None and gVh is not None:
            gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
        elif gU is not None:
            gA = (UhgU / E) * S.unsqueeze(-2)
        else:
            gA = S.unsqueeze(-1) * (VhgV / E)
        if gS is not None:
            gA = gA + mx.diag_embed(gS)
        if U.dtype.is_complex and gU is not None and gVh is not None:
            gA = gA + mx.diag_embed(mx.diagonal(UhgU, 0, -2, -1) / (2.0 * S))
        if m > n and gU is not None:
            gA = la.matmul(U, gA)
            gUSinv = gU / S.unsqueeze(-2)
            gA = gA + gUSinv - la.matmul(U, la.matmul(_mH(U), gUSinv))
            return (la.matmul(gA, Vh),)
        if m < n and gVh is not None:
            gA = la.matmul(gA, Vh)
            SinvgVh = gVh / S.unsqueeze(-1)
            gA = gA + SinvgVh - la.matmul(la.matmul(SinvgVh, _mH(Vh)), Vh)
            return (la.matmul(U, gA),)
        return ((la.matmul(U, la.matmul(gA, Vh)) if m >= n
                 else la.matmul(la.matmul(U, gA), Vh)),)


def _skew(X: Tensor) -> Tensor:
    return X - _mH(X)


def _check_svd_phase(UhgU, VhgV, S) -> None:
    """A complex loss must not see the singular vectors' phases:
    ``Im diag(U^H gU) + Im diag(V^H gV) = 0``."""
    zero = np.zeros(S.shape)
    u = mx.diagonal(UhgU, 0, -2, -1).imag._data if UhgU is not None else zero
    v = mx.diagonal(VhgV, 0, -2, -1).imag._data if VhgV is not None else zero
    if not np.allclose(u, -v, rtol=1e-2, atol=1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are specified "
                           "up to multiplication by e^{i phi}. The specified loss function "
                           "depends on this phase term, making it ill-defined.")


_svd_result = collections.namedtuple("svd", ["U", "S", "Vh"])
_torch_svd_result = collections.namedtuple("svd", ["U", "S", "V"])


def _check_finite_for_svd(a: np.ndarray, is_matrix: bool) -> None:
    """PyTorch's error for a non-finite input to the SVD (LAPACK's ``info`` -4)."""
    finite = np.isfinite(a).all(axis=(-2, -1))
    check_errors(np.where(finite, 0, -4), "linalg.svd", is_matrix)


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U @ diag(S) @ Vh``, singular values descending."""
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _float(A, "svd")
    _check_finite_for_svd(A._data, A.dim() == 2)
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
    return _torch_svd_result(U, S, _mH(Vh))


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
    """The pseudo-inverse of ``a``: ``V diag(1/S) U^H`` with the singular values (absolute
    eigenvalues when ``hermitian``) at or below ``max(atol, rtol * largest)`` dropped."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        s, u, vh = np.abs(w), v, _adjoint(v * np.sign(w)[..., None, :])
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    smax = s.max(axis=-1, keepdims=True, initial=0.0)
    tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * smax)
    keep = s > tol
    s_inv = np.where(keep, 1 / np.where(keep, s, 1.0), 0.0)
    return _adjoint(vh) * s_inv[..., None, :] @ _adjoint(u)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below the tolerance dropped)."""
    if A.dim() < 2 or not (A.dtype.is_floating_point or A.dtype.is_complex):
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
    if not hermitian:
        _check_finite_for_svd(a, A.dim() == 2)
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
    """The gradient is the top-right block of ``exp([[A^H, G], [0, A^H]])`` (PyTorch's
    ``linalg_matrix_exp_differential`` with ``adjoint``)."""
    rule = "self: the upper-right block of matrix_exp([[self^H, grad], [0, self^H]])"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (A,) = self.saved(g)
        n = A.shape[-1]
        Ah = _mH(A)
        top = cat([Ah, g], -1)
        bottom = cat([0 * Ah, Ah], -1)
        big = matrix_exp(cat([top, bottom], -2))
        return (big[..., :n, n:],)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential."""
    _square(A, "matrix_exp")
    _float(A, "matrix_exp")
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


def _check_multi_dot(tensors) -> None:
    """PyTorch's checks, in its order: the ends' ranks, each middle one's rank and dtype, the
    last one's dtype, then the shapes of each neighbouring pair."""
    first, last = tensors[0], tensors[-1]
    for which, t in (("first", first), ("last", last)):
        if t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                               f"{t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t is not last and t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
        if t.dtype != first.dtype:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {la._CPP_NAMES[first.dtype.name]} and tensor {i} "
                               f"{la._CPP_NAMES[t.dtype.name]}")
    for i in range(len(tensors) - 1):
        a, b = tensors[i], tensors[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a.shape)} and {list(b.shape)} cannot be multiplied")


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (first and last may be vectors), in the cheapest
    order: PyTorch's (three by comparing the two costs, more by the matrix-chain order), each
    product one ``mm``, the result viewed to its shape."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    _check_multi_dot(tensors)
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
    """Frobenius, nuclear, 2-, 1- and inf-norms of matrices (real for complex ``A``)."""
    red.check_norm_dtype("linalg.matrix_norm", A._data.dtype, dtype)
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
        return red.norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() == 1:
            return red.norm(A, ord, None, keepdim, dtype=dtype)
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return red.norm(A, ord, dim, keepdim, dtype=dtype)


_COND_ORDERS = (2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number in the ``p`` norm (2 by default): the ratio of the extreme singular
    values for ``p`` of +-2, else ``norm(A) * norm(inv(A))``, infinite for a singular ``A``."""
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord_ = 2 if p is None else p
    square_check = f"linalg.cond(ord={_cond_ord_name(ord_)})"
    if isinstance(ord_, str):  # (PyTorch's string orders check the shape first)
        _square(A, "", square_check)
    if not any(ord_ == o and isinstance(ord_, str) == isinstance(o, str) for o in _COND_ORDERS):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {ord_}")
    if A.numel() == 0:  # NumPy has no condition number of an empty matrix: PyTorch's is 0
        real = _dtype.as_dtype(_dtype.real_of(A._data.dtype))
        return zeros(*A.shape[:-2], dtype=real, device=A.device)
    if not isinstance(ord_, str):
        if abs(ord_) == 2:
            s = svdvals(A)  # sorted in descending order
            hi, lo = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
            return (hi / lo if ord_ == 2 else lo / hi).squeeze(-1)
        _square(A, "", square_check)
    if ord_ == "nuc":  # by the singular values: the nuclear norm of an infinite inverse fails
        s = svdvals(A)
        with np.errstate(divide="ignore", invalid="ignore"):  # a singular A: 1 / 0, 0 * inf
            return red.sum(s, -1) * red.sum(s.reciprocal(), -1)
    inverse, info = _inv(A, None)
    # A singular A's inverse is infinite, written over inv_ex's output in place (so that, as in
    # PyTorch, backward through it reports the in-place change)
    inverse.masked_fill_(wrap(info[..., None, None] > 0), math.inf)
    with np.errstate(invalid="ignore"):  # 0 * inf, then NumPy's inf
        out = matrix_norm(A, ord_) * matrix_norm(inverse, ord_)
    return out.nan_to_num(math.inf, math.inf, -math.inf)


def _cond_ord_name(ord_) -> str:
    """``ord`` as PyTorch's message prints it (a float with six decimals, C's ``%f``)."""
    if isinstance(ord_, float):
        return "inf" if ord_ == math.inf else "-inf" if ord_ == -math.inf else f"{ord_:f}"
    return str(ord_)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product along ``dim`` (broadcasting the rest), ``x`` conjugated; two vectors
    go through ``vdot``, as in PyTorch."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as input. "
                           f"Got {scalar_type_name(x._data.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {scalar_type_name(x._data.dtype)} and y of type "
                           f"{scalar_type_name(y._data.dtype)} instead")
    if x.dim() == 1 and y.dim() == 1:  # PyTorch's vdot path never reads dim
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
    if a.dtype != b.dtype:  # the kernel's check, after the shapes'
        raise RuntimeError(f"expected scalar type {scalar_type_name(a.dtype)} but found "
                           f"{scalar_type_name(b.dtype)}")
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
    if x.dtype == _dtype.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           "but got Bool")
    if x.dim() == 0:
        x = x.unsqueeze(-1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
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
    eps = np.finfo(a.dtype).eps
    if rcond is None:
        rcond = eps * max(m, n)
    elif rcond < 0:  # LAPACK's drivers read a negative rcond as the machine precision
        rcond = eps
    b = Bm._data
    # gelsd/gelss drop the singular values at or below rcond times the largest: the solution
    # is that truncated pseudo-inverse's (gels assumes full rank; gelsy's rank-revealing QR
    # is not modelled, its solution the default pseudo-inverse's)
    cutoff = rcond if driver in ("gelsd", "gelss") else max(m, n) * eps
    # LAPACK solves in place of B, a max(m, n)-row buffer: the solution is its top n rows
    x = column_major(_pinv_array(a, 0.0, cutoff, False) @ b, max(m, n))
    batch = tuple(A.shape[:-2])
    s = (np.linalg.svd(a, compute_uv=False) if a.size
         else np.zeros(batch + (0,), _dtype.real_of(a.dtype)))
    smax = s.max(axis=-1, keepdims=True, initial=0.0)
    rank_array = (s > rcond * smax).sum(axis=-1).astype(np.int64)
    full_rank = bool(np.all(rank_array == n))
    if m > n and driver != "gelsy" and (driver == "gels" or full_rank):
        r = a @ x - b
        residuals = (r.real ** 2 + r.imag ** 2 if r.dtype.kind == "c" else r * r).sum(axis=-2)
    else:
        residuals = np.zeros((0,), dtype=_dtype.real_of(a.dtype))
    rank = np.zeros((0,), np.int64) if driver == "gels" else rank_array
    singular_values = s if driver in ("gelsd", "gelss") else np.zeros((0,), dtype=s.dtype)
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
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows, cols = int(np.prod(A.shape[:ind])), int(np.prod(A.shape[ind:]))
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _inv(A.reshape(rows, -1), "inv", is_matrix=True)[0].reshape(out_shape)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.dim()) = B``."""
    if dims is not None:  # moved to the end, in their order (PyTorch's movedim)
        dims = tuple(dims)
        A = movedim(A, dims, tuple(range(A.dim() - len(dims), A.dim())))
    x_shape = tuple(A.shape[B.dim():])
    n = int(np.prod(B.shape))
    cols = int(np.prod(x_shape))
    if n != cols:  # the message names A's leading dims, the check counts B's elements
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {cols} != {n}")
    return solve(A.reshape(n, -1), B.reshape(n)).reshape(x_shape)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``linalg.diagonal``: the diagonal of the last two dimensions by default."""
    return mx.diagonal(A, offset, dim1, dim2)


_inv_ex_result = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
_cholesky_ex_result = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])
_solve_ex_result = collections.namedtuple("linalg_solve_ex", ["result", "info"])


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``(inverse, info)``: ``info`` LAPACK's (0, or the first zero pivot of ``A``'s LU), the
    inverse of a singular ``A`` infinite or NaN; ``check_errors`` raises for it instead."""
    out, info = _inv(A, "linalg.inv_ex" if check_errors else None)
    return _inv_ex_result(out, wrap(info))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``: ``info`` LAPACK's (0, or the order of the first leading minor that is not
    positive-definite, where ``L`` stops); ``check_errors`` raises for it instead."""
    L, info = _cholesky(A, upper, "linalg.cholesky_ex" if check_errors else None)
    return _cholesky_ex_result(L, wrap(info))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """``(result, info)``: ``info`` LAPACK's for ``A``'s LU, the result for a singular ``A``
    infinite or NaN; ``check_errors`` raises for it instead."""
    X, info = _solve(A, B, left, "gradnb.linalg.solve_ex" if check_errors else None)
    return _solve_ex_result(X, wrap(info))


TENSOR_METHODS = {
    "mH": property(_mH, doc="The last two dimensions swapped (conjugated for complex)."),
    "H": property(lambda self: _mH(self) if self.dim() == 2 else self.t(), doc="The conjugate transpose of a matrix."),
    "adjoint": adjoint,
    "cholesky": cholesky, "cholesky_inverse": cholesky_inverse, "cholesky_solve": cholesky_solve,
    "det": det, "inverse": inverse, "logdet": logdet, "matrix_exp": matrix_exp,
    "matrix_power": matrix_power, "pinverse": pinverse, "slogdet": slogdet, "svd": svd,
    "triangular_solve": triangular_solve, "cross": cross,
    "qr": torch_qr,
}
