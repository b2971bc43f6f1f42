"""DataLoader, samplers and datasets against torch.utils.data on the same data.

Orders drawn from a generator differ from PyTorch's (another bit generator), so shuffled loaders
are compared by structure and content; sequential ones value for value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradnb
from gradnb.utils import data


def _plain(obj):
    if hasattr(obj, "tolist") and not isinstance(obj, np.ndarray):
        return ("tensor", str(obj.dtype).split(".")[-1], tuple(obj.shape), obj.tolist())
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_plain(v) for v in obj])
    return obj


def _tensor_dataset(lib, module):
    x = lib.tensor(np.arange(14.0).reshape(7, 2))
    y = lib.tensor(np.arange(7))
    return module.TensorDataset(x, y)


class _MapDataset:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"i": i, "sq": float(i * i), "arr": np.full(2, i, dtype=np.int32)}


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
    {"batch_size": 2, "num_workers": 2}, {"batch_size": 4, "num_workers": 2,
                                          "persistent_workers": True},
])
def test_sequential_loader_matches_torch(torch, kwargs):
    ours = data.DataLoader(_tensor_dataset(gradnb, data), **kwargs)
    theirs = torch.utils.data.DataLoader(_tensor_dataset(torch, torch.utils.data), **kwargs)
    assert len(ours) == len(theirs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    ours = data.DataLoader(_MapDataset(5), **kwargs)
    theirs = torch.utils.data.DataLoader(_MapDataset(5), **kwargs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


def test_shuffled_loader_is_a_permutation_and_reproducible(torch):
    def epoch(seed):
        loader = data.DataLoader(_tensor_dataset(gradnb, data), batch_size=3, shuffle=True,
                                 generator=gradnb.Generator().manual_seed(seed))
        return [_plain(b) for b in loader]

    theirs = [_plain(b) for b in torch.utils.data.DataLoader(
        _tensor_dataset(torch, torch.utils.data), batch_size=3, shuffle=True)]
    first = epoch(0)
    assert first == epoch(0) and first != epoch(1)
    assert [[part[:3] for part in b[1]] for b in first] == [[part[:3] for part in b[1]]
                                                            for b in theirs]
    assert sorted(y for b in first for y in b[1][1][3]) == list(range(7))


def test_global_seed_makes_shuffle_reproducible():
    ds = _tensor_dataset(gradnb, data)
    gradnb.manual_seed(3)
    a = [y.tolist() for _, y in data.DataLoader(ds, batch_size=2, shuffle=True)]
    gradnb.manual_seed(3)
    b = [y.tolist() for _, y in data.DataLoader(ds, batch_size=2, shuffle=True)]
    assert a == b


class _Stream(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = data.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 2, "drop_last": True},
                                    {"batch_size": 2, "num_workers": 2},
                                    {"batch_size": None, "num_workers": 2}])
def test_iterable_dataset_matches_torch(torch, kwargs):
    class TorchStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, 7, step))

        def __len__(self):
            return 7

    ours = data.DataLoader(_Stream(7), **kwargs)
    theirs = torch.utils.data.DataLoader(TorchStream(), **kwargs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    if kwargs.get("num_workers", 0) == 0:
        assert len(ours) == len(theirs)


def test_worker_info_and_init_fn():
    seen = []

    class Recorder(data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            info = data.get_worker_info()
            return (info.id, info.num_workers, info.dataset is ds)

    ds = Recorder()
    inits = []
    loader = data.DataLoader(ds, batch_size=2, num_workers=2,
                             worker_init_fn=lambda wid: inits.append(
                                 (wid, data.get_worker_info().seed)))
    for batch in loader:
        seen.append([t.tolist() for t in batch])
    assert [b[0] for b in seen] == [[0, 0], [1, 1], [0, 0]]
    assert [wid for wid, _ in inits] == [0, 1] and inits[1][1] == inits[0][1] + 1
    assert data.get_worker_info() is None


def test_worker_rng_is_separate_from_the_main_one():
    class Noise(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return gradnb.rand(())

    gradnb.manual_seed(0)
    loader = data.DataLoader(Noise(), batch_size=1, num_workers=2)
    gradnb.manual_seed(0)
    before = gradnb.rand(())
    gradnb.manual_seed(0)
    batches = [b.item() for b in loader]
    assert len(set(batches)) == 4
    gradnb.manual_seed(0)
    list(loader)
    # The main generator advanced only by the epoch's base-seed draw, not by the workers' draws.
    assert gradnb.rand(()).item() != before.item()


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1}, {"persistent_workers": True},
    {"sampler": [0, 1], "shuffle": True}, {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True}, {"batch_size": None, "drop_last": True},
])
def test_loader_argument_errors_match_torch(torch, kwargs):
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(_tensor_dataset(torch, torch.utils.data), **kwargs)
    with pytest.raises(ValueError) as ours:
        data.DataLoader(_tensor_dataset(gradnb, data), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_iterable_dataset_argument_errors_match_torch(torch):
    class TorchStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    for kwargs in ({"shuffle": True}, ):
        with pytest.raises(ValueError) as theirs:
            torch.utils.data.DataLoader(TorchStream(), **kwargs)
        with pytest.raises(ValueError) as ours:
            data.DataLoader(_Stream(3), **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_attributes_are_frozen_after_init():
    loader = data.DataLoader(_tensor_dataset(gradnb, data))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader"):
        loader.batch_size = 4
    loader.num_workers = 0  # not frozen, as in PyTorch


def test_pin_memory_warns_as_torch_without_an_accelerator():
    if gradnb.cuda.is_available():
        pytest.skip("an accelerator is present")
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true"):
        list(data.DataLoader(_tensor_dataset(gradnb, data), pin_memory=True))


def test_batch_sampler_and_custom_collate():
    loader = data.DataLoader(_tensor_dataset(gradnb, data), batch_sampler=[[6, 0], [3]],
                             collate_fn=lambda samples: [int(y) for _, y in samples])
    assert list(loader) == [[6, 0], [3]]
    assert len(loader) == 2


def test_dataset_getitems_is_used_for_batches():
    class Batched(data.Dataset):
        def __len__(self):
            return 4

        def __getitems__(self, indices):
            return [(i, -i) for i in indices]

    batches = list(data.DataLoader(Batched(), batch_size=3))
    assert [[t.tolist() for t in b] for b in batches] == [[[0, 1, 2], [0, -1, -2]], [[3], [-3]]]


# -- samplers ------------------------------------------------------------------------------------
def test_samplers_lengths_and_contents(torch):
    src = list(range(10))
    g = gradnb.Generator().manual_seed(0)
    assert list(data.SequentialSampler(src)) == list(torch.utils.data.SequentialSampler(src))
    perm = list(data.RandomSampler(src, generator=g))
    assert sorted(perm) == src
    drawn = list(data.RandomSampler(src, replacement=True, num_samples=70, generator=g))
    assert len(drawn) == 70 and set(drawn) <= set(src)
    repeated = list(data.RandomSampler(src, num_samples=25, generator=g))
    assert sorted(repeated[:10]) == src and sorted(repeated[10:20]) == src and len(repeated) == 25
    assert sorted(data.SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    weighted = list(data.WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 20, generator=g))
    assert set(weighted) == {1, 3}
    no_repeat = list(data.WeightedRandomSampler([1, 1, 1], 3, replacement=False, generator=g))
    assert sorted(no_repeat) == [0, 1, 2]
    for drop_last in (False, True):
        ours = data.BatchSampler(data.SequentialSampler(src), 3, drop_last)
        theirs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(src), 3, drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.WeightedRandomSampler([1.0], num_samples=-1),
    lambda m: m.WeightedRandomSampler([[1.0]], num_samples=1),
    lambda m: m.WeightedRandomSampler([1.0], num_samples=1, replacement=0),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, 1),
])
def test_sampler_errors_match_torch(torch, make):
    with pytest.raises((TypeError, ValueError)) as theirs:
        make(torch.utils.data)
    with pytest.raises(theirs.type) as ours:
        make(data)
    assert str(ours.value) == str(theirs.value)


# -- datasets ------------------------------------------------------------------------------------
def test_datasets_match_torch(torch):
    ours, theirs = _tensor_dataset(gradnb, data), _tensor_dataset(torch, torch.utils.data)
    assert _plain(ours[2]) == _plain(theirs[2]) and len(ours) == len(theirs)
    cat_ours = data.ConcatDataset([ours, data.Subset(ours, [6, 5])])
    cat_theirs = torch.utils.data.ConcatDataset([theirs, torch.utils.data.Subset(theirs, [6, 5])])
    assert len(cat_ours) == len(cat_theirs) == 9
    for i in (0, 7, 8, -1, -9):
        assert _plain(cat_ours[i]) == _plain(cat_theirs[i])
    assert cat_ours.cumulative_sizes == cat_theirs.cumulative_sizes
    assert len(ours + ours) == 14
    stacked = data.StackDataset(a=ours, b=ours)
    assert _plain(stacked[1]) == _plain(torch.utils.data.StackDataset(a=theirs, b=theirs)[1])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        data.TensorDataset(gradnb.zeros(2), gradnb.zeros(3))
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        cat_ours[-10]
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement"):
        data.Dataset()[0]


def test_chain_dataset():
    chained = _Stream(2) + _Stream(3)
    assert isinstance(chained, data.ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5


@pytest.mark.parametrize("lengths", [[3, 4], [0.5, 0.5], [0.3, 0.3, 0.4], [0.1, 0.9]])
def test_random_split_lengths_match_torch(torch, lengths):
    ours = data.random_split(range(7), lengths, generator=gradnb.Generator().manual_seed(0))
    theirs = torch.utils.data.random_split(range(7), lengths,
                                           generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in ours] == [len(p) for p in theirs]
    assert sorted(i for p in ours for i in p) == list(range(7))
    assert math.isclose(sum(len(p) for p in ours), 7)


def test_random_split_errors_and_reproducibility():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        data.random_split(range(7), [3, 3])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        data.random_split(range(3), [1.0, 0.0])
    a = data.random_split(range(9), [4, 5], generator=gradnb.Generator().manual_seed(1))
    b = data.random_split(range(9), [4, 5], generator=gradnb.Generator().manual_seed(1))
    assert [list(p) for p in a] == [list(p) for p in b]
