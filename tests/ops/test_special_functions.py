"""Special functions where the gradient is the hard part: digamma at its poles (torch's finite
trigamma), polygamma far below zero, log_ndtr deep in the lower tail."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

POLES_AND_TAILS = [-4988429.2, -10.7, -3.3, -2.0, -1.0, -0.5, 0.001, 2.5, 13437.7, 1e20]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_matches_torch_below_zero(torch, n):
    x = np.array(POLES_AND_TAILS)
    ours = gradnb.polygamma(n, gradnb.tensor(x)).numpy()
    theirs = torch.polygamma(n, torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_digamma_gradient_at_a_pole_is_torchs_huge_finite_value(torch):
    x = gradnb.tensor([-1.0, -2.0, 0.0], dtype=gradnb.float64, requires_grad=True)
    gradnb.digamma(x).sum().backward()
    tx = torch.tensor([-1.0, -2.0, 0.0], dtype=torch.float64, requires_grad=True)
    torch.digamma(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9)
    assert np.isfinite(x.grad.numpy()[:2]).all()


def test_digamma_gradgradcheck():
    x = gradnb.tensor([-2.5, -0.3, 0.7, 3.0], dtype=gradnb.float64, requires_grad=True)
    assert gradcheck(gradnb.digamma, (x,))
    assert gradgradcheck(gradnb.digamma, (x,))


def test_log_ndtr_gradient_in_the_far_tail_matches_torch(torch):
    x = np.array([-4988429.2, -1e3, -38.0, -1.5, -1.0, -0.25, 0.001, 3.0, 40.0])
    ours = gradnb.tensor(x, requires_grad=True)
    out = gradnb.special.log_ndtr(ours)
    out.sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    t_out = torch.special.log_ndtr(theirs)
    t_out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9)


def test_log_ndtr_gradgradcheck():
    x = gradnb.tensor([-30.0, -3.0, -0.5, 0.5, 4.0], dtype=gradnb.float64, requires_grad=True)
    assert gradcheck(gradnb.special.log_ndtr, (x,))
    assert gradgradcheck(gradnb.special.log_ndtr, (x,))
