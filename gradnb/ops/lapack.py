"""LAPACK's routines that NumPy does not expose, written on arrays (no graph), and PyTorch's
``LinAlgError`` with the messages it raises for a failed routine.

``getrf`` is the LU factorization with partial pivoting, pivots and ``info`` as LAPACK returns
them: ``linalg.lu_factor`` returns it, and ``det``/``slogdet`` save the same ``LU`` and
``pivots`` as PyTorch's kernels. ``trsm`` and ``getrs`` solve by substitution, so that a zero
on a diagonal gives infinities and NaNs, as LAPACK's, where NumPy's solver raises; ``potf2``
is the Cholesky factorization with LAPACK's ``info`` (NumPy's reports no order, and passes a
NaN through). ``column_major`` lays a result out as LAPACK writes it, which is how PyTorch
returns its LAPACK-backed results (strides and all).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LinAlgError", "check_errors", "column_major", "conj_transpose", "getrf", "getrs",
           "potf2", "trsm"]


class LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError``: a linear algebra routine failed on its input (a
    singular matrix, one not positive-definite, an SVD that does not converge). A
    ``RuntimeError``, as PyTorch's."""

    __module__ = "gradnb.linalg"


def check_errors(info, api_name: str, is_matrix: bool) -> None:
    """PyTorch's ``_linalg_check_errors``: raise for the first nonzero LAPACK ``info`` of a
    batch, with the message PyTorch gives for the kind of routine ``api_name`` names (its
    batch element named unless ``is_matrix``)."""
    flat = np.asarray(info).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size == 0:
        return
    first = int(bad[0])
    code = int(flat[first])
    where = f"{api_name}: " if is_matrix else f"{api_name}: (Batch element {first}): "
    # PyTorch tells the routines apart by their names, in this order
    if "inv" in api_name:
        raise LinAlgError(f"{where}The diagonal element {code} is zero, the inversion could not "
                          "be completed because the input matrix is singular.")
    if "solve" in api_name:
        raise LinAlgError(f"{where}The solver failed because the input matrix is singular.")
    if "cholesky" in api_name:
        raise LinAlgError(f"{where}The factorization could not be completed because the input is "
                          f"not positive-definite (the leading minor of order {code} is not "
                          "positive-definite).")
    if "svd" in api_name:  # info -4 is LAPACK's (3.10 and later) for non-finite input
        if code == -4:
            raise LinAlgError(f"{where}The algorithm failed to converge because the input matrix "
                              "contained non-finite values.")
        raise LinAlgError(f"{where}The algorithm failed to converge because the input matrix is "
                          "ill-conditioned or has too many repeated singular values (error code: "
                          f"{code}).")
    if "lu_factor" in api_name:  # a plain RuntimeError in PyTorch too
        raise RuntimeError(f"{where}U[{code},{code}] is zero and using it on lu_solve would result "
                           "in a division by zero. If you still want to perform the "
                           "factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    raise RuntimeError(f"{api_name}: Unknown error code: {code}.")  # (an internal assert)


def getrf(a: np.ndarray):
    """``(LU, pivots, info)`` of a batch of ``m x n`` matrices, as LAPACK's ``getrf``."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((-1, m, n)).copy()
    rows = np.arange(lu.shape[0])
    pivots = np.zeros((lu.shape[0], k), dtype=np.int32)
    info = np.zeros(lu.shape[0], dtype=np.int32)
    for j in range(k):
        # the first largest, as LAPACK's i?amax: by |Re| + |Im| for a complex column
        column = lu[:, j:, j]
        size = np.abs(column.real) + np.abs(column.imag) if lu.dtype.kind == "c" else np.abs(column)
        p = j + np.argmax(size, axis=1)
        pivots[:, j] = p + 1
        row_j = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = row_j
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
        # a zero pivot means the column below is zero too: LAPACK leaves it unscaled
        lu[:, j + 1:, j] /= np.where(zero, 1.0, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (lu.reshape(batch + (m, n)), pivots.reshape(batch + (k,)),
            info.reshape(batch))


def column_major(x: np.ndarray, rows: int | None = None) -> np.ndarray:
    """``x`` laid out as LAPACK writes a batch of matrices and PyTorch returns it: each matrix
    in column-major order, the batch dimensions outermost (a ``3 x 3`` result has strides
    ``(1, 3)``, a ``2 x 3 x 3`` one ``(9, 1, 3)``, in elements).

    ``rows``: the leading dimension when it exceeds ``x``'s rows (``lstsq``'s solution is the
    top of a ``max(m, n)``-row buffer). Arrays of fewer than two dimensions, and arrays already
    so laid out, come back as they are.
    """
    if x.ndim < 2:
        return x
    *batch, m, n = x.shape
    # PyTorch's ``batched_matrix_contiguous_strides``: an empty dimension counts as one
    ld = max(m if rows is None else rows, 1)
    strides = [x.itemsize, x.itemsize * ld]
    step = x.itemsize * ld * max(n, 1)
    for size in reversed(batch):
        strides.insert(0, step)
        step *= max(size, 1)
    strides = tuple(strides)
    if x.strides == strides and rows is None:
        return x
    buffer = np.empty(step // x.itemsize if x.size else 0, dtype=x.dtype)
    out = np.ndarray(x.shape, x.dtype, buffer, strides=strides)
    out[...] = x
    return out


def trsm(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool = False) -> np.ndarray:
    """``X`` with ``A X = B`` for triangular ``A`` (batches broadcast; only ``A``'s upper or
    lower triangle read, its diagonal taken as ones when ``unit``), by substitution as LAPACK's
    ``trsm``: a zero on the diagonal gives infinities and NaNs, not an error."""
    n = a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    x = np.broadcast_to(b, batch + b.shape[-2:]).astype(np.result_type(a, b), copy=True)
    with np.errstate(all="ignore"):
        for i in range(n - 1, -1, -1) if upper else range(n):
            if not unit:
                x[..., i, :] /= a[..., i, i, None]
            rest = slice(0, i) if upper else slice(i + 1, n)
            x[..., rest, :] -= a[..., rest, i, None] * x[..., i, None, :]
    return x


def conj_transpose(x: np.ndarray) -> np.ndarray:
    """The conjugate transpose of (batches of) matrices."""
    return np.conj(np.swapaxes(x, -1, -2))


def getrs(lu: np.ndarray, pivots: np.ndarray, b: np.ndarray, adjoint: bool = False) -> np.ndarray:
    """``X`` with ``A X = B`` (``A^H X = B`` when ``adjoint``) for ``A = P L U`` as ``getrf``
    packs it, as LAPACK's ``getrs``: the row interchanges, then two triangular solves."""
    n = lu.shape[-1]
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = np.broadcast_to(b, batch + b.shape[-2:]).astype(np.result_type(lu, b), copy=True)
    if x.size == 0 or lu.size == 0:
        return x
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    pivots = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape(-1, n) - 1
    flat = x.reshape((-1,) + x.shape[-2:])
    rows = np.arange(flat.shape[0])
    if adjoint:  # U^H L^H P^T X = B
        flat = trsm(conj_transpose(lu), flat.reshape(x.shape), upper=False).reshape(flat.shape)
        flat = trsm(conj_transpose(lu), flat.reshape(x.shape), upper=True,
                    unit=True).reshape(flat.shape)
        for i in range(n - 1, -1, -1):  # X = P Y: the interchanges undone, last first
            row_i = flat[rows, i].copy()
            flat[rows, i] = flat[rows, pivots[:, i]]
            flat[rows, pivots[:, i]] = row_i
        return flat.reshape(x.shape)
    for i in range(n):  # P^T B: the interchanges in order
        row_i = flat[rows, i].copy()
        flat[rows, i] = flat[rows, pivots[:, i]]
        flat[rows, pivots[:, i]] = row_i
    y = trsm(lu, flat.reshape(x.shape), upper=False, unit=True)
    return trsm(lu, y, upper=True)


