"""bincount, histc, histogram and the integer bit ops, against torch on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _both(call):
    """``call(lib)`` in torch and gradnb: both results, or both errors (type, message)."""
    out = []
    for lib in (torch, gradnb):
        try:
            out.append(call(lib))
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            out.append((type(exc), str(exc).replace("torch.", "gradnb.")))
    return out


def _same(t, g):
    if isinstance(t, tuple) and isinstance(t[0], type):
        assert g == t
        return
    if isinstance(t, tuple):
        assert type(g).__name__ == type(t).__name__.rsplit(".", 1)[-1]
        assert (g.hist, g.bin_edges) == tuple(g)
        for a, b in zip(t, g):
            _same(a, b)
        return
    assert str(g.dtype).removeprefix("gradnb.") == str(t.dtype).removeprefix("torch.")
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)


CASES = {
    "counts": lambda lib: lib.bincount(lib.tensor([1, 1, 3])),
    "minlength": lambda lib: lib.bincount(lib.tensor([1, 1, 3]), minlength=6),
    "weights": lambda lib: lib.bincount(lib.tensor([1, 1, 3]),
                                        weights=lib.tensor([0.5, 1.0, 2.0])),
    "int weights": lambda lib: lib.bincount(lib.tensor([1, 2]), weights=lib.tensor([1, 2])),
    "empty": lambda lib: lib.bincount(lib.tensor([], dtype=lib.long)),
    "negative": lambda lib: lib.bincount(lib.tensor([-1, 1])),
    "2-d": lambda lib: lib.bincount(lib.tensor([[1, 1]])),
    "float input": lambda lib: lib.bincount(lib.tensor([1.0, 1.0])),
    "bad minlength": lambda lib: lib.bincount(lib.tensor([1, 2]), minlength=-1),
    "bad weights": lambda lib: lib.bincount(lib.tensor([1, 2]), weights=lib.tensor([1.0])),
    "histc": lambda lib: lib.histc(lib.tensor([1.0, 2, 1]), bins=4, min=0, max=3),
    "histc own range": lambda lib: lib.histc(lib.tensor([1.0, 2, 1]), bins=4),
    "histc empty": lambda lib: lib.histc(lib.tensor([]), bins=3),
    "histc min > max": lambda lib: lib.histc(lib.tensor([1.0]), min=3, max=1),
    "histc int": lambda lib: lib.histc(lib.tensor([1, 2])),
    "histogram edges": lambda lib: lib.histogram(lib.tensor([1.0, 2, 1]),
                                                 bins=lib.tensor([0.0, 1, 2, 3])),
    "histogram density": lambda lib: lib.histogram(lib.tensor([1.0, 2, 1]), bins=4,
                                                   range=(0.0, 3.0), density=True),
    "histogram weight": lambda lib: lib.histogram(lib.tensor([1.0, 2, 1]), bins=4,
                                                  weight=lib.tensor([1.0, 2, 3])),
    "histogram int": lambda lib: lib.histogram(lib.tensor([1, 2, 1]), bins=4),
    "xor bool": lambda lib: lib.bitwise_xor(lib.tensor([True, False]), lib.tensor([True, True])),
    "xor scalar": lambda lib: lib.bitwise_xor(lib.tensor([5, 2]), 3),
    "xor float": lambda lib: lib.bitwise_xor(lib.tensor([1.0, 2]), lib.tensor([1, 2])),
    "and": lambda lib: lib.tensor([6, 3]).bitwise_and(lib.tensor([3, 1])),
    "or": lambda lib: lib.bitwise_or(lib.tensor([6, 3], dtype=lib.int32), lib.tensor([1, 4])),
    "gcd": lambda lib: lib.gcd(lib.tensor([4, 6]), lib.tensor([6, 9])),
    "lcm": lambda lib: lib.lcm(lib.tensor([4, 6]), lib.tensor([6, 9])),
    "gcd bool": lambda lib: lib.gcd(lib.tensor([True]), lib.tensor([True])),
}


@pytest.mark.parametrize("case", CASES)
def test_as_torch(case):
    t, g = _both(CASES[case])
    _same(t, g)
