"""Where a weight gradient ``g.T @ h`` should be computed in column blocks on this machine's BLAS.

    python benchmarks/bench_weight_grad_layout.py              # the BLAS's own thread count
    python benchmarks/bench_weight_grad_layout.py --threads 1

A linear layer's weight gradient is ``g.T @ h`` (out x in, the weight's layout). OpenBLAS with
two threads is slow for this product when the result is at least as wide as tall and the batch
is short; computing it in column blocks of half its rows each is faster there and gives the
same numbers. ``gradnb.ops._blas.transposed_product`` does that where its rule says so
(``block_width``). This script times the one call, the blocks, and for reference the same
product in a NumPy MLP's in x out layout (``h.T @ g``), interleaved call by call (the fastest
and the median of many rounds), over result shapes and batches, and marks which of the first two
wins by more than 5% and which the rule picks. A script, not a test: timings are noisy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: use the gradnb of this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import interleaved_times
from gradnb.ops._blas import _blocks, block_width

SHAPES = ((512, 784), (256, 512), (512, 512), (784, 784), (1024, 1024), (128, 784), (256, 784),
          (512, 1024), (1024, 2048))
BATCHES = (8, 16, 32, 64, 128, 256)


def _blocked(g, h, width):
    out = np.empty((g.shape[1], h.shape[1]), g.dtype)
    for start, stop in _blocks(h.shape[1], width):
        np.matmul(g.T, h[:, start:stop], out=out[:, start:stop])
    return out


def compare(g, h, rounds: int, calls: int) -> dict:
    """Seconds per call of each way, interleaved: (fastest round, median round)."""
    width = g.shape[1] // 2
    return interleaved_times({"one call": lambda: g.T @ h, "blocks": lambda: _blocked(g, h, width),
                              "in x out": lambda: h.T @ g}, rounds, calls)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (default: as is)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args(argv)
    if args.threads is not None:
        import gradnb  # the rule reads the thread count gradnb set
        gradnb.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print("result (out x in)  batch   one call µs (median)   blocks µs (median)"
          "   in x out µs   faster     rule picks")
    for rows, cols in SHAPES:
        for batch in BATCHES:
            g = rng.standard_normal((batch, rows), dtype=np.float32)
            h = rng.standard_normal((batch, cols), dtype=np.float32)
            np.testing.assert_array_equal(g.T @ h, _blocked(g, h, rows // 2))
            r = compare(g, h, args.rounds, args.calls)
            (o, om), (b, bm), (ref, _) = r["one call"], r["blocks"], r["in x out"]
            faster = "blocks" if b < 0.95 * o else "one call" if o < 0.95 * b else "either"
            picks = "blocks" if block_width(g, h) else "one call"
            print(f"{rows:>6} x {cols:<8} {batch:>5}   {o * 1e6:8.1f} ({om * 1e6:8.1f})"
                  f"     {b * 1e6:8.1f} ({bm * 1e6:8.1f})   {ref * 1e6:9.1f}     {faster:<10} {picks}")


if __name__ == "__main__":
    main()
