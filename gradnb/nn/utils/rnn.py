"""Variable-length batches for the recurrent layers: ``PackedSequence`` and the functions that
pack and unpack it (``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``,
``pack_sequence``), with PyTorch's layout: ``data`` holds time step 0 of every sequence, then
step 1 of those still running, ...; ``batch_sizes[t]`` says how many run at step ``t``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._core.tensor import Tensor
from ...ops.creation import full
from ...ops.creation import tensor as _tensor
from ...ops.indexing import index_select
from ...ops.shape import cat, stack

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence"]


class PackedSequence(NamedTuple):
    """A packed batch: ``data`` (total steps, *features), ``batch_sizes`` (one per step), and
    the permutation that sorted the batch by length (None when it was already sorted)."""

    data: Tensor
    batch_sizes: Tensor | None = None
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return lengths.detach().cpu().numpy().astype(np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded ``(T, B, *)`` (or ``(B, T, *)``) batch whose sequence ``b`` has
    ``lengths[b]`` valid steps."""
    lens = _lengths(lengths)
    if enforce_sorted:
        if np.any(lens[:-1] < lens[1:]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
        unsorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = _tensor(order)
        unsorted_indices = _tensor(np.argsort(order, kind="stable"))
        input = index_select(input, 0 if batch_first else 1, sorted_indices)
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    steps = int(lens.max()) if lens.size else 0
    if steps > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to {steps}")
    sizes = np.array([(lens > t).sum() for t in range(steps)], dtype=np.int64)
    data = cat([input[t, :int(b)] for t, b in enumerate(sizes)], 0)
    return PackedSequence(data, _tensor(sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: the padded batch and each sequence's length."""
    data, sizes = sequence.data, _lengths(sequence.batch_sizes)
    batch = int(sizes[0]) if sizes.size else 0
    steps = len(sizes)
    if total_length is not None and total_length < steps:
        raise ValueError(
            "Expected total_length to be at least the length of the longest sequence in "
            f"input, but got total_length={total_length} and max sequence length being "
            f"{steps}")
    rows, offset = [], 0
    feature = tuple(data.shape[1:])
    for b in sizes:
        chunk = data[offset:offset + int(b)]
        offset += int(b)
        if b < batch:
            fill = full((batch - int(b), *feature), padding_value, dtype=data.dtype,
                        device=data.device)
            chunk = cat([chunk, fill], 0)
        rows.append(chunk)
    for _ in range(steps, total_length or steps):
        rows.append(full((batch, *feature), padding_value, dtype=data.dtype, device=data.device))
    out = stack(rows, 0)
    lengths = np.array([(sizes > i).sum() for i in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        out = index_select(out, 1, sequence.unsorted_indices)
        lengths = lengths[_lengths(sequence.unsorted_indices)]
    if batch_first:
        out = out.transpose(0, 1)
    return out, _tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shape ``(L_i, *)`` into ``(max L, B, *)`` (or ``(B, max L, *)``),
    padding each with ``padding_value``."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = list(sequences)
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = full((missing, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of ``(L_i, *)`` tensors (longest first unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)
