"""QR in every mode and shape, least squares per LAPACK driver, the pseudo-inverse of
rank-deficient matrices, the nuclear norm and the randomized low-rank SVD/PCA: values, first
and second derivatives against finite differences and PyTorch, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- QR ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("shape", [(3, 5), (2, 2, 4), (4, 4)])
def test_qr_gradients_square_and_wide(oracle, mode, shape):
    oracle(lambda m, a: m.linalg.qr(a, mode), [_random(shape)])


def test_qr_gradient_of_r_alone_for_wide_input(oracle):
    oracle(lambda m, a: m.linalg.qr(a).R, [_random((2, 5))])


def test_qr_complete_of_tall_input_is_not_differentiable():
    A = gradnb.tensor(_random((5, 3)), requires_grad=True)
    Q, R = gradnb.linalg.qr(A, mode="complete")
    with pytest.raises(RuntimeError, match=r"^The QR decomposition is not differentiable when "
                                           r"mode='complete' and nrows > ncols\."):
        (Q.sum() + R.sum()).backward()


def test_qr_mode_r_keeps_r_in_the_graph_and_says_why_it_cannot_differentiate():
    A = gradnb.tensor(_random((4, 3)), requires_grad=True)
    Q, R = gradnb.linalg.qr(A, mode="r")
    assert Q.shape == (0,) and R.requires_grad
    with pytest.raises(RuntimeError, match=r"^The derivative of linalg.qr depends on Q, which is "
                                           r"not computed when mode='r'\."):
        R.sum().backward()


# -- least squares -------------------------------------------------------------------------------
@pytest.mark.torch
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("a_shape,b_shape", [((5, 3), (5, 2)), ((3, 3), (3, 2)), ((2, 4), (2, 1)),
                                             ((2, 5, 3), (2, 5, 2)), ((5, 3), (5,))])
def test_lstsq_outputs_follow_the_driver(torch, driver, a_shape, b_shape):
    a, b = _random(a_shape), _random(b_shape, seed=1)
    ours = gradnb.linalg.lstsq(gradnb.tensor(a), gradnb.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.dtype.name == str(t.dtype).replace("torch.", "")
        np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-10)


@pytest.mark.parametrize("driver", ["gels", "gelsd"])
@pytest.mark.parametrize("a_shape,b_shape", [((5, 3), (5, 2)), ((2, 4), (2, 2)), ((5, 3), (5,))])
def test_lstsq_gradients_of_solution_and_residuals(oracle, driver, a_shape, b_shape):
    oracle(lambda m, a, b: m.linalg.lstsq(a, b, driver=driver)[:2],
           [_random(a_shape), _random(b_shape, seed=1)])


def test_lstsq_rank_deficient_input_drops_the_residuals():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    result = gradnb.linalg.lstsq(gradnb.tensor(a), gradnb.ones(3, 1), driver="gelsd")
    assert int(result.rank) == 1 and result.residuals.shape == (0,)


@pytest.mark.parametrize("call,message", [
    (lambda: gradnb.linalg.lstsq(gradnb.ones(()), gradnb.ones(())),
     "gradnb.linalg.lstsq: input must have at least 2 dimensions."),
    (lambda: gradnb.linalg.lstsq(gradnb.ones(3, 3), gradnb.ones(3, 3), driver="foo"),
     "gradnb.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"),
    (lambda: gradnb.linalg.lstsq(gradnb.ones(3, 3), gradnb.ones(4, 3)),
     "gradnb.linalg.lstsq: input.size(-2) should match other.size(-2)"),
])
def test_lstsq_errors_as_torch(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value).startswith(message)


# -- pseudo-inverse --------------------------------------------------------------------------------
# The pseudo-inverse is continuous only where the rank does not change: as op_db's
# pinv.singular, the leaves are two rank-2 factors of the (rank-deficient) input.
@pytest.mark.parametrize("m,n", [(4, 4), (5, 3), (3, 5)])
def test_pinv_gradients_of_rank_deficient_input(oracle, m, n):
    oracle(lambda mod, a, b: mod.linalg.pinv(a @ b.mT), [_random((m, 2)), _random((n, 2), 1)],
           atol=1e-6)


def test_pinv_gradients_of_batched_rank_deficient_input(oracle):
    oracle(lambda mod, a, b: mod.linalg.pinv(a @ b.mT),
           [_random((2, 4, 2)), _random((2, 3, 2), 1)], gradgrad=False, atol=1e-6)


def test_pinv_hermitian_and_tolerances(oracle):
    a = _random((4, 4))
    oracle(lambda m, x: m.linalg.pinv(x + x.mT, hermitian=True), [a])
    oracle(lambda m, x: m.linalg.pinv(x, atol=0.1), [a])
    oracle(lambda m, x: m.linalg.pinv(x, rtol=0.01), [a])


def test_pinv_errors_as_torch():
    with pytest.raises(RuntimeError, match=r"^linalg\.pinv\(Long\{\[3, 3\]\}\): expected a tensor "
                                           r"with 2 or more dimensions of float"):
        gradnb.linalg.pinv(gradnb.ones(3, 3, dtype=gradnb.int64))


# -- nuclear norm ----------------------------------------------------------------------------------
def test_norm_nuc_gradients(oracle):
    oracle(lambda m, a: m.norm(a, p="nuc"), [_random((3, 4))])
    oracle(lambda m, a: a.norm(p="nuc", dim=(0, 2), keepdim=True), [_random((3, 2, 4))])


def test_norm_nuc_needs_two_dims():
    with pytest.raises(RuntimeError, match=r"^linalg\.matrix_norm: dim must be a 2-tuple\. "
                                           r"Got 0 1 2"):
        gradnb.norm(gradnb.ones(2, 2, 2), p="nuc")


# -- randomized low rank ---------------------------------------------------------------------------
def _seeded(op):
    """``op`` with gradnb's generator (or torch's) reset first: repeatable for gradcheck."""
    def call(m, *args):
        m.manual_seed(0)
        return op(m, *args)

    return call


def _reconstruction(out):
    U, S, V = out
    return U @ (S.unsqueeze(-1) * V.mT)


@pytest.mark.parametrize("m,n", [(5, 4), (4, 6)])
def test_svd_lowrank_of_a_low_rank_matrix(oracle, m, n):
    """Rank 2 and q = 2 (op_db's samples: the leaves are two factors): the approximation is
    exact and smooth, and the product U S V^T (which, unlike the factors' signs, does not depend
    on the random test matrix) matches torch's, as do S."""
    oracle(_seeded(lambda mod, a, b: mod.svd_lowrank(a @ b.mT, q=2)),
           [_random((m, 2)), _random((n, 2), 1)],
           compare=lambda out: (_reconstruction(out), out[1]), atol=1e-6)


@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_of_a_low_rank_matrix(oracle, center):
    oracle(_seeded(lambda mod, a, b: mod.pca_lowrank(a @ b.mT, q=2, center=center)),
           [_random((2, 6, 2)), _random((2, 4, 2), 1)],
           compare=lambda out: (_reconstruction(out), out[1]), gradgrad=False, atol=1e-6)


def test_svd_lowrank_with_m_approximates_a_minus_m():
    a, mean = gradnb.tensor(_random((5, 2)) @ _random((2, 4), 1)), gradnb.tensor(_random((1, 4)))
    gradnb.manual_seed(0)
    out = gradnb.svd_lowrank(a + mean, q=3, M=mean)
    np.testing.assert_allclose(_reconstruction(out).numpy(), a.numpy(), atol=1e-10)


def test_pca_lowrank_checks_q_and_niter():
    with pytest.raises(ValueError, match=r"^q\(=5\) must be non-negative integer and not greater "
                                         r"than min\(m, n\)=3"):
        gradnb.pca_lowrank(gradnb.ones(4, 3), q=5)
    with pytest.raises(ValueError, match=r"^niter\(=-1\) must be non-negative integer"):
        gradnb.pca_lowrank(gradnb.ones(4, 3), niter=-1)
