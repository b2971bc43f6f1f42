"""PyTorch's ``TORCH_WARN_ONCE``: a warning given at the first call in the process only, whatever
the ``warnings`` filters say about repeats, and at every call once ``set_warn_always(True)``."""

from __future__ import annotations

import warnings

__all__ = ["is_warn_always_enabled", "set_warn_always", "warn_once"]

_warned: set[str] = set()
_always = [False]


def warn_once(key: str, message: str, stacklevel: int = 3) -> None:
    """Warn ``message`` (a UserWarning) if ``key`` has not warned yet in this process."""
    if key not in _warned or _always[0]:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def set_warn_always(b: bool) -> None:
    """With True, the once-per-process warnings are given at every call."""
    _always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _always[0]
