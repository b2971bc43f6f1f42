"""How much CPython's cyclic garbage collector costs a deep graph.

    python benchmarks/bench_gc.py

Builds ``x = x * 1.0001 + 0.0001`` chains (2,000 / 20,000 / 100,000 iterations), runs backward
and drops the graph, with the collector on and off, and prints microseconds per op for each
phase. gradnb's graphs have no reference cycles, so the collector finds nothing; it still walks
every live node and tensor while the graph grows. A script, not a test: timings are noisy.
"""

from __future__ import annotations

import gc
import time

import gradnb


def chain(n: int) -> tuple[float, float, float]:
    """Seconds for the forward, the backward and dropping the graph."""
    x = gradnb.tensor([1.0], dtype=gradnb.float64, requires_grad=True)
    y = x
    t0 = time.perf_counter()
    for _ in range(n):
        y = y * 1.0001 + 0.0001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    del y
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    print("collector  iterations  forward  backward  free   (µs per op, best of 3)")
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        for n in (2_000, 20_000, 100_000):
            best = [min(times) for times in zip(*(chain(n) for _ in range(3)))]
            per_op = [f"{t / (2 * n) * 1e6:7.2f}" for t in best]
            print(f"{'on ' if enabled else 'off'}        {n:>10,}  {'  '.join(per_op)}")
    gc.enable()


if __name__ == "__main__":
    main()
