"""``set_default_device`` / ``get_default_device``: where factories put tensors by default.

>>> import gradnb
>>> gradnb.get_default_device()
device(type='cpu')
>>> gradnb.set_default_device("cpu")
>>> gradnb.zeros(2).device
device(type='cpu')
"""

from __future__ import annotations

from . import backend as _backend

__all__ = ["get_default_device", "is_cpu", "resolve", "set_default_device"]

_default: _backend.device | None = None  # None: the CPU


def set_default_device(device) -> None:
    """Factories (``zeros``, ``tensor``, ``randn``, ...) called without ``device=`` create their
    tensors on ``device`` from now on; ``None`` restores the CPU."""
    global _default
    _default = None if device is None else _backend.device(device)


def get_default_device() -> _backend.device:
    """The device factories use when none is given."""
    return _backend.CPU if _default is None else _default


def resolve(device) -> _backend.device:
    """``device`` as a device object, or the default one for None."""
    if device is None:
        return _backend.CPU if _default is None else _default
    return _backend.device(device)


def is_cpu() -> bool:
    """Whether the default device is the CPU (NumPy arrays can then be wrapped without a copy)."""
    return _default is None or _default.type == "cpu"
