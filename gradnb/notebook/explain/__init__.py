"""Explain gradients, not just show them: source lines, cut edges, ``why``.

- :func:`watching` / :func:`watch_session`: observe the engine (per thread) and remember where
  each node was created, where values left the graph, in-place writes and what each backward
  did;
- :func:`why`: why a tensor's ``.grad`` is what it is, in PyTorch's terms, with the line;
- :class:`InplaceErrorView`: the graph around a "modified by an inplace operation" error.
"""

from __future__ import annotations

from gradnb.notebook.explain.watcher import (
    WatchedTrace,
    Watcher,
    watch_session,
    watcher,
    watching,
)
from gradnb.notebook.explain.why import Why, why

__all__ = ["WatchedTrace", "Watcher", "Why", "watch_session", "watcher", "watching", "why"]
