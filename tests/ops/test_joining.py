"""gradient: central differences inside, first- or second-order one-sided ones at the ends,
with uniform or coordinate spacing, as torch.gradient computes them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck


def _spacing(module, spacing):
    if isinstance(spacing, list):
        return [module.tensor(s) if isinstance(s, np.ndarray) else s for s in spacing]
    return spacing


@settings(max_examples=30, deadline=None)
@given(data=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=3,
                                                    max_side=5),
                       elements=st.floats(-10, 10)),
       edge_order=st.sampled_from([1, 2]), kind=st.sampled_from(["none", "scalar", "coords"]))
def test_gradient_matches_torch(data, edge_order, kind):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    spacing = {"none": None, "scalar": 0.7,
               "coords": [np.cumsum(rng.uniform(0.5, 2, n)) for n in data.shape]}[kind]
    ours = gradnb.gradient(gradnb.tensor(data), spacing=_spacing(gradnb, spacing),
                           edge_order=edge_order)
    theirs = torch.gradient(torch.tensor(data), spacing=_spacing(torch, spacing),
                            edge_order=edge_order)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_gradgradcheck(edge_order):
    x = gradnb.tensor(np.random.default_rng(1).standard_normal((4, 5)), requires_grad=True)
    coords = gradnb.tensor([0.0, 1.0, 3.0, 3.5, 6.0], dtype=gradnb.float64)

    def fn(t):
        return gradnb.gradient(t, spacing=[2.0, coords], dim=(0, 1), edge_order=edge_order)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradient_errors_match_torch():
    x = gradnb.arange(5.0)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        gradnb.gradient(x, edge_order=3)
    with pytest.raises(RuntimeError, match="a list of length equal to 'self.dim\\(\\) = 1'"):
        gradnb.gradient(x, spacing=[1.0, 2.0])
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        gradnb.gradient(x, dim=(0, 0))
    with pytest.raises(RuntimeError, match="each dimension size to be at least edge_order\\+1"):
        gradnb.gradient(gradnb.ones(2), edge_order=2)


def test_broadcast_tensors_returns_an_input_already_of_the_shape_itself(torch):
    """PyTorch's expand_outplace: no ExpandBackward0 view for an input that needs none."""
    a = gradnb.ones(2, 3, requires_grad=True)
    b = gradnb.ones(3, requires_grad=True)
    x, y = gradnb.broadcast_tensors(a, b)
    ta, tb = torch.ones(2, 3, requires_grad=True), torch.ones(3, requires_grad=True)
    tx, ty = torch.broadcast_tensors(ta, tb)
    assert (x is a) == (tx is ta)
    assert (x.grad_fn is None) == (tx.grad_fn is None)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
