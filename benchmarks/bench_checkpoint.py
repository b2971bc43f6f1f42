"""Memory saved by activation checkpointing on a deep MLP (tracemalloc, CPU).

Run ``python benchmarks/bench_checkpoint.py`` (or ``python -m benchmarks.bench_checkpoint``)
from the repository root; ``--quick`` uses a small network. The model is 32 blocks of
``Linear(1024, 1024) + ReLU`` on a batch of 256 (float32). Each variant runs one training step
(forward, ``backward``) after a warm-up step, with ``.grad`` buffers already allocated
(``zero_grad(set_to_none=False)``), so the figures are the activation memory and not the
gradients. NumPy reports its buffers to ``tracemalloc``; two figures per variant:

* ``after forward``: bytes allocated by the forward pass and still alive when it returns, i.e.
  what the graph keeps for backward;
* ``peak``: the highest allocation above the starting point during forward + backward.

The engine applies leaf gradients only after the whole backward pass succeeded, so it holds one
gradient per parameter until the end; when those outweigh the activations (as here: 128 MiB of
weights against 32 MiB of activations), they set the peak and checkpointing cannot lower it.
The script prints that figure next to the table.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradnb
from gradnb import nn
from gradnb.utils.checkpoint import checkpoint, checkpoint_sequential

DEPTH, WIDTH, BATCH = 32, 1024, 256
MIB = 1024 * 1024


def deep_mlp(depth: int, width: int) -> nn.Sequential:
    gradnb.manual_seed(0)
    return nn.Sequential(*[m for _ in range(depth) for m in (nn.Linear(width, width), nn.ReLU())])


def variants(depth: int) -> dict:
    """How each variant runs the model's forward pass."""
    segments = max(2, round(depth ** 0.5))
    return {
        "plain": lambda net, x: net(x),
        f"checkpoint_sequential({segments} segments)":
            lambda net, x: checkpoint_sequential(net, segments, x, use_reentrant=False),
        "checkpoint every block": lambda net, x: _per_block(net, x),
    }


def _per_block(net, x):
    layers = list(net.children())
    for i in range(0, len(layers), 2):
        x = checkpoint(nn.Sequential(*layers[i:i + 2]), x, use_reentrant=False)
    return x


def measure(net, x, forward) -> dict:
    """One training step under tracemalloc: bytes kept after forward, peak, seconds."""
    net.zero_grad(set_to_none=False)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        loss = forward(net, x).sum()
        after_forward = tracemalloc.get_traced_memory()[0] - start
        loss.backward()
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    return {"after_forward": after_forward, "peak": peak, "seconds": seconds}


def run(quick: bool = False) -> tuple[list[dict], int]:
    """The measured rows, and the bytes of all parameter gradients."""
    depth, width, batch = (8, 128, 32) if quick else (DEPTH, WIDTH, BATCH)
    net = deep_mlp(depth, width)
    x = gradnb.randn(batch, width)
    rows = []
    for name, forward in variants(depth).items():
        forward(net, x).sum().backward()  # warm-up: allocates the .grad buffers
        rows.append({"variant": name, **measure(net, x, forward)})
    return rows, sum(p.nbytes for p in net.parameters())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small network, for a smoke test")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    depth, width, batch = (8, 128, 32) if args.quick else (DEPTH, WIDTH, BATCH)
    print(f"Deep MLP: {depth} x (Linear({width}, {width}) + ReLU), batch {batch}, float32; "
          "one step with .grad preallocated")
    rows, grad_bytes = run(args.quick)
    base = rows[0]
    print(f"{'variant':<36} {'after forward':>14} {'peak':>12} {'peak saved':>11} {'time':>8}")
    for row in rows:
        saved = 1 - row["peak"] / base["peak"] if base["peak"] else 0.0
        print(f"{row['variant']:<36} {row['after_forward'] / MIB:>10.1f} MiB "
              f"{row['peak'] / MIB:>8.1f} MiB {saved:>10.0%} {row['seconds']:>7.2f}s")
    print(f"parameter gradients held until the end of backward: {grad_bytes / MIB:.1f} MiB")


if __name__ == "__main__":
    main()
