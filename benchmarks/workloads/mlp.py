"""Workload 1: an MLP training step (ReLU, stable softmax cross-entropy, SGD, float32)."""

from __future__ import annotations

import numpy as np

from benchmarks.data import mlp_problem
from benchmarks.rounds import TimedWorkload, Variant
from benchmarks.settings import Settings
from benchmarks.systems.base import System
from benchmarks.timing import BlockTimes, block_times

# float32 with different BLAS blockings and summation orders: ~1e-6 relative is normal
TOLERANCE = 1e-4


def check_step(system: System, layers: tuple[int, ...], batch: int) -> dict[str, np.ndarray]:
    """Worker: loss and gradients of one step from the shared initial weights."""
    step = system.mlp(mlp_problem(layers, batch))
    step.run()
    return step.result()


def time_step(
    system: System, layers: tuple[int, ...], batch: int, iterations: int, budget_s: float
) -> BlockTimes:
    """Worker: fastest and median seconds per training step this round (the weights keep
    training)."""
    step = system.mlp(mlp_problem(layers, batch))
    return block_times(step.run, iterations=iterations, budget_s=budget_s)


def batch_variants(settings: Settings, check, time, tolerance: float) -> tuple[Variant, ...]:
    """One ms-per-step variant per MLP batch size, ``check`` and ``time`` called with the
    layers and the batch (this section's and the products-alone section's)."""
    return tuple(
        Variant(
            label=f"batch {batch}",
            unit="ms/step",
            seconds_to_unit=1e3,
            check=check,
            time=time,
            kwargs={"layers": settings.layers, "batch": batch},
            tolerance=tolerance,
        )
        for batch in settings.mlp_batches
    )


def workload(settings: Settings) -> TimedWorkload:
    """The MLP section, one variant per batch size."""
    shape = "-".join(map(str, settings.layers))
    variants = batch_variants(settings, check_step, time_step, TOLERANCE)
    description = (
        f"One training step of a {shape} MLP (ReLU, stable softmax cross-entropy, SGD, "
        "float32): zero_grad, forward, backward, update. Same initial weights and batch for "
        "every system; loss and every gradient of the first step are checked against the "
        "NumPy limit (relative to each array's largest entry)."
    )
    return TimedWorkload("1. MLP training step", description, variants)
