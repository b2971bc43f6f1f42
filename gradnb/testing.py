"""``gradnb.testing``: PyTorch's ``assert_close`` and ``make_tensor`` for tests written against
``torch.testing``.

``assert_close`` compares as PyTorch's does: tensors (and NumPy arrays) by shape, device, dtype,
layout and then values within ``rtol``/``atol`` (by default the looser dtype's precision, exact
for integers), Python numbers likewise, sequences and mappings item by item; a mismatch raises
PyTorch's ``AssertionError`` with its report (how many elements differ, the greatest absolute and
relative differences and where).
"""

from __future__ import annotations

import cmath
import collections.abc
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import dtype as _dtype
from ._core.tensor import Tensor
from .ops.creation import _rng, tensor

__all__ = ["assert_close", "make_tensor"]

# (rtol, atol) of each floating dtype; every other dtype compares exactly.
_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message and the item path."""

    def __init__(self, kind: type, message: str, path: tuple = ()) -> None:
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path

    def to_error(self, msg) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += f"\n\nThe failure occurred for item {''.join(str([k]) for k in self.path)}"
        return self.kind(msg(text) if callable(msg) else text)


def _tolerances(*dtype_names: str, rtol, atol) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {missing}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _mismatch_report(identifier: str, extra: str, abs_diff, abs_at, rel_diff, rel_at,
                     rtol: float, atol: float) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff, at, tol) -> str:
        text = (f"{kind.title()} difference: {diff}" if at is None
                else f"Greatest {kind} difference: {diff} at index {at}")
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    text += line("absolute", abs_diff, abs_at, atol) + line("relative", rel_diff, rel_at, rtol)
    return text.strip()


def _scalar_report(actual, expected, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_report("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                            rel_diff, None, rtol, atol)


def _compare_numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype, path) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                        f"{type(expected)}.", path)
    rtol, atol = _tolerances(_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)],
                             rtol=rtol, atol=atol)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_report(actual, expected, rtol, atol), path)


def _as_array(value) -> np.ndarray:
    return np.asarray(value.detach().cpu()._data) if isinstance(value, Tensor) else value


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype,
                     check_layout, check_stride, path) -> None:
    def fail(attribute: str, a, b):
        raise _Mismatch(AssertionError, f"The values for attribute '{attribute}' do not match: "
                        f"{a} != {b}.", path)

    tensors = isinstance(actual, Tensor)
    if actual.shape != expected.shape:
        fail("shape", actual.shape, expected.shape)
    if tensors and check_device and actual.device != expected.device:
        fail("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        fail("dtype", actual.dtype, expected.dtype)
    if tensors and check_layout and actual.layout != expected.layout:
        fail("layout", actual.layout, expected.layout)
    if tensors and check_stride and actual.stride() != expected.stride():
        fail("stride()", actual.stride(), expected.stride())
    a, b = _as_array(actual), _as_array(expected)
    rtol, atol = _tolerances(a.dtype.name, b.dtype.name, rtol=rtol, atol=atol)
    if a.dtype != b.dtype:  # compared in the common dtype, as PyTorch's ``promote_types``
        from .ops._common import _promote

        common = _promote(a.dtype, b.dtype)
        a, b = a.astype(common), b.astype(common)
    with np.errstate(all="ignore"):
        if a.dtype.kind in "biu":
            matches = a == b
        else:
            matches = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_report(a.item(), b.item(), rtol, atol), path)
    raise _Mismatch(AssertionError, _tensor_report(a, b, matches, rtol, atol), path)


def _tensor_report(a: np.ndarray, b: np.ndarray, matches: np.ndarray, rtol, atol) -> str:
    total, mismatched = matches.size, int(matches.size - matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    flat_a, flat_b, flat_m = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if flat_a.dtype.kind in "biu":  # integers (and bools) differ in int64, divide as floats
        flat_a, flat_b = flat_a.astype(np.int64), flat_b.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(flat_a - flat_b)
        abs_diff[flat_m] = 0
        denominator = np.abs(flat_b)
        if abs_diff.dtype.kind in "iu":
            rel_diff = abs_diff.astype(np.float32) / denominator.astype(np.float32)
        else:
            rel_diff = abs_diff / denominator
        rel_diff[flat_m] = 0

    def greatest(diff):
        at = int(np.nanargmax(diff)) if not np.isnan(diff).all() else 0
        if np.isnan(diff).any():  # PyTorch's max propagates NaN: the first NaN wins
            at = int(np.flatnonzero(np.isnan(diff))[0])
        return diff[at].item(), tuple(int(i) for i in np.unravel_index(at, a.shape))

    abs_max, abs_at = greatest(abs_diff)
    rel_max, rel_at = greatest(rel_diff)
    return _mismatch_report("Tensor-likes", extra, abs_max, abs_at, rel_max, rel_at, rtol, atol)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, complex)) and not isinstance(value, bool)


def _compare(actual, expected, path: tuple, options: dict) -> None:
    tensor_like = (Tensor, np.ndarray)
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)
        return
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}",
                            path)
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, path=path, rtol=options["rtol"],
                         atol=options["atol"], equal_nan=options["equal_nan"],
                         check_dtype=options["check_dtype"])
        return
    if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
        if (type(actual) is not type(expected) and not options["allow_subclasses"]) \
                or isinstance(actual, Tensor) != isinstance(expected, Tensor):
            _unsupported(actual, expected, path)
        _compare_tensors(actual, expected, path=path, **options["tensor"])
        return
    sequences = (collections.abc.Sequence,)
    if isinstance(actual, sequences) and isinstance(expected, sequences) \
            and not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, (*path, i), options)
        return
    mappings = collections.abc.Mapping
    if isinstance(actual, mappings) and isinstance(expected, mappings):
        missing, extra = expected.keys() - actual.keys(), actual.keys() - expected.keys()
        if missing or extra:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(missing)}\n"
                            f"Additional keys in the actual mapping: {sorted(extra)}", path)
        for key in sorted(actual.keys(), key=str):
            _compare(actual[key], expected[key], (*path, key), options)
        return
    _unsupported(actual, expected, path)


def _unsupported(actual, expected, path) -> None:
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.", path)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close, as PyTorch's
    ``torch.testing.assert_close`` (``msg``: the message instead, or a function of it)."""
    if (rtol is None) != (atol is None):
        _tolerances(rtol=rtol, atol=atol)
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_dtype": check_dtype,
               "allow_subclasses": allow_subclasses,
               "tensor": {"rtol": rtol, "atol": atol, "equal_nan": equal_nan,
                          "check_device": check_device, "check_dtype": check_dtype,
                          "check_layout": check_layout, "check_stride": check_stride}}
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as mismatch:
        raise mismatch.to_error(msg) from None


