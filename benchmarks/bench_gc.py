"""How much CPython's cyclic garbage collector costs the deep chain's forward, per engine.

    python benchmarks/bench_gc.py            # gradnb and PyTorch, 100,000 iterations
    python benchmarks/bench_gc.py 20000 gradnb

Builds ``x = x * 1.0001 + 0.0001`` (the deep chain of ``python -m benchmarks``), with the
constants as Python floats and as 0-d tensors, each in a fresh interpreter that imports
only its engine. For the forward it reports: seconds with the collector on and off; how many
collections of each generation ran and the seconds spent in them (``gc.callbacks``); and the
objects the collector tracks per op while the graph is alive (``gc.get_objects()`` before and
after), by type. gradnb's graphs have no reference cycles, so the collector never frees
anything from them; it still walks every tracked object each time a collection of the oldest
generation runs, and those come more often the more tracked objects a graph adds (a full
collection runs once the objects that survived younger ones exceed 25% of the old ones).
A node keeps its edges in slots, not in a tuple of nodes, so a chain adds one tracked object
per op, the node: the compiled ``record`` (``gradnb/_core/_record.c``) leaves version counters
untracked (they hold an int) and lets consecutive nodes share their output shape and what they
saved of a repeated constant, a Python float or a 0-d tensor (under ``GRADNB_PURE_PYTHON=1`` a
0-d tensor constant adds the two tuples that save it). PyTorch keeps its graph in C++: its
forward adds no tracked objects. A script, not a test: timings are noisy.
"""

from __future__ import annotations

import collections
import gc
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# The gradnb of this checkout, not an installed one, so two checkouts can be compared.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ENGINES = ("gradnb", "torch")
CONSTANTS = ("float", "tensor")


def _chain(torch, n: int, constants: str):
    x = torch.tensor(np.array([0.5]), requires_grad=True)
    if constants == "tensor":
        mul, add = torch.tensor(1.0001), torch.tensor(0.0001)
    else:
        mul, add = 1.0001, 0.0001

    def forward():
        h = x
        for _ in range(n):
            h = h * mul + add
        return h

    return forward


def measure(engine: str, n: int, constants: str) -> dict:
    """In this process: the forward's GC costs and tracked objects, then backward, then the
    forward again with the collector off."""
    torch = importlib.import_module(engine)
    _chain(torch, 200, constants)().sum().backward()  # warm-up: lazy imports, caches
    forward = _chain(torch, n, constants)
    gc.collect()
    counts: collections.Counter = collections.Counter()
    seconds: collections.Counter = collections.Counter()
    started: dict[int, float] = {}

    def callback(phase: str, info: dict) -> None:
        generation = info["generation"]
        if phase == "start":
            started[generation] = time.perf_counter()
        else:
            counts[generation] += 1
            seconds[generation] += time.perf_counter() - started[generation]

    types_before = collections.Counter(type(o).__name__ for o in gc.get_objects())
    gc.callbacks.append(callback)
    t0 = time.perf_counter()
    out = forward()
    t1 = time.perf_counter()
    gc.callbacks.remove(callback)
    types_after = collections.Counter(type(o).__name__ for o in gc.get_objects())
    ops = 2 * n
    grown = {name: (types_after[name] - types_before[name]) / ops for name in types_after
             if types_after[name] - types_before[name] >= ops // 100}
    t2 = time.perf_counter()
    out.sum().backward()
    t3 = time.perf_counter()
    del out
    gc.collect()
    gc.disable()
    t4 = time.perf_counter()
    out = forward()
    t5 = time.perf_counter()
    del out  # freed after the clock stops, as in the first forward
    gc.enable()
    return {
        "module": str(Path(torch.__file__).parent),
        "forward_s": t1 - t0, "backward_s": t3 - t2, "forward_gc_off_s": t5 - t4,
        "collections": [counts[g] for g in range(3)],
        "gc_s": [seconds[g] for g in range(3)],
        "tracked_per_op": sum(types_after.values()) / ops - sum(types_before.values()) / ops,
        "tracked_by_type": dict(sorted(grown.items(), key=lambda kv: -kv[1])),
    }


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    engines = sys.argv[2:] or ENGINES
    print(f"deep chain, {n:,} iterations ({2 * n:,} ops), one fresh interpreter per line")
    print("engine  constants  forward  GC off  in GC   collections gen0/1/2  GC s gen0/1/2"
          "      backward  tracked/op  by type")
    for engine in engines:
        for constants in CONSTANTS:
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--one", engine, str(n),
                 constants], capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"{engine:7} {constants:9}  failed: {done.stderr.strip()[-200:]}")
                continue
            r = json.loads(done.stdout)
            if engine == "gradnb" and constants == CONSTANTS[0]:
                print(f"(gradnb from {r['module']})")
            by_type = ", ".join(f"{k} {v:.2f}" for k, v in r["tracked_by_type"].items())
            print(f"{engine:7} {constants:9} {r['forward_s']:7.2f}s {r['forward_gc_off_s']:6.2f}s"
                  f" {sum(r['gc_s']):5.2f}s  {'/'.join(map(str, r['collections'])):>20}"
                  f"  {'/'.join(f'{s:.2f}' for s in r['gc_s']):>16}  {r['backward_s']:7.2f}s"
                  f"  {r['tracked_per_op']:9.2f}  {by_type}")


if __name__ == "__main__":
    main()
