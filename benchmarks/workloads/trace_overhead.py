"""Workload 5a: the cost of gradnb's trace observation on the MLP step (``gradnb.autograd.graph_trace()``)."""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.checks import compare
from benchmarks.data import mlp_problem
from benchmarks.report import Table, failure_cell, number, ratio_with_spread
from benchmarks.session import HarnessError, Session
from benchmarks.systems import REFERENCE
from benchmarks.systems.base import System, Unsupported
from benchmarks.timing import best_seconds
from benchmarks.workloads.mlp import TOLERANCE, check_step

TITLE = "5a. Toolkit: trace observation on vs off"
SYSTEM = "gradnb"


def _trace_context(system: System) -> Any:
    if not hasattr(system, "trace_context"):
        raise Unsupported("this system has no trace()")
    return system.trace_context()


def traced_check(system: System, layers: tuple[int, ...], batch: int) -> dict[str, Any]:
    """Worker: loss and gradients of one step run inside ``trace()``."""
    step = system.mlp(mlp_problem(layers, batch))
    with _trace_context(system):
        step.run()
    return step.result()


def time_pair(
    system: System, layers: tuple[int, ...], batch: int, iterations: int, budget_s: float
) -> tuple[float, float]:
    """Worker: fastest seconds per step without and with a ``trace()`` around each step."""
    _trace_context(system)  # raises Unsupported before any timing
    plain = system.mlp(mlp_problem(layers, batch))
    traced = system.mlp(mlp_problem(layers, batch))

    def traced_run() -> None:
        with _trace_context(system):
            traced.run()

    off = best_seconds(plain.run, iterations=iterations, budget_s=budget_s)
    on = best_seconds(traced_run, iterations=iterations, budget_s=budget_s)
    return off, on


def run(session: Session) -> Table:
    """Rounds of (off, on) pairs in gradnb's worker; the overhead table."""
    settings = session.settings
    batch = settings.mlp_batches[0]
    kwargs = {"layers": settings.layers, "batch": batch}
    description = (
        f"gradnb's MLP step (batch {batch}) with and without `gradnb.autograd.graph_trace()` around each "
        "step, timed in the same round; the traced step's numbers are checked against the "
        "NumPy limit."
    )
    header = ["measurement", "trace off (ms/step)", "trace on (ms/step)", "on / off", "check"]
    table = Table(TITLE, description, header)
    if SYSTEM not in session.systems:
        table.rows.append(["MLP step", "n/a (gradnb not selected)", "", "", ""])
        return table
    checked = session.call(SYSTEM, traced_check, **kwargs)
    if not checked.ok:
        if checked.error:
            session.note("gradnb: trace", checked)
        table.rows.append(["MLP step", failure_cell(checked), "", "", ""])
        return table
    reference = session.call(REFERENCE, check_step, **kwargs)
    if not reference.ok:
        raise HarnessError(f"NumPy limit failed the MLP step: {reference.error}")
    verdict = compare(checked.value, reference.value, TOLERANCE)
    if not verdict.ok:
        session.flag_wrong(TITLE, SYSTEM, verdict.describe())
    pairs = []
    for _ in range(settings.rounds):
        outcome = session.call(
            SYSTEM, time_pair, iterations=settings.iterations, budget_s=settings.budget_s, **kwargs
        )
        if not outcome.ok:
            session.note("gradnb: trace timing", outcome)
            table.rows.append(["MLP step", failure_cell(outcome), "", "", verdict.describe()])
            return table
        pairs.append(outcome.value)
    table.rows.append(
        [
            "MLP step",
            number(statistics.median(off for off, _ in pairs) * 1e3),
            number(statistics.median(on for _, on in pairs) * 1e3),
            ratio_with_spread([on / off for off, on in pairs]),
            verdict.describe(),
        ]
    )
    return table
