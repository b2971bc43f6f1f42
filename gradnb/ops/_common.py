"""What every op needs: unwrapping operands, PyTorch's type promotion, device checks, wrapping.

Forward ops run on raw arrays and hand the result to ``record`` (``gradnb._core.record``), which
wraps it as a tensor and attaches the op's node when grad is recorded.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import device_of, get_array_module, silent
from .._core.grad_mode import state as grad_state
from .._core.record import wrap
from .._core.tensor import Tensor
from ._args import scalar_type_name as _scalar_type_name

__all__ = [
    "Tensor",
    "as_tensor_operand",
    "binary_operands",
    "can_cast",
    "cast_array",
    "check_broadcast",
    "check_fits_output",
    "check_same_device",
    "grad_state",
    "is_reduced_float",
    "result_type",
    "result_type_of",
    "scalar_op_math",
    "wrap",
]

_make = Tensor._make

# Category of a dtype kind for promotion: bool < integer < floating < complex.
# ("V" is ml_dtypes' bfloat16, the only such dtype a tensor holds.)
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}


def _scalar_category(x) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return 1
    if isinstance(x, complex):
        return 3
    return 2


def _default_for_category(cat: int):
    if cat == 0:
        return np.dtype(np.bool_)
    if cat == 1:
        return np.dtype(np.int64)
    if cat == 2:
        return _dtype.get_default_dtype().np
    return _dtype.default_complex_dtype().np


def _complex_with(float_like, complex_like):
    """A complex dtype meeting a real one: PyTorch keeps the wider of the two precisions."""
    if float_like.kind != "f":
        return complex_like
    return np.promote_types(_dtype.complex_of(float_like), complex_like)


def result_type(a, b):
    """PyTorch's result dtype (a NumPy dtype) for a binary op between tensors/Python scalars."""
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_t and b_t:
        da, db = a._data.dtype, b._data.dtype
        if da == db:
            return da
        ca, cb = _CATEGORY[da.kind], _CATEGORY[db.kind]
        za, zb = a._data.ndim == 0, b._data.ndim == 0
        if za != zb:  # a 0-d tensor only wins if it is of a higher category
            dim_t, zero_t = (db, da) if za else (da, db)
            if _CATEGORY[zero_t.kind] > _CATEGORY[dim_t.kind]:
                if zero_t.kind == "c" and dim_t.kind == "f":
                    return _dtype.complex_of(dim_t)
                return zero_t
            return dim_t
        if ca != cb:
            hi, lo = (da, db) if ca > cb else (db, da)
            return _complex_with(lo, hi) if hi.kind == "c" else hi
        return np.promote_types(da, db)
    t, s = (a, b) if a_t else (b, a)
    dt = t._data.dtype
    cat = _scalar_category(s)
    if cat > _CATEGORY[dt.kind]:
        if cat == 3 and dt.kind == "f":
            return _dtype.complex_of(dt)
        return _default_for_category(cat)
    return dt


def _promote(a, b):
    """PyTorch's ``promote_types`` of two NumPy dtypes (None: no operand yet)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        return _complex_with(lo, hi) if hi.kind == "c" else hi
    return np.promote_types(a, b)


def _combine(higher, lower):
    """PyTorch's ``combine_categories``: ``lower`` (0-d tensors, or Python numbers) changes the
    dtype only from a higher category, or beside a bool."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "c":
        return higher
    if lower.kind == "c":  # a float keeps its precision: float32[n] with complex128 0-d
        return _dtype.complex_of(higher) if _dtype.is_float_np(higher) else lower
    if _dtype.is_float_np(higher):
        return higher
    if higher.kind == "b" or _dtype.is_float_np(lower):
        return _promote(higher, lower)
    return higher


def _number_dtype(x):
    return _default_for_category(_scalar_category(x))


def result_type_of(*operands):
    """PyTorch's result dtype (a NumPy dtype) of any number of tensors and Python numbers (None
    skipped), as its ``ResultTypeState``: dimensioned tensors first, then 0-d tensors, then
    numbers, each only where its category is higher."""
    dims = zeros = numbers = None
    for x in operands:
        if isinstance(x, Tensor):
            if x._data.ndim:
                dims = _promote(dims, x._data.dtype)
            else:
                zeros = _promote(zeros, x._data.dtype)
        elif x is not None:
            numbers = _promote(numbers, _number_dtype(x))
    return _combine(dims, _combine(zeros, numbers))


