"""``gradnb.cuda``: PyTorch's ``torch.cuda`` helpers, answered by CuPy.

Nothing here imports CuPy until a function is called, so ``import gradnb`` stays free of it.
The memory figures read CuPy's default memory pool, which is where every CUDA tensor's array
comes from; they cross-check the engine's exact byte counts
(:func:`gradnb.autograd.memory.last_backward`) against what the device allocator saw. The pool
rounds each allocation up to 512 bytes, so its figures are at least the sum of ``nbytes``.

>>> import gradnb
>>> gradnb.cuda.is_available() in (True, False)
True
"""

from __future__ import annotations

from ._core import backend as _backend

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "memory_reserved",
    "seed",
    "seed_all",
    "synchronize",
]


def is_available() -> bool:
    """True when CuPy imports and sees at least one GPU (never raises)."""
    return _backend.cuda_unavailable_reason() is None


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy or without a driver)."""
    if not is_available():
        return 0
    return int(_backend.cupy_module().cuda.runtime.getDeviceCount())


def current_device() -> int:
    """The index of the current CUDA device."""
    return int(_backend.cupy_module().cuda.runtime.getDevice())


def synchronize(device=None) -> None:
    """Wait for every kernel queued on ``device`` (default: the current one) to finish."""
    cp = _backend.cupy_module()
    with cp.cuda.Device(_index(device)):
        cp.cuda.Device().synchronize()


def memory_allocated(device=None) -> int:
    """Bytes held by live arrays on ``device``, as CuPy's memory pool counts them."""
    cp = _backend.cupy_module()
    with cp.cuda.Device(_index(device)):
        return int(cp.get_default_memory_pool().used_bytes())


def memory_reserved(device=None) -> int:
    """Bytes the memory pool holds from the driver on ``device`` (in use plus cached)."""
    cp = _backend.cupy_module()
    with cp.cuda.Device(_index(device)):
        return int(cp.get_default_memory_pool().total_bytes())


def empty_cache() -> None:
    """Give the pool's cached, unused blocks back to the driver (live arrays stay)."""
    cp = _backend.cupy_module()
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


# -- seeding ---------------------------------------------------------------------------------------
# gradnb draws the random numbers of CUDA tensors from its one generator (``gradnb.manual_seed``
# seeds them), so these have nothing of their own to seed. They accept what PyTorch's accept and,
# as PyTorch's do, leave the CPU generator alone, so scripts that seed both devices run anywhere.
def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: a no-op beside ``gradnb.manual_seed``, which already
    seeds every device's numbers (``int(seed)`` is checked, as PyTorch does)."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: see :func:`manual_seed`."""
    int(seed)


def seed() -> None:
    """Seed the current GPU's generator from entropy: see :func:`manual_seed`."""


def seed_all() -> None:
    """Seed every GPU's generator from entropy: see :func:`manual_seed`."""


def _index(device) -> int:
    """The CUDA device index for ``None`` (current), an int, ``'cuda:N'`` or a ``device``."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    dev = _backend.device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index or 0
