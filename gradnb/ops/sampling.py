"""Samplers over tensors of parameters: ``poisson``, ``binomial`` and ``randint_like``, drawn on
the host from gradnb's one seeded generator (so ``manual_seed`` fixes them; the values are not
PyTorch's, whose generator differs).

PyTorch differentiates ``poisson`` as a constant (a zero gradient) and has no derivative for
``binomial`` (its backward raises): both recorded so.
"""

from __future__ import annotations

import numpy as np

from .._core import backend as _backend
from .._core.record import record
from ._args import scalar_type_name, type_name
from ._common import Tensor
from ._declare import record_underivable
from .creation import Generator, ZeroGradBackward, _finish, _resolve, _rng

__all__ = ["binomial", "poisson", "randint_like"]


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
