"""LU with partial pivoting: the factorization kernel against LAPACK (through PyTorch), and
``linalg.lu_factor(_ex)``, ``linalg.lu``, ``lu_unpack``, ``linalg.lu_solve``, ``lu``/``lu_solve``:
first and second derivatives against finite differences and PyTorch, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 3), (2, 4, 2), (2, 2, 4)]


def _matrix(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.torch
@pytest.mark.parametrize("shape", SHAPES + [(0, 3, 3), (1, 1), (6, 6)])
def test_lu_factor_matches_lapack(torch, shape):
    a = _matrix(shape)
    LU, pivots, info = gradnb.linalg.lu_factor_ex(gradnb.tensor(a))
    t_LU, t_pivots, t_info = torch.linalg.lu_factor_ex(torch.tensor(a))
    np.testing.assert_allclose(LU.numpy(), t_LU.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(pivots.numpy(), t_pivots.numpy())
    np.testing.assert_array_equal(info.numpy(), t_info.numpy())
    assert pivots.dtype == gradnb.int32 and info.dtype == gradnb.int32


@pytest.mark.torch
@pytest.mark.parametrize("a", [np.zeros((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0]]),
                               np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 1.0, 1.0]])])
def test_lu_factor_of_singular_matrices_reports_the_first_zero_pivot(torch, a):
    LU, pivots, info = gradnb.linalg.lu_factor_ex(gradnb.tensor(a))
    t_LU, t_pivots, t_info = torch.linalg.lu_factor_ex(torch.tensor(a))
    np.testing.assert_allclose(LU.numpy(), t_LU.numpy(), atol=1e-12)
    np.testing.assert_array_equal(pivots.numpy(), t_pivots.numpy())
    assert int(info) == int(t_info) > 0


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor_gradients(oracle, shape):
    oracle(lambda m, a: m.linalg.lu_factor(a).LU, [_matrix(shape)])


@pytest.mark.parametrize("shape", SHAPES)
def test_linalg_lu_gradients(oracle, shape):
    P, L, U = oracle(lambda m, a: m.linalg.lu(a), [_matrix(shape)])
    np.testing.assert_allclose((P @ L @ U).detach().numpy(), _matrix(shape), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_lu_unpack_gradients(oracle, shape):
    LU, pivots = gradnb.linalg.lu_factor(gradnb.tensor(_matrix(shape)))
    piv = pivots.numpy()

    def unpack(m, lu_data):
        return m.lu_unpack(lu_data, m.tensor(piv))

    oracle(unpack, [LU.numpy()])


@pytest.mark.torch
def test_lu_unpack_leaves_out_what_is_not_asked_for(torch):
    a = _matrix((3, 5))
    LU, pivots = gradnb.linalg.lu_factor(gradnb.tensor(a))
    t_LU, t_pivots = torch.linalg.lu_factor(torch.tensor(a))
    for kwargs in ({"unpack_data": False}, {"unpack_pivots": False}):
        ours = gradnb.lu_unpack(LU, pivots, **kwargs)
        theirs = torch.lu_unpack(t_LU, t_pivots, **kwargs)
        assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs]


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_linalg_lu_solve_gradients(oracle, left, adjoint):
    B = _matrix((3, 2) if left else (2, 3), seed=1)

    def lu_solve(m, a, b):
        LU, pivots = m.linalg.lu_factor(a)
        return m.linalg.lu_solve(LU, pivots, b, left=left, adjoint=adjoint)

    X = oracle(lu_solve, [_matrix((3, 3)), B])
    A = _matrix((3, 3)).T if adjoint else _matrix((3, 3))
    np.testing.assert_allclose((A @ X.detach().numpy()) if left else (X.detach().numpy() @ A), B,
                               atol=1e-12)


def test_linalg_lu_solve_broadcasts_batches(oracle):
    def lu_solve(m, a, b):
        LU, pivots = m.linalg.lu_factor(a)
        return m.linalg.lu_solve(LU, pivots, b)

    oracle(lu_solve, [_matrix((3, 3)), _matrix((2, 3, 2), seed=1)], gradgrad=False)


@pytest.mark.filterwarnings("ignore:torch.lu:UserWarning")  # torch's deprecation notes
def test_lu_and_lu_solve_functions_and_methods(oracle):
    def solve(m, a, b):
        LU, pivots = a.lu()
        return m.lu_solve(b, LU, pivots) + b.lu_solve(LU, pivots)

    oracle(solve, [_matrix((2, 3, 3)), _matrix((2, 3, 1), seed=1)], gradgrad=False)
    *_, infos = gradnb.lu(gradnb.zeros(2, 2), get_infos=True)  # no error: infos say it
    assert int(infos) == 1


@pytest.mark.parametrize("call,error,message", [
    (lambda: gradnb.linalg.lu_factor(gradnb.ones(3)), RuntimeError,
     "gradnb.lu_factor: Expected tensor with 2 or more dimensions. Got size: [3] instead"),
    (lambda: gradnb.linalg.lu(gradnb.ones(3)), RuntimeError,
     "linalg.lu: Expected tensor with 2 or more dimensions. Got size: [3] instead"),
    (lambda: gradnb.linalg.lu_factor(gradnb.ones(3, 3, dtype=gradnb.int64)), NotImplementedError,
     "\"lu_cpu\" not implemented for 'Long'"),
    (lambda: gradnb.linalg.lu_factor(gradnb.ones(3, 3), pivot=False), RuntimeError,
     "linalg.lu_factor: LU without pivoting is not implemented on the CPU"),
    (lambda: gradnb.linalg.lu_factor(gradnb.stack([gradnb.eye(2), gradnb.zeros(2, 2)])),
     RuntimeError, ("gradnb.linalg.lu_factor: (Batch element 1): U[1,1] is zero and using it on "
                   "lu_solve would result in a division by zero.")),
    (lambda: gradnb.linalg.lu_factor_ex(gradnb.zeros(2, 2), check_errors=True), RuntimeError,
     "gradnb.linalg.lu_factor_ex: U[1,1] is zero"),
    (lambda: gradnb.linalg.lu_solve(*gradnb.linalg.lu_factor(gradnb.eye(3)), gradnb.ones(4, 2)),
     RuntimeError, ("linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
                   "(3x3 and 4x2)")),
    (lambda: gradnb.linalg.lu_solve(*gradnb.linalg.lu_factor(gradnb.eye(3)), gradnb.ones(3)),
     RuntimeError, "linalg.lu_solve: The input tensor B must have at least 2 dimensions."),
    (lambda: gradnb.lu_unpack(gradnb.eye(3), gradnb.ones(3, dtype=gradnb.int64)), RuntimeError,
     "gradnb.lu_unpack: LU_pivots is expected to be a contiguous tensor of gradnb.int32 dtype."),
])
def test_lu_errors_as_torch(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message)
