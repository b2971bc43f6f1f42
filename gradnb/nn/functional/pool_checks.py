"""The argument checks PyTorch's max pooling makes, with its words.

``max_pool1d``/``max_pool2d``/``max_pool3d`` call these before computing, so an empty or
wrong-rank input, a non-positive kernel, stride or dilation, a negative padding or an output
too small is refused as PyTorch refuses it.
"""

from __future__ import annotations

from ..._core.tensor import Tensor

__all__ = ["check_adaptive_input", "check_pool_input", "check_pool_output", "check_pool_window"]


def check_pool_input(input: Tensor, n: int) -> None:
    """An ``n``-d pooling input: ``n + 1`` or ``n + 2`` dims, every non-batch one non-empty."""
    shape = list(input.shape)
    rank_ok = input.ndim in (n + 1, n + 2)
    non_batch = shape[-(n + 1):] if rank_ok else shape
    if n == 3:
        if not rank_ok:
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        for i, size in enumerate(non_batch):
            if size == 0:
                raise RuntimeError("max_pool3d_with_indices_out_cpu_template(): Expected input's "
                                   "non-batch dimensions to have positive length, but input has "
                                   f"a shape of {shape} and non-batch dimension {i} has length "
                                   "zero!")
        return
    if not rank_ok or 0 in non_batch:
        prefix = "max_pool1d: " if n == 1 else ""
        raise RuntimeError(f"{prefix}Expected {n + 1}D or {n + 2}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got:{shape}")


def check_pool_window(name: str, kernel, stride, padding, dilation) -> None:
    """Kernel, stride and dilation positive, padding non-negative and at most half the kernel."""
    for k in kernel:
        if k <= 0:
            raise RuntimeError(f"{name}() kernel_size must be greater than zero, but got {k}")
    for s in stride:
        if s <= 0:
            raise RuntimeError(f"{name}() stride must be greater than zero, but got {s}")
    for d in dilation:
        if d <= 0:
            raise RuntimeError(f"{name}() dilation must be greater than zero, but got {d}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > k // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")


def check_pool_output(input: Tensor, n: int, out_sizes) -> None:
    """PyTorch's "Output size is too small" for a window that does not fit the input."""
    if n == 1:
        if out_sizes[0] < 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out_sizes[0]}")
        return
    if all(o >= 1 for o in out_sizes):
        return
    planes = input.shape[-(n + 1)]
    given = "x".join(str(s) for s in (planes, *input.shape[-n:]))
    calculated = "x".join(str(s) for s in (planes, *out_sizes))
    raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calculated}). "
                       "Output size is too small")


def check_adaptive_input(input: Tensor, n: int, kind: str) -> None:
    """An adaptive pool's input rank, as ``adaptive_{kind}_pool{n}d`` checks it (``kind``:
    ``"avg"`` or ``"max"``)."""
    if n > 1 and input.ndim < n + 1:
        raise ValueError(f"Input dimension should be at least {n + 1}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"adaptive_{kind}_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, "
                           f"but got {list(input.shape)}")
