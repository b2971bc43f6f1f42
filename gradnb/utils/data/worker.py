"""Data-loading workers, run in-process: ``get_worker_info`` and each worker's own RNG state.

PyTorch's ``num_workers > 0`` forks processes. gradnb runs the workers in the main process, one
after another in PyTorch's round-robin order, so what a program observes is the same: which
worker loads which batch, ``get_worker_info()`` inside ``__getitem__``/``__iter__``, the
``worker_init_fn`` call per worker, and per-worker seeds (``base_seed + worker_id`` seeds
gradnb's global generator, ``random`` and ``numpy.random`` while that worker runs). What it does
not give is parallelism: loading is no faster than with ``num_workers=0``, and ``timeout`` has
nothing to wait for.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ...ops.creation import Generator, default_generator

__all__ = ["WorkerInfo", "get_worker_info"]

_current: WorkerInfo | None = None


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker (PyTorch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info() -> WorkerInfo | None:
    """The running worker's ``WorkerInfo``, or None outside a worker (the main process)."""
    return _current


class Worker:
    """One in-process worker: its info and its own states of the three global RNGs."""

    def __init__(self, worker_id: int, num_workers: int, seed: int, dataset, init_fn) -> None:
        self.info = WorkerInfo(worker_id, num_workers, seed, dataset)
        self._states = (Generator().manual_seed(seed).get_state(),
                        random.Random(seed).getstate(),
                        np.random.RandomState(seed % 2**32).get_state())
        if init_fn is not None:
            with self.running():
                init_fn(worker_id)

    @contextmanager
    def running(self):
        """Make this worker current: its info and RNG states, swapped back out afterwards."""
        global _current
        outer = (_current, default_generator.get_state(), random.getstate(),
                 np.random.get_state())
        _current = self.info
        default_generator.set_state(self._states[0])
        random.setstate(self._states[1])
        np.random.set_state(self._states[2])
        try:
            yield
        finally:
            self._states = (default_generator.get_state(), random.getstate(),
                            np.random.get_state())
            _current = outer[0]
            default_generator.set_state(outer[1])
            random.setstate(outer[2])
            np.random.set_state(outer[3])
