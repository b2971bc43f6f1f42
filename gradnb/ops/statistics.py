"""Statistics composed from reductions: nansum/nanmean, var_mean/std_mean, aminmax, cov,
corrcoef."""

from __future__ import annotations

import builtins
import collections
import warnings

import numpy as np

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record, wrap
from . import complex as cx
from . import dual
from . import elementwise as ew
from . import reductions as red
from ._args import scalar_type_name, wrap_dim
from ._common import Tensor
from ._out import OUT_DTYPE_EXPECTED, accepts_out
from ._refusals import refuse
from .arithmetic import mul_scalar
from .linalg import mm

__all__ = ["aminmax", "corrcoef", "cov", "nanmean", "nansum", "std_mean", "var_mean"]

_aminmax_result = collections.namedtuple("aminmax", ["min", "max"])


class NansumBackward0(Node):
    """Gradient of ``nansum``: ``grad`` broadcast back, 0 where ``self`` is NaN."""
    rule = "self: nansum_backward(grad.to(self.scalar_type()), self, dim, keepdim)"

    __slots__ = ("axes", "dim", "keepdim")
    inputs = ("self",)
    saves = ("dim", "keepdim", "self")

    def backward(self, g):
        (x,) = self.saved(g)
        xd = dual.data(x)
        g = red.expand_reduced(g, xd.shape, self.axes, self.keepdim)
        return (red._where(get_array_module(xd).isnan(xd), 0.0, g),)


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``sum`` treating NaN as 0."""
    refuse("nansum", input._data)
    if not input.dtype.is_floating_point:
        return red.sum(input, dim, keepdim, dtype=dtype)
    data = input._data
    xp = get_array_module(data)
    clean = xp.where(xp.isnan(data), 0, data)
    out = red.sum(wrap(clean), dim, keepdim, dtype=dtype)._data
    axes = red._reduced_axes(dim, data.ndim)
    keep = keepdim and dim is not None  # (sum ignores keepdim without a dim)
    return red._record(NansumBackward0, input, out, axes=axes, dim=red.shown_dims(dim),
                       keepdim=keep)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``mean`` of the non-NaN elements."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type_name(input._data.dtype)}")
    count = red.sum(~ew.isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


class VarMeanBackward0(Node):
    """Gradient of ``var_mean``: ``var``'s and ``mean``'s, for whichever output has one."""
    rule = "self: var_mean_backward(grads[0], grads[1], self, dim, correction, keepdim)"

    __slots__ = ("axes", "correction", "dim", "dof", "keepdim")
    inputs = ("self",)
    outputs = ("result0", "result1")
    saves = ("correction", "dim", "keepdim", "self")

    def _spread(self, x, g_var, g_mean):
        """``g_var`` (already through the std step, for ``std_mean``) and ``g_mean`` back to
        ``self``."""
        shape = tuple(dual.data(x).shape)
        out = None
        if g_var is not None:
            out = red._var_grad(red._kept(g_var, shape, self.axes, self.keepdim), x, self.axes,
                                self.dof)
        if g_mean is not None:
            count = builtins.max(red._count(shape, self.axes), 1)
            part = red.expand_reduced(g_mean / count, shape, self.axes, self.keepdim)
            out = part if out is None else out + part
        return out

    def backward(self, g_var, g_mean):
        (x,) = self.saved(g_var if g_var is not None else g_mean)
        return (self._spread(x, g_var, g_mean),)


class StdMeanBackward0(VarMeanBackward0):
    """Gradient of ``std_mean``: ``std``'s (zero where ``std`` is zero) and ``mean``'s."""
    rule = "self: std_mean_backward(grads[0], grads[1], self, result0, dim, correction, keepdim)"

    __slots__ = ()
    saves = ("correction", "dim", "keepdim", "self", "result0")

    def backward(self, g_std, g_mean):
        x, std = self.saved(g_std if g_std is not None else g_mean)
        if g_std is not None:
            zero = dual.data(std) == 0
            g_std = red._where(zero, 0.0, g_std / (2.0 * red._where(zero, 1.0, std)))
        return (self._spread(x, g_std, g_mean),)


def _var_mean(name, cls, input, dim, unbiased, keepdim, correction) -> tuple:
    if isinstance(dim, bool):  # the old positional form var_mean(x, unbiased)
        dim, unbiased = None, dim
    dim, keepdim, correction, shown = red._var_args(name, dim, unbiased, keepdim, correction)
    data, axes, dof, var = red._var_forward(name, input, dim, keepdim, correction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is NaN, silently
        mean = data.mean(axis=axes, keepdims=keepdim).astype(data.dtype, copy=False)
    if cls is StdMeanBackward0:
        var = get_array_module(var).sqrt(var)
    return record(cls, (input,), (var, mean),
                  attrs={"axes": axes, "correction": shown, "dim": red.shown_dims(dim),
                         "dof": dof, "keepdim": keepdim})


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(var, mean)`` over ``dim``."""
    return _var_mean("var_mean", VarMeanBackward0, input, dim, unbiased, keepdim, correction)


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(std, mean)`` over ``dim``."""
    return _var_mean("std_mean", StdMeanBackward0, input, dim, unbiased, keepdim, correction)


@accepts_out("aminmax", OUT_DTYPE_EXPECTED)
def aminmax(input: Tensor, *, dim=None, keepdim: bool = False):
    """``(min, max)`` over ``dim`` (all elements by default)."""
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is not None and input.ndim and input.shape[wrap_dim(dim, input.ndim)] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {wrap_dim(dim, input.ndim)} to have "
                         "non-zero size.")
    refuse("aminmax_0d" if dim is not None and not input.ndim else "aminmax", input._data)
    data = input._data
    axes = red._reduced_axes(dim, data.ndim)
    lo = data.min(axis=axes, keepdims=keepdim)
    hi = data.max(axis=axes, keepdims=keepdim)
    if not red._is_differentiable(lo):
        return _aminmax_result(wrap(lo), wrap(hi))
    return _aminmax_result(*record(AminmaxBackward0, (input,), (lo, hi), attrs={
        "axes": axes, "dim": red.shown_dim(dim), "keepdim": keepdim}))


class AminmaxBackward0(Node):
    """Gradient of ``aminmax``: each output's gradient shared evenly among its tied extrema."""
    rule = "self: scale_grad_by_count(grad_min, min == self, dim) + " \
        "scale_grad_by_count(grad_max, max == self, dim)"

    __slots__ = ("axes", "dim", "keepdim")
    inputs = ("self",)
    outputs = ("min", "max")
    saves = ("dim", "keepdim", "self", "min", "max")

    def backward(self, g_min, g_max):
        x, lo, hi = (dual.data(v) for v in self.saved(g_min if g_min is not None else g_max))
        shape, axes = x.shape, self.axes
        out = None
        for g, value in ((g_min, lo), (g_max, hi)):
            if g is None:
                continue
            mask = x == value.reshape(red._kept_shape(shape, axes))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                weights = mask / mask.sum(axis=axes, keepdims=True)
            part = red._weighted(red._kept(g, shape, axes, self.keepdim), weights)
            out = part if out is None else out + part
        return (out,)


