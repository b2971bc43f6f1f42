"""``gradnb.autograd.events``: the observer seam tools use to watch the engine.

The seam lives in the core floor (``gradnb._core.events``, where its events are documented),
so that recording can emit without importing anything above it.
"""

from __future__ import annotations

from .._core.events import Subscriber, emit, observers, subscribe

__all__ = ["Subscriber", "emit", "observers", "subscribe"]
