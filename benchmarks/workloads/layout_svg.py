"""Workload 5b: layout and SVG of a 2,000-node graph, via ``benchmarks/bench_layout.py``."""

from __future__ import annotations

import importlib
from typing import Any

from benchmarks.report import Table, failure_cell, number
from benchmarks.session import Session
from benchmarks.systems.base import Unsupported

TITLE = "5b. Toolkit: graph layout and SVG"


def layout_run(_system: None, quick: bool) -> dict[str, Any]:
    """Worker (fresh process, no system): ``benchmarks.bench_layout.run(quick)``."""
    try:
        bench_layout = importlib.import_module("benchmarks.bench_layout")
    except ModuleNotFoundError as error:
        if error.name != "benchmarks.bench_layout":
            raise
        raise Unsupported("benchmarks/bench_layout.py is not there") from error
    return bench_layout.run(quick)


def _flatten(results: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows = []
    for key, value in results.items():
        if isinstance(value, dict):
            rows += _flatten(value, f"{prefix}{key}.")
        else:
            rows.append((f"{prefix}{key}", value))
    return rows


def run(session: Session) -> Table:
    """The layout benchmark's own numbers, one row per metric."""
    description = (
        "What `benchmarks/bench_layout.py` reports (its `run()`), in a fresh process: "
        "times in ms are best of N."
    )
    table = Table(TITLE, description, ["metric", "value"])
    outcome = session.fresh(None, layout_run, quick=session.settings.quick)
    if not outcome.ok:
        if outcome.error:
            session.note("layout benchmark", outcome)
        table.rows.append(["layout + SVG", failure_cell(outcome)])
        return table
    for key, value in _flatten(outcome.value):
        shown = number(value) if isinstance(value, float) else str(value)
        table.rows.append([key, shown])
    return table
