"""``gradnb.random``: the seeding functions of PyTorch's ``torch.random`` over gradnb's one
default generator (``manual_seed``, ``get_rng_state``, ``fork_rng``, ...)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .ops.creation import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type=None) -> Iterator[None]:
    """Run the block with the default generator's state restored afterwards, so random draws
    inside it leave the draws after it as they would have been. ``devices`` is accepted for
    PyTorch's signature: gradnb draws every device's numbers from the one host generator."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
