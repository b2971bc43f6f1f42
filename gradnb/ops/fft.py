"""Discrete Fourier transforms (``gradnb.fft``), with PyTorch's arguments, norms and gradients.

Every transform is built as PyTorch's ``SpectralOps.cpp`` builds it, so the graph shows
PyTorch's nodes (``FftR2CBackward0``, ``ConstantPadNdBackward0``, ``ConjBackward0``...):

- ``_resize``: PyTorch's ``resize_fft_input``, a slice per trimmed dimension and one zero pad
  for all padded ones (the ``n``/``s`` arguments).
- ``_c2c``: complex-to-complex DFT; its adjoint is the DFT of the opposite sign, same
  normalization.
- ``_r2c``: real-to-complex DFT (the Hermitian half of the last dimension when ``onesided``); its
  adjoint pads the gradient back to full length, applies the inverse-sign DFT and keeps the real
  part.
- ``_c2r``: complex (Hermitian half) to real inverse DFT; as in PyTorch its gradient is the
  ``_r2c`` of the gradient with the entries whose mirror image was dropped counted twice.

Each primitive takes PyTorch's normalization mode (0: none, 1: by sqrt(n), 2: by n, of the sizes
it transforms); ``fft``/``ifft`` of a real signal, ``hfft``/``ihfft`` and their n-dimensional
forms are composed exactly as PyTorch composes them (conjugation around ``_c2r``/``_r2c``).
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record
from ._args import scalar_type_name, wrap_dim
from ._common import Tensor
from .complex import conj, conj_physical, real
from .creation import tensor
from .padding import _constant_pad as constant_pad
from .shape import cat

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2",
    "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft",
    "rfft2", "rfftfreq", "rfftn",
]


# -- primitives --------------------------------------------------------------------------------
# PyTorch's normalization modes (``fft_norm_mode``): what a transform over n points is scaled by.
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward: bool) -> int:
    """PyTorch's ``norm_from_string``: the mode a ``norm`` argument means in this direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise ValueError(f"Invalid normalization mode: {norm}")


def _scale_of(normalization: int, n: int) -> float:
    if normalization == _NONE:
        return 1.0
    return 1.0 / n if normalization == _BY_N else 1.0 / math.sqrt(n)


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """PyTorch's ``resize_fft_input``: ``x`` trimmed (a slice per dim) or zero-padded (one pad
    over all dims) at the end of each of ``dims`` to ``sizes``."""
    shape = x._data.shape
    pad = [0] * (2 * len(shape))
    for d, n in zip(dims, sizes):
        if shape[d] < n:
            pad[len(pad) - 2 * d - 1] = n - shape[d]
        elif shape[d] > n:
            x = x.narrow(d, 0, n)
    if not any(pad):
        return x
    return constant_pad(x, pad, 0)


class FftC2CBackward0(Node):
    inputs = ("self",)
    saves = ("dim", "forward", "normalization")
    rule = "self: _fft_c2c(grad, dim, normalization, !forward)"
    __slots__ = ("dim", "forward", "normalization")
    on_tensors = True

    def backward(self, g):
        return (_c2c(g, self.dim, self.normalization, not self.forward),)


def _c2c(x: Tensor, dims, normalization: int, forward: bool) -> Tensor:
    """PyTorch's ``_fft_c2c``: the DFT over ``dims`` (sign ``-`` when ``forward``), scaled by
    ``normalization`` of the transformed sizes."""
    data = x._data
    xp = get_array_module(data)
    if forward:
        out = xp.fft.fftn(data, axes=dims, norm="backward")
    else:
        out = xp.fft.ifftn(data, axes=dims, norm="forward")
    scale = _scale_of(normalization, math.prod(data.shape[d] for d in dims))
    out = _scaled(out, scale, data.dtype)
    return record(FftC2CBackward0, (x,), out,
                  attrs={"dim": tuple(dims), "forward": forward, "normalization": normalization})


class FftR2CBackward0(Node):
    inputs = ("self",)
    saves = ("self", "dim", "normalization", "onesided")
    rule = ("self: fft_r2c_backward(grad, dim, normalization, onesided, "
            "self.sym_size(dim.back()))")
    __slots__ = ("dim", "normalization", "onesided")
    on_tensors = True

    def backward(self, g):
        (x,) = self.saved(g)
        dims = self.dim
        if self.onesided:
            g = _zero_extend(g, dims[-1], x.shape[dims[-1]])
        return (real(_c2c(g, dims, self.normalization, False)),)


def _zero_extend(g: Tensor, dim: int, size: int) -> Tensor:
    """``g`` zero-padded at the end of ``dim`` to ``size`` (the dropped half of a onesided
    transform gets no gradient)."""
    data = g._data
    if data.shape[dim] >= size:
        return g
    shape = list(data.shape)
    shape[dim] = size - data.shape[dim]
    return cat([g, Tensor._make(get_array_module(data).zeros(shape, dtype=data.dtype))], dim)


