"""``x * c`` and ``x + c`` with ``c`` a 0-d float tensor that needs no gradient (the constants
of ``x = x * c + d``): the result dtype, values, saved tensor and gradients PyTorch gives."""

import numpy as np
import pytest

import gradnb


@pytest.mark.parametrize("x_dtype", [gradnb.float32, gradnb.float64, gradnb.float16])
@pytest.mark.parametrize("c_dtype", [gradnb.float32, gradnb.float64])
def test_dimensioned_float_keeps_its_dtype(x_dtype, c_dtype):
    data = np.linspace(-1, 1, 5)
    x = gradnb.tensor(data, dtype=x_dtype, requires_grad=True)
    c, d = gradnb.tensor(0.9, dtype=c_dtype), gradnb.tensor(0.1, dtype=c_dtype)
    y = x * c + d
    assert y.dtype == x_dtype
    np_dtype = x.detach().numpy().dtype
    cast = x.detach().numpy() * np.asarray(c.numpy(), np_dtype) + np.asarray(d.numpy(), np_dtype)
    np.testing.assert_array_equal(y.detach().numpy(), cast)
    assert y.grad_fn.next_functions[0][0]._saved_other is c
    y.sum().backward()
    assert x.grad.dtype == x_dtype
    np.testing.assert_allclose(x.grad.numpy(), np.full(5, 0.9), rtol=1e-3)


def test_constant_changed_in_place_is_caught():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    c = gradnb.tensor(3.0)
    y = x * c
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_zero_d_operands_promote_as_before():
    a = gradnb.tensor(2.0, dtype=gradnb.float32, requires_grad=True)
    b = gradnb.tensor(3.0, dtype=gradnb.float64)
    assert (a * b).dtype == gradnb.float64
    assert (a + b).dtype == gradnb.float64
    x = gradnb.tensor([1, 2])
    assert (x * gradnb.tensor(0.5)).dtype == gradnb.float32
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    k = gradnb.tensor(2.0, requires_grad=True)
    (w * k).sum().backward()
    assert k.grad.item() == 3.0
