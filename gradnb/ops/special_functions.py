"""Gamma-family and other special functions: lgamma, digamma, polygamma, mvlgamma, i0, and the
``gradnb.special`` compositions (xlog1py, entr, ndtr, ndtri, log_ndtr, erfcx, i0e, i1, i1e).

NumPy has none of these, so the forwards are series evaluated in float64: ``digamma`` by
recurrence up to 10 and its asymptotic series, ``polygamma`` through the Hurwitz zeta function
(Euler-Maclaurin), ``i0``/``i1`` by their power series. Each derivative is the next function of
its family (``lgamma' = digamma``, ``digamma' = polygamma(1)``, ``polygamma(n)' =
polygamma(n+1)``, ``i0' = i1``), so every order of derivative exists.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as _dtype
from .._core.graph import Node
from .._core.record import record
from . import arithmetic as ar
from . import elementwise as ew
from . import pointwise as pw
from . import reductions as red
from ._common import Tensor, as_tensor_operand
from ._refusals import refuse

__all__ = ["digamma", "i0", "lgamma", "mvlgamma", "polygamma"]

# B_2, B_4, ..., B_18 (Bernoulli numbers) for the Euler-Maclaurin tail of the zeta function.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)


def _float(x: Tensor, op: str) -> Tensor:
    """``x`` as floating point (integers promote to the default dtype, as in PyTorch), once
    ``op`` has refused a dtype its kernel lacks (every one here lacks complex)."""
    refuse(op, x._data)
    if x.dtype.is_floating_point:
        return x
    return x.to(_dtype.get_default_dtype())


def _polygamma_kernel(n: int) -> str:
    """The kernel PyTorch runs ``polygamma(n, x)`` with (named in its dtype errors)."""
    return ("digamma", "trigamma")[n] if n < 2 else "polygamma"


def _lgamma_array(x):
    def one(v):
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):  # poles: PyTorch gives +inf
            return math.inf

    return np.vectorize(one, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def _digamma_array(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        pole = (x <= 0) & (x == np.floor(x))
        neg = (x < 0) & ~pole
        z = np.where(neg, 1.0 - x, x)
        acc = np.zeros_like(z)
        for _ in range(10):  # recurrence psi(z) = psi(z + 1) - 1/z up to z >= 10
            small = z < 10
            acc = acc - np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        inv2 = 1.0 / (z * z)
        series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
            1 / 240 - inv2 * (1 / 132)))))
        out = acc + np.log(z) - 0.5 / z - series
        out = np.where(neg, out - math.pi / np.tan(math.pi * x), out)
        # PyTorch: digamma(+0) = -inf, digamma(-0) = +inf
        out = np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), out)
        return np.where(pole & (x != 0), np.nan, out)


def _zeta_array(s: float, q):
    """Hurwitz zeta ``sum_k (q + k) ** -s`` for an integer ``s > 1`` (Euler-Maclaurin after ten
    terms). Below zero the terms with ``q + k < 0`` are ``(-1)**s`` times a zeta of their
    positive mirror, so a far-negative ``q`` costs no more than a positive one."""
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(all="ignore"):
        pole = (q <= 0) & (q == np.floor(q))
        neg = (q < 0) & ~pole
        if neg.any():
            m = np.where(neg, np.ceil(-q), 0.0)  # how many terms are negative
            r = np.where(neg, -(q + m - 1), 1.0)  # the smallest mirrored term, in (0, 1)
            mirrored = (-1.0) ** s * (_zeta_positive(s, r) - _zeta_positive(s, r + m))
            rest = _zeta_positive(s, np.where(neg, q + m, q))
            total = np.where(neg, mirrored + rest, rest)
        else:
            total = _zeta_positive(s, q)
        return np.where(pole, np.inf, total)


def _zeta_positive(s: float, q):
    n = 10
    total = np.zeros_like(q)
    for k in range(n):
        total = total + (q + k) ** -s
    a = q + n
    total = total + a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    factor = s * a ** (-s - 1)  # s (s+1) ... (s + 2j - 2) a^(-s - 2j + 1) / (2j)!
    fact = 2.0
    for j, b in enumerate(_BERNOULLI, start=1):
        total = total + b / fact * factor
        factor = factor * (s + 2 * j - 1) * (s + 2 * j) / (a * a)
        fact = fact * (2 * j + 1) * (2 * j + 2)
    return total


def _trigamma_array(x):
    """``polygamma(1, x)`` as PyTorch computes it: the reflection ``pi**2 / sin(pi x)**2`` below
    1/2, so at a negative integer ``sin`` rounds to a tiny number and the value is huge and
    finite, where the zeta series would give ``inf`` (torch's digamma gradient there)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        low = x < 0.5
        sin_pi_x = np.sin(math.pi * np.where(low, x, 0.5))
        result = np.where(low, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
        z = np.where(low, 1.0 - x, x)
        for _ in range(6):
            result = result + 1.0 / (z * z)
            z = z + 1.0
        ixx = 1.0 / (z * z)
        result = result + (1 + 1 / (2 * z) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / z
        return np.where(low, -result, result)


def _polygamma_array(n: int, x):
    if n == 0:
        return _digamma_array(x)
    if n == 1:
        return _trigamma_array(x)
    sign = -1.0 if n % 2 == 0 else 1.0
    return sign * math.factorial(n) * _zeta_array(n + 1.0, x)


class PolygammaBackward0(Node):
    rule = "self: grad * polygamma(n + 1, self)"
    __slots__ = ("n",)
    on_tensors = True
    inputs = ("self",)
    saves = ("n", "self")

    def backward(self, g):
        (x,) = self.saved(g)
        return (g * polygamma(self.n + 1, x),)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma``."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _float(input, _polygamma_kernel(n))
    out = _polygamma_array(n, x._data).astype(x._data.dtype)
    return record(PolygammaBackward0, (x,), out, attrs={"n": n})


class DigammaBackward0(Node):
    rule = "self: grad * polygamma(1, self)"
    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        return (g * polygamma(1, x),)


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of the gamma function (``-inf`` at 0, NaN at the negative
    integers)."""
    x = _float(input, "digamma")
    return record(DigammaBackward0, (x,), _polygamma_array(0, x._data).astype(x._data.dtype))


class LgammaBackward0(Node):
    rule = "self: grad * digamma(self)"
    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        return (g * digamma(x),)


def lgamma(input: Tensor) -> Tensor:
    """``log|gamma(input)|`` (``+inf`` at the poles)."""
    x = _float(input, "lgamma")
    out = _lgamma_array(x._data).astype(x._data.dtype)
    return record(LgammaBackward0, (x,), out)


class MvlgammaBackward0(Node):
    rule = "self: mvlgamma_backward(grad, self, p): grad * sum_j digamma(self - j / 2)"
    __slots__ = ("p",)
    on_tensors = True
    inputs = ("self",)
    saves = ("p", "self")

    def backward(self, g):
        (x,) = self.saved(g)
        shifts = as_tensor_operand(np.arange(self.p, dtype=x._data.dtype) / 2, x)
        return (g * red.sum(digamma(x.unsqueeze(-1) - shifts), -1),)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``."""
    refuse("mvlgamma", input._data)  # a bool input, before ``p``
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float(input, "mvlgamma_arange")
    d = x._data
    shifts = np.arange(p, dtype=d.dtype) / 2
    terms = _lgamma_array(d[..., None] - shifts).astype(d.dtype)
    out = (terms.sum(-1) + p * (p - 1) / 4 * math.log(math.pi)).astype(d.dtype)
    return record(MvlgammaBackward0, (x,), out, attrs={"p": p})


# -- modified Bessel functions ----------------------------------------------------------------
def _bessel_asymptotic(order: int, x):
    """``I_order(x) * exp(-|x|)`` for large ``|x|``: Hankel's expansion."""
    ax = np.abs(x)
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, 15):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total = total + term
    out = total / np.sqrt(2 * math.pi * ax)
    return np.sign(x) * out if order == 1 else out


def _bessel_series(order: int, x, scaled: bool):
    """``I_order(x)`` (times ``exp(-|x|)`` when ``scaled``) by its power series, terms built by
    ratio so nothing overflows before the sum does; Hankel's expansion past ``|x| = 50``."""
    x = np.asarray(x, dtype=np.float64)
    big = np.abs(x) > 50
    if scaled and big.any():
        with np.errstate(all="ignore"):
            small = _bessel_series(order, np.where(big, 0.0, x), True)
            return np.where(big, _bessel_asymptotic(order, np.where(big, x, 100.0)), small)
    with np.errstate(all="ignore"):
        half = x / 2.0
        term = (half if order == 1 else np.ones_like(x))
        if scaled:
            term = term * np.exp(-np.abs(x))
        total = term.copy()
        sq = half * half
        k = 0
        while True:
            term = term * sq / ((k + 1) * (k + 1 + order))
            total = total + term
            k += 1
            if k > 20 and not np.any(np.abs(term) > 1e-17 * np.abs(total)):
                break
            if k > 2000:
                break
        return total


class I0Backward0(Node):
    rule = "self: grad * at::special_i1(self)"
    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        return (g * i1(x),)


class SpecialI0EBackward0(Node):
    rule = "self: grad * (at::special_i1e(self) - self.sgn() * result)"
    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        x, y = self.saved(g)
        return (g * (i1e(x) - ew.sign(x) * y),)


class SpecialI1Backward0(Node):
    """i1' = i0 - i1 / x (1/2 at 0)."""
    rule = "self: i1_backward(grad, self, result): grad * (i0(self) - result / self)"
    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        x, y = self.saved(g)
        safe = ew.where(x == 0, 1.0, x)
        return (g * ew.where(x == 0, 0.5, i0(x) - y / safe),)


class SpecialI1EBackward0(Node):
    """i1e' = i0e - i1e (sign(x) + 1/x) (1/2 at 0)."""
    rule = "self: i1e_backward(grad, self, result): grad * (i0e(self) - result * (sgn(self) + 1 / self))"
    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        x, y = self.saved(g)
        safe = ew.where(x == 0, 1.0, x)
        return (g * ew.where(x == 0, 0.5, i0e(x) - y * (ew.sign(x) + 1 / safe)),)


def _bessel(kind: str, order: int, scaled: bool, cls):
    def fn(input: Tensor) -> Tensor:
        x = _float(input, kind)
        return record(cls, (x,), _bessel_series(order, x._data, scaled).astype(x._data.dtype))

    fn.__name__ = kind
    fn.__doc__ = f"The modified Bessel function ``{kind}``."
    return fn


i0 = _bessel("i0", 0, False, I0Backward0)
i0e = _bessel("i0e", 0, True, SpecialI0EBackward0)
i1 = _bessel("i1", 1, False, SpecialI1Backward0)
i1e = _bessel("i1e", 1, True, SpecialI1EBackward0)


# -- gradnb.special compositions ----------------------------------------------------------------
xlog1py = pw.xlog1py


class SpecialEntrBackward0(Node):
    rule = "self: -grad * (log(self) + 1)"
    __slots__ = ()
    on_tensors = True
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        return (g * -(1 + ew.log(x)),)  # -inf at 0 and NaN below, as PyTorch's


def entr(input: Tensor) -> Tensor:
    """``-x log x`` (0 at 0, ``-inf`` for negative x)."""
    x = _float(input, "entr")
    d = x._data
    with np.errstate(all="ignore"):
        out = np.where(d > 0, -d * np.log(np.where(d > 0, d, 1.0)),
                       np.where(d == 0, 0.0, -np.inf)).astype(d.dtype)
        out = np.where(np.isnan(d), d, out)
    return record(SpecialEntrBackward0, (x,), out)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF."""
    # PyTorch's composition, node for node: mul.Scalar, erf, add.Scalar, mul.Scalar
    return ar.mul_scalar(ar.add_scalar(ew.erf(ar.mul_scalar(_float(input, "erf"), math.sqrt(0.5))), 1),
                         0.5)


class SpecialLogNdtrBackward0(Node):
    """PyTorch's formula ``g * exp(-(y + x**2 / 2)) / sqrt(2 pi)``: the pdf over the cdf taken in
    log space, exact far into the lower tail where the two underflow."""
    rule = "self: grad / sqrt(2 pi) * exp(-(result + self**2 / 2))"

    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        x, y = self.saved(g)
        return (g * ew.exp(-(y + x * x / 2)) / math.sqrt(2 * math.pi),)


def _log_ndtr_array(x):
    """PyTorch's evaluation, step for step (``t = x / sqrt 2``; below -1 ``log(erfcx(-t) / 2) -
    t * t``): far in the tail the gradient formula cancels ``y`` against ``x**2 / 2``, so the
    forward must round as torch's does for the gradients to agree."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        t = x * math.sqrt(0.5)
        low = x < -1.0
        tn = np.where(low, t, -1.0)
        tail = np.log(_erfcx_array(-tn) / 2) - tn * tn
        tp = np.where(low, 1.0, t)
        erfc = np.vectorize(math.erfc, otypes=[np.float64])(tp) if x.size else tp
        return np.where(low, tail, np.log1p(-erfc / 2))


def log_ndtr(input: Tensor) -> Tensor:
    """The log of the standard normal CDF, accurate far into the lower tail (there
    ``log(erfcx(-x / sqrt 2) / 2) - x**2 / 2``)."""
    x = _float(input, "log_ndtr")
    out = _log_ndtr_array(x._data).astype(x._data.dtype)
    return record(SpecialLogNdtrBackward0, (x,), out)


class SpecialNdtriBackward0(Node):
    rule = "self: grad * sqrt(2 * pi) * (result.square() / 2).exp()"
    __slots__ = ()
    on_tensors = True
    saves = ("result",)

    def backward(self, g):
        (y,) = self.saved(g)
        return (g * math.sqrt(2 * math.pi) * ew.exp(y * y / 2),)


def ndtri(input: Tensor) -> Tensor:
    """The inverse of the standard normal CDF."""
    x = _float(input, "ndtri")
    d = x._data
    with np.errstate(all="ignore"):
        out = math.sqrt(2.0) * pw._erfinv_array(2 * d.astype(np.float64) - 1) if d.size else d
    return record(SpecialNdtriBackward0, (x,), np.asarray(out).astype(d.dtype))


class SpecialErfcxBackward0(Node):
    rule = "self: grad * (2 * self * result - 2 / sqrt(pi))"
    __slots__ = ()
    on_tensors = True
    saves = ("self", "result")

    def backward(self, g):
        x, y = self.saved(g)
        return (g * (2 * x * y - 2 / math.sqrt(math.pi)),)


_INV_SQRT_PI = 0.56418958354775628694807945156


def _erfcx_array(x):
    """``exp(x^2) erfc(x)``; far out (``x > 50``) PyTorch's own continued fractions, so that
    ``2 x erfcx(x) - 2 / sqrt(pi)`` (the derivative) cancels to the same value as in PyTorch."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        erfc = np.vectorize(math.erfc, otypes=[np.float64])(x) if x.size else x
        direct = np.exp(x * x) * erfc
        inv = 1.0 / (x * x)
        asym = (1.0 / (x * math.sqrt(math.pi))) * (1 - 0.5 * inv * (1 - 1.5 * inv * (
            1 - 2.5 * inv * (1 - 3.5 * inv * (1 - 4.5 * inv)))))
        x2 = x * x
        fraction = _INV_SQRT_PI * (x2 * (x2 + 4.5) + 2) / (x * (x2 * (x2 + 5) + 3.75))
        far = np.where(x > 5e7, _INV_SQRT_PI / x, fraction)
        return np.where(x > 50, far, np.where(x > 25, asym, direct))


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``."""
    x = _float(input, "erfcx")
    return record(SpecialErfcxBackward0, (x,), _erfcx_array(x._data).astype(x._data.dtype))


TENSOR_METHODS = {
    "digamma": digamma, "i0": i0, "lgamma": lgamma, "mvlgamma": mvlgamma,
    "polygamma": lambda self, n: polygamma(n, self),
}