def _r2c(x: Tensor, dims, normalization: int, onesided: bool) -> Tensor:
    """PyTorch's ``_fft_r2c``: the forward DFT of real ``x`` over ``dims``, keeping the first
    ``n // 2 + 1`` entries of the last of ``dims`` when ``onesided``."""
    data = x._data
    xp = get_array_module(data)
    if onesided:
        out = xp.fft.rfftn(data, axes=dims, norm="backward")
    else:
        out = xp.fft.fftn(data, axes=dims, norm="backward")
    scale = _scale_of(normalization, math.prod(data.shape[d] for d in dims))
    out = _scaled(out, scale, _dtype.complex_of(data.dtype))
    return record(FftR2CBackward0, (x,), out, attrs={
        "dim": tuple(dims), "normalization": normalization, "onesided": onesided})


class FftC2RBackward0(Node):
    inputs = ("self",)
    saves = ("dim", "normalization")
    rule = "self: fft_c2r_backward(grad, dim, normalization)"
    __slots__ = ("dim", "half", "normalization")
    on_tensors = True

    def backward(self, g):
        out = _r2c(g, self.dim, self.normalization, True)
        n = g.shape[self.dim[-1]]
        doubled = n - self.half  # entries 1..n-half stand for themselves and their mirror
        if doubled <= 0:
            return (out,)
        weight = np.ones(self.half, dtype=_dtype.real_of(out._data.dtype))
        weight[1:1 + doubled] = 2
        shape = [1] * out.ndim
        shape[self.dim[-1]] = self.half
        xp = get_array_module(out._data)
        return (out * Tensor._make(xp.asarray(weight.reshape(shape))),)


def _c2r(x: Tensor, dims, normalization: int, last_size: int) -> Tensor:
    """PyTorch's ``_fft_c2r``: the inverse-sign DFT of a Hermitian-half ``x`` over ``dims``,
    whose real output has ``last_size`` entries along the last of ``dims``."""
    data = x._data
    sizes = [data.shape[d] for d in dims[:-1]] + [last_size]
    out = get_array_module(data).fft.irfftn(data, s=sizes, axes=dims, norm="forward")
    out = _scaled(out, _scale_of(normalization, math.prod(sizes)), _dtype.real_of(data.dtype))
    return record(FftC2RBackward0, (x,), out, attrs={
        "dim": tuple(dims), "half": data.shape[dims[-1]], "normalization": normalization})


def _scaled(out, scale, dtype):
    if scale != 1:
        out = out * scale
    return out.astype(dtype, copy=False)


# -- arguments ---------------------------------------------------------------------------------
def _float_input(x: Tensor, complex_: bool) -> Tensor:
    """Promote integers to the default float (complex when ``complex_``), floats to complex."""
    kind = x._data.dtype.kind
    if kind in "biu":
        x = x.to(_dtype.get_default_dtype())
        kind = "f"
    if complex_ and kind == "f":
        x = x.to(_dtype.as_dtype(_dtype.complex_of(x._data.dtype)))
    return x


def _require_real(x: Tensor, name: str) -> None:
    """PyTorch's refusal of a complex input to a real-to-complex transform, in its words: ``rfft``
    and ``ihfft`` say "real", ``rfftn`` (and ``rfft2``) "real-valued"; the n-d ``ihfftn`` (and
    ``ihfft2``) checks its dims first and then says it only supports floating-point dtypes."""
    if x._data.dtype.kind == "c":
        kind = scalar_type_name(x._data.dtype)
        if name == "ihfftn":
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {kind}")
        real = "real-valued" if name == "rfftn" else "real"
        raise RuntimeError(f"{name} expects a {real} input tensor, but got {kind}")


