"""Counting and integer bit ops: bincount, histc, histogram, bitwise_and/or/xor, gcd, lcm.

None of these has a gradient in PyTorch (their results are counts or integers), so they record
nothing: each computes on the arrays and wraps the result.
"""

from __future__ import annotations

import collections

import numpy as np

from .._core.backend import get_array_module
from ._common import Tensor, binary_operands, wrap

__all__ = ["bincount", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "histc", "histogram",
           "lcm"]

_histogram_result = collections.namedtuple("histogram", ["hist", "bin_edges"])

_DTYPE_NAMES = {"f": "Float", "d": "Double", "e": "Half", "F": "ComplexFloat",
                "D": "ComplexDouble", "?": "Bool", "q": "Long", "l": "Long", "i": "Int"}


def _type_name(data) -> str:
    return _DTYPE_NAMES.get(data.dtype.char, str(data.dtype))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0 .. max(input)`` occurs in a 1-D tensor of non-negative integers
    (summing ``weights`` instead of counting ones, when given)."""
    x = input._data
    if x.dtype.kind not in "iub":
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_type_name(x)}\'')
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    xp = get_array_module(x)
    if weights is None:
        return wrap(xp.bincount(x, minlength=minlength).astype(np.int64))
    w = weights._data
    if w.shape != x.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = w.dtype if w.dtype.kind == "f" else np.float64
    counts = xp.bincount(x, weights=w.astype(np.float64), minlength=minlength)
    return wrap(counts.astype(out_dtype if w.dtype == np.float32 else np.float64))


def _float_only(name: str, data) -> None:
    if data.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for \'{_type_name(data)}\'')


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of ``input`` in ``bins`` equal bins over ``[min, max]`` (the data's own range when
    both are 0); values outside are ignored."""
    x = input._data
    _float_only("histogram_cpu", x)
    if bins <= 0:
        raise RuntimeError(f"gradnb.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("gradnb.histc: max must be larger than min")
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(np.asarray(x, dtype=np.float64), bins=bins, range=(lo, hi))
    return wrap(get_array_module(x).asarray(counts.astype(x.dtype)))


def histogram(input: Tensor, bins=100, *, range=None, weight: Tensor | None = None,
              density: bool = False):
    """``(hist, bin_edges)``: counts (or summed ``weight``, or a density) of ``input`` in
    ``bins`` equal bins (over ``range``, else the data's range) or between the given edges."""
    x = input._data
    _float_only("histogramdd", x)
    edges = bins._data if isinstance(bins, Tensor) else bins
    w = None if weight is None else np.asarray(weight._data, dtype=np.float64).reshape(-1)
    hist, bin_edges = np.histogram(np.asarray(x, dtype=np.float64).reshape(-1), bins=edges,
                                   range=range, weights=w, density=density)
    return _histogram_result(wrap(hist.astype(x.dtype)), wrap(bin_edges.astype(x.dtype)))


def _integer_op(name: str, ufunc):
    def op(input, other) -> Tensor:
        _, _, a, b = binary_operands(input, other)
        kind = np.result_type(a, b).kind
        if kind not in "iub" or (ufunc in (np.gcd, np.lcm) and kind == "b"):
            data = a if isinstance(a, np.ndarray) else b
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_type_name(np.asarray(data))}'")
        return wrap(np.asarray(ufunc(a, b)))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` of integer (or bool) tensors, as PyTorch's."
    return op


bitwise_and = _integer_op("bitwise_and", np.bitwise_and)
bitwise_or = _integer_op("bitwise_or", np.bitwise_or)
bitwise_xor = _integer_op("bitwise_xor", np.bitwise_xor)
gcd = _integer_op("gcd", np.gcd)
lcm = _integer_op("lcm", np.lcm)

TENSOR_METHODS = {"bincount": bincount, "histc": histc, "histogram": histogram,
                  "bitwise_and": bitwise_and, "bitwise_or": bitwise_or,
                  "bitwise_xor": bitwise_xor, "gcd": gcd, "lcm": lcm}
