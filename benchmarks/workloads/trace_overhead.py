"""Workload 5a: the cost of gradnb's trace observation (``gradnb.autograd.graph_trace()``, what
``%%trace`` runs a cell under), on the MLP step and on the tiny-op chain."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.checks import compare
from benchmarks.data import mlp_problem, tiny_input
from benchmarks.report import Table, failure_cell, number, ratio_with_spread
from benchmarks.session import HarnessError, Session
from benchmarks.systems import REFERENCE
from benchmarks.systems.base import Step, System, Unsupported
from benchmarks.timing import best_seconds
from benchmarks.workloads import mlp, tiny_ops

TITLE = "5a. Toolkit: trace observation on vs off"
SYSTEM = "gradnb"


def _trace_context(system: System) -> Any:
    if not hasattr(system, "trace_context"):
        raise Unsupported("this system has no trace()")
    return system.trace_context()


def _mlp_step(system: System, layers: tuple[int, ...], batch: int) -> Step:
    return system.mlp(mlp_problem(layers, batch))


def _tiny_chain(system: System, n_ops: int) -> Step:
    return system.tiny_chain(tiny_input(), n_ops)


@dataclass(frozen=True)
class Measurement:
    """One row: a workload step (built by ``make(system, **kwargs)``) timed per ``per`` units,
    checked against the NumPy limit's ``check`` at ``tolerance``."""

    label: str
    make: Callable[..., Step]
    kwargs: dict[str, Any]
    per: int
    scale: float
    check: Callable[..., dict]
    tolerance: float


def traced_check(system: System, make: Callable[..., Step], **kwargs: Any) -> dict[str, Any]:
    """Worker: the numbers of one step run inside ``trace()``."""
    step = make(system, **kwargs)
    with _trace_context(system):
        step.run()
    return step.result()


def time_pair(system: System, make: Callable[..., Step], per: int, iterations: int,
              budget_s: float, **kwargs: Any) -> tuple[float, float]:
    """Worker: fastest seconds per unit without and with a ``trace()`` around each step."""
    _trace_context(system)  # raises Unsupported before any timing
    plain = make(system, **kwargs)
    traced = make(system, **kwargs)

    def traced_run() -> None:
        with _trace_context(system):
            traced.run()

    off = best_seconds(plain.run, iterations=iterations, budget_s=budget_s)
    on = best_seconds(traced_run, iterations=iterations, budget_s=budget_s)
    return off / per, on / per


def _measurements(session: Session) -> list[Measurement]:
    settings = session.settings
    batch = settings.mlp_batches[0]
    n_ops = settings.tiny_ops
    return [
        Measurement(f"MLP step, batch {batch} (ms/step)", _mlp_step,
                    {"layers": settings.layers, "batch": batch}, 1, 1e3, mlp.check_step,
                    mlp.TOLERANCE),
        Measurement(f"tiny ops, {n_ops} ops (µs/op)", _tiny_chain, {"n_ops": n_ops}, n_ops,
                    1e6, tiny_ops.check_chain, tiny_ops.TOLERANCE),
    ]


def _row(session: Session, m: Measurement) -> list[str]:
    checked = session.call(SYSTEM, traced_check, make=m.make, **m.kwargs)
    if not checked.ok:
        if checked.error:
            session.note(f"gradnb: trace, {m.label}", checked)
        return [m.label, failure_cell(checked), "", "", ""]
    reference = session.call(REFERENCE, m.check, **m.kwargs)
    if not reference.ok:
        raise HarnessError(f"NumPy limit failed ({m.label}): {reference.error}")
    verdict = compare(checked.value, reference.value, m.tolerance)
    if not verdict.ok:
        session.flag_wrong(TITLE, SYSTEM, verdict.describe())
    settings = session.settings
    pairs = []
    for _ in range(settings.rounds):
        outcome = session.call(SYSTEM, time_pair, make=m.make, per=m.per,
                               iterations=settings.iterations, budget_s=settings.budget_s,
                               **m.kwargs)
        if not outcome.ok:
            session.note(f"gradnb: trace timing, {m.label}", outcome)
            return [m.label, failure_cell(outcome), "", "", verdict.describe()]
        pairs.append(outcome.value)
    return [
        m.label,
        number(statistics.median(off for off, _ in pairs) * m.scale),
        number(statistics.median(on for _, on in pairs) * m.scale),
        ratio_with_spread([on / off for off, on in pairs]),
        verdict.describe(),
    ]


def run(session: Session) -> Table:
    """Rounds of (off, on) pairs in gradnb's worker, per measurement; the overhead table."""
    description = (
        "gradnb with and without `gradnb.autograd.graph_trace()` (what `%%trace` runs a cell "
        "under: observation on) around each MLP step and each tiny-op chain (forward and "
        "backward), off and on timed in the same round; the traced numbers are checked "
        "against the NumPy limit."
    )
    header = ["measurement", "trace off", "trace on", "on / off", "check"]
    table = Table(TITLE, description, header)
    for m in _measurements(session):
        if SYSTEM not in session.systems:
            table.rows.append([m.label, "n/a (gradnb not selected)", "", "", ""])
        else:
            table.rows.append(_row(session, m))
    return table
