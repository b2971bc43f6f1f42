"""``gradnb.backends.cudnn``: cuDNN's flags. gradnb runs no cuDNN kernels, so it is never
available and its flags are only kept (as a CPU-only PyTorch keeps them)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["allow_tf32", "benchmark", "benchmark_limit", "deterministic", "enabled", "flags",
           "is_acceptable", "is_available", "version"]

enabled: bool = True
benchmark: bool = False
benchmark_limit: int | None = None
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """Whether cuDNN can be used: never, with gradnb."""
    return False


def version() -> int | None:
    """cuDNN's version: None, as without cuDNN."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: never, with gradnb."""
    return False


@contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int | None = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Set the flags inside a ``with`` block and restore them after it."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    module = globals()
    before = {name: module[name] for name in names}
    module.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        module.update(before)
