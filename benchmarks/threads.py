"""Thread pools inside a worker: one thread for a workload whose arrays are too small to share.

PyTorch's OpenMP team waits for its threads at the end of every parallel region, spinning
first (libgomp's default policy). MKL's vectorised math, which PyTorch's Adam reaches through
``sqrt``, opens such a region for arrays of a few hundred elements. While another process
keeps one of the cores busy, each region then waits for a thread the scheduler has parked:
a 1,000-step Adam loop of a 32-64-64-10 MLP took 4-49 s instead of 0.8 s on a 2-core machine
with other work on it (1 thread: 0.8-2.8 s), and a benchmark round looked hung. A second
thread cannot speed up arrays that small in any system, so such workloads run on one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from benchmarks.systems.base import System


@contextlib.contextmanager
def single_threaded(system: System, restore: int) -> Iterator[None]:
    """Every BLAS/OpenMP pool (threadpoolctl) and the system's own pool at one thread for the
    block; afterwards the pools are back as they were and the system's at ``restore``."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the worker could not set the limit either: only the system's pool
        limits: contextlib.AbstractContextManager = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1)
    with limits:
        system.set_threads(1)
        try:
            yield
        finally:
            system.set_threads(restore)
