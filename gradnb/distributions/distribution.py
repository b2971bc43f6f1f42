"""``Distribution``: the base class of every distribution, as ``torch.distributions``'s."""

from __future__ import annotations

import warnings

import gradnb

from .._core.tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_EMPTY_SHAPE = Size()  # the default sample_shape / batch_shape / event_shape


class Distribution:
    """The abstract base class for probability distributions.

    Args:
        batch_shape (gradnb.Size): the shape over which parameters are batched.
        event_shape (gradnb.Size): the shape of a single sample (without batching).
        validate_args (bool, optional): whether to validate arguments. Default: None.
    """

    has_rsample = False
    has_enumerate_support = False
    # As Python's ``assert``: validation is on unless Python runs with -O.
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Set whether validation is enabled (the default) or disabled for every distribution."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=_EMPTY_SHAPE, event_shape=_EMPTY_SHAPE, validate_args=None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the distribution "
                    "with `validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # a lazily derived parameter (logits from probs): not checked
                value = getattr(self, param)
                if not _is_all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution (or ``_instance``, filled in) with its batch dimensions expanded
        to ``batch_shape``; the parameters are expanded views, not copies, and the arguments
        are not checked again."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraint each tensor argument of the distribution must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint describing the distribution's support."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=_EMPTY_SHAPE) -> Tensor:
        """A ``sample_shape`` shaped sample (of batches, when the parameters are batched)."""
        with gradnb.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY_SHAPE) -> Tensor:
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability density/mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution's support along dimension 0, of shape
        ``(cardinality,) + batch_shape + event_shape`` (singleton batch dims if not
        ``expand``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """The perplexity, batched over ``batch_shape``."""
        return gradnb.exp(self.entropy())

    def _extended_shape(self, sample_shape=_EMPTY_SHAPE) -> Size:
        """``sample_shape + batch_shape + event_shape``: the shape of a sample."""
        return Size(tuple(Size(sample_shape)) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        """Check that ``value`` (given to ``log_prob``, ``cdf``, ...) broadcasts with the
        batch shape, ends with the event shape and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError(  # noqa: TRY004 (PyTorch's exception type)
                "The value argument to log_prob must be a Tensor")

        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")

        actual_shape = value.size()
        expected_shape = Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not _is_all_true(support.check(value)):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"


def _is_all_true(valid) -> bool:
    """Whether a constraint's check holds everywhere (a Python bool or a boolean tensor)."""
    if isinstance(valid, Tensor):
        return bool(valid.all())
    return bool(valid)
