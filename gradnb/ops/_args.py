"""Argument checks every op shares, worded as PyTorch's argument parser and ATen checks word them.

One helper per kind of check (a tensor where only a tensor is accepted, dimension wrapping, a
non-empty tensor list, the ``out=`` keyword, ...), so each op states what it accepts instead of
formatting its own message.
"""

from __future__ import annotations

import operator

from .._core.tensor import Tensor
from .._core.tensor import _wrap_dim as wrap_dim

__all__ = [
    "check_dtype_arg",
    "check_min_dims",
    "check_nonempty_list",
    "check_tensor_only",
    "check_tensor_or_number",
    "check_value_fits",
    "int_arg",
    "reflected",
    "scalar_type_name",
    "size_arg",
    "type_name",
    "wrap_dim",
]


_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double",
                      "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int8": "Char",
                      "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
                      "bool": "Bool", "bfloat16": "BFloat16"}


def scalar_type_name(dtype) -> str:
    """PyTorch's C++ ScalarType name of a dtype (NumPy's or gradnb's), as its messages print it
    (``Float``, ``Long``)."""
    name = getattr(dtype, "name", str(dtype))
    return _SCALAR_TYPE_NAMES.get(name, name)


_CONVERT_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                  "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                  "uint8": "uint8_t", "bool": "bool"}


def check_value_fits(value, dtype) -> None:
    """PyTorch's check that a fill value (a number or 0-d tensor) converts to ``dtype`` (NumPy's
    or gradnb's): a complex value does not fit a real dtype."""
    complex_value = isinstance(value, complex) or (
        isinstance(value, Tensor) and value.dtype.is_complex)
    name = getattr(dtype, "name", str(dtype))
    if complex_value and not name.startswith("complex"):
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
