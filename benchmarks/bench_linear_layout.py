"""Which product ``F.linear`` should run for ``x @ w.T + b`` on this machine's BLAS.

    python benchmarks/bench_linear_layout.py              # the BLAS's own thread count
    python benchmarks/bench_linear_layout.py --threads 1

``nn.Linear`` keeps its weight ``w`` as out x in (PyTorch's layout), so the forward multiplies
by a transposed weight. NumPy hands ``x @ w.T`` to BLAS as is; the alternative computes
``w @ x.T`` and copies its transpose into a C-contiguous result, adding the bias on the way.
Which is faster depends on the BLAS and the shapes: with OpenBLAS 0.3 on AVX2 the second wins
for small batches of wide layers and loses from batch 64 or so on, which is the rule
``gradnb.nn.functional.linear`` applies (``_transposed_product_pays``). This script times both,
interleaved call by call (the fastest and the median of many rounds), over layer sizes and
batches, and marks which wins by more than 5% and which the rule picks. A script, not a
test: timings are noisy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: use the gradnb of this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import interleaved_times
from gradnb.nn.functional.linear import _transposed_product_pays

LAYERS = ((784, 512), (512, 256), (256, 128), (1024, 1024))
BATCHES = (1, 8, 16, 32, 64, 128, 256)


def _plain(x, w, b):
    product = x @ w.T
    product += b
    return product


def _transposed(x, w, b):
    return np.add((w @ x.T).T, b, order="C")


def compare(x, w, b, rounds: int, calls: int) -> dict:
    """Seconds per call of each product, interleaved: (fastest round, median round)."""
    return interleaved_times({"plain": lambda: _plain(x, w, b),
                              "transposed": lambda: _transposed(x, w, b)}, rounds, calls)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (default: as is)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args(argv)
    if args.threads is not None:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads)
    rng = np.random.default_rng(0)
    print("layer (in-out)  batch   plain µs (median)   transposed µs (median)   faster   rule picks")
    for fan_in, fan_out in LAYERS:
        w = rng.standard_normal((fan_out, fan_in), dtype=np.float32)
        b = rng.standard_normal(fan_out, dtype=np.float32)
        for batch in BATCHES:
            x = rng.standard_normal((batch, fan_in), dtype=np.float32)
            np.testing.assert_allclose(_plain(x, w, b), _transposed(x, w, b), rtol=1e-4, atol=1e-3)
            r = compare(x, w, b, args.rounds, args.calls)
            (p, pm), (t, tm) = r["plain"], r["transposed"]
            faster = "transposed" if t < 0.95 * p else "plain" if p < 0.95 * t else "either"
            picks = "transposed" if _transposed_product_pays(x, w.T) else "plain"
            print(f"{fan_in:>5}-{fan_out:<8} {batch:>5}   {p * 1e6:8.1f} ({pm * 1e6:8.1f})"
                  f"   {t * 1e6:10.1f} ({tm * 1e6:8.1f})         {faster:<10} {picks}")


if __name__ == "__main__":
    main()
