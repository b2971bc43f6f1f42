"""Questions asked of tensors and dtypes through the namespace, as PyTorch answers them:
``result_type``, ``promote_types``, ``can_cast``, ``typename``, and the function forms of the
tensor methods ``is_floating_point``, ``is_inference``, ``detach``, ``is_nonzero``,
``is_signed``, ``is_neg``, ``get_device`` and ``is_same_size``."""

from __future__ import annotations

import importlib
import numbers
import warnings

from .._core import dtype as _dtype
from ._args import type_name
from ._common import Tensor, _promote, result_type_of
from ._common import can_cast as _can_cast

__all__ = ["can_cast", "detach", "get_device", "is_floating_point", "is_inference", "is_neg",
           "is_nonzero", "is_same_size", "is_signed", "promote_types",
           "result_type", "set_default_tensor_type", "typename"]


def _tensor_arg(op: str, input) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")
    return input


def result_type(tensor, other) -> _dtype.dtype:
    """The dtype an arithmetic op on ``tensor`` and ``other`` (tensors or numbers) returns."""
    for value in (tensor, other):
        if not isinstance(value, (Tensor, numbers.Number)):
            raise TypeError(f"result_type() received an invalid combination of arguments - got "
                            f"({type_name(tensor)}, {type_name(other)}), but expected one of:")
    return _dtype.from_numpy_dtype(result_type_of(tensor, other))


def promote_types(type1, type2) -> _dtype.dtype:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing their kind."""
    for position, (name, value) in enumerate((("type1", type1), ("type2", type2)), 1):
        if not isinstance(value, _dtype.dtype):
            raise TypeError(f"promote_types(): argument '{name}' (position {position}) must be "
                            f"gradnb.dtype, not {type_name(value)}")
    return _dtype.from_numpy_dtype(_promote(type1.np, type2.np))


_MISSING = object()


def can_cast(from_=_MISSING, to=_MISSING) -> bool:
    """Whether PyTorch's type promotion lets a value of dtype ``from_`` be written into ``to``:
    never to a lower category (complex to real, floating to integral, any to bool)."""
    if to is _MISSING:
        names = ['"from_"', '"to"'] if from_ is _MISSING else ['"to"']
        # (PyTorch's parser writes "arguments" for one and "argument" for two)
        raise TypeError(f"can_cast() missing {len(names)} required positional argument"
                        f"{'s' if len(names) == 1 else ''}: " + ", ".join(names))
    for position, (name, value) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(value, _dtype.dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be "
                            f"gradnb.dtype, not {type_name(value)}")
    return _can_cast(from_.np, to.np)


def typename(obj) -> str:
    """A tensor's type string (``gradnb.FloatTensor``), else the object's qualified name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in {"", "builtins"} else f"{module}.{qualname}"


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is a floating one."""
    return _tensor_arg("is_floating_point", input).is_floating_point()


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made under ``inference_mode``."""
    return _tensor_arg("is_inference", input).is_inference()


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same data, out of the graph."""
    return _tensor_arg("detach", input).detach()


def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor (``input.is_nonzero()``)."""
    return _tensor_arg("is_nonzero", input).is_nonzero()


def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype holds negative values (``input.is_signed()``)."""
    return _tensor_arg("is_signed", input).is_signed()


def is_neg(input: Tensor) -> bool:
    """``input.is_neg()``: False (gradnb has no lazy negation bit)."""
    return _tensor_arg("is_neg", input).is_neg()


def get_device(input: Tensor) -> int:
    """``input.get_device()``: the CUDA device index, or -1 on the CPU."""
    return _tensor_arg("get_device", input).get_device()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two shapes are equal (``input.is_same_size(other)``)."""
    if not isinstance(other, Tensor):
        raise TypeError("is_same_size(): argument 'other' (position 2) must be Tensor, not "
                        f"{type_name(other)}")
    return _tensor_arg("is_same_size", input).is_same_size(other)


def set_default_tensor_type(t) -> None:
    """Deprecated in PyTorch for ``set_default_dtype``/``set_default_device``: a legacy type
    (``gradnb.DoubleTensor``, or its name as a string) sets the default floating dtype."""
    warnings.warn("gradnb.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "gradnb.set_default_dtype() and gradnb.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    from . import tensor_api

    on_cuda = False
    if isinstance(t, str):
        name = t.replace("torch.", "gradnb.", 1)
        module, _, type_name_ = name.rpartition(".")
        if module == "gradnb.cuda":  # the same type, made on the GPU by default
            from .._core.backend import cuda_is_available

            if not cuda_is_available():
                raise TypeError(f"type {name} not available. gradnb has no CUDA device (CuPy "
                                "is not installed or sees no GPU).")
            module, on_cuda = "gradnb", True
        if not module:
            raise ModuleNotFoundError(f"No module named '{type_name_}'")
        t = getattr(importlib.import_module(module), type_name_)
    dtype_name = getattr(t, "_dtype_name", None)
    if not isinstance(t, tensor_api._LegacyTensorMeta):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if dtype_name not in ("float16", "bfloat16", "float32", "float64"):
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(getattr(_dtype, dtype_name))
    if on_cuda:
        from .._core.default_device import set_default_device

        set_default_device("cuda")
