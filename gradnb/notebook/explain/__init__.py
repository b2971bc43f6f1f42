"""Explain gradients, not just show them: source lines, cut edges, ``why``.

- :func:`watching` / :func:`watch_session`: observe the engine (per thread) and remember where
  each node was created, where values left the graph, in-place writes and what each backward
  did;
- :func:`why`: why a tensor's ``.grad`` is what it is, in PyTorch's terms, with the line;
- :class:`InplaceErrorView`: the graph around a "modified by an inplace operation" error;
- :func:`rule_of` / :func:`note_of`: a node's chain rule in one line and its ``%why`` notes, as
  its class declares them (a torch node: gradnb's class of the same name).
"""

from __future__ import annotations

from gradnb.notebook.explain.notes import note_of, rule_of
from gradnb.notebook.explain.watcher import (
    WatchedTrace,
    Watcher,
    watch_session,
    watcher,
    watching,
)
from gradnb.notebook.explain.why import Why, why

__all__ = ["WatchedTrace", "Watcher", "Why", "note_of", "rule_of", "watch_session", "watcher",
           "watching", "why"]
