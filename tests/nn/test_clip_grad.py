"""nn.utils.clip_grad_norm_ and clip_grad_value_."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn


def params_with_grads(*grads):
    ps = []
    for g in grads:
        p = nn.Parameter(gradnb.zeros(*np.shape(g), dtype=gradnb.float64))
        p.grad = gradnb.tensor(np.asarray(g, dtype=np.float64))
        ps.append(p)
    return ps


def test_clip_grad_norm_scales_all_gradients_together():
    ps = params_with_grads([3.0, 0.0], [[4.0]])
    total = nn.utils.clip_grad_norm_(ps, max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    assert ps[0].grad.tolist() == pytest.approx([0.6, 0.0], rel=1e-5)
    assert ps[1].grad.tolist() == [[pytest.approx(0.8, rel=1e-5)]]


def test_clip_grad_norm_leaves_small_gradients_and_skips_missing_ones():
    ps = params_with_grads([0.3, 0.4])
    ps.append(nn.Parameter(gradnb.zeros(2)))
    assert nn.utils.clip_grad_norm_(ps, 10.0).item() == pytest.approx(0.5)
    assert ps[0].grad.tolist() == [0.3, 0.4]


def test_inf_norm_and_nonfinite_error():
    ps = params_with_grads([1.0, -7.0], [2.0])
    assert nn.utils.clip_grad_norm_(ps, 1.0, norm_type="inf").item() == 7.0
    bad = params_with_grads([float("nan")])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)


def test_clip_grad_value():
    ps = params_with_grads([-3.0, 0.5, 2.0])
    nn.utils.clip_grad_value_(ps, 1.0)
    assert ps[0].grad.tolist() == [-1.0, 0.5, 1.0]


@pytest.mark.torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_matches_torch(torch, norm_type):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    ours = params_with_grads(*grads)
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for t, g in zip(theirs, grads):
        t.grad = torch.tensor(g)
    total = nn.utils.clip_grad_norm_(ours, 0.5, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, 0.5, norm_type=norm_type)
    assert total.item() == pytest.approx(expected.item(), rel=1e-12)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12)
