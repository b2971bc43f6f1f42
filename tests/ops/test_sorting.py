"""mode: the most frequent value (the smallest of equally frequent ones), the index of its last
occurrence, and the gradient flowing to that entry, as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck


@settings(max_examples=25, deadline=None)
@given(data=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                       elements=st.integers(-2, 2).map(float)),
       keepdim=st.booleans(), dim_seed=st.integers(0, 10))
def test_mode_matches_torch(data, keepdim, dim_seed):
    torch = pytest.importorskip("torch")
    dim = dim_seed % data.ndim
    ours = gradnb.mode(gradnb.tensor(data), dim, keepdim)
    theirs = torch.mode(torch.tensor(data), dim, keepdim)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


def test_mode_gradient_goes_to_the_chosen_entry(torch):
    x = gradnb.tensor([[1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 1.0, 1.0]], dtype=gradnb.float64,
                      requires_grad=True)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    x.mode().values.sum().backward()
    tx.mode().values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert gradcheck(lambda t: gradnb.mode(t, 0).values, (x,))
    assert gradgradcheck(lambda t: gradnb.mode(t, 0).values, (x,))


def test_mode_of_a_0d_tensor():
    out = gradnb.mode(gradnb.tensor(3.0))
    assert out.values.item() == 3.0 and out.indices.item() == 0
