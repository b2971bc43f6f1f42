"""utils.checkpoint: same gradients as a plain run, fewer saved activations, RNG replayed."""

from __future__ import annotations

import warnings
import weakref

import numpy as np
import pytest

import gradnb
from gradnb import autograd, nn
from gradnb.autograd import memory
from gradnb.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

pytestmark = pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad")


def mlp(depth=3, width=6, dropout=0.0):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
        if dropout:
            layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


def run(net, x, mode, seed=7, **kwargs):
    """Forward + backward in one of the modes; returns (output values, parameter grads)."""
    net.zero_grad()
    gradnb.manual_seed(seed)
    if mode == "plain":
        out = net(x)
    elif mode == "sequential":
        out = checkpoint_sequential(net, 2, x, use_reentrant=False)
    else:
        out = checkpoint(net, x, use_reentrant=(mode == "reentrant"), **kwargs)
    (out * out).sum().backward()
    return out.detach().numpy().copy(), [p.grad.numpy().copy() for p in net.parameters()]


def assert_same(a, b):
    np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
    for ga, gb in zip(a[1], b[1]):
        np.testing.assert_allclose(ga, gb, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["non_reentrant", "reentrant", "sequential"])
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_gradients_match_the_plain_run(mode, dropout):
    net = mlp(dropout=dropout)
    x = gradnb.randn(4, 6, requires_grad=True)
    assert_same(run(net, x, mode), run(net, x, "plain"))


def test_input_gradient_matches():
    net = mlp()
    x = gradnb.randn(4, 6, requires_grad=True)
    (plain,) = autograd.grad(net(x).sum(), x)
    (ckpt,) = autograd.grad(checkpoint(net, x, use_reentrant=False).sum(), x)
    np.testing.assert_allclose(ckpt.numpy(), plain.numpy(), rtol=1e-6)


def test_parameters_get_gradients_when_inputs_do_not_require_grad():
    net = mlp()
    x = gradnb.randn(4, 6)
    assert_same(run(net, x, "non_reentrant"), run(net, x, "plain"))


def test_reentrant_variant_needs_an_input_that_requires_grad():
    net = mlp()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients "
                                         "will be None"):
        out = checkpoint(net, gradnb.randn(4, 6), use_reentrant=True)
    assert not out.requires_grad


def test_activations_are_not_kept_between_forward_and_backward():
    w = gradnb.randn(6, 6, requires_grad=True)
    inner = []

    def block(x):
        h = (x @ w).tanh()
        inner.append(weakref.ref(h._data))
        return (h @ w).tanh()

    x = gradnb.randn(4, 6)
    plain = block(x)
    ckpt = checkpoint(block, x, use_reentrant=False)
    assert inner[0]() is not None  # the plain graph keeps h for backward
    assert inner[1]() is None      # the checkpointed one does not
    assert memory.graph_bytes(ckpt) < memory.graph_bytes(plain)
    assert memory.graph_bytes(ckpt) == 0


def test_block_reruns_once_per_backward():
    calls = []
    w = gradnb.randn(3, requires_grad=True)

    def block(x):
        calls.append(1)
        return (x * w).sin() * w

    out = checkpoint(block, gradnb.randn(3), use_reentrant=False).sum()
    assert len(calls) == 1
    out.backward(retain_graph=True)
    assert len(calls) == 2
    first = w.grad.numpy().copy()
    out.backward()
    assert len(calls) == 3
    np.testing.assert_allclose(w.grad.numpy(), 2 * first, rtol=1e-6)


def test_random_state_is_replayed_and_then_left_untouched():
    net = mlp(dropout=0.5)
    x = gradnb.randn(4, 6)
    run(net, x, "non_reentrant")
    after_checkpoint = gradnb.rand(3).tolist()
    run(net, x, "plain")
    after_plain = gradnb.rand(3).tolist()
    assert after_checkpoint == after_plain


def test_without_preserve_rng_state_dropout_masks_differ():
    net = mlp(dropout=0.5)
    x = gradnb.randn(4, 6)
    plain = run(net, x, "plain")
    unpreserved = run(net, x, "non_reentrant", preserve_rng_state=False)
    assert any(not np.allclose(a, b) for a, b in zip(plain[1], unpreserved[1]))


def test_double_backward_through_a_checkpoint():
    w = gradnb.randn(3, dtype=gradnb.float64, requires_grad=True)
    x = gradnb.randn(3, dtype=gradnb.float64)

    def block(t):
        return (t * w).sin() * w

    results = []
    for use_checkpoint in (False, True):
        out = (checkpoint(block, x, use_reentrant=False) if use_checkpoint else block(x)).sum()
        (gw,) = autograd.grad(out, w, create_graph=True)
        (ggw,) = autograd.grad((gw * gw).sum(), w)
        results.append(ggw.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10)


def test_keyword_arguments():
    w = gradnb.randn(3, requires_grad=True)

    def block(x, *, scale):
        return (x * w * scale).tanh()

    out = checkpoint(block, gradnb.randn(3), scale=2.0, use_reentrant=False)
    out.sum().backward()
    assert w.grad is not None
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(block, gradnb.randn(3), scale=2.0, use_reentrant=True)


def test_recomputation_that_differs_is_an_error():
    w = gradnb.randn(4, requires_grad=True)
    calls = []

    def unstable(x):
        calls.append(1)
        n = 4 if len(calls) == 1 else 2
        return (x[:n] * w[:n]).tanh().sum()

    out = checkpoint(unstable, gradnb.randn(4), use_reentrant=False)
    with pytest.raises(CheckpointError, match="Recomputed values for the following tensors have "
                                              "different metadata"):
        out.backward()


def test_missing_use_reentrant_warns_like_torch_and_defaults_to_reentrant():
    x = gradnb.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        out = checkpoint(lambda t: t.sin(), x)
    assert out.grad_fn.name() == "CheckpointFunctionBackward"


def test_under_no_grad_it_is_a_plain_call():
    x = gradnb.randn(3, requires_grad=True)
    with gradnb.no_grad():
        out = checkpoint(lambda t: t.sin(), x, use_reentrant=False)
    assert not out.requires_grad


@pytest.mark.torch
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_match_torch(torch, use_reentrant):
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((5, 5)) * 0.5 for _ in range(3)]
    xv = rng.standard_normal((2, 5))
    results = []
    for lib in (gradnb, torch):
        ws = [lib.tensor(w, requires_grad=True) for w in weights]
        x = lib.tensor(xv, requires_grad=True)

        def block(t, ws=ws):
            for w in ws:
                t = (t @ w).tanh()
            return t

        if lib is torch:
            from torch.utils.checkpoint import checkpoint as torch_checkpoint

            out = torch_checkpoint(block, x, use_reentrant=use_reentrant)
        else:
            out = checkpoint(block, x, use_reentrant=use_reentrant)
        (out * out).sum().backward()
        results.append([x.grad.numpy().copy()] + [w.grad.numpy().copy() for w in ws])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.torch
def test_use_reentrant_warning_matches_torch(torch):
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    def caught(fn, lib):
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            fn(lambda t: t * 2, x)
        return [str(r.message) for r in records]

    assert caught(checkpoint, gradnb) == caught(torch_checkpoint, torch)
