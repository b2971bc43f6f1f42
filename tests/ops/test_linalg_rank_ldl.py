"""``linalg.matrix_rank``, the LDL factorization (``linalg.ldl_factor_ex``, ``ldl_factor``,
``ldl_solve``) and ``geqrf``: values, pivots and ``info`` against PyTorch (LAPACK's Bunch-Kaufman
pivot decisions, on symmetric, Hermitian, indefinite and singular matrices, with NaNs and
infinities), the LAPACK kernels against the factorization they define (lower and upper), the
behaviour under autograd (no derivative) and PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb
from gradnb.ops.lapack import sytf2, sytrs

DTYPES = ("float32", "float64", "complex64", "complex128")


def _random(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _tol(dtype):
    return 1e-4 if dtype in ("float32", "complex64") else 1e-10


def _outcome(lib, call):
    """``("ok", values)`` or ``(error type name, first sentence)`` of ``call(lib)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = call(lib)
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            # (PyTorch's LinAlgError class is named _LinAlgError)
            return type(e).__name__.lstrip("_"), str(e).split("\n")[0].replace("torch.",
                                                                              "gradnb.")
    values = value if isinstance(value, tuple) else (value,)
    return "ok", [(str(v.dtype).split(".")[-1], v.tolist()) for v in values]


# -- matrix_rank -----------------------------------------------------------------------------------
def _low_rank(shape, rank, dtype="float64", seed=0):
    """Matrices of ``shape`` and the given rank (a product of two thin random factors)."""
    *batch, m, n = shape
    left = _random((*batch, m, rank), dtype, seed)
    right = _random((*batch, rank, n), dtype, seed + 1)
    return left @ right


RANK_CALLS = {
    "full": lambda t, A: t.linalg.matrix_rank(A),
    "atol": lambda t, A: t.linalg.matrix_rank(A, atol=0.5),
    "rtol": lambda t, A: t.linalg.matrix_rank(A, rtol=0.3),
    "atol and rtol": lambda t, A: t.linalg.matrix_rank(A, atol=0.1, rtol=0.2),
    "negative atol keeps the default rtol": lambda t, A: t.linalg.matrix_rank(A, atol=-1.0),
    "tol (positional)": lambda t, A: t.linalg.matrix_rank(A, 0.5),
    "tol (keyword)": lambda t, A: t.linalg.matrix_rank(A, tol=0.5),
    "tol tensor": lambda t, A: t.linalg.matrix_rank(A, t.tensor(0.5)),
    "tol and hermitian positional": lambda t, A: t.linalg.matrix_rank(A, 0.5, True),
    "hermitian": lambda t, A: t.linalg.matrix_rank(A, hermitian=True),
    "atol tensor": lambda t, A: t.linalg.matrix_rank(A, atol=t.tensor(0.5)),
    "rtol tensor": lambda t, A: t.linalg.matrix_rank(A, rtol=t.tensor(0.5)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,rank", [((4, 4), 2), ((5, 3), 3), ((2, 4, 4), 1), ((3, 6), 2),
                                        ((0, 3), 0), ((2, 0, 3), 0), ((3, 3), 0)])
@pytest.mark.parametrize("call", list(RANK_CALLS))
def test_matrix_rank_matches_torch(torch, dtype, shape, rank, call):
    a = _low_rank(shape, rank, dtype) if rank else np.zeros(shape, dtype)
    if call == "hermitian" and shape[-1] == shape[-2]:
        a = a @ np.conj(np.swapaxes(a, -1, -2))
    expected = _outcome(torch, lambda t: RANK_CALLS[call](t, t.tensor(a)))
    assert _outcome(gradnb, lambda t: RANK_CALLS[call](t, t.tensor(a))) == expected


def test_matrix_rank_counts_with_the_default_tolerance():
    # eps(float32) * 3 is about 3.6e-7: 1e-7 is below it, 1e-6 above
    A = gradnb.diag(gradnb.tensor([1.0, 1e-6, 1e-7]))
    assert gradnb.linalg.matrix_rank(A).item() == 2
    assert gradnb.linalg.matrix_rank(A.double()).item() == 3
    r = gradnb.linalg.matrix_rank(gradnb.ones(2, 3, 3, requires_grad=True))
    assert r.dtype == gradnb.int64 and r.tolist() == [1, 1] and r.grad_fn is None


