"""Workload 6: a 1,000-step training loop of a small MLP, with Adam and with SGD + momentum.

What a notebook user waits for in a training cell: many small steps, where the optimizer's
update and the per-op overhead weigh as much as the matrix products. Every system runs it
on one thread (``benchmarks.threads``): its arrays are too small for a second thread to help,
and PyTorch's spinning OpenMP team made a round take many minutes on a busy machine.
"""

from __future__ import annotations

import numpy as np

from benchmarks.data import OPTIMIZERS, training_problem
from benchmarks.rounds import TimedWorkload, Variant
from benchmarks.settings import Settings
from benchmarks.systems.base import System, Unsupported
from benchmarks.threads import single_threaded
from benchmarks.timing import BlockTimes, block_times

# float32 over several steps; Adam divides by sqrt(v), which magnifies differences in the last
# bits of small gradients: checked relative to each array's largest entry.
TOLERANCE = 1e-3


def _loop(system: System, layers: tuple[int, ...], batch: int, optimizer: str, steps: int):
    factory = getattr(system, "training_loop", None)
    if factory is None:
        raise Unsupported("no torch.optim-style optimizer")
    return factory(training_problem(layers, batch), optimizer, steps)


def check_loop(system: System, layers: tuple[int, ...], batch: int, optimizer: str,
               steps: int, check_steps: int, threads: int) -> dict[str, np.ndarray]:
    """Worker: the loss and every parameter after ``check_steps`` steps from the shared start
    (on one thread; the worker's pools go back to ``threads`` afterwards)."""
    loop = _loop(system, layers, batch, optimizer, check_steps)
    with single_threaded(system, threads):
        loop.run()
    return loop.result()


def time_loop(system: System, layers: tuple[int, ...], batch: int, optimizer: str, steps: int,
              check_steps: int, threads: int, iterations: int, budget_s: float) -> BlockTimes:
    """Worker: seconds per step of the fastest and the median ``steps``-step loop this round
    (on one thread; the worker's pools go back to ``threads`` afterwards)."""
    loop = _loop(system, layers, batch, optimizer, steps)
    with single_threaded(system, threads):
        times = block_times(loop.run, iterations=min(iterations, 3), budget_s=budget_s)
    return times.per(steps)


def workload(settings: Settings) -> TimedWorkload:
    """The training-loop section, one variant per optimizer."""
    shape = "-".join(map(str, settings.training_layers))
    variants = tuple(
        Variant(
            label=name,
            unit="ms/step",
            seconds_to_unit=1e3,
            check=check_loop,
            time=time_loop,
            kwargs={"layers": settings.training_layers, "batch": settings.training_batch,
                    "optimizer": name, "steps": settings.training_steps,
                    "check_steps": settings.training_check_steps, "threads": settings.threads},
            tolerance=TOLERANCE,
        )
        for name in OPTIMIZERS
    )
    hyper = "; ".join(f"{name}({', '.join(f'{k}={v}' for k, v in kw.items())})"
                      for name, kw in OPTIMIZERS.items())
    description = (
        f"A {settings.training_steps:,}-step training loop of a {shape} MLP (ReLU, softmax "
        f"cross-entropy, float32, batch {settings.training_batch}, 8 mini-batches cycled), on "
        "one thread in every system (arrays this small gain nothing from a second, and "
        "PyTorch's spin-waiting OpenMP team slows many times over when another process holds "
        "a core): "
        f"zero_grad, forward, backward, optimizer step; {hyper}. Time per step of the fastest "
        f"and of the median loop in the round. The loss and every parameter after {settings.training_check_steps} "
        "steps are checked against the NumPy limit (hand-written Adam and SGD with momentum, "
        "PyTorch's update rules). Systems without an optimizer show n/a."
    )
    return TimedWorkload("6. Training loop", description, variants)
