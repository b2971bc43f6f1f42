"""The deprecated ``size_average``/``reduce`` loss arguments mean what they mean in PyTorch
(``nn.MSELoss(size_average=False)`` sums; ``reduce=False`` keeps every element), with its
warning, in every loss module and function that takes them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")

PAIRS = [(None, None), (False, None), (True, False), (None, False), (False, True), (True, True)]


def _regression(t):
    return (t.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=t.float64),
            t.tensor([[0.0, -2.0, 2.5], [1.0, 0.5, -1.0]], dtype=t.float64))


def _classes(t):
    return (t.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=t.float64),
            t.tensor([2, 0]))


def _signs(t):
    return (t.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=t.float64),
            t.tensor([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]], dtype=t.float64))


def _probs(t):
    return (t.tensor([[0.5, 0.1, 0.9], [0.3, 0.25, 0.75]], dtype=t.float64),
            t.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], dtype=t.float64))


LOSSES = {
    "MSELoss": (lambda t, **k: t.nn.MSELoss(**k), _regression),
    "L1Loss": (lambda t, **k: t.nn.L1Loss(**k), _regression),
    "SmoothL1Loss": (lambda t, **k: t.nn.SmoothL1Loss(**k), _regression),
    "NLLLoss": (lambda t, **k: t.nn.NLLLoss(**k), _classes),
    "CrossEntropyLoss": (lambda t, **k: t.nn.CrossEntropyLoss(**k), _classes),
    "MultiMarginLoss": (lambda t, **k: t.nn.MultiMarginLoss(**k), _classes),
    "BCELoss": (lambda t, **k: t.nn.BCELoss(**k), _probs),
    "BCEWithLogitsLoss": (lambda t, **k: t.nn.BCEWithLogitsLoss(**k), _probs),
    "SoftMarginLoss": (lambda t, **k: t.nn.SoftMarginLoss(**k), _signs),
    "HingeEmbeddingLoss": (lambda t, **k: t.nn.HingeEmbeddingLoss(**k), _signs),
    "MultiLabelSoftMarginLoss": (lambda t, **k: t.nn.MultiLabelSoftMarginLoss(**k), _probs),
    "KLDivLoss": (lambda t, **k: t.nn.KLDivLoss(**k), _probs),
    "PoissonNLLLoss": (lambda t, **k: t.nn.PoissonNLLLoss(**k), _probs),
    "F.mse_loss": (lambda t, **k: lambda a, b: t.nn.functional.mse_loss(a, b, **k),
                   _regression),
    "F.cross_entropy": (lambda t, **k: lambda a, b: t.nn.functional.cross_entropy(a, b, **k),
                        _classes),
    "F.l1_loss positional": (lambda t, **k: lambda a, b: t.nn.functional.l1_loss(
        a, b, k.get("size_average"), k.get("reduce")), _regression),
}


def _outcome(lib, name, size_average, reduce):
    make, data = LOSSES[name]
    kwargs = {"size_average": size_average, "reduce": reduce}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loss = make(lib, **kwargs)(*data(lib))
    messages = [str(w.message) for w in seen if "size_average" in str(w.message)]
    return np.asarray(loss.tolist()), messages


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("name", list(LOSSES))
def test_legacy_arguments_reduce_as_torch(name, pair):
    ours, theirs = _outcome(gradnb, name, *pair), _outcome(torch, name, *pair)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert ours[1] == theirs[1]