def test_matrix_rank_tolerance_broadcasting_warns_as_torch(torch):
    a = _low_rank((2, 4, 3), 2)
    for lib in (torch, gradnb):
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            r = lib.linalg.matrix_rank(lib.tensor(a), atol=lib.tensor([[0.5], [100.0]]))
        assert r.tolist() == [[2, 2], [0, 0]]


RANK_ERRORS = {
    "1-d": lambda t: t.linalg.matrix_rank(t.ones(3)),
    "int64": lambda t: t.linalg.matrix_rank(t.ones(3, 3, dtype=t.int64)),
    "float16": lambda t: t.linalg.matrix_rank(t.ones(3, 3, dtype=t.float16)),
    "int64 with rtol": lambda t: t.linalg.matrix_rank(t.ones(3, 3, dtype=t.int64), rtol=0.1),
    "int64 hermitian with rtol":
        lambda t: t.linalg.matrix_rank(t.ones(3, 3, dtype=t.int64), rtol=0.1, hermitian=True),
    "int64 with tol": lambda t: t.linalg.matrix_rank(t.ones(3, 3, dtype=t.int64), 0.5),
    "complex atol": lambda t: t.linalg.matrix_rank(t.ones(3, 3), atol=t.tensor(1j)),
    "complex rtol": lambda t: t.linalg.matrix_rank(t.ones(3, 3), rtol=t.tensor(1j)),
    "complex tol": lambda t: t.linalg.matrix_rank(t.ones(3, 3), t.tensor(1j)),
    "tol with atol": lambda t: t.linalg.matrix_rank(t.ones(3, 3), 0.5, atol=0.5),
    "tol and rtol keywords": lambda t: t.linalg.matrix_rank(t.ones(3, 3), tol=0.5, rtol=0.5),
    "tol None": lambda t: t.linalg.matrix_rank(t.ones(3, 3), None),
    "hermitian int": lambda t: t.linalg.matrix_rank(t.ones(3, 3), 0.5, 1),
    "atol str": lambda t: t.linalg.matrix_rank(t.ones(3, 3), atol="a"),
    "atol complex number": lambda t: t.linalg.matrix_rank(t.ones(3, 3), atol=1j),
    "hermitian non-square": lambda t: t.linalg.matrix_rank(t.ones(3, 4), hermitian=True),
    "non-finite": lambda t: t.linalg.matrix_rank(t.full((2, 3, 3), float("nan"))),
    "tolerance does not broadcast":
        lambda t: t.linalg.matrix_rank(t.ones(2, 4, 3), atol=t.tensor([0.5, 1.0, 3.0])),
    "out int32": lambda t: t.linalg.matrix_rank(t.ones(3, 3), out=t.empty(0, dtype=t.int32)),
    "out bool": lambda t: t.linalg.matrix_rank(t.ones(3, 3), out=t.empty(0, dtype=t.bool)),
    "out of an input requiring grad": lambda t: t.linalg.matrix_rank(
        t.ones(3, 3, requires_grad=True), out=t.empty(0, dtype=t.int64)),
    "removed torch.matrix_rank": lambda t: t.matrix_rank(t.ones(3, 3)),
}


@pytest.mark.parametrize("call", list(RANK_ERRORS))
def test_matrix_rank_errors_match_torch(torch, call):
    assert _outcome(gradnb, RANK_ERRORS[call]) == _outcome(torch, RANK_ERRORS[call])


