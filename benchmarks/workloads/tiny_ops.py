"""Workload 2: a chain of tiny elementwise ops, where per-op engine overhead dominates."""

from __future__ import annotations

import numpy as np

from benchmarks.data import TINY_ADD, TINY_MUL, TINY_SIZE, tiny_input
from benchmarks.rounds import TimedWorkload, Variant
from benchmarks.settings import Settings
from benchmarks.systems.base import System
from benchmarks.timing import best_seconds

TOLERANCE = 1e-9  # float64, identical op sequence


def check_chain(system: System, n_ops: int) -> dict[str, np.ndarray]:
    """Worker: the chain's summed output and the leaf's gradient."""
    step = system.tiny_chain(tiny_input(), n_ops)
    step.run()
    return step.result()


def time_chain(system: System, n_ops: int, iterations: int, budget_s: float) -> float:
    """Worker: fastest seconds per op this round (forward and backward together)."""
    step = system.tiny_chain(tiny_input(), n_ops)
    return best_seconds(step.run, iterations=iterations, budget_s=budget_s) / n_ops


def workload(settings: Settings) -> TimedWorkload:
    """The tiny-ops section."""
    variant = Variant(
        label=f"{settings.tiny_ops} ops",
        unit="µs/op",
        seconds_to_unit=1e6,
        check=check_chain,
        time=time_chain,
        kwargs={"n_ops": settings.tiny_ops},
        tolerance=TOLERANCE,
    )
    description = (
        f"A chain of {settings.tiny_ops} elementwise ops (x*{TINY_MUL}, x+{TINY_ADD}, tanh, "
        f"repeating) on float64[{TINY_SIZE}], then sum and backward; time per op, forward "
        "and backward together. Output and leaf gradient checked against the NumPy limit."
    )
    return TimedWorkload("2. Tiny ops", description, (variant,))
