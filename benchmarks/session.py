"""A benchmark run in progress: its settings, its worker processes, and what went wrong."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.settings import Settings
from benchmarks.systems import REFERENCE, SYSTEMS
from benchmarks.worker import Outcome, Worker, run_fresh


class HarnessError(RuntimeError):
    """The harness itself cannot go on (e.g. the NumPy reference failed)."""


def _missing_package(system: str, hello: Outcome) -> bool:
    """True when the worker failed because the system's package is not installed at all."""
    package = SYSTEMS[system][1]
    return hello.error == f"ModuleNotFoundError: No module named '{package}'"


@dataclass
class Session:
    """Workers for every selected system, plus the run's findings.

    ``wrong`` lists systems that computed different numbers from the NumPy limit (the
    run then exits 1); ``notes`` keeps error tracebacks for the report.
    """

    settings: Settings
    workers: dict[str, Worker] = field(default_factory=dict)
    hellos: dict[str, Outcome] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @property
    def systems(self) -> tuple[str, ...]:
        """Selected systems in report order, the reference first."""
        return self.settings.systems

    def start(self) -> None:
        """Start one persistent worker per system (in parallel) and collect their hellos."""
        for name in self.systems:
            self.workers[name] = Worker(
                name, self.settings.threads, self.settings.worker_env_removals
            )
        for name, worker in self.workers.items():
            hello = worker.ready()
            if not hello.ok and _missing_package(name, hello):
                hello = Outcome(unsupported="not installed")
            elif not hello.ok:
                self.note(f"{name}: import", hello)
            self.hellos[name] = hello
        if not self.hellos[REFERENCE].ok:
            raise HarnessError(
                f"the NumPy reference failed to start: {self.hellos[REFERENCE].error}"
            )

    def close(self) -> None:
        """End every worker."""
        for worker in self.workers.values():
            worker.close()

    def call(self, system: str, function: Callable[..., Any], **kwargs: Any) -> Outcome:
        """``function(system, **kwargs)`` in the system's persistent worker."""
        unavailable = self._unavailable(system)
        if unavailable is not None:
            return unavailable

        def waiting(seconds: float) -> None:
            self.progress(f"    still waiting for {system}: {function.__name__}, {seconds:.0f} s")

        return self.workers[system].call(function, self.settings.timeout_s, waiting=waiting,
                                         every_s=self.settings.waiting_note_s, **kwargs)

    def fresh(self, system: str | None, function: Callable[..., Any], **kwargs: Any) -> Outcome:
        """``function(system, **kwargs)`` in a new process of its own."""
        unavailable = None if system is None else self._unavailable(system)
        if unavailable is not None:
            return unavailable
        return run_fresh(
            system,
            function,
            threads=self.settings.threads,
            timeout_s=self.settings.timeout_s,
            env_removals=self.settings.worker_env_removals,
            **kwargs,
        )

    def _unavailable(self, system: str) -> Outcome | None:
        """Why calls to ``system`` cannot run (not installed, failed import), or None."""
        hello = self.hellos[system]
        if hello.unsupported is not None:
            return hello
        if hello.error is not None:
            return Outcome(error=f"import failed: {hello.error}")
        return None

    def note(self, where: str, outcome: Outcome) -> None:
        """Keep an error for the report's notes (import failures, exceptions)."""
        text = outcome.detail or outcome.error or ""
        if any(text in note for note in self.notes):
            return  # the same failure again, e.g. at every batch size
        self.notes.append(f"**{where}**\n\n```\n{text}\n```\n")

    def flag_wrong(self, where: str, system: str, detail: str) -> None:
        """Record that ``system`` computed numbers that differ from the limit's."""
        self.wrong.append(f"{where}: {SYSTEMS[system][0]} {detail}")

    def progress(self, message: str) -> None:
        """One progress line on stderr (stdout is the report), with seconds since the start."""
        print(
            f"[{time.perf_counter() - self.started:6.1f} s] {message}", file=sys.stderr, flush=True
        )