def can_cast(from_dtype, to_dtype) -> bool:
    """PyTorch's ``canCast``: no complex into a real dtype, no float into an integer one, nothing
    but bool into bool."""
    return _CATEGORY[from_dtype.kind] <= _CATEGORY[to_dtype.kind]


def cast_array(data, np_dtype, stacklevel: int = 3):
    """``data`` converted to ``np_dtype`` as PyTorch's copy converts: a complex value is True
    where either part is nonzero, and loses its imaginary part in any other real dtype, with
    PyTorch's warning (NumPy would keep the real part only, or warn its own warning)."""
    if data.dtype.kind == "c" and np_dtype.kind != "c":
        if np_dtype.kind == "b":
            return data != 0
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=stacklevel + 1)
        data = data.real
    if data.dtype.kind == "f" and np_dtype.kind in "iu":
        with silent():  # NaN and inf become some integer silently, as in PyTorch
            return data.astype(np_dtype)
    return data.astype(np_dtype)


def check_fits_output(out, shape, dtype) -> None:
    """A result of ``shape`` and ``dtype`` (NumPy's) written into the array ``out``, as PyTorch's
    TensorIterator checks an in-place op's output: its shape first, then the cast."""
    if tuple(shape) != out.shape:
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    if not can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {_scalar_type_name(dtype)} can't be cast to the "
                           f"desired output type {_scalar_type_name(out.dtype)}")


def check_same_device(a_data, b_data) -> None:
    if type(a_data) is not type(b_data):
        da, db = device_of(a_data), device_of(b_data)
        if da == db:  # different array types on one device (a NumPy scalar and an array)
            return
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{db} and {da}!"
        )


def check_broadcast(shape_a, shape_b) -> None:
    """Raise PyTorch's error (not NumPy's) when two shapes do not broadcast."""
    n = max(len(shape_a), len(shape_b))
    for i in range(1, n + 1):
        sa = shape_a[-i] if i <= len(shape_a) else 1
        sb = shape_b[-i] if i <= len(shape_b) else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b "
                               f"({sb}) at non-singleton dimension {n - i}")


def is_reduced_float(dtype) -> bool:
    """float16 or bfloat16: the dtypes PyTorch's CPU kernels compute in float32 ("op math")."""
    return dtype.itemsize == 2 and (dtype.kind == "f" or _dtype.is_bfloat16_np(dtype))


def scalar_op_math(ufunc, a, scalar):
    """``ufunc(a, scalar)`` for a float16 or bfloat16 array ``a`` and a real scalar second
    operand (a Python number, or a 0-d array of any dtype), as PyTorch's CPU kernels compute
    ``x * 0.7`` and ``x / c``: in float32, its op math type for both, with the scalar's own
    value, rounded once to ``a``'s dtype. NumPy rounds the scalar to ``a``'s dtype first, which
    puts the last bit of ``x * 0.7`` off on 40% of a float16 tensor's elements. (PyTorch does
    this for a scalar second operand only: ``c * x`` with a 0-d ``c`` rounds ``c`` first.)"""
    with silent():  # x / 0 is inf silently, as in PyTorch
        return ufunc(a.astype(np.float32), np.float32(scalar)).astype(a.dtype)


def _number_or_constant(b) -> bool:
    """Whether ``b`` (a second operand) is a real Python number, or a 0-d array of a real
    type: what ``scalar_op_math`` takes."""
    if type(b) is float or type(b) is int or type(b) is bool:
        return True
    return getattr(b, "ndim", None) == 0 and b.dtype.kind in "biufV"


def reduced_scalar_operand(a, tb, b):
    """The scalar to compute ``a <op> b`` with in op math, or None: ``a`` (the first operand's
    array, after promotion) is float16 or bfloat16 and the second operand is a real number, or
    a 0-d tensor ``tb`` (whose own value counts, not the copy promotion rounded to ``a``'s
    dtype)."""
    dtype = getattr(a, "dtype", None)
    if dtype is None or not is_reduced_float(dtype):
        return None
    if tb is not None:
        b = tb._data
        if b.ndim != 0 or b.dtype == dtype:
            return None  # a same-dtype constant: NumPy's numbers are PyTorch's
    return b if _number_or_constant(b) else None


