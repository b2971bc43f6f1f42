"""Workload 1b: the MLP step's matrix products alone, each engine in its own weight layout.

What no engine of a given layout can go below on a given BLAS. The NumPy limit keeps each weight
as in x out and multiplies ``h @ W + b``, ``h.T @ g`` and ``g @ W.T``. An engine with PyTorch's
``nn.Linear`` keeps it as out x in and multiplies ``linear(h, w, b)``, ``g.T @ h`` (the
weight's gradient in the weight's layout, as PyTorch's gradient layout contract asks) and
``g @ w``. gradnb runs these on NumPy's BLAS; PyTorch on the BLAS built into it (the systems
table names it). An MLP row above less this row is what the engine itself costs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.data import mlp_problem, products_operands
from benchmarks.rounds import TimedWorkload
from benchmarks.settings import Settings
from benchmarks.systems.base import System, Unsupported
from benchmarks.timing import BlockTimes, block_times
from benchmarks.workloads.mlp import batch_variants

TOLERANCE = 1e-4  # float32 products with different BLAS blockings, as the MLP step's


def _products(system: System, layers: tuple[int, ...], batch: int) -> Any:
    factory = getattr(system, "mlp_products", None)
    if factory is None:
        raise Unsupported("multiplies with NumPy in the limit's layout: the limit's products")
    problem = mlp_problem(layers, batch)
    return factory(problem, *products_operands(problem))


def check_products(system: System, layers: tuple[int, ...],
                   batch: int) -> dict[str, np.ndarray]:
    """Worker: every product once, in the limit's layout."""
    step = _products(system, layers, batch)
    step.run()
    return step.result()


def time_products(system: System, layers: tuple[int, ...], batch: int, iterations: int,
                  budget_s: float) -> BlockTimes:
    """Worker: fastest and median seconds for one step's products this round."""
    return block_times(_products(system, layers, batch).run, iterations=iterations,
                       budget_s=budget_s)


def workload(settings: Settings) -> TimedWorkload:
    """The products section, one variant per batch size (the MLP section's)."""
    shape = "-".join(map(str, settings.layers))
    variants = batch_variants(settings, check_products, time_products, TOLERANCE)
    n = len(settings.layers) - 1
    description = (
        f"The matrix products of one {shape} MLP step and nothing else: per layer the forward "
        f"product with its bias and the weight's gradient, and the input's gradient for the "
        f"last {n - 1} layers ({3 * n - 1} products), on fixed inputs and output gradients. "
        "Each engine multiplies in its own weight layout: the NumPy limit's in x out "
        "(`h @ W + b`, `h.T @ g`, `g @ W.T`), or PyTorch's out x in (`F.linear(h, w, b)`, "
        "`g.T @ h` in the weight's layout, `g @ w`), on its own BLAS. What no engine of that "
        "layout goes below on that BLAS: section 1's rows less these are the engines' own "
        "costs. Every product checked against the limit's."
    )
    return TimedWorkload("1b. MLP step: matrix products alone", description, variants)
