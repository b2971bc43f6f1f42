"""GPU benchmark: one MLP training step with gradnb on CuPy (``device="cuda"``) vs on NumPy, next
to the same step written by hand (NumPy and CuPy) and PyTorch (CPU and, where present, CUDA).

Run ``python benchmarks/bench_gpu.py`` from the repository root (``--quick`` for a smoke run).
The table is printed as Markdown and appended to ``--out`` (default
``benchmarks/RESULTS_GPU.md``). Without CuPy, a GPU or PyTorch, those rows say why they are
missing and the rest still run.

The step: a 784-512-256-10 MLP (ReLU, softmax cross-entropy, SGD), float32, batch 128 and
4,096; zero_grad, forward, backward, update. Every system starts from the same weights and
batch; the first step's loss is checked against the hand-written NumPy step. A step's time is
taken between two device synchronisations (the GPU has finished its queued kernels), so it is
the wall time a training loop would see; the table gives the median and the fastest of
``--repeats`` steps after ``--warmup`` untimed ones.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradnb

LAYERS = (784, 512, 256, 10)
LEARNING_RATE = 0.01
LOSS_TOLERANCE = 1e-4  # float32 on other BLAS blockings and reduction orders
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS_GPU.md"


@dataclass
class Problem:
    """Initial weights (``(in, out)`` matrices and biases) and one batch, all host float32."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    x: np.ndarray
    y: np.ndarray


def make_problem(batch: int) -> Problem:
    """He-initialised weights and a random batch from one seed."""
    rng = np.random.default_rng(0)
    weights, biases = [], []
    for fan_in, fan_out in itertools.pairwise(LAYERS):
        weights.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in))
                       .astype(np.float32))
        biases.append(np.zeros(fan_out, dtype=np.float32))
    x = rng.standard_normal((batch, LAYERS[0])).astype(np.float32)
    y = rng.integers(0, LAYERS[-1], size=batch)
    return Problem(weights, biases, x, y)


@dataclass
class Runner:
    """A system ready to train: ``step()`` runs one step and returns its loss (unsynchronised);
    ``sync()`` waits for the device."""

    step: Callable[[], object]
    sync: Callable[[], None]


# -- systems --------------------------------------------------------------------------------------
def _no_sync() -> None:
    return None


def hand_written(xp, sync: Callable[[], None]) -> Callable[[Problem], Runner]:
    """The step written by hand in ``xp`` (NumPy or CuPy): the limit an engine is measured by."""

    def build(problem: Problem) -> Runner:
        ws = [xp.asarray(w) for w in problem.weights]
        bs = [xp.asarray(b) for b in problem.biases]
        x, y = xp.asarray(problem.x), xp.asarray(problem.y)
        rows = xp.arange(len(problem.y))

        def step():
            acts = [x]
            for i, (w, b) in enumerate(zip(ws, bs)):
                z = acts[-1] @ w + b
                acts.append(xp.maximum(z, 0) if i < len(ws) - 1 else z)
            logits = acts.pop()
            logits = logits - logits.max(axis=1, keepdims=True)
            probs = xp.exp(logits)
            sums = probs.sum(axis=1, keepdims=True)
            loss = (xp.log(sums[:, 0]) - logits[rows, y]).mean()
            grad = probs / sums
            grad[rows, y] -= 1
            grad /= len(problem.y)
            for i in reversed(range(len(ws))):
                gw, gb = acts[i].T @ grad, grad.sum(axis=0)
                if i > 0:
                    grad = (grad @ ws[i].T) * (acts[i] > 0)
                ws[i] -= LEARNING_RATE * gw
                bs[i] -= LEARNING_RATE * gb
            return loss

        return Runner(step, sync)

    return build


def framework(module, device: str, sync: Callable[[], None]) -> Callable[[Problem], Runner]:
    """The step through PyTorch's API (``module`` is ``gradnb`` or ``torch``) on ``device``."""
    nn, functional = module.nn, module.nn.functional

    def build(problem: Problem) -> Runner:
        layers = []
        for i in range(len(LAYERS) - 1):
            layers.append(nn.Linear(LAYERS[i], LAYERS[i + 1]))
            if i < len(LAYERS) - 2:
                layers.append(nn.ReLU())
        model = nn.Sequential(*layers).to(device)
        state = {}
        for k, (w, b) in enumerate(zip(problem.weights, problem.biases)):
            state[f"{2 * k}.weight"] = module.tensor(np.ascontiguousarray(w.T))
            state[f"{2 * k}.bias"] = module.tensor(b)
        model.load_state_dict(state)
        opt = module.optim.SGD(model.parameters(), lr=LEARNING_RATE)
        x = module.tensor(problem.x, device=device)
        y = module.tensor(problem.y, device=device)

        def step():
            opt.zero_grad()
            loss = functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return Runner(step, sync)

    return build


