"""Scans and integrals along a dimension: logcumsumexp, cummax/cummin, trapezoid (trapz),
cumulative_trapezoid.

``logcumsumexp`` is a primitive whose derivative is written with ``logcumsumexp`` itself (in
log space, as PyTorch does, so large inputs do not overflow); ``cummax``/``cummin`` save the
indices their values came from and add the gradient back there; the integrals are compositions.
"""

from __future__ import annotations

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record
from . import dual
from . import elementwise as ew
from . import indexing as ix
from . import reductions as red
from ._common import Tensor, wrap
from ._refusals import refuse
from .arithmetic import div_scalar, mul_scalar
from .joining import slice_along
from .pointwise import complex_logaddexp
from .reductions import _return_type, return_types, shown_dim

__all__ = ["cummax", "cummin", "cumulative_trapezoid", "logcumsumexp", "trapezoid", "trapz"]

for _name in ("cummax", "cummin"):
    setattr(return_types, _name, _return_type(_name))


def _axis(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _reverse_logcumsumexp(x: Tensor, d: int) -> Tensor:
    return logcumsumexp(x.flip(d), d).flip(d)


class LogcumsumexpBackward0(Node):
    """``grad_x[i] = sum_{j >= i} g[j] exp(x[i] - out[j])``, split by the sign of ``g`` and
    summed in log space. As in PyTorch, the log of a missing sign is the dtype's lowest finite
    value, not ``-inf``: so the rule's own derivative never meets ``-inf - -inf``."""
    rule = "self: logcumsumexp_backward(grad, self, result, dim)"

    __slots__ = ("axis", "dim")
    on_tensors = True
    inputs = ("self",)
    saves = ("dim", "self", "result")

    def backward(self, g):
        x, out = self.saved(g)
        if x.dim() == 0:  # one element: its own log-sum-exp
            return (g,)
        d = self.axis
        if x.is_complex():  # no signs to split: the log of conj(g), as PyTorch's complex branch
            summed = _reverse_logcumsumexp(ew.log(g.conj()) - out, d)
            return (ew.exp(summed + x).conj(),)
        lowest = float(np.finfo(g._data.dtype).min)
        log_abs = ew.log(ew.abs(g))
        log_pos = ew.where(g > 0, log_abs, lowest)
        log_neg = ew.where(g < 0, log_abs, lowest)
        grad_pos = ew.exp(_reverse_logcumsumexp(log_pos - out, d) + x)
        grad_neg = ew.exp(_reverse_logcumsumexp(log_neg - out, d) + x)
        return (grad_pos - grad_neg,)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, without overflow."""
    refuse("logcumsumexp", input._data)
    d = _axis(dim, input.dim())
    data = input._data
    if data.ndim == 0:
        out = data.copy()
    elif data.dtype.kind == "c":
        out = _complex_logcumsumexp(data, d)
    else:
        with np.errstate(all="ignore"):
            out = get_array_module(data).logaddexp.accumulate(data, axis=d)
    return record(LogcumsumexpBackward0, (input,), out, attrs={"axis": d, "dim": shown_dim(dim)})


def _complex_logcumsumexp(data, axis: int):
    """PyTorch's complex kernel: a running ``logaddexp(x, total)`` from ``-inf``, in double
    precision (complex64 accumulates in complex128)."""
    x = np.moveaxis(np.asarray(data, dtype=np.complex128), axis, 0)
    out = np.empty_like(x)
    total = np.full(x.shape[1:], complex(-np.inf, 0.0))
    for i in range(x.shape[0]):
        total = complex_logaddexp(x[i], total)
        out[i] = total
    return np.moveaxis(out, 0, axis).astype(data.dtype)


class CummaxBackward0(Node):
    """Gradient of ``cummax``: each output's gradient added where its value came from."""
    rule = "self: cummaxmin_backward(grad, self, indices, dim)"

    __slots__ = ("axis", "dim")
    inputs = ("self",)
    outputs = ("values", "indices")
    saves = ("dim", "self", "indices")

    def backward(self, g):
        x, indices = self.saved(g)
        xd = dual.data(x)
        if xd.ndim == 0:
            return (g,)
        idx = dual.data(indices)
        xp = get_array_module(idx)
        key = tuple(idx if d == self.axis else
                    xp.arange(n).reshape((1,) * d + (n,) + (1,) * (idx.ndim - d - 1))
                    for d, n in enumerate(idx.shape))
        return (ix.scatter_into_zeros(xd.shape, key, g),)


class CumminBackward0(CummaxBackward0):
    """Gradient of ``cummin`` (the same rule as ``cummax``)."""

    __slots__ = ()


def _cumulative_extreme(input: Tensor, dim: int, largest: bool, result):
    cls = CummaxBackward0 if largest else CumminBackward0
    data = input._data
    if input.dim() == 0:  # (no kernel runs: any dtype)
        _axis(dim, 0)
        return result(*_record_extreme(cls, input, data.copy(), np.zeros((), dtype=np.int64),
                                       dim, 0))
    refuse("cummax" if largest else "cummin", data)
    d = _axis(dim, input.dim())
    xp = get_array_module(data)
    ufunc = xp.maximum if largest else xp.minimum
    values = ufunc.accumulate(data, axis=d) if data.size else data.copy()
    shape = [1] * data.ndim
    shape[d] = data.shape[d]
    positions = xp.arange(data.shape[d]).reshape(shape)
    hit = data == values  # ties take the later index, as in PyTorch
    if data.dtype.kind in "fcV":
        hit = hit | xp.isnan(data)
    idx = xp.where(hit, positions, -1)
    idx = xp.maximum.accumulate(idx, axis=d) if idx.size else idx
    return result(*_record_extreme(cls, input, values, idx.astype(np.int64), dim, d))


def _record_extreme(cls, input: Tensor, values, indices, dim: int, axis: int):
    indices = wrap(indices)
    if values.dtype.kind not in "fcV":
        return wrap(values), indices
    out = record(cls, (input,), values, save=(0, indices),
                 attrs={"axis": axis, "dim": shown_dim(dim)})
    return out, indices


def cummax(input: Tensor, dim: int):
    """The running maximum along ``dim`` and where each came from."""
    return _cumulative_extreme(input, dim, True, return_types.cummax)


def cummin(input: Tensor, dim: int):
    """The running minimum along ``dim`` and where each came from."""
    return _cumulative_extreme(input, dim, False, return_types.cummin)


def _spacing(y: Tensor, x: Tensor, d: int) -> Tensor:
    """``x``'s differences along ``d`` (``x`` viewed to ``y``'s rank first), as PyTorch."""
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        x = x.view(shape)
    elif x.dim() < y.dim():
        x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    return slice_along(x, d, 1) - slice_along(x, d, 0, -1)


def _ends_sum(y: Tensor, d: int) -> Tensor:
    """``y[:-1] + y[1:]`` along ``d``."""
    return slice_along(y, d, 0, -1) + slice_along(y, d, 1)


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule (sample points ``x`` or
    spacing ``dx``), composed as PyTorch composes it (Integration.cpp)."""
    d = _axis(dim, y.dim())
    if y.shape[d] == 0:
        return red.sum(y, d)
    if x is not None:
        return div_scalar(red.sum(_ends_sum(y, d) * _spacing(y, x, d), d), 2.0)
    ends = ix.select(y, dim, 0) + ix.select(y, dim, -1)
    return mul_scalar(red.sum(y, dim) - mul_scalar(ends, 0.5), 1.0 if dx is None else float(dx))


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """``trapezoid``'s older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule."""
    d = _axis(dim, y.dim())
    if y.shape[d] == 0:
        return y.clone()
    if x is not None:
        return div_scalar(red.cumsum(_ends_sum(y, d) * _spacing(y, x, d), d), 2.0)
    step = (1.0 if dx is None else float(dx)) / 2.0
    return red.cumsum(mul_scalar(slice_along(y, dim, 0, -1) + slice_along(y, dim, 1), step), dim)


TENSOR_METHODS = {"cummax": cummax, "cummin": cummin, "logcumsumexp": logcumsumexp}
