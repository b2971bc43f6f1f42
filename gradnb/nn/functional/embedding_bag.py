"""``embedding_bag``: the sum, mean or max of bags of embedding rows, without materialising the
looked-up rows as a ``(batch, bag, dim)`` tensor first.

Composed from ``embedding`` (whose gradient, dense or sparse, it inherits), ``index_add`` over
the bag ids and ``gather`` at each bag's per-column argmax; a row at ``padding_idx`` is left out
of its bag (not summed, not counted by the mean, never the max), and an empty bag is zeros.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import dual
from ...ops.creation import tensor as _tensor
from ...ops.creation import zeros
from .sparse import embedding, embedding_renorm_

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce bags of rows of ``weight`` ``(num_embeddings, dim)`` to one ``(bags, dim)`` row
    each. A 2-D ``input`` is one bag per row; a 1-D one is split at ``offsets`` (the start of
    each bag; with ``include_last_offset`` the last offset ends the last bag)."""
    if str(weight.dtype) == "gradnb.int64" and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    indices, starts, include_last_offset = _bags(input, offsets, include_last_offset)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    bag_of = _bag_ids(indices, starts, include_last_offset)
    bags = len(starts) - 1 if include_last_offset else len(starts)
    bad = (indices < 0) | (indices >= num)
    if bad.any():
        i = int(np.argmax(bad))
        raise RuntimeError(f"Index {i} of input takes value {int(indices[i])} which is not in the "
                           f"valid range [0, {num})")
    if max_norm is not None:
        embedding_renorm_(weight, indices, max_norm, norm_type)
    keep = (bag_of >= 0) & (indices != (-1 if padding_idx is None else padding_idx))
    if mode != "max" and not sparse:
        return _embedding_bag_node(input, weight, offsets, indices, bag_of, bags, keep, mode,
                                   per_sample_weights, padding_idx, scale_grad_by_freq)
    rows = embedding(_tensor(indices[keep], device=weight.device), weight, sparse=sparse,
                     scale_grad_by_freq=scale_grad_by_freq)
    if per_sample_weights is not None:
        kept = _tensor(np.flatnonzero(keep), device=weight.device)
        rows = rows * per_sample_weights.reshape(-1).index_select(0, kept).unsqueeze(1)
    bag_ids = bag_of[keep]
    if mode == "max" and bag_ids.size:
        return _bag_max(rows, bag_ids, bags)
    total = zeros(bags, weight.shape[1], dtype=weight.dtype, device=weight.device)
    total = total.index_add(0, _tensor(bag_ids, device=weight.device), rows)
    if mode != "mean":  # a sum, or the max of bags that are all empty: zeros
        return total
    counts = np.maximum(np.bincount(bag_ids, minlength=bags), 1).astype(np.float64)
    return total / _tensor(counts[:, None], dtype=weight.dtype, device=weight.device)


def _embedding_bag_node(input, weight, offsets, indices, bag_of, bags, keep, mode,
                        per_sample_weights, padding_idx, scale_grad_by_freq) -> Tensor:
    """A sum or mean bag recorded as PyTorch's ``_embedding_bag``: one EmbeddingBagBackward0
    with its offset2bag, bag_size and max_indices outputs (as its CPU kernel fills them)."""
    w = weight._data
    xp = get_array_module(w)
    if input.ndim == 2:  # PyTorch flattens a 2-D input (and its weights: a ViewBackward0)
        flat = _tensor(indices, device=weight.device)
        offsets = _tensor(np.arange(0, indices.size, max(input.shape[1], 1)),
                          device=weight.device)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    else:  # (PyTorch's kernel saves a contiguous copy of strided indices)
        flat = input if input.is_contiguous() else _tensor(indices, device=weight.device)
    scale = xp.zeros(indices.size, dtype=w.dtype)
    scale[keep] = 1 if per_sample_weights is None else per_sample_weights._data[keep]
    sizes = np.bincount(bag_of[keep], minlength=bags)[:bags]
    if mode == "mean":
        scale[keep] /= np.maximum(sizes, 1)[bag_of[keep]]
    out = xp.zeros((bags, w.shape[1]), dtype=w.dtype)
    np.add.at(out, bag_of[keep], w[indices[keep]] * scale[keep, None])
    fast_sum = mode == "sum" and w.dtype != np.float64 and padding_idx is None
    offset2bag = np.zeros(0, np.int64) if fast_sum else bag_of.astype(np.int64)
    bag_size = sizes.astype(np.int64) if mode == "mean" else np.zeros(bags, np.int64)
    data = (out, offset2bag, bag_size, bag_size.copy())
    attrs = {"indices": flat, "offsets": offsets, "mode": _MODES.index(mode),
             "padding_idx": -1 if padding_idx is None else padding_idx,
             "scale_grad_by_freq": bool(scale_grad_by_freq), "sparse": False,
             "weight_sym_argsize_0": w.shape[0], "bag_of": bag_of, "keep": keep,
             "scale": scale}
    return record(EmbeddingBagBackward0, (weight, per_sample_weights), data, attrs=attrs,
                  operands=(w, None))[0]


