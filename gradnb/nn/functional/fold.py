"""unfold (im2col) and fold (col2im), composed from padding, strided slices and stacking.

``unfold`` gathers every ``kernel_size`` block of ``(N, C, H, W)`` into a column of
``(N, C * kh * kw, L)``; ``fold`` is its adjoint: each column's entries are added back at
their block positions (overlaps sum). Their gradients are each other's.
"""

from __future__ import annotations

from ..._core.tensor import Tensor
from ...ops.shape import stack
from .conv import spread
from .resample import pad

__all__ = ["fold", "unfold"]


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def _blocks(size: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding ``kernel_size`` blocks of ``(N, C, H, W)`` (or ``(C, H, W)``) as columns."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.ndim}D)")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    (kh, kw), (dh, dw) = _pair(kernel_size), _pair(dilation)
    (ph, pw), (sh, sw) = _pair(padding), _pair(stride)
    n, c, h, w = x.shape
    oh, ow = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}),"
                           f" dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of "
                           f"the array of sliding blocks as ({oh}, {ow}), but its components "
                           "must be at least one.")
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph))
    patches = [x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
               for i in range(kh) for j in range(kw)]
    out = stack(patches, 2).reshape(n, c * kh * kw, oh * ow)
    return out.squeeze(0) if unbatched else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns ``(N, C * kh * kw, L)`` back into an ``(N, C, *output_size)`` image."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {input.ndim}D)")
    unbatched = input.ndim == 2
    cols = input.unsqueeze(0) if unbatched else input
    (h, w), (kh, kw) = _pair(output_size), _pair(kernel_size)
    (dh, dw), (ph, pw), (sh, sw) = _pair(dilation), _pair(padding), _pair(stride)
    n, ckk, length = cols.shape
    if ckk % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ckk} and "
                           f"kernel_size=({kh}, {kw})")
    oh, ow = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    if oh * ow != length:
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), "
                           f"expected size of input's dimension 2 to match the calculated number "
                           f"of sliding blocks {oh} * {ow} = {oh * ow}, but got "
                           f"input.size(2)={length}.")
    c = ckk // (kh * kw)
    blocks = cols.reshape(n, c, kh * kw, oh, ow)
    hp, wp = h + 2 * ph, w + 2 * pw
    total = None
    for k in range(kh * kw):
        i, j = divmod(k, kw)
        placed = spread(spread(blocks[:, :, k], 2, sh), 3, sw)
        top, left = i * dh, j * dw
        placed = pad(placed, (left, wp - left - placed.shape[3], top, hp - top - placed.shape[2]))
        total = placed if total is None else total + placed
    out = total[:, :, ph:ph + h, pw:pw + w]
    return out.squeeze(0) if unbatched else out
