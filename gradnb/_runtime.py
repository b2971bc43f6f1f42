"""PyTorch's process-wide switches and dtype facts: threads, float32 matmul precision,
deterministic algorithms, ``compile``, ``finfo``/``iinfo``.

These are real switches with PyTorch's checks and errors. Where NumPy has nothing to switch,
the docstring says what the setting means for gradnb:

>>> import gradnb
>>> gradnb.set_num_threads(1)          # the BLAS thread pools NumPy uses
>>> gradnb.get_num_threads()
1
>>> gradnb.finfo(gradnb.float32).eps
1.1920928955078125e-07
"""

from __future__ import annotations

import builtins
import os
import warnings
from collections.abc import Callable

import numpy as np

from ._core import dtype as _dtype
from ._core.warn_once import is_warn_always_enabled, set_warn_always
from .ops import _blas

__all__ = [
    "are_deterministic_algorithms_enabled",
    "compile",
    "finfo",
    "get_deterministic_debug_mode",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "iinfo",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "set_flush_denormal",
    "set_num_interop_threads",
    "set_num_threads",
    "set_warn_always",
    "use_deterministic_algorithms",
]


class _Settings:
    num_threads: int | None = None  # None: whatever the BLAS pools start with
    interop_threads: int | None = None
    matmul_precision = "highest"
    deterministic = False
    deterministic_warn_only = False


_settings = _Settings()


# -- threads -----------------------------------------------------------------------------------
def set_num_threads(int: int) -> None:
    """Use ``int`` threads for the BLAS work behind gradnb's matrix products (NumPy's own
    elementwise loops run on one thread whatever this says)."""
    if not isinstance(int, builtins.int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(int).__name__}")  # noqa: TRY004 - PyTorch raises RuntimeError
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    from threadpoolctl import threadpool_limits  # loaded on first use: import stays light

    threadpool_limits(limits=int, user_api="blas")
    _settings.num_threads = int
    _blas.threads_changed(int)


def get_num_threads() -> int:
    """The number of BLAS threads (what ``set_num_threads`` set, else the pools' own count)."""
    if _settings.num_threads is not None:
        return _settings.num_threads
    from threadpoolctl import threadpool_info

    counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return max(counts) if counts else (os.cpu_count() or 1)


def set_num_interop_threads(int: int) -> None:
    """The size of PyTorch's pool for running independent ops at once. gradnb runs one op at a
    time, so the number is kept (``get_num_interop_threads``) and changes no work; as in
    PyTorch it can be set once."""
    if not isinstance(int, builtins.int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "  # noqa: TRY004 - PyTorch raises RuntimeError
                           f"{type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _settings.interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _settings.interop_threads = int


def get_num_interop_threads() -> int:
    """What ``set_num_interop_threads`` set, else PyTorch's default: the core count."""
    return _settings.interop_threads or os.cpu_count() or 1


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal floats could be flushed to zero: NumPy offers no switch for the CPU's
    flush-to-zero mode, so gradnb answers False (PyTorch's answer where it is unsupported) and
    computes with denormals as they are."""
    return False


# -- float32 matmul precision ------------------------------------------------------------------
_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's switch for TF32/bfloat16 matmuls. NumPy always multiplies float32 in full
    float32 precision, so gradnb keeps the setting (``get_float32_matmul_precision``) and
    computes as ``"highest"``; an unknown value warns and changes nothing, as in PyTorch."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The value last given to ``set_float32_matmul_precision`` (``"highest"`` at start)."""
    return _settings.matmul_precision


# -- deterministic algorithms ------------------------------------------------------------------
def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """PyTorch's determinism switch. Every gradnb op is deterministic on the CPU (scatter-adds
    accumulate in index order), so there is nothing to refuse; the setting is kept and read
    back by ``are_deterministic_algorithms_enabled``."""
    if type(mode) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if type(warn_only) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _settings.deterministic = mode
    _settings.deterministic_warn_only = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _settings.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _settings.deterministic_warn_only


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """``use_deterministic_algorithms`` by level: 0/"default" off, 1/"warn" on with warnings
    only, 2/"error" on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2, as ``set_deterministic_debug_mode`` reads them."""
    if not _settings.deterministic:
        return 0
    return 1 if _settings.deterministic_warn_only else 2


# -- compile -----------------------------------------------------------------------------------
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False, **kwargs):
    """Accept ``torch.compile``'s arguments and return ``model`` unchanged.

    gradnb has no compiler: it runs every op eagerly on NumPy, so the "compiled" model is the
    model itself and gives the same values and gradients. Arguments are checked as PyTorch
    checks them; called without a model it returns a decorator, as PyTorch's does.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` "
                           "for available backends.")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable, **kwargs)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")  # noqa: TRY004 - as PyTorch
    return model


# -- finfo / iinfo -----------------------------------------------------------------------------
def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _ml_finfo(np_dtype):
    """ml_dtypes' finfo (bfloat16: NumPy's own finfo does not know the type)."""
    import ml_dtypes

    return ml_dtypes.finfo(np_dtype)


class finfo:
    """Facts of a floating-point dtype, as PyTorch's ``torch.finfo``: ``bits``, ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype`` (its name).
    A complex dtype gives the facts of its real part."""

    def __init__(self, type: _dtype.dtype | None = None) -> None:
        if type is None:
            type = _dtype.get_default_dtype()
        if not isinstance(type, _dtype.dtype):
            raise TypeError("finfo(): argument 'type' (position 1) must be gradnb.dtype, not "
                            f"{builtins.type(type).__name__}")
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("gradnb.finfo() requires a floating point input type. Use "
                            "gradnb.iinfo to handle 'gradnb.finfo'")
        info = np.finfo(type.np) if type.np.kind in "fc" else _ml_finfo(type.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = str(info.dtype)

    def __repr__(self) -> str:
        return (f"finfo(resolution={_fmt(self.resolution)}, min={_fmt(self.min)}, "
                f"max={_fmt(self.max)}, eps={_fmt(self.eps)}, "
                f"smallest_normal={_fmt(self.smallest_normal)}, tiny={_fmt(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:
    """Facts of an integer dtype, as PyTorch's ``torch.iinfo``: ``bits``, ``max``, ``min``,
    ``dtype`` (its name)."""

    def __init__(self, type: _dtype.dtype) -> None:
        if not isinstance(type, _dtype.dtype):
            raise TypeError("iinfo(): argument 'type' (position 1) must be gradnb.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type.np.kind == "b":
            raise TypeError(f"{type} is not supported by gradnb.iinfo")
        if type.np.kind not in "iu":
            raise TypeError("gradnb.iinfo() requires an integer input type. Use gradnb.finfo "
                            "to handle 'gradnb.iinfo'")
        info = np.iinfo(type.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = str(info.dtype)

    def __repr__(self) -> str:
        return f"iinfo(min={_fmt(self.min)}, max={_fmt(self.max)}, dtype={self.dtype})"

