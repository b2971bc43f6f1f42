"""Householder products in ``geqrf``'s convention: ``linalg.householder_product`` (``orgqr``) and
``ormqr``, on reflectors from PyTorch's ``geqrf`` and on random ones: values, first and second
derivatives against finite differences and PyTorch, real and complex (``H = I - tau v v^H``,
``ormqr``'s ``transpose`` the conjugate transpose), and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

from ..fuzz.differential import Case, check


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _complex(shape, seed=0, dtype="complex128"):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 4, 2)])
def test_householder_product_of_geqrf_is_qr_q(torch, shape):
    a = torch.tensor(_random(shape))
    reflectors, tau = torch.geqrf(a)
    Q = gradnb.linalg.householder_product(gradnb.tensor(reflectors.numpy()),
                                          gradnb.tensor(tau.numpy()))
    np.testing.assert_allclose(Q.numpy(), torch.linalg.qr(a).Q.numpy(), atol=1e-12)


@pytest.mark.parametrize("shape,k", [((4, 4), 4), ((5, 3), 3), ((5, 3), 2), ((2, 4, 2), 2),
                                     ((3, 3), 0)])
def test_householder_product_gradients(oracle, shape, k):
    tau = _random(shape[:-2] + (k,), seed=1)
    oracle(lambda m, a, t: m.linalg.householder_product(a, t), [_random(shape), tau],
           gradgrad=k > 0)


def test_orgqr_is_householder_product():
    a, tau = gradnb.tensor(_random((4, 3))), gradnb.tensor(_random((3,), seed=1))
    np.testing.assert_array_equal(gradnb.orgqr(a, tau).numpy(), a.orgqr(tau).numpy())
    np.testing.assert_array_equal(a.orgqr(tau).numpy(),
                                  gradnb.linalg.householder_product(a, tau).numpy())


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("shape,k", [((4, 4), 4), ((5, 2), 2)])
def test_ormqr_gradients(oracle, left, transpose, shape, k):
    m = shape[0]
    other = _random((m, 3) if left else (3, m), seed=2)
    oracle(lambda mod, a, t, c: mod.ormqr(a, t, c, left, transpose),
           [_random(shape), _random((k,), seed=1), other])


def test_ormqr_method_equals_the_product_with_q():
    a, tau, c = (gradnb.tensor(_random(s, seed=i)) for i, s in enumerate([(4, 4), (4,), (4, 2)]))
    Q = gradnb.linalg.householder_product(a, tau)
    np.testing.assert_allclose(a.ormqr(tau, c).numpy(), (Q @ c).numpy(), atol=1e-12)
    np.testing.assert_allclose(a.ormqr(tau, c, transpose=True).numpy(), (Q.mT @ c).numpy(),
                               atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 4, 2)])
def test_complex_householder_product_of_geqrf_is_qr_q(torch, dtype, shape):
    a = torch.tensor(_complex(shape, dtype=dtype))
    reflectors, tau = torch.geqrf(a)
    Q = gradnb.linalg.householder_product(gradnb.tensor(reflectors.numpy()),
                                          gradnb.tensor(tau.numpy()))
    assert Q.dtype.name == dtype
    np.testing.assert_allclose(Q.numpy(), torch.linalg.qr(a).Q.numpy(),
                               atol=1e-5 if dtype == "complex64" else 1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("shape,k", [((4, 4), 4), ((5, 3), 2), ((2, 4, 2), 2), ((3, 3), 0)])
def test_complex_householder_product_as_torch(torch, dtype, shape, k):
    check(Case("linalg.householder_product(A, tau)",
               lambda t, a, tau: t.linalg.householder_product(a, tau),
               (_complex(shape, dtype=dtype), _complex(shape[:-2] + (k,), 1, dtype))))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("shape,k", [((4, 4), 4), ((5, 2), 2), ((2, 3, 3), 3)])
def test_complex_ormqr_as_torch(torch, dtype, left, transpose, shape, k):
    m = shape[-2]
    other = _complex(shape[:-2] + ((m, 3) if left else (3, m)), 2, dtype)
    check(Case(f"ormqr(A, tau, C, left={left}, transpose={transpose})",
               lambda t, a, tau, c: t.ormqr(a, tau, c, left, transpose),
               (_complex(shape, dtype=dtype), _complex(shape[:-2] + (k,), 1, dtype), other)))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_complex_ormqr_second_derivatives(left, transpose):
    other = _complex((4, 2) if left else (2, 4), 2)
    inputs = tuple(gradnb.tensor(x, requires_grad=True)
                   for x in (_complex((4, 3)), _complex((3,), 1), other))
    assert gradcheck(lambda a, t, c: gradnb.ormqr(a, t, c, left, transpose), inputs)
    assert gradgradcheck(lambda a, t, c: gradnb.ormqr(a, t, c, left, transpose), inputs)


def test_complex_householder_product_second_derivatives():
    inputs = tuple(gradnb.tensor(x, requires_grad=True)
                   for x in (_complex((4, 3)), _complex((2,), 1)))
    assert gradcheck(gradnb.linalg.householder_product, inputs)
    assert gradgradcheck(gradnb.linalg.householder_product, inputs)


def test_complex_ormqr_transpose_is_the_conjugate_transpose():
    a, tau, c = (gradnb.tensor(_complex(s, seed=i)) for i, s in enumerate([(4, 4), (4,), (4, 2)]))
    Q = gradnb.linalg.householder_product(a, tau)
    np.testing.assert_allclose(a.ormqr(tau, c, transpose=True).numpy(), (Q.mH @ c).numpy(),
                               atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    lambda t: t.linalg.householder_product(t.ones(3, 2, dtype=t.complex128), t.ones(2)),
    lambda t: t.orgqr(t.ones(3, 2, dtype=t.float64), t.ones(2, dtype=t.float16)),
    lambda t: t.linalg.householder_product(t.ones(3, 2, dtype=t.int32), t.ones(2, dtype=t.int32)),
    lambda t: t.linalg.householder_product(t.ones(3, 2, dtype=t.float16),
                                           t.ones(2, dtype=t.float16)),
    lambda t: t.ormqr(t.ones(3, 2, dtype=t.complex64), t.ones(2), t.ones(3, 2)),
    lambda t: t.ormqr(t.ones(3, 2), t.ones(2), t.ones(3, 2, dtype=t.float64)),
    lambda t: t.ormqr(t.ones(3, 2, dtype=t.int64), t.ones(2, dtype=t.int64),
                      t.ones(3, 2, dtype=t.int64)),
    lambda t: t.ormqr(t.ones(3, 2, dtype=t.bfloat16), t.ones(2, dtype=t.bfloat16),
                      t.ones(3, 2, dtype=t.bfloat16)),
])
def test_householder_dtype_errors_as_torch(torch, call):
    check(Case("dtype checks", call, ()))


@pytest.mark.parametrize("call,message", [
    (lambda: gradnb.linalg.householder_product(gradnb.ones(3), gradnb.ones(3)),
     "gradnb.linalg.householder_product: input must have at least 2 dimensions."),
    (lambda: gradnb.linalg.householder_product(gradnb.ones(3, 4), gradnb.ones(3)),
     ("gradnb.linalg.householder_product: input.shape[-2] must be greater than or equal to "
     "input.shape[-1]")),
    (lambda: gradnb.linalg.householder_product(gradnb.ones(4, 3), gradnb.ones(4)),
     ("gradnb.linalg.householder_product: input.shape[-1] must be greater than or equal to "
     "tau.shape[-1]")),
    (lambda: gradnb.ormqr(gradnb.ones(()), gradnb.ones(()), gradnb.ones(())),
     "gradnb.ormqr: input must have at least 2 dimensions."),
    (lambda: gradnb.ormqr(gradnb.ones(5, 0), gradnb.ones(5), gradnb.ones(5, 5), True, True),
     "gradnb.ormqr: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"),
])
def test_householder_errors_as_torch(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value).startswith(message)
