"""nextafter: one float step towards ``other``, PyTorch's dtype rules, gradient and errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck


def test_nextafter_matches_torch(torch):
    a = np.array([[0.0, 1.0, -2.5], [1e300, -0.0, 3.0]])
    b = np.array([1.0, -np.inf, 3.0])
    out = gradnb.nextafter(gradnb.tensor(a), gradnb.tensor(b))
    np.testing.assert_array_equal(out.numpy(), torch.nextafter(torch.tensor(a),
                                                               torch.tensor(b)).numpy())
    f32 = gradnb.ones(2).nextafter(gradnb.tensor(2.0, dtype=gradnb.float64))
    assert f32.dtype == gradnb.float32  # a 0-d operand does not promote


def test_nextafter_gradient_passes_to_input_only(torch):
    x = gradnb.tensor([0.5, -1.0], dtype=gradnb.float64, requires_grad=True)
    y = gradnb.tensor([1.0, -3.0], dtype=gradnb.float64, requires_grad=True)
    gradnb.nextafter(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert y.grad is None or not y.grad.numpy().any()
    assert gradcheck(lambda t: gradnb.nextafter(t, y.detach()), (x,))
    assert gradgradcheck(lambda t: gradnb.nextafter(t, y.detach()) ** 2, (x,))


def test_nextafter_refuses_integers():
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        gradnb.nextafter(gradnb.tensor([1, 2]), gradnb.tensor([3, 4]))
