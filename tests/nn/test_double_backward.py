"""Second order of the nn.functional primitives whose derivative is hand-written: gradgradcheck
in float64 (small shapes), and PyTorch's second-order values on the same inputs, at the edge
points where its derivative formulas decide (ELU's kink at 0, mish where ``exp`` overflows)."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F
from gradnb.autograd import gradgradcheck

ACTIVATIONS = {
    "elu": lambda f, x: f.elu(x),
    "elu_alpha": lambda f, x: f.elu(x, 1.5),
    "celu": lambda f, x: f.celu(x, 2.0),
    "selu": lambda f, x: f.selu(x),
    "mish": lambda f, x: f.mish(x),
}
EDGES = [0.0, -0.0, 1e-300, -1e-300, -0.5, 0.75, 30.0, -30.0, 800.0, -800.0, 1e10]


def second_order(lib, fn, inputs, seed=0):
    """Every input's gradient of ``sum(w * fn(*inputs))`` (``create_graph=True``), then the
    gradient of ``sum(v * those)`` in every input and in ``w``, for random ``w`` and ``v``."""
    rng = np.random.default_rng(seed)
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in inputs]
    out = fn(*leaves)
    w = lib.tensor(rng.normal(size=tuple(out.shape)), dtype=lib.float64, requires_grad=True)
    grads = lib.autograd.grad(out, leaves, w, create_graph=True)
    total = sum((g * lib.tensor(rng.normal(size=tuple(g.shape)), dtype=lib.float64)).sum()
                for g in grads)
    targets = [*leaves, w]
    second = lib.autograd.grad(total, targets, allow_unused=True)
    return ([g.detach().numpy() for g in grads],
            [np.zeros(tuple(t.shape)) if s is None else s.numpy()
             for t, s in zip(targets, second)])


def assert_second_order_matches(torch, fn_of, inputs, equal_nan=False):
    """``fn_of(F)`` built with gradnb's and torch's ``nn.functional`` give the same first and
    second order."""
    expected = second_order(torch, fn_of(torch.nn.functional), inputs)
    actual = second_order(gradnb, fn_of(F), inputs)
    for exp_list, act_list in zip(expected, actual):
        for e, a in zip(exp_list, act_list):
            np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12, equal_nan=equal_nan)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradgradcheck(name):
    x = gradnb.tensor([-1.3, -0.2, 0.4, 2.0], dtype=gradnb.float64, requires_grad=True)
    assert gradgradcheck(lambda t: ACTIVATIONS[name](F, t), (x,))


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_second_order_matches_torch_at_edges(torch, name):
    fn = ACTIVATIONS[name]
    assert_second_order_matches(torch, lambda f: lambda x: fn(f, x), [np.array(EDGES)],
                                equal_nan=True)


EMBEDDING_INDEX = np.array([[0, 2, 2], [4, 1, 0]])


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_gradgradcheck(padding_idx):
    idx = gradnb.tensor(EMBEDDING_INDEX)
    w = gradnb.randn(5, 3, dtype=gradnb.float64, requires_grad=True)
    assert gradgradcheck(lambda t: F.embedding(idx, t, padding_idx=padding_idx), (w,))


@pytest.mark.torch
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_second_order_matches_torch(torch, padding_idx):
    def fn_of(f):
        lib = torch if f is torch.nn.functional else gradnb
        return lambda w: f.embedding(lib.tensor(EMBEDDING_INDEX), w, padding_idx=padding_idx)

    assert_second_order_matches(torch, fn_of, [np.random.default_rng(1).normal(size=(5, 3))])


CONV2D = [
    {},
    {"stride": 2, "padding": 1},
    {"stride": (2, 1), "dilation": (1, 2)},
    {"padding": "same", "dilation": 2},
    {"groups": 2, "stride": 2},
]


def _conv2d_inputs(kwargs, batch=2):
    rng = np.random.default_rng(2)
    groups = kwargs.get("groups", 1)
    return [rng.normal(size=(batch, 4, 5, 6)), rng.normal(size=(2 * groups, 4 // groups, 3, 2)),
            rng.normal(size=(2 * groups,))]


@pytest.mark.parametrize("kwargs", CONV2D, ids=str)
def test_conv2d_gradgradcheck(kwargs):
    x, w, b = (gradnb.tensor(a, requires_grad=True) for a in _conv2d_inputs(kwargs, batch=1))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))


@pytest.mark.torch
@pytest.mark.parametrize("kwargs", CONV2D, ids=str)
def test_conv2d_second_order_matches_torch(torch, kwargs):
    assert_second_order_matches(
        torch, lambda f: lambda x, w, b: f.conv2d(x, w, b, **kwargs), _conv2d_inputs(kwargs))


# (name, input shape, weight shape, kwargs): every other convolution is built on conv2d.
CONVS = [
    ("conv1d", (2, 2, 7), (3, 2, 3), {"stride": 2, "padding": 1}),
    ("conv3d", (1, 1, 3, 3, 2), (2, 1, 2, 2, 2), {"stride": (2, 1, 1), "padding": 1}),
    ("conv_transpose1d", (2, 2, 4), (2, 3, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 3),
     {"stride": 2, "padding": 1, "groups": 2, "dilation": (1, 2)}),
    ("conv_transpose3d", (1, 1, 2, 2, 1), (1, 2, 2, 2, 2), {"stride": 2}),
]


def _conv_inputs(name, in_shape, w_shape, kwargs):
    """Input, weight and bias (one per output channel) for ``name``."""
    rng = np.random.default_rng(3)
    transposed = name.startswith("conv_transpose")
    out_channels = w_shape[1] * kwargs.get("groups", 1) if transposed else w_shape[0]
    return [rng.normal(size=in_shape), rng.normal(size=w_shape), rng.normal(size=(out_channels,))]


@pytest.mark.parametrize(("name", "in_shape", "w_shape", "kwargs"), CONVS, ids=str)
def test_conv_gradgradcheck(name, in_shape, w_shape, kwargs):
    x, w, b = (gradnb.tensor(a, requires_grad=True)
               for a in _conv_inputs(name, in_shape, w_shape, kwargs))
    fn = getattr(F, name)
    assert gradgradcheck(lambda x, w, b: fn(x, w, b, **kwargs), (x, w, b))


@pytest.mark.torch
@pytest.mark.parametrize(("name", "in_shape", "w_shape", "kwargs"), CONVS, ids=str)
def test_conv_second_order_matches_torch(torch, name, in_shape, w_shape, kwargs):
    assert_second_order_matches(
        torch, lambda f: lambda x, w, b: getattr(f, name)(x, w, b, **kwargs),
        _conv_inputs(name, in_shape, w_shape, kwargs))


POOLS = [
    ("max_pool1d", (2, 2, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool2d", (2, 2, 5, 5), {"kernel_size": 2}),
    ("max_pool2d", (1, 2, 5, 5), {"kernel_size": 3, "stride": 1, "padding": 1}),
    ("max_pool2d", (1, 1, 5, 6), {"kernel_size": 2, "stride": 2, "ceil_mode": True,
                                  "dilation": (1, 2)}),
    ("max_pool3d", (1, 2, 3, 4, 4), {"kernel_size": 2, "stride": (1, 2, 2)}),
]


@pytest.mark.parametrize(("name", "shape", "kwargs"), POOLS, ids=str)
def test_max_pool_gradgradcheck(name, shape, kwargs):
    x = gradnb.tensor(np.random.default_rng(5).normal(size=shape), requires_grad=True)
    assert gradgradcheck(lambda t: getattr(F, name)(t, **kwargs), (x,))


@pytest.mark.torch
@pytest.mark.parametrize(("name", "shape", "kwargs"), POOLS, ids=str)
def test_max_pool_second_order_matches_torch(torch, name, shape, kwargs):
    assert_second_order_matches(torch, lambda f: lambda t: getattr(f, name)(t, **kwargs),
                                [np.random.default_rng(5).normal(size=shape)])
