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


@pytest.mark.torch
def test_nanmedian_of_all_nan_slices_reports_torchs_index(torch):
    data = np.full((40, 40), np.nan)
    data[::3, 5] = 1.0  # some slices keep a value, the others are all NaN
    for dim in (0, 1):
        ours = gradnb.nanmedian(gradnb.tensor(data), dim).indices.numpy()
        theirs = torch.nanmedian(torch.tensor(data), dim).indices.numpy()
        np.testing.assert_array_equal(ours, theirs)
    for n in range(1, 70):
        nans = np.full(n, np.nan)
        assert (gradnb.nanmedian(gradnb.tensor(nans), 0).indices.item()
                == torch.nanmedian(torch.tensor(nans), 0).indices.item())


@pytest.mark.torch
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_values_and_gradients_match_torch_with_nan(torch, name, interpolation):
    data = np.random.default_rng(0).standard_normal((3, 4, 2))
    data[1, 2, 0] = np.nan
    q = [0.0, 0.3, 1.0]
    for dim, keepdim in ((None, False), (None, True), (1, False), (-1, True), (0, False)):
        t, g = torch.tensor(data, requires_grad=True), gradnb.tensor(data, requires_grad=True)
        theirs = getattr(torch, name)(t, torch.tensor(q, dtype=torch.float64), dim, keepdim,
                                      interpolation=interpolation)
        ours = getattr(gradnb, name)(g, gradnb.tensor(q, dtype=gradnb.float64), dim, keepdim,
                                     interpolation=interpolation)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())
        theirs.sum().backward()
        ours.sum().backward()
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy())
        assert ours.grad_fn.name() == theirs.grad_fn.name() == "SqueezeBackward4"
