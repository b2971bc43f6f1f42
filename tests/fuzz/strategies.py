"""Small hypothesis strategies for the differential fuzzer: dtypes, shapes, and arrays drawn
from a seed (a NumPy generator fills them, so a case shrinks to a short, readable seed)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

BOOL = ("bool",)
INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float32", "float64")
COMPLEXES = ("complex64", "complex128")
ALL_DTYPES = BOOL + INTS + FLOATS + COMPLEXES
GRAD_DTYPES = ("float64", "complex128")  # the dtypes whose inputs the fuzzer differentiates

seeds = st.integers(0, 2**32 - 1)


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4):
    """Tensor shapes with ``min_dims..max_dims`` dimensions of ``min_side..max_side``."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims,
                    max_size=max_dims).map(tuple)


def array(rng: np.random.Generator, shape, dtype: str, low: float = -3.0,
          high: float = 3.0, ties: bool = False) -> np.ndarray:
    """An array of ``dtype``: values in ``[low, high]`` (uint8 from 0), both parts for complex;
    ``ties`` draws floats from a few integers so that equal values (ties in max/min) occur."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if kind in "iu" or ties:
        lo = 0 if kind == "u" else int(low)
        values = rng.integers(lo, int(high) + 1, size=shape)
        if kind == "c":
            values = values + 1j * rng.integers(lo, int(high) + 1, size=shape)
        return np.asarray(values, dtype=dtype)
    values = rng.uniform(low, high, size=shape)
    if kind == "c":
        values = values + 1j * rng.uniform(low, high, size=shape)
    return np.asarray(values, dtype=dtype)


def well_conditioned(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Square matrices (batched) whose diagonal dominates: invertible, condition number small."""
    n = shape[-1]
    a = array(rng, shape, dtype, -1.0, 1.0)
    return a + np.asarray((n + 1) * np.eye(n), dtype=dtype)


def positive_definite(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Hermitian positive-definite matrices (batched), well conditioned."""
    a = array(rng, shape, dtype, -1.0, 1.0)
    n = shape[-1]
    return a @ np.swapaxes(a.conj(), -1, -2) + np.asarray(n * np.eye(n), dtype=dtype)


def full_rank(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Rectangular matrices (batched) of full rank with distinct singular values well apart."""
    m, n = shape[-2:]
    a = array(rng, shape, dtype, -0.5, 0.5)
    k = min(m, n)
    eye = np.zeros((m, n))
    eye[range(k), range(k)] = np.arange(k, 0, -1) + 1.0
    return a + np.asarray(eye, dtype=dtype)
