"""Argument checks every op shares, worded as PyTorch's argument parser and ATen checks word them.

One helper per kind of check (a tensor where only a tensor is accepted, dimension wrapping, a
non-empty tensor list, the ``out=`` keyword, ...), so each op states what it accepts instead of
formatting its own message.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .._core.tensor import Tensor
from .._core.tensor import _wrap_dim as wrap_dim

__all__ = [
    "check_dtype_arg",
    "check_min_dims",
    "check_nonempty_list",
    "check_tensor_only",
    "check_tensor_or_number",
    "check_value_fits",
    "converted_number",
    "cpp_type_name",
    "int_arg",
    "number_limits",
    "reflected",
    "scalar_type_name",
    "size_arg",
    "type_name",
    "wrap_dim",
]


_SCALAR_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                      "float64": "Double", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble", "int8": "Char", "int16": "Short",
                      "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool"}


def scalar_type_name(dtype) -> str:
    """PyTorch's C++ ScalarType name of a dtype (NumPy's or gradnb's), as its messages print it
    (``Float``, ``Long``)."""
    name = getattr(dtype, "name", str(dtype))
    return _SCALAR_TYPE_NAMES.get(name, name)


_CONVERT_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                  "float64": "double", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                  "int64": "int64_t", "uint8": "uint8_t", "bool": "bool"}


def check_value_fits(value, dtype) -> None:
    """PyTorch's check that a fill value (a number or 0-d tensor, read as its number) converts to
    ``dtype`` (NumPy's or gradnb's): see ``converted_number``."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            return  # (not a fill value: the caller refuses it)
        value = value.item()
    converted_number(value, getattr(dtype, "np", dtype))


_CPP_TYPE_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                   "float64": "double", "int8": "signed char", "int16": "short int",
                   "int32": "int", "int64": "long int", "uint8": "unsigned char", "bool": "bool",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def cpp_type_name(dtype) -> str:
    """The C++ element type's name (``unsigned char``, ``long int``), as PyTorch's messages print
    a tensor's ``dtype()`` (a ``TypeMeta``) rather than its ScalarType."""
    name = getattr(dtype, "name", str(dtype))
    return _CPP_TYPE_NAMES.get(name, name)


def converted_number(value, dtype):
    """A Python number as a NumPy scalar of ``dtype``, converted as PyTorch's ``Scalar.to<T>()``
    does: RuntimeError where the value overflows ``dtype`` (a complex one with an imaginary
    part overflows a real dtype), and a negative integer wraps into an unsigned dtype as
    two's complement (-3 is 253 in uint8; c10 allows down to -255)."""
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    kind = dtype.kind
    if kind == "b":
        return np.bool_(value != 0)
    if kind == "c":
        return dtype.type(value)
    if isinstance(value, complex):
        if value.imag:
            _overflow(dtype)
        value = value.real
    low, high = number_limits(dtype)
    if kind in "iu":
        if isinstance(value, int) and -high <= value < low:
            value += high + 1  # a negative integer wraps into an unsigned dtype
        elif isinstance(value, float) and math.isnan(value):
            _overflow(dtype)  # (a float must fit: NaN and inf never do)
    if (value < low or value > high) and (kind in "iu" or math.isfinite(value)):
        _overflow(dtype)  # (inf and NaN fit a float dtype)
    return dtype.type(value)


_LIMITS: dict = {}


def number_limits(dtype) -> tuple:
    """The lowest and highest finite values of a real NumPy dtype (bfloat16 included)."""
    limits = _LIMITS.get(dtype)
    if limits is None:
        if dtype.kind in "iub":
            info = np.iinfo(dtype)
        elif dtype.name == "bfloat16":
            import ml_dtypes  # only a bfloat16 tensor gets here, so ml_dtypes is installed

            info = ml_dtypes.finfo(dtype)
        else:
            info = np.finfo(dtype)
        limits = _LIMITS[dtype] = (info.min.item() if hasattr(info.min, "item") else info.min,
                                   info.max.item() if hasattr(info.max, "item") else info.max)
    return limits


