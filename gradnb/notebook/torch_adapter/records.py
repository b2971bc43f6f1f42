"""Torch's ``grad_fn`` graph as the toolkit's trace records, so every view draws it unchanged.

A :class:`TorchTrace` is a :class:`~gradnb.autograd.trace.Trace` whose records come from torch
nodes: an op record per backward node, named as torch names it (``MulBackward0``), a leaf record
per leaf tensor that requires grad (torch's ``AccumulateGrad``) and per constant an op saved, and
the saved tensors of each op with the exact bytes of their storages. :func:`snapshot` records the
graph behind existing tensors; :mod:`.live` records while a cell runs.

Records hold tensors only weakly and nodes not at all: a torch node's Python object cannot be
weakly referenced, so a trace marks the nodes it recorded in their ``metadata`` dict (under
:data:`STAMP`) and finds them again that way. Nothing this module does keeps a graph alive.
This module itself does not import torch (the toolkit checks ``isinstance(x, TorchTrace)``
without loading it); its functions are only called with torch objects.
"""

from __future__ import annotations

import heapq
import itertools
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from gradnb.autograd.trace import Edge, LeafRecord, OpRecord, SavedRecord, Trace
from gradnb.notebook.explain.notes import short_name
from gradnb.notebook.tensors import dtype_name, itemsize

__all__ = [
    "STAMP",
    "TorchLeafRecord",
    "TorchOpRecord",
    "TorchSavedRecord",
    "TorchTrace",
    "new_nodes",
    "snapshot",
]

#: The key under which a trace marks the torch nodes it recorded (``node.metadata[STAMP]`` maps
#: a trace's token to the record key it gave the node).
STAMP = "gradnb.trace"

_tokens = itertools.count(1)
_SELF = -1  # a saved output of the op being recorded, before the op has its key


@dataclass(slots=True)
class TorchSavedRecord(SavedRecord):
    """A saved tensor, with the storage it lives in (so a shared storage counts once).

    ``storage`` is a ``StorageWeakRef``: it compares by the storage object's address, and while
    it is held that address is never reused, so two records of a long trace (a training loop)
    are the same storage only if they really are, even after torch freed one of them.
    """

    storage: object = None


@dataclass(slots=True)
class TorchLeafRecord(LeafRecord):
    """A torch leaf tensor, with its device."""

    device: str = "cpu"

    @property
    def nbytes(self) -> int:
        """The leaf's size in bytes (torch's dtypes included)."""
        count = 1
        for size in self.shape:
            count *= size
        return count * itemsize(self.dtype) if self.dtype else 0


@dataclass(slots=True)
class TorchOpRecord(OpRecord):
    """A torch backward node: its device and whether backward has freed what it saved (the
    module calls that ran it are the inherited ``scope``)."""

    device: str = "cpu"
    freed: bool = False

    @property
    def released(self) -> bool:
        """True once backward freed this op's saved tensors."""
        return self.freed


def _no_node() -> None:
    return None


