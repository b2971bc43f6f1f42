"""``DataLoader``: batches from a dataset, with PyTorch's whole signature and checks.

``num_workers > 0`` runs the workers in-process (see ``gradnb.utils.data.worker``): the batches,
their order, ``get_worker_info()`` and ``worker_init_fn`` are PyTorch's, the speed-up is not.
``pin_memory``, ``pin_memory_device``, ``timeout``, ``prefetch_factor``, ``in_order`` (batches
always come back in order) and ``multiprocessing_context`` are checked as PyTorch checks them and
otherwise have nothing to do.

>>> import gradnb
>>> from gradnb.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(gradnb.arange(5.0), gradnb.arange(5))
>>> [len(x) for x, y in DataLoader(ds, batch_size=2)]
[2, 2, 1]
"""

from __future__ import annotations

import math
import warnings

from ... import cuda
from ...ops.creation import randint
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker import Worker

__all__ = ["DataLoader"]

_FROZEN_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                      "persistent_workers")


class DataLoader:
    """Iterate over ``dataset`` in batches (PyTorch's ``torch.utils.data.DataLoader``)."""

    _initialized = False

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got num_workers=0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._workers = None
        self._is_iterable = iterable
        self._initialized = True

    def __setattr__(self, attr, val) -> None:
        if self._initialized and attr in _FROZEN_AFTER_INIT:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else math.ceil(length / self.batch_size))
            return length
        return len(self._index_sampler)

    def __iter__(self):
        if self.pin_memory:
            _warn_pin_memory()
        index_iter = iter(self._index_sampler)
        # As PyTorch, every epoch draws the workers' base seed from the loader's generator (the
        # global one by default), whether or not there are workers.
        base_seed = int(randint(0, 2**62, (), generator=self.generator).item())
        workers = self._start_workers(base_seed)
        if self._is_iterable:
            return self._iterable_batches(workers)
        return self._map_batches(index_iter, workers)

    def _start_workers(self, base_seed: int) -> list[Worker | None]:
        if self.num_workers == 0:
            return [None]
        if self.persistent_workers and self._workers is not None:
            return self._workers
        workers = [Worker(i, self.num_workers, base_seed + i, self.dataset, self.worker_init_fn)
                   for i in range(self.num_workers)]
        if self.persistent_workers:
            self._workers = workers
        return workers

    def _fetch(self, indices):
        if not self._auto_collation:
            return self.collate_fn(self.dataset[indices])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(indices) if callable(getitems) else [self.dataset[i] for i in indices]
        return self.collate_fn(data)

    def _map_batches(self, index_iter, workers):
        # Batch k goes to worker k % num_workers, and batches come back in sampler order.
        for k, indices in enumerate(index_iter):
            worker = workers[k % len(workers)]
            if worker is None:
                yield self._fetch(indices)
                continue
            with worker.running():
                batch = self._fetch(indices)
            yield batch

    def _iterable_batches(self, workers):
        # Each worker iterates the dataset on its own; batches alternate between the workers
        # that still have data, as PyTorch's round-robin does.
        streams = []
        for worker in workers:
            if worker is None:
                streams.append((None, self._worker_stream()))
            else:
                with worker.running():
                    streams.append((worker, self._worker_stream()))
        while streams:
            for entry in list(streams):
                worker, stream = entry
                try:
                    if worker is None:
                        batch = next(stream)
                    else:
                        with worker.running():
                            batch = next(stream)
                except StopIteration:
                    streams.remove(entry)
                    continue
                yield batch

    def _worker_stream(self):
        samples = iter(self.dataset)
        if not self._auto_collation:
            for sample in samples:
                yield self.collate_fn(sample)
            return
        while True:
            batch = []
            for sample in samples:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    break
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)


class _InfiniteConstantSampler:
    """The sampler of an iterable dataset: it yields None forever (the dataset decides)."""

    def __iter__(self):
        while True:
            yield None


def _warn_pin_memory() -> None:
    if not cuda.is_available():
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.", UserWarning, stacklevel=3)