def potf2(a: np.ndarray):
    """``(L, info)``: the lower Cholesky factor of (batches of) Hermitian ``a`` from its lower
    triangle, column by column as LAPACK's ``potf2``. ``info`` is 0, or the order of the first
    leading minor that is not positive-definite (its diagonal entry not positive, or NaN);
    there the factor stops, that entry holding the failed value and the columns after it ``a``'s,
    as LAPACK leaves them."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    if a.size == 0:
        return a.copy(), np.zeros(batch, dtype=np.int32)
    L = np.tril(a).reshape((-1, n, n)).astype(a.dtype, copy=True)
    info = np.zeros(L.shape[0], dtype=np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            going = info == 0
            head = L[:, j, :j]
            ajj = (L[:, j, j] - (head * np.conj(head)).sum(-1)).real
            failed = going & ~(ajj > 0)
            L[failed, j, j] = ajj[failed]
            info[failed] = j + 1
            ok = going & (ajj > 0)
            d = np.sqrt(np.where(ok, ajj, 1.0))
            below = L[:, j + 1:, j] - (L[:, j + 1:, :j] @ np.conj(head)[..., None])[..., 0]
            L[ok, j, j] = d[ok]
            L[ok, j + 1:, j] = below[ok] / d[ok, None]
    return L.reshape(batch + (n, n)), info.reshape(batch)
