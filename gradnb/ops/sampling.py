"""Samplers over tensors of parameters: ``bernoulli``, ``multinomial``, ``poisson``,
``binomial`` and ``randint_like``, drawn on the host from gradnb's one seeded generator (so
``manual_seed`` fixes them; the values are not PyTorch's, whose generator differs).

PyTorch differentiates ``poisson`` and ``bernoulli(p)`` as constants (a zero gradient) and has
no derivative for ``binomial`` or ``bernoulli(input, p)`` (their backward raises): recorded so.
"""

from __future__ import annotations

import numpy as np

from .._core import backend as _backend
from .._core import dtype as _dtype
from .._core.graph import Node
from .._core.record import record
from ._args import int_arg, scalar_type_name, type_name
from ._common import Tensor
from ._declare import record_underivable
from ._out import accepts_out
from ._refusals import refuse
from .creation import (
    Generator,
    ZeroGradBackward,
    _finish,
    _make,
    _resolve,
    _rng,
    _zeros_like_input,
)

__all__ = ["bernoulli", "binomial", "multinomial", "poisson", "randint_like"]


class BernoulliBackward0(Node):
    """``bernoulli(self)``: a random draw, so ``self`` gets zeros (PyTorch's)."""
    rule = "self: zeros_like(grad)"
    why_zero = "PyTorch does not differentiate through a random draw: its argument gets zeros"

    __slots__ = ()
    inputs = ("self",)

    def backward(self, g):
        return (_zeros_like_input(g, tuple(g.shape)),)


_P_IN_MESSAGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                 "message be improved?  If so, please report an enhancement request to PyTorch.)")


def check_probabilities(probs) -> None:
    """PyTorch's check of a probability tensor for ``bernoulli``: every entry in [0, 1] (NaN
    fails it)."""
    if probs.size and not bool(((probs >= 0) & (probs <= 1)).all()):
        raise RuntimeError(_P_IN_MESSAGE)


@accepts_out("bernoulli")
def bernoulli(input: Tensor, p=None, generator=None) -> Tensor:
    """1 with probability ``input`` (or ``p``, a number, for every entry), else 0, in
    ``input``'s dtype. ``input`` gets a zero gradient; with ``p`` PyTorch has no derivative."""
    # Drawn on the host from the one seeded generator, then placed on input's device.
    host = _backend.to_device(input._data, _backend.CPU)
    if p is None:
        refuse("bernoulli_tensor_self", host)
        refuse("bernoulli_tensor_p", host)
        check_probabilities(host)
        probs = host
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p):g}")
        refuse("bernoulli_scalar", host)
        probs = np.full(host.shape, p)
    arr = _backend.to_device((_rng(generator).random(probs.shape) < probs).astype(host.dtype),
                             input.device)
    if p is None:
        return record(BernoulliBackward0, (input,), arr)
    return record_underivable("bernoulli", (input,), arr)


_FLOAT32_MAX_CONSECUTIVE_INT = 2 ** 24
_ZERO_SUM = "invalid multinomial distribution (sum of probabilities <= 0)"


