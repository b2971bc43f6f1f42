"""Statistics composed from reductions: nansum/nanmean, var_mean/std_mean, aminmax, cov,
corrcoef."""

from __future__ import annotations

import collections

from . import elementwise as ew
from . import reductions as red
from ._args import scalar_type_name, wrap_dim
from ._common import Tensor
from ._out import OUT_DTYPE_EXPECTED, accepts_out

__all__ = ["aminmax", "corrcoef", "cov", "nanmean", "nansum", "std_mean", "var_mean"]

_aminmax_result = collections.namedtuple("aminmax", ["min", "max"])


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``sum`` treating NaN as 0."""
    x = ew.where(ew.isnan(input), 0, input) if input.dtype.is_floating_point else input
    return red.sum(x, dim, keepdim, dtype=dtype)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``mean`` of the non-NaN elements."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype.name.capitalize()}")
    count = red.sum(~ew.isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(var, mean)`` over ``dim``."""
    if isinstance(dim, bool):  # the old positional form var_mean(x, unbiased)
        dim, unbiased = None, dim
    v = red.var(input, dim, unbiased, keepdim, correction=correction)
    axes = None if dim is None else dim
    return v, red.mean(input, axes, keepdim) if axes is not None else (
        red.mean(input).reshape(v.shape) if keepdim else red.mean(input))


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(std, mean)`` over ``dim``."""
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return ew.sqrt(v), m


@accepts_out("aminmax", OUT_DTYPE_EXPECTED)
def aminmax(input: Tensor, *, dim=None, keepdim: bool = False):
    """``(min, max)`` over ``dim`` (all elements by default)."""
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is not None and input.ndim and input.shape[wrap_dim(dim, input.ndim)] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    if dim is None:
        lo, hi = red.amin(input), red.amax(input)
        if keepdim:
            shape = (1,) * input.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return _aminmax_result(lo, hi)
    return _aminmax_result(red.amin(input, dim, keepdim), red.amax(input, dim, keepdim))


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
    if observations and bool((w._data < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input``."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
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
    if w is None:
        avg = red.mean(x, 1, keepdim=True)
        total = float(n)
        norm = total - correction
    else:
        total = red.sum(w)
        avg = red.sum(x * w, 1, keepdim=True) / total
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = total - correction
        else:
            norm = total - correction * red.sum(w * aweights) / total
    xc = x - avg
    xw = xc if w is None else xc * w
    out = (xw @ xc.transpose(0, 1)) / (ew.clamp(norm, min=0) if isinstance(norm, Tensor)
                                       else max(norm, 0))
    return out.squeeze()  # one variable gives a 0-d result, as in PyTorch


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = ew.sqrt(c.diagonal())
    out = c / std.unsqueeze(1) / std.unsqueeze(0)
    return ew.clamp(out, -1, 1)


TENSOR_METHODS = {"aminmax": aminmax, "nanmean": nanmean, "nansum": nansum}
