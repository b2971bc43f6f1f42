"""The LDL factorization of symmetric (Hermitian) indefinite matrices: ``linalg.ldl_factor_ex``,
``linalg.ldl_factor`` and ``linalg.ldl_solve``.

PyTorch calls LAPACK's ``?sytrf``/``?hetrf`` on the lower triangle and returns its compact
result: ``LD`` holds ``L``'s multipliers below the diagonal and ``D``'s 1 x 1 and 2 x 2 blocks
on and next to it (its upper triangle zero), ``pivots`` LAPACK's 1-based interchanges (a pair
of equal negative ones for a 2 x 2 block) and ``info`` the first zero pivot column (1-based,
0 when there is none). The kernels are ``gradnb.ops.lapack``'s ``sytf2`` and ``sytrs``, which
decide the Bunch-Kaufman pivots as PyTorch's LAPACK does.

PyTorch has no derivative for any of the three: their results record its ``NotImplemented``
node, whose backward raises.
"""

from __future__ import annotations

import collections

import numpy as np

from ._args import scalar_type_name
from ._common import Tensor, check_broadcast, wrap
from ._declare import record_underivable
from ._out import OUT_DTYPE_EXPECTED, accepts_out
from .lapack import check_errors as raise_for_info
from .lapack import column_major, sytf2, sytrs
from .linalg_decompositions import _square

__all__ = []  # ``gradnb.linalg``'s only

_ldl_factor_ex_result = collections.namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_ldl_factor_result = collections.namedtuple("linalg_ldl_factor", ["LD", "pivots"])

# the dtypes LAPACK's kernels come in (PyTorch's dispatch refuses the other floating ones)
_LAPACK_KINDS = ("float32", "float64", "complex64", "complex128")


def _check_bool(fname: str, name: str, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fname}(): argument '{name}' must be bool, not {type(value).__name__}")


def _check_floating(A: Tensor, api_name: str, what: str = "input") -> None:
    """PyTorch's ``checkFloatingOrComplex``."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{api_name}: Expected a floating point or complex tensor as {what}. "
                           f"Got {scalar_type_name(A._data.dtype)}")


def _check_kernel_dtype(kernel: str, A: Tensor) -> None:
    if A._data.dtype.name not in _LAPACK_KINDS:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(A._data.dtype)}'")


@accepts_out("linalg_ldl_factor_ex", OUT_DTYPE_EXPECTED, differentiable=False,
             result_layout=True)
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False):
    """``(LD, pivots, info)``: the compact Bunch-Kaufman factorization ``A = L D L^T``
    (``L^H`` when ``hermitian`` and complex; ``L`` a product of interchanges and unit lower
    block transformations) of the lower triangle of (batches of) ``A``; raises for a nonzero
    ``info`` only when ``check_errors``."""
    _check_bool("linalg_ldl_factor_ex", "hermitian", hermitian)
    _check_bool("linalg_ldl_factor_ex", "check_errors", check_errors)
    return _factor(A, hermitian, "gradnb.linalg.ldl_factor_ex" if check_errors else None)


def _factor(A: Tensor, hermitian: bool, raise_as: str | None):
    _square(A, "ldl_factor_ex", "gradnb.linalg.ldl_factor_ex")
    _check_floating(A, "gradnb.linalg.ldl_factor_ex")
    _check_kernel_dtype("ldl_factor_kernel_cpu", A)
    a = A._data
    if a.size == 0:  # PyTorch skips LAPACK (its workspace query fails on an empty batch)
        ld = np.zeros(a.shape, dtype=a.dtype)
        pivots = np.zeros(a.shape[:-1], dtype=np.int32)
        info = np.zeros(a.shape[:-2], dtype=np.int32)
    else:
        ld, pivots, info = sytf2(np.tril(a), upper=False, hermitian=hermitian)
    if raise_as is not None:
        raise_for_info(info, raise_as, A.dim() == 2)
    LD = record_underivable("linalg_ldl_factor_ex", (A,), column_major(ld))
    return _ldl_factor_ex_result(LD, wrap(pivots), wrap(info))


@accepts_out("linalg_ldl_factor", OUT_DTYPE_EXPECTED, differentiable=False,
             result_layout=True)
def ldl_factor(A: Tensor, *, hermitian: bool = False):
    """``(LD, pivots)`` of ``ldl_factor_ex``; raises where ``info`` is nonzero (PyTorch's
    internal error: it has no message of its own for this routine)."""
    _check_bool("linalg_ldl_factor", "hermitian", hermitian)
    LD, pivots, _ = _factor(A, hermitian, "gradnb.linalg.ldl_factor")
    return _ldl_factor_result(LD, pivots)


def _check_solve(LD: Tensor, pivots: Tensor, B: Tensor) -> None:
    """PyTorch's checks, in its order: ``LD`` square and floating, ``B``'s dtype and rows, the
    pivots' shape and dtype, then the batches' broadcast."""
    name = "gradnb.linalg.ldl_solve"
    _square(LD, "ldl_solve", name)
    _check_floating(LD, name)
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(B._data.dtype)} and A of type "
                           f"{scalar_type_name(LD._data.dtype)} instead.")
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.dim(), 1)}, "
                         f"{max(B.dim(), 1) - 1}], but got -2)")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if pivots._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{scalar_type_name(pivots._data.dtype)}")
    check_broadcast(B.shape[:-2], LD.shape[:-2])
    _check_kernel_dtype("ldl_solve_kernel_cpu", LD)


def _check_pivots(pivots: np.ndarray, n: int) -> None:
    """The kernel's range check: a pivot not from ``ldl_factor`` would index out of bounds."""
    sizes = np.abs(pivots.astype(np.int64))
    hint = "Did you properly pass the result of ldl_factor?"
    if sizes.size and sizes.min() < 1:
        raise RuntimeError(f"Pivots given to ldl_solve must all satisfy |pivot| >= 1. {hint}")
    if sizes.size and sizes.max() > n:
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). "
                           f"{hint}")


@accepts_out("linalg_ldl_solve", OUT_DTYPE_EXPECTED, differentiable=False,
             result_layout=True)
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``X`` with ``A X = B`` for ``A`` factored by ``ldl_factor`` (``LD``, ``pivots``; batches
    broadcast), as LAPACK's ``?sytrs`` (``?hetrs`` when ``hermitian`` and complex): a zero
    pivot gives infinities and NaNs, not an error."""
    _check_bool("linalg_ldl_solve", "hermitian", hermitian)
    _check_solve(LD, pivots, B)
    _check_pivots(pivots._data, LD.shape[-1])
    x = sytrs(LD._data, pivots._data, B._data, upper=False, hermitian=hermitian)
    return record_underivable("linalg_ldl_solve", (LD, B), column_major(x))


# Python names a function by its qualified name in its own argument errors ("takes 1 positional
# argument but 2 were given"), where PyTorch's parser names the ATen op
for _op, _aten in ((ldl_factor_ex, "linalg_ldl_factor_ex"), (ldl_factor, "linalg_ldl_factor"),
                   (ldl_solve, "linalg_ldl_solve")):
    _op.__wrapped__.__qualname__ = _aten
