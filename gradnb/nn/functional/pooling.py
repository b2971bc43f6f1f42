"""Average pooling of every rank (``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``),
``lp_pool1d/2d/3d`` on top of them, and ``max_pool1d`` (``max_pool2d`` over a height of one);
the max pools that keep indices are in ``max_pool.py``.

An average pool is a separable linear map (``separable.py``): along each spatial dim a constant
``(out, in)`` matrix. The forward applies the matrices, the backward their transposes (a linear
map of the gradient, so every higher order follows). The 1-d pools are PyTorch's composites: the
2-d pool of the input unsqueezed at ``-2``, squeezed back.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._core.graph import Node
from ..._core.record import record
from ..._core.tensor import Tensor
from .conv import max_pool2d
from .max_pool import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, max_pool3d
from .pool_checks import (
    check_adaptive_input,
    check_pool_input,
    check_pool_output,
    check_pool_window,
)
from .separable import adaptive_avg_matrix, apply_along, avg_pool_matrix, pool_out_size

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool3d",
]


def _tuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(v)
    return (v,) * n


def _shown(v, n: int) -> tuple:
    """An int-list argument as PyTorch's node shows it: an int repeated, a list as given."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class SeparableBackward(Node):
    """The gradient of a separable linear pool: the transposed matrices (``mats``) applied to
    ``grad`` (divided by ``divisor_override`` when the pool summed its windows)."""
    rule = "self: the pool's transposed (linear) window map applied to grad"

    __slots__ = ()
    inputs = ("self",)
    saves = ("self",)
    on_tensors = True
    mats: ClassVar[tuple] = ()
    divisor = None

    def backward(self, g):
        if self.divisor is not None:
            g = g / self.divisor
        return (apply_along(g, [m.T for m in self.mats]),)


class AvgPool2DBackward0(SeparableBackward):
    rule = ("self: avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, "
            "count_include_pad, divisor_override)")
    __slots__ = ()
    saves = ("self", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
             "divisor_override")
    unsigned = ("divisor_override",)


class AvgPool3DBackward0(AvgPool2DBackward0):
    rule = ("self: avg_pool3d_backward(grad, self, kernel_size, stride, padding, ceil_mode, "
            "count_include_pad, divisor_override)")
    __slots__ = ()


class AdaptiveAvgPool2DBackward0(SeparableBackward):
    rule = "self: _adaptive_avg_pool2d_backward(grad, self)"
    __slots__ = ()


class AdaptiveAvgPool3DBackward0(SeparableBackward):
    rule = "self: _adaptive_avg_pool3d_backward(grad, self)"
    __slots__ = ()


def _pooled(cls, input: Tensor, mats, divisor=None, attrs=None) -> Tensor:
    """``input`` through the separable ``mats`` (a sum divided by ``divisor`` when given),
    recorded as ``cls``."""
    with np.errstate(invalid="ignore"):  # (an inf times a masked-out tap's zero weight)
        out = apply_along(input.detach(), mats)._data
    if divisor is not None:
        out = out / divisor
    return record(cls, (input,), out,
                  attrs={"mats": tuple(mats), "divisor": divisor, **(attrs or {})})


def _check_rank(input: Tensor, n: int, name: str) -> None:
    if input.ndim not in (n + 1, n + 2):
        if n == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"{name})")
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for "
                           "input")


