"""Worker processes: one system per process, called through a pipe with a timeout.

The parent sends ``(function, kwargs)``; the worker answers ``function(system, **kwargs)``.
Any exception, a crash or a timeout comes back as an ``Outcome`` with an error, so one
broken system never stops the run.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from benchmarks.systems import load_system
from benchmarks.systems.base import System, Unsupported

_READY_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Outcome:
    """A worker's answer: a value, or why there is none."""

    value: Any = None
    error: str | None = None  # "ValueError: ...", "crashed (exit code -11)", "timed out ..."
    unsupported: str | None = None  # the system does not offer this workload
    detail: str = ""  # traceback tail for the report's error notes

    @property
    def ok(self) -> bool:
        """True when there is a value."""
        return self.error is None and self.unsupported is None


def describe(error: BaseException) -> str:
    """``TypeName: first line of the message``, short enough for a table cell."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= 120 else text[:117] + "..."


_REPOSITORY = str(Path(__file__).resolve().parents[1]) + os.sep


def _traceback_tail(error: BaseException, lines: int = 6) -> str:
    """The last frames, with paths shown relative to the repository or the Python prefix."""
    text = "".join(traceback.format_exception(error)[-lines:]).strip()
    return text.replace(_REPOSITORY, "").replace(sys.prefix + os.sep, "")


def _thread_report(threads: int, system: System | None) -> dict[str, Any]:
    """Limit every thread pool to ``threads`` and say what threadpoolctl sees afterwards."""
    report: dict[str, Any] = {"version": system.version() if system else ""}
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        report["pools"] = "threadpoolctl not installed: thread counts not set"
    else:
        threadpool_limits(limits=threads)
        keys = ("user_api", "internal_api", "version", "num_threads", "architecture")
        report["pools"] = [{key: pool.get(key) for key in keys} for pool in threadpool_info()]
    if system is not None:
        system.set_threads(threads)
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        report["torch_threads"] = torch.get_num_threads()
        report["torch_blas"] = torch_blas(torch)
    return report


def torch_blas(torch: Any) -> str:
    """The BLAS PyTorch's own matrix products run on, from its build configuration (``mkl`` in
    the x86 CPU wheels). It is linked into PyTorch, so threadpoolctl does not list it: the pools
    it shows in a PyTorch worker are NumPy's."""
    config = torch.__config__.show()
    match = re.search(r"BLAS_INFO=(\w+)", config)
    return match.group(1) if match else "unknown"


def serve(connection: Connection, system_name: str | None, threads: int) -> None:
    """Worker main: load the system, limit threads, answer calls until ``None`` arrives."""
    try:
        system = load_system(system_name) if system_name else None
        connection.send(Outcome(value=_thread_report(threads, system)))
    except Exception as error:  # noqa: BLE001 - an engine that fails to import is a table cell
        connection.send(Outcome(error=describe(error), detail=_traceback_tail(error)))
        return
    while True:
        try:
            request = connection.recv()
        except EOFError:  # the parent went away
            return
        except Exception as error:  # noqa: BLE001 - e.g. a function that cannot be unpickled
            connection.send(Outcome(error=describe(error), detail=_traceback_tail(error)))
            continue
        if request is None:
            return
        function, kwargs = request
        try:
            outcome = Outcome(value=function(system, **kwargs))
        except Unsupported as reason:
            outcome = Outcome(unsupported=str(reason))
        except Exception as error:  # noqa: BLE001 - any engine failure is a table cell
            outcome = Outcome(error=describe(error), detail=_traceback_tail(error))
        try:
            connection.send(outcome)
        except Exception as error:  # noqa: BLE001 - a value that cannot be pickled
            connection.send(Outcome(error=f"unsendable result: {describe(error)}"))


@contextlib.contextmanager
def _environment_without(names: tuple[str, ...]) -> Iterator[None]:
    """Remove ``names`` from ``os.environ`` while a child starts; the parent's values return."""
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


class Worker:
    """A spawned process serving one system (or none, for system-free jobs)."""

    def __init__(
        self, system: str | None, threads: int, env_removals: tuple[str, ...] = ()
    ) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, child_end = context.Pipe()
        self._process = context.Process(
            target=serve, args=(child_end, system, threads), daemon=True
        )
        with _environment_without(env_removals):
            self._process.start()
        child_end.close()
        self._dead: str | None = None

    def ready(self) -> Outcome:
        """The worker's hello: its version and thread pools, or why it failed to start."""
        return self._receive(_READY_TIMEOUT_S)

    def call(self, function: Callable[..., Any], timeout_s: float, *,
             waiting: Callable[[float], None] | None = None, every_s: float = 60.0,
             **kwargs: Any) -> Outcome:
        """``function(system, **kwargs)`` in the worker; ``function`` must be module-level.

        While the answer has not come, ``waiting(seconds so far)`` is called every ``every_s``
        seconds, so a slow call shows in the progress lines instead of looking like a hang.
        """
        if self._dead:
            return Outcome(error=self._dead)
        self._connection.send((function, kwargs))
        return self._receive(timeout_s, waiting, every_s)

    def _receive(self, timeout_s: float, waiting: Callable[[float], None] | None = None,
                 every_s: float = 60.0) -> Outcome:
        started = time.perf_counter()
        try:
            while True:
                elapsed = time.perf_counter() - started
                if elapsed >= timeout_s:
                    self._process.kill()
                    self._dead = f"timed out after {timeout_s:.0f} s"
                    return Outcome(error=self._dead)
                if self._connection.poll(min(every_s, timeout_s - elapsed)):
                    return self._connection.recv()
                if waiting is not None and time.perf_counter() - started < timeout_s:
                    waiting(time.perf_counter() - started)
        except (EOFError, OSError):
            self._process.join(5)
            self._dead = f"worker crashed (exit code {self._process.exitcode})"
            return Outcome(error=self._dead)

    def close(self) -> None:
        """Ask the worker to exit, and make sure it has."""
        with contextlib.suppress(OSError, BrokenPipeError):
            self._connection.send(None)
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._connection.close()


def run_fresh(
    system: str | None,
    function: Callable[..., Any],
    *,
    threads: int,
    timeout_s: float,
    env_removals: tuple[str, ...] = (),
    **kwargs: Any,
) -> Outcome:
    """Run one call in a brand-new worker process, then end it."""
    worker = Worker(system, threads, env_removals)
    try:
        hello = worker.ready()
        if not hello.ok:
            return Outcome(error=f"import failed: {hello.error}", detail=hello.detail)
        return worker.call(function, timeout_s, **kwargs)
    finally:
        worker.close()