def binary_operands(a, b, broadcast: bool = True):
    """Unwrap two operands (at least one a tensor) to arrays of the promoted dtype.

    Returns ``(ta, tb, xa, xb)``: the tensor operands (None for Python scalars) and the arrays
    (or scalars) to compute with. ``broadcast=False`` (matmul) skips the elementwise
    broadcast check.
    """
    # Fast paths for the common cases: same-dtype tensors, and a float tensor with a Python float.
    if type(a) is Tensor:
        xa = a._data
        if type(b) is Tensor:
            xb = b._data
            sa, sb = xa.shape, xb.shape
            # (a 0-d operand, ``x * gradnb.tensor(0.9)``, always broadcasts: no check)
            if broadcast and sa != sb and sa and sb:
                check_broadcast(sa, sb)
            if type(xa) is type(xb):
                if xa.dtype is xb.dtype:
                    return a, b, xa, xb
                # One 0-d operand of a category no higher than the other's: the other's dtype
                # wins (PyTorch: float64[n] * float32 0-d and float32[n] * float64 0-d both
                # keep the dimensioned tensor's dtype).
                if sa and not sb and _CATEGORY.get(xb.dtype.kind, 9) <= _CATEGORY.get(
                        xa.dtype.kind, -1):
                    return a, b, xa, xb.astype(xa.dtype)
                if sb and not sa and _CATEGORY.get(xa.dtype.kind, 9) <= _CATEGORY.get(
                        xb.dtype.kind, -1):
                    return a, b, xa.astype(xb.dtype), xb
        elif type(b) is float and xa.dtype.kind == "f":
            return a, None, xa, b
    a_t = isinstance(a, Tensor)
    b_t = isinstance(b, Tensor)
    if a_t and b_t:
        xa, xb = a._data, b._data
        if broadcast and xa.shape != xb.shape:
            check_broadcast(xa.shape, xb.shape)
        if type(xa) is not type(xb):
            check_same_device(xa, xb)
        if xa.dtype != xb.dtype:
            rt = result_type(a, b)
            if xa.dtype != rt:
                xa = xa.astype(rt)
            if xb.dtype != rt:
                xb = xb.astype(rt)
        return a, b, xa, xb
    if a_t:
        xa = a._data
        if not isinstance(b, (int, float, bool, complex)):
            return a, *_coerce_other(a, b, first=True)
        rt = result_type(a, b)
        if xa.dtype != rt:
            return a, None, xa.astype(rt), _scalar_array(b, rt)
        if type(b) is int and rt.kind in "iu" and (b < 0 or b > 127):
            b = _scalar_array(b, rt)  # uint8 + (-1): PyTorch wraps the scalar to the dtype
        return a, None, xa, b
    if b_t:
        xb = b._data
        if not isinstance(a, (int, float, bool, complex)):
            ta, xa, xb2 = _coerce_other(b, a, first=False)
            return ta, b, xa, xb2
        rt = result_type(b, a)
        if xb.dtype != rt:
            return None, b, _scalar_array(a, rt), xb.astype(rt)
        if type(a) is int and rt.kind in "iu" and (a < 0 or a > 127):
            a = _scalar_array(a, rt)
        return None, b, a, xb
    raise TypeError("expected at least one tensor operand")


def _scalar_array(value, dtype):
    """``value`` as a NumPy scalar of ``dtype``; an integer out of the dtype's range wraps
    around, as PyTorch converts it (NumPy would raise OverflowError)."""
    return np.asarray(value).astype(dtype)[()]


def _coerce_other(t, other, first):
    """A non-scalar, non-tensor operand (a NumPy array or a list): treat it as a constant tensor."""
    if isinstance(other, np.generic):
        other = other.item()
        rt = result_type(t, other)
        x = t._data if t._data.dtype == rt else t._data.astype(rt)
        return (None, x, other) if first else (None, other, x)
    if hasattr(other, "shape") and hasattr(other, "dtype"):
        o = _make(get_array_module(other).asarray(other))  # a raw NumPy or CuPy array
    else:
        o = _make(np.asarray(other))
    if o._data.dtype.kind == "f" and o._data.dtype != _dtype.get_default_dtype().np and not isinstance(other, np.ndarray):
        o = _make(o._data.astype(_dtype.get_default_dtype().np))
    a, b = (t, o) if first else (o, t)
    _, _, xa, xb = binary_operands(a, b)
    if first:
        return None, xa, xb
    return None, xa, xb


def as_tensor_operand(x, like: Tensor) -> Tensor:
    """Turn a Python number or array into a tensor on ``like``'s device (no grad)."""
    if isinstance(x, Tensor):
        return x
    xp = get_array_module(like._data)
    if isinstance(x, (bool, int, float)):
        # an int out of the dtype's range wraps around, as PyTorch converts it
        return _make(xp.asarray(x).astype(result_type(like, x)))
    return _make(xp.asarray(x))