class TorchTrace(Trace):
    """Records of a torch graph; see the module docstring. ``start_sequence`` separates nodes
    made before the trace (drawn as inputs, the trace's horizon) from those made in it."""

    def __init__(self, start_sequence: int = -1) -> None:
        super().__init__()
        self.token = next(_tokens)
        self.start_sequence = start_sequence
        self._leaf_keys: dict[int, tuple[weakref.ref, int]] = {}

    def __repr__(self) -> str:
        return f"<TorchTrace: {len(self.ops)} ops, {len(self.leaves)} leaves>"

    # -- identities -----------------------------------------------------------------------------
    def key_of(self, node) -> int | None:
        """The key of the record made for the torch node ``node``, if this trace made one."""
        stamps = node.metadata.get(STAMP)
        return None if stamps is None else stamps.get(self.token)

    def _stamp(self, node, key: int) -> None:
        node.metadata.setdefault(STAMP, {})[self.token] = key

    @property
    def saved_bytes(self) -> int:
        """Bytes of the distinct storages saved by the recorded ops (a storage shared by two
        saved tensors, such as a weight and its transpose, counts once)."""
        seen: set = set()
        total = 0
        for op in self.ops:
            for record in op.saved:
                if record.storage in seen:
                    continue
                seen.add(record.storage)
                total += record.nbytes
        return total

    def mark_released(self, keys: Iterable[int]) -> None:
        """Note that backward freed what the ops with these keys saved."""
        for key in keys:
            record = self._records.get(key)
            if isinstance(record, TorchOpRecord):
                record.freed = True

    # -- recording ------------------------------------------------------------------------------
    def add_node(self, node, *, scope: tuple = (), output_tensors: Iterable = ()) -> int:
        """Record ``node`` (its inputs must be recorded already, or become leaves/horizon)."""
        # ``saved`` imports torch at its top: kept out of this module's import (import time).
        from gradnb.notebook.torch_adapter.saved import is_released

        inputs = tuple((self.key_for_input(nxt), nr) for nxt, nr in node.next_functions
                       if nxt is not None)
        released = is_released(node)
        saved = () if released else self._saved_of(node)
        key = self._next_key()
        saved = tuple(
            TorchSavedRecord(s.shape, s.dtype, s.nbytes, (key, s.source[1]), s.storage)
            if s.source is not None and s.source[0] == _SELF else s for s in saved)
        outputs, device = _output_meta(node)
        tensors: list = [None] * len(outputs)
        for tensor in output_tensors:
            if tensor.output_nr < len(tensors):
                tensors[tensor.output_nr] = weakref.ref(tensor)
        record = TorchOpRecord(key, type(node).__name__, inputs, outputs, saved, _no_node,
                               tensors, scope, device, released)
        self._records[key] = record
        self.ops.append(record)
        self._stamp(node, key)
        return key

    def key_for_input(self, node) -> int:
        """The record key for an input node: a leaf for ``AccumulateGrad``, the op's own record,
        or (for a node made before the trace) a horizon leaf carrying its name."""
        if type(node).__name__ == "AccumulateGrad":
            return self.key_for_tensor_leaf(node.variable, requires_grad=True)
        key = self.key_of(node)
        if key is not None:
            return key
        shapes, device = _output_meta(node)
        shape, dtype = shapes[0] if shapes else ((), "")
        key = self._next_key()
        record = TorchLeafRecord(key, shape, dtype, True, _no_node, short_name(node), device)
        self._records[key] = record
        self.leaves.append(record)
        self._stamp(node, key)
        return key

    def leaf_key_of(self, tensor) -> int | None:
        """The key of ``tensor``'s leaf record, if it has one."""
        entry = self._leaf_keys.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def key_for_tensor_leaf(self, tensor, *, requires_grad: bool) -> int:
        """The leaf record of ``tensor`` (made on first sight)."""
        key = self.leaf_key_of(tensor)
        if key is not None:
            return key
        key = self._next_key()
        record = TorchLeafRecord(key, tuple(tensor.shape), dtype_name(tensor), requires_grad,
                                 weakref.ref(tensor), "", str(tensor.device))
        self._records[key] = record
        self.leaves.append(record)
        self._leaf_keys[id(tensor)] = (weakref.ref(tensor), key)
        return key

    def _saved_of(self, node) -> tuple[TorchSavedRecord, ...]:
        # ``saved`` imports torch at its top: kept out of this module's import (import time).
        from gradnb.notebook.torch_adapter.saved import saved_tensors, storage_info

        seen: set = set()
        saved = []
        for tensor in saved_tensors(node):
            storage = storage_info(tensor)
            if storage.ref in seen:
                continue
            seen.add(storage.ref)
            saved.append(TorchSavedRecord(tuple(tensor.shape), dtype_name(tensor),
                                          storage.nbytes, self._saved_source(node, tensor),
                                          storage.ref))
        return tuple(saved)

    def _saved_source(self, node, tensor) -> Edge | None:
        grad_fn = tensor.grad_fn
        if grad_fn is not None:
            if grad_fn is node:
                return (_SELF, tensor.output_nr)
            key = self.key_of(grad_fn)
            return None if key is None else (key, tensor.output_nr)
        return (self.key_for_tensor_leaf(tensor, requires_grad=tensor.requires_grad), 0)


def _output_meta(node) -> tuple[list[tuple[tuple[int, ...], str]], str]:
    """Shape and dtype of each of ``node``'s forward outputs, and their device."""
    metadata = getattr(node, "_input_metadata", ())
    outputs = [(tuple(m.shape), str(m.dtype).removeprefix("torch.")) for m in metadata]
    device = str(metadata[0].device) if metadata else "cpu"
    return outputs or [((), "")], device


def new_nodes(roots, is_new) -> list:
    """The nodes reachable from ``roots`` for which ``is_new(node)`` holds, walking no further
    than the first node that is not new, in creation order (inputs before their consumers)."""
    found: dict[int, object] = {}
    stack = [node for node in roots if node is not None and is_new(node)]
    while stack:
        node = stack.pop()
        if id(node) in found:
            continue
        found[id(node)] = node
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None and is_new(nxt))
    return _inputs_first(found)


def _inputs_first(found: dict[int, object]) -> list:
    """Topological order (every node after its inputs), ties broken by creation order."""
    waiting = {key: 0 for key in found}
    consumers: dict[int, list] = {key: [] for key in found}
    for key, node in found.items():
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) in found and key not in consumers[id(nxt)]:
                consumers[id(nxt)].append(key)
                waiting[key] += 1
    ready = [(node._sequence_nr(), key) for key, node in found.items() if waiting[key] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, key = heapq.heappop(ready)
        order.append(found[key])
        for consumer in consumers[key]:
            waiting[consumer] -= 1
            if waiting[consumer] == 0:
                heapq.heappush(ready, (found[consumer]._sequence_nr(), consumer))
    return order


def snapshot(roots: Iterable) -> TorchTrace:
    """A :class:`TorchTrace` of the graph that already exists behind ``roots`` (torch tensors),
    recorded in creation order as if it had been traced while it was built."""
    roots = [t for t in roots if t.grad_fn is not None]
    trace = TorchTrace()
    nodes = new_nodes((t.grad_fn for t in roots), lambda n: type(n).__name__ != "AccumulateGrad")
    for node in nodes:
        trace.add_node(node, output_tensors=[t for t in roots if t.grad_fn is node])
    return trace