def systems() -> tuple[dict[str, Callable[[Problem], Runner]], dict[str, str], dict[str, str]]:
    """The systems that can run here, why the others cannot, and the versions in use."""
    available: dict[str, Callable[[Problem], Runner]] = {}
    missing: dict[str, str] = {}
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "gradnb": gradnb.__version__}
    available["numpy (by hand)"] = hand_written(np, _no_sync)
    available["gradnb cpu"] = framework(gradnb, "cpu", _no_sync)
    if gradnb.cuda.is_available():
        import cupy

        versions["cupy"] = cupy.__version__
        versions["gpu"] = _gpu_name(cupy)
        available["cupy (by hand)"] = hand_written(cupy, gradnb.cuda.synchronize)
        available["gradnb cuda"] = framework(gradnb, "cuda", gradnb.cuda.synchronize)
    else:
        reason = gradnb._core.backend.cuda_unavailable_reason()
        missing["cupy (by hand)"] = missing["gradnb cuda"] = reason
    try:
        import torch
    except ImportError as exc:
        missing["torch cpu"] = missing["torch cuda"] = f"PyTorch is not installed ({exc})"
        return available, missing, versions
    versions["torch"] = torch.__version__
    available["torch cpu"] = framework(torch, "cpu", _no_sync)
    if torch.cuda.is_available():
        available["torch cuda"] = framework(torch, "cuda", torch.cuda.synchronize)
    else:
        missing["torch cuda"] = "this PyTorch build sees no CUDA device"
    return available, missing, versions


def _gpu_name(cupy) -> str:
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


# -- measuring ------------------------------------------------------------------------------------
def measure(build: Callable[[Problem], Runner], batch: int, warmup: int,
            repeats: int) -> tuple[float, list[float]]:
    """The first step's loss and the milliseconds of ``repeats`` later steps."""
    runner = build(make_problem(batch))
    first_loss = float(runner.step().item())
    for _ in range(warmup):
        runner.step()
    times = []
    for _ in range(repeats):
        runner.sync()
        started = time.perf_counter()
        runner.step()
        runner.sync()
        times.append((time.perf_counter() - started) * 1e3)
    return first_loss, times


def run(batches: list[int], warmup: int, repeats: int) -> tuple[list[str], dict, dict, dict]:
    """Measure every available system at every batch size."""
    available, missing, versions = systems()
    results: dict[str, dict[int, tuple[float, list[float]] | str]] = {}
    for name, build in available.items():
        results[name] = {}
        for batch in batches:
            try:
                results[name][batch] = measure(build, batch, warmup, repeats)
            except Exception as exc:  # noqa: BLE001 - a failing system is reported, the rest run
                results[name][batch] = f"failed: {type(exc).__name__}: {exc}"
            print(f"  measured {name} at batch {batch}", file=sys.stderr, flush=True)
    order = [n for n in ("numpy (by hand)", "cupy (by hand)", "gradnb cpu", "gradnb cuda",
                         "torch cpu", "torch cuda") if n in results or n in missing]
    return order, results, missing, versions


def table(order, results, missing, batches) -> str:
    """Markdown: median (fastest) ms per step, speed-up over gradnb on the CPU, loss check."""
    header = ["system"] + [f"batch {b}: ms/step, median (min)" for b in batches]
    header += [f"batch {b}: x gradnb cpu" for b in batches] + ["first-step loss"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    reference = results.get("numpy (by hand)", {})
    baseline = results.get("gradnb cpu", {})
    for name in order:
        if name in missing:
            cells = [f"n/a: {missing[name]}"] + [""] * (2 * len(batches))
            lines.append("| " + " | ".join([name] + cells) + " |")
            continue
        timing, speedup, checks = [], [], []
        for b in batches:
            got = results[name][b]
            if isinstance(got, str):
                timing.append(got)
                speedup.append("")
                continue
            loss, times = got
            median = statistics.median(times)
            timing.append(f"{median:.3f} ({min(times):.3f})")
            base = baseline.get(b)
            speedup.append(f"{statistics.median(base[1]) / median:.1f}x"
                           if isinstance(base, tuple) else "")
            ref = reference.get(b)
            if isinstance(ref, tuple):
                ok = abs(loss - ref[0]) <= LOSS_TOLERANCE * max(1.0, abs(ref[0]))
                checks.append(f"{loss:.5f}" + ("" if ok else " **WRONG**"))
        lines.append("| " + " | ".join([name, *timing, *speedup, ", ".join(checks)]) + " |")
    return "\n".join(lines)


def report(order, results, missing, versions, batches, argv) -> str:
    """The section appended to the results file."""
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    about = ", ".join(f"{k} {v}" for k, v in versions.items())
    shape = "-".join(map(str, LAYERS))
    return (f"## GPU: {shape} MLP training step ({stamp})\n\n"
            f"`python benchmarks/bench_gpu.py {' '.join(argv)}`".rstrip() + "\n\n"
            f"Machine: {platform.node()}, {platform.machine()}; {about}.\n\n"
            f"{table(order, results, missing, batches)}\n")


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, append it to ``--out``; exit 1 if a system failed a step or
    the loss check (a system that is not installed is no failure)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", default="128,4096", help="comma-separated batch sizes")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps after the first")
    parser.add_argument("--repeats", type=int, default=30, help="timed steps per batch size")
    parser.add_argument("--quick", action="store_true", help="batch 16 and 64, 2 repeats")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results file to append to")
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    if args.quick:
        batches, args.warmup, args.repeats = [16, 64], 1, 2
    order, results, missing, versions = run(batches, args.warmup, args.repeats)
    text = report(order, results, missing, versions, batches,
                  sys.argv[1:] if argv is None else argv)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as f:
        f.write("\n" + text)
    failed = any(isinstance(got, str) for per_batch in results.values()
                 for got in per_batch.values())
    return 1 if failed or "**WRONG**" in text else 0


if __name__ == "__main__":
    sys.exit(main())