class EmbeddingBagBackward0(Node):
    """Each looked-up row gets its bag's gradient times its scale (its per-sample weight, over
    the bag's size for a mean); each per-sample weight gets its bag's gradient dotted with its
    row. Indices at ``padding_idx`` get nothing."""
    rule = ("weight: _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, "
            "max_indices, ...); per_sample_weights: "
            "_embedding_bag_per_sample_weights_backward(grad, weight, indices, ...)")
    inputs = ("weight", "per_sample_weights")
    outputs = ("result0", "result1", "result2", "result3")
    saves = ("indices", "offsets", "per_sample_weights", "weight", "result1", "result2",
             "result3", "mode", "padding_idx", "scale_grad_by_freq", "sparse",
             "weight_sym_argsize_0")
    saved_when: ClassVar[dict] = {"weight": ("per_sample_weights",)}
    computed = ("indices", "offsets")
    unsigned = ("padding_idx",)

    def backward(self, g, *_):
        g = dual.data(g)
        keep, bag_of = self.keep, self.bag_of
        idx = dual.data(self.saved(g)[0]).reshape(-1)[keep]
        grad_w = grad_psw = None
        if self.needs(0):
            grad_w = get_array_module(g).zeros((self.weight_sym_argsize_0, g.shape[1]),
                                               dtype=g.dtype)
            scale = self.scale[keep]
            if self.scale_grad_by_freq:  # over how often each row occurs among all indices
                every = dual.data(self.saved(g)[0]).reshape(-1)
                counts = np.bincount(every, minlength=self.weight_sym_argsize_0)
                scale = scale / counts[idx]
            np.add.at(grad_w, idx, g[bag_of[keep]] * scale[:, None])
        if self.needs(1):
            w = dual.data(self.saved(g)[3])
            grad_psw = get_array_module(g).zeros(keep.shape, dtype=g.dtype)
            grad_psw[keep] = (g[bag_of[keep]] * w[idx]).sum(1)
        return grad_w, grad_psw


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool):
    """The flat indices, the bag starts and whether the last start ends the last bag."""
    if input.ndim == 2:
        if offsets is not None:
            # the public name of the class, as PyTorch's message prints ``torch.Tensor``
            kind = "<class 'gradnb.Tensor'>" if isinstance(offsets, Tensor) else type(offsets)
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {kind}")
        rows, length = input.shape
        return _indices(input).reshape(-1), np.arange(0, rows * length, max(length, 1)), False
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    indices, starts = _indices(input), offsets.detach().cpu().numpy().astype(np.int64)
    if include_last_offset and starts.size < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {starts[0]}")
    if starts.size and starts[-1] > indices.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.size} "
                           f"but got offsets[-1] of {starts[-1]}")
    return indices, starts, include_last_offset


def _indices(input: Tensor) -> np.ndarray:
    data = input.detach().cpu().numpy()
    if data.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} instead "
                           f"(while checking arguments for embedding_bag)")
    return data.astype(np.int64)


def _bag_ids(indices: np.ndarray, starts: np.ndarray, include_last_offset: bool) -> np.ndarray:
    """The bag of each index, -1 past the last bag (``include_last_offset``)."""
    bag_of = np.searchsorted(starts, np.arange(indices.size), side="right") - 1
    if include_last_offset and starts.size:
        bag_of[np.arange(indices.size) >= starts[-1]] = -1
    return bag_of


def _bag_max(rows: Tensor, bag_ids: np.ndarray, bags: int) -> Tensor:
    """Per bag and column, the row holding the largest value (the first on ties); an empty bag
    gives zeros. Bags are contiguous runs of ``bag_ids``, so ``reduceat`` finds both."""
    values = rows.detach().cpu().numpy()
    filled, seg_starts = np.unique(bag_ids, return_index=True)
    best = np.maximum.reduceat(values, seg_starts, axis=0)
    segment = np.searchsorted(filled, bag_ids)
    positions = np.arange(len(bag_ids))[:, None]
    candidates = np.where(values == best[segment], positions, len(bag_ids))
    winner = np.zeros((bags, values.shape[1]), dtype=np.int64)
    winner[filled] = np.minimum.reduceat(candidates, seg_starts, axis=0)
    out = rows.gather(0, _tensor(winner, device=rows.device))
    if len(filled) == bags:
        return out
    mask = np.zeros((bags, 1), dtype=values.dtype)
    mask[filled] = 1
    return out * _tensor(mask, device=rows.device)
