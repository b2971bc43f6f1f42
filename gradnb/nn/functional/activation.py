"""Activations: softmax and log_softmax (stable for any logit size), GELU, dropout, and the
elementwise ones that ``gradnb`` already defines (relu, tanh, sigmoid)."""

from __future__ import annotations

import math

import numpy as np

from ..._core.backend import get_array_module, to_device
from ..._core.graph import Node
from ..._core.record import record
from ...ops import creation, dual, elementwise
from ...ops._refusals import refuse
from ...ops.softmax import log_softmax, softmax
from ._fused import Tensor

__all__ = ["dropout", "gelu", "log_softmax", "relu", "sigmoid", "softmax", "tanh"]


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_COEF = 0.044715


def _erf(x):
    """The error function of an array, or of a tensor (recorded, for double backward)."""
    if isinstance(x, Tensor):
        return elementwise.erf(x)
    xp = get_array_module(x)
    if xp is np:
        return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()
    from cupyx.scipy.special import erf  # optional (GPU only): imported where a CuPy array is met

    return erf(x)


class GeluBackward0(Node):
    """``d/dx [x * Phi(x)] = Phi(x) + x * phi(x)`` (or the tanh approximation's derivative)."""
    rule = "self: grad * (Phi(self) + self * phi(self))"

    __slots__ = ("approximate",)
    inputs = ("self",)
    saves = ("self", "approximate")

    def backward(self, g):
        (x,) = self.saved(g)
        if self.approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + _TANH_COEF * x * x * x)
            t = dual.tanh(inner)
            d_inner = _SQRT_2_OVER_PI * (1 + 3 * _TANH_COEF * x * x)
            return (g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner),)
        cdf = 0.5 * (1 + _erf(x * _SQRT_HALF))
        pdf = _INV_SQRT_2PI * dual.exp(-0.5 * x * x)
        return (g * (cdf + x * pdf),)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian Error Linear Unit ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = input._data
    refuse("gelu", x)
    if approximate == "tanh":
        xp = get_array_module(x)
        out = 0.5 * x * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + _TANH_COEF * x ** 3)))
    else:
        out = 0.5 * x * (1 + _erf(x * _SQRT_HALF))
    return record(GeluBackward0, (input,), out.astype(x.dtype, copy=False),
                  attrs={"approximate": approximate})


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``; with ``inplace``, written into ``input`` (``relu_``)."""
    if inplace:
        return input.relu_()
    return elementwise.relu(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return elementwise.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    """Logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``."""
    return elementwise.sigmoid(input)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask comes from gradnb's generator (``gradnb.manual_seed``); the gradient flows through
    the multiplication (``MulBackward0``, as in PyTorch).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    x = input._data
    if p == 1.0:  # PyTorch multiplies by a 0-d zero (what its MulBackward0 saves)
        mask = np.zeros((), dtype=x.dtype)
    else:
        keep = creation.default_generator._rng.random(x.shape) >= p
        # ``asarray``: for a 0-d input NumPy gives a scalar, which is not an array on a device.
        mask = np.asarray(keep / (1.0 - p), dtype=x.dtype)
    mask = to_device(mask, input.device)
    if inplace:  # PyTorch's dropout_: the same product, written into ``input``
        return input.mul_(Tensor._make(mask))
    return input * Tensor._make(mask)
