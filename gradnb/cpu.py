"""``gradnb.cpu``: PyTorch's ``torch.cpu`` namespace, for ``gradnb.cpu.amp.autocast``."""

from __future__ import annotations

import types
import warnings

from .amp import GradScaler as _GradScaler
from .amp import autocast as _autocast

__all__ = ["amp", "is_available"]


def is_available() -> bool:
    """Always True: gradnb runs on the CPU."""
    return True


class _CpuAutocast(_autocast):
    """``gradnb.cpu.amp.autocast(...)``: deprecated in PyTorch for ``gradnb.amp.autocast("cpu", ...)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        warnings.warn("`gradnb.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`gradnb.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        from ._core import dtype as _dtype

        super().__init__("cpu", dtype=_dtype.bfloat16 if dtype is None else dtype,
                         enabled=enabled, cache_enabled=cache_enabled)


_CpuAutocast.__name__ = _CpuAutocast.__qualname__ = "autocast"
amp = types.SimpleNamespace(autocast=_CpuAutocast, GradScaler=_GradScaler)
