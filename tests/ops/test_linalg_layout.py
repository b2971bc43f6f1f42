"""LAPACK-backed results are laid out as PyTorch lays them out: column-major matrices, batch
dimensions outermost (``linalg.inv`` of a ``3 x 3`` has strides ``(1, 3)``), row-major where
PyTorch's are (``linalg.lu``'s factors, a right-hand ``lu_solve``). A later ``reshape`` is then
a view of a non-contiguous tensor in both (``ReshapeAliasBackward0``), and saved strides agree."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.ops.lapack import column_major


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _spd(shape, seed=0):
    a = _random(shape, seed)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _rhs(a, cols=2):
    return _random(a.shape[:-1] + (cols,), seed=1)


def _rhs_right(a, rows=2):
    return _random(a.shape[:-2] + (rows, a.shape[-1]), seed=1)


SQUARE = [(3, 3), (2, 3, 3), (2, 1, 3, 3), (0, 3, 3)]
RECT = [(4, 3), (3, 4), (2, 4, 3), (2, 3, 4)]

# name, input maker, shapes, f(module, A array, tensor maker) -> tensor or tuple of tensors
CASES = [
    ("linalg.inv", _random, SQUARE, lambda m, a, t: m.linalg.inv(t(a))),
    ("inverse", _random, SQUARE, lambda m, a, t: m.inverse(t(a))),
    ("linalg.inv_ex", _random, SQUARE, lambda m, a, t: m.linalg.inv_ex(t(a))),
    ("linalg.solve", _random, SQUARE, lambda m, a, t: m.linalg.solve(t(a), t(_rhs(a)))),
    ("linalg.solve vector", _random, SQUARE,
     lambda m, a, t: m.linalg.solve(t(a), t(_random(a.shape[:-1], 1)))),
    ("linalg.solve right", _random, SQUARE,
     lambda m, a, t: m.linalg.solve(t(a), t(_rhs_right(a)), left=False)),
    ("linalg.solve_triangular", _random, SQUARE,
     lambda m, a, t: m.linalg.solve_triangular(t(a) + 3 * m.eye(3, dtype=m.float64),
                                               t(_rhs(a)), upper=True)),
    ("linalg.solve_triangular right", _random, SQUARE,
     lambda m, a, t: m.linalg.solve_triangular(t(a) + 3 * m.eye(3, dtype=m.float64),
                                               t(_rhs_right(a)), upper=False, left=False)),
    ("triangular_solve", _random, SQUARE,
     lambda m, a, t: m.triangular_solve(t(_rhs(a)), t(a) + 3 * m.eye(3, dtype=m.float64))),
    ("linalg.cholesky", _spd, SQUARE, lambda m, a, t: m.linalg.cholesky(t(a))),
    ("linalg.cholesky upper", _spd, SQUARE, lambda m, a, t: m.linalg.cholesky(t(a), upper=True)),
    ("cholesky", _spd, SQUARE, lambda m, a, t: m.cholesky(t(a))),
    ("cholesky_solve", _spd, SQUARE,
     lambda m, a, t: m.cholesky_solve(t(_rhs(a)), m.linalg.cholesky(t(a)))),
    ("cholesky_inverse", _spd, SQUARE,
     lambda m, a, t: m.cholesky_inverse(m.linalg.cholesky(t(a)))),
    ("linalg.qr", _random, RECT, lambda m, a, t: m.linalg.qr(t(a))),
    ("linalg.qr complete", _random, RECT, lambda m, a, t: m.linalg.qr(t(a), mode="complete")),
    ("linalg.qr r", _random, RECT, lambda m, a, t: m.linalg.qr(t(a), mode="r")),
    ("linalg.eigh", _spd, SQUARE, lambda m, a, t: m.linalg.eigh(t(a))),
    ("linalg.eig", _random, SQUARE[:3], lambda m, a, t: m.linalg.eig(t(a))),
    ("linalg.svd", _random, RECT, lambda m, a, t: m.linalg.svd(t(a))),
    ("linalg.svd reduced", _random, RECT,
     lambda m, a, t: m.linalg.svd(t(a), full_matrices=False)),
    ("svd", _random, RECT, lambda m, a, t: m.svd(t(a))),
    ("svd no uv", _random, RECT, lambda m, a, t: m.svd(t(a), compute_uv=False)),
    ("linalg.pinv", _random, RECT, lambda m, a, t: m.linalg.pinv(t(a))),
    ("linalg.lu_factor", _random, RECT + SQUARE[:3], lambda m, a, t: m.linalg.lu_factor(t(a))),
    ("linalg.lu", _random, RECT, lambda m, a, t: m.linalg.lu(t(a))),
    ("lu_unpack", _random, RECT, lambda m, a, t: m.lu_unpack(*m.linalg.lu_factor(t(a)))),
    ("linalg.lu_solve", _random, SQUARE[:3],
     lambda m, a, t: m.linalg.lu_solve(*m.linalg.lu_factor(t(a)), t(_rhs(a)))),
    ("linalg.lu_solve adjoint", _random, SQUARE[:3],
     lambda m, a, t: m.linalg.lu_solve(*m.linalg.lu_factor(t(a)), t(_rhs(a)), adjoint=True)),
    ("linalg.lu_solve right", _random, SQUARE[:3],
     lambda m, a, t: m.linalg.lu_solve(*m.linalg.lu_factor(t(a)), t(_rhs_right(a)),
                                       left=False)),
    ("linalg.lstsq", _random, RECT, lambda m, a, t: m.linalg.lstsq(t(a), t(_rhs(a)))),
    ("linalg.lstsq vector", _random, RECT,
     lambda m, a, t: m.linalg.lstsq(t(a), t(_random(a.shape[:-1], 1)))),
    ("linalg.householder_product", _random, [(4, 3), (2, 4, 3)],
     lambda m, a, t: m.linalg.householder_product(t(a), t(_random(a.shape[:-1][:-1] + (3,), 1)))),
    ("ormqr", _random, [(4, 3), (2, 4, 3)],
     lambda m, a, t: m.ormqr(t(a), t(_random(a.shape[:-2] + (3,), 1)), t(_rhs(a)))),
    ("linalg.matrix_exp", _random, SQUARE[:3], lambda m, a, t: m.linalg.matrix_exp(t(a))),
    ("linalg.tensorinv", lambda s: _random(s) + 6 * np.eye(6).reshape(s), [(2, 3, 6)],
     lambda m, a, t: m.linalg.tensorinv(t(a), ind=2)),
]


def _assert_same_layout(ours, theirs, torch):
    """Shapes, strides and contiguity of each output alike. An empty tensor that PyTorch lays
    out row-major is left out of the strides: gradnb shows NumPy's strides for those (zeros),
    a matter of the core, not of these ops."""
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.is_contiguous() == t.is_contiguous()
        if t.numel() or t.stride() != torch.empty(t.shape).stride():
            assert o.stride() == t.stride()


@pytest.mark.torch
@pytest.mark.parametrize("name,make,shape,f", [
    pytest.param(n, mk, s, f, id=f"{n}-{'x'.join(map(str, s))}")
    for n, mk, shapes, f in CASES for s in shapes])
def test_strides_are_pytorchs(torch, name, make, shape, f):
    a = make(shape)
    theirs = f(torch, a, torch.tensor)
    ours = f(gradnb, a, gradnb.tensor)
    _assert_same_layout(ours, theirs, torch)


@pytest.mark.torch
def test_reshape_of_inverse_is_reshape_alias(torch):
    a = _random((6, 6)) + 6 * np.eye(6)
    ours = gradnb.linalg.inv(gradnb.tensor(a, requires_grad=True)).reshape(6, 2, 3)
    theirs = torch.linalg.inv(torch.tensor(a, requires_grad=True)).reshape(6, 2, 3)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == \
        "ReshapeAliasBackward0"
    assert ours.stride() == theirs.stride()


@pytest.mark.parametrize("shape,rows,strides", [((3, 3), None, (1, 3)), ((2, 3, 2), None, (6, 1, 3)),
                                                ((2, 3, 1), None, (3, 1, 3)),
                                                ((0, 3, 3), None, (9, 1, 3)),
                                                ((0, 3), None, (1, 1)), ((3, 0), None, (1, 3)),
                                                ((2, 3, 2), 4, (8, 1, 4)), ((4,), None, (1,))])
def test_column_major(shape, rows, strides):
    x = _random(shape)
    y = column_major(x, rows)
    np.testing.assert_array_equal(y, x)
    assert tuple(s // y.itemsize for s in y.strides) == strides
    assert column_major(y) is y or rows is not None
