"""``gradnb.linalg``: PyTorch's ``torch.linalg`` namespace (real dtypes)."""

# ruff: noqa: F401 - this module is a namespace of re-exports

from __future__ import annotations

from .ops.linalg import matmul
from .ops.linalg_decompositions import (
    cholesky_ex,
    cond,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    matrix_exp,
    matrix_norm,
    matrix_power,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    svdvals,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
)
from .ops.linalg_decompositions import linalg_cholesky as cholesky
from .ops.linalg_decompositions import linalg_cross as cross
from .ops.linalg_decompositions import linalg_svd as svd
from .ops.linalg_norms import vector_norm
