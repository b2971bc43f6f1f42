"""Automatic mixed precision, as ``torch.amp``: ``autocast`` and ``GradScaler``.

>>> import gradnb
>>> lin = gradnb.nn.Linear(3, 2)
>>> with gradnb.autocast("cpu"):
...     y = lin(gradnb.ones(4, 3))
>>> y.dtype
gradnb.bfloat16
"""

from __future__ import annotations

from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
)
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype",
           "is_autocast_available", "is_autocast_enabled", "set_autocast_dtype"]
