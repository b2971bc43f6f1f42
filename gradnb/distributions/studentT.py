"""Student's t distribution, as ``torch.distributions.StudentT``."""

# ruff: noqa: N999 (PyTorch's module name, torch.distributions.studentT)

from __future__ import annotations

import math
from typing import ClassVar

import gradnb

from .._core.tensor import Size, Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import _EMPTY_SHAPE, Distribution
from .utils import _Number, _standard_normal, broadcast_all

nan = math.nan
inf = math.inf
Number = _Number

__all__ = ["StudentT"]


class StudentT(Distribution):
    r"""
    Creates a Student's t-distribution parameterized by degree of
    freedom :attr:`df`, mean :attr:`loc` and scale :attr:`scale`.

    Example::

        >>> m = StudentT(gradnb.tensor([2.0]))
        >>> m.sample()  # Student's t-distributed with degrees of freedom=2
        tensor([ 0.1046])

    Args:
        df (float or Tensor): degrees of freedom
        loc (float or Tensor): mean of the distribution
        scale (float or Tensor): scale of the distribution
    """
    arg_constraints: ClassVar[dict] = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        # PyTorch writes into a clone; masked_fill gives the same values and gradient (and
        # serves 0-d parameters too)
        return self.loc.masked_fill(self.df <= 1, nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        # PyTorch writes scale^2 df / (df - 2) where df > 2, inf where 1 < df <= 2 and nan
        # where df <= 1 into a clone of df. The same with where, the formula evaluated at a
        # stand-in df of 3 elsewhere so that no inf or nan leaks into the gradient.
        finite = self.df > 2
        df = gradnb.where(finite, self.df, gradnb.full_like(self.df, 3.0))
        m = self.scale.pow(2) * df / (df - 2)
        m = gradnb.where(finite, m, self.df.detach().masked_fill(self.df > 1, inf))
        return m.masked_fill(self.df <= 1, nan)

    def __init__(
        self,
        df: Tensor | float,
        loc: Tensor | float = 0.0,
        scale: Tensor | float = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SHAPE) -> Tensor:
        # NOTE: This does not agree with scipy implementation as much as other distributions.
        # (see https://github.com/fritzo/notebooks/blob/master/debug-student-t.ipynb). Using DoubleTensor
        # parameters seems to help.

        #   X ~ Normal(0, 1)
        #   Z ~ Chi2(df)
        #   Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * gradnb.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + gradnb.lgamma(0.5 * self.df)
            - gradnb.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * gradnb.log1p(y**2.0 / self.df) - Z

    def entropy(self):
        lbeta = (
            gradnb.lgamma(0.5 * self.df)
            + math.lgamma(0.5)
            - gradnb.lgamma(0.5 * (self.df + 1))
        )
        return (
            self.scale.log()
            + 0.5
            * (self.df + 1)
            * (gradnb.digamma(0.5 * (self.df + 1)) - gradnb.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
