"""gradnb.masked against torch.masked: values (fully masked-out slices included), dtypes,
gradients of the masked-in entries, second order by finite differences, mask broadcasting and
the helpers ``_input_mask``/``_output_mask``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

REDUCTIONS = {
    "sum": {}, "prod": {}, "amax": {}, "amin": {}, "mean": {}, "logsumexp": {},
    "var": {}, "std": {"correction": 0},
}
ALONG_DIM = ["cumsum", "cumprod", "median", "softmax", "log_softmax", "softmin"]


def _inputs(shape, mask_shape, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    mask = rng.random(mask_shape) > 0.4
    if mask.ndim:
        mask[0] = False  # a fully masked-out slice
    return data, mask


def _run(module, name, data, mask, args, kwargs):
    x = module.tensor(data, dtype=module.float64, requires_grad=True)
    out = getattr(module.masked, name)(x, *args, mask=module.tensor(mask), **kwargs)
    out_mask = module.masked._output_mask(getattr(module.masked, name), x, *args,
                                          mask=module.tensor(mask), **kwargs)
    # what the masked-in outputs depend on, as op_db's wrapper reads it
    kept = module.where(out_mask, out, out.new_zeros([]))
    kept.backward(module.tensor(np.linspace(-1, 1, kept.numel()).reshape(tuple(kept.shape)),
                                dtype=module.float64))
    return out, x.grad


def _compare(torch, name, data, mask, args=(), kwargs=None):
    kwargs = kwargs or {}
    ours, our_grad = _run(gradnb, name, data, mask, args, kwargs)
    theirs, their_grad = _run(torch, name, data, mask, args, kwargs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               equal_nan=True)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-9, atol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("mask_shape", [(3, 4), (3, 1), (4,)])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions_match_torch(torch, name, dim, mask_shape):
    data, mask = _inputs((3, 4), mask_shape)
    _compare(torch, name, data, mask, (dim,), dict(REDUCTIONS[name], keepdim=dim == 0))


@pytest.mark.parametrize("ord", [1, 2.0, float("inf"), float("-inf")])
def test_norm_and_normalize_match_torch(torch, ord):
    data, mask = _inputs((3, 4), (3, 4))
    _compare(torch, "norm", data, mask, (ord, 1))
    if ord != float("-inf"):
        _compare(torch, "normalize", data, mask, (ord, 1))


@pytest.mark.parametrize("name", ALONG_DIM)
@pytest.mark.parametrize("dim", [0, -1])
def test_ops_along_a_dim_match_torch(torch, name, dim):
    data, mask = _inputs((3, 4), (3, 4), seed=1)
    _compare(torch, name, data, mask, (dim,))


def test_logaddexp_matches_torch(torch):
    a, ma = _inputs((3, 4), (3, 4), seed=2)
    b, mb = _inputs((3, 4), (4,), seed=3)
    outs = []
    for module in (gradnb, torch):
        out = module.masked.logaddexp(module.tensor(a), module.tensor(b),
                                      input_mask=module.tensor(ma), other_mask=module.tensor(mb))
        outs.append(out.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 999),
       name=st.sampled_from(["sum", "amax", "mean", "var", "logsumexp"]),
       broadcast=st.sampled_from(["full", "row", "col"]))
def test_mask_broadcasting_matches_torch(rows, cols, seed, name, broadcast):
    torch = pytest.importorskip("torch")
    mask_shape = {"full": (rows, cols), "row": (cols,), "col": (rows, 1)}[broadcast]
    data, mask = _inputs((rows, cols), mask_shape, seed)
    _compare(torch, name, data, mask, (1,))


@pytest.mark.parametrize("name, args", [("sum", (1,)), ("prod", (1,)), ("amax", (1,)),
                                        ("mean", (1,)), ("var", (1,)), ("softmax", (1,)),
                                        ("log_softmax", (0,)), ("cumprod", (1,)),
                                        ("norm", (2.0, 1)), ("normalize", (2.0, 1)),
                                        ("logsumexp", (1,))])
def test_gradgradcheck(name, args):
    data, mask = _inputs((3, 4), (3, 4), seed=4)
    mask[:, :2] = True  # two entries per row: no NaN or inf to defeat finite differences
    m = gradnb.tensor(mask)
    op = getattr(gradnb.masked, name)

    def fn(x):
        out = op(x, *args, mask=m)
        return gradnb.where(gradnb.masked._output_mask(op, x, *args, mask=m), out, 0.0)

    x = gradnb.tensor(data, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_dtype_argument_and_integer_inputs(torch):
    data = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    mask = np.array([True, False, True])
    for name in ("sum", "prod"):
        ours = getattr(gradnb.masked, name)(gradnb.tensor(data), 1, mask=gradnb.tensor(mask))
        theirs = getattr(torch.masked, name)(torch.tensor(data), 1, mask=torch.tensor(mask))
        assert ours.dtype == gradnb.int64 and str(theirs.dtype) == "torch.int64"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    out = gradnb.masked.sum(gradnb.tensor(data), dtype=gradnb.float64, mask=gradnb.tensor(mask))
    assert out.dtype == gradnb.float64 and out.item() == 14.0


def test_errors_match_torch():
    x = gradnb.ones(2, 3)
    with pytest.raises(ValueError, match="mean\\(\\): Could not infer output dtype"):
        gradnb.masked.mean(gradnb.ones(2, dtype=gradnb.int64))
    with pytest.raises(IndexError, match="_input_mask expected broadcastable mask"):
        gradnb.masked.sum(x, mask=gradnb.ones(1, 2, 3, dtype=gradnb.bool))
    with pytest.raises(RuntimeError, match="dim=1 appears multiple times"):
        gradnb.masked.sum(x, (1, 1))
    with pytest.raises(ValueError, match="masked median expects no fully masked out rows"):
        gradnb.masked.median(gradnb.ones(2, 3, dtype=gradnb.int64), 1,
                             mask=gradnb.tensor([[True] * 3, [False] * 3]))
