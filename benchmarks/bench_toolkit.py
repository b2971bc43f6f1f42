"""Time the notebook toolkit: tracing overhead on an MLP training step, and ``%load_ext``.

Run ``python benchmarks/bench_toolkit.py`` from the repository root (``--quick`` for fewer
repeats). Three figures:

* an MLP training step (784-256-128-10, batch 64, float32: forward, backward, SGD) untraced,
  inside ``gradnb.autograd.graph_trace()``, and inside a trace with the live view's throttled redraw (the
  ``%%trace`` case in a notebook); medians of interleaved runs, so drift hits all three alike;
  the target is at most 25% overhead for the trace;
* ``%load_ext gradnb`` in a fresh IPython shell (a new process per sample, so nothing is
  cached), median of several processes: cold (it imports gradnb too) and after
  ``import gradnb`` (the toolkit's own cost).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import gradnb
from gradnb.notebook.graph_view import GraphView
from gradnb.notebook.widgets import LIVE_INTERVAL_S

LAYERS = (784, 256, 128, 10)
BATCH = 64
LEARNING_RATE = 0.01
OVERHEAD_TARGET = 0.25

LOAD_EXT_SCRIPT = """
import time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
{preload}
start = time.perf_counter()
shell.run_line_magic("load_ext", "gradnb")
print(time.perf_counter() - start)
"""


class MLPStep:
    """One training step of a ReLU MLP with a squared-error loss (fixed seed)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(0)
        self.weights = []
        for fan_in, fan_out in itertools.pairwise(LAYERS):
            scale = np.sqrt(2.0 / fan_in)
            w = gradnb.tensor(rng.standard_normal((fan_in, fan_out)).astype(np.float32) * scale,
                              requires_grad=True)
            b = gradnb.zeros(fan_out, requires_grad=True)
            self.weights.append((w, b))
        self.inputs = gradnb.tensor(rng.standard_normal((BATCH, LAYERS[0])).astype(np.float32))
        self.targets = gradnb.tensor(rng.standard_normal((BATCH, LAYERS[-1])).astype(np.float32))

    def run(self) -> None:
        """Zero grads, forward, backward, SGD update."""
        for w, b in self.weights:
            w.grad = None
            b.grad = None
        h = self.inputs
        for i, (w, b) in enumerate(self.weights):
            h = h.matmul(w) + b
            if i < len(self.weights) - 1:
                h = h.relu()
        loss = ((h - self.targets) ** 2).mean()
        loss.backward()
        with gradnb.no_grad():
            for w, b in self.weights:
                w._data -= LEARNING_RATE * w.grad._data
                b._data -= LEARNING_RATE * b.grad._data


def _live_redraw(recording) -> None:
    """What %%trace's live view does per redraw: build the graph and render SVG."""
    GraphView(recording, namespace={}).to_svg()


def _throttled(render, interval: float):
    next_time = [0.0]

    def listener(recording) -> None:
        now = time.monotonic()
        if now >= next_time[0]:
            render(recording)
            next_time[0] = time.monotonic() + interval

    return listener


def time_steps(repeats: int) -> dict[str, float]:
    """Median seconds per step: untraced, traced, traced with the live redraw."""
    step = MLPStep()
    step.run()  # warm up BLAS and the allocator

    def plain() -> None:
        step.run()

    def traced() -> None:
        with gradnb.autograd.graph_trace():
            step.run()

    def live() -> None:
        recording = gradnb.autograd.graph_trace()
        recording.listeners.append(_throttled(_live_redraw, LIVE_INTERVAL_S))
        with recording:
            step.run()

    cases = {"untraced": plain, "trace()": traced, "trace() + live view": live}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def time_load_ext(samples: int, preload: str = "") -> float:
    """Median seconds of ``%load_ext gradnb`` in a fresh process (after running ``preload``)."""
    root = str(Path(__file__).resolve().parents[1])
    script = LOAD_EXT_SCRIPT.format(preload=preload)
    times = []
    for _ in range(samples):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             text=True, check=True, cwd=root)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Print the figures as a small table; exit status 0 (figures are reported, not judged)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeats, processes = (15, 3) if args.quick else (60, 7)

    steps = time_steps(repeats)
    base = steps["untraced"]
    shape = "-".join(map(str, LAYERS))
    print(f"MLP {shape}, batch {BATCH}, float32, median of {repeats} interleaved steps")
    for name, seconds in steps.items():
        overhead = "" if name == "untraced" else f"  {100 * (seconds / base - 1):+.1f}%"
        print(f"  {name:<22} {1e3 * seconds:8.2f} ms/step{overhead}")
    traced = steps["trace()"] / base - 1
    verdict = "meets" if traced <= OVERHEAD_TARGET else "misses"
    print(f"  trace() overhead {100 * traced:.1f}% {verdict} the "
          f"{100 * OVERHEAD_TARGET:.0f}% target")
    cold = time_load_ext(processes)
    warm = time_load_ext(processes, preload="import gradnb")
    print(f"%load_ext gradnb: {1e3 * cold:.1f} ms in a fresh kernel, {1e3 * warm:.1f} ms after "
          f"`import gradnb` (medians of {processes} processes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
