"""``inplace=True`` (``F.relu(x, inplace=True)``, ``nn.ReLU(inplace=True)``, ...) writes the
result into the input as PyTorch does: the same tensor comes back, its graph is the in-place
node PyTorch records, and the classic errors follow (a leaf that requires grad refused, a tensor
saved for backward then overwritten caught at backward)."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _F(t):
    return t.nn.functional


CASES = {
    "relu": lambda t, h: _F(t).relu(h, inplace=True),
    "ReLU": lambda t, h: t.nn.ReLU(inplace=True)(h),
    "leaky_relu": lambda t, h: _F(t).leaky_relu(h, 0.1, inplace=True),
    "LeakyReLU": lambda t, h: t.nn.LeakyReLU(0.2, inplace=True)(h),
    "elu": lambda t, h: _F(t).elu(h, inplace=True),
    "selu": lambda t, h: _F(t).selu(h, inplace=True),
    "celu": lambda t, h: _F(t).celu(h, 0.5, inplace=True),
    "silu": lambda t, h: _F(t).silu(h, inplace=True),
    "SiLU": lambda t, h: t.nn.SiLU(inplace=True)(h),
    "mish": lambda t, h: _F(t).mish(h, inplace=True),
    "hardtanh": lambda t, h: _F(t).hardtanh(h, inplace=True),
    "Hardtanh": lambda t, h: t.nn.Hardtanh(inplace=True)(h),
    "relu6": lambda t, h: _F(t).relu6(h, inplace=True),
    "ReLU6": lambda t, h: t.nn.ReLU6(inplace=True)(h),
    "hardsigmoid": lambda t, h: _F(t).hardsigmoid(h, inplace=True),
    "hardswish": lambda t, h: _F(t).hardswish(h, inplace=True),
    "threshold": lambda t, h: _F(t).threshold(h, 1.0, -2.0, inplace=True),
    "Threshold": lambda t, h: t.nn.Threshold(1.0, -2.0, inplace=True)(h),
    "rrelu eval": lambda t, h: _F(t).rrelu(h, inplace=True),
    "dropout eval": lambda t, h: _F(t).dropout(h, 0.5, training=False, inplace=True),
    "dropout p=0": lambda t, h: _F(t).dropout(h, 0.0, inplace=True),
}


def _run(t, make):
    leaf = t.tensor([-1.5, 0.5, 2.0, 7.0], dtype=t.float64, requires_grad=True)
    h = leaf * 1.0
    out = make(t, h)
    name = out.grad_fn.name().split("::")[-1]
    out.sum().backward()
    return out is h, np.asarray(h.tolist()), name, np.asarray(leaf.grad.tolist())


@pytest.mark.parametrize("name", list(CASES))
def test_inplace_flag_writes_into_the_input_as_torch(name):
    ours, theirs = _run(gradnb, CASES[name]), _run(torch, CASES[name])
    assert ours[0] is theirs[0] is True
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    assert ours[2] == theirs[2]
    # (torch's float64 hardsigmoid slope is its float32 1/6: 1e-7 apart)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-7)


def test_dropout_in_training_writes_the_mask_into_the_input():
    gradnb.manual_seed(0)
    leaf = gradnb.ones(1000, dtype=gradnb.float64, requires_grad=True)
    h = leaf * 1.0
    out = gradnb.nn.Dropout(0.25, inplace=True)(h)
    assert out is h and out.grad_fn.name() == "MulBackward0"
    kept = h.detach() != 0
    assert np.allclose(h.detach().numpy()[kept.numpy()], 1 / 0.75)
    out.sum().backward()
    assert np.array_equal(leaf.grad.numpy() != 0, kept.numpy())


@pytest.mark.parametrize("lib", [gradnb, torch], ids=["gradnb", "torch"])
def test_the_classic_inplace_errors(lib):
    x = lib.tensor([0.5, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        lib.nn.functional.relu(x, inplace=True)
    y = lib.sigmoid(x)  # saves its output, which relu then overwrites
    lib.nn.functional.relu(y, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
