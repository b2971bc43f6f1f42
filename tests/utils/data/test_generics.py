"""Datasets and samplers are generic in what they give, as PyTorch's (``Sampler[int]``)."""

from __future__ import annotations

from gradnb.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
)


class EveryOther(Sampler[int]):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(range(0, self.n, 2))

    def __len__(self) -> int:
        return (self.n + 1) // 2


class Squares(Dataset[int]):
    def __getitem__(self, index: int) -> int:
        return index * index

    def __len__(self) -> int:
        return 6


class Stream(IterableDataset[int]):
    def __iter__(self):
        return iter(range(3))


def test_subscripted_bases_work_as_in_torch():
    loader = DataLoader(Squares(), sampler=EveryOther(6), batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 4], [16]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2)] == [[0, 1], [2]]
    assert Sampler[int] is not Sampler and Dataset[str] is not Dataset


def test_the_samplers_say_what_they_give():
    for cls in (SequentialSampler, RandomSampler):
        assert Sampler[int] in cls.__orig_bases__
    assert Sampler[list[int]] in BatchSampler.__orig_bases__
