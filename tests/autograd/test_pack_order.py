"""saved_tensors_hooks see the saved tensors in PyTorch 2.13's pack order."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

GRAPHS = {
    "mul": lambda lib, x, w: x * w,
    "mul_exp": lambda lib, x, w: (x * w).exp().sum(),
    "div": lambda lib, x, w: x / w,
    "pow": lambda lib, x, w: x ** w,
    "matmul_mv": lambda lib, x, w: lib.matmul(x, w),
    "mm": lambda lib, x, w: lib.mm(x, x.t()),
    "sin_times_cos": lambda lib, x, w: x.sin() * x.cos(),
    "tanh_sigmoid": lambda lib, x, w: x.tanh().sigmoid(),
    "maximum": lambda lib, x, w: lib.maximum(x, w),
    "sqrt_log": lambda lib, x, w: x.sqrt().log(),
    "mse": lambda lib, x, w: lib.nn.functional.mse_loss(x, x.detach() * 2),
    "var": lambda lib, x, w: x.var(),
}


def _packed(lib, graph):
    seen = []

    def pack(t):
        seen.append((tuple(t.shape), round(float(t.detach().sum()), 6)))
        return t

    x = lib.tensor(np.linspace(0.1, 1, 6).reshape(2, 3), requires_grad=True)
    w = lib.tensor(np.linspace(-1, 1, 3), requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        graph(lib, x, w)
    return seen


@pytest.mark.parametrize("name", list(GRAPHS))
def test_pack_order_matches_torch(torch, name):
    assert _packed(gradnb, GRAPHS[name]) == _packed(torch, GRAPHS[name])
