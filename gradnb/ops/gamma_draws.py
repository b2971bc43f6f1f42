"""Gamma draws with implicit reparameterization gradients: ``_standard_gamma`` and
``_standard_gamma_grad``, the private ops ``torch.distributions`` builds Gamma, Beta, Dirichlet,
Chi2 and StudentT samples on; ``_sample_dirichlet`` and ``_dirichlet_grad``, Dirichlet draws
and the implicit gradient of their Beta marginals. (``Gamma.cdf``'s incomplete gamma function
is public: ``ops/incomplete_gamma.py``.)

A draw ``x ~ Gamma(alpha, 1)`` is a function of ``alpha`` through the CDF held fixed:
``P(alpha, x) = u``, so ``dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha)`` (Figurnov et al.,
2018). PyTorch evaluates that ratio with approximations (relative errors up to about 3e-4);
gradnb evaluates it exactly, to float64 rounding: a power series where ``x <= alpha + 1`` and
the continued fraction of the upper incomplete gamma function, differentiated along its
recurrence, above it.
"""

from __future__ import annotations

import numpy as np

from .._core import backend as _backend
from .._core.graph import Node, switches
from .._core.record import record, would_record
from ._common import Tensor
from .creation import _rng
from .special_functions import _digamma_array

__all__: list[str] = []  # private ops, reached as gradnb.ops.gamma_draws._standard_gamma

_MAX_TERMS = 100_000  # both expansions need O(sqrt(alpha)) terms near x = alpha
_TINY = 1e-300  # the modified Lentz method's guard against a zero denominator


def _series_grad(alpha, x):
    """``-(dP/dalpha) / p`` for ``x <= alpha + 1`` from ``P = sum_n x^(alpha+n) e^-x /
    Gamma(alpha+n+1)``: divided by ``p`` the n-th term is ``r_n = x^(n+1) / (alpha)_(n+1)``
    and its alpha-derivative ``r_n (log x - digamma(alpha+n+1))``. Only the first term can be
    positive, so there is no cancellation to speak of."""
    log_x = np.log(x)
    psi = _digamma_array(alpha + 1)
    r = x / alpha
    total = r * (log_x - psi)
    active = np.ones(alpha.shape, dtype=bool)
    for n in range(1, _MAX_TERMS):
        psi = psi + 1 / (alpha + n)
        r = r * x / (alpha + n)
        term = r * (log_x - psi)
        total = total + np.where(active, term, 0.0)
        active &= np.abs(term) > 1e-17 * np.abs(total)
        if not active.any():
            break
    return -total


def _continued_fraction_grad(alpha, x):
    """``(dQ/dalpha) / p`` for ``x > alpha + 1`` (``Q = 1 - P``): ``Q / p = x h`` with ``h`` the
    continued fraction ``1 / (x + 1 - alpha - 1 (1 - alpha) / (x + 3 - alpha - ...))``,
    evaluated by the modified Lentz method carrying each quantity's alpha-derivative, so
    ``dQ/dalpha / p = x (h (log x - digamma(alpha)) + dh/dalpha)``."""
    ones = np.ones_like(alpha)
    b, db = x + 1 - alpha, -ones
    c, dc = ones / _TINY, np.zeros_like(alpha)
    d, dd = 1 / b, -db / b**2
    h, dh = d.copy(), dd.copy()
    active = np.ones(alpha.shape, dtype=bool)
    for i in range(1, _MAX_TERMS):
        a, da = -i * (i - alpha), i * ones
        b = b + 2
        den = a * d + b
        dden = da * d + a * dd + db
        den = np.where(np.abs(den) < _TINY, _TINY, den)
        d_next, dd_next = 1 / den, -dden / den / den
        c_next = b + a / c
        dc_next = db + da / c - (a / c) * (dc / c)
        c_next = np.where(np.abs(c_next) < _TINY, _TINY, c_next)
        delta, ddelta = c_next * d_next, dc_next * d_next + c_next * dd_next
        h_next, dh_next = h * delta, dh * delta + h * ddelta
        h, dh = np.where(active, h_next, h), np.where(active, dh_next, dh)
        d, dd = np.where(active, d_next, d), np.where(active, dd_next, dd)
        c, dc = np.where(active, c_next, c), np.where(active, dc_next, dc)
        settled = (np.abs(delta - 1) <= 1e-16) & (np.abs(h * ddelta) <= 1e-16 * np.abs(dh))
        active &= ~settled
        if not active.any():
            break
    return x * (h * (np.log(x) - _digamma_array(alpha)) + dh)


