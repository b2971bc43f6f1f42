"""scatter_reduce (every reduce) and index_reduce: values and gradients against PyTorch
(ties in amax/amin share the gradient, zeros in prod), finite differences to second order, the
in-place forms and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _both(torch, array, requires_grad=True):
    return (gradnb.tensor(array, dtype=gradnb.float64, requires_grad=requires_grad),
            torch.tensor(array, dtype=torch.float64, requires_grad=requires_grad))


def _compare(torch, fn, arrays):
    ours = [gradnb.tensor(a, dtype=gradnb.float64, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out, t_out = fn(gradnb, *ours), fn(torch, *theirs)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    upstream = np.random.default_rng(3).standard_normal(tuple(out.shape))
    out.backward(gradnb.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_with_ties_and_zeros_matches_torch(torch, reduce, include_self):
    x = np.array([[1.0, 0.0, 3.0], [2.0, 2.0, -1.0]])
    src = np.array([[3.0, 0.0, 3.0, 0.0], [2.0, 5.0, 2.0, 0.5]])
    index = [[0, 1, 0, 1], [2, 2, 0, 2]]

    def fn(m, a, s):
        return a.scatter_reduce(1, m.tensor(index), s, reduce, include_self=include_self)

    _compare(torch, fn, [x, src])


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_matches_torch(torch, reduce, include_self):
    x = np.array([[1.0, 0.0], [2.0, 2.0], [4.0, -1.0]])
    src = np.array([[2.0, 0.0], [2.0, 3.0], [0.5, 7.0], [4.0, -1.0]])

    def fn(m, a, s):
        return a.index_reduce(0, m.tensor([0, 2, 0, 2]), s, reduce, include_self=include_self)

    _compare(torch, fn, [x, src])


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_gradgradcheck(reduce):
    rng = np.random.default_rng(0)
    x = gradnb.tensor(rng.uniform(0.5, 2, (3, 4)), requires_grad=True)
    src = gradnb.tensor(rng.uniform(0.5, 2, (3, 4)), requires_grad=True)
    index = gradnb.tensor([[0, 1, 0, 3], [2, 2, 1, 0], [3, 3, 3, 1]])
    for keep in (True, False):
        def fn(a, s, keep=keep):
            return gradnb.scatter_reduce(a, 1, index, s, reduce, include_self=keep)

        assert gradcheck(fn, (x, src))
        assert gradgradcheck(fn, (x, src))


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), n=st.integers(1, 5),
       reduce=st.sampled_from(["prod", "mean", "amax", "amin"]), keep=st.booleans(),
       seed=st.integers(0, 99))
def test_index_reduce_any_shape_matches_torch(rows, cols, n, reduce, keep, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (rows, cols)).astype(float)  # small integers: ties happen
    src = rng.integers(-2, 3, (rows, n)).astype(float)
    index = rng.integers(0, cols, n)

    def fn(m, a, s):
        return m.index_reduce(a, 1, m.tensor(index), s, reduce, include_self=keep)

    _compare(torch, fn, [x, src])


@pytest.mark.parametrize("method", ["scatter_reduce_", "index_reduce_"])
def test_in_place_forms_record_the_same_gradient(torch, method):
    ours, theirs = _both(torch, np.array([1.0, 2.0, 3.0]))
    src, t_src = _both(torch, np.array([4.0, 0.5]))
    y, t_y = ours * 1, theirs * 1
    getattr(y, method)(0, gradnb.tensor([0, 0]), src, "amax")
    getattr(t_y, method)(0, torch.tensor([0, 0]), t_src, "amax")
    np.testing.assert_allclose(y.detach().numpy(), t_y.detach().numpy())
    y.sum().backward()
    t_y.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())
    np.testing.assert_allclose(src.grad.numpy(), t_src.grad.numpy())


def test_writing_again_into_a_saved_result_is_refused():
    x = gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y.scatter_reduce_(0, gradnb.tensor([0]), x[:1] * 2, "amax")
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_errors_match_torch():
    x = gradnb.zeros(3, dtype=gradnb.float64)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, "
                                           "amax or amin, got bad"):
        x.scatter_reduce(0, gradnb.tensor([0]), x[:1], "bad")
    with pytest.raises(RuntimeError, match=r"index_reduce\(\): Expected reduce to be one of"):
        x.index_reduce(0, gradnb.tensor([0]), x[:1], "sum")
    with pytest.raises(RuntimeError, match=r"self \(Double\) and source \(Float\) must have the "
                                           "same scalar type"):
        x.index_reduce(0, gradnb.tensor([0]), x[:1].float(), "prod")
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_reduce(0, gradnb.tensor([[0]]), x[:1], "prod")
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_reduce(0, gradnb.tensor([5]), x[:1], "prod")
    with pytest.raises(RuntimeError, match=r"Number of indices \(2\) should be equal to "):
        x.index_reduce(0, gradnb.tensor([0, 1]), x[:1], "prod")
