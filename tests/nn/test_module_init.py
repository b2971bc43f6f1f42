"""Default initialisation of the layers: the same parameter shapes as PyTorch and values drawn
from the same ranges (each parameter's extent matches torch's within sampling noise)."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

LAYERS = [
    ("Conv1d", (4, 6, 3), {}),
    ("Conv3d", (2, 4, 3), {"groups": 2}),
    ("ConvTranspose2d", (6, 4, 3), {"groups": 2}),
    ("ConvTranspose1d", (3, 5, 4), {"bias": False}),
    ("Bilinear", (4, 5, 6), {}),
    ("LSTM", (4, 6), {"num_layers": 2}),
    ("GRUCell", (4, 6), {}),
    ("PReLU", (3,), {}),
    ("MultiheadAttention", (8, 2), {}),
    ("GroupNorm", (2, 6), {}),
    ("RMSNorm", (5,), {}),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), LAYERS, ids=[c[0] for c in LAYERS])
def test_parameters_as_torch(name, args, kwargs):
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs)
    g = getattr(nn, name)(*args, **kwargs)
    t_params = dict(t.named_parameters())
    g_params = dict(g.named_parameters())
    assert list(g_params) == list(t_params)
    assert list(g.state_dict()) == list(t.state_dict())
    for key, tp in t_params.items():
        gp = g_params[key]
        assert tuple(gp.shape) == tuple(tp.shape), key
        t_abs, g_abs = float(tp.detach().abs().max()), float(gp.detach().abs().max())
        # Uniform ranges: the largest magnitude sits near the bound in both libraries.
        assert g_abs <= max(t_abs * 1.5, 1.0) and g_abs >= t_abs * 0.5 - 1e-12, key
    for key, tb in t.named_buffers():
        np.testing.assert_array_equal(dict(g.named_buffers())[key].numpy(), tb.numpy())


def test_lazy_linear_becomes_linear():
    layer = nn.LazyLinear(3)
    out = layer(gradnb.randn(2, 5))
    assert type(layer) is nn.Linear and tuple(layer.weight.shape) == (3, 5)
    assert out.shape == (2, 3)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]


def test_transformer_encoder_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    stack = nn.TransformerEncoder(layer, 2)
    first, second = stack.layers[0], stack.layers[1]
    assert first.linear1.weight is not second.linear1.weight
    np.testing.assert_array_equal(first.linear1.weight.detach().numpy(),
                                  second.linear1.weight.detach().numpy())
    assert len(list(stack.parameters())) == 2 * len(list(layer.parameters()))
