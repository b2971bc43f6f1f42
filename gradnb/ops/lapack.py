"""LAPACK's routines that NumPy does not expose, written on arrays (no graph), and PyTorch's
``LinAlgError`` with the messages it raises for a failed routine.

``getrf`` is the LU factorization with partial pivoting, pivots and ``info`` as LAPACK returns
them: ``linalg.lu_factor`` returns it, and ``det``/``slogdet`` save the same ``LU`` and
``pivots`` as PyTorch's kernels. ``trsm`` and ``getrs`` solve by substitution, so that a zero
on a diagonal gives infinities and NaNs, as LAPACK's, where NumPy's solver raises; ``potf2``
is the Cholesky factorization with LAPACK's ``info`` (NumPy's reports no order, and passes a
NaN through). ``sytf2`` and ``sytrs`` are the Bunch-Kaufman LDL^T factorization of symmetric
(Hermitian) indefinite matrices and its solve (``linalg.ldl_factor``/``ldl_solve``).
``column_major`` lays a result out as LAPACK writes it, which is how PyTorch
returns its LAPACK-backed results (strides and all).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LinAlgError", "check_errors", "column_major", "conj_transpose", "getrf", "getrs",
           "potf2", "sytf2", "sytrs", "trsm"]


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


# -- symmetric indefinite: Bunch-Kaufman ---------------------------------------------------------
# LAPACK's ?sytf2 (symmetric) and ?hetf2 (Hermitian), its unblocked Bunch-Kaufman LDL^T
# (LDL^H) factorization, which ?sytrf calls for any matrix of fewer than its block size (64)
# columns, and ?sytrs/?hetrs, the solve with its result. The pivot blocks (1 x 1 or 2 x 2) of
# the matrices of a batch differ, so each matrix is factored on its own, each step a vector
# operation on the columns left. An upper factorization is the lower one of the matrix
# reversed (row and column order), which turns its upper triangle into a lower one: the two
# are the same arithmetic but for which of equal candidates ``i?amax`` picks, the first in
# LAPACK's order, which ``_iamax`` keeps.


def _bk_alpha(real_dtype):
    """Bunch-Kaufman's growth bound ``(1 + sqrt(17)) / 8``, computed in the working precision
    as LAPACK computes it (``s``-routines in single precision)."""
    one = real_dtype.type(1.0)
    return (one + np.sqrt(real_dtype.type(17.0))) / real_dtype.type(8.0)


def _cabs1(x):
    """BLAS's magnitude for pivot searches: ``|Re| + |Im|`` for complex numbers."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _iamax(sizes: np.ndarray, reverse: bool) -> int:
    """BLAS's ``i?amax`` on the magnitudes ``sizes`` as MKL's, PyTorch's: the first NaN, else
    the first largest, counting from the end when ``reverse`` (LAPACK's order on a reversed
    matrix)."""
    if reverse:
        return sizes.size - 1 - _iamax(sizes[::-1], False)
    return int(np.argmax(sizes))  # NumPy's argmax stops at a NaN too


def _fortran_max(a, b):
    """Fortran's ``MAX(a, b)`` as compiled for PyTorch's LAPACK (MKL): ``b`` unless ``a > b``,
    so ``MAX(NaN, 0)`` is 0. (MKL's ``?sytf2`` has no test for a NaN pivot, which LAPACK's
    reference code added: a NaN column is factored on, as PyTorch's results show.)"""
    return max(b, a)  # b unless a > b


def _amax(sizes: np.ndarray):
    """The magnitude ``i?amax`` picks."""
    return sizes[_iamax(sizes, False)]