# -- the LAPACK kernels ----------------------------------------------------------------------------
def _unpack(ld, ipiv, upper, herm):
    """``(P, M, D)`` with ``A = P M D M^T P^T`` (``^H`` when ``herm``) from ``?sytf2``'s
    output, by applying its interchanges and block transformations as LAPACK documents them."""
    n = ld.shape[0]
    U = np.eye(n, dtype=ld.dtype)
    D = np.zeros((n, n), dtype=ld.dtype)
    order = range(n - 1, -1, -1) if upper else range(n)
    k = order[0]
    while 0 <= k < n:
        s = 1 if ipiv[k] > 0 else 2
        kp = abs(ipiv[k]) - 1
        block = [k - 1, k] if upper and s == 2 else [k, k + 1][:s]
        D[np.ix_(block, block)] = ld[np.ix_(block, block)]
        if s == 2:
            lo, hi = (block[0], block[1])
            D[lo, hi] = ld[lo, hi] if upper else (np.conj(ld[hi, lo]) if herm else ld[hi, lo])
            D[hi, lo] = ld[hi, lo] if not upper else (np.conj(ld[lo, hi]) if herm else ld[lo, hi])
        # the step's factor: P(k) L(k), with L(k)'s multipliers in the block's columns
        Lk = np.eye(n, dtype=ld.dtype)
        rows = slice(0, block[0]) if upper else slice(block[-1] + 1, n)
        Lk[rows, block] = ld[rows, block]
        Pk = np.eye(n, dtype=ld.dtype)
        swap = block[0] if upper else block[-1]
        Pk[[swap, kp]] = Pk[[kp, swap]]
        U = U @ Pk @ Lk
        k = k - s if upper else k + s
    if herm:
        D[np.diag_indices(n)] = D.diagonal().real
    return U, D


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_sytf2_factors_the_matrix(dtype, upper, hermitian, n):
    a = _random((n, n), dtype, seed=n)
    np.fill_diagonal(a, 0.01 * np.diagonal(a))  # small pivots: 2 x 2 blocks and interchanges
    herm = hermitian and np.dtype(dtype).kind == "c"
    A = np.triu(a) if upper else np.tril(a)
    other = np.conj(A.T) if herm else A.T
    A = A + other - np.diag(np.diagonal(A))
    if herm:
        A[np.diag_indices(n)] = A.diagonal().real
    ld, ipiv, info = sytf2(A, upper=upper, hermitian=hermitian)
    assert info == 0
    M, D = _unpack(ld, ipiv, upper, herm)
    Mt = np.conj(M.T) if herm else M.T
    np.testing.assert_allclose(M @ D @ Mt, A, atol=100 * _tol(dtype))
    # the other triangle is left as it was
    kept = np.tril(ld, -1) if upper else np.triu(ld, 1)
    np.testing.assert_array_equal(kept, np.tril(A, -1) if upper else np.triu(A, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("hermitian", [False, True])
def test_sytrs_solves(dtype, upper, hermitian):
    n = 6
    a = _random((3, n, n), dtype, seed=4)
    a[..., np.arange(n), np.arange(n)] *= 0.05
    herm = hermitian and np.dtype(dtype).kind == "c"
    A = a + (np.conj(np.swapaxes(a, -1, -2)) if herm else np.swapaxes(a, -1, -2))
    b = _random((3, n, 2), dtype, seed=5)
    ld, ipiv, info = sytf2(A, upper=upper, hermitian=hermitian)
    assert not info.any()
    x = sytrs(ld, ipiv, b, upper=upper, hermitian=hermitian)
    np.testing.assert_allclose(A @ x, b, atol=1000 * _tol(dtype))


# -- ldl_factor_ex ---------------------------------------------------------------------------------
def _kinds(n, dtype, seed):
    """Symmetric-looking inputs of every kind (only the lower triangle is read): dense,
    indefinite with a zero diagonal (2 x 2 pivots), singular with a zero row and column,
    positive-definite."""
    a = _random((n, n), dtype, seed)
    indefinite = a.copy()
    np.fill_diagonal(indefinite, 0)
    singular = a.copy()
    singular[n // 2, :] = singular[:, n // 2] = 0
    definite = a @ np.conj(a.T) + n * np.eye(n)
    return {"dense": a, "indefinite": indefinite, "singular": singular, "definite": definite}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12])
def test_ldl_factor_ex_matches_torch(torch, dtype, hermitian, n):
    for seed in range(4):
        for kind, a in _kinds(n, dtype, seed).items():
            expected = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
            LD, pivots, info = gradnb.linalg.ldl_factor_ex(gradnb.tensor(a), hermitian=hermitian)
            assert pivots.tolist() == expected.pivots.tolist(), (kind, seed)
            assert info.item() == expected.info.item(), (kind, seed)
            assert pivots.dtype == info.dtype == gradnb.int32
            np.testing.assert_allclose(LD.numpy(), expected.LD.numpy(), rtol=_tol(dtype),
                                       atol=_tol(dtype))
            assert LD.stride() == expected.LD.stride()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_ex_past_lapacks_block_size_matches_torch(torch, dtype, hermitian):
    """Past 64 columns PyTorch's ?sytrf factors in blocks (?lasyf): the same pivots."""
    a = _random((70, 70), dtype, seed=11)
    np.fill_diagonal(a, 0.01 * np.diagonal(a))
    expected = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    LD, pivots, info = gradnb.linalg.ldl_factor_ex(gradnb.tensor(a), hermitian=hermitian)
    assert pivots.tolist() == expected.pivots.tolist() and info.item() == 0
    np.testing.assert_allclose(LD.numpy(), expected.LD.numpy(), atol=1e-9)


@pytest.mark.parametrize("shape", [(2, 3, 3), (2, 1, 4, 4), (0, 3, 3), (2, 0, 0)])
def test_ldl_factor_ex_batches_match_torch(torch, shape):
    a = _random(shape, seed=3)
    a[..., :1, :1] = 0  # a 2 x 2 pivot or an interchange at the start
    expected = torch.linalg.ldl_factor_ex(torch.tensor(a))
    got = gradnb.linalg.ldl_factor_ex(gradnb.tensor(a))
    for g, e in zip(got, expected):
        assert tuple(g.shape) == tuple(e.shape) and g.stride() == e.stride()
        np.testing.assert_allclose(g.numpy(), e.numpy(), atol=1e-12)


def test_ldl_factor_ex_non_finite_matches_torch(torch):
    """NaNs and infinities: pivots and info as PyTorch's LAPACK decides them (an i?amax that
    picks a NaN, no test for a NaN pivot, BLAS skipping zero scales)."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 6))
        a = rng.standard_normal((n, n))
        for _ in range(int(rng.integers(1, 3))):
            a[rng.integers(0, n), rng.integers(0, n)] = rng.choice([np.inf, -np.inf, np.nan, 0.0])
        expected = torch.linalg.ldl_factor_ex(torch.tensor(a))
        LD, pivots, info = gradnb.linalg.ldl_factor_ex(gradnb.tensor(a))
        assert pivots.tolist() == expected.pivots.tolist()
        assert info.item() == expected.info.item()
        np.testing.assert_allclose(LD.numpy(), expected.LD.numpy(), atol=1e-12, equal_nan=True)


def test_ldl_factor_raises_for_a_zero_pivot():
    with pytest.raises(RuntimeError, match="ldl_factor: Unknown error code: 2"):
        gradnb.linalg.ldl_factor(gradnb.tensor([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(RuntimeError, match="ldl_factor_ex: Unknown error code: 1"):
        gradnb.linalg.ldl_factor_ex(gradnb.zeros(2, 3, 3), check_errors=True)
    _, pivots, info = gradnb.linalg.ldl_factor_ex(gradnb.zeros(2, 3, 3))
    assert info.tolist() == [1, 1] and pivots.tolist() == [[1, 2, 3]] * 2


# -- ldl_solve -------------------------------------------------------------------------------------
def _well_conditioned(shape, dtype, seed):
    a = _random(shape, dtype, seed)
    a = a + np.conj(np.swapaxes(a, -1, -2))  # Hermitian (symmetric when real)
    n = shape[-1]
    shift = 3 * n * np.sign(np.arange(n) % 2 - 0.5) * np.eye(n)  # indefinite, far from singular
    return (a + shift).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shapes", [((4, 4), (4, 2)), ((2, 5, 5), (2, 5, 3)), ((3, 3), (2, 3, 1)),
                                    ((2, 3, 3), (1, 3, 2)), ((3, 3), (3, 0)),
                                    ((0, 3, 3), (0, 3, 2))])
def test_ldl_solve_matches_torch(torch, dtype, hermitian, shapes):
    # (PyTorch 2.13 crashes where LD's batch must broadcast, (1, 3, 3) against (4, 3, 2): such
    # calls are checked against the solution only, below)
    a = _well_conditioned(shapes[0], dtype, seed=1)
    a[..., 0, 0] = 0  # pivoting
    if hermitian:
        a = a + np.conj(np.swapaxes(a, -1, -2))
    b = _random(shapes[1], dtype, seed=2)
    LD, pivots, _ = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    expected = torch.linalg.ldl_solve(LD, pivots, torch.tensor(b), hermitian=hermitian)
    got = gradnb.linalg.ldl_solve(gradnb.tensor(LD.numpy()), gradnb.tensor(pivots.numpy()),
                                  gradnb.tensor(b), hermitian=hermitian)
    assert tuple(got.shape) == tuple(expected.shape) and got.stride() == expected.stride()
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=100 * _tol(dtype),
                               atol=100 * _tol(dtype))


@pytest.mark.parametrize("shapes", [((2, 4, 4), (2, 4, 3)), ((1, 4, 4), (3, 4, 2)),
                                    ((2, 1, 4, 4), (3, 4, 1))])
def test_ldl_solve_solves_without_torch(shapes):
    a = _well_conditioned(shapes[0], "float64", seed=3)
    b = _random(shapes[1], seed=4)
    LD, pivots = gradnb.linalg.ldl_factor(gradnb.tensor(a))
    x = gradnb.linalg.ldl_solve(LD, pivots, gradnb.tensor(b))
    np.testing.assert_allclose(a @ x.numpy(), np.broadcast_to(b, x.shape), atol=1e-10)


# -- no derivatives --------------------------------------------------------------------------------
def _backward_outcome(lib, make):
    """The node's name (or None) and the error backward through it raises."""
    A = lib.tensor(_well_conditioned((3, 3), "float64", seed=5), requires_grad=True)
    out = make(lib, A)
    try:
        out.sum().backward()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e).replace("torch", "gradnb")
    return None


