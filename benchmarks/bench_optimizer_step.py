"""The optimizer step alone: gradnb against PyTorch's single-tensor and ``foreach`` steps.

    python benchmarks/bench_optimizer_step.py [--rounds 7]

For each optimizer and two parameter sets (the training-loop MLP 32-64-64-10 and the
784-512-256-10 MLP, float32), every parameter gets a fixed gradient and ``step()`` is timed
repeatedly. Each round times gradnb, PyTorch with ``foreach=False`` and PyTorch with
``foreach=True`` in turn (best of many calls each) and takes the ratios within the round; the
table gives the median ratio over rounds and the median microseconds per step. One process, one
PyTorch thread (elementwise updates of these sizes do not use more). A script, not a test:
timings are noisy, ratios less so.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import numpy as np

import gradnb

OPTIMIZERS = {
    "SGD(momentum=0.9)": ("SGD", {"lr": 0.01, "momentum": 0.9}),
    "Adam": ("Adam", {"lr": 1e-3}),
    "AdamW": ("AdamW", {"lr": 1e-3}),
    "RMSprop": ("RMSprop", {"lr": 1e-3}),
    "Adagrad": ("Adagrad", {"lr": 1e-2}),
    "NAdam": ("NAdam", {}),
    "RAdam": ("RAdam", {}),
    "Adamax": ("Adamax", {}),
    "Adadelta": ("Adadelta", {}),
    "ASGD": ("ASGD", {}),
    "Rprop": ("Rprop", {}),
}
MODELS = {"small MLP 32-64-64-10": (32, 64, 64, 10), "MLP 784-512-256-10": (784, 512, 256, 10)}


def _shapes(layers):
    for fan_in, fan_out in itertools.pairwise(layers):
        yield (fan_out, fan_in)
        yield (fan_out,)


def _build(lib, layers, name, kwargs, foreach=None):
    rng = np.random.default_rng(0)
    params = []
    for shape in _shapes(layers):
        p = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        params.append(p)
    extra = {} if foreach is None else {"foreach": foreach}
    optimizer = getattr(lib.optim, name)(params, **kwargs, **extra)
    optimizer.step()  # state exists before timing
    return optimizer


def _best_microseconds(step, calls: int) -> float:
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50, help="timed calls per system per round")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    print("| optimizer | parameters | gradnb µs | torch single µs | torch foreach µs "
          "| gradnb / single | gradnb / foreach |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for model, layers in MODELS.items():
        for label, (name, kwargs) in OPTIMIZERS.items():
            steps = {"gradnb": _build(gradnb, layers, name, kwargs).step,
                     "single": _build(torch, layers, name, kwargs, foreach=False).step,
                     "foreach": _build(torch, layers, name, kwargs, foreach=True).step}
            times = {key: [] for key in steps}
            for _ in range(args.rounds):
                for key, step in steps.items():
                    times[key].append(_best_microseconds(step, args.calls))
            ratio_single = statistics.median(
                g / s for g, s in zip(times["gradnb"], times["single"]))
            ratio_foreach = statistics.median(
                g / f for g, f in zip(times["gradnb"], times["foreach"]))
            med = {key: statistics.median(values) for key, values in times.items()}
            print(f"| {label} | {model} | {med['gradnb']:.1f} | {med['single']:.1f} | "
                  f"{med['foreach']:.1f} | {ratio_single:.2f}× | {ratio_foreach:.2f}× |",
                  flush=True)


if __name__ == "__main__":
    main()
