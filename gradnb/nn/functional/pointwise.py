"""Elementwise activations built from gradnb's own ops.

Most are exact compositions (``silu = x * sigmoid(x)``, leaky ReLU through ``where``), so their
gradient, double backward and device handling come from the ops they are made of. Branches that
``where`` discards are computed on clamped input so they never overflow: a discarded ``inf``
would turn the zero gradient of that branch into NaN. At the kinks the branch PyTorch's
derivative takes is the one selected here (``x > 0`` picks the positive side, as torch does).

The ELU family and mish are primitives whose derivative is PyTorch's formula written in gradnb
ops (``on_tensors`` nodes): their second derivatives then agree with PyTorch's where a composition's
would not (ELU's at 0, where PyTorch's first derivative takes the exponential side but its
second is zero; mish's NaN where ``exp(x)`` overflows).
"""

from __future__ import annotations

import numpy as np

from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops.creation import rand
from .activation import softmax

__all__ = [
    "celu", "elu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "logsigmoid", "mish", "prelu", "relu6", "relu_", "rrelu", "selu", "silu", "softmin",
    "softplus", "softshrink", "softsign", "tanhshrink", "threshold",
]

def _w(cond, a, b) -> Tensor:
    return elementwise.where(cond, a, b)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (Swish)."""
    return input * elementwise.sigmoid(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    return _w(input > 0, input, input * negative_slope)


class EluBackward0(Node):
    """PyTorch's ``elu_backward``: slope ``scale`` above 0, ``input_scale * alpha * scale *
    exp(input_scale x)`` at and below 0; the slope's own derivative is taken only strictly
    below 0 (``elu_double_backward``), so the second derivative at 0 is zero."""
    rule = "self: grad * scale where self > 0, else grad * scale * alpha * exp(self)"

    __slots__ = ("alpha", "input_scale", "scale")
    on_tensors = True
    saves = (0,)

    def backward(self, g):
        (x,) = self.saved(g)
        negative = elementwise.where(x < 0, x, 0.0) * self.input_scale
        slope = elementwise.exp(negative) * (self.input_scale * self.alpha * self.scale)
        return (g * elementwise.where(x <= 0, slope, self.scale),)


class CeluBackward0(EluBackward0):
    rule = "self: grad where self > 0, else grad * exp(self / alpha)"
    __slots__ = ()


def _elu(cls, input: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    """``scale * x`` above 0, ``scale * alpha * (exp(input_scale x) - 1)`` at and below 0."""
    x = input._data
    xp = get_array_module(x)
    with np.errstate(all="ignore"):
        out = xp.where(x > 0, x * scale, xp.expm1(x * input_scale) * (alpha * scale))
    return record(cls, (input,), out.astype(x.dtype, copy=False),
                  attrs={"alpha": alpha, "scale": scale, "input_scale": input_scale})


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    return _elu(EluBackward0, input, alpha, 1.0, 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return _elu(EluBackward0, input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere."""
    return _elu(CeluBackward0, input, alpha, 1.0, 1.0 / alpha)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    scaled = input * beta
    smooth = elementwise.log1p(elementwise.exp(scaled.clamp(max=threshold))) / beta
    return _w(scaled > threshold, input, smooth)


class MishBackward0(Node):
    """PyTorch's ``infinitely_differentiable_mish_backward``: ``g (t + x sigmoid(x) (1 - t^2))``
    with ``t = tanh(log1p(exp(x)))``."""
    rule = "self: grad * (t + self * sigmoid(self) * (1 - t**2)), t = tanh(softplus(self))"

    __slots__ = ()
    on_tensors = True
    saves = (0,)

    def backward(self, g):
        (x,) = self.saved(g)
        t = elementwise.tanh(elementwise.log1p(elementwise.exp(x)))
        return (g * (t + x * elementwise.sigmoid(x) * (1 - t * t)),)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    x = input._data
    xp = get_array_module(x)
    with np.errstate(all="ignore"):
        out = x * xp.tanh(xp.log1p(xp.exp(x)))
    return record(MishBackward0, (input,), out.astype(x.dtype, copy=False))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (elementwise.abs(input) + 1)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``; the gradient is zero at and beyond the ends."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    inside = (input > min_val) & (input < max_val)
    return _w(inside, input, input.clamp(min_val, max_val).detach())


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    return hardtanh(input + 3, 0.0, 6.0) / 6


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``; its gradient is 0 below -3 and 1 above 3, as in PyTorch."""
    inner = input.clamp(-3.0, 3.0)  # the ramp only matters inside (-3, 3); no inf there
    ramp = inner * (inner + 3) / 6
    return _w(input <= -3, 0.0, _w(input < 3, ramp, input))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one entry or one per
    channel (dim 1, or dim 0 of a 1-D input)."""
    if input.ndim == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    w = weight
    if weight.numel() != 1:
        channels = input.shape[1] if input.ndim >= 2 else input.shape[0]
        if weight.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers"
                f" = {weight.numel()} and channel size = {channels}.")
        shape = [1] * input.ndim
        shape[1 if input.ndim >= 2 else 0] = channels
        w = weight.reshape(*shape)
    elif input.ndim:
        w = weight.reshape(*([1] * input.ndim))
    else:
        w = weight.reshape(())
    return _w(input > 0, input, w * input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with the slope ``(lower + upper) / 2`` (the eval form; a random slope per
    element in training)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2)

    slope = rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
    return _w(input >= 0, input, input * slope)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - elementwise.tanh(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    return _w(input > threshold, input, float(value))


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for any ``x``."""
    return -softplus(-input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    return softmax(-input, dim, _stacklevel + 1, dtype)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    return _w((input > lambd) | (input < -lambd), input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, inf) for input dtype {input.dtype}, "
                           f"but found {lambd}")
    return _w(input > lambd, input - lambd, _w(input < -lambd, input + lambd, 0.0))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {size}")
    a, b = input.chunk(2, dim)
    return a * elementwise.sigmoid(b)


def relu_(input: Tensor) -> Tensor:
    """``relu`` in place."""
    return input.relu_()