UNDERIVABLE = {
    "ldl_factor_ex": lambda t, A: t.linalg.ldl_factor_ex(A).LD,
    "ldl_factor": lambda t, A: t.linalg.ldl_factor(A).LD,
    "ldl_solve through LD": lambda t, A: t.linalg.ldl_solve(
        *t.linalg.ldl_factor(A), t.ones(3, 2, dtype=t.float64)),
    "ldl_solve through B": lambda t, A: t.linalg.ldl_solve(
        *t.linalg.ldl_factor(A.detach()), A),
    "geqrf a": lambda t, A: t.geqrf(A).a,
    "geqrf tau": lambda t, A: t.geqrf(A).tau,
    "Tensor.geqrf": lambda t, A: A.geqrf()[1],
}


@pytest.mark.parametrize("call", list(UNDERIVABLE))
def test_backward_raises_as_torch(torch, call):
    assert _backward_outcome(gradnb, UNDERIVABLE[call]) == _backward_outcome(torch,
                                                                             UNDERIVABLE[call])


def test_underivable_outputs():
    A = gradnb.eye(3, dtype=gradnb.float64, requires_grad=True)
    LD, pivots, info = gradnb.linalg.ldl_factor_ex(A)
    assert LD.requires_grad and not pivots.requires_grad and not info.requires_grad
    a, tau = gradnb.geqrf(A)
    assert a.grad_fn is tau.grad_fn and type(a.grad_fn).__name__ == "GeqrfBackward0"
    B = gradnb.ones(3, 2, dtype=gradnb.float64, requires_grad=True)
    X = gradnb.linalg.ldl_solve(LD.detach(), pivots, B)
    assert len(X.grad_fn.next_functions) == 1  # only B, which requires grad
    with gradnb.no_grad():
        assert gradnb.linalg.ldl_factor_ex(A).LD.grad_fn is None


