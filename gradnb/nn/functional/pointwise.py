"""Elementwise activations, each recording PyTorch's own node (``LeakyReluBackward0``,
``HardtanhBackward0``, ...) with PyTorch's saved values.

The derivatives are PyTorch's formulas written in gradnb ops (``on_tensors`` nodes), so double
backward comes free and agrees with PyTorch's at the kinks (ELU's second derivative at 0 is
zero; mish's is NaN where ``exp(x)`` overflows). At a kink the branch taken is PyTorch's
(``x > 0`` picks the positive side).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._core import autocast_state as _autocast
from ..._core.backend import get_array_module
from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from ...ops import elementwise
from ...ops._common import is_reduced_float, scalar_op_math
from ...ops._refusals import refuse
from ...ops.creation import rand
from ...ops.inplace import apply_inplace
from ...ops.op_math import half_precision, to_op_math
from ...ops.shape import cat
from .activation import softmax

__all__ = [
    "celu", "elu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "logsigmoid", "mish", "prelu", "relu6", "relu_", "rrelu", "selu", "silu", "softmin",
    "softplus", "softshrink", "softsign", "tanhshrink", "threshold",
]

def _w(cond, a, b) -> Tensor:
    return elementwise.where(cond, a, b)


def _pointwise(cls, input: Tensor, out, attrs=None) -> Tensor:
    """Record ``cls`` for the elementwise result ``out`` (an array) of ``input``."""
    return record(cls, (input,), out.astype(input._data.dtype, copy=False), attrs=attrs)


class SiluBackward0(Node):
    """``d/dx [x sigmoid(x)] = s (1 + x (1 - s))`` with ``s = sigmoid(x)``."""
    rule = "self: grad * sigmoid(self) * (1 + self * (1 - sigmoid(self)))"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        s = elementwise.sigmoid(x)
        return (g * s * (1 + x * (1 - s)),)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (Swish)."""
    if inplace:
        return in_place(silu, input)
    x = input._data
    refuse("silu", x)
    with np.errstate(all="ignore"):
        out = x / (1 + get_array_module(x).exp(-x))
    return _pointwise(SiluBackward0, input, out)


class LeakyReluBackward0(Node):
    """Slope 1 above 0, ``negative_slope`` at and below 0."""
    rule = "self: grad where self > 0, else grad * negative_slope"

    __slots__ = ("negative_slope",)
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "negative_slope")

    def backward(self, g):
        (x,) = self.saved(g)
        return (_w(x > 0, g, g * self.negative_slope),)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    if inplace:
        return in_place(leaky_relu, input, negative_slope)
    x = input._data
    refuse("leaky_relu", x)
    # (float16, bfloat16: the slope times x in PyTorch's float32 op math, rounded once)
    scaled = (scalar_op_math(np.multiply, x, negative_slope) if is_reduced_float(x.dtype)
              else x * negative_slope)
    out = get_array_module(x).where(x > 0, x, scaled)
    return _pointwise(LeakyReluBackward0, input, out, {"negative_slope": negative_slope})


class EluBackward0(Node):
    """PyTorch's ``elu_backward``: slope ``scale`` above 0, ``input_scale * alpha * scale *
    exp(input_scale x)`` at and below 0; the slope's own derivative is taken only strictly
    below 0 (``elu_double_backward``), so the second derivative at 0 is zero."""
    rule = "self: grad * scale where self > 0, else grad * scale * alpha * exp(self)"

    __slots__ = ("alpha", "input_scale", "scale")
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "alpha", "scale", "input_scale")

    def backward(self, g):
        (x,) = self.saved(g)
        return (_elu_grad(g, x, self.alpha, self.scale, self.input_scale),)


def _elu_grad(g, x, alpha, scale, input_scale):
    negative = elementwise.where(x < 0, x, 0.0) * input_scale
    slope = elementwise.exp(negative) * (input_scale * alpha * scale)
    return g * elementwise.where(x <= 0, slope, scale)


class CeluBackward0(Node):
    """``elu_backward`` with ``scale = 1`` and ``input_scale = 1 / alpha``."""
    rule = "self: grad where self > 0, else grad * exp(self / alpha)"

    __slots__ = ("alpha",)
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "alpha")

    def backward(self, g):
        (x,) = self.saved(g)
        return (_elu_grad(g, x, self.alpha, 1.0, 1.0 / self.alpha),)


