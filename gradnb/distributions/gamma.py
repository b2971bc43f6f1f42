"""The gamma distribution, as ``torch.distributions.Gamma``; ``rsample`` carries the implicit
reparameterization gradient of the draws (``gradnb.ops.gamma_draws``)."""

from __future__ import annotations

import math
from typing import ClassVar

import gradnb

from .._core.tensor import Size, Tensor
from ..ops.gamma_draws import _standard_gamma as _standard_gamma_draws
from ..ops.incomplete_gamma import igamma as _igamma
from . import constraints
from .distribution import _EMPTY_SHAPE
from .exp_family import ExponentialFamily
from .utils import _Number, broadcast_all

nan = math.nan
inf = math.inf
Number = _Number

__all__ = ["Gamma"]


def _standard_gamma(concentration):
    return _standard_gamma_draws(concentration)


class Gamma(ExponentialFamily):
    r"""
    Creates a Gamma distribution parameterized by shape :attr:`concentration` and :attr:`rate`.

    Example::

        >>> m = Gamma(gradnb.tensor([1.0]), gradnb.tensor([1.0]))
        >>> m.sample()  # Gamma distributed with concentration=1 and rate=1
        tensor([ 0.1046])

    Args:
        concentration (float or Tensor): shape parameter of the distribution
            (often referred to as alpha)
        rate (float or Tensor): rate parameter of the distribution
            (often referred to as beta), rate = 1 / scale
    """
    arg_constraints: ClassVar[dict] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(
        self,
        concentration: Tensor | float,
        rate: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, _Number) and isinstance(rate, _Number):
            batch_shape = Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(
            shape
        )
        value.detach().clamp_(
            min=gradnb.finfo(value.dtype).tiny
        )  # do not record in autograd graph
        return value

    def log_prob(self, value):
        value = gradnb.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            gradnb.xlogy(self.concentration, self.rate)
            + gradnb.xlogy(self.concentration - 1, value)
            - self.rate * value
            - gradnb.lgamma(self.concentration)
        )

    def entropy(self):
        return (
            self.concentration
            - gradnb.log(self.rate)
            + gradnb.lgamma(self.concentration)
            + (1.0 - self.concentration) * gradnb.digamma(self.concentration)
        )

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)
    def _log_normalizer(self, x, y):
        return gradnb.lgamma(x + 1) + (x + 1) * gradnb.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _igamma(*broadcast_all(self.concentration, self.rate * value))
