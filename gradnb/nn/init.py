"""Weight initialisation in place, drawing from gradnb's generator (``gradnb.manual_seed``).

Each function fills ``tensor`` without recording a graph and returns it, as in PyTorch.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core.backend import device_of, to_device
from .._core.graph import bump_version
from .._core.tensor import Tensor
from ..ops.creation import default_generator

__all__ = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac",
    "dirac_",
    "eye",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]


def _rng(generator):
    return (generator or default_generator)._rng


def _fill(tensor: Tensor, values) -> Tensor:
    """Write ``values`` into ``tensor`` in place (a new version, no graph)."""
    data = tensor._data
    values = np.asarray(values, dtype=data.dtype)
    if type(data) is not np.ndarray:
        values = to_device(values, device_of(data))
    data[...] = values
    bump_version(tensor)
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for an activation (PyTorch's table)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples from ``U(a, b)``."""
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples from ``N(mean, std^2)``."""
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with samples from ``N(mean, std^2)`` truncated to ``[a, b]``: values outside are
    drawn again, as PyTorch's rejection sampler does (a normal proposal where ``[a, b]`` holds
    more than 30% of the mass, a uniform one on ``[a, b]`` where it holds less)."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    rng = _rng(generator)
    dtype = tensor._data.dtype
    lo, hi = float(dtype.type(a)), float(dtype.type(b))  # the bounds the tensor can hold
    n = tensor.numel()
    if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
        values = rng.normal(mean, std, n).astype(dtype)
        pending = (values < lo) | (values > hi)
        while pending.any():
            values[pending] = rng.normal(mean, std, int(pending.sum())).astype(dtype)
            pending = (values < lo) | (values > hi)
    else:  # accept a uniform draw x with probability pdf(x) / pdf(mode)
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        values = np.empty(n, dtype)
        pending = np.ones(n, dtype=bool)
        while pending.any():
            k = int(pending.sum())
            candidates = rng.uniform(a, b, k).astype(dtype)
            log_pdf = -0.5 * ((candidates.astype(np.float64) - mean) / std) ** 2 - log_peak
            accepted = np.log(rng.random(k)) <= log_pdf
            index = np.flatnonzero(pending)[accepted]
            values[index] = candidates[accepted]
            pending[index] = False
    return _fill(tensor, values.reshape(tensor.shape))


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times ``gain``: trailing dimensions are flattened,
    and the Q of the QR factorisation of a Gaussian matrix is made uniform by the signs of R's
    diagonal (Saxe et al. 2013, as PyTorch)."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta: each output channel (of
    each of ``groups``) passes its input channel through, so the convolution is the identity
    on as many channels as it can be."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tuple(tensor.shape)
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(n // 2 for n in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d, *centre)] = 1
    return _fill(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a 2-D tensor with ``N(0, std**2)`` samples, then zero ``ceil(sparsity * rows)``
    entries of each column, picked at random (Martens, 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros_per_column = math.ceil(sparsity * rows)
    rng = _rng(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:zeros_per_column], col] = 0
    return _fill(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: ``N(0, std^2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    if 0 in tensor.shape:
        return 0.0
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: ``U(-b, b)`` with ``b = gain * sqrt(3 / fan)``."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: ``N(0, std^2)`` with ``std = gain / sqrt(fan)``."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def fan_in_bound(weight: Tensor) -> float:
    """``1 / sqrt(fan_in)``: the bias bound PyTorch's Linear and Conv layers use."""
    fan_in, _ = _fans(weight)
    return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0


def default_layer_init_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default for Linear and Conv layers: ``kaiming_uniform_(a=sqrt(5))`` weights
    and a bias uniform in ``±1/sqrt(fan_in)``."""
    kaiming_uniform_(weight, a=5 ** 0.5)
    if bias is not None:
        bound = fan_in_bound(weight)
        uniform_(bias, -bound, bound)


def _deprecated(method):
    """PyTorch's old name of an initialiser (without the trailing underscore): it warns, then
    calls the in-place one."""
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return method(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"Deprecated: use ``nn.init.{new_name}``."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
