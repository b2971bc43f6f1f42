"""PyTorch's deprecated ``size_average``/``reduce`` loss arguments, read as the ``reduction`` they
stand for (``torch.nn._reduction``): older code's ``nn.MSELoss(size_average=False)`` sums."""

from __future__ import annotations

import warnings

__all__ = ["legacy_get_string", "legacy_reduction"]


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """The reduction the pair stands for (each None reads as True), with PyTorch's warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        name = "mean"
    elif reduce:
        name = "sum"
    else:
        name = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{name}' instead.", UserWarning, stacklevel=4)
    return name


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """``reduction``, unless either deprecated argument is given: then the one they stand for."""
    if size_average is None and reduce is None:
        return reduction
    return legacy_get_string(size_average, reduce)
