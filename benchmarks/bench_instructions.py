"""CPU instructions per op of gradnb's engine, a measure a busy machine does not disturb.

    python benchmarks/bench_instructions.py            # every workload, under valgrind
    python benchmarks/bench_instructions.py tiny 100   # run one workload 100 times, plainly

Wall-clock ratios move by tens of percent when the host is busy; the number of instructions
a workload executes barely moves. Each workload runs in a child process under
``valgrind --tool=callgrind`` twice, for ``LOW`` and ``HIGH`` repetitions; the difference,
divided by the ops it ran, is the cost of one op without the interpreter's start-up and the
imports (with one BLAS thread: an idle OpenBLAS worker spins under valgrind). Compare two
checkouts by running the script in each: it imports the gradnb of its own checkout
(``PYTHONHASHSEED`` is fixed, so dictionary layouts match; differences under about 2% are
noise). Needs valgrind.

Workloads (the benchmark suite's, small):
- ``tiny``: 200 elementwise ops on float64[16] (x*0.9, x+0.1, tanh), sum, backward;
- ``traced``: the same under ``gradnb.autograd.graph_trace()`` (what ``%%trace`` runs);
- ``deep``: ``x = x * 1.0001 + 0.0001`` 100 times per repetition, kept in one graph, then
  backward (so the graph grows with the repetitions, as the deep chain does);
- ``tiny-tensor``, ``deep-tensor``: the same with the constants as 0-d tensors made once
  (``c = gradnb.tensor(0.9)``), as the benchmark's second row of each;
- ``mlp``: one step of the MLP benchmark's own code (``nn.Linear``, ``F.relu``,
  ``F.cross_entropy``, ``optim.SGD``) on an 8-16-16-4 MLP at batch 4, counted per step: the
  BLAS work shrunk away, what is left is the per-op overhead a small batch pays.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradnb
from benchmarks.data import mlp_problem
from benchmarks.systems.torchlike import TorchLikeMlpStep

LOW, HIGH = 20, 120
# What one repetition is, per workload: (how many, of what), to report a cost per unit.
UNITS = {"tiny": (200, "op"), "traced": (200, "op"), "deep": (200, "op"), "mlp": (1, "step"),
         "tiny-tensor": (200, "op"), "deep-tensor": (200, "op")}


def tiny(x, mul=0.9, add=0.1):
    x.grad = None
    h = x
    for i in range(200):
        k = i % 3
        h = h * mul if k == 0 else h + add if k == 1 else gradnb.tanh(h)
    h.sum().backward()


def deep(repetitions: int, mul=1.0001, add=0.0001) -> None:
    h = gradnb.tensor([0.5], dtype=gradnb.float64, requires_grad=True)
    for _ in range(repetitions * 100):
        h = h * mul + add
    h.sum().backward()


def run(workload: str, repetitions: int) -> None:
    """Run ``workload`` ``repetitions`` times in this process."""
    x = gradnb.tensor(np.linspace(-1, 1, 16), requires_grad=True)
    if workload == "tiny":
        for _ in range(repetitions):
            tiny(x)
    elif workload == "traced":
        for _ in range(repetitions):
            with gradnb.autograd.graph_trace():
                tiny(x)
    elif workload == "tiny-tensor":
        mul, add = gradnb.tensor(0.9), gradnb.tensor(0.1)
        for _ in range(repetitions):
            tiny(x, mul, add)
    elif workload == "deep":
        deep(repetitions)
    elif workload == "deep-tensor":
        deep(repetitions, gradnb.tensor(1.0001), gradnb.tensor(0.0001))
    elif workload == "mlp":
        # The MLP benchmark's own step (``nn.Linear``, ``F.relu``, ``F.cross_entropy``,
        # ``optim.SGD``), on an 8-16-16-4 MLP at batch 4.
        step = TorchLikeMlpStep(gradnb, mlp_problem((8, 16, 16, 4), 4))
        for _ in range(repetitions):
            step.run()
    else:
        raise SystemExit(f"unknown workload {workload!r}: {', '.join(UNITS)}")


def instructions(workload: str, repetitions: int) -> int:
    """Instructions a child process executes running ``workload`` ``repetitions`` times."""
    # One BLAS thread: an idle OpenBLAS worker spins under valgrind, adding instructions that
    # have nothing to do with the engine (these workloads make no BLAS call).
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, workload, str(repetitions)],
        capture_output=True, text=True, env=env, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def main() -> None:
    if len(sys.argv) == 3:
        run(sys.argv[1], int(sys.argv[2]))
        return
    for workload, (count, unit) in UNITS.items():
        per_unit = (instructions(workload, HIGH) - instructions(workload, LOW)) / (
            (HIGH - LOW) * count)
        print(f"{workload}: {per_unit:,.0f} instructions per {unit}")


if __name__ == "__main__":
    main()