# -- geqrf -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 2), (0, 3, 2), (3, 0), (1, 1)])
def test_geqrf_matches_torch(torch, dtype, shape):
    a = _random(shape, dtype, seed=6)
    expected = torch.geqrf(torch.tensor(a))
    got = gradnb.geqrf(gradnb.tensor(a))
    for g, e in zip(got, expected):
        assert tuple(g.shape) == tuple(e.shape) and g.stride() == e.stride()
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=_tol(dtype), atol=_tol(dtype))


def test_geqrf_reflectors_give_q():
    a = _random((5, 3), seed=8)
    reflectors, tau = gradnb.geqrf(gradnb.tensor(a))
    Q = gradnb.linalg.householder_product(reflectors, tau).numpy()
    np.testing.assert_allclose(Q @ np.triu(reflectors.numpy()[:3]), a, atol=1e-12)


# -- errors ----------------------------------------------------------------------------------------
def _ld(t):
    a = _well_conditioned((2, 3, 3), "float64", seed=9)
    return t.linalg.ldl_factor_ex(t.tensor(a))


def _non_finite(x):
    return x.isnan(), x.isinf()


LDL_ERRORS = {
    "factor 1-d": lambda t: t.linalg.ldl_factor_ex(t.ones(3)),
    "factor non-square": lambda t: t.linalg.ldl_factor_ex(t.ones(3, 2)),
    "factor int64": lambda t: t.linalg.ldl_factor_ex(t.ones(3, 3, dtype=t.int64)),
    "factor float16": lambda t: t.linalg.ldl_factor_ex(t.ones(3, 3, dtype=t.float16)),
    "factor bfloat16": lambda t: t.linalg.ldl_factor(t.ones(3, 3, dtype=t.bfloat16)),
    "factor hermitian int": lambda t: t.linalg.ldl_factor_ex(t.ones(3, 3), hermitian=1),
    "factor hermitian positional": lambda t: t.linalg.ldl_factor_ex(t.ones(3, 3), True),
    "factor unknown keyword": lambda t: t.linalg.ldl_factor(t.ones(3, 3), upper=True),
    "factor check_errors None": lambda t: t.linalg.ldl_factor_ex(t.ones(3, 3), check_errors=None),
    "factor out dtype": lambda t: t.linalg.ldl_factor_ex(
        t.ones(3, 3, dtype=t.float64),
        out=(t.empty(0), t.empty(0, dtype=t.int32), t.empty(0, dtype=t.int32))),
    "solve B dtype": lambda t: t.linalg.ldl_solve(*_ld(t)[:2], t.ones(2, 3, 4)),
    "solve float pivots": lambda t: t.linalg.ldl_solve(
        _ld(t).LD, _ld(t).pivots.float(), t.ones(2, 3, 4, dtype=t.float64)),
    "solve bool pivots": lambda t: t.linalg.ldl_solve(
        _ld(t).LD, _ld(t).pivots.bool(), t.ones(2, 3, 4, dtype=t.float64)),
    "solve int16 pivots": lambda t: t.linalg.ldl_solve(
        _ld(t).LD, _ld(t).pivots.to(t.int16), t.ones(2, 3, 4, dtype=t.float64)),
    "solve int LD": lambda t: t.linalg.ldl_solve(
        _ld(t).LD.int(), _ld(t).pivots, t.ones(2, 3, 4, dtype=t.float64)),
    "solve non-square LD": lambda t: t.linalg.ldl_solve(
        _ld(t).LD[..., :2], _ld(t).pivots, t.ones(2, 3, 4, dtype=t.float64)),
    "solve pivots shape": lambda t: t.linalg.ldl_solve(
        _ld(t).LD, _ld(t).pivots[..., :2], t.ones(2, 3, 4, dtype=t.float64)),
    "solve B rows": lambda t: t.linalg.ldl_solve(*_ld(t)[:2], t.ones(2, 4, 4, dtype=t.float64)),
    "solve B 1-d": lambda t: t.linalg.ldl_solve(*_ld(t)[:2], t.ones(3, dtype=t.float64)),
    "solve batches": lambda t: t.linalg.ldl_solve(*_ld(t)[:2], t.ones(4, 3, 4, dtype=t.float64)),
    "solve float16": lambda t: t.linalg.ldl_solve(
        t.eye(3, dtype=t.float16), t.tensor([1, 2, 3], dtype=t.int32), t.ones(3, 1).half()),
    "solve zero pivot": lambda t: t.linalg.ldl_solve(
        t.eye(3), t.tensor([1, 2, 0], dtype=t.int32), t.ones(3, 0)),
    "solve pivot past n": lambda t: t.linalg.ldl_solve(
        t.eye(3), t.tensor([1, 2, 4], dtype=t.int64), t.ones(3, 2)),
    "solve a zero D": lambda t: _non_finite(t.linalg.ldl_solve(
        t.zeros(3, 3), t.tensor([1, 2, 3], dtype=t.int32), t.ones(3, 2))),
    "solve hermitian positional": lambda t: t.linalg.ldl_solve(
        t.eye(3), t.tensor([1, 2, 3], dtype=t.int32), t.ones(3, 2), True),
    "factor out of an input requiring grad": lambda t: t.linalg.ldl_factor_ex(
        t.eye(3, dtype=t.float64, requires_grad=True),
        out=(t.empty(0, dtype=t.float64), t.empty(0, dtype=t.int32), t.empty(0, dtype=t.int32))),
    "factor out pivots int64": lambda t: t.linalg.ldl_factor(
        t.eye(3, dtype=t.float64), out=(t.empty(0, dtype=t.float64), t.empty(0, dtype=t.int64))),
    "solve out of inputs requiring grad": lambda t: t.linalg.ldl_solve(
        t.eye(3, dtype=t.float64), t.tensor([1, 2, 3], dtype=t.int32),
        t.ones(3, 2, dtype=t.float64, requires_grad=True), out=t.empty(0, dtype=t.float64)),
    "geqrf out of an input requiring grad": lambda t: t.geqrf(
        t.eye(3, dtype=t.float64, requires_grad=True),
        out=(t.empty(0, dtype=t.float64), t.empty(0, dtype=t.float64))),
    "solve out dtype": lambda t: t.linalg.ldl_solve(
        *_ld(t)[:2], t.ones(2, 3, 4, dtype=t.float64), out=t.empty(0)),
    "geqrf 1-d": lambda t: t.geqrf(t.ones(3)),
    "geqrf int64": lambda t: t.geqrf(t.ones(3, 3, dtype=t.int64)),
    "geqrf float16": lambda t: t.geqrf(t.ones(3, 3, dtype=t.float16)),
    "geqrf complex requiring grad": lambda t: t.geqrf(
        t.eye(3, dtype=t.complex128, requires_grad=True)),
    "geqrf out float32": lambda t: t.geqrf(
        t.eye(3, dtype=t.float64), out=(t.empty(0), t.empty(0))),
}


