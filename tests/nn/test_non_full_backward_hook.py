"""``Module.register_backward_hook`` (deprecated, still in older code such as Grad-CAM
tutorials): a hook on the node that made the module's output, with that node's gradients,
PyTorch's FutureWarnings where they are not the module's, and its refusal to mix hook kinds."""

from __future__ import annotations

import warnings

import pytest

import gradnb

torch = pytest.importorskip("torch")


def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


def _facts(t):
    facts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = t.nn.Linear(3, 2)
        seen = []
        handle = layer.register_backward_hook(
            lambda m, gi, go: seen.append((_shapes(gi), _shapes(go))))
        x = t.ones(4, 3, requires_grad=True)
        layer(x).sum().backward()
        facts.append(list(seen))
        seq = t.nn.Sequential(t.nn.Linear(3, 2), t.nn.ReLU())
        lengths = []
        seq.register_backward_hook(lambda m, gi, go: lengths.append(len(gi)))
        seq(t.ones(2, 3, requires_grad=True)).sum().backward()
        facts.append(lengths)
        relu = t.nn.ReLU()
        relu.register_backward_hook(lambda m, gi, go: (gi[0] * 0,))  # replaces grad_input
        xr = t.ones(3, requires_grad=True)
        relu(xr * 1).sum().backward()
        facts.append(xr.grad.tolist())
        try:
            relu.register_full_backward_hook(lambda m, gi, go: None)
        except RuntimeError as e:
            facts.append(str(e))
        full = t.nn.Linear(2, 2)
        full.register_full_backward_hook(lambda m, gi, go: None)
        try:
            full.register_backward_hook(lambda m, gi, go: None)
        except RuntimeError as e:
            facts.append(str(e))
        handle.remove()
        seen.clear()
        layer(x).sum().backward()
        facts.append(len(seen))
    facts.append(sorted({str(w.message) for w in caught if w.category is FutureWarning}))
    return facts


def test_non_full_backward_hook_matches_torch():
    assert _facts(gradnb) == _facts(torch)
