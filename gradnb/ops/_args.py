"""Argument checks every op shares, worded as PyTorch's argument parser and ATen checks word them.

One helper per kind of check (a tensor where only a tensor is accepted, dimension wrapping, a
non-empty tensor list, the ``out=`` keyword, ...), so each op states what it accepts instead of
formatting its own message.
"""

from __future__ import annotations

from .._core.tensor import Tensor
from .._core.tensor import _wrap_dim as wrap_dim

__all__ = [
    "check_min_dims",
    "check_nonempty_list",
    "check_tensor_only",
    "check_tensor_or_number",
    "check_value_fits",
    "reflected",
    "scalar_type_name",
    "type_name",
    "wrap_dim",
]


_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double",
                      "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int8": "Char",
                      "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
                      "bool": "Bool"}


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


def check_min_dims(fname: str, t: Tensor, n: int, what: str = "input") -> None:
    """PyTorch's "needs at least n dimensions" check."""
    if t.ndim < n:
        raise RuntimeError(f"{fname}: The {what} tensor {what[0].upper()} must have at least "
                           f"{n} dimensions.")


def check_nonempty_list(fname: str, tensors) -> None:
    """PyTorch's check that a tensor-list op (stack, hstack, ...) got at least one tensor."""
    if len(tensors) == 0:
        raise RuntimeError(f"{fname} expects a non-empty TensorList")