def _check_distributions(rows) -> None:
    """The checks of PyTorch's draw without replacement, over all rows at once."""
    with np.errstate(invalid="ignore"):
        if not bool((rows.max() < np.inf) & (rows.min() >= 0)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if bool((rows.sum(axis=1) == 0).any()):
        raise RuntimeError(_ZERO_SUM)


def _draw_with_replacement(rows, num_samples: int, rng):
    """PyTorch's kernel with replacement: row by row, each entry checked in turn (the first bad
    one names the error), then the row's sum; then inverse-CDF draws."""
    out = np.zeros((rows.shape[0], num_samples), dtype=np.int64)
    for i, row in enumerate(rows):
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~((row >= 0) & np.isfinite(row)))
        if bad.size:
            kind = "< 0" if not row[bad[0]] >= 0 else "= infinity or NaN"
            raise RuntimeError(f"invalid multinomial distribution (encountering probability "
                               f"entry {kind})")
        total = row.sum()
        if not total > 0:
            raise RuntimeError(_ZERO_SUM)
        cdf = np.cumsum(row / total)
        draws = rng.random(num_samples)
        out[i] = np.minimum(np.searchsorted(cdf, draws * cdf[-1], side="right"), len(row) - 1)
    return out


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (weights, not necessarily
    normalised): with ``replacement`` independently, without it each category at most once.

    Without replacement (or for one sample) PyTorch's own method: the ``num_samples`` largest of
    ``weight / Exp(1)`` (the exponential form of the Gumbel trick), so categories of weight 0
    come last when fewer than ``num_samples`` have weight."""
    num_samples = int_arg("multinomial", "num_samples", 2, num_samples)
    data = input._data
    if not 1 <= data.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not _dtype.is_float_np(data.dtype):
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(data.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = data.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if categories > _FLOAT32_MAX_CONSECUTIVE_INT:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = np.asarray(_backend.to_device(data, _backend.CPU), dtype=np.float64).reshape(
        -1, categories)
    out = np.zeros((rows.shape[0], num_samples), dtype=np.int64)
    if rows.size:
        rng = _rng(generator)
        if replacement and num_samples > 1:
            out = _draw_with_replacement(rows, num_samples, rng)
        else:
            _check_distributions(rows)
            with np.errstate(divide="ignore"):
                keys = rows / rng.exponential(1.0, rows.shape)
            out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    out = out.reshape(data.shape[:-1] + (num_samples,))
    return _make(_backend.to_device(np.ascontiguousarray(out), input.device))


class PoissonBackward0(ZeroGradBackward):
    rule = "self: zeros_like(self)"
    __slots__ = ()


def _check_generator(op: str, generator) -> None:
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{op}(): argument 'generator' must be gradnb.Generator, not "
                        f"{type_name(generator)}")


def _host(t: Tensor):
    return _backend.to_device(t._data, _backend.CPU)


def poisson(input: Tensor, generator=None) -> Tensor:
    """A Poisson sample per element, with the element as its rate (float dtypes only)."""
    _check_generator("poisson", generator)
    rates = _host(input)
    if rates.dtype.kind not in "fV":
        raise NotImplementedError(f'"poisson_cpu" not implemented for '
                                  f"'{scalar_type_name(rates.dtype)}'")
    if (rates < 0).any() or np.isnan(rates).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = _rng(generator).poisson(rates.astype(np.float64)).astype(rates.dtype)
    return record(PoissonBackward0, (input,), _backend.to_device(draws, input.device))


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """A binomial sample per element: ``count`` trials of success probability ``prob``
    (broadcast together, both floating, of one dtype)."""
    _check_generator("binomial", generator)
    n, p = _host(count), _host(prob)
    if n.dtype.kind not in "fV":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{scalar_type_name(n.dtype)}")
    if p.dtype.kind not in "fV":
        raise ValueError(f"binomial only supports floating-point dtypes for prob, got: "
                         f"{scalar_type_name(p.dtype)}")
    if n.dtype != p.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(p.dtype)} but expected "
                           f"{scalar_type_name(n.dtype)}")
    trials, chance = np.broadcast_arrays(n.astype(np.float64), p.astype(np.float64))
    draws = _rng(generator).binomial(trials.astype(np.int64), np.clip(chance, 0.0, 1.0))
    data = _backend.to_device(draws.astype(n.dtype), count.device)
    return record_underivable("binomial", (count, prob), data)


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad: bool = False, memory_format=None) -> Tensor:
    """Integers in ``[low, high)`` shaped as ``input``, in its dtype unless ``dtype``:
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    d, dev = _resolve(dtype if dtype is not None else input.dtype,
                      device if device is not None else input.device, "randint_like")
    draws = _rng(None).integers(low, high, size=tuple(input.shape)).astype(d.np)
    return _finish(_backend.to_device(draws, dev) if dev.type != "cpu" else draws,
                   requires_grad)


TENSOR_METHODS = {"bernoulli": bernoulli, "multinomial": multinomial}
