"""Facts about the run for the report header: date, machine, load, versions, BLAS, threads."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from pathlib import Path

from benchmarks.report import Table
from benchmarks.session import Session
from benchmarks.settings import OPENBLAS_VARIABLES, Settings
from benchmarks.systems import SYSTEMS


def load_average() -> str:
    """1/5/15-minute load averages, e.g. ``0.12 0.30 0.25``."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def _busy_warning(load_before: str, threads: int) -> list[str]:
    """A warning line when other work already kept the cores busy as the run began.

    Thread pools that wait for each other (OpenBLAS, OpenMP) slow down many times over
    when another process holds one of their cores, so such timings mean little.
    """
    try:
        one_minute = float(load_before.split()[0])
    except (IndexError, ValueError):
        return []
    cores = os.cpu_count() or 1
    if one_minute < 0.5 * cores:
        return []
    warning = (
        f"**Warning: the machine was busy** (load {one_minute:.2f} on {cores} cores before the "
        f"run, {threads} threads per system): timings are unreliable; rerun on an idle machine "
        "or with fewer `--threads`"
    )
    return [warning]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_facts(settings: Settings, load_before: str, load_after: str, command: str) -> list[str]:
    """Bullet lines: when, where, how loaded, with which options."""
    removed = settings.worker_env_removals
    blas_env = ", ".join(
        f"`{name}={os.environ[name]}`" if name in os.environ else f"`{name}` unset"
        for name in OPENBLAS_VARIABLES
    )
    if removed:
        blas_env += " (removed for the workers by `--unset-openblas-env`)"
    return [
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        f"Command: `{command}`"
        + (" (quick smoke run: sizes too small to mean anything)" if settings.quick else ""),
        f"Machine: {_cpu_model()}, {os.cpu_count()} logical cores, {platform.platform()}",
        f"Python {platform.python_version()} ({sys.implementation.name})",
        f"Load average (1/5/15 min): {load_before} before, {load_after} after",
        *_busy_warning(load_before, settings.threads),
        (
            f"Threads: {settings.threads} for every system (threadpoolctl in each worker; "
            "`torch.set_num_threads` to match)"
        ),
        f"OpenBLAS environment: {blas_env}",
        (
            f"Rounds: {settings.rounds} interleaved timing rounds ({settings.deep_rounds} for "
            "the deep chain), each system in its own worker process, A B C, A B C, ...; "
            f"each system's turn starts after {settings.settle_s:g} s idle (so the previous "
            "system's spin-waiting BLAS threads have parked); a round's time is the fastest of "
            "up to "
            f"{settings.iterations} calls, and beside it the median of those calls (*median "
            "call*); ratios to the NumPy limit are taken within a round and reported as the "
            "median over rounds (lowest–highest round in brackets)"
        ),
    ]


def _pools_text(pools: object) -> str:
    if isinstance(pools, str):
        return pools
    parts = []
    for pool in pools:  # type: ignore[union-attr]
        name = pool["internal_api"] + (f" {pool['version']}" if pool.get("version") else "")
        arch = f", {pool['architecture']}" if pool.get("architecture") else ""
        parts.append(f"{name} ({pool['user_api']}{arch}): {pool['num_threads']} threads")
    return "; ".join(parts) or "none loaded"


def _torch_pool_text(info: dict) -> str:
    if "torch_threads" not in info:
        return ""
    return f"{info.get('torch_blas', 'unknown')}: {info['torch_threads']} threads"


def systems_table(session: Session) -> Table:
    """Each system's version and the thread pools its worker ended up with."""
    table = Table(
        "Systems",
        "Versions, and the thread pools each worker process reports through threadpoolctl "
        "after the limit was set. PyTorch multiplies matrices with the BLAS built into it "
        "(its last column), which threadpoolctl does not see: the pools it lists in PyTorch's "
        "worker are NumPy's.",
        ["system", "version", "thread pools (threadpoolctl)", "PyTorch's own BLAS: threads"],
    )
    for name in session.systems:
        hello = session.hellos.get(name)
        label = SYSTEMS[name][0]
        if hello is None or not hello.ok:
            reason = (hello.unsupported or hello.error) if hello else "not started"
            table.rows.append([label, f"not available: {reason}", "", ""])
            continue
        info = hello.value
        table.rows.append(
            [
                label,
                info["version"],
                _pools_text(info["pools"]),
                _torch_pool_text(info),
            ]
        )
    return table
