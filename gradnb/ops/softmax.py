"""Softmax and log-softmax along a dimension: ``gradnb.softmax``, ``Tensor.softmax``, and the
``nn.functional`` forms (which re-export these).

They live among the ops, not in ``nn``, because PyTorch offers them as tensor methods and
``torch.*`` functions too, and ops may not import from ``nn``. Both shift by the maximum first,
so logits of any magnitude give finite results; each derivative reads only the saved output.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core.backend import get_array_module, silent
from .._core.graph import Node
from .._core.record import record
from .._core.tensor import _wrap_dim
from . import dual
from ._common import Tensor
from ._refusals import refuse

__all__ = ["log_softmax", "softmax"]


def _softmax_dim(name: str, dim, ndim: int) -> int:
    """The dim as given (checked; NumPy reads a negative axis as PyTorch does), as PyTorch saves
    it; PyTorch's implicit choice when None. A 0-d tensor has only axis 0 to NumPy."""
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                      "to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    _wrap_dim(dim, ndim)
    return dim if ndim else 0


class _SavesDim(Node):
    """A softmax node: ``_saved_dim`` shows the dim as PyTorch does (negative as uint64)."""

    __slots__ = ("dim",)
    inputs = ("self",)
    saves = ("dim", "result")
    unsigned = ("dim",)


def _as_float(input: Tensor, dtype, name: str, dim: int):
    """The input in ``dtype`` when given, refused where PyTorch's CPU kernels lack its dtype
    (integers, bools, complex), named for the kernel that would run along ``dim`` (checked):
    the last dim has its own. An empty input reaches no kernel, so it is never refused."""
    if dtype is not None:
        input = input.to(dtype=dtype)
    ndim = input._data.ndim
    last = ndim <= 1 or dim in (-1, ndim - 1)
    refuse(f"{name}_lastdim" if last else name, input._data)
    return input


def _shifted(x, axis):
    """``x - max(x)`` along ``axis``: exponentials of it never overflow (max is 0). A slice
    that is all ``-inf`` (a fully masked row) gives NaN quietly, as in PyTorch."""
    with silent():
        if x.ndim == 0 or x.size == 0:  # an empty tensor has nothing to shift (and no max)
            return x - x
        if type(x) is np.ndarray:  # the ufunc's own reduce: ``x.max`` adds a Python wrapper
            return x - np.maximum.reduce(x, axis=axis, keepdims=True)
        return x - x.max(axis=axis, keepdims=True)


class SoftmaxBackward0(_SavesDim):
    """``dx = y * (g - sum(g * y))`` along the softmax dimension."""
    rule = "self: _softmax_backward_data(grad, result, dim, self.scalar_type())"

    __slots__ = ()

    def backward(self, g):
        (y,) = self.saved(g)
        gy = g * y
        return (gy - y * dual.sum(gy, axis=self.dim, keepdims=True),)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, computed as ``exp(x - max x)`` so logits of any
    magnitude give finite probabilities."""
    dim = _softmax_dim("softmax", dim, input.ndim)
    input = _as_float(input, dtype, "softmax", dim)
    x = input._data
    if not x.size:  # nothing to compute, in any dtype (PyTorch runs no kernel)
        return record(SoftmaxBackward0, (input,), x.copy(), attrs={"dim": dim})
    e = get_array_module(x).exp(_shifted(x, dim))
    out = e / e.sum(axis=dim, keepdims=True) if x.ndim else e
    return record(SoftmaxBackward0, (input,), out, attrs={"dim": dim})


class LogSoftmaxBackward0(_SavesDim):
    """``dx = g - exp(y) * sum(g)`` along the dimension (``exp(y)`` is the softmax)."""
    rule = "self: _log_softmax_backward_data(grad, result, dim, self.scalar_type())"

    __slots__ = ()

    def backward(self, g):
        (y,) = self.saved(g)
        if type(g) is np.ndarray and g.ndim and g.dtype == y.dtype:
            # The same arithmetic in one buffer: ``exp(y)`` is new, so it takes the product
            # and the difference in place.
            out = np.exp(y)
            out *= np.add.reduce(g, axis=self.dim, keepdims=True)  # (``g.sum``, unwrapped)
            return (np.subtract(g, out, out=out),)
        return (g - dual.exp(y) * dual.sum(g, axis=self.dim, keepdims=True),)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``, shifted by the maximum so it never overflows."""
    if type(dim) is not int or not 0 <= dim < input._data.ndim:  # (a valid dim skips checks)
        dim = _softmax_dim("log_softmax", dim, input._data.ndim)
    input = _as_float(input, dtype, "log_softmax", dim)
    x = input._data
    if not x.size:  # nothing to compute, in any dtype (PyTorch runs no kernel)
        return record(LogSoftmaxBackward0, (input,), x.copy(), attrs={"dim": dim})
    xp = get_array_module(x)
    shifted = _shifted(x, dim)
    if x.ndim:
        # ``shifted`` is a new array nobody else sees: the log-sum-exp comes off in place.
        # (NumPy's own reduce: ``.sum`` adds a Python wrapper)
        exp = xp.exp(shifted)
        sums = np.add.reduce(exp, axis=dim, keepdims=True) if type(exp) is np.ndarray \
            else exp.sum(axis=dim, keepdims=True)
        shifted -= xp.log(sums)
    return record(LogSoftmaxBackward0, (input,), shifted, attrs={"dim": dim})


TENSOR_METHODS = {"log_softmax": log_softmax, "softmax": softmax}
