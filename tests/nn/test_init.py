"""nn.init: bounds and spreads from PyTorch's formulas, reproducible through gradnb.manual_seed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradnb
from gradnb.nn import init


def test_manual_seed_makes_initialisation_reproducible():
    gradnb.manual_seed(7)
    a = init.normal_(gradnb.empty(5, 5)).numpy().copy()
    gradnb.manual_seed(7)
    b = init.normal_(gradnb.empty(5, 5)).numpy()
    np.testing.assert_array_equal(a, b)


def test_constants():
    t = gradnb.empty(2, 3)
    assert init.zeros_(t) is t and not t.numpy().any()
    assert (init.ones_(t).numpy() == 1).all()
    assert (init.constant_(t, 2.5).numpy() == 2.5).all()
    np.testing.assert_array_equal(init.eye_(gradnb.empty(2, 3)).numpy(), np.eye(2, 3))


@pytest.mark.parametrize("fn, bound", [
    (lambda t: init.uniform_(t, -0.3, 0.3), 0.3),
    (lambda t: init.xavier_uniform_(t, gain=2.0), 2.0 * math.sqrt(6 / (200 + 100))),
    (lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), 1 / math.sqrt(200)),
    (lambda t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
     math.sqrt(2) * math.sqrt(3 / 100)),
])
def test_uniform_bounds(fn, bound):
    values = fn(gradnb.empty(100, 200)).numpy()
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.98 * bound


@pytest.mark.parametrize("fn, std", [
    (lambda t: init.normal_(t, 1.0, 0.5), 0.5),
    (lambda t: init.xavier_normal_(t), math.sqrt(2 / 300)),
    (lambda t: init.kaiming_normal_(t, nonlinearity="relu"), math.sqrt(2 / 200)),
])
def test_normal_spread(fn, std):
    values = fn(gradnb.empty(100, 200)).numpy()
    assert values.std() == pytest.approx(std, rel=0.05)


def test_conv_fans_and_gain_table():
    t = gradnb.empty(8, 4, 3, 3)
    values = init.kaiming_uniform_(t, nonlinearity="relu").numpy()
    assert np.abs(values).max() <= math.sqrt(2) * math.sqrt(3 / 36)
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(gradnb.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")


def test_init_does_not_record_a_graph():
    p = gradnb.zeros(3, requires_grad=True)
    version = p._version
    init.normal_(p)
    assert p.is_leaf and p.grad_fn is None and p._version == version + 1


@pytest.mark.torch
@pytest.mark.parametrize("mean, std, a, b", [
    (0.0, 1.0, -2.0, 2.0),     # the default: a normal proposal
    (0.0, 0.02, -0.04, 0.04),  # ViT / GPT's std=0.02 at two std
    (0.5, 1.0, 2.0, 3.0),      # a narrow window in the tail: the uniform proposal
])
def test_trunc_normal_has_torchs_distribution(torch, mean, std, a, b):
    ours = init.trunc_normal_(gradnb.empty(200, 200), mean, std, a, b).numpy()
    torch.manual_seed(0)
    theirs = torch.nn.init.trunc_normal_(torch.empty(200, 200), mean, std, a, b).numpy()
    assert ours.min() >= a and ours.max() <= b
    width = b - a
    assert abs(ours.mean() - theirs.mean()) < 0.02 * width
    assert abs(ours.std() - theirs.std()) < 0.02 * width
    counts, edges = np.histogram(ours, bins=10, range=(a, b))
    expected, _ = np.histogram(theirs, bins=edges)
    np.testing.assert_allclose(counts / ours.size, expected / theirs.size, atol=0.01)


@pytest.mark.torch
def test_trunc_normal_warns_as_torch_when_the_mean_is_far_outside(torch):
    with pytest.warns(UserWarning) as theirs:
        torch.nn.init.trunc_normal_(torch.empty(3), mean=10.0, a=-1.0, b=1.0)
    with pytest.warns(UserWarning) as ours:
        values = init.trunc_normal_(gradnb.empty(3), mean=10.0, a=-1.0, b=1.0).numpy()
    assert str(ours[0].message) == str(theirs[0].message)
    assert (values >= -1).all() and (values <= 1).all()


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3), (3, 3)])
def test_orthogonal_fills_a_semi_orthogonal_matrix_times_gain(shape):
    t = init.orthogonal_(gradnb.empty(*shape, dtype=gradnb.float64), gain=2.0)
    flat = t.numpy().reshape(shape[0], -1)
    small = min(flat.shape)
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-10)


@pytest.mark.torch
def test_orthogonal_errors_and_empty_tensors_as_torch(torch):
    with pytest.raises(ValueError) as theirs:
        torch.nn.init.orthogonal_(torch.empty(3))
    with pytest.raises(ValueError) as ours:
        init.orthogonal_(gradnb.empty(3))
    assert str(ours.value) == str(theirs.value)
    assert init.orthogonal_(gradnb.empty(0, 3)).shape == (0, 3)


def test_orthogonal_and_trunc_normal_follow_manual_seed_and_record_no_graph():
    w = gradnb.nn.Parameter(gradnb.empty(4, 4))
    gradnb.manual_seed(1)
    first = init.orthogonal_(w).detach().numpy().copy()
    gradnb.manual_seed(1)
    np.testing.assert_array_equal(init.orthogonal_(w).detach().numpy(), first)
    assert init.trunc_normal_(w, std=0.02) is w and w.grad_fn is None and w.is_leaf
