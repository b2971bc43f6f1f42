"""Command-line options and the sizes of a full run versus a ``--quick`` smoke run."""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from benchmarks.systems import REFERENCE, SYSTEMS

DEFAULT_OUT = Path(__file__).with_name("RESULTS.md")
OPENBLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Settings:
    """Everything a run needs; ``quick`` selects tiny sizes and one round."""

    quick: bool = False
    systems: tuple[str, ...] = tuple(SYSTEMS)
    threads: int = dataclasses.field(default_factory=_available_cores)
    out: Path = DEFAULT_OUT
    unset_openblas_env: bool = False
    rounds: int = 11
    deep_rounds: int = 3
    layers: tuple[int, ...] = (784, 512, 256, 10)
    mlp_batches: tuple[int, ...] = (128, 16)
    memory_batch: int = 1024
    tiny_ops: int = 200
    training_layers: tuple[int, ...] = (32, 64, 64, 10)
    training_batch: int = 32
    training_steps: int = 1000
    training_check_steps: int = 20
    deep_iterations: int = 100_000
    iterations: int = 30  # timed calls per system per round, at most ...
    budget_s: float = 1.5  # ... and about this long
    # Idle seconds before each system's turn in a round. An OpenBLAS worker thread spin-waits
    # ~0.1 s of CPU after its process's last BLAS call (and OpenMP threads a few ms): without
    # the pause the system timed next shares a core with the previous one's spinning thread,
    # and which system that penalises depends only on the order in the round.
    settle_s: float = 0.3
    import_runs: int = 7
    timeout_s: float = 900.0  # per worker call; a deep chain in a slow engine takes a while
    waiting_note_s: float = 60.0  # a progress line per this many seconds a worker call runs

    @classmethod
    def quick_preset(cls, **overrides: object) -> Settings:
        """Seconds-long sizes for CI: correctness cross-checks, no meaningful timings."""
        small = cls(
            quick=True,
            rounds=1,
            deep_rounds=1,
            layers=(64, 32, 16, 10),
            mlp_batches=(16, 4),
            memory_batch=64,
            tiny_ops=30,
            training_steps=20,
            training_check_steps=5,
            deep_iterations=2_000,
            iterations=2,
            budget_s=0.2,
            import_runs=1,
            settle_s=0.0,
            timeout_s=120.0,
        )
        return dataclasses.replace(small, **overrides)

    @property
    def worker_env_removals(self) -> tuple[str, ...]:
        """Environment variables removed for worker processes."""
        return OPENBLAS_VARIABLES if self.unset_openblas_env else ()


def parse_settings(argv: list[str] | None = None) -> Settings:
    """Settings from the command line (see ``python -m benchmarks --help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmark gradnb against a hand-written NumPy limit and other engines.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="seconds-long smoke run: tiny sizes, one round"
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"report file (default: {DEFAULT_OUT.name})"
    )
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated subset of {','.join(SYSTEMS)}; {REFERENCE} is always included",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="BLAS/intra-op threads (default: all cores)"
    )
    parser.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds")
    parser.add_argument(
        "--unset-openblas-env",
        action="store_true",
        help="remove OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from the workers' environment",
    )
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.systems.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems: {', '.join(unknown)}")
    overrides: dict[str, object] = {
        "systems": tuple(name for name in SYSTEMS if name == REFERENCE or name in chosen),
        "out": args.out,
        "unset_openblas_env": args.unset_openblas_env,
    }
    if args.threads is not None:
        overrides["threads"] = args.threads
    if args.rounds is not None:
        overrides["rounds"] = args.rounds
    return Settings.quick_preset(**overrides) if args.quick else Settings(**overrides)
