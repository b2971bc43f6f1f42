"""``p.T @ q``, a sum of outer products such as a weight's gradient, in the calls NumPy's BLAS
runs fastest.

A linear layer's weight gradient is ``g.T @ h``: the layer's output gradient ``g`` (batch x out)
and its input ``h`` (batch x in), both C-contiguous, give an out x in result in the weight's own
layout. The inner dimension is the batch, short next to the result. OpenBLAS, the BLAS NumPy's
wheels ship, shares such a product between its threads badly when the result is at least as
wide as it is tall: with two threads ``g.T @ h`` for a 784-512 layer at batch 16 takes 190 us,
with one 124 us, and the same product in the other orientation (``h.T @ g``, what a NumPy MLP
with in x out weights computes) 77 us. Computing the result in column blocks of half its rows
each hands OpenBLAS products taller than wide, which two threads do share well: 90 us, and the
same numbers (every entry is the same dot product over the batch, in the same order).

Where it pays was measured with OpenBLAS 0.3.31 on AVX-512, two threads, float32
(``python benchmarks/bench_weight_grad_layout.py``): results of at least 256 rows and between
one and two times as many columns, batches of 2 to 64: from 0.12 to 0.98 of the time. It is
about even at batch 128 (0.85-1.06, and no faster within a whole training step) and loses from
256 on, with one thread (1.1-1.2x), for float64 and for narrower results, so those keep the one
call.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["block_width", "threads_changed", "transposed_product"]

_ndarray = np.ndarray
_float32 = np.dtype(np.float32)

_MIN_ROWS = 256
_MAX_INNER = 64

# NumPy's BLAS as the rule sees it: (is OpenBLAS, its thread count), read once on first use
# (threadpoolctl inspects the loaded libraries, about a millisecond) and set again by
# ``gradnb.set_num_threads``.
_blas: tuple[bool, int] | None = None


def _blas_state() -> tuple[bool, int]:
    global _blas
    if _blas is None:
        from threadpoolctl import threadpool_info  # loaded on first use: import stays light

        pools = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
        openblas = bool(pools) and all(pool["internal_api"] == "openblas" for pool in pools)
        _blas = (openblas, max((pool["num_threads"] for pool in pools), default=1))
    return _blas


def threads_changed(threads: int) -> None:
    """``gradnb.set_num_threads`` has set the BLAS pools to ``threads``."""
    global _blas
    _blas = (_blas_state()[0], threads)


def block_width(p, q) -> int:
    """The width of the column blocks ``transposed_product`` computes ``p.T @ q`` in, or 0 for
    one call (see the module's docstring)."""
    k, m = p.shape
    n = q.shape[1]
    # The shapes first: most products fail them, and reading ``flags`` builds an object.
    if m < _MIN_ROWS or not m <= n <= 2 * m or not 2 <= k <= _MAX_INNER \
            or type(p) is not _ndarray or type(q) is not _ndarray \
            or p.dtype != _float32 or q.dtype != _float32 \
            or not (p.flags.c_contiguous and q.flags.c_contiguous):
        return 0
    openblas, threads = _blas_state()
    return m // 2 if openblas and threads >= 2 else 0


def transposed_product(p, q):
    """``p.T @ q`` for 2-d ``p`` (k x m) and ``q`` (k x n): in column blocks where the one BLAS
    call is slow, else the one call. The same numbers either way."""
    width = block_width(p, q)
    if not width:
        return p.T @ q
    n = q.shape[1]
    out = np.empty((p.shape[1], n), p.dtype)
    left = p.T
    for start, stop in _blocks(n, width):
        np.matmul(left, q[:, start:stop], out=out[:, start:stop])
    return out


def _blocks(n: int, width: int) -> list[tuple[int, int]]:
    """``n`` columns in blocks of about ``width``, every block a product BLAS multiplies as it
    does the whole (no sliver of a few columns, which NumPy would hand to a matrix-vector routine
    that sums in another order): as many blocks as ``width`` fits, the boundaries on multiples
    of 16."""
    count = max(1, round(n / width))
    bounds = [0] + [(i * n // count) // 16 * 16 for i in range(1, count)] + [n]
    return list(itertools.pairwise(bounds))
