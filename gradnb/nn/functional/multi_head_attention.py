"""``multi_head_attention_forward``: the computation of ``nn.MultiheadAttention``, step by step
as PyTorch's function does it (shape checks, canonical masks, in-projection, ``bias_k/bias_v``,
``static_k/static_v``, zero attention, key padding, scaled dot product, dropout on the weights,
out-projection), composed from gradnb's ops so every gradient, double backward included, comes
from them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core.tensor import Tensor
from ...ops.creation import tensor as _tensor
from ...ops.creation import zeros
from ...ops.linalg import bmm
from ...ops.matrices import baddbmm
from ...ops.shape import cat
from .activation import dropout, softmax
from .linear import linear
from .resample import pad

__all__ = ["multi_head_attention_forward"]


def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Whether the call is batched; PyTorch's ``_mha_shape_check`` (its asserts included)."""
    if query.ndim == 3:
        if not (key.ndim == 3 and value.ndim == 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D "
                                 f"but found {key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if not (key.ndim == 2 and value.ndim == 2):
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     f"instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _canonical_mask(mask: Tensor | None, name: str, other: Tensor | None, other_name: str,
                    like: Tensor) -> Tensor | None:
    """A boolean mask (True = not allowed) as an additive float one (-inf where not allowed)."""
    if mask is None:
        return None
    if str(mask.dtype) != "gradnb.bool" and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and mask.dtype != other.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      f"type for both instead.", stacklevel=3)
    if mask.is_floating_point():
        return mask
    return zeros(*mask.shape, dtype=like.dtype, device=like.device).masked_fill(
        mask, float("-inf"))


def _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias,
                   use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight):
    """q, k and v projected, split from the packed weight as PyTorch's ``_in_projection_packed``
    splits it (one projection for self-attention, two for a shared key and value), so the
    graph shows its nodes."""
    e = embed_dim
    b = in_proj_bias
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     f"is None")
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
        return (linear(query, q_proj_weight, bq), linear(key, k_proj_weight, bk),
                linear(value, v_proj_weight, bv))
    if in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    w = in_proj_weight
    if key is value:
        if query is key:  # self-attention: one projection, unpacked
            proj = _unpack(linear(query, w, b), 3, e)
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = _unpack(linear(key, w_kv, b_kv), 2, e)
        return linear(query, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _unpack(proj: Tensor, n: int, e: int) -> Tensor:
    """``(..., n * e)`` as ``(n, ..., e)``, laid out as PyTorch lays it out."""
    return proj.unflatten(-1, (n, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()


def _check_attn_mask(attn_mask: Tensor, bsz: int, num_heads: int, tgt_len: int,
                     src_len: int) -> Tensor:
    shape = tuple(attn_mask.shape)
    if attn_mask.ndim == 2:
        if shape != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.ndim == 3:
        if shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _heads(t: Tensor, static: Tensor | None, name: str, bsz: int, num_heads: int,
           head_dim: int) -> Tensor:
    """``(len, bsz, embed)`` as ``(bsz * heads, len, head_dim)``, or the given static one."""
    if static is None:
        return t.reshape(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * num_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of ``query`` ``(L, N, E)`` (or ``(L, E)``) over ``key``/``value``
    ``(S, N, E_k/E_v)``: ``(output (L, N, E), weights (N, L, S) averaged over the heads, or
    (N, heads, L, S), or None unless need_weights)``."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                       "attn_mask", query)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    # Without weights or key padding, PyTorch hands the causal hint to scaled_dot_product_attention,
    # which ignores attn_mask and masks the future itself.
    causal = is_causal and key_padding_mask is None and not need_weights
    attn_mask = None if causal else _canonical_mask(attn_mask, "attn_mask", None, "", query)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                             f"{embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    q, k, v = _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias,
                             use_separate_proj_weight, q_proj_weight, k_proj_weight,
                             v_proj_weight)
    if attn_mask is not None:
        attn_mask = _check_attn_mask(attn_mask, bsz, num_heads, tgt_len, key.shape[0])
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)], 0)
        v = cat([v, bias_v.repeat(1, bsz, 1)], 0)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "k", bsz, num_heads, head_dim)
    v = _heads(v, static_v, "v", bsz, num_heads, head_dim)
    if add_zero_attn:
        k = cat([k, zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
        v = cat([v, zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        for d, size in enumerate((bsz, src_len)):
            if key_padding_mask.shape[d] != size:
                raise AssertionError(f"Expected key_padded_mask.shape[{d}] to be {size}, but got "
                                     f"{key_padding_mask.shape[d]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if causal:
        future = np.triu(np.ones((tgt_len, src_len), dtype=bool), 1)
        attn_mask = zeros(tgt_len, src_len, dtype=q.dtype, device=q.device).masked_fill(
            _tensor(future, device=q.device), float("-inf"))
    q_scaled = q * math.sqrt(1.0 / head_dim)
    if attn_mask is not None:  # PyTorch's fused baddbmm: one BaddbmmBackward0 node
        scores = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        scores = bmm(q_scaled, k.transpose(-2, -1))
    weights = softmax(scores, -1)
    if training and dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out = bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
