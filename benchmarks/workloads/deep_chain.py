"""Workload 3: a 100,000-op-deep chain; does the engine finish, how fast, with how much memory."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any

from benchmarks.checks import CheckResult, compare
from benchmarks.data import DEEP_ADD, DEEP_MUL, deep_input
from benchmarks.memory import PeakRss
from benchmarks.report import Table, failure_cell, megabytes, number, ratio_with_spread
from benchmarks.session import HarnessError, Session
from benchmarks.systems import REFERENCE, SYSTEMS
from benchmarks.systems.base import System

TOLERANCE = 1e-9  # float64, identical op sequence
TITLE = "3. Deep chain"


def measure(system: System, n_iterations: int) -> dict[str, Any]:
    """Worker (fresh process): build, forward and backward the chain once; time and peak RSS."""
    step = system.deep_chain(deep_input(), n_iterations)
    gc.collect()
    with PeakRss() as rss:
        started = time.perf_counter()
        step.run()
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "peak_rss": rss.growth, "result": step.result()}


def run(session: Session) -> Table:
    """Fresh process per system per round, interleaved; the table of outcomes."""
    settings = session.settings
    n = settings.deep_iterations
    runs: dict[str, list[dict[str, Any]]] = {system: [] for system in session.systems}
    failures: dict[str, Any] = {}
    verdicts: dict[str, CheckResult] = {}
    for round_index in range(settings.deep_rounds):
        session.progress(f"  round {round_index + 1}/{settings.deep_rounds}")
        reference = None
        for system in session.systems:
            if system in failures:
                continue
            outcome = session.fresh(system, measure, n_iterations=n)
            if not outcome.ok:
                if system == REFERENCE:
                    raise HarnessError(f"NumPy limit failed the deep chain: {outcome.error}")
                failures[system] = outcome
                continue
            if system == REFERENCE:
                reference = outcome.value
            else:
                verdict = compare(outcome.value["result"], reference["result"], TOLERANCE)
                if not verdict.ok and system not in verdicts:
                    session.flag_wrong(TITLE, system, verdict.describe())
                if system not in verdicts or not verdict.ok:
                    verdicts[system] = verdict
            outcome.value["ratio"] = outcome.value["seconds"] / reference["seconds"]
            runs[system].append(outcome.value)

    description = (
        f"{n:,} iterations of `x = x * {DEEP_MUL} + {DEEP_ADD}` on a one-element float64 "
        "tensor, then backward, each run in a fresh process. Peak memory is the growth of "
        "the process's peak resident set during the run. A run that raises (RecursionError, "
        "...) or crashes *fails*."
    )
    header = ["system", "completes", "seconds", "× NumPy", "peak RSS growth", "check vs NumPy"]
    table = Table(TITLE, description, header)
    for system in session.systems:
        name = SYSTEMS[system][0]
        if system in failures:
            outcome = failures[system]
            cell = failure_cell(outcome)
            if outcome.error and not outcome.error.startswith("import failed"):
                cell = f"fails: {outcome.error}"
            table.rows.append([name, cell, "", "", "", ""])
            continue
        done = runs[system]
        check = "reference" if system == REFERENCE else verdicts[system].describe()
        table.rows.append(
            [
                name,
                "yes",
                number(statistics.median(r["seconds"] for r in done)),
                ratio_with_spread([r["ratio"] for r in done]),
                megabytes(max(r["peak_rss"] for r in done)),
                check,
            ]
        )
    return table
