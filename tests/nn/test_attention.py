"""scaled_dot_product_attention against PyTorch: masks (boolean, additive, rows masked from every
key), causal, scale, grouped-query heads and broadcast batches, to second order; dropout where
it sits (on the attention weights)."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

from .test_double_backward import assert_second_order_matches

RNG = np.random.default_rng(7)
BOOL_MASK = RNG.random((3, 5)) > 0.4
BOOL_MASK[1] = False  # query 1 sees no key: an output row of zeros, a zero gradient
FLOAT_MASK = np.where(BOOL_MASK, RNG.normal(size=(3, 5)), -np.inf)

# (query, key, value shapes, kwargs; a mask given as an array becomes a tensor of each library)
CASES = {
    "plain_3d": ((2, 3, 4), (2, 5, 4), (2, 5, 6), {}),
    "causal_scale": ((2, 2, 4, 3), (2, 2, 3, 3), (2, 2, 3, 3), {"is_causal": True,
                                                                "scale": 0.7}),
    "bool_mask": ((2, 3, 4), (2, 5, 4), (2, 5, 4), {"attn_mask": BOOL_MASK}),
    "float_mask": ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), {"attn_mask": FLOAT_MASK}),
    "gqa": ((1, 4, 3, 4), (1, 2, 5, 4), (1, 2, 5, 2), {"enable_gqa": True}),
    "broadcast_batch": ((2, 3, 4), (3, 2, 5, 4), (3, 2, 5, 4), {}),
}


def _call(f, kwargs):
    if f is F:
        kw = {k: gradnb.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw)
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}

    def math_reference(q, k, v):
        # PyTorch's fused CPU kernel has no double backward; its math backend is the reference
        with sdpa_kernel(SDPBackend.MATH):
            return f.scaled_dot_product_attention(q, k, v, **kw)

    return math_reference


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_sdpa_matches_torch_to_second_order(torch, name):
    *shapes, kwargs = CASES[name]
    inputs = [np.random.default_rng(i).normal(size=s) for i, s in enumerate(shapes)]
    assert_second_order_matches(torch, lambda f: _call(f, kwargs), inputs)


@pytest.mark.torch
def test_fully_masked_query_gives_zeros_and_no_nan(torch):
    q, k, v = (gradnb.randn(2, n, 4, dtype=gradnb.float64, requires_grad=True)
               for n in (3, 5, 5))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=gradnb.tensor(BOOL_MASK))
    out.sum().backward()
    assert out[:, 1].abs().sum().item() == 0.0
    assert q.grad[:, 1].abs().sum().item() == 0.0
    assert not any(t.grad.isnan().any().item() for t in (q, k, v))


def test_dropout_drops_attention_weights():
    q, k, v = (gradnb.randn(2, n, 4, dtype=gradnb.float64) for n in (3, 5, 5))
    gradnb.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    gradnb.manual_seed(3)
    weights = F.softmax(q @ k.transpose(-2, -1) / 2.0, -1)
    expected = F.dropout(weights, 0.5) @ v
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
