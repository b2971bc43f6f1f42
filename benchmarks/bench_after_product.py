"""How much slower an engine's per-op code runs right after a large matrix product.

    python benchmarks/bench_after_product.py
    python benchmarks/bench_after_product.py --rounds 10 --calls 300

In an MLP step at batch 128 the products take most of the time, and between them each engine
runs its own per-op code: Python for gradnb and the hand-written NumPy limit, C++ for PyTorch.
This script times each one's step of a tiny 8-16-16-4 MLP, where the products cost nothing and
only that per-op code is left, on its own and right after one of:

- the batch-128 step's largest product, ``x @ w.T`` (128 x 784 by 784 x 512, float32), on the
  engine's own BLAS (NumPy's for gradnb and the limit: a product on another library's thread
  pool would time the two pools' contention instead);
- a copy of 8 MB, which does no arithmetic: it only fills the core's caches with other data.

A step that takes longer after the copy than alone had to bring its code and objects back from
memory; one that takes longer after the product than after the copy also ran at a lower clock
(the product's wide vector instructions). The growth per step after a product is what each
engine's per-op code costs more inside a batch-128 step than in a tiny one. Interleaved round by
round; a script, not a test: timings are noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: use the gradnb of this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks.data import mlp_problem
from benchmarks.systems.numpy_limit import NumpyMlpStep
from benchmarks.systems.torchlike import TorchLikeMlpStep

TINY_LAYERS = (8, 16, 16, 4)
TINY_BATCH = 4


class Way:
    """One engine's tiny step, and the large product on its BLAS."""

    def __init__(self, step, x, w) -> None:
        self.step = step.run
        self.product = lambda: x @ w.T


def ways() -> dict[str, Way]:
    """Each engine's tiny MLP training step and large product."""
    import gradnb

    problem = mlp_problem(TINY_LAYERS, TINY_BATCH)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784), dtype=np.float32)
    w = rng.standard_normal((512, 784), dtype=np.float32)
    found = {"NumPy (limit)": Way(NumpyMlpStep(problem), x, w),
             "gradnb": Way(TorchLikeMlpStep(gradnb, problem), x, w)}
    if importlib.util.find_spec("torch") is not None:
        import torch

        found["PyTorch"] = Way(TorchLikeMlpStep(torch, problem), torch.from_numpy(x),
                               torch.from_numpy(w))
    return found


def copier() -> Callable[[], object]:
    """A copy of 8 MB: no arithmetic, only the caches filled with other data."""
    source = np.ones(2 * 1024 * 1024, np.float32)
    target = np.empty_like(source)
    return lambda: np.copyto(target, source)


def median_step_seconds(step: Callable[[], None], before: Callable[[], object] | None,
                        calls: int) -> float:
    """The median of ``calls`` timed steps, each right after ``before()`` (untimed)."""
    seconds = []
    for _ in range(calls):
        if before is not None:
            before()
        started = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    engines, copy = ways(), copier()
    for way in engines.values():  # warm up: first calls build caches and lazy imports
        for _ in range(20):
            way.step()
    columns = ["alone", "after x @ w.T", "after an 8 MB copy"]
    times: dict[tuple[str, str], list[float]] = {
        (name, when): [] for name in engines for when in columns}
    for _ in range(args.rounds):
        for when in columns:
            for name, way in engines.items():
                before = {"alone": None, "after x @ w.T": way.product}.get(when, copy)
                times[name, when].append(median_step_seconds(way.step, before, args.calls))
    print(f"tiny {'-'.join(map(str, TINY_LAYERS))} MLP step, batch {TINY_BATCH}: µs per step "
          f"(median round), and x the step alone")
    print(f"  {'':16s}" + "".join(f"{when:>28s}" for when in columns))
    for name in engines:
        alone = statistics.median(times[name, "alone"])
        cells = []
        for when in columns:
            value = statistics.median(times[name, when])
            cells.append(f"{value * 1e6:17.1f} ({value / alone:5.2f}x)")
        print(f"  {name:16s}" + "".join(f"{cell:>28s}" for cell in cells))
    extra = {name: statistics.median(times[name, columns[1]]) - statistics.median(
        times[name, "alone"]) for name in engines}
    print("  more per step after the product: "
          + ", ".join(f"{name} {value * 1e6:+.1f} µs" for name, value in extra.items()))


if __name__ == "__main__":
    main()
