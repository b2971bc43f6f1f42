"""Workload 2: a chain of tiny elementwise ops, where per-op engine overhead dominates."""

from __future__ import annotations

import numpy as np

from benchmarks.data import CONSTANTS, TINY_ADD, TINY_MUL, TINY_SIZE, tiny_input
from benchmarks.rounds import TimedWorkload, Variant
from benchmarks.settings import Settings
from benchmarks.systems.base import System
from benchmarks.timing import BlockTimes, block_times

TOLERANCE = 1e-9  # float64, identical op sequence


def check_chain(system: System, n_ops: int,
                tensor_constants: bool = False) -> dict[str, np.ndarray]:
    """Worker: the chain's summed output and the leaf's gradient."""
    step = system.tiny_chain(tiny_input(), n_ops, tensor_constants)
    step.run()
    return step.result()


def time_chain(system: System, n_ops: int, iterations: int, budget_s: float,
               tensor_constants: bool = False) -> BlockTimes:
    """Worker: fastest and median seconds per op this round (forward and backward together)."""
    step = system.tiny_chain(tiny_input(), n_ops, tensor_constants)
    return block_times(step.run, iterations=iterations, budget_s=budget_s).per(n_ops)


def workload(settings: Settings) -> TimedWorkload:
    """The tiny-ops section: a group of rows per kind of constant."""
    variants = tuple(
        Variant(
            label=constants,
            unit="µs/op",
            seconds_to_unit=1e6,
            check=check_chain,
            time=time_chain,
            kwargs={"n_ops": settings.tiny_ops, "tensor_constants": as_tensors},
            tolerance=TOLERANCE,
        )
        for constants, as_tensors in zip(CONSTANTS, (False, True))
    )
    description = (
        f"A chain of {settings.tiny_ops} elementwise ops (x*c, x+d, tanh, repeating; "
        f"c={TINY_MUL}, d={TINY_ADD}) on float64[{TINY_SIZE}], then sum and backward; time per "
        "op, forward and backward together. The constants are Python floats (`x * 0.9`), or "
        "0-d tensors made once before the chain (`c = torch.tensor(0.9)`: float32, the default "
        "dtype, promoted to float64 by the op; the NumPy limit multiplies by the same 0-d "
        "float32 arrays). *Fastest call*: the fastest of a round's calls; *median call*: the "
        "median of a round's calls; each the median over rounds. Output and leaf gradient "
        "checked against the NumPy limit."
    )
    return TimedWorkload("2. Tiny ops", description, variants, variant_column="constants")