def _check_cov_weights(name: str, w, observations: int, kind: str, has_kind) -> None:
    """PyTorch's checks on ``cov``'s ``fweights``/``aweights``, in its order."""
    if w is None:
        return
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if not has_kind(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{scalar_type_name(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    # PyTorch tests ``w.min() >= 0`` with grad mode on: a float weight's MinBackward1 is recorded
    if observations and not bool((red.min(w) >= 0)._data):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input``."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.dim() < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.float()
    n = x.shape[1]
    _check_cov_weights("fweights", fweights, n, "integral", lambda d: d.np.kind in "iu")
    _check_cov_weights("aweights", aweights, n, "floating point", lambda d: d.is_floating_point)
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    # Composed as PyTorch composes it (Correlation.cpp), so the graph has its nodes.
    w_sum = wrap(np.asarray(n, dtype=np.int64)) if w is None else red.sum(w)
    avg = red.sum(x if w is None else x * w, 1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - mul_scalar(red.sum(w * aweights), correction) / w_sum
    elif correction != 0:
        norm = w_sum - correction
    else:
        norm = w_sum  # PyTorch's graph has no node for subtracting 0
    if bool((norm._data <= 0).all()):  # no degrees of freedom left: PyTorch zeroes the factor
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = wrap(np.zeros((), dtype=norm._data.dtype))
    xc = x - avg.unsqueeze(1)
    xw = xc if w is None else xc * w
    xw_t = xw.t().conj() if xw.dtype.is_complex else xw.t()
    return (mm(xc, xw_t) / norm).squeeze()  # one variable gives a 0-d result, as in PyTorch


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = ew.sqrt(d.real if d.dtype.is_complex else d)
    out = c / std.view(-1, 1) / std.view(1, -1)
    if out.dtype.is_complex:  # each part clipped, as PyTorch
        return cx.complex(ew.clamp(cx.real(out), -1, 1), ew.clamp(cx.imag(out), -1, 1))
    return ew.clamp(out, -1, 1)


TENSOR_METHODS = {"aminmax": aminmax, "nanmean": nanmean, "nansum": nansum, "cov": cov,
                  "corrcoef": corrcoef}
