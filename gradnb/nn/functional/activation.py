"""Activations: softmax and log_softmax (stable for any logit size), GELU, dropout, and the
elementwise ones that ``gradnb`` already defines (relu, tanh, sigmoid)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core.backend import get_array_module, to_device
from ..._core.graph import OUTPUT, Node
from ..._core.record import record
from ..._core.tensor import _wrap_dim
from ...ops import creation, dual, elementwise
from ._fused import Tensor

__all__ = ["dropout", "gelu", "log_softmax", "relu", "sigmoid", "softmax", "tanh"]


def _softmax_dim(name: str, dim, ndim: int) -> int:
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                      "to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    return _wrap_dim(dim, ndim) if ndim else 0


def _as_float(input: Tensor, dtype):
    if dtype is not None:
        return input.to(dtype=dtype)
    return input


def _shifted(x, axis):
    """``x - max(x)`` along ``axis``: exponentials of it never overflow (max is 0)."""
    if x.ndim == 0 or x.size == 0:  # an empty tensor has nothing to shift (and no max)
        return x - x
    return x - x.max(axis=axis, keepdims=True)


class SoftmaxBackward0(Node):
    """``dx = y * (g - sum(g * y))`` along the softmax dimension."""

    __slots__ = ("dim",)
    saves = (OUTPUT,)

    def backward(self, g):
        (y,) = self.saved(g)
        gy = g * y
        return (gy - y * dual.sum(gy, axis=self.dim, keepdims=True),)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, computed as ``exp(x - max x)`` so logits of any
    magnitude give finite probabilities."""
    input = _as_float(input, dtype)
    dim = _softmax_dim("softmax", dim, input.ndim)
    x = input._data
    e = get_array_module(x).exp(_shifted(x, dim))
    out = e / e.sum(axis=dim, keepdims=True) if x.ndim else e
    return record(SoftmaxBackward0, (input,), out, attrs={"dim": dim})


class LogSoftmaxBackward0(Node):
    """``dx = g - exp(y) * sum(g)`` along the dimension (``exp(y)`` is the softmax)."""

    __slots__ = ("dim",)
    saves = (OUTPUT,)

    def backward(self, g):
        (y,) = self.saved(g)
        return (g - dual.exp(y) * dual.sum(g, axis=self.dim, keepdims=True),)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim``, shifted by the maximum so it never overflows."""
    input = _as_float(input, dtype)
    dim = _softmax_dim("log_softmax", dim, input.ndim)
    x = input._data
    xp = get_array_module(x)
    shifted = _shifted(x, dim)
    if x.ndim:
        out = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    else:
        out = shifted
    return record(LogSoftmaxBackward0, (input,), out, attrs={"dim": dim})


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
    from cupyx.scipy.special import erf

    return erf(x)


class GeluBackward0(Node):
    """``d/dx [x * Phi(x)] = Phi(x) + x * phi(x)`` (or the tanh approximation's derivative)."""

    __slots__ = ("approximate",)
    saves = (0,)

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
    if approximate == "tanh":
        xp = get_array_module(x)
        out = 0.5 * x * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + _TANH_COEF * x ** 3)))
    else:
        out = 0.5 * x * (1 + _erf(x * _SQRT_HALF))
    return record(GeluBackward0, (input,), out.astype(x.dtype, copy=False),
                  attrs={"approximate": approximate})


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` (``inplace`` is accepted for PyTorch compatibility and ignored)."""
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
    if p == 1.0:
        mask = np.zeros(x.shape, dtype=x.dtype)
    else:
        keep = creation.default_generator._rng.random(x.shape) >= p
        # ``asarray``: for a 0-d input NumPy gives a scalar, which is not an array on a device.
        mask = np.asarray(keep / (1.0 - p), dtype=x.dtype)
    mask = to_device(mask, input.device)
    return input * Tensor._make(mask)
