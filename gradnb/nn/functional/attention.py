"""scaled_dot_product_attention, composed from matmul and softmax (PyTorch's math reference:
a query row that every key is masked from attends to nothing, an output row of zeros, where a
plain softmax would give NaN)."""

from __future__ import annotations

import math

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops.arithmetic import mul_scalar
from ...ops.creation import tensor
from ...ops.softmax import SoftmaxBackward0, _shifted
from .activation import dropout

__all__ = ["scaled_dot_product_attention"]


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """Each head of ``(..., H, L, E)`` repeated ``times`` in place (grouped-query attention)."""
    *lead, heads, length, width = t.shape
    t = t.unsqueeze(-3).expand(*lead, heads, times, length, width)
    return t.reshape(*lead, heads * times, length, width)


class SafeSoftmaxBackward0(SoftmaxBackward0):
    """PyTorch's ``_safe_softmax``: a softmax whose rows that are all ``-inf`` (a query every
    key is masked from) come out as zeros, not NaN; the softmax's gradient, zero on those
    rows (their saved result is zero)."""
    rule = "self: _softmax_backward_data(grad, result, dim, self.scalar_type())"

    __slots__ = ()


def _safe_softmax(scores: Tensor, dim: int = -1) -> Tensor:
    x = scores._data
    xp = get_array_module(x)
    with np.errstate(invalid="ignore"):
        masked = (x == -xp.inf).all(axis=dim, keepdims=True)
        e = xp.exp(_shifted(xp.where(masked, 0.0, x).astype(x.dtype, copy=False), dim))
        out = xp.where(masked, 0.0, e / e.sum(axis=dim, keepdims=True)).astype(x.dtype,
                                                                            copy=False)
    return record(SafeSoftmaxBackward0, (scores,), out, attrs={"dim": dim})


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over the last two dims. A boolean ``attn_mask``
    keeps the positions where it is True; a float one is added to the scores; ``is_causal``
    masks the future (above the diagonal).

    Composed as PyTorch's math reference: ``q`` and ``k^T`` each scaled by ``sqrt(scale)``, a
    boolean mask turned into an additive one, ``_safe_softmax``, dropout, then ``@ value``.
    """
    if _autocast.enabled:  # PyTorch's CPU autocast list
        query, key, value = _autocast.lower(query, key, value)
    l_q, l_k = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = tensor(np.tril(np.ones((l_q, l_k), dtype=bool)), device=query.device)
    if attn_mask is not None and not attn_mask.is_floating_point():
        keep = attn_mask._data
        attn_mask = tensor(get_array_module(keep).where(keep, 0.0, -np.inf).astype(
            query._data.dtype), device=query.device)
    root = math.sqrt(scale)
    scores = mul_scalar(query, root) @ mul_scalar(key.transpose(-2, -1), root)
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value
