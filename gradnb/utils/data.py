"""Minimal ``TensorDataset`` and ``DataLoader`` (batching and shuffling with gradnb's generator).

>>> import gradnb
>>> from gradnb.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(gradnb.arange(5.0), gradnb.arange(5))
>>> [len(x) for x, y in DataLoader(ds, batch_size=2)]
[2, 2, 1]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .._core.tensor import Tensor
from ..ops.creation import default_generator

__all__ = ["DataLoader", "TensorDataset"]


class TensorDataset:
    """Samples are rows of the given tensors (all with the same first dimension)."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index):
        return tuple(Tensor._make(t._data[index]) for t in self.tensors)


class DataLoader:
    """Batches of a ``TensorDataset`` (stacked with one fancy index per tensor, not per sample)."""

    def __init__(self, dataset: TensorDataset, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, generator=None) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.generator = generator

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[tuple]:
        n = len(self.dataset)
        order = np.arange(n)
        if self.shuffle:
            order = (self.generator or default_generator)._rng.permutation(n)
        for start in range(0, n, self.batch_size):
            batch = order[start:start + self.batch_size]
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield self.dataset[batch]
