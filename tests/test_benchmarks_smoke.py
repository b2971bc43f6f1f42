"""The benchmark harness: its quick mode runs end to end, and its cross-check catches wrong numbers.

Timings are never asserted here; they belong in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.checks import compare
from benchmarks.data import mlp_problem
from benchmarks.systems import load_system
from benchmarks.systems.numpy_limit import NumpyLimit
from benchmarks.worker import Outcome, Worker
from benchmarks.workloads import training_loop

REPOSITORY = Path(__file__).resolve().parents[1]
SECTIONS = (
    "## Systems",
    "## 1. MLP training step",
    "## 1b. MLP step: matrix products alone",
    "## 2. Tiny ops",
    "## 3. Deep chain",
    "## 4. Memory of one MLP step",
    "## 5a. Toolkit: trace observation on vs off",
    "## 5b. Toolkit: graph layout and SVG",
    "## 5c. Toolkit: import time",
    "## 6. Training loop",
)


def _committed_results() -> bytes | None:
    path = REPOSITORY / "benchmarks" / "RESULTS.md"
    return path.read_bytes() if path.exists() else None


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder the quick run sees (``TMPDIR``), to check it cleans up after itself."""
    return tmp_path_factory.mktemp("scratch")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory,
              scratch: Path) -> tuple[subprocess.CompletedProcess, str]:
    """``python -m benchmarks --quick`` writing its report to a temporary file."""
    out = tmp_path_factory.mktemp("bench") / "RESULTS.md"
    committed_before = _committed_results()
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert _committed_results() == committed_before, "--out must keep benchmarks/RESULTS.md"
    return completed, out.read_text(encoding="utf-8") if out.exists() else ""


def test_quick_mode_leaves_no_bytecode_cache_behind(
    quick_run: tuple[subprocess.CompletedProcess, str], scratch: Path,
) -> None:
    assert quick_run[0].returncode == 0
    assert sorted(p.name for p in scratch.glob("gradnb-pycache-*")) == []


def test_quick_mode_exits_zero(quick_run: tuple[subprocess.CompletedProcess, str]) -> None:
    completed, _ = quick_run
    assert completed.returncode == 0, completed.stderr[-4000:]


def test_quick_mode_writes_every_section_with_the_reference_row(
    quick_run: tuple[subprocess.CompletedProcess, str],
) -> None:
    _, report = quick_run
    for section in SECTIONS:
        assert section in report
    assert "| system | batch 16 (ms/step) | × NumPy |" in report
    assert "| NumPy, hand-written (limit) |" in report
    assert "WRONG" not in report


def test_quick_mode_prints_the_report_it_writes(
    quick_run: tuple[subprocess.CompletedProcess, str],
) -> None:
    completed, report = quick_run
    assert report.strip() in completed.stdout


def test_numpy_limit_gradients_match_finite_differences() -> None:
    problem = mlp_problem((6, 5, 4, 3), 4)
    step = NumpyLimit().mlp(problem)
    step.run()
    grads = step.result()

    def loss_at(weights: list[np.ndarray]) -> float:
        probe = NumpyLimit().mlp(problem.__class__(tuple(weights), problem.x, problem.y, 0.0))
        probe.run()
        return float(probe.result()["loss"])

    weights = [w.astype(np.float64) for w in problem.weights]
    for index, name in ((0, "W1"), (3, "b2"), (4, "W3")):
        bumped = [w.copy() for w in weights]
        bumped[index].flat[1] += 1e-3
        lowered = [w.copy() for w in weights]
        lowered[index].flat[1] -= 1e-3
        numeric = (loss_at(bumped) - loss_at(lowered)) / 2e-3
        assert grads[name].flat[1] == pytest.approx(numeric, rel=1e-3, abs=1e-6)


