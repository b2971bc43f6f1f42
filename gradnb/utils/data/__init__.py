"""``gradnb.utils.data``: PyTorch's datasets, samplers, collation and ``DataLoader``.

>>> import gradnb
>>> from gradnb.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(gradnb.arange(6.0).reshape(3, 2), gradnb.tensor([0, 1, 0]))
>>> x, y = next(iter(DataLoader(ds, batch_size=2)))
>>> x.shape, y
(gradnb.Size([2, 2]), tensor([0, 1]))
"""

from __future__ import annotations

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