def _sytf2_lower(a: np.ndarray, hermitian: bool, reverse: bool):
    """``(ipiv, info)`` of ``?sytf2``/``?hetf2`` with ``uplo = 'L'`` on the square matrix
    ``a``, factored in place (only its lower triangle read and written); ``reverse``: ``a`` is
    a reversed matrix, ``i?amax`` breaks ties from the end."""
    n = a.shape[0]
    herm = hermitian and a.dtype.kind == "c"
    lower = np.tril(np.ones((n, n), dtype=bool))
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    alpha = _bk_alpha(a.real.dtype)

    def diagonal(i):  # ?hetf2 reads only the real part of a diagonal entry
        return abs(a[i, i].real) if herm else _cabs1(a[i, i])

    k = 0
    while k < n:
        kstep = 1
        absakk = diagonal(k)
        if k < n - 1:
            imax = k + 1 + _iamax(_cabs1(a[k + 1:, k]), reverse)
            colmax = _cabs1(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if _fortran_max(absakk, colmax) == 0:
            # a zero column: LAPACK records it in info and leaves it as it is
            info = info or k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= alpha * colmax:
                kp = k
            else:
                # the largest off-diagonal magnitude in row (and column) imax
                rowmax = _amax(_cabs1(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = _fortran_max(rowmax, _amax(_cabs1(a[imax + 1:, imax])))
                if absakk >= alpha * colmax * (colmax / rowmax):
                    kp = k
                elif diagonal(imax) >= alpha * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _swap_lower(a, kk, kp, herm)
                if kstep == 2:
                    if herm:
                        a[k, k] = a[k, k].real
                    a[[k + 1, kp], k] = a[[kp, k + 1], k]
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                _pivot_1x1(a, k, herm, lower)
            else:
                _pivot_2x2(a, k, herm, lower)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _swap_lower(a: np.ndarray, kk: int, kp: int, herm: bool) -> None:
    """Rows and columns ``kk < kp`` of the trailing matrix interchanged, in its lower
    triangle: below ``kp`` two columns swap, between them a column and a row (conjugated in a
    Hermitian matrix, as is the entry they cross at), and the two diagonal entries."""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = np.conj(a[kp, kk + 1:kp]) if herm else a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = np.conj(between) if herm else between
    if herm:
        a[kp, kk] = np.conj(a[kp, kk])
        a[kk, kk], a[kp, kp] = a[kp, kp].real, a[kk, kk].real
    else:
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]


def _pivot_1x1(a: np.ndarray, k: int, herm: bool, lower: np.ndarray) -> None:
    """The rank-1 update of the trailing matrix by the pivot ``a[k, k]`` (``?syr``/``?her``
    on its lower triangle), and column ``k`` scaled into ``L``'s."""
    if k == a.shape[0] - 1:
        return
    x = a[k + 1:, k].copy()
    r1 = 1.0 / (a[k, k].real if herm else a[k, k])
    trailing = a[k + 1:, k + 1:]
    # BLAS's ?syr/?her return at once for a zero scale and skip the columns where x is zero
    # (an infinite pivot leaves the rest as it is, as PyTorch's results show)
    if r1 != 0:
        update = x[:, None] * (-r1 * (np.conj(x) if herm else x))[None, :]
        mask = lower[k + 1:, k + 1:] & (x != 0)[None, :]
        trailing[mask] = (trailing + update)[mask]
    if herm:  # ?her keeps the diagonal real
        np.fill_diagonal(trailing, trailing.diagonal().real)
    a[k + 1:, k] = x * r1


def _pivot_2x2(a: np.ndarray, k: int, herm: bool, lower: np.ndarray) -> None:
    """The rank-2 update of the trailing matrix by the 2 x 2 pivot in rows and columns ``k``,
    ``k + 1``, and those columns turned into ``L``'s, in ``?sytf2``'s (``?hetf2``'s) order of
    operations."""
    n = a.shape[0]
    if k >= n - 2:
        return
    ck, ck1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    if herm:
        d = np.hypot(a[k + 1, k].real, a[k + 1, k].imag)
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
        wk = d * (d11 * ck - d21 * ck1)
        wkp1 = d * (d22 * ck1 - np.conj(d21) * ck)
        update_k, update_k1 = np.conj(wk), np.conj(wkp1)
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
        wk = d21 * (d11 * ck - ck1)
        wkp1 = d21 * (d22 * ck1 - ck)
        update_k, update_k1 = wk, wkp1
    trailing = a[k + 2:, k + 2:]
    mask = lower[k + 2:, k + 2:]
    new = trailing - ck[:, None] * update_k[None, :] - ck1[:, None] * update_k1[None, :]
    trailing[mask] = new[mask]
    if herm:
        np.fill_diagonal(trailing, trailing.diagonal().real)
    a[k + 2:, k] = wk
    a[k + 2:, k + 1] = wkp1


def _reversed(x: np.ndarray) -> np.ndarray:
    """A matrix with its rows and columns in reverse order (an involution)."""
    return x[..., ::-1, ::-1]


def sytf2(a: np.ndarray, upper: bool = False, hermitian: bool = False):
    """``(LD, pivots, info)``: the Bunch-Kaufman factorization ``A = L D L^T`` (``U D U^T``
    when ``upper``; ``^H`` when ``hermitian`` and complex) of (batches of) square ``a`` from its
    lower (upper) triangle, as LAPACK's ``?sytf2``/``?hetf2`` returns it: ``D``'s blocks and
    ``L``'s multipliers in that triangle, the other triangle of ``a`` as it was; 1-based int32
    pivots, negative for the two columns of a 2 x 2 block; ``info`` the first zero pivot
    column (1-based), 0 when there is none."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    work = (_reversed(a) if upper else a).reshape((-1, n, n)).copy()
    pivots = np.zeros((work.shape[0], n), dtype=np.int32)
    info = np.zeros(work.shape[0], dtype=np.int32)
    with np.errstate(all="ignore"):  # LAPACK divides by zero where info says so
        for i in range(work.shape[0]):
            pivots[i], info[i] = _sytf2_lower(work[i], hermitian, reverse=upper)
    if upper:  # back to the matrix's order: position i of the reversed matrix is n - 1 - i
        work = _reversed(work)
        pivots = np.sign(pivots[:, ::-1]) * (n + 1 - np.abs(pivots[:, ::-1]))
        info = np.where(info > 0, n + 1 - info, 0).astype(np.int32)
    return work.reshape(batch + (n, n)), pivots.reshape(batch + (n,)), info.reshape(batch)


def _ger(b: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """BLAS's ``?ger`` with scale -1: ``b -= x y^T``, skipping the columns where ``y`` is zero
    (so an infinite ``x`` times a zero gives no NaN there)."""
    columns = y != 0
    b[:, columns] -= x[:, None] * y[None, columns]


def _sytrs_lower(ld: np.ndarray, ipiv: np.ndarray, b: np.ndarray, herm: bool) -> None:
    """``?sytrs``/``?hetrs`` with ``uplo = 'L'``: ``b`` overwritten with ``A^-1 b`` for the
    factorization ``(ld, ipiv)`` of one matrix (``ipiv`` 1-based)."""
    n = ld.shape[0]
    conj = np.conj if herm else (lambda x: x)
    k = 0
    while k < n:  # L D Y = B, forward
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            _ger(b[k + 1:], ld[k + 1:, k], b[k])
            b[k] *= 1.0 / (ld[k, k].real if herm else ld[k, k])
            k += 1
        else:
            kp = -ipiv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            _ger(b[k + 2:], ld[k + 2:, k], b[k])
            _ger(b[k + 2:], ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / conj(akm1k)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / conj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H), backward
        step = 1 if ipiv[k] > 0 else 2
        for col in range(k, k - step, -1):
            b[col] -= conj(ld[k + 1:, col]) @ b[k + 1:]
        kp = abs(ipiv[k]) - 1
        b[[k, kp]] = b[[kp, k]]
        k -= step


def sytrs(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray, upper: bool = False,
          hermitian: bool = False) -> np.ndarray:
    """``X`` with ``A X = B`` for ``A`` factored by ``sytf2`` (``ld``, ``pivots``; batches
    broadcast against ``b``'s), as LAPACK's ``?sytrs``/``?hetrs``: a zero pivot gives
    infinities and NaNs, not an error."""
    n = ld.shape[-1]
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    x = np.broadcast_to(b, batch + b.shape[-2:]).astype(np.result_type(ld, b), copy=True)
    if x.size == 0 or n == 0:
        return x
    ld = np.broadcast_to(_reversed(ld) if upper else ld, batch + (n, n)).reshape(-1, n, n)
    pivots = np.broadcast_to(pivots, batch + (n,)).reshape(-1, n).astype(np.int64)
    if upper:  # the reversed matrix's pivots and right-hand side (see sytf2)
        pivots = np.sign(pivots[:, ::-1]) * (n + 1 - np.abs(pivots[:, ::-1]))
    flat = x.reshape((-1,) + x.shape[-2:])
    if upper:
        flat = flat[:, ::-1]
    herm = hermitian and x.dtype.kind == "c"
    with np.errstate(all="ignore"):
        for i in range(flat.shape[0]):
            _sytrs_lower(ld[i], pivots[i], flat[i], herm)
    if upper:
        flat = flat[:, ::-1]
    return np.ascontiguousarray(flat).reshape(x.shape)
