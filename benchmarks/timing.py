"""Timing one callable inside a worker: warm-up, then per-call wall clock, fastest and median."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class BlockTimes:
    """One round's calls of a workload: the fastest call and the median call, in seconds.

    The fastest is the engine's cost with the least interference; the median is what a
    typical call costs on this machine as it is (the figure independent harnesses report
    as a "median of per-block medians").
    """

    best: float
    median: float

    def per(self, units: float) -> BlockTimes:
        """Both figures divided by ``units`` (ops, steps) to give seconds per unit."""
        return BlockTimes(self.best / units, self.median / units)


def call_seconds(
    call: Callable[[], None], *, iterations: int, budget_s: float, warmup: int = 1
) -> list[float]:
    """Wall-clock seconds of each of up to ``iterations`` calls of ``call()``.

    Stops early once ``budget_s`` is spent (after at least three calls, or fewer when
    ``iterations`` is smaller), so a slow engine does not stall the round. The cyclic GC
    stays on, as users run it, but starts each measurement empty.
    """
    for _ in range(warmup):
        call()
    gc.collect()
    seconds = []
    started = time.perf_counter()
    while len(seconds) < iterations:
        before = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - before)
        if time.perf_counter() - started > budget_s and len(seconds) >= min(3, iterations):
            break
    return seconds


def interleaved_times(ways: dict[str, Callable[[], object]], rounds: int,
                      calls: int, pause_s: float = 0.0) -> dict[str, tuple[float, float]]:
    """Seconds per call of each of ``ways``, timed in turn within each round (so the machine's
    load falls on all alike): per way, (fastest round, median round). ``pause_s``: idle time
    before each way's turn, so BLAS threads left spin-waiting by the previous way have parked
    (as the benchmark's workers do between systems)."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, fn in ways.items():
            if pause_s:
                time.sleep(pause_s)
            started = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - started) / calls)
    return {name: (min(ts), statistics.median(ts)) for name, ts in times.items()}


def block_times(
    call: Callable[[], None], *, iterations: int, budget_s: float, warmup: int = 1
) -> BlockTimes:
    """Fastest and median seconds of ``call()`` over one block of calls (``call_seconds``)."""
    seconds = call_seconds(call, iterations=iterations, budget_s=budget_s, warmup=warmup)
    return BlockTimes(min(seconds), statistics.median(seconds))


def best_seconds(
    call: Callable[[], None], *, iterations: int, budget_s: float, warmup: int = 1
) -> float:
    """Fastest wall-clock seconds of ``call()`` over one block of calls (``call_seconds``).

    The fastest call, because other load on the machine only ever adds time; drift
    between rounds is handled by the interleaving.
    """
    return min(call_seconds(call, iterations=iterations, budget_s=budget_s, warmup=warmup))