def _elu(input: Tensor, alpha: float, scale: float, input_scale: float):
    """``scale * x`` above 0, ``scale * alpha * (exp(input_scale x) - 1)`` at and below 0."""
    x = input._data
    refuse("elu", x)
    xp = get_array_module(x)
    dtype = x.dtype
    if half_precision(x):  # PyTorch's float32 op math, rounded once (ops/op_math.py)
        x = to_op_math(x)
    with np.errstate(all="ignore"):
        return xp.where(x > 0, x * scale, xp.expm1(x * input_scale) * (alpha * scale)).astype(
            dtype, copy=False)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    if inplace:
        return in_place(elu, input, alpha)
    return _pointwise(EluBackward0, input, _elu(input, alpha, 1.0, 1.0),
                      {"alpha": alpha, "scale": 1, "input_scale": 1})


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    if inplace:
        return in_place(selu, input)
    return _pointwise(EluBackward0, input, _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0),
                      {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1})


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere."""
    if inplace:
        return in_place(celu, input, alpha)
    return _pointwise(CeluBackward0, input, _elu(input, alpha, 1.0, 1.0 / alpha),
                      {"alpha": alpha})


class SoftplusBackward0(Node):
    """``sigmoid(beta x)``, and 1 where ``beta x > threshold`` (the linear part)."""
    rule = "self: grad where self * beta > threshold, else grad * sigmoid(beta * self)"

    __slots__ = ("beta", "threshold")
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "beta", "threshold")

    def backward(self, g):
        (x,) = self.saved(g)
        scaled = x * self.beta
        return (_w(scaled > self.threshold, g, g * elementwise.sigmoid(scaled)),)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    x = input._data
    refuse("softplus", x)
    xp = get_array_module(x)
    dtype = x.dtype
    if half_precision(x):  # PyTorch's float32 op math, rounded once (ops/op_math.py)
        x = to_op_math(x)
    scaled = x * beta
    with np.errstate(all="ignore"):
        smooth = xp.log1p(xp.exp(xp.minimum(scaled, threshold))) / beta
    out = xp.where(scaled > threshold, x, smooth).astype(dtype, copy=False)
    return _pointwise(SoftplusBackward0, input, out, {"beta": beta, "threshold": threshold})


class MishBackward0(Node):
    """PyTorch's ``infinitely_differentiable_mish_backward``: ``g (t + x sigmoid(x) (1 - t^2))``
    with ``t = tanh(log1p(exp(x)))``."""
    rule = "self: grad * (t + self * sigmoid(self) * (1 - t**2)), t = tanh(softplus(self))"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        t = elementwise.tanh(elementwise.log1p(elementwise.exp(x)))
        return (g * (t + x * elementwise.sigmoid(x) * (1 - t * t)),)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    if inplace:
        return in_place(mish, input)
    x = input._data
    refuse("mish", x)
    xp = get_array_module(x)
    with np.errstate(all="ignore"):
        out = x * xp.tanh(xp.log1p(xp.exp(x)))
    return _pointwise(MishBackward0, input, out)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (elementwise.abs(input) + 1)


class HardtanhBackward0(Node):
    """Slope 1 strictly inside ``(min_val, max_val)``, 0 at and beyond the ends."""
    rule = "self: grad where min_val < self < max_val, else 0"

    __slots__ = ("max_val", "min_val")
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "min_val", "max_val")

    def backward(self, g):
        (x,) = self.saved(g)
        return (_w((x > self.min_val) & (x < self.max_val), g, 0.0),)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``; the gradient is zero at and beyond the ends."""
    if inplace:
        return in_place(hardtanh, input, min_val, max_val)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    x = input._data
    refuse("hardtanh", x)
    if x.dtype.kind == "u" and min_val < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    out = get_array_module(x).clip(x, min_val, max_val)
    return _pointwise(HardtanhBackward0, input, out, {"min_val": min_val, "max_val": max_val})


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)`` (PyTorch's ``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0, 6, inplace)


class HardsigmoidBackward0(Node):
    """Slope ``1/6`` strictly inside ``(-3, 3)``, 0 elsewhere."""
    rule = "self: grad / 6 where -3 < self < 3, else 0"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        return (_w((x > -3) & (x < 3), g / 6, 0.0),)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    if inplace:
        return in_place(hardsigmoid, input)
    x = input._data
    refuse("hardsigmoid", x)
    return _pointwise(HardsigmoidBackward0, input, get_array_module(x).clip(x + 3, 0, 6) / 6)


class HardswishBackward0(Node):
    """PyTorch's ``hardswish_backward``: 0 below -3, ``x / 3 + 1/2`` on ``[-3, 3]``, 1 above."""
    rule = "self: 0 where self < -3, grad * (self / 3 + 0.5) where self <= 3, else grad"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = ("self",)

    def backward(self, g):
        (x,) = self.saved(g)
        inner = x.clamp(-3.0, 3.0)  # the ramp only matters inside [-3, 3]
        return (_w(x < -3, 0.0, _w(x <= 3, g * (inner / 3 + 0.5), g)),)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    if inplace:
        return in_place(hardswish, input)
    x = input._data
    refuse("hardswish", x)
    return _pointwise(HardswishBackward0, input, x * get_array_module(x).clip(x + 3, 0, 6) / 6)


class PreluKernelBackward0(Node):
    """``x > 0``: slope 1 for ``self`` and nothing for ``weight``; else ``weight`` and ``x``."""
    rule = "self: grad where self > 0, else grad * weight; weight: 0 where self > 0, else grad * self"

    __slots__ = ()
    on_tensors = True
    inputs = ("self", "weight")
    saves = ("self", "weight")

    def backward(self, g):
        x, w = self.saved(g)
        positive = x > 0
        return (_w(positive, g, g * w), _w(positive, 0.0, g * x))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one entry or one per
    channel (dim 1, or dim 0 of a 1-D input)."""
    if _autocast.enabled:  # PyTorch's CPU autocast list
        input, weight = _autocast.lower(input, weight)
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
    elif weight.ndim:
        w = weight.reshape(())
    x = input._data
    refuse("prelu", x)
    out = get_array_module(x).where(x > 0, x, x * w._data)
    return record(PreluKernelBackward0, (input, w), out)


class RreluWithNoiseBackward0(Node):
    """Training: the slope drawn per element (``noise``); eval: leaky ReLU's mean slope."""
    rule = "self: grad * noise (training), else leaky_relu_backward(grad, self, (lower + upper) / 2)"

    __slots__ = ("lower", "training", "upper")
    on_tensors = True
    inputs = ("self",)
    saves = (0,)
    saved_names = ("self", "noise")
    pack_order = (1, 0)  # PyTorch packs the noise first
    saved_attrs: ClassVar[dict] = {"lower": "lower", "upper": "upper", "training": "training"}

    def backward(self, g):
        x, noise = self.saved(g)
        if self.training:
            return (g * noise,)
        return (_w(x > 0, g, g * ((self.lower + self.upper) / 2)),)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with the slope ``(lower + upper) / 2`` (the eval form; a random slope per
    element in training)."""
    if inplace:
        return in_place(rrelu, input, lower, upper, training)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    x = input._data
    refuse("leaky_relu", x)
    xp = get_array_module(x)
    if training:
        slope = rand(*input.shape, dtype=input.dtype)._data * (upper - lower) + lower
        noise = xp.where(x >= 0, 1, slope).astype(x.dtype, copy=False)
        out = x * noise
    else:
        noise = xp.ones_like(x)
        out = xp.where(x > 0, x, x * ((lower + upper) / 2))
    return record(RreluWithNoiseBackward0, (input,), out.astype(x.dtype, copy=False),
                  save=(0, Tensor._make(noise)),
                  attrs={"lower": lower, "upper": upper, "training": training})


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - elementwise.tanh(input)


class ThresholdBackward0(Node):
    """Slope 1 where ``x > threshold``, 0 elsewhere."""
    rule = "self: grad where self > threshold, else 0"

    __slots__ = ("threshold",)
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "threshold")

    def backward(self, g):
        (x,) = self.saved(g)
        return (_w(x > self.threshold, g, 0.0),)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    if inplace:
        return in_place(_threshold, input, threshold, value)
    x = input._data
    refuse("threshold", x)
    out = get_array_module(x).where(x > threshold, x, value)
    return _pointwise(ThresholdBackward0, input, out, {"threshold": threshold})


_threshold = threshold  # (inside ``threshold`` the name is its argument)


class LogSigmoidBackward0(Node):
    """``d/dx log(sigmoid(x)) = sigmoid(-x)``; ``buffer`` is ``exp(-|x|)``, as PyTorch's."""
    rule = "self: grad * sigmoid(-self)"

    __slots__ = ()
    on_tensors = True
    inputs = ("self",)
    saves = (0,)
    saved_names = ("self", "buffer")

    def backward(self, g):
        x, _ = self.saved(g)
        return (g * elementwise.sigmoid(-x),)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, finite for any ``x``."""
    x = input._data
    refuse("logsigmoid", x)
    xp = get_array_module(x)
    buffer = xp.exp(-xp.abs(x))
    out = (xp.minimum(x, 0) - xp.log1p(buffer)).astype(x.dtype, copy=False)
    return record(LogSigmoidBackward0, (input,), out, save=(0, Tensor._make(buffer)))


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    return softmax(-input, dim, _stacklevel + 1, dtype)


class HardshrinkBackward0(Node):
    """Slope 1 where ``|x| > lambd``, 0 elsewhere."""
    rule = "self: grad where |self| > lambd, else 0"

    __slots__ = ("lambd",)
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "lambd")

    def backward(self, g):
        (x,) = self.saved(g)
        return (_w((x < -self.lambd) | (x > self.lambd), g, 0.0),)


class SoftshrinkBackward0(HardshrinkBackward0):
    __slots__ = ()


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    x = input._data
    refuse("hardshrink", x)
    out = get_array_module(x).where((x > lambd) | (x < -lambd), x, 0)
    return _pointwise(HardshrinkBackward0, input, out, {"lambd": lambd})


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    refuse("softshrink", input._data)
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, inf) for input dtype {input.dtype}, "
                           f"but found {lambd}")
    x = input._data
    xp = get_array_module(x)
    out = xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, 0))
    return _pointwise(SoftshrinkBackward0, input, out, {"lambd": lambd})


class GluBackward0(Node):
    """``a * sigmoid(b)`` of the halves: ``sigmoid(b)`` for ``a``, ``a s (1 - s)`` for ``b``."""
    rule = "self: cat(grad * sigmoid(b), grad * a * sigmoid(b) * (1 - sigmoid(b)), dim)"

    __slots__ = ("axis", "dim")
    on_tensors = True
    inputs = ("self",)
    saves = ("self", "dim")

    def backward(self, g):
        (x,) = self.saved(g)
        a, b = x.chunk(2, self.axis)
        s = elementwise.sigmoid(b)
        return (cat((g * s, g * a * s * (1 - s)), self.axis),)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {size}")
    x = input._data
    refuse("glu", x)
    axis = dim % x.ndim
    a, b = get_array_module(x).split(x, 2, axis=axis)
    with np.errstate(all="ignore"):
        out = a / (1 + get_array_module(x).exp(-b))
    # PyTorch keeps ``dim`` as given and shows a negative one as an unsigned 64-bit number.
    return _pointwise(GluBackward0, input, out, {"dim": dim % (1 << 64), "axis": axis})


def relu_(input: Tensor) -> Tensor:
    """``relu`` in place."""
    return input.relu_()


# -- the in-place forms (``inplace=True``, ``F.elu_``, ...) ------------------------------------------
def _in_place_node(cls):
    """PyTorch's node for the in-place form (``EluBackward1``): it saves the result where the
    out-of-place one saves the input. gradnb's in-place path saves a copy of the input instead,
    which gives the same derivative, so only the class (its name) changes."""
    return type(cls.__name__[:-1] + "1", (cls,), {
        "__slots__": (), "__module__": __name__,
        "__doc__": f"``{cls.__name__}`` recorded by the in-place form."})


_IN_PLACE_NODES = {cls: _in_place_node(cls) for cls in (
    EluBackward0, CeluBackward0, LeakyReluBackward0, ThresholdBackward0,
    RreluWithNoiseBackward0)}


def in_place(op, input: Tensor, *args) -> Tensor:
    """``op`` written back into ``input`` through gradnb's one in-place path (leaf check,
    version bump, the graph rebased onto ``input``)."""
    def compute(s):
        out = op(s, *args)
        node = out.grad_fn
        if type(node) in _IN_PLACE_NODES:
            node.__class__ = _IN_PLACE_NODES[type(node)]
        return out

    return apply_inplace(input, compute)
