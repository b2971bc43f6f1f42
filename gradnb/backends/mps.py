"""``gradnb.backends.mps``: Apple's Metal backend, which gradnb does not have."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether tensors can go to ``device="mps"``: never, with gradnb."""
    return False


def is_built() -> bool:
    """Whether gradnb was built with Metal support: it was not."""
    return False
