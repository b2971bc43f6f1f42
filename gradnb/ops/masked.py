"""``torch.masked`` on dense tensors: reductions, scans and normalizations that see only the
entries where a boolean ``mask`` (broadcast to the input) is True.

As in PyTorch (``torch/masked/_ops.py``), each op first replaces the masked-out entries by the
identity of its reduction (0 for sum, 1 for prod, -inf for amax and softmax, +inf for amin and
softmin, NaN for median, which then ignores them) through ``where``, so no gradient reaches
them, and then runs the ordinary op. Output entries whose whole reduction was masked out hold
that identity (or NaN for mean, var and std). ``_input_mask`` and ``_output_mask`` are PyTorch's
helpers of the same names: the mask an op reads, and the entries of its output that saw at least
one masked-in value.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module
from . import elementwise as ew
from . import pointwise as pw
from . import reductions as red
from . import softmax as sm
from . import sorting
from ._common import Tensor, wrap

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
    "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum",
    "var",
]

_SMALL_INTEGERS = ("uint8", "bool", "int8", "int16", "int32")
_REDUCTIONS = {"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var",
               "std", "logsumexp"}
_NORMALIZATIONS = {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}


def _canonical_dim(dim, ndim: int) -> tuple:
    """``dim`` as a sorted tuple of non-negative dims; None and ``()`` mean every dimension."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input: Tensor, *args, **kwargs) -> Tensor:
    """The boolean mask of ``input``'s shape that ``kwargs["mask"]`` stands for."""
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if not isinstance(mask, Tensor):
        mask = wrap(get_array_module(input._data).asarray(mask))
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = mask.broadcast_to(tuple(input.shape))
    return mask.to(_dtype.bool)


def _output_mask(op, input: Tensor, *args, **kwargs) -> Tensor:
    """Which entries of ``op(input, *args, **kwargs)`` saw at least one masked-in value."""
    name = getattr(op, "__name__", None)
    if name in _REDUCTIONS:
        if name == "norm" and args:
            args = args[1:]  # the ord argument
        dim = args[0] if args else kwargs.get("dim")
        inmask = _input_mask(input, *args, **kwargs)
        keepdim = bool(kwargs.get("keepdim", False))
        dims = _canonical_dim(dim, input.dim())
        return inmask.any(dim=dims, keepdim=keepdim) if dims else inmask  # itself, as PyTorch
    if name in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} object)")


def _identity(name: str, input: Tensor, *args):
    """The value a masked-out entry takes for reduction ``name`` (None when undefined), as
    PyTorch's ``_reduction_identity``: the extremes of an integer dtype stand for -inf and inf;
    a bool input has none, and a complex one asks ``iinfo`` (which refuses it)."""
    dtype = input.dtype
    floating = dtype.is_floating_point
    if name in ("sum", "cumsum"):
        return 0
    if name in ("prod", "cumprod"):
        return 1
    if name in ("amax", "argmax", "logaddexp", "logsumexp", "amin", "argmin"):
        lowest = name not in ("amin", "argmin")
        if floating:
            return -math.inf if lowest else math.inf
        if name == "logsumexp" and dtype.is_complex:
            return complex(-math.inf, 0)
        if dtype.is_signed or dtype == _dtype.uint8:
            if dtype.is_complex:  # (signed, so PyTorch asks iinfo, which refuses it)
                raise TypeError("gradnb.iinfo() requires an integer input type. Use gradnb.finfo "
                                "to handle 'gradnb.iinfo'")
            info = np.iinfo(dtype.np)
            return int(info.min if lowest else info.max)
    elif name in ("mean", "var", "std"):
        return None
    elif name == "norm":
        if (args[0] if args else 2) == -math.inf:
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return math.inf
        return 0
    elif name == "median":
        return math.nan
    raise NotImplementedError(f"identity of {name} on {dtype} input")


def _masked_input(name: str, input: Tensor, mask, *args) -> Tensor:
    """``input`` with the masked-out entries replaced by the identity of ``name``."""
    if mask is None:
        return input
    inmask = _input_mask(input, mask=mask)
    fill = wrap(get_array_module(input._data).asarray(_identity(name, input, *args),
                                                      dtype=input._data.dtype))
    return ew.where(inmask, input, fill)


def _sum_dtype(input: Tensor, dtype):
    if dtype is not None:
        return dtype
    return _dtype.int64 if input.dtype.name in _SMALL_INTEGERS else input.dtype


