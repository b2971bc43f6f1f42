"""Workload 3: a 100,000-op-deep chain; does the engine finish, how fast, with how much memory."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any

from benchmarks.checks import CheckResult, compare
from benchmarks.data import CONSTANTS, DEEP_ADD, DEEP_MUL, deep_input
from benchmarks.memory import PeakRss
from benchmarks.report import Table, failure_cell, megabytes, number, ratio_with_spread
from benchmarks.session import HarnessError, Session
from benchmarks.systems import REFERENCE, SYSTEMS
from benchmarks.systems.base import System

TOLERANCE = 1e-9  # float64, identical op sequence
TITLE = "3. Deep chain"


def measure(system: System, n_iterations: int, tensor_constants: bool = False) -> dict[str, Any]:
    """Worker (fresh process): build, forward and backward the chain once; time and peak RSS.

    Forward and backward are timed apart where the system's step can (``run_phases``).
    """
    step = system.deep_chain(deep_input(), n_iterations, tensor_constants)
    gc.collect()
    phases = None
    with PeakRss() as rss:
        started = time.perf_counter()
        if hasattr(step, "run_phases"):
            phases = step.run_phases()
        else:
            step.run()
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "phases": phases, "peak_rss": rss.growth,
            "result": step.result()}


def _seconds(runs: list[dict[str, Any]], phase: int) -> str:
    if any(r["phases"] is None for r in runs):
        return "—"
    return number(statistics.median(r["phases"][phase] for r in runs))


def run(session: Session) -> Table:
    """Fresh process per system per round and per kind of constant, interleaved."""
    settings = session.settings
    n = settings.deep_iterations
    kinds = tuple(zip(CONSTANTS, (False, True)))
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {
        (kind, system): [] for kind, _ in kinds for system in session.systems}
    failures: dict[tuple[str, str], Any] = {}
    verdicts: dict[tuple[str, str], CheckResult] = {}
    for round_index in range(settings.deep_rounds):
        session.progress(f"  round {round_index + 1}/{settings.deep_rounds}")
        for kind, as_tensors in kinds:
            reference = None
            for system in session.systems:
                key = (kind, system)
                if key in failures:
                    continue
                outcome = session.fresh(system, measure, n_iterations=n,
                                        tensor_constants=as_tensors)
                if not outcome.ok:
                    if system == REFERENCE:
                        raise HarnessError(f"NumPy limit failed the deep chain: {outcome.error}")
                    failures[key] = outcome
                    continue
                if system == REFERENCE:
                    reference = outcome.value
                else:
                    verdict = compare(outcome.value["result"], reference["result"], TOLERANCE)
                    if not verdict.ok and key not in verdicts:
                        session.flag_wrong(f"{TITLE} ({kind})", system, verdict.describe())
                    if key not in verdicts or not verdict.ok:
                        verdicts[key] = verdict
                outcome.value["ratio"] = outcome.value["seconds"] / reference["seconds"]
                runs[key].append(outcome.value)

    description = (
        f"{n:,} iterations of `x = x * {DEEP_MUL} + {DEEP_ADD}` on a one-element float64 "
        "tensor, then backward, each run in a fresh process; the constants are Python floats, "
        "or 0-d tensors made once before the chain (`torch.tensor(1.0001)`: float32, as in "
        "the tiny ops). Seconds are the median over rounds (one run per round), in total and "
        "for the forward (with the final `sum()`) and the backward apart (— where the system "
        "cannot split them). Peak memory is the growth of the process's peak resident set "
        "during the run. A run that raises (RecursionError, ...) or crashes *fails*."
    )
    header = ["system", "constants", "completes", "seconds", "× NumPy", "forward (s)",
              "backward (s)", "peak RSS growth", "check vs NumPy"]
    table = Table(TITLE, description, header)
    for kind, _ in kinds:
        for system in session.systems:
            key = (kind, system)
            name = SYSTEMS[system][0]
            if key in failures:
                outcome = failures[key]
                cell = failure_cell(outcome)
                if outcome.error and not outcome.error.startswith("import failed"):
                    cell = f"fails: {outcome.error}"
                table.rows.append([name, kind, cell, *[""] * (len(header) - 3)])
                continue
            done = runs[key]
            check = "reference" if system == REFERENCE else verdicts[key].describe()
            table.rows.append(
                [
                    name,
                    kind,
                    "yes",
                    number(statistics.median(r["seconds"] for r in done)),
                    ratio_with_spread([r["ratio"] for r in done]),
                    _seconds(done, 0),
                    _seconds(done, 1),
                    megabytes(max(r["peak_rss"] for r in done)),
                    check,
                ]
            )
    return table