def _avg_pool(input: Tensor, n: int, kernel_size, stride, padding, ceil_mode,
              count_include_pad, divisor_override) -> Tensor:
    """``avg_pool2d``/``avg_pool3d`` (``n``), recording PyTorch's node with its arguments."""
    _check_rank(input, n, f"avg_pool{n}d")
    kernel = _tuple(kernel_size, n)
    no_stride = stride is None or stride == [] or stride == ()
    steps = kernel if no_stride else _tuple(stride, n)
    pads = _tuple(padding, n)
    for k, p in zip(kernel, pads):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > k // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation=1")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    mats = [avg_pool_matrix(s, k, st, p, ceil_mode, count_include_pad,
                            unit=divisor_override is not None)
            for s, k, st, p in zip(input.shape[-n:], kernel, steps, pads)]
    cls = AvgPool2DBackward0 if n == 2 else AvgPool3DBackward0
    attrs = {"kernel_size": _shown(kernel_size, n),
             "stride": () if no_stride else _shown(stride, n), "padding": _shown(padding, n),
             "ceil_mode": ceil_mode, "count_include_pad": count_include_pad,
             "divisor_override": divisor_override}
    return _pooled(cls, input, mats, divisor_override, attrs)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each ``kernel_size`` window along the last dim of ``(N, C, L)``."""
    _check_rank(input, 1, "avg_pool1d")
    kernel = _tuple(kernel_size, 1)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 1)
    out = _avg_pool(input.unsqueeze(-2), 2, (1, *kernel), (1, *stride),
                    (0, *_tuple(padding, 1)), ceil_mode, count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each ``kernel_size`` window of ``(N, C, H, W)`` (or ``(C, H, W)``)."""
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each ``kernel_size`` window of ``(N, C, D, H, W)``."""
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_sizes(output_size, input: Tensor, n: int) -> tuple:
    """An adaptive average pool's output sizes (None keeps the input's), checked as PyTorch
    does."""
    sizes = tuple(input.shape[-n:])
    out = _tuple(output_size, n)
    name = f"adaptive_avg_pool{n}d"
    if len(out) != n:
        if n == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                               f"{len(out)})")
        raise RuntimeError(f"{name}: output_size must be {n}")
    if any(o is not None and o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(str(o) for o in out)}}}")
    return tuple(s if o is None else o for o, s in zip(out, sizes))


def _adaptive_avg(input: Tensor, n: int, outs: tuple) -> Tensor:
    if all(o == 1 for o in outs):  # PyTorch's composite takes the mean of the whole plane
        return input.mean(tuple(range(-1, -n - 1, -1)), keepdim=True)
    mats = [adaptive_avg_matrix(s, o) for s, o in zip(input.shape[-n:], outs)]
    cls = AdaptiveAvgPool2DBackward0 if n == 2 else AdaptiveAvgPool3DBackward0
    return _pooled(cls, input, mats)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average windows of the last dim chosen so that the output has ``output_size``."""
    check_adaptive_input(input, 1, "avg")
    (out,) = _adaptive_sizes(output_size, input, 1)
    return _adaptive_avg(input.unsqueeze(-2), 2, (1, out)).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average windows chosen so that the output has spatial size ``output_size``."""
    check_adaptive_input(input, 2, "avg")
    return _adaptive_avg(input, 2, _adaptive_sizes(output_size, input, 2))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average windows chosen so that the output has spatial size ``output_size``."""
    check_adaptive_input(input, 3, "avg")
    return _adaptive_avg(input, 3, _adaptive_sizes(output_size, input, 3))


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window along the last dim of ``(N, C, L)`` (or ``(C, L)``)."""
    check_pool_input(input, 1)
    k = _tuple(kernel_size, 1)[0]
    s = k if stride is None or stride == [] else _tuple(stride, 1)[0]
    p, d = _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    check_pool_window("max_pool1d", (k,), (s,), (p,), (d,))
    check_pool_output(input, 1, (pool_out_size(input.shape[-1], k, s, p, ceil_mode, d),))
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _tuple(padding, 1)[0]),
                     (1, _tuple(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def _lp_pool(input: Tensor, n: int, norm_type: float, kernel_size, stride, ceil_mode: bool):
    kernel = _tuple(kernel_size, n)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    out = pool(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    area = 1
    for k in kernel:
        area *= k
    return (out.sign() * out.abs().relu() * area).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x^p over each window)^(1/p)`` along the last dim."""
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x^p over each window)^(1/p)`` over the last two dims."""
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x^p over each window)^(1/p)`` over the last three dims."""
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode)