def _wrap_dim(d: int, ndim: int) -> int:
    """The shared dim wrapping, except that a 0-d signal has no dimension to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return wrap_dim(d, ndim)


def _dims_and_sizes(x: Tensor, s, dim, default_dim):
    """PyTorch's reading of ``s``/``dim``: every dimension (or the last ``len(s)``) when ``dim``
    is None; sizes of -1 keep the input's size."""
    ndim = x.ndim
    if dim is None:
        if s is not None:
            dims = list(range(ndim - len(s), ndim))
        elif default_dim is None:
            dims = list(range(ndim))
        else:
            dims = [_wrap_dim(d, ndim) for d in default_dim]
    else:
        dims = [_wrap_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        if len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _one_dim(n, dim):
    return (None if n is None else [n]), [dim]


# -- complex to complex ------------------------------------------------------------------------
def _fftn_c2c(input, s, dim, norm, forward, default_dim):
    x = _float_input(input, complex_=True)
    dims, sizes = _dims_and_sizes(x, s, dim, default_dim)
    x = _resize(x, dims, sizes)
    return _c2c(x, dims, _norm_mode(norm, forward), forward)


def _fft_1d(input, n, dim, norm, forward):
    """PyTorch's ``fft``/``ifft``: a complex input goes through ``_fft_c2c``, a real one
    through a two-sided ``_fft_r2c`` (conjugated for the inverse)."""
    if input._data.dtype.kind == "c":
        return _fftn_c2c(input, *_one_dim(n, dim), norm, forward, None)
    x = _float_input(input, complex_=False)
    dims, sizes = _dims_and_sizes(x, *_one_dim(n, dim), None)
    out = _r2c(_resize(x, dims, sizes), dims, _norm_mode(norm, forward), False)
    return out if forward else conj(out)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``."""
    return _fft_1d(input, n, dim, norm, True)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform."""
    return _fft_1d(input, n, dim, norm, False)


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional discrete Fourier transform (over the last two dimensions)."""
    return _fftn_c2c(input, s, dim, norm, True, None)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional inverse discrete Fourier transform."""
    return _fftn_c2c(input, s, dim, norm, False, None)


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional discrete Fourier transform (over every dimension by default)."""
    return _fftn_c2c(input, s, dim, norm, True, None)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional inverse discrete Fourier transform."""
    return _fftn_c2c(input, s, dim, norm, False, None)


# -- real to complex (and its inverse) ---------------------------------------------------------
def _rfftn(input, s, dim, norm, name):
    _require_real(input, name)
    x = _float_input(input, complex_=False)
    dims, sizes = _dims_and_sizes(x, s, dim, None)
    x = _resize(x, dims, sizes)
    return _r2c(x, dims, _norm_mode(norm, True), True)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The DFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    s, d = _one_dim(n, dim)
    return _rfftn(input, s, d, norm, "rfft")


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional DFT of a real signal (half of the last dimension kept)."""
    return _rfftn(input, s, dim, norm, "rfftn")


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional DFT of a real signal (half of the last dimension kept)."""
    return _rfftn(input, s, dim, norm, "rfftn")


def _c2r_args(input, s, dim):
    """The complex input and its dims, resized for a c2r transform, and the output's length
    along the last dimension (``2 * (m - 1)`` unless ``s`` gives it)."""
    x = _float_input(input, complex_=True)
    dims, sizes = _dims_and_sizes(x, s, dim, None)
    last = sizes[-1] if s is not None and s[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    sizes[-1] = last // 2 + 1
    return _resize(x, dims, sizes), dims, last


def _irfftn(input, s, dim, norm):
    x, dims, last = _c2r_args(input, s, dim)
    return _c2r(x, dims, _norm_mode(norm, False), last)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``rfft``: a real signal of ``n`` points (``2 * (m - 1)`` by default)."""
    s, d = _one_dim(n, dim)
    return _irfftn(input, s, d, norm)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of ``rfft2``."""
    return _irfftn(input, s, dim, norm)


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of ``rfftn``."""
    return _irfftn(input, s, dim, norm)


# -- Hermitian signals -------------------------------------------------------------------------
def _hfftn(input, s, dim, norm):
    x, dims, last = _c2r_args(input, s, dim)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return _c2r(conj(x), dims[-1:], mode, last)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: a real output of ``n``
    points (``2 * (m - 1)`` by default)."""
    s, d = _one_dim(n, dim)
    return _hfftn(input, s, d, norm)


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional ``hfft``."""
    return _hfftn(input, s, dim, norm)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional ``hfft``."""
    return _hfftn(input, s, dim, norm)


def _ihfftn(input, s, dim, norm, name):
    if name == "ihfft":
        _require_real(input, name)
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    _require_real(input, name)  # ihfftn: after its dims, as PyTorch checks
    x = _resize(_float_input(input, complex_=False), dims, sizes)
    mode = _norm_mode(norm, False)
    out = _r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return conj(out)
    return _c2c(conj_physical(out), dims[:-1], mode, False)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the first half of the inverse DFT of a real signal."""
    s, d = _one_dim(n, dim)
    return _ihfftn(input, s, d, norm, "ihfft")


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional ``ihfft``."""
    return _ihfftn(input, s, dim, norm, "ihfftn")


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional ``ihfft``."""
    return _ihfftn(input, s, dim, norm, "ihfftn")


# -- helpers -----------------------------------------------------------------------------------
def _shift(input: Tensor, dim, inverse: bool) -> Tensor:
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    # PyTorch shifts forward by (n + 1) // 2 to undo fftshift's n // 2 (the same roll as -(n // 2))
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    if not dims:
        return input.clone()
    return input.roll(shifts, dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero frequency to the centre (every dimension unless ``dim`` is given)."""
    return _shift(input, dim, False)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of ``fftshift``."""
    return _shift(input, dim, True)


def _frequencies(values, dtype, requires_grad):
    d = _dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)
    return tensor(values, dtype=d, requires_grad=requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``."""
    return _frequencies(np.fft.fftfreq(n, d), dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of an ``n``-point ``rfft`` with sample spacing ``d``."""
    return _frequencies(np.fft.rfftfreq(n, d), dtype, requires_grad)