def sum(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The sum of the masked-in entries over ``dim`` (all by default); 0 where none is."""
    dims = _canonical_dim(dim, input.dim())
    return red.sum(_masked_input("sum", input, mask), dims, bool(keepdim),
                   dtype=_sum_dtype(input, dtype))


def prod(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The product of the masked-in entries over ``dim`` (all by default); 1 where none is."""
    dims = _canonical_dim(dim, input.dim())
    result = _masked_input("prod", input, mask).to(_sum_dtype(input, dtype))
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """The running sum along ``dim``, masked-out entries counting as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return red.cumsum(_masked_input("sum", input, mask), d, dtype=dtype).to(dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """The running product along ``dim``, masked-out entries counting as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return red.cumprod(_masked_input("prod", input, mask), d, dtype=dtype).to(dtype)


def amax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The largest masked-in entry over ``dim``; -inf (the lowest integer) where none is."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.dim())
    return red.amax(_masked_input("amax", input, mask), dims, bool(keepdim)).to(dtype)


def amin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The smallest masked-in entry over ``dim``; +inf (the highest integer) where none is."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.dim())
    return red.amin(_masked_input("amin", input, mask), dims, bool(keepdim)).to(dtype)


def argmax(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Where the largest masked-in entry along ``dim`` is, in ``input``'s dtype by default (as
    PyTorch's ``masked.argmax``)."""
    dtype = input.dtype if dtype is None else dtype
    return red.argmax(_masked_input("argmax", input, mask), dim, bool(keepdim)).to(dtype)


def argmin(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """Where the smallest masked-in entry along ``dim`` is, in ``input``'s dtype by default."""
    dtype = input.dtype if dtype is None else dtype
    return red.argmin(_masked_input("argmin", input, mask), dim, bool(keepdim)).to(dtype)


def _ones_count(input: Tensor, mask, dim, keepdim: bool) -> Tensor:
    """How many masked-in entries each reduction over ``dim`` sees (an int64 tensor)."""
    xp = get_array_module(input._data)
    if mask is None:
        return sum(wrap(xp.ones(tuple(input.shape), dtype=np.int64)), dim, keepdim=keepdim)
    return sum(_input_mask(input, mask=mask).to(_dtype.int64), dim, keepdim=keepdim)


def mean(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None, mask=None) -> Tensor:
    """The mean of the masked-in entries over ``dim``; NaN where none is."""
    source = "Input" if dtype is None else "Optional"
    dtype = input.dtype if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    count = _ones_count(input, mask, dim, bool(keepdim))
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype=None,
           mask=None) -> Tensor:
    """The lower median of the masked-in entries along ``dim``; NaN where none is."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(_dtype.float32)
    output = sorting.nanmedian(_masked_input("median", input, mask), d, keepdim).values
    if is_float:
        return output
    if bool(ew.isnan(output).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return output.to(dtype)


def logsumexp(input: Tensor, dim=None, *, keepdim: bool = False, dtype=None,
              mask=None) -> Tensor:
    """``log(sum(exp(x)))`` over the masked-in entries; -inf where none is."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.dim())
    return red.logsumexp(_masked_input("logsumexp", input, mask), dims, keepdim).to(dtype)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask=None,
              other_mask=None) -> Tensor:
    """``log(exp(input) + exp(other))``, each operand's masked-out entries counting as -inf."""
    dtype = input.dtype if dtype is None else dtype
    return pw.logaddexp(_masked_input("logaddexp", input, input_mask),
                        _masked_input("logaddexp", other, other_mask)).to(dtype)


def norm(input: Tensor, ord=2.0, dim=None, *, keepdim: bool = False, dtype=None,
         mask=None) -> Tensor:
    """The ``ord``-norm of the masked-in entries over ``dim`` (``linalg.vector_norm``)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.dim())
    return red.norm(_masked_input("norm", input, mask, ord), ord, dims, bool(keepdim),
                    dtype=dtype)


def _std_var(input: Tensor, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise RuntimeError("Only one of unbiased and correction may be given")
    correct = 1.0
    if unbiased is not None:
        correct = 1.0 if unbiased else 0.0
    if correction is not None:
        correct = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _dtype.float32
    compute = dtype if dtype.is_floating_point or dtype.is_complex else _dtype.float32
    count = _ones_count(input, mask, dim, True)
    sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        x = input - sample_total / count
        total = sum(x * x, dim, keepdim=keepdim, dtype=compute, mask=mask)
        if not keepdim:
            count = count.reshape(tuple(total.shape))
        if correct != 0:
            count = ew.clamp(count.to(compute) - correct, min=0)
        output = (total / count).to(dtype)
    return ew.sqrt(output) if take_sqrt else output


def var(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim: bool = False,
        dtype=None, mask=None) -> Tensor:
    """The variance of the masked-in entries over ``dim`` (``correction`` 1 by default)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim: bool = False,
        dtype=None, mask=None) -> Tensor:
    """The standard deviation of the masked-in entries over ``dim``."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


def softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``softmax`` along ``dim`` over the masked-in entries (masked-out ones get 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return sm.softmax(_masked_input("amax", input, mask), d, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``log_softmax`` along ``dim`` over the masked-in entries (masked-out ones get -inf)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return sm.log_softmax(_masked_input("amax", input, mask), d, dtype=dtype)


def softmin(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """``softmax(-x)`` along ``dim`` over the masked-in entries (masked-out ones get 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim())[0]
    return sm.softmax(-_masked_input("amin", input, mask), d, dtype=dtype)


def normalize(input: Tensor, ord, dim: int, *, eps: float = 1e-12, dtype=None,
              mask=None) -> Tensor:
    """The masked-in entries divided by their ``ord``-norm along ``dim`` (at least ``eps``);
    masked-out entries become 0."""
    dtype = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ew.maximum(nrm, wrap(get_array_module(nrm._data).asarray(eps, dtype=nrm._data.dtype)))
    return _masked_input("sum", input, mask) / denom
