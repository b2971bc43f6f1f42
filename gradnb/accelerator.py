"""``gradnb.accelerator``: PyTorch's device-agnostic questions (is there an accelerator, which,
how many), answered for gradnb's one kind: CUDA through CuPy.

>>> import gradnb
>>> device = gradnb.accelerator.current_accelerator() or gradnb.device("cpu")
>>> gradnb.ones(1, device=device).device.type in ("cpu", "cuda")
True
"""

from __future__ import annotations

from . import cuda as _cuda
from ._core.backend import cupy_module as _cupy_module
from ._core.backend import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "is_available", "set_device_idx", "set_device_index", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a GPU that CuPy sees) can be used."""
    return _cuda.is_available()


def device_count() -> int:
    """How many accelerators there are (0 without one)."""
    return _cuda.device_count()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device('cuda')`` where gradnb can use a GPU, else None (as a CPU-only PyTorch)."""
    return _device("cuda") if is_available() else None


def _require() -> None:
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device, /) -> None:
    """Make ``device`` (an index, ``'cuda:N'`` or a ``device``) the current accelerator."""
    _require()
    _cupy_module().cuda.Device(_cuda._index(device)).use()


set_device_idx = set_device_index


def synchronize(device=None, /) -> None:
    """Wait for every kernel queued on the accelerator to finish."""
    _require()
    _cuda.synchronize(device)