def make_tensor(*shape, dtype, device=None, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None) -> Tensor:
    """A tensor of ``shape`` with random values in ``[low, high)`` (PyTorch's defaults: -9 to 9
    for signed and floating dtypes, 0 to 10 for uint8, either value for bool), drawn from
    gradnb's generator."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    d = _dtype.as_dtype(dtype)
    kind = d.np.kind
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
    rng = _rng(None)
    if kind == "b":
        data = rng.integers(0, 2, size=shape).astype(bool)
    elif kind in "iu":
        info = np.iinfo(d.np)
        lo = max(math.ceil(low) if low is not None else (0 if kind == "u" else -9), info.min)
        hi = min(math.ceil(high) if high is not None else 10, info.max)
        data = rng.integers(lo, max(hi, lo + 1), size=shape).astype(d.np)
    else:
        lo = -9.0 if low is None else low
        hi = 9.0 if high is None else high
        data = rng.uniform(lo, hi, size=shape)
        if kind == "c":
            data = data + 1j * rng.uniform(lo, hi, size=shape)
    if exclude_zero:
        smallest = 1 if kind in "biu" else float(np.finfo(np.float32).tiny)
        data = np.where(data == 0, smallest, data)
    t = tensor(data, dtype=d, device=device)
    if noncontiguous and t.numel() > 1:
        t = tensor(np.repeat(data, 2, axis=-1), dtype=d, device=device)[..., ::2]
    if requires_grad:
        t.requires_grad_(True)
    return t
