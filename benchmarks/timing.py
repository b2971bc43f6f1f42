"""Timing one callable inside a worker: warm-up, then per-call wall clock, fastest call."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def best_seconds(
    call: Callable[[], None], *, iterations: int, budget_s: float, warmup: int = 1
) -> float:
    """Fastest wall-clock seconds of ``call()`` over up to ``iterations`` calls.

    The fastest call, because other load on the machine only ever adds time; drift
    between rounds is handled by the interleaving. Stops early once ``budget_s`` is
    spent (after at least three calls, or fewer when ``iterations`` is smaller), so a
    slow engine does not stall the round. The cyclic GC stays on, as users run it, but
    starts each measurement empty.
    """
    for _ in range(warmup):
        call()
    gc.collect()
    best = float("inf")
    calls = 0
    started = time.perf_counter()
    while calls < iterations:
        before = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - before)
        calls += 1
        if time.perf_counter() - started > budget_s and calls >= min(3, iterations):
            break
    return best