def _standard_gamma_grad_array(alpha, x):
    """``dx/dalpha`` of standard gamma draws ``x`` (host float64 arithmetic, ``alpha``'s dtype
    back)."""
    dtype = np.result_type(alpha.dtype, x.dtype)
    a, v = np.broadcast_arrays(np.asarray(alpha, dtype=np.float64),
                               np.asarray(x, dtype=np.float64))
    out = np.zeros(a.shape)
    below = v <= a + 1
    with np.errstate(all="ignore"):  # x = 0, alpha = 0, inf: the values say it, as PyTorch's
        if below.any():
            out[below] = _series_grad(a[below], v[below])
        if (~below).any():
            out[~below] = _continued_fraction_grad(a[~below], v[~below])
    # PyTorch's small-x branch (x < 0.8) reads a NaN (x = 0, say) as a zero gradient
    out[np.isnan(out) & (v < 0.8)] = 0.0
    return out.astype(dtype, copy=False)


class StandardGammaGradBackward0(Node):
    """``_standard_gamma_grad(self, output)`` has no derivative in PyTorch: a backward that
    reaches it (a second derivative through a gamma draw) raises PyTorch's error."""
    rule = "self: not_implemented(\"_standard_gamma_grad\")"
    runs_user_code = True  # it raises by design: the engine holds leaf gradients back

    __slots__ = ()

    def backward(self, *grads):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """``dx/dalpha`` of the standard gamma draws ``output`` of ``self`` (``alpha``)."""
    host = [_backend.to_device(t._data, _backend.CPU) for t in (self, output)]
    data = _backend.to_device(_standard_gamma_grad_array(*host), self.device)
    needing = tuple(t for t in (self, output) if t._requires_grad)
    if would_record(needing):
        switches.user_code = True  # the engine must look for nodes that can raise
    return record(StandardGammaGradBackward0, needing, data)


class StandardGammaBackward0(Node):
    """``_standard_gamma(self)``: ``x ~ Gamma(self, 1)``, with the implicit reparameterization
    gradient ``dx/dalpha``."""
    rule = "self: grad * _standard_gamma_grad(self, result)"
    on_tensors = True  # the factor is an op of its own (PyTorch's), which refuses to differentiate

    __slots__ = ()
    inputs = ("self",)
    saves = ("self", "result")

    def backward(self, g):
        alpha, x = self.saved(g)
        return (g * _standard_gamma_grad(alpha, x),)


def _standard_gamma(self: Tensor, generator=None) -> Tensor:
    """Draws from ``Gamma(self, 1)`` (NumPy's sampler on gradnb's seeded generator), at least
    the dtype's smallest normal number, as PyTorch's CPU kernel clamps them."""
    alpha = np.asarray(_backend.to_device(self._data, _backend.CPU), dtype=np.float64)
    draws = _rng(generator).standard_gamma(alpha)
    data = np.maximum(draws, np.finfo(self._data.dtype).tiny).astype(self._data.dtype)
    return record(StandardGammaBackward0, (self,), _backend.to_device(data, self.device))


# -- Dirichlet draws and the implicit gradient of their Beta marginals ----------------------------
def _sample_dirichlet(self: Tensor, generator=None) -> Tensor:
    """Draws from ``Dirichlet(self)`` along the last dim: normalized gamma draws, each at least
    the dtype's smallest normal number (PyTorch's CPU kernel). Not differentiable by itself
    (``Dirichlet.rsample`` attaches the gradient)."""
    alpha = np.asarray(_backend.to_device(self._data, _backend.CPU), dtype=np.float64)
    tiny = np.finfo(self._data.dtype).tiny
    gammas = _rng(generator).standard_gamma(alpha)
    with np.errstate(all="ignore"):
        draws = gammas / gammas.sum(-1, keepdims=True)
    data = np.maximum(draws, tiny).astype(self._data.dtype)
    return Tensor._make(_backend.to_device(data, self.device))


