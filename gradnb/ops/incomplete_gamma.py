"""The regularized incomplete gamma functions: ``igamma`` (``special.gammainc``), the lower
``P(a, x)``, and ``igammac`` (``special.gammaincc``), the upper ``Q(a, x) = 1 - P(a, x)``, each
computed directly (a power series below ``x = a + 1``, the continued fraction of ``Q`` above,
so neither loses the other's small values to cancellation), in float64 and then the operands'
dtype, with PyTorch's values at the edges (``a = 0``, ``x = 0``, infinities, NaN for negative
arguments).

PyTorch differentiates them in ``x`` only (the gamma density, with a sign for ``Q``); their
gradient in ``a`` raises, as PyTorch's.
"""

from __future__ import annotations

import numpy as np

from .._core import backend as _backend
from .._core.graph import Node
from .._core.record import record
from ._args import scalar_type_name, type_name
from ._common import Tensor, check_broadcast, result_type_of
from .special_functions import _lgamma_array

__all__ = ["igamma", "igammac"]

_MAX_TERMS = 100_000  # both expansions need O(sqrt(a)) terms near x = a
_TINY = 1e-300  # the modified Lentz method's guard against a zero denominator


def _log_prefactor(a, x):
    """``log(x^a e^-x / Gamma(a))``, the factor both expansions share."""
    return a * np.log(x) - x - _lgamma_array(a)


def _lower_series(a, x):
    """``P(a, x) = x^a e^-x / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n))`` (``x < a + 1``)."""
    term = 1 / a
    total = term.copy()
    active = np.ones(a.shape, dtype=bool)
    for n in range(1, _MAX_TERMS):
        term = term * x / (a + n)
        total = total + np.where(active, term, 0.0)
        active &= term > 1e-17 * total
        if not active.any():
            break
    return total * np.exp(_log_prefactor(a, x))


def _upper_continued_fraction(a, x):
    """``Q(a, x)`` by the modified Lentz method (``x >= a + 1``)."""
    b = x + 1 - a
    c = np.full(a.shape, 1 / _TINY)
    d = 1 / b
    h = d.copy()
    active = np.ones(a.shape, dtype=bool)
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        delta = c * d
        h = np.where(active, h * delta, h)
        active &= np.abs(delta - 1) > 1e-16
        if not active.any():
            break
    return h * np.exp(_log_prefactor(a, x))


def _incomplete_gamma_array(a, x, upper: bool):
    """``Q(a, x)`` if ``upper`` else ``P(a, x)``, in the operands' dtype."""
    dtype = np.result_type(a.dtype, x.dtype)
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    lower = np.full(a.shape, np.nan)
    inner = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    below = inner & (x < a + 1)
    above = inner & ~below
    with np.errstate(all="ignore"):
        series = _lower_series(a[below], x[below]) if below.any() else None
        fraction = _upper_continued_fraction(a[above], x[above]) if above.any() else None
    # The edges, as PyTorch's kernels give them (P; Q is their complement)
    lower[(a == 0) & (x > 0)] = 1.0
    lower[(a > 0) & (x == 0)] = 0.0
    lower[(a >= 0) & (x == np.inf) & (a != np.inf)] = 1.0
    lower[(a == np.inf) & (x >= 0) & (x != np.inf)] = 0.0
    out = 1 - lower if upper else lower
    if series is not None:
        out[below] = 1 - series if upper else series
    if fraction is not None:
        out[above] = fraction if upper else 1 - fraction
    return out.astype(dtype, copy=False)


def _gamma_density(a, x):
    with np.errstate(all="ignore"):
        return np.exp((a - 1) * np.log(x) - x - _lgamma_array(a))


class IgammaBackward0(Node):
    """``igamma(self, other)``: differentiable in ``other`` only (the density)."""
    rule = ("self: not_implemented(\"igamma: input\"); "
            "other: grad * exp((self - 1) * log(other) - other - lgamma(self))")

    __slots__ = ()
    inputs = ("self", "other")
    saves = ("self", "other")
    sign = 1.0
    op = "igamma"

    def backward(self, g):
        if self._next[0] is not None:
            raise NotImplementedError(f"the derivative for '{self.op}: input' is not "
                                      "implemented.")
        a, x = self.saved(g)
        return (None, g * (self.sign * _gamma_density(a, x)).astype(g.dtype, copy=False))


class IgammacBackward0(IgammaBackward0):
    """``igammac(self, other)``: ``-`` the density, in ``other`` only."""
    rule = ("self: not_implemented(\"igammac: input\"); "
            "other: -grad * exp((self - 1) * log(other) - other - lgamma(self))")
    __slots__ = ()
    sign = -1.0
    op = "igammac"


def _incomplete_gamma(op: str, input: Tensor, other: Tensor, upper: bool) -> Tensor:
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type_name(other)}")
    dtype = result_type_of(input, other)
    if dtype.kind not in "fV":
        raise NotImplementedError(f'"{op}_cpu" not implemented for '
                                  f"'{scalar_type_name(dtype)}'")
    check_broadcast(input._data.shape, other._data.shape)
    a, x = (_backend.to_device(t._data, _backend.CPU).astype(dtype, copy=False)
            for t in (input, other))
    data = _backend.to_device(_incomplete_gamma_array(a, x, upper), input.device)
    return record(IgammacBackward0 if upper else IgammaBackward0, (input, other), data)


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)``."""
    return _incomplete_gamma("igamma", input, other, upper=False)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P``."""
    return _incomplete_gamma("igammac", input, other, upper=True)


TENSOR_METHODS = {"igamma": igamma, "igammac": igammac}
