"""The ``out=`` keyword: a result written into a tensor the caller gives, with PyTorch's checks.

An op that accepts ``out=`` computes its result as usual; the result is then written into
``out``, refusing what PyTorch refuses (autograd through ``out=``, a written-to tensor whose elements
overlap each other or the inputs, a dtype the result cannot be written as), resizes an ``out``
of the wrong shape (warning when it held elements, as PyTorch does) and copies the values in.
Every check runs before anything is written, so a refused call leaves ``out`` unchanged.
Ops take it through the ``accepts_out`` decorator.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .._core.backend import get_array_module
from .._core.grad_mode import no_grad
from .._core.grad_mode import state as grad_state
from .._core.tensor import Tensor
from ._args import scalar_type_name

__all__ = [
    "OUT_DTYPE_EXPECTED",
    "OUT_DTYPE_MATCH_INPUT",
    "accepts_out",
    "check_out_overlap",
]

# PyTorch's two wordings for an ``out`` whose dtype must be exactly the result's.
OUT_DTYPE_EXPECTED = "Expected out tensor to have dtype {result_lower}, but got {out_lower} instead"
OUT_DTYPE_MATCH_INPUT = ("Expected the dtype for input and out to match, but got {result} for "
                         "input's dtype and {out} for out's dtype.")
_CLONE_HINT = "Please clone() the tensor before performing the operation."


def check_out_overlap(out: Tensor, inputs=()) -> None:
    """PyTorch's overlap checks on a written-to tensor: no two of its elements share memory
    (an ``expand``-ed tensor), and none shares memory with an input."""
    data = out._data
    if any(step == 0 and size > 1 for step, size in zip(getattr(data, "strides", ()), data.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           f"tensor refers to a single memory location. {_CLONE_HINT}")
    for t in inputs:
        if isinstance(t, Tensor) and (t is out or (t._data.size and data.size and np.shares_memory(
                np.asarray(t._data), np.asarray(data)))):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               f"the written-to tensor refer to a single memory location. "
                               f"{_CLONE_HINT}")


def _castable(result_dtype, out_dtype) -> bool:
    order = "biufc"  # a result may be written into the same or a higher category
    return order.index(result_dtype.kind if result_dtype.kind != "u" else "i") <= order.index(
        out_dtype.kind if out_dtype.kind != "u" else "i")


def _check_out(fname: str, out, inputs, differentiable: bool = True) -> None:
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if differentiable and grad_state.enabled and (
            out.requires_grad or any(t.requires_grad for t in inputs)):
        raise RuntimeError(f"{fname}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    check_out_overlap(out, inputs)


# The C++ type names PyTorch prints for a dtype (its TypeMeta) where they are not the
# ScalarType's name in lower case.
_CPP_NAMES = {"Long": "long int", "Short": "short int", "Char": "signed char",
              "Byte": "unsigned char", "UInt16": "short unsigned int",
              "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>",
              "Half": "c10::Half", "BFloat16": "c10::BFloat16"}


def _cpp_name(dtype) -> str:
    name = scalar_type_name(dtype)
    return _CPP_NAMES.get(name, name.lower())


def _check_dtype(out: Tensor, result: Tensor, dtype_message) -> None:
    res_dt, out_dt = result._data.dtype, out._data.dtype
    if dtype_message is not None and res_dt != out_dt:
        raise RuntimeError(dtype_message.format(out=scalar_type_name(out_dt),
                                                result=scalar_type_name(res_dt),
                                                out_lower=_cpp_name(out_dt),
                                                result_lower=_cpp_name(res_dt)))
    if not _castable(res_dt, out_dt):
        raise RuntimeError(f"result type {scalar_type_name(res_dt)} can't be cast to the desired "
                           f"output type {scalar_type_name(out_dt)}")


def _write(out: Tensor, result: Tensor, result_layout: bool = False) -> None:
    if tuple(out.shape) != tuple(result.shape):
        if out._base is not None:
            raise RuntimeError(f"cannot resize the view given as out= from shape "
                               f"{list(out.shape)} to {list(result.shape)}")
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=4)
        xp = get_array_module(out._data)
        if result_layout and out._data.dtype == result._data.dtype and \
                get_array_module(result._data) is xp:
            out._data = xp.empty_like(result._data)  # the result's strides (column-major...)
        else:
            out._data = xp.empty(result.shape, dtype=out._data.dtype)
    out.copy_(result)


def _tensors_in(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def accepts_out(fname: str, dtype_message: str | None = None, *, differentiable: bool = True,
                result_layout: bool = False):
    """Decorate an op so it takes PyTorch's ``out=`` keyword (one tensor, or a tuple for ops
    returning several).

    ``dtype_message``: for ops whose ``out`` must have exactly the result's dtype, the message
    (formatted with ``out``/``result``, PyTorch's ScalarType names, and ``out_lower``/
    ``result_lower``, the C++ type names it prints elsewhere) to raise otherwise; without it,
    a dtype the result casts to safely is accepted.
    ``differentiable=False``: an op PyTorch has no derivative for (its outputs integers, or its
    node ``NotImplemented``), whose ``out=`` PyTorch allows on inputs that require grad.
    ``result_layout=True``: an ``out`` that must be resized (and has the result's dtype) takes
    the result's strides, as PyTorch's LAPACK-backed kernels write their column-major results.
    """

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            inputs = list(_tensors_in((*args, *kwargs.values())))
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            for o in outs:
                _check_out(fname, o, inputs, differentiable)
            with no_grad():
                result = fn(*args, **kwargs)
            results = tuple(result) if isinstance(result, tuple) else (result,)
            if len(results) != len(outs):
                raise TypeError(f"{fname}(): argument 'out' must be tuple of {len(results)} "
                                f"Tensors, not {len(outs)}")
            for o, r in zip(outs, results):
                _check_dtype(o, r, dtype_message)
            with no_grad():
                for o, r in zip(outs, results):
                    _write(o, r, result_layout)
            if not isinstance(result, tuple):
                return out
            return type(result)(*outs) if hasattr(result, "_fields") else outs

        return op

    return decorate
