"""The short-time Fourier transform (``stft``), composed from differentiable gradnb ops: padding
and framing are gathers with an index array, then a windowed ``rfft``/``fft`` per frame."""

from __future__ import annotations

import numpy as np

from ._common import Tensor
from .complex import view_as_real
from .creation import zeros
from .fft import _c2c, _r2c
from .padding import constant_pad_nd
from .padding_modes import circular_pad, index_pad
from .shape import SqueezeBackward4, TransposeBackward1, cat, inplace_view_step, unsqueeze
from .strided import as_strided

__all__ = ["stft"]


def _padded(x: Tensor, pad: int, mode: str) -> Tensor:
    """The signal padded by ``pad`` on both sides of its last dim, through ``pad``'s own nodes
    (``ReflectionPad1DBackward0``...), as PyTorch's stft calls ``F.pad``."""
    if mode == "constant":
        return constant_pad_nd(x, (pad, pad))
    if mode == "circular":
        return circular_pad(x, (pad, pad))
    if mode not in ("reflect", "replicate"):
        raise NotImplementedError(f"stft: pad_mode {mode!r} is not supported")
    length = x.shape[-1]
    if mode == "reflect" and pad >= length:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({pad}, {pad}) at dimension "
                           f"{x.dim() - 1} of input {list(x.shape)}")
    return index_pad(x, (pad, pad), mode)


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
    x = input
    if center:  # as torch.functional.stft: viewed to 3-d, padded, viewed back
        signal_dim = x.dim()
        x = _padded(x.view([1] * (3 - signal_dim) + list(x.shape)), n_fft // 2, pad_mode)
        x = x.view(list(x.shape[-signal_dim:]))
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length="
                           f"{win}, but got window with size {list(window.shape)}")
    # Composed as PyTorch's C++ stft (SpectralOps.cpp): frames as one strided view of the
    # (batched) signal, windowed, transformed along the last dim, then transpose_ (and squeeze_)
    if x.dim() == 1:
        x = unsqueeze(x, 0)
    s0, s1 = x.stride()
    frames = as_strided(x, (x.shape[0], 1 + (length - n_fft) // hop, n_fft), (s0, hop * s1, s1))
    if win < n_fft:
        left = (n_fft - win) // 2
        if window is not None:
            window = cat((zeros(left, dtype=window.dtype), window,
                          zeros(n_fft - win - left, dtype=window.dtype)))
        else:
            mask = np.zeros(n_fft, dtype=frames._data.dtype)
            mask[left:left + win] = 1
            window = Tensor._make(mask)
    if window is not None:
        frames = frames * window
    complex_fft = frames.dtype.is_complex
    one_sided = (not complex_fft) if onesided is None else onesided
    normalization = 1 if normalized else 0  # PyTorch's fft_norm_mode: by_root_n or none
    if complex_fft:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _c2c(frames, (2,), normalization, True)
    else:
        out = _r2c(frames, (2,), normalization, one_sided)
    out = inplace_view_step(TransposeBackward1, out, out._data.swapaxes(1, 2), dim0=1, dim1=2)
    if input.dim() == 1:
        out = inplace_view_step(SqueezeBackward4, out, out._data.squeeze(0), dim=0)
    return out if return_complex else view_as_real(out)


TENSOR_METHODS = {"stft": stft}
