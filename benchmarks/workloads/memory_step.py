"""Workload 4: memory of one MLP step at a large batch, and what the step leaves behind."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import numpy as np

from benchmarks.checks import compare
from benchmarks.data import mlp_problem
from benchmarks.memory import PeakRss, current_rss, return_free_heap
from benchmarks.report import Table, failure_cell, megabytes
from benchmarks.session import HarnessError, Session
from benchmarks.systems import REFERENCE, SYSTEMS
from benchmarks.systems.base import System
from benchmarks.workloads.mlp import TOLERANCE

TITLE = "4. Memory of one MLP step"


def _allocated(traced: bool, rss_before: int) -> int:
    if traced:
        return tracemalloc.get_traced_memory()[0]
    return_free_heap()
    return current_rss() - rss_before


def _nbytes(arrays: dict[str, np.ndarray]) -> int:
    """Bytes of our own result copies, which are not the step's to account for."""
    return sum(array.nbytes for array in arrays.values())


def measure(system: System, layers: tuple[int, ...], batch: int) -> dict[str, Any]:
    """Worker (fresh process): peak and retained memory of one step, and the GC's findings.

    A batch-1 step runs first so lazy library set-up (thread pools, kernels) is not
    counted. The cyclic GC is off from before the step until ``gc.collect()``, whose
    return value counts the unreachable objects the step's cycles left behind.
    NumPy-based systems are measured with tracemalloc; others with the process RSS.
    """
    warmup = system.mlp(mlp_problem(layers, 1))
    warmup.run()
    del warmup
    step = system.mlp(mlp_problem(layers, batch))
    return_free_heap()
    gc.collect()
    gc.disable()
    try:
        traced = system.numpy_based
        if traced:
            tracemalloc.start()
        rss_before = current_rss()
        with PeakRss() as rss_peak:
            step.run()
        peak = tracemalloc.get_traced_memory()[1] if traced else rss_peak.growth
        result = step.result()
        step.release_gradients()
        held = _allocated(traced, rss_before) - _nbytes(result)
        found = gc.collect()
        held_after_gc = _allocated(traced, rss_before) - _nbytes(result)
    finally:
        gc.enable()
        tracemalloc.stop()
    return {
        "method": "tracemalloc" if traced else "RSS after malloc_trim",
        "peak": peak,
        "peak_rss": rss_peak.growth,
        "held": held,
        "gc_found": found,
        "held_after_gc": held_after_gc,
        "result": result,
    }


def run(session: Session) -> Table:
    """One fresh process per system; the memory table."""
    settings = session.settings
    kwargs = {"layers": settings.layers, "batch": settings.memory_batch}
    reference = session.fresh(REFERENCE, measure, **kwargs)
    if not reference.ok:
        raise HarnessError(f"NumPy limit failed the memory step: {reference.error}")
    description = (
        f"One training step of the {'-'.join(map(str, settings.layers))} MLP at batch "
        f"{settings.memory_batch}, in a fresh process after a batch-1 warm-up. *Peak* is "
        "measured with tracemalloc for NumPy-based systems and as resident-set growth for "
        "the others (PyTorch's CPU allocator keeps no statistics), as the *method* column "
        "says; *peak RSS growth* uses the same method for every system. *Held* is what "
        "stays allocated after the step once the gradients are dropped (for RSS: after "
        "glibc's `malloc_trim` hands freed pages back), without "
        "`gc.collect()`; *GC found* is what `gc.collect()` then returns (reference cycles; "
        "gradnb must show 0)."
    )
    header = [
        "system",
        "method",
        "peak",
        "peak RSS growth",
        "held after step",
        "GC found",
        "held after gc",
        "check vs NumPy",
    ]
    table = Table(TITLE, description, header)
    for system in session.systems:
        name = SYSTEMS[system][0]
        outcome = reference if system == REFERENCE else session.fresh(system, measure, **kwargs)
        if not outcome.ok:
            if outcome.error:
                session.note(f"{system}: memory", outcome)
            table.rows.append([name, failure_cell(outcome), *[""] * (len(header) - 2)])
            continue
        value = outcome.value
        check = "reference"
        if system != REFERENCE:
            verdict = compare(value["result"], reference.value["result"], TOLERANCE)
            check = verdict.describe()
            if not verdict.ok:
                session.flag_wrong(TITLE, system, check)
        found = str(value["gc_found"])
        if system == "gradnb" and value["gc_found"]:
            found = f"**{found} (must be 0)**"
        table.rows.append(
            [
                name,
                value["method"],
                megabytes(value["peak"]),
                megabytes(value["peak_rss"]),
                megabytes(value["held"]),
                found,
                megabytes(value["held_after_gc"]),
                check,
            ]
        )
    return table
