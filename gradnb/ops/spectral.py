"""The short-time Fourier transform (``stft``), composed from differentiable gradnb ops: padding
and framing are gathers with an index array, then a windowed ``rfft``/``fft`` per frame."""

from __future__ import annotations

import numpy as np

from ._common import Tensor
from .complex import view_as_real
from .creation import zeros
from .fft import fft, rfft
from .shape import cat

__all__ = ["stft"]


def _pad_index(length: int, pad: int, mode: str):
    """Source positions of a signal of ``length`` padded by ``pad`` on both sides (None marks
    a zero of constant padding)."""
    inner = np.arange(length)
    left, right = np.arange(-pad, 0), np.arange(length, length + pad)
    if mode == "reflect":
        if pad >= length:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({pad}, {pad}) at dimension "
                               f"0 of input [{length}]")
        left, right = -left, 2 * (length - 1) - right
    elif mode == "replicate":
        left, right = np.zeros(pad, int), np.full(pad, length - 1)
    elif mode == "circular":
        left, right = left % length, right % length
    elif mode != "constant":
        raise NotImplementedError(f"stft: pad_mode {mode!r} is not supported")
    return np.concatenate((left, inner, right))


def _padded(x: Tensor, pad: int, mode: str) -> Tensor:
    if mode == "constant":
        z = zeros(*x.shape[:-1], pad, dtype=x.dtype)
        return cat((z, x, z), dim=-1)
    return x[..., _pad_index(x.shape[-1], pad, mode)]


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform of a signal (1-D) or a batch of signals (2-D): the DFT of
    each windowed frame of ``n_fft`` samples, every ``hop_length`` samples; shape
    ``(batch?, frequencies, frames)``, with a last dimension of 2 when ``return_complex=False``."""
    complex_input = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D tensor")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = _padded(input, n_fft // 2, pad_mode) if center else input
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    frames_count = 1 + (length - n_fft) // hop
    positions = np.arange(frames_count)[:, None] * hop + np.arange(n_fft)[None, :]
    frames = x[..., positions]  # (batch?, frames, n_fft)
    if window is not None:
        if window.dim() != 1 or window.shape[0] != win:
            raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length="
                               f"{win}, but got window with size {list(window.shape)}")
        if win < n_fft:
            left = (n_fft - win) // 2
            window = cat((zeros(left, dtype=window.dtype), window,
                          zeros(n_fft - win - left, dtype=window.dtype)))
        frames = frames * window
    elif win < n_fft:
        left = (n_fft - win) // 2
        mask = np.zeros(n_fft, dtype=frames._data.dtype)
        mask[left:left + win] = 1
        frames = frames * Tensor._make(mask)
    one_sided = (not complex_input) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spectrum = rfft(frames, dim=-1, norm=norm) if one_sided else fft(frames, dim=-1, norm=norm)
    out = spectrum.transpose(-2, -1)
    return out if return_complex else view_as_real(out)


TENSOR_METHODS = {"stft": stft}
