"""What a graph holds in memory and what each backward gave back.

Every figure here is an exact sum of array sizes, so it is identical run to run. "Freed" means
the memory really went back to the allocator: after backward released a node's saved tensors, an
array counts as freed only if nothing else (a leaf, a named intermediate the user still holds)
keeps it alive. Views count their base array once.
"""

from __future__ import annotations

import sys
import weakref
from collections import deque
from dataclasses import dataclass, field

from .._core.graph import Node

__all__ = ["BackwardReport", "graph_bytes", "history", "last_backward", "reset", "totals"]


@dataclass
class BackwardReport:
    """What one backward (or ``autograd.grad``) call did to memory.

    ``freed_bytes``: saved buffers released and actually deallocated.
    ``released_bytes``: saved buffers released by the graph but still alive elsewhere.
    ``retained_bytes``: bytes the graph still saves after the call (``retain_graph=True``).
    """

    freed_bytes: int = 0
    released_bytes: int = 0
    retained_bytes: int = 0
    nodes_executed: int = 0
    device: str = "cpu"
    retain_graph: bool = False
    # node -> bytes its release gave back, kept while an observer handles ``buffers_freed`` (it
    # is sent from here); the engine then empties it so a stored report does not keep the
    # graph's nodes alive.
    freed_by_node: dict = field(default_factory=dict, repr=False)


class ReleaseTracker:
    """Collects arrays released during one backward; at the end tells freed from still-held.

    An array whose only references are the caller's (the sequence ``release`` returned) dies
    the moment the caller drops it: it is counted as freed at once. Only an array that someone
    else still holds (a leaf, a tensor the user kept, a node not yet run) is watched by a weak
    reference until the end of the pass. ``by_node``: keep the bytes per node (observers read
    them); otherwise only the totals.
    """

    __slots__ = ("_by_node", "_freed", "_released", "_seen")

    def __init__(self, by_node: bool = False) -> None:
        self._released: list[tuple] = []  # (node, weakref to the owning array, nbytes)
        self._seen: set[int] = set()  # ids of owners watched (a buffer counts once)
        self._freed = 0
        self._by_node: dict | None = {} if by_node else None

    def add(self, node, arrays) -> None:
        seen = self._seen
        for arr in arrays:
            if arr.base is None:
                # References: ``arrays``, the loop variable, getrefcount's argument (counted
                # before ``owner`` becomes a fourth).
                dies_now = _getrefcount(arr) <= _DIES_NOW_REFS
                owner = arr
            else:
                owner = owner_of(arr)
                dies_now = False
            key = id(owner)
            if key in seen:
                continue
            if dies_now:
                self._freed += owner.nbytes
                if self._by_node is not None:
                    self._by_node[node] = self._by_node.get(node, 0) + owner.nbytes
                continue
            seen.add(key)
            self._released.append((node, weakref.ref(owner), owner.nbytes))

    def finish(self, report: BackwardReport) -> None:
        by_node = None if self._by_node is None else report.freed_by_node
        if by_node is not None:
            by_node.update(self._by_node)
        freed, released = self._freed, 0
        for node, ref, nbytes in self._released:
            if ref() is None:
                freed += nbytes
                if by_node is not None:
                    by_node[node] = by_node.get(node, 0) + nbytes
            else:
                released += nbytes
                if by_node is not None:
                    by_node.setdefault(node, 0)
        report.freed_bytes += freed
        report.released_bytes += released
        self._released.clear()


_getrefcount = sys.getrefcount
_DIES_NOW_REFS = 3


def owner_of(arr):
    """The array that owns the memory behind ``arr`` (a view's base, recursively)."""
    base = getattr(arr, "base", None)
    while base is not None and hasattr(base, "nbytes"):
        arr = base
        base = getattr(arr, "base", None)
    return arr


def graph_bytes(roots) -> int:
    """Bytes of saved tensors that the graph behind ``roots`` (tensors or nodes) still holds.

    Each underlying buffer is counted once even if several nodes save it.
    """
    if not isinstance(roots, (list, tuple)):
        roots = [roots]
    stack = []
    for r in roots:
        node = r if isinstance(r, Node) else getattr(r, "grad_fn", None)
        if node is not None:
            stack.append(node)
    seen_nodes = set()
    seen_arrays = {}
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        for arr in node.saved_arrays():
            owner = owner_of(arr)
            seen_arrays[id(owner)] = int(owner.nbytes)
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen_nodes:
                stack.append(nxt)
    return sum(seen_arrays.values())


# A short window of recent reports plus running totals: the engine must not grow with the number
# of steps a training loop runs. Tools that want every report subscribe to ``backward_finished``.
_HISTORY_LIMIT = 32
_history: deque[BackwardReport] = deque(maxlen=_HISTORY_LIMIT)
_totals = {"backward_calls": 0, "freed_bytes": 0, "released_bytes": 0}


def record_report(report: BackwardReport) -> None:
    _history.append(report)
    _totals["backward_calls"] += 1
    _totals["freed_bytes"] += report.freed_bytes
    _totals["released_bytes"] += report.released_bytes


def last_backward() -> BackwardReport | None:
    """The report of the most recent backward in this process (None before the first)."""
    return _history[-1] if _history else None


def history() -> list[BackwardReport]:
    """Reports of the most recent backward calls (at most 32), oldest first."""
    return list(_history)


def totals() -> dict:
    """Backward calls and bytes freed/released since start (or the last :func:`reset`)."""
    return dict(_totals)


def reset() -> None:
    """Forget the recent reports and zero the totals."""
    _history.clear()
    for key in _totals:
        _totals[key] = 0
