"""Removable hook handles: what every ``register_*hook`` returns."""

from __future__ import annotations

import itertools
import weakref

__all__ = ["RemovableHandle", "register"]


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook."""

    _ids = itertools.count()
    __slots__ = ("_table", "id")

    def __init__(self, table: dict) -> None:
        self._table = weakref.ref(table) if hasattr(table, "__weakref__") else (lambda: table)
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook (idempotent)."""
        table = self._table()
        if table is not None:
            table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register(table: dict, fn) -> RemovableHandle:
    """Add ``fn`` to the hook ``table`` (id -> hook); return its handle."""
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle
