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
    version = p._version[0]
    init.normal_(p)
    assert p.is_leaf and p.grad_fn is None and p._version[0] == version + 1
