"""Helpers shared by the distributions, as ``torch.distributions.utils``."""

from __future__ import annotations

import math
from functools import update_wrapper

import gradnb

from .._core.tensor import Size, Tensor

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

# What PyTorch's distributions accept as a plain number (``torch.types._Number``).
_Number = (int, float, bool)


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers become tensors of the first tensor's
    dtype and device (of the default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "gradnb.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = {"dtype": gradnb.get_default_dtype()}
        for value in values:
            if isinstance(value, Tensor):
                options = {"dtype": value.dtype, "device": value.device}
                break
        values = [v if isinstance(v, Tensor) else gradnb.tensor(v, **options) for v in values]
    return gradnb.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device) -> Tensor:
    return gradnb.randn(tuple(shape), dtype=dtype, device=device)


def _standard_uniform(shape, dtype, device) -> Tensor:
    return gradnb.rand(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[:-dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or unnormalized log probabilities (last dim) to probabilities."""
    if is_binary:
        return gradnb.sigmoid(logits)
    return gradnb.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp probabilities into ``[eps, 1 - eps]`` for the dtype's machine epsilon."""
    eps = gradnb.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities to log-odds (binary) or log probabilities (last dim)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return gradnb.log(ps_clamped) - gradnb.log1p(-ps_clamped)
    return gradnb.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance (a non-data
    descriptor), always with grad enabled so parameters derived lazily stay differentiable."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with gradnb.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Looks like a property to documentation tools and like a lazy_property to validation."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int, device) -> Tensor:
    arange = gradnb.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries of (a batch of) ``D x D`` matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """(A batch of) vectors laid into lower-triangular ``D x D`` matrices, in row order."""
    # +ve root of D**2 + (1+2*diag)*D - |diag| * (diag+1) - 2*vec.shape[-1] = 0
    n = (-(1 + 2 * diag)
         + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = gradnb.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(Size(tuple(vec.shape[:-1]) + (n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _standard_exponential(shape, dtype, device) -> Tensor:
    """Exp(1) draws by inversion, ``-log(1 - U)``, from gradnb's seeded generator."""
    return -gradnb.log1p(-_standard_uniform(shape, dtype, device))


def _broadcast_shapes(*shapes) -> Size:
    """The broadcast of ``shapes``, refused in the words of ``torch.broadcast_shapes``."""
    shapes = [Size(s) for s in shapes]  # printed as PyTorch's: its callers pass Sizes
    result = [1] * max((len(s) for s in shapes), default=0)
    for index, shape in enumerate(shapes):
        for j in range(-1, -1 - len(shape), -1):
            if shape[j] != 1 and shape[j] != result[j]:
                if result[j] != 1:
                    raise RuntimeError(
                        f"Attempting to broadcast a dimension of length {shape[j]} at {j}! "
                        f"Mismatching argument at index {index} had {shape}; but "
                        f"expected shape should be broadcastable to {result}")
                result[j] = shape[j]
    return Size(result)


def _standard_cauchy(shape, dtype, device) -> Tensor:
    """Standard Cauchy draws by inversion, ``tan(pi (U - 1/2))``, from gradnb's generator."""
    return gradnb.tan(math.pi * (_standard_uniform(shape, dtype, device) - 0.5))


def _draw_like(like: Tensor, draw, *params: Tensor) -> Tensor:
    """``draw(generator, *arrays)`` on the host arrays of ``params`` (NumPy's samplers, for the
    discrete counts PyTorch draws with ``poisson``/``binomial``), as a tensor like ``like``."""
    arrays = [p.detach().cpu().numpy() for p in params]
    out = draw(gradnb.default_generator._rng, *arrays)
    return gradnb.tensor(out, dtype=like.dtype, device=like.device)
