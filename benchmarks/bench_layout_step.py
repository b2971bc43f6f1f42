"""How much of an MLP step's cost is ``nn.Linear``'s weight layout, and how much is the engine.

    python benchmarks/bench_layout_step.py                 # batch 128 and 16
    python benchmarks/bench_layout_step.py --batches 128 --rounds 25

Section 1 of ``python -m benchmarks`` compares each engine's step with a hand-written NumPy step
whose weights are in x out (``h @ W``), the layout NumPy's BLAS multiplies fastest. PyTorch (and
gradnb, which keeps its semantics) stores a linear layer's weight out x in, so its products are
``h @ w.T``, ``g.T @ h`` (the weight's gradient in the weight's layout) and ``g @ w``; OpenBLAS
runs the first two more slowly. This script times, interleaved round by round, the hand-written
step in both layouts and gradnb's step (and PyTorch's, where installed), after checking that
all give the same loss and gradients, and splits gradnb's ratio to the limit into the layout's
part (the hand-written out x in step over the limit) and the engine's own (gradnb's step over the
hand-written out x in step). A script, not a test: timings are noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: use the gradnb of this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.checks import compare
from benchmarks.data import mlp_problem
from benchmarks.settings import Settings
from benchmarks.systems.numpy_limit import NumpyMlpStep
from benchmarks.systems.torchlike import TorchLikeMlpStep
from benchmarks.timing import interleaved_times
from benchmarks.workloads.mlp import TOLERANCE


def steps(batch: int, layers: tuple[int, ...] = Settings.layers) -> dict:
    """Each way's training step on the same problem, checked against the limit's first step."""
    import gradnb

    ways = {"NumPy, in x out (limit)": NumpyMlpStep(mlp_problem(layers, batch)),
            "NumPy, out x in": NumpyMlpStep(mlp_problem(layers, batch), out_by_in=True),
            "gradnb": TorchLikeMlpStep(gradnb, mlp_problem(layers, batch))}
    if importlib.util.find_spec("torch") is not None:
        import torch

        ways["PyTorch"] = TorchLikeMlpStep(torch, mlp_problem(layers, batch))
    results = {}
    for name, step in ways.items():
        step.run()
        results[name] = step.result()
    reference = next(iter(results.values()))
    for name, result in results.items():
        check = compare(result, reference, TOLERANCE)  # (section 1's check)
        if not check.ok:
            raise AssertionError(f"{name} against the limit: {check.describe()}")
    return {name: step.run for name, step in ways.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=list(Settings.mlp_batches))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--pause", type=float, default=0.3,
                        help="seconds idle before each way's turn (BLAS threads park)")
    args = parser.parse_args(argv)
    for batch in args.batches:
        ways = steps(batch)
        times = interleaved_times(ways, args.rounds, args.calls, args.pause)
        limit_best, limit_median = next(iter(times.values()))
        print(f"batch {batch}: ms/step, fastest round (median round), and x the limit")
        for name, (best, median) in times.items():
            print(f"  {name:24s} {best * 1e3:7.3f} ({median * 1e3:7.3f})   "
                  f"{best / limit_best:5.3f}x ({median / limit_median:5.3f}x)")
        names = list(times)
        layout = statistics.fmean(a / b for a, b in zip(times[names[1]], times[names[0]]))
        engine = statistics.fmean(a / b for a, b in zip(times["gradnb"], times[names[1]]))
        print(f"  gradnb over the limit = layout {layout:.3f}x * engine {engine:.3f}x\n")


if __name__ == "__main__":
    main()
