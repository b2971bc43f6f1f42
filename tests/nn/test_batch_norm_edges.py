"""batch_norm on inputs without a channel dim (0-D, 1-D) and without running statistics in
eval: PyTorch's results and errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

pytestmark = pytest.mark.torch


def _outcome(lib, shape, stats, training, affine=0):
    """The output values and input gradient, or the exception type and message."""
    values = np.arange(1.0, 1.0 + int(np.prod(shape))).reshape(shape)
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    running = (None, None) if stats is None else (lib.zeros(stats, dtype=lib.float64),
                                                  lib.ones(stats, dtype=lib.float64))
    params = [lib.full((affine,), 2.0, dtype=lib.float64) for _ in range(2)] if affine else []
    try:
        out = lib.nn.functional.batch_norm(x, *running, *params, training=training)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc).split("\n")[0]
    (grad,) = lib.autograd.grad(out.sum(), x)
    return out.detach().numpy().tolist(), grad.numpy().tolist(), out.grad_fn.name()


@pytest.mark.parametrize(("shape", "stats", "training", "affine"), [
    ((0,), 0, True, 0),
    ((0,), 0, False, 0),
    ((0,), None, False, 0),
    ((0,), 0, False, 2),
    ((3,), None, False, 0),
    ((3,), None, True, 0),
    ((3,), 0, False, 0),
    ((), None, False, 0),
    ((2, 3), None, False, 0),
])
def test_batch_norm_without_channels_matches_torch(torch, shape, stats, training, affine):
    assert _outcome(gradnb, shape, stats, training, affine) == \
        _outcome(torch, shape, stats, training, affine)


def test_empty_batch_norm_is_a_copy():
    x = gradnb.zeros(0, requires_grad=True)
    out = F.batch_norm(x, gradnb.zeros(0), gradnb.ones(0), training=True)
    assert out is not x and out.requires_grad
