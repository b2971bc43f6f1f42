"""Second derivatives at the points where PyTorch's derivative formulas decide the value (a
removable singularity, a cancellation far out, a sign split): gradnb must give PyTorch's number,
NaN included, not merely a finite-difference-consistent one."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

pytestmark = pytest.mark.torch


def second_order(lib, fn, values):
    """``d/dx sum(d/dx sum(fn(x) * w) * v)`` for fixed ``w``, ``v``: both passes in ``lib``."""
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    rng = np.random.default_rng(0)
    y = fn(lib, x)
    w = lib.tensor(rng.normal(size=tuple(y.shape)), dtype=lib.float64)
    v = lib.tensor(rng.normal(size=tuple(x.shape)), dtype=lib.float64)
    (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad((g * v).sum(), x)
    return g.detach().numpy(), gg.numpy()


CASES = {
    # sinc's rule divides by pi x^2: its own derivative at 0 is 0 * inf = NaN in PyTorch
    "sinc": (lambda lib, x: lib.sinc(x), [0.0, 1e-300, -0.5, 0.25, 3.0]),
    # 2 x erfcx(x) - 2/sqrt(pi) cancels exactly far out when erfcx(x) = 1/(sqrt(pi) x)
    "erfcx": (lambda lib, x: lib.special.erfcx(x), [-20.0, -3.0, 0.0, 2.0, 60.0, 1e10,
                                                   1e20]),
    # a missing sign's log is the lowest float, never -inf
    "logcumsumexp": (lambda lib, x: lib.logcumsumexp(x.reshape(2, 3), 1),
                     [-1e3, 0.0, 5.0, 1.0, 1.0, -2.0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order_matches_torch(torch, name):
    fn, values = CASES[name]
    g_t, gg_t = second_order(torch, fn, values)
    g_g, gg_g = second_order(gradnb, fn, values)
    np.testing.assert_allclose(g_g, g_t, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg_g, gg_t, rtol=1e-10, atol=1e-12, equal_nan=True)
