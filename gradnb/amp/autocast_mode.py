"""``autocast``: PyTorch's CPU autocast (a context manager and a decorator).

Only CPU autocast acts (gradnb's arrays are NumPy's); ``device_type="cuda"`` warns and does
nothing, as PyTorch does where CUDA is not available. The state is process-wide (PyTorch's is
per thread).
"""

from __future__ import annotations

import functools
import warnings

from .. import _autocast
from .._core import dtype as _dtype

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_enabled", "set_autocast_dtype"]

_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                 "lazy, vulkan, mps, meta, hpu, mtia, privateuseone")
_DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16"}
_cuda_dtype = None  # set by set_autocast_dtype("cuda", ...): only reported back


def _device_type(device_type) -> str:
    base = device_type.split(":")[0]
    if base not in _DEVICE_TYPES.split(", "):
        raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device "
                           f"string: {device_type}")
    return base


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (CUDA's when none is given, as PyTorch)."""
    if device_type is None:
        return False
    return _device_type(device_type) == "cpu" and _autocast.enabled


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type`` (``bfloat16`` on the CPU by default)."""
    kind = _device_type(device_type)
    if kind == "cpu" and _autocast.dtype is not None:
        return _autocast.dtype
    if kind == "cuda" and _cuda_dtype is not None:
        return _cuda_dtype
    return _dtype.as_dtype(_DEFAULT_DTYPES.get(kind, "float16"))


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype ``get_autocast_dtype(device_type)`` gives."""
    global _cuda_dtype
    kind = _device_type(device_type)
    if kind == "cpu":
        _autocast.dtype = _dtype.as_dtype(dtype)
    elif kind == "cuda":
        _cuda_dtype = _dtype.as_dtype(dtype)


class autocast:
    """Run the ops of PyTorch's CPU autocast lists in lower precision (``dtype``, bfloat16 by
    default) or in float32, as ``torch.autocast``. Nests; usable as a decorator.

    >>> import gradnb
    >>> x = gradnb.ones(2, 2)
    >>> with gradnb.autocast(device_type="cpu", dtype=gradnb.bfloat16):
    ...     (x @ x).dtype
    gradnb.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(  # noqa: TRY004 - as PyTorch
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else \
            _dtype.as_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled  # gradnb keeps no cast cache: casts are recorded
        if self.device == "cuda" and self._enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          stacklevel=2)
            self._enabled = False
        elif self.device == "cpu" and self._enabled and self.fast_dtype.name not in (
                "bfloat16", "float16"):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of gradnb.bfloat16, "
                          "gradnb.float16 currently.", stacklevel=2)
            self._enabled = False
        elif self.device not in ("cpu", "cuda"):
            self._enabled = False
        self._saved = []

    def __enter__(self):
        self._saved.append((_autocast.enabled, _autocast.dtype))
        if self.device == "cpu":
            _autocast.enabled = self._enabled
            if self._enabled:
                _autocast.dtype = self.fast_dtype
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _autocast.enabled, _autocast.dtype = self._saved.pop()

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return run
