"""Training-step costs: sparse vs dense embedding gradients, frozen vs trainable backbone.

Run ``python benchmarks/bench_training.py`` (or ``python -m benchmarks.bench_training``) from
the repository root; ``--quick`` takes fewer repeats. Times are the fastest of N (CPU, float32).

* ``embedding``: a 100,000 x 64 table, 32 x 16 = 512 lookups per step. One step is forward,
  ``backward`` and ``SGD.step``; with ``sparse=True`` the gradient holds only the looked-up
  rows and the step updates only them. Also reported: the bytes of the weight's gradient.
* ``frozen``: a 4-layer MLP backbone (1024 wide) under a linear head, batch 256. Backward time
  with the backbone trainable vs frozen (``requires_grad_(False)``): frozen, its nodes are never
  recorded, so backward runs the head alone.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradnb
from gradnb import nn, optim

TABLE_ROWS, TABLE_DIM, LOOKUPS = 100_000, 64, (32, 16)
WIDTH, DEPTH, BATCH = 1024, 4, 256


def _best_ms(call, repeats: int) -> float:
    call()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best * 1e3


def embedding_case(sparse: bool, repeats: int) -> dict:
    """Step time and gradient bytes of one Embedding + SGD step."""
    gradnb.manual_seed(0)
    emb = nn.Embedding(TABLE_ROWS, TABLE_DIM, sparse=sparse)
    opt = optim.SGD(emb.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    batches = [gradnb.tensor(rng.integers(0, TABLE_ROWS, LOOKUPS)) for _ in range(8)]
    state = {"i": 0}

    def step() -> None:
        idx = batches[state["i"] % len(batches)]
        state["i"] += 1
        opt.zero_grad()
        emb(idx).sum().backward()
        opt.step()

    ms = _best_ms(step, repeats)
    return {"step_ms": round(ms, 2), "grad_bytes": int(emb.weight.grad.nbytes),
            "weight_bytes": int(emb.weight.nbytes)}


def frozen_case(frozen: bool, repeats: int) -> dict:
    """Backward time of head(backbone(x)) with the backbone trainable or frozen."""
    gradnb.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    backbone = nn.Sequential(*layers).requires_grad_(not frozen)
    head = nn.Linear(WIDTH, 10)
    x = gradnb.randn(BATCH, WIDTH)
    best = float("inf")
    for i in range(repeats + 1):
        head.zero_grad()
        backbone.zero_grad()
        loss = head(backbone(x)).sum()
        started = time.perf_counter()
        loss.backward()
        if i:  # the first pass is a warm-up
            best = min(best, time.perf_counter() - started)
    nodes = gradnb.autograd.memory.last_backward().nodes_executed
    return {"backward_ms": round(best * 1e3, 2), "nodes_executed": nodes}


def run(quick: bool = False) -> dict:
    """All figures of this benchmark as a dict."""
    repeats = 3 if quick else 10
    return {
        "benchmark": "training",
        "repeats": repeats,
        "embedding": {"dense": embedding_case(False, repeats),
                      "sparse": embedding_case(True, repeats)},
        "frozen": {"trainable": frozen_case(False, repeats),
                   "frozen": frozen_case(True, repeats)},
    }


def main() -> None:
    """Print the figures of :func:`run`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    results = run(quick=parser.parse_args().quick)
    emb = results["embedding"]
    lookups = LOOKUPS[0] * LOOKUPS[1]
    print(f"Embedding {TABLE_ROWS:,} x {TABLE_DIM}, {lookups} lookups per step, "
          f"forward + backward + SGD step, best of {results['repeats']}:")
    for kind in ("dense", "sparse"):
        r = emb[kind]
        print(f"  {kind:<6} step {r['step_ms']:8.2f} ms   gradient {r['grad_bytes'] / 1e6:8.3f} MB")
    print(f"  sparse/dense: {emb['dense']['step_ms'] / emb['sparse']['step_ms']:.1f}x faster, "
          f"{emb['dense']['grad_bytes'] / emb['sparse']['grad_bytes']:.0f}x fewer gradient bytes")
    frozen = results["frozen"]
    print(f"Backward of a {DEPTH}-layer MLP backbone ({WIDTH} wide) + linear head, batch {BATCH}:")
    for kind in ("trainable", "frozen"):
        r = frozen[kind]
        print(f"  {kind:<9} backward {r['backward_ms']:8.2f} ms   "
              f"nodes run {r['nodes_executed']}")
    print(f"  frozen/trainable: "
          f"{frozen['trainable']['backward_ms'] / frozen['frozen']['backward_ms']:.1f}x faster")


if __name__ == "__main__":
    main()
