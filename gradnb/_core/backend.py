"""Where arrays live: NumPy on the CPU, CuPy on CUDA devices.

This is the one place that knows about array modules. CuPy is imported lazily, on first use of a
CUDA device, so ``import gradnb`` never imports it.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CPU",
    "cuda_is_available",
    "cuda_unavailable_reason",
    "cupy_module",
    "device",
    "device_of",
    "get_array_module",
    "silent",
    "sum_to",
    "to_device",
]

_cupy = None


class _Silent:
    """``with silent():`` is ``np.errstate(all="ignore")`` for the hot paths: PyTorch's kernels
    never warn about floating-point errors (inf, NaN, overflow), and neither does gradnb. NumPy
    2 keeps its error state in a context variable: setting it to a prepared state and resetting
    it costs a fraction of building an ``np.errstate`` (about a microsecond, more than a small
    ufunc). Older NumPy gets ``np.errstate`` itself."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _error_state.set(_IGNORE_ALL)

    def __exit__(self, exc_type, exc, traceback) -> None:
        _error_state.reset(self._token)


try:  # NumPy >= 2
    from numpy._core._ufunc_config import _extobj_contextvar as _error_state
    from numpy._core.umath import _make_extobj

    _IGNORE_ALL = _make_extobj(all="ignore")
    silent = _Silent
except ImportError:  # pragma: no cover - NumPy 1.x
    def silent():
        return np.errstate(all="ignore")


def cupy_module():
    """Import CuPy on first use, with an error that says what is missing: CuPy, or a GPU."""
    global _cupy
    if _cupy is None:
        try:
            import cupy  # optional (GPU only): imported on first use of a CUDA device
        except ImportError as exc:
            raise RuntimeError(
                f"CuPy is not installed (import failed: {exc}); gradnb needs CuPy for "
                "device='cuda': pip install 'gradnb[gpu]'"
            ) from exc
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CuPy raises CUDARuntimeError without a driver
            raise RuntimeError(
                f"CuPy is installed but found no CUDA device (no NVIDIA driver): {exc}"
            ) from exc
        if count == 0:
            raise RuntimeError("CuPy is installed but found no CUDA device (0 GPUs visible)")
        _cupy = cupy
    return _cupy


def cuda_unavailable_reason() -> str | None:
    """Why ``device='cuda'`` cannot work here (CuPy missing, or no GPU), or None when it can."""
    try:
        cupy_module()
    except RuntimeError as exc:
        return str(exc)
    return None


def cuda_is_available() -> bool:
    """True when CuPy imports and sees at least one GPU."""
    return cuda_unavailable_reason() is None


def get_array_module(arr):
    """NumPy for NumPy arrays, CuPy for CuPy arrays."""
    if type(arr) is np.ndarray or _cupy is None:
        return np
    return _cupy if isinstance(arr, _cupy.ndarray) else np


class device:
    """A device: ``device('cpu')``, ``device('cuda')``, ``device('cuda:1')``."""

    __slots__ = ("index", "type")

    def __init__(self, spec, index: int | None = None) -> None:
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        spec = str(spec)
        kind, _, idx = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {spec}"
            )
        self.type = kind
        self.index = int(idx) if idx else index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        if self.type != other.type:
            return False
        return self.type == "cpu" or (self.index or 0) == (other.index or 0)

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")


def device_of(arr) -> device:
    """The device an array lives on."""
    if isinstance(arr, (np.ndarray, np.generic)):
        return CPU
    return device("cuda", int(arr.device.id))


def to_device(arr, dev: device):
    """Copy an array to a device (no copy when it already lives there)."""
    if dev.type == "cpu":
        if isinstance(arr, (np.ndarray, np.generic)):
            return arr
        return arr.get()
    cp = cupy_module()
    index = dev.index or 0
    if isinstance(arr, cp.ndarray) and arr.device.id == index:
        return arr
    with cp.cuda.Device(index):
        # array, not asarray: asarray would hand back an array that lives on another GPU as is.
        return cp.array(arr)


def sum_to(g, shape):
    """Sum ``g`` (an array, or a tensor under ``create_graph``) over the dimensions that
    broadcasting added or stretched, down to ``shape``: the engine's one unbroadcast."""
    shape = tuple(shape)
    gshape = tuple(g.shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1
    )
    if hasattr(g, "_data"):  # a tensor: through its own methods, so the sum is recorded
        out = g.sum(dim=axes, keepdim=True) if axes else g
        return out.reshape(shape)
    out = g.sum(axis=axes, keepdims=True) if axes else g
    return out.reshape(shape)
