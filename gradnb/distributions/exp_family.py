"""``ExponentialFamily``: distributions whose density is ``exp(<t(x), theta> - F(theta) +
k(x))``, with the entropy derived from the log normalizer ``F`` by autograd (a Bregman
divergence), as ``torch.distributions.exp_family``."""

import gradnb

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions (natural parameters ``theta``, log
    normalizer ``F``, mean carrier measure ``E[k(x)]``)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]``, with ``grad F`` by autograd."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = gradnb.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for np, g in zip(nparams, gradients):
            result -= (np * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
