"""Timing one callable inside a worker: warm-up, then per-call wall clock, median."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def median_seconds(
    call: Callable[[], None], *, iterations: int, budget_s: float, warmup: int = 1
) -> float:
    """Median wall-clock seconds of ``call()`` over up to ``iterations`` calls.

    Stops early once ``budget_s`` is spent (after at least three calls, or one when
    ``iterations`` is smaller), so a slow engine does not stall the round. The cyclic
    GC stays on, as users run it, but starts each measurement empty.
    """
    for _ in range(warmup):
        call()
    gc.collect()
    times: list[float] = []
    started = time.perf_counter()
    while len(times) < iterations:
        before = time.perf_counter()
        call()
        times.append(time.perf_counter() - before)
        if time.perf_counter() - started > budget_s and len(times) >= min(3, iterations):
            break
    return statistics.median(times)
