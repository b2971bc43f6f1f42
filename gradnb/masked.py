"""``gradnb.masked``: PyTorch's ``torch.masked`` reductions and normalizations on dense tensors
(the ops live in ``gradnb.ops.masked``)."""

from __future__ import annotations

from .ops.masked import (
    _input_mask,
    _output_mask,
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
    "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum",
    "var",
]
_PRIVATE_HELPERS = (_input_mask, _output_mask)  # PyTorch's names, read by op_db's wrappers
