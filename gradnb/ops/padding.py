"""Constant padding: ``constant_pad_nd`` and its node, ``ConstantPadNdBackward0``.

``nn.functional.pad`` (constant mode) and the FFTs' zero padding of their input (PyTorch's
``resize_fft_input``) both record this one node, as PyTorch's do.
"""

from __future__ import annotations

from typing import ClassVar

from .._core.backend import get_array_module
from .._core.graph import Node
from .._core.record import record
from .._core.tensor import Tensor

__all__ = ["ConstantPadNdBackward0", "constant_pad_nd"]


class ConstantPadNdBackward0(Node):
    """The gradient is the output's gradient cropped back (a pad by the negated amounts)."""
    rule = "self: constant_pad_nd(grad, -pad)"

    __slots__ = ("pad",)
    on_tensors = True
    inputs = ("self",)
    saves = ()
    saved_attrs: ClassVar[dict] = {"pad": "_pad"}

    @property
    def _pad(self) -> tuple:
        # PyTorch shows the int64 amounts it keeps as unsigned numbers (-1 as 2**64 - 1).
        return tuple(p % (1 << 64) for p in self.pad)

    def backward(self, g):
        return (_constant_pad(g, [-p for p in self.pad], 0),)


def _constant_pad(input: Tensor, pads, value: float) -> Tensor:
    x = input._data
    slices, widths = [slice(None)] * x.ndim, [(0, 0)] * x.ndim
    for i in range(len(pads) // 2):
        dim = x.ndim - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        size = x.shape[dim]
        if size + left + right < 0:
            raise RuntimeError(f"The input size {size}, plus negative padding {left} and {right} "
                               "resulted in a negative output size, which is invalid. Check "
                               f"dimension {dim} of your input.")
        slices[dim] = slice(max(-left, 0), size - max(-right, 0))
        widths[dim] = (max(left, 0), max(right, 0))
    cropped = x[tuple(slices)]
    out = get_array_module(x).pad(cropped, widths, constant_values=value) if any(
        w != (0, 0) for w in widths) else cropped.copy()
    return record(ConstantPadNdBackward0, (input,), out, attrs={"pad": tuple(pads)})


def constant_pad_nd(input: Tensor, pad, value: float = 0) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims with ``value``;
    ``pad`` lists ``(left, right)`` pairs starting from the last dim."""
    pads = [int(p) for p in pad]
    if len(pads) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pads)}")
    if len(pads) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pads)}while the input has "
                           f"{input.ndim}dimensions.")
    return _constant_pad(input, pads, value)
