"""``gradnb.linalg``: PyTorch's ``torch.linalg`` namespace."""

from __future__ import annotations

from .ops.lapack import LinAlgError
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
from .ops.linalg_eig import eig, eigvals
from .ops.linalg_householder import householder_product
from .ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.linalg_lu import linalg_lu as lu
from .ops.linalg_lu import linalg_lu_solve as lu_solve
from .ops.linalg_lu import lu_factor, lu_factor_ex
from .ops.linalg_norms import vector_norm
from .ops.linalg_rank import linalg_matrix_rank as matrix_rank

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

