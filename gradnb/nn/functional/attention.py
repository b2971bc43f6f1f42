"""scaled_dot_product_attention, composed from matmul and softmax (PyTorch's math reference:
a query row that every key is masked from attends to nothing, an output row of zeros, where a
plain softmax would give NaN)."""

from __future__ import annotations

import math

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.tensor import Tensor
from ...ops.creation import tensor
from .activation import dropout, softmax

__all__ = ["scaled_dot_product_attention"]


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """Each head of ``(..., H, L, E)`` repeated ``times`` in place (grouped-query attention)."""
    *lead, heads, length, width = t.shape
    t = t.unsqueeze(-3).expand(*lead, heads, times, length, width)
    return t.reshape(*lead, heads * times, length, width)


def _safe_softmax(scores: Tensor) -> Tensor:
    """``softmax`` over the last dim, with rows that are all ``-inf`` set to zero (PyTorch's
    ``_safe_softmax``). Those rows are softmaxed as zeros first, so neither the forward nor the
    backward meets ``-inf - -inf``: their gradient is zero, as in PyTorch."""
    masked_rows = (scores == float("-inf")).all(-1, keepdim=True)
    weights = softmax(scores.masked_fill(masked_rows, 0.0), -1)
    return weights.masked_fill(masked_rows, 0.0)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over the last two dims. A boolean ``attn_mask``
    keeps the positions where it is True; a float one is added to the scores; ``is_causal``
    masks the future (above the diagonal)."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        query, key, value = _autocast.lower(query, key, value)
    l_q, l_k = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = tensor(np.tril(np.ones((l_q, l_k), dtype=bool)), device=query.device)
    if attn_mask is not None:
        if attn_mask.is_floating_point():
            scores = scores + attn_mask
        else:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value