@pytest.mark.parametrize("call", list(LDL_ERRORS))
def test_ldl_and_geqrf_errors_match_torch(torch, call):
    assert _outcome(gradnb, LDL_ERRORS[call]) == _outcome(torch, LDL_ERRORS[call])


OUT_CALLS = {
    "ldl_factor_ex": lambda t, A, o: t.linalg.ldl_factor_ex(
        A, out=(o(A.dtype), o(t.int32), o(t.int32))),
    "ldl_factor": lambda t, A, o: t.linalg.ldl_factor(A, out=(o(A.dtype), o(t.int32))),
    "ldl_solve": lambda t, A, o: t.linalg.ldl_solve(
        *t.linalg.ldl_factor(A), A[..., :2], out=o(A.dtype)),
    "geqrf": lambda t, A, o: t.geqrf(A, out=(o(A.dtype), o(A.dtype))),
    "geqrf into float32": lambda t, A, o: t.geqrf(A, out=(o(t.float32), o(t.float32))),
}


@pytest.mark.parametrize("call", list(OUT_CALLS))
def test_out_takes_torchs_layout(torch, call):
    a = _well_conditioned((2, 3, 3), "float64", seed=12)

    def layout(lib):
        result = OUT_CALLS[call](lib, lib.tensor(a), lambda dtype: lib.empty(0, dtype=dtype))
        results = result if isinstance(result, tuple) else (result,)
        return [(tuple(r.shape), r.stride(), np.round(r.numpy(), 10).tolist()) for r in results]

    assert layout(gradnb) == layout(torch)