def _overflow(dtype):
    name = getattr(dtype, "name", str(dtype))
    raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAMES.get(name, name)} "
                       "without overflow")


def check_kernel_dtype(kernel: str, dtype, refused: str) -> None:
    """PyTorch's NotImplementedError where its ``kernel`` has no implementation for ``dtype`` (a
    NumPy dtype whose ``kind`` is in ``refused``: ``"c"`` complex, ``"fc"`` floating...)."""
    if dtype.kind in refused:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(dtype)}\'')


def type_name(value) -> str:
    """The name PyTorch's argument parser gives a value's type (``Tensor``, ``int``, ``tuple``)."""
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def check_tensor_only(fname: str, *args, names=("input", "other")) -> None:
    """Refuse a non-tensor where the op's only signature takes tensors (``atan2(2, x)``)."""
    for position, (name, value) in enumerate(zip(names, args), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type_name(value)}")


def check_tensor_or_number(fname: str, input, *others, other: str = "other") -> None:
    """Refuse a non-tensor ``input`` where the op's signatures are ``(Tensor, Tensor)`` and
    ``(Tensor, Number)`` (``fmod(2, x)``), as PyTorch's parser does."""
    if not isinstance(input, Tensor):
        got = ", ".join(type_name(v) for v in (input, *others))
        raise TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n * (Tensor input, Tensor {other})\n"
                        f" * (Tensor input, Number {other})")


def reflected(name: str, fn):
    """The reflected operator ``name`` (``__radd__``) calling ``fn(self, other)``; called unbound
    on a non-tensor (``Tensor.__radd__(2, x)``) it raises Python's descriptor TypeError, as
    PyTorch's C methods do."""

    def method(self, other):
        if not isinstance(self, Tensor):
            raise TypeError(f"descriptor '{name}' for 'gradnb.Tensor' objects doesn't apply to a "
                            f"'{type(self).__name__}' object")
        return fn(self, other)

    method.__name__ = name
    return method


def _is_int(value) -> bool:
    if isinstance(value, bool):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def size_arg(fname: str, size) -> tuple:
    """A factory's ``*size`` (``zeros(2, 3)``, ``zeros((2, 3))``) as a tuple of ints, refusing
    what PyTorch's parser refuses (``ones(2.5)``) with its words; negative sizes are the
    caller's to check (PyTorch words them per factory)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        for i, s in enumerate(size[0]):
            if not _is_int(s):
                raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {type(s).__name__} at pos {i}")
        return tuple(operator.index(s) for s in size[0])
    for i, s in enumerate(size):
        if not _is_int(s):
            if len(size) == 1:
                raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {type(s).__name__}")
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
    return tuple(operator.index(s) for s in size)


def int_arg(fname: str, name: str, position: int, value) -> int:
    """An ``int`` argument (``eye(n)``), or PyTorch's TypeError."""
    if not _is_int(value):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return operator.index(value)


def check_dtype_arg(fname: str, dtype) -> None:
    """Refuse a dtype PyTorch's parser refuses: a name (``dtype="float32"``) or a number."""
    if isinstance(dtype, (str, int, float)):
        raise TypeError(f"{fname}(): argument 'dtype' must be gradnb.dtype, not "
                        f"{type(dtype).__name__}")


def check_min_dims(fname: str, t: Tensor, n: int, what: str = "input") -> None:
    """PyTorch's "needs at least n dimensions" check."""
    if t.ndim < n:
        raise RuntimeError(f"{fname}: The {what} tensor {what[0].upper()} must have at least "
                           f"{n} dimensions.")


def check_nonempty_list(fname: str, tensors) -> None:
    """PyTorch's check that a tensor-list op (stack, hstack, ...) got at least one tensor."""
    if len(tensors) == 0:
        raise RuntimeError(f"{fname} expects a non-empty TensorList")
