"""Window functions for spectral analysis (``hann_window``, ``hamming_window``,
``bartlett_window``, ``blackman_window``, ``kaiser_window``), computed as PyTorch's factories
compute them: an ``arange`` in the requested dtype, then each scalar step in place, so float32
results round as PyTorch's do. A half float's steps run in float32 (PyTorch's opmath type) and
round back after each step.

``periodic=True`` (the default) gives the window of length ``N + 1`` without its last entry, the
form ``stft`` wants; ``periodic=False`` the symmetric window.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as _dtype
from ._args import cpp_type_name, int_arg
from ._refusals import refuse
from .creation import _finish, _place, _resolve

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


def _start(name: str, window_length, dtype, device):
    """PyTorch's ``window_function_checks``; returns the length, the NumPy dtype, the device and
    the dtype the steps compute in."""
    length = int_arg(name, "window_length", 1, window_length)
    d, dev = _resolve(dtype, device, name)
    np_dtype = (d or _dtype.get_default_dtype()).np
    if not _dtype.is_float_np(np_dtype) and np_dtype.kind != "c":
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{cpp_type_name(_dtype.from_numpy_dtype(np_dtype))}, device={dev}, layout=Strided "
            "(default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={length}")
    opmath = np.dtype(np.float32) if np_dtype.itemsize == 2 else np_dtype
    return length, np_dtype, dev, opmath


def _window(name, window_length, periodic, dtype, device, requires_grad, body):
    """The shared frame: the short lengths, the periodic extension, the dtype round trips."""
    length, np_dtype, dev, opmath = _start(name, window_length, dtype, device)
    if length <= 1:
        return _finish(_place(np.ones(length, dtype=np_dtype), dev), requires_grad)
    refuse("arange", np_dtype)  # complex passes PyTorch's checks, then its arange refuses it
    n = length + 1 if periodic else length

    def step(values, fn):
        """One of PyTorch's in-place steps: computed in ``opmath``, stored in the dtype."""
        return fn(values.astype(opmath)).astype(np_dtype)

    def scalar(value):
        """A Python number as PyTorch's kernels read it: rounded to the tensor's dtype first
        (a half float's steps then compute with the rounded number in float32)."""
        return opmath.type(np_dtype.type(value))

    values = body(np.arange(n, dtype=np_dtype), n, step, scalar)
    if periodic:
        values = values[:length]
    return _finish(_place(np.ascontiguousarray(values), dev), requires_grad)


def _cosine_body(alpha: float, beta: float):
    def body(w, n, step, scalar):
        w = step(w, lambda v: v * scalar(math.pi * 2.0 / (n - 1)))
        w = step(w, np.cos)
        w = step(w, lambda v: v * scalar(-beta))
        return step(w, lambda v: v + scalar(alpha))

    return body


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):
    """``alpha - beta * cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_body(alpha, beta))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False):
    """``0.5 - 0.5 * cos(2 pi n / (N - 1))``: the Hamming window with ``alpha = beta = 0.5``."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_body(0.5, 0.5))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False):
    """The triangular window: ``2n / (N - 1)`` rising, then ``2 - 2n / (N - 1)``."""
    def body(w, n, step, scalar):
        w = step(w, lambda v: v * scalar(2.0 / (n - 1)))
        half = ((n - 1) >> 1) + 1
        w[half:] = step(step(w[half:], lambda v: v * scalar(-1)),
                        lambda v: v + scalar(2))
        return w

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   body)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    def body(w, n, step, scalar):
        w = step(w, lambda v: v * scalar(math.pi / (n - 1)))
        four = step(step(step(w, lambda v: v * scalar(4)), np.cos),
                    lambda v: v * scalar(0.08))
        two = step(step(step(w, lambda v: v * scalar(2)), np.cos),
                   lambda v: v * scalar(0.5))
        return step(step(four, lambda v: v - two.astype(v.dtype)), lambda v: v + scalar(0.42))

    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   body)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None,
                  layout=None, device=None, requires_grad: bool = False):
    """``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`` with ``a = (N - 1) / 2`` (``I0`` the
    modified Bessel function of order zero), computed in float64 and rounded once."""
    def body(w, n, step, scalar):
        alpha = (n - 1) / 2.0
        ratio = (w.astype(np.float64) - alpha) / alpha
        return (np.i0(beta * np.sqrt(np.abs(1 - ratio ** 2))) / np.i0(beta)).astype(w.dtype)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, body)
