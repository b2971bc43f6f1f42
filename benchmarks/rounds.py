"""Interleaved timing: every round times each system in turn (A B C, A B C, ...).

A ratio to the NumPy limit is taken within one round, so drift of the machine between
rounds (other load, clock changes) cancels; the report gives the median over rounds.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.checks import CheckResult, compare
from benchmarks.report import Table, failure_cell, number, ratio_with_spread
from benchmarks.session import HarnessError, Session
from benchmarks.systems import REFERENCE, SYSTEMS
from benchmarks.timing import BlockTimes
from benchmarks.worker import Outcome


@dataclass(frozen=True)
class Variant:
    """One timed configuration of a workload, e.g. the MLP step at batch 128.

    ``check`` and ``time`` run in the worker as ``f(system, **kwargs)``; ``time`` also
    gets ``iterations`` and ``budget_s`` and returns the round's ``BlockTimes`` (fastest and
    median seconds per unit).
    """

    label: str
    unit: str
    seconds_to_unit: float
    check: Callable[..., dict]
    time: Callable[..., float]
    kwargs: dict[str, Any]
    tolerance: float


@dataclass(frozen=True)
class TimedWorkload:
    """A report section of the variants' times and ratios: a pair of columns per variant, or,
    with ``variant_column`` (its heading), a group of rows per variant (same unit for all)."""

    title: str
    description: str
    variants: tuple[Variant, ...]
    variant_column: str | None = None


@dataclass
class _Cell:
    """What one system did in one variant: its check's verdict, then per round its fastest
    and its median call, each with its ratio to the NumPy limit's same figure that round."""

    verdict: CheckResult | None = None
    seconds: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    medians: list[float] = field(default_factory=list)
    median_ratios: list[float] = field(default_factory=list)
    failure: Outcome | None = None


def run_interleaved(session: Session, workloads: list[TimedWorkload]) -> list[Table]:
    """Check every system against the limit, time them round by round, build the tables."""
    cells = {
        (w.title, v.label): _check_variant(session, w.title, v)
        for w in workloads
        for v in w.variants
    }
    settings = session.settings
    for round_index in range(settings.rounds):
        session.progress(f"  round {round_index + 1}/{settings.rounds}")
        for workload in workloads:
            for variant in workload.variants:
                _time_round(session, variant, cells[workload.title, variant.label])
    return [_table(session, w, cells) for w in workloads]


def _check_variant(session: Session, title: str, variant: Variant) -> dict[str, _Cell]:
    reference = session.call(REFERENCE, variant.check, **variant.kwargs)
    if not reference.ok:
        raise HarnessError(f"NumPy limit failed in {title}, {variant.label}: {reference.error}")
    cells = {REFERENCE: _Cell()}
    for system in session.systems[1:]:
        outcome = session.call(system, variant.check, **variant.kwargs)
        cell = _Cell()
        if outcome.ok:
            cell.verdict = compare(outcome.value, reference.value, variant.tolerance)
            if not cell.verdict.ok:
                session.flag_wrong(f"{title}, {variant.label}", system, cell.verdict.describe())
        else:
            cell.failure = outcome
            if outcome.error:
                session.note(f"{system}: {title}, {variant.label}", outcome)
        cells[system] = cell
    return cells


def _time_round(session: Session, variant: Variant, cells: dict[str, _Cell]) -> None:
    settings = session.settings
    kwargs = {**variant.kwargs, "iterations": settings.iterations, "budget_s": settings.budget_s}
    reference: BlockTimes | None = None
    for system, cell in cells.items():
        if cell.failure is not None:
            continue
        time.sleep(settings.settle_s)  # the last system's spinning BLAS threads park meanwhile
        outcome = session.call(system, variant.time, **kwargs)
        if not outcome.ok:
            if system == REFERENCE:
                raise HarnessError(f"NumPy limit failed while timing: {outcome.error}")
            cell.failure = outcome
            session.note(f"{system}: timing {variant.label}", outcome)
            continue
        times: BlockTimes = outcome.value
        if system == REFERENCE:
            reference = times
        cell.seconds.append(times.best)
        cell.ratios.append(times.best / reference.best)
        cell.medians.append(times.median)
        cell.median_ratios.append(times.median / reference.median)


def _figures(cell: _Cell, variant: Variant) -> list[str]:
    """Fastest-call time and ratio, then median-call time and ratio (medians over rounds)."""
    if cell.failure is not None:
        return [failure_cell(cell.failure), "", "", ""]
    scale = variant.seconds_to_unit
    return [number(statistics.median(cell.seconds) * scale), ratio_with_spread(cell.ratios),
            number(statistics.median(cell.medians) * scale),
            ratio_with_spread(cell.median_ratios)]


def _table(session: Session, workload: TimedWorkload, cells: dict) -> Table:
    if workload.variant_column is not None:
        return _table_by_rows(session, workload, cells)
    header = ["system"]
    for variant in workload.variants:
        header += [f"{variant.label} ({variant.unit})", "× NumPy",
                   f"{variant.label}, median call ({variant.unit})", "× NumPy (median)"]
    header.append("check vs NumPy")
    table = Table(workload.title, workload.description, header)
    for system in session.systems:
        row = [SYSTEMS[system][0]]
        verdicts = []
        for variant in workload.variants:
            cell: _Cell = cells[workload.title, variant.label][system]
            row += _figures(cell, variant)
            if cell.verdict is not None:
                verdicts.append(cell.verdict)
        row.append(_verdict_text(system, verdicts))
        table.rows.append(row)
    return table


def _table_by_rows(session: Session, workload: TimedWorkload, cells: dict) -> Table:
    unit = workload.variants[0].unit
    header = ["system", workload.variant_column, f"fastest call ({unit})", "× NumPy",
              f"median call ({unit})", "× NumPy (median)", "check vs NumPy"]
    table = Table(workload.title, workload.description, header)
    for variant in workload.variants:
        for system in session.systems:
            cell: _Cell = cells[workload.title, variant.label][system]
            verdicts = [] if cell.verdict is None else [cell.verdict]
            table.rows.append([SYSTEMS[system][0], variant.label, *_figures(cell, variant),
                               _verdict_text(system, verdicts)])
    return table


def _verdict_text(system: str, verdicts: list[CheckResult]) -> str:
    if system == REFERENCE:
        return "reference"
    if not verdicts:
        return "—"
    wrong = [v for v in verdicts if not v.ok]
    return (wrong[0] if wrong else max(verdicts, key=lambda v: v.worst_error)).describe()
