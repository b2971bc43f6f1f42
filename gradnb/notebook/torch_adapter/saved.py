"""The tensors a torch backward node saved for backward, and the storages that hold them.

Built-in nodes expose what they saved as ``_saved_<name>`` attributes (``MulBackward0`` has
``_saved_self`` and ``_saved_other``); custom ``autograd.Function`` nodes as ``saved_tensors``.
Reading one after backward freed it raises PyTorch's "Trying to backward through the graph a
second time" error, which is also how :func:`is_released` tells a freed node.

Bytes are counted per storage, as the allocator sees them: a view saved by one op and its base
saved by another share one storage and count once, at the storage's full size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import torch
from torch.multiprocessing.reductions import StorageWeakRef

__all__ = [
    "StorageInfo",
    "StorageKey",
    "graph_storages",
    "is_released",
    "reachable_nodes",
    "saved_tensors",
    "storage_info",
    "storage_key",
]

#: A storage's identity while it is alive: its device and the address of its data.
StorageKey = tuple[str, int]


@dataclass(frozen=True)
class StorageInfo:
    """A saved storage: its key, size, and a weak reference that expires when torch frees it."""

    key: StorageKey
    nbytes: int
    ref: StorageWeakRef

    @property
    def freed(self) -> bool:
        """Whether torch has released the storage (nothing references it any more)."""
        return self.ref.expired()


@cache
def _saved_attributes(node_type: type) -> tuple[str, ...]:
    return tuple(sorted(a for a in dir(node_type) if a.startswith("_saved_")))


def _tensors_in(value) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


def saved_tensors(node) -> list[torch.Tensor]:
    """The tensors ``node`` saved for backward (raises RuntimeError once backward freed them)."""
    if isinstance(node, torch.autograd.function.BackwardCFunction):
        return list(node.saved_tensors)
    found: list[torch.Tensor] = []
    for attribute in _saved_attributes(type(node)):
        found.extend(_tensors_in(getattr(node, attribute)))
    return found


def is_released(node) -> bool:
    """Whether backward already freed what ``node`` saved."""
    try:
        saved_tensors(node)
    except RuntimeError:
        return True
    return False


def storage_key(tensor: torch.Tensor) -> StorageKey:
    """The key of the storage behind ``tensor`` (views of one base share it)."""
    return (str(tensor.device), tensor.untyped_storage().data_ptr())


def storage_info(tensor: torch.Tensor) -> StorageInfo:
    """Key, size in bytes and a weak reference of the storage behind ``tensor``."""
    storage = tensor.untyped_storage()
    return StorageInfo(storage_key(tensor), storage.nbytes(), StorageWeakRef(storage))


def graph_storages(nodes) -> dict[StorageKey, StorageInfo]:
    """Every distinct storage the still-unreleased ``nodes`` saved, each once."""
    storages: dict[StorageKey, StorageInfo] = {}
    for node in nodes:
        try:
            tensors = saved_tensors(node)
        except RuntimeError:
            continue
        for tensor in tensors:
            key = storage_key(tensor)
            if key not in storages:
                storages[key] = storage_info(tensor)
    return storages


def reachable_nodes(roots) -> list:
    """Backward nodes reachable from ``roots`` (nodes), AccumulateGrad included, walked
    without recursion; the caller holds them, so their identities stay valid."""
    seen: dict[int, object] = {}
    stack = [node for node in roots if node is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return list(seen.values())