def test_compare_flags_a_wrong_gradient_and_accepts_rounding() -> None:
    reference = {"loss": np.array(2.3), "W1": np.linspace(-1, 1, 12).reshape(3, 4)}
    rounded = {key: value * (1 + 1e-7) for key, value in reference.items()}
    halved = {**reference, "W1": reference["W1"] / 2}
    transposed = {**reference, "W1": reference["W1"].T}
    assert compare(rounded, reference, 1e-4).ok
    assert not compare(halved, reference, 1e-4).ok
    assert not compare(transposed, reference, 1e-4).ok
    assert not compare({"loss": np.array(np.nan), "W1": reference["W1"]}, reference, 1e-4).ok


def _run_script(name: str, *args: str) -> str:
    """Run ``benchmarks/<name>`` with ``args`` as a user would (no bytecode left behind); its
    output, once it exited cleanly."""
    result = subprocess.run(
        [sys.executable, str(REPOSITORY / "benchmarks" / name), *args],
        check=False, capture_output=True, text=True, cwd=REPOSITORY, timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("workload", ["tiny", "traced", "deep", "mlp", "tiny-tensor",
                                      "deep-tensor"])
def test_instruction_count_workloads_run_plainly(workload: str) -> None:
    """Each workload of ``bench_instructions.py`` runs (without valgrind, which CI need not
    have) to the end."""
    _run_script("bench_instructions.py", workload, "2")


def test_linear_layout_script_times_both_products_and_names_the_rules_pick() -> None:
    """``bench_linear_layout.py`` checks the two products agree, times them and prints which
    one ``F.linear``'s rule picks for every shape (one call each here: numbers, not timings)."""
    stdout = _run_script("bench_linear_layout.py", "--rounds", "1", "--calls", "1")
    rows = stdout.splitlines()[1:]
    assert len(rows) == 28
    picks = {(r.split()[0], int(r.split()[1])): r.split()[-1] for r in rows}
    assert picks[("784-512", 1)] == "plain"
    assert picks[("784-512", 16)] == "transposed"
    assert picks[("784-512", 128)] == "plain"
    assert picks[("1024-1024", 64)] == "plain"



def test_weight_grad_layout_script_times_both_ways_and_names_the_rules_pick() -> None:
    """``bench_weight_grad_layout.py`` checks the blocks give the one call's numbers bit for bit,
    times both and prints which one the rule picks (two threads here; OpenBLAS's rule)."""
    stdout = _run_script("bench_weight_grad_layout.py", "--rounds", "1", "--calls", "1",
                         "--threads", "2")
    rows = stdout.splitlines()[1:]
    assert len(rows) == 54
    picks = {(r.split()[0], r.split()[2], int(r.split()[3])): r.split()[-1] for r in rows}
    assert set(picks.values()) <= {"call", "blocks"}  # ("one call" ends in "call")
    assert picks[("128", "784", 16)] == "call"
    assert picks[("512", "784", 256)] == "call"
    from gradnb.ops._blas import _blas_state
    if _blas_state()[0]:  # NumPy's BLAS is OpenBLAS: the rule is on at two threads
        assert picks[("512", "784", 16)] == "blocks"


def test_layout_step_script_checks_every_way_and_splits_the_ratio() -> None:
    """``bench_layout_step.py`` checks the hand-written step in both weight layouts and gradnb's
    against the limit, times them and splits gradnb's ratio into layout and engine."""
    stdout = _run_script("bench_layout_step.py", "--batches", "4", "--rounds", "1", "--calls", "1",
                         "--pause", "0")
    lines = stdout.splitlines()
    assert lines[0].startswith("batch 4:")
    assert any("NumPy, out x in" in line for line in lines)
    assert any(line.strip().startswith("gradnb over the limit = layout") for line in lines)


def test_after_product_script_times_every_way_alone_and_after_each_disturbance() -> None:
    """``bench_after_product.py`` times each engine's tiny step alone, after a large product and
    after a copy, and says how much more a step costs after the product."""
    stdout = _run_script("bench_after_product.py", "--rounds", "1", "--calls", "1")
    lines = stdout.splitlines()
    assert "after x @ w.T" in lines[1] and "after an 8 MB copy" in lines[1]
    rows = {line.split()[0] for line in lines[2:-1]}
    assert {"NumPy", "gradnb"} <= rows
    assert lines[-1].strip().startswith("more per step after the product: NumPy (limit)")


def test_the_limit_in_linear_layout_gives_the_limits_gradients() -> None:
    from benchmarks.data import mlp_problem
    from benchmarks.systems.numpy_limit import NumpyMlpStep

    results = []
    for out_by_in in (False, True):
        step = NumpyMlpStep(mlp_problem((12, 8, 6, 3), 5), out_by_in=out_by_in)
        step.run()
        results.append(step.result())
    for key, want in results[0].items():
        np.testing.assert_allclose(results[1][key], want, rtol=1e-5, atol=1e-6)


def _threads_now() -> dict[str, int]:
    """Every thread pool's size in this process: threadpoolctl's, and PyTorch's own."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    pools = {pool["internal_api"]: pool["num_threads"] for pool in threadpoolctl.threadpool_info()}
    if "torch" in sys.modules:
        pools["torch"] = sys.modules["torch"].get_num_threads()
    return pools


class _WatchedSystem:
    """A system whose training loops note the thread pools each time they run."""

    numpy_based = True

    def __init__(self, inner) -> None:
        self._inner = inner
        self.seen: list[dict[str, int]] = []

    def set_threads(self, threads: int) -> None:
        self._inner.set_threads(threads)

    def training_loop(self, problem, optimizer: str, steps: int):
        loop = self._inner.training_loop(problem, optimizer, steps)
        seen = self.seen

        class Watched:
            def run(self) -> None:
                seen.append(_threads_now())
                loop.run()

            def result(self):
                return loop.result()

        return Watched()


@pytest.mark.parametrize("name", ["numpy", "gradnb", "torch"])
def test_training_loop_runs_on_one_thread_and_gives_the_threads_back(name: str) -> None:
    """The training loop once ran PyTorch's Adam on its spin-waiting OpenMP team: on a machine
    with another busy process a round took many minutes ("hang at training loop round 1")."""
    if name == "torch":
        pytest.importorskip("torch")
    system = _WatchedSystem(load_system(name))
    before = _threads_now()
    restore = max(2, *before.values())
    original_torch = before.get("torch")
    if original_torch is not None:  # (an earlier test may have left torch on one thread)
        sys.modules["torch"].set_num_threads(restore)  # (which sets its OpenMP pool too)
        before = _threads_now()
    kwargs = {"layers": (6, 5, 4), "batch": 3, "optimizer": "Adam", "steps": 2,
              "check_steps": 1, "threads": restore}
    training_loop.check_loop(system, **kwargs)
    training_loop.time_loop(system, **kwargs, iterations=2, budget_s=0.1)
    assert system.seen
    assert all(set(pools.values()) == {1} for pools in system.seen), system.seen
    after = _threads_now()
    if "torch" in after:
        assert after.pop("torch") == restore
        sys.modules["torch"].set_num_threads(original_torch or restore)
        before.pop("torch", None)
    assert after == {key: value for key, value in before.items() if key != "torch"}


class _SlowConnection:
    """A pipe end whose answer arrives after ``polls`` unanswered polls."""

    def __init__(self, polls: int) -> None:
        self.polls = polls
        self.timeouts: list[float] = []

    def poll(self, timeout: float) -> bool:
        self.timeouts.append(timeout)
        self.polls -= 1
        return self.polls < 0

    def recv(self) -> Outcome:
        return Outcome(value="done")

    def send(self, message: object) -> None:
        pass


def test_a_slow_worker_call_reports_progress_while_it_runs() -> None:
    """A call that runs for minutes says so every ``every_s`` seconds instead of looking hung."""
    worker = object.__new__(Worker)
    worker._dead = None
    worker._connection = _SlowConnection(polls=3)
    notes: list[float] = []
    outcome = worker.call(len, 900.0, waiting=notes.append, every_s=60.0)
    assert outcome.value == "done"
    assert len(notes) == 3
    assert worker._connection.timeouts[0] == 60.0
