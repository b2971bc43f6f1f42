"""PyTorch's "op math" for float16 and bfloat16: composite formulas computed in float32 and
rounded once.

PyTorch's CPU kernels load a half-precision tensor's elements as float32, evaluate the whole
formula there (``a + alpha * b``, ``x + value * t1 * t2``, ``log1p(exp(beta x)) / beta``) and
round the result once to the tensor's dtype; where its vector code uses a fused multiply-add,
that step rounds once too. NumPy evaluated in the tensor's dtype rounds every step instead, and
puts the last bit off on 8-55% of the elements. The ops here call these helpers for
half-precision operands and keep NumPy's own evaluation for every other dtype.

(PyTorch's last few elements of a tensor whose length is not a multiple of its vector width go
through its scalar loop, which for ``add`` with ``alpha`` rounds ``alpha * b`` first: gradnb
computes every element as the vector loop does.)
"""

from __future__ import annotations

import numpy as np

from ._common import is_reduced_float

__all__ = ["fused_multiply_add", "half_precision", "to_op_math"]

_float32 = np.float32


def half_precision(*arrays) -> bool:
    """Whether ``arrays`` are all float16, or all bfloat16 (one dtype): what these helpers are
    for. Anything else (numbers, mixed dtypes) keeps NumPy's evaluation."""
    dtype = getattr(arrays[0], "dtype", None)
    return (dtype is not None and is_reduced_float(dtype)
            and all(getattr(a, "dtype", None) == dtype for a in arrays[1:]))


def to_op_math(x):
    """The float32 values of a half-precision array (exact: every half value is a float32)."""
    return x.astype(_float32)


def fused_multiply_add(x, y, z):
    """``x * y + z`` in float32 rounded once, as the vector ``fmadd`` of PyTorch's kernels:
    evaluated in float64, where the product of two float32 values is exact, then rounded."""
    return (x.astype(np.float64) * y + z).astype(_float32)
