"""``autocast``: PyTorch's CPU autocast (a context manager and a decorator).

Only CPU autocast acts (gradnb's arrays are NumPy's); ``device_type="cuda"`` warns and does
nothing, as PyTorch does where CUDA is not available. The state is process-wide (PyTorch's is
per thread).
"""

from __future__ import annotations

import functools
import warnings

from .._core import autocast_state as _autocast
from .._core import dtype as _dtype

__all__ = ["autocast", "clear_autocast_cache", "custom_bwd", "custom_fwd",
           "get_autocast_cpu_dtype", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_cache_enabled", "is_autocast_cpu_enabled", "is_autocast_enabled",
           "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
           "set_autocast_dtype", "set_autocast_enabled"]

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


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast exists for ``device_type`` (PyTorch says so for CPU and CUDA)."""
    return _device_type(device_type) in ("cpu", "cuda")


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn CPU autocast on or off outside a context manager (other devices: no effect)."""
    if _device_type(device_type) == "cpu":
        _autocast.enabled = bool(enabled)
        if _autocast.enabled and _autocast.dtype is None:
            _autocast.dtype = get_autocast_dtype("cpu")


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"gradnb.{old}() is deprecated. Please use gradnb.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated form of ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return _autocast.enabled


def get_autocast_cpu_dtype():
    """Deprecated form of ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated form of ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated form of ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def is_autocast_cache_enabled() -> bool:
    """Always True in PyTorch's default; gradnb keeps no cast cache (each cast is recorded)."""
    return True


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Accepted for PyTorch code; gradnb keeps no cast cache."""


def clear_autocast_cache() -> None:
    """Accepted for PyTorch code; gradnb keeps no cast cache."""


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom ``Function.forward`` for autocast, as ``torch.amp.custom_fwd``: with
    ``cast_inputs`` the forward runs with autocast off and its floating tensor arguments cast
    to that dtype; without it, under the autocast state of the caller."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if not isinstance(device_type, str):
        raise ValueError(  # noqa: TRY004 - as PyTorch
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    _device_type(device_type)

    @functools.wraps(fwd)
    def run(*args, **kwargs):
        if cast_inputs is None or not _autocast.enabled:
            return fwd(*args, **kwargs)
        target = _dtype.as_dtype(cast_inputs)
        cast = [_autocast._cast(a, target) for a in args]
        cast_kw = {k: _autocast._cast(v, target) for k, v in kwargs.items()}
        with autocast(device_type, enabled=False):
            return fwd(*cast, **cast_kw)

    return run


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom ``Function.backward`` for autocast, as ``torch.amp.custom_bwd``
    (gradnb runs backward outside autocast, so the function runs as it is)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    _device_type(device_type)
    return bwd
