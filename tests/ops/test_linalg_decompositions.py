"""The decompositions and solvers of ``gradnb.linalg`` against PyTorch: complex inputs (values
and gradients, conjugate transposes and all), ``LinAlgError`` with PyTorch's messages for a
singular or not positive-definite matrix, the ``_ex`` variants' ``info`` and results, the
condition number's errors and infinities, and the real dtype of a complex tensor's norms."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

from ..fuzz import strategies as S
from ..fuzz.differential import Case, check

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _square(n=3, batch=(), dtype="complex128"):
    return S.well_conditioned(RNG, batch + (n, n), dtype)


def _hermitian_pd(n=3, dtype="complex128"):
    return S.positive_definite(RNG, (n, n), dtype)


def _rect(m, n, dtype="complex128"):
    return S.full_rank(RNG, (m, n), dtype)


def _any(*shape, dtype="complex128"):
    return S.array(RNG, shape, dtype)


def _phase_free_svd(t, a):
    """An SVD's outputs with the singular vectors' phases cancelled (a loss must not see them)."""
    U, S_, Vh = t.linalg.svd(a, full_matrices=False)
    return U @ Vh, S_


def _phase_free_torch_svd(t, a):
    """``torch.svd``'s ``V`` is ``Vh``'s conjugate transpose: ``U V^H`` has no phase."""
    U, S_, V = t.svd(a)
    return U @ V.mH, S_


def _phase_free_eigh(t, a):
    L, V = t.linalg.eigh(a)
    return L, V.abs()


COMPLEX_CASES = [
    Case("inv", lambda t, a: t.linalg.inv(a), (_square(),)),
    Case("inv batched", lambda t, a: t.linalg.inv(a), (_square(2, (2,)),)),
    Case("inv_ex", lambda t, a: t.linalg.inv_ex(a), (_square(),)),
    Case("det", lambda t, a: t.linalg.det(a), (_square(3, (2,)),)),
    Case("slogdet", lambda t, a: t.linalg.slogdet(a), (_square(),)),
    Case("logdet", lambda t, a: t.logdet(a), (_square(),)),
    Case("solve", lambda t, a, b: t.linalg.solve(a, b), (_square(), _any(3, 2))),
    Case("solve vector", lambda t, a, b: t.linalg.solve(a, b), (_square(), _any(3))),
    Case("solve left=False", lambda t, a, b: t.linalg.solve(a, b, left=False),
         (_square(), _any(2, 3))),
    Case("solve_triangular", lambda t, a, b: t.linalg.solve_triangular(a, b, upper=True),
         (np.triu(_square()), _any(3, 2))),
    Case("solve_triangular right unit",
         lambda t, a, b: t.linalg.solve_triangular(a, b, upper=False, left=False,
                                                   unitriangular=True),
         (np.tril(_square()), _any(2, 3))),
    Case("triangular_solve transpose",
         lambda t, b, a: t.triangular_solve(b, a, upper=False, transpose=True),
         (_any(3, 2), np.tril(_square()))),
    Case("cholesky", lambda t, a: t.linalg.cholesky(a), (_hermitian_pd(),)),
    Case("cholesky upper", lambda t, a: t.linalg.cholesky(a, upper=True), (_hermitian_pd(),)),
    Case("cholesky_ex", lambda t, a: t.linalg.cholesky_ex(a), (_hermitian_pd(),)),
    Case("cholesky_solve", lambda t, b, f: t.cholesky_solve(b, f, upper=True),
         (_any(3, 2), np.triu(_square()))),
    Case("cholesky_inverse", lambda t, f: t.cholesky_inverse(f),
         (np.linalg.cholesky(_hermitian_pd()),)),
    Case("cholesky_inverse of a complex diagonal",  # LAPACK's lauum reads it as real
         lambda t, f: t.cholesky_inverse(f), (np.tril(_square()),)),
    Case("qr tall", lambda t, a: t.linalg.qr(a), (_rect(4, 3),)),
    Case("qr wide", lambda t, a: t.linalg.qr(a), (_rect(2, 4),)),
    Case("qr complete", lambda t, a: t.linalg.qr(a, mode="complete"), (_rect(3, 3),)),
    Case("eigh", _phase_free_eigh, (_hermitian_pd(),)),
    Case("eigvalsh", lambda t, a: t.linalg.eigvalsh(a, UPLO="U"), (_hermitian_pd(),)),
    Case("svd", _phase_free_svd, (_rect(3, 2),)),
    Case("svdvals", lambda t, a: t.linalg.svdvals(a), (_rect(2, 3),)),
    Case("torch.svd", _phase_free_torch_svd, (_rect(3, 3),)),
    Case("pinv", lambda t, a: t.linalg.pinv(a), (_rect(3, 2),)),
    Case("pinv hermitian", lambda t, a: t.linalg.pinv(a, hermitian=True), (_hermitian_pd(),)),
    Case("lstsq", lambda t, a, b: t.linalg.lstsq(a, b, driver="gelsd"), (_rect(4, 2), _any(4, 2))),
    Case("matrix_exp", lambda t, a: t.linalg.matrix_exp(a), (_any(3, 3) / 3,)),
    Case("matrix_power -2", lambda t, a: t.linalg.matrix_power(a, -2), (_square(),)),
    Case("matrix_norm nuc", lambda t, a: t.linalg.matrix_norm(a, "nuc"), (_rect(3, 2),)),
    Case("matrix_norm 2", lambda t, a: t.linalg.matrix_norm(a, 2), (_rect(3, 2),)),
    Case("matrix_norm fro", lambda t, a: t.linalg.matrix_norm(a), (_rect(3, 2),)),
    Case("cond", lambda t, a: t.linalg.cond(a), (_rect(3, 2),)),
    Case("cond nuc", lambda t, a: t.linalg.cond(a, "nuc"), (_square(),)),
    Case("tensorinv", lambda t, a: t.linalg.tensorinv(a, ind=1), (_square(4).reshape(4, 2, 2),)),
    Case("lu_factor", lambda t, a: t.linalg.lu_factor(a), (_square(),)),
    Case("lu wide", lambda t, a: t.linalg.lu(a), (_rect(2, 3),)),
    Case("lu tall", lambda t, a: t.linalg.lu(a), (_rect(3, 2),)),
    Case("lu_solve adjoint", lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b,
                                                              adjoint=True),
         (_square(), _any(3, 2))),
    Case("lu_solve right", lambda t, a, b: t.linalg.lu_solve(*t.linalg.lu_factor(a), b,
                                                            left=False),
         (_square(), _any(2, 3))),
]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=lambda c: c.label)
def test_complex_values_and_gradients_match_torch(case):
    check(case)


@pytest.mark.parametrize("case", COMPLEX_CASES[:12], ids=lambda c: c.label)
def test_complex64_values_match_torch(case):
    check(Case(case.label, case.call,
               tuple(a.astype(np.complex64) if isinstance(a, np.ndarray) else a
                     for a in case.args)))


@pytest.mark.parametrize("name,call,args", [
    ("det", lambda t, a: t.linalg.det(a), (_square(),)),
    ("slogdet", lambda t, a: t.linalg.slogdet(a), (_square(),)),
    ("cholesky", lambda t, a: t.linalg.cholesky(a), (_hermitian_pd(),)),
    ("qr", lambda t, a: t.linalg.qr(a), (_rect(2, 3),)),
    ("matrix_exp", lambda t, a: t.linalg.matrix_exp(a), (_any(3, 3) / 3,)),
    ("svdvals", lambda t, a: t.linalg.svdvals(a), (_rect(3, 2),)),
    ("vector_norm", lambda t, a: t.linalg.vector_norm(a, 3), (_any(4),)),
    ("det of a batch with a singular matrix",
     lambda t, a: t.linalg.det(a), (np.stack([[[1.0, 2.0], [2.0, 4.0]], np.eye(2)]),)),
])
def test_second_derivatives_match_torch(name, call, args):
    """The gradient of a gradient's squared norm, as PyTorch's (det at a singular matrix: the
    SVD's cofactors there, a solve elsewhere)."""
    results = []
    for lib in (torch, gradnb):
        xs = [lib.tensor(a, requires_grad=True) for a in args]
        outs = call(lib, *xs)
        outs = [o for o in (outs if isinstance(outs, tuple) else (outs,)) if o.requires_grad]
        grads = lib.autograd.grad(outs, xs, [lib.ones_like(o) for o in outs], create_graph=True)
        total = sum((g * g.conj()).real.sum() if g.dtype.is_complex else (g * g).sum()
                    for g in grads)
        results.append([g.detach().resolve_conj().numpy() if lib is torch else g.numpy()
                        for g in lib.autograd.grad(total, xs)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


# -- LinAlgError --------------------------------------------------------------------------------
SINGULAR = np.zeros((2, 2))
BATCH = np.stack([np.eye(2), np.zeros((2, 2)), np.zeros((2, 2))])
RANK_ONE = np.array([[1.0, 2.0], [2.0, 4.0]])
NOT_PD = np.array([[4.0, 2.0, 1.0], [2.0, 1.0, 3.0], [1.0, 3.0, 5.0]])  # fails at order 2
NAN = np.array([[1.0, np.nan], [0.0, 1.0]])


def _rhs(a):
    return np.ones(a.shape[:-1] + (1,))


ERROR_CASES = [
    Case(f"{name} {label}", call, (a,))
    for a, label in ((SINGULAR, "singular"), (BATCH, "batch"), (RANK_ONE, "rank one"),
                     (NOT_PD, "not positive-definite"))
    for name, call in [
        ("inv", lambda t, a: t.linalg.inv(a)),
        ("inverse", lambda t, a: t.inverse(a)),
        ("inv_ex check_errors", lambda t, a: t.linalg.inv_ex(a, check_errors=True)),
        ("solve", lambda t, a: t.linalg.solve(a, t.ones_like(a[..., :1]))),
        ("solve_ex check_errors",
         lambda t, a: t.linalg.solve_ex(a, t.ones_like(a[..., :1]), check_errors=True)),
        ("cholesky", lambda t, a: t.linalg.cholesky(a)),
        ("cholesky upper", lambda t, a: t.linalg.cholesky(a, upper=True)),
        ("cholesky_ex check_errors", lambda t, a: t.linalg.cholesky_ex(a, check_errors=True)),
        ("cholesky_inverse", lambda t, a: t.cholesky_inverse(a.tril())),
        ("matrix_power -1", lambda t, a: t.linalg.matrix_power(a, -1)),
        ("lu_factor", lambda t, a: t.linalg.lu_factor(a)),
    ]
] + [
    Case("tensorinv", lambda t, a: t.linalg.tensorinv(a, ind=1), (np.zeros((4, 2, 2)),)),
    Case("tensorsolve", lambda t, a, b: t.linalg.tensorsolve(a, b),
         (np.zeros((2, 2, 4)), np.ones((2, 2)))),
    Case("svd of NaN", lambda t, a: t.linalg.svd(a), (NAN,)),
    Case("svdvals of a batch with NaN", lambda t, a: t.linalg.svdvals(a),
         (np.stack([np.eye(2), NAN]),)),
    Case("pinv of NaN", lambda t, a: t.linalg.pinv(a), (NAN,)),
    Case("cholesky of NaN", lambda t, a: t.linalg.cholesky(a), (np.array([[np.nan]]),)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.label)
def test_failed_routines_raise_torchs_error(case):
    """The same exception (``LinAlgError`` where PyTorch's is one) with PyTorch's message."""
    check(case)


def test_linalg_error_is_a_runtime_error_caught_as_torchs():
    assert issubclass(gradnb.linalg.LinAlgError, RuntimeError)
    with pytest.raises(gradnb.linalg.LinAlgError) as ours:
        gradnb.linalg.inv(gradnb.zeros(3, 2, 2))
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        torch.linalg.inv(torch.zeros(3, 2, 2))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("a", [SINGULAR, BATCH, RANK_ONE, NOT_PD], ids=["zero", "batch",
                                                                       "rank one", "not pd"])
@pytest.mark.parametrize("name,call", [
    ("inv_ex", lambda t, a: t.linalg.inv_ex(a)),
    ("solve_ex", lambda t, a: t.linalg.solve_ex(a, t.ones_like(a[..., :1]))),
    ("cholesky_ex", lambda t, a: t.linalg.cholesky_ex(a)),
    ("cholesky_ex upper", lambda t, a: t.linalg.cholesky_ex(a, upper=True)),
    ("lu_factor_ex", lambda t, a: t.linalg.lu_factor_ex(a)),
    ("lu_solve", lambda t, a: t.linalg.lu_solve(*t.linalg.lu_factor_ex(a)[:2],
                                                t.ones_like(a[..., :1]))),
    ("solve_triangular", lambda t, a: t.linalg.solve_triangular(a.triu(), t.ones_like(a[..., :1]),
                                                                upper=True)),
    ("cholesky_solve", lambda t, a: t.cholesky_solve(t.ones_like(a[..., :1]), a.tril())),
    ("det", lambda t, a: t.linalg.det(a)),
    ("cond", lambda t, a: [t.linalg.cond(a, p) for p in (1, -1, float("inf"), "fro", "nuc")]),
])
def test_unchecked_routines_return_lapacks_info_and_infinities(name, call, a):
    """No error where PyTorch raises none: ``info`` says where, the result is LAPACK's
    (infinities and NaNs for a zero pivot), the condition number infinite."""
    check(Case(name, call, (a,), grad=False))


def test_the_det_gradient_at_a_singular_matrix_is_torchs():
    check(Case("det", lambda t, a: t.linalg.det(a), (np.stack([RANK_ONE, SINGULAR]),)))


def test_ex_results_are_named_as_torchs():
    assert gradnb.linalg.inv_ex(gradnb.eye(2)).inverse.shape == (2, 2)
    assert gradnb.linalg.inv_ex(gradnb.eye(2)).info.item() == 0
    assert gradnb.linalg.cholesky_ex(gradnb.eye(2)).L.shape == (2, 2)
    assert gradnb.linalg.solve_ex(gradnb.eye(2), gradnb.ones(2)).result.shape == (2,)


# -- the condition number -------------------------------------------------------------------------
@pytest.mark.parametrize("p", [1, 1.0, -1, float("inf"), float("-inf"), "fro", "nuc", 2, -2,
                               None, 1.5, "abc"])
def test_cond_of_a_non_square_matrix(p):
    """PyTorch's message names the order: ``linalg.cond(ord=1): A must be batches of square
    matrices``; the orders +-2 need no square matrix, an unknown order is refused."""
    check(Case(f"cond {p}", lambda t, a: t.linalg.cond(a, p), (np.ones((3, 1)),)))


@pytest.mark.parametrize("case", [
    Case("1-D", lambda t, a: t.linalg.cond(a, 1), (np.ones(3),)),
    Case("integer", lambda t, a: t.linalg.cond(a, 1), (np.ones((2, 2), np.int64),)),
    Case("integer, ord 2", lambda t, a: t.linalg.cond(a), (np.ones((2, 2), np.int64),)),
    Case("empty", lambda t, a: t.linalg.cond(a, 1), (np.zeros((3, 0, 2)),)),
    Case("empty, fro", lambda t, a: t.linalg.cond(a, "fro"), (np.zeros((0, 0)),)),
    Case("real gradient through inv_ex's overwritten output",
         lambda t, a: t.linalg.cond(a, 1), (_square(dtype="float64"),)),
], ids=lambda c: c.label)
def test_cond_edges(case):
    check(case)


# -- norms of complex tensors ---------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    Case("vector_norm 3", lambda t, z: t.linalg.vector_norm(z, ord=3), (_any(2, 3),)),
    Case("vector_norm 0", lambda t, z: t.linalg.vector_norm(z, ord=0), (_any(2, 3),)),
    Case("vector_norm inf dim 1", lambda t, z: t.linalg.vector_norm(z, float("inf"), 1),
         (_any(2, 3),)),
    Case("vector_norm 1 keepdim", lambda t, z: t.linalg.vector_norm(z, 1, 0, True),
         (_any(2, 3),)),
    Case("vector_norm 0.5", lambda t, z: t.linalg.vector_norm(z, 0.5), (_any(2, 3),)),
    Case("vector_norm dtype", lambda t, z: t.linalg.vector_norm(z, dtype=t.complex128),
         (_any(3, dtype="complex64"),)),
    Case("norm ord 2 dim 0", lambda t, z: t.linalg.norm(z, ord=2, dim=0), (_any(2, 2),)),
    Case("norm", lambda t, z: t.linalg.norm(z), (_any(2, 2),)),
    Case("torch.norm p 3", lambda t, z: t.norm(z, 3), (_any(2, 2),)),
    Case("Tensor.norm", lambda t, z: z.norm(), (_any(2, 2, dtype="complex64"),)),
    Case("dist", lambda t, a, b: t.dist(a, b), (_any(3), _any(3))),
    Case("renorm", lambda t, z: t.renorm(z, 2, 0, 1.0), (_any(2, 3),)),
], ids=lambda c: c.label)
def test_norms_of_complex_tensors_are_real(case):
    check(case)


@pytest.mark.parametrize("case", [
    Case("complex input, real dtype", lambda t, z: t.linalg.vector_norm(z, dtype=t.float64),
         (np.ones(2, np.complex64),)),
    Case("real input, complex dtype", lambda t, x: t.linalg.vector_norm(x, dtype=t.complex128),
         (np.ones(2, np.float32),)),
    Case("narrowing", lambda t, x: t.linalg.vector_norm(x, dtype=t.float16),
         (np.ones(2, np.float32),)),
    Case("integer dtype", lambda t, x: t.linalg.vector_norm(x, dtype=t.int64),
         (np.ones(2, np.float32),)),
    Case("integer input", lambda t, x: t.linalg.vector_norm(x, dtype=t.float32),
         (np.ones(2, np.int64),)),
    Case("matrix_norm", lambda t, x: t.linalg.matrix_norm(x, 1, dtype=t.complex128),
         (np.ones((2, 2), np.float32),)),
    Case("linalg.norm", lambda t, z: t.linalg.norm(z, dtype=t.float64),
         (np.ones(2, np.complex64),)),
], ids=lambda c: c.label)
def test_norm_dtype_errors(case):
    check(case)


# -- QR's mode='r' --------------------------------------------------------------------------------
def test_qr_mode_r_q_is_an_empty_output_of_the_node():
    """As PyTorch's: Q requires grad (an output of LinalgQrBackward0), and backward through R
    says why it cannot run."""
    check(Case("qr r", lambda t, a: t.linalg.qr(a, mode="r"), (np.eye(2, 4) * 2.0,)))
    A = gradnb.tensor(np.eye(2, 4) * 2.0, requires_grad=True)
    Q, R = gradnb.linalg.qr(A, mode="r")
    assert Q.grad_fn is R.grad_fn and Q.grad_fn.name() == "LinalgQrBackward0"


# -- the other linalg ops on complex and mixed-dtype input ---------------------------------------
def _real(*shape):
    return S.array(RNG, shape, "float64")


def _phase_free_eig(result):
    """Eigenvalues and the eigenvectors' moduli (a loss must not see their phases)."""
    return result.eigenvalues, result.eigenvectors.abs()


@pytest.mark.parametrize("case", [
    Case("eigvals", lambda t, a: t.linalg.eigvals(a), (_square(3, (2,)),)),
    Case("eig, phase-free", lambda t, a: _phase_free_eig(t.linalg.eig(a)), (_square(3),)),
    Case("matrix_power -2", lambda t, a: t.linalg.matrix_power(a, -2), (_square(3) / 4,)),
    Case("matrix_power 3", lambda t, a: t.linalg.matrix_power(a, 3), (_square(3, (2,)) / 4,)),
    Case("vecdot", lambda t, x, y: t.linalg.vecdot(x, y, dim=0), (_any(4, 3), _any(4, 1))),
    Case("vecdot of vectors", lambda t, x, y: t.linalg.vecdot(x, y, dim=5), (_any(3), _any(3))),
    Case("cross", lambda t, x, y: t.linalg.cross(x, y, dim=0), (_any(3, 2), _any(3, 2))),
    Case("vander", lambda t, x: t.linalg.vander(x, N=3), (_any(2, 4),)),
    Case("multi_dot", lambda t, x, y, z: t.linalg.multi_dot([x, y, z]),
         (_any(3), _any(3, 2), _any(2))),
    Case("tensorinv", lambda t, a: t.linalg.tensorinv(a, ind=1), (_square(6).reshape(6, 2, 3),)),
    Case("tensorsolve dims", lambda t, a, b: t.linalg.tensorsolve(a, b, dims=(0,)),
         (_square(6).reshape(6, 2, 3).transpose(1, 0, 2).copy(), _any(2, 3))),
    Case("solve_ex", lambda t, a, b: t.linalg.solve_ex(a, b, left=False),
         (_square(3), _any(2, 3))),
    Case("lstsq gelsd rcond", lambda t, a, b: t.linalg.lstsq(a, b, rcond=0.5, driver="gelsd"),
         (_rect(4, 3), _any(4, 2))),
    Case("lstsq gelss negative rcond",
         lambda t, a, b: t.linalg.lstsq(a, b, rcond=-1.0, driver="gelss"),
         (_rect(4, 3), _any(4, 2))),
], ids=lambda c: c.label)
def test_other_ops_on_complex_input_as_torch(case):
    check(case)


@pytest.mark.parametrize("case", [
    Case("vecdot mixed", lambda t, x, y: t.linalg.vecdot(x, y), (_any(2, 4), _real(4))),
    Case("vecdot integer", lambda t, x, y: t.linalg.vecdot(x, y),
         (np.ones(3, np.int64), np.ones(3, np.int64))),
    Case("cross mixed", lambda t, x, y: t.linalg.cross(x, y), (_any(3), _real(3))),
    Case("multi_dot mixed", lambda t, x, y: t.linalg.multi_dot([x, y]), (_any(2, 3), _real(3, 4))),
    Case("multi_dot middle rank", lambda t, x, y, z: t.linalg.multi_dot([x, y, z]),
         (_any(2, 3), _any(3, 3, 3), _real(3, 2))),
    Case("multi_dot last rank", lambda t, x, y, z: t.linalg.multi_dot([x, y, z]),
         (_any(2, 3), _real(3, 3), _any(3, 3, 3))),
    Case("multi_dot shapes", lambda t, x, y, z: t.linalg.multi_dot([x, y, z]),
         (_any(2, 3), _any(3, 2), _any(3, 2))),
    Case("vander N=1", lambda t, x: t.linalg.vander(x, N=1), (_any(3),)),
    Case("vander of one", lambda t, x: t.linalg.vander(x), (_any(1),)),
    Case("vander bool", lambda t, x: t.linalg.vander(x), (np.ones(3, bool),)),
    Case("tensorinv ind", lambda t, a: t.linalg.tensorinv(a, ind=0), (_any(2, 3, 6),)),
    Case("tensorinv sizes", lambda t, a: t.linalg.tensorinv(a, ind=2), (_any(2, 3, 4),)),
    Case("tensorsolve sizes", lambda t, a, b: t.linalg.tensorsolve(a, b), (_any(2, 3, 4), _any(2, 3))),
    Case("tensorsolve dims", lambda t, a, b: t.linalg.tensorsolve(a, b, dims=(0,)),
         (_any(2, 6, 3), _any(2, 3))),
    Case("tensorsolve dim range", lambda t, a, b: t.linalg.tensorsolve(a, b, dims=(0, 5)),
         (_any(6, 2, 3), _any(2, 3))),
    Case("eigvals integer", lambda t, a: t.linalg.eigvals(a), (np.ones((3, 2), np.int64),)),
    Case("eigvals not square", lambda t, a: t.linalg.eigvals(a), (_any(3, 2),)),
    Case("eig half", lambda t, a: t.linalg.eig(a), (np.ones((3, 3), np.float16),)),
    Case("eig non-finite", lambda t, a: t.linalg.eig(a), (np.full((2, 2), np.inf),)),
], ids=lambda c: c.label)
def test_other_ops_errors_as_torch(case):
    check(case)
