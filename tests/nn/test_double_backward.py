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