def _beta_continued_fraction(p, q, z, wrt_first: bool):
    """The continued fraction ``h`` of ``I_z(p, q) = z^p (1-z)^q / (p B(p, q)) h`` (modified
    Lentz), with its derivative in ``p`` (``wrt_first``) or in ``q``."""
    ones, zeros = np.ones_like(p), np.zeros_like(p)

    def coefficient(numer, dnumer, denom, ddenom):
        """``z numer / denom`` and its derivative."""
        return z * numer / denom, z * (dnumer * denom - numer * ddenom) / denom**2

    def step(k, dk, c, dc, d, dd):
        d_next = 1 + k * d
        dd_next = dk * d + k * dd
        d_next = np.where(np.abs(d_next) < _TINY, _TINY, d_next)
        c_next = 1 + k / c
        dc_next = dk / c - (k / c) * (dc / c)
        c_next = np.where(np.abs(c_next) < _TINY, _TINY, c_next)
        d_inv, dd_inv = 1 / d_next, -dd_next / d_next / d_next
        return c_next, dc_next, d_inv, dd_inv, c_next * d_inv, dc_next * d_inv + c_next * dd_inv

    # the first coefficient, -(p + q) z / (p + 1)
    k, dk = coefficient(-(p + q), -ones, p + 1, ones if wrt_first else zeros)
    c, dc = ones.copy(), zeros.copy()
    d = 1 + k
    d = np.where(np.abs(d) < _TINY, _TINY, d)
    dd = dk
    d, dd = 1 / d, -dd / d / d
    h, dh = d.copy(), dd.copy()
    active = np.ones(p.shape, dtype=bool)
    for m in range(1, _MAX_TERMS):
        # even coefficient m (q - m) z / ((p + 2m - 1)(p + 2m))
        denom = (p + 2 * m - 1) * (p + 2 * m)
        k, dk = coefficient(m * (q - m), zeros if wrt_first else m * ones, denom,
                            (2 * p + 4 * m - 1) if wrt_first else zeros)
        c, dc, d, dd, delta, ddelta = step(k, dk, c, dc, d, dd)
        h_next, dh_next = h * delta, dh * delta + h * ddelta
        # odd coefficient -(p + m)(p + q + m) z / ((p + 2m)(p + 2m + 1))
        numer = (p + m) * (p + q + m)
        dnumer = (2 * p + q + 2 * m) if wrt_first else (p + m)
        denom = (p + 2 * m) * (p + 2 * m + 1)
        k, dk = coefficient(-numer, -dnumer, denom, (2 * p + 4 * m + 1) if wrt_first else zeros)
        c, dc, d, dd, delta2, ddelta2 = step(k, dk, c, dc, d, dd)
        h_next, dh_next = h_next * delta2, dh_next * delta2 + h_next * ddelta2
        h, dh = np.where(active, h_next, h), np.where(active, dh_next, dh)
        settled = (np.abs(delta * delta2 - 1) <= 1e-16) & (
            np.abs(h * (ddelta * delta2 + delta * ddelta2)) <= 1e-16 * np.abs(dh))
        active &= ~settled
        if not active.any():
            break
    return h, dh


def _dirichlet_grad_array(x, alpha, total):
    """PyTorch's ``_dirichlet_grad``: ``(dx/dalpha) / (1 - x)`` for the Beta marginal ``x ~
    Beta(alpha, total - alpha)`` of a Dirichlet draw, the other concentrations (so
    ``total - alpha``) held fixed. ``dx/dalpha = -(dI_x/dalpha) / beta_pdf(x)``, ``I`` the
    regularized incomplete beta function, comes from its continued fraction (on
    ``I_x(a, b) = 1 - I_(1-x)(b, a)`` where that converges faster); the ``1 - x`` is the share
    the other components give up, so that ``Dirichlet.rsample``'s backward is
    ``grad * (g - sum(x g))``."""
    dtype = np.result_type(x.dtype, alpha.dtype, total.dtype)
    x, a, t = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (x, alpha, total)))
    b = t - a
    out = np.full(x.shape, np.nan)
    direct = x < (a + 1) / (a + b + 2)
    with np.errstate(all="ignore"):
        shared = np.log(x) - _digamma_array(a) + _digamma_array(a + b)
        if direct.any():
            sel = direct
            h, dh = _beta_continued_fraction(a[sel], b[sel], x[sel], wrt_first=True)
            xs = x[sel]
            out[sel] = -xs / a[sel] * (h * (shared[sel] - 1 / a[sel]) + dh)
        if (~direct).any():
            sel = ~direct
            ys = 1 - x[sel]
            h, dh = _beta_continued_fraction(b[sel], a[sel], ys, wrt_first=False)
            out[sel] = x[sel] / b[sel] * (h * shared[sel] + dh)
    return out.astype(dtype, copy=False)


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """``dx/dalpha`` of Dirichlet draws through their Beta marginals (not differentiable, as
    PyTorch's)."""
    host = [_backend.to_device(t._data, _backend.CPU) for t in (x, alpha, total)]
    return Tensor._make(_backend.to_device(_dirichlet_grad_array(*host), x.device))
