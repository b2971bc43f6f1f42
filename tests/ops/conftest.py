"""One factory for op tests: hypothesis shapes, gradcheck in float64, PyTorch as the oracle.

``opcheck(name, arrays, ...)`` runs ``gradnb.<name>`` and (where installed) ``torch.<name>`` on the
same float64 inputs, compares values, gradients for a random upstream gradient, and runs
``gradcheck`` (and optionally ``gradgradcheck``) on gradnb. Broadcasting, 0-d and empty shapes
come from the strategies below.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

try:
    import torch as _torch
except ImportError:  # the oracle half of each check is skipped
    _torch = None


def broadcastable_shapes(n: int = 2, min_side: int = 0):
    """Mutually broadcastable shapes of 0 to 3 dims, sides 0-4 (0 gives empty tensors)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3,
                                             min_side=min_side, max_side=4).map(
        lambda r: r.input_shapes)


def arrays_for(shapes, low=-3.0, high=3.0, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, size=s) for s in shapes]


def _result(fn, module, arrays, requires):
    inputs = [module.tensor(a, dtype=module.float64, requires_grad=r) for a, r in zip(arrays, requires)]
    out = fn(module, *inputs)
    return inputs, out


def opcheck(fn, arrays, *, requires=None, gradgrad=False, atol=1e-7, rtol=1e-6):
    """Check ``fn(module, *tensors)`` for gradnb against finite differences and PyTorch."""
    requires = requires or [True] * len(arrays)
    inputs, out = _result(fn, gradnb, arrays, requires)
    diff = [t for t in inputs if t.requires_grad]
    if out.requires_grad:
        assert gradcheck(lambda *ts: fn(gradnb, *_refill(inputs, ts)), tuple(diff))
        if gradgrad:
            assert gradgradcheck(lambda *ts: fn(gradnb, *_refill(inputs, ts)), tuple(diff))
    if _torch is None:
        return out
    t_inputs, t_out = _result(fn, _torch, arrays, requires)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)
    assert out.dtype.name == str(t_out.dtype).replace("torch.", "")
    if out.requires_grad:
        assert out.grad_fn.name() == t_out.grad_fn.name()
        upstream = np.random.default_rng(1).standard_normal(out.shape)
        out.backward(gradnb.tensor(upstream, dtype=gradnb.float64))
        t_out.backward(_torch.tensor(upstream, dtype=_torch.float64))
        for ours, theirs in zip(inputs, t_inputs):
            if ours.requires_grad:
                assert (ours.grad is None) == (theirs.grad is None)
                if ours.grad is not None:
                    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=rtol,
                                               atol=atol, equal_nan=True)
    return out


def _refill(inputs, diff):
    it = iter(diff)
    return [next(it) if t.requires_grad else t for t in inputs]


@pytest.fixture
def check():
    return opcheck


def _float_outputs(out):
    """The outputs of ``out`` (a tensor or a tuple) that carry gradients."""
    outs = out if isinstance(out, tuple) else (out,)
    return tuple(o for o in outs if o.requires_grad)


def linalg_oracle(fn, arrays, *, requires=None, gradgrad=True, atol=1e-7, rtol=1e-6,
                  compare=None):
    """Check ``fn(module, *tensors)`` (one output or a tuple; composite ops, so node names are
    not compared) for gradnb: first and (with ``gradgrad``) second derivatives against finite
    differences, then values, dtypes and the gradients of every differentiable output for one
    random upstream gradient against PyTorch. ``compare(out)`` picks what must match (all
    outputs by default: random or sign-ambiguous outputs compare an invariant instead)."""
    requires = requires or [True] * len(arrays)
    inputs, out = _result(fn, gradnb, arrays, requires)
    diff = [t for t in inputs if t.requires_grad]
    if _float_outputs(out) and diff:
        def differentiable(*ts):
            return _float_outputs(fn(gradnb, *_refill(inputs, ts)))

        assert gradcheck(differentiable, tuple(diff))
        if gradgrad:
            assert gradgradcheck(differentiable, tuple(diff))
    if _torch is None:
        return out
    t_inputs, t_out = _result(fn, _torch, arrays, requires)
    pick = compare or (lambda o: o)
    ours, theirs = pick(out), pick(t_out)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.dtype.name == str(t.dtype).replace("torch.", "")
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=rtol,
                                   atol=atol)
    pairs = [(o, t) for o, t in zip(ours, theirs) if t.requires_grad]
    if not pairs:
        return out
    rng = np.random.default_rng(1)
    upstream = [rng.standard_normal(tuple(t.shape)) for _, t in pairs]
    t_diff = [t for t in t_inputs if t.requires_grad]
    g_ours = gradnb.autograd.grad([o for o, _ in pairs], diff,
                                  [gradnb.tensor(u) for u in upstream], allow_unused=True)
    g_theirs = _torch.autograd.grad([t for _, t in pairs], t_diff,
                                    [_torch.tensor(u) for u in upstream], allow_unused=True)
    for a, b in zip(g_ours, g_theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
    return out


@pytest.fixture
def oracle():
    return linalg_oracle


__all__ = ["arrays_for", "broadcastable_shapes", "linalg_oracle", "opcheck", "st"]
