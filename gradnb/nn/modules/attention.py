"""MultiheadAttention, with PyTorch's parameters (a packed ``in_proj_weight``, or separate
``q/k/v_proj_weight`` when key and value widths differ), masks and returned weights."""

from __future__ import annotations

import math

from ..._core.tensor import Tensor
from ...ops.creation import empty, zeros
from ...ops.shape import cat
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives the output projection of attention."""


def _as_float_mask(mask: Tensor | None, like: Tensor) -> Tensor | None:
    """A boolean mask (True = not allowed) as an additive one (-inf where not allowed)."""
    if mask is None or mask.is_floating_point():
        return mask
    return zeros(*mask.shape, dtype=like.dtype, device=like.device).masked_fill(
        mask, float("-inf"))


class MultiheadAttention(Module):
    """Attention of ``query`` over ``key``/``value`` with ``num_heads`` heads of width
    ``embed_dim / num_heads``."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"device": device, "dtype": dtype}
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self, query: Tensor, key: Tensor, value: Tensor):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False):
        """``(output, weights)``; ``weights`` is None unless ``need_weights`` (averaged over
        the heads unless ``average_attn_weights=False``)."""
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        tgt_len, bsz, e = query.shape
        heads, hd = self.num_heads, self.head_dim
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        attn_mask = _as_float_mask(attn_mask, query)
        key_padding_mask = _as_float_mask(key_padding_mask, query)
        q, k, v = self._projections(query, key, value)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, bsz, e)], 0)
            v = cat([v, self.bias_v.expand(1, bsz, e)], 0)
            attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
            key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask,
                                                                           (0, 1))
        q = q.reshape(tgt_len, bsz * heads, hd).transpose(0, 1)
        k = k.reshape(k.shape[0], bsz * heads, hd).transpose(0, 1)
        v = v.reshape(v.shape[0], bsz * heads, hd).transpose(0, 1)
        if self.add_zero_attn:
            k = cat([k, zeros(bsz * heads, 1, hd, dtype=k.dtype, device=k.device)], 1)
            v = cat([v, zeros(bsz * heads, 1, hd, dtype=v.dtype, device=v.device)], 1)
            attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
            key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask,
                                                                           (0, 1))
        src_len = k.shape[1]
        if attn_mask is not None and attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
        if key_padding_mask is not None:
            kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, heads, 1, src_len)
            kpm = kpm.reshape(bsz * heads, 1, src_len)
            attn_mask = kpm if attn_mask is None else attn_mask + kpm
        scores = (q * math.sqrt(1.0 / hd)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, -1)
        if self.dropout > 0.0 and self.training:
            weights = F.dropout(weights, self.dropout)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, e)
        out = self.out_proj(out).reshape(tgt_len, bsz, e)
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        weights = weights.reshape(bsz, heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if unbatched:
            weights = weights.squeeze(0)
        return out, weights
