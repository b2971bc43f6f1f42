"""Record computation graphs as they are built: ``with gradnb.autograd.graph_trace() as t:``.

A :class:`Trace` is an observer on the engine's event seam (:mod:`gradnb.autograd.events`). It
keeps a small, engine-independent record of every op recorded while it is active (op name,
which records feed it, output shapes and dtypes, saved tensors and their bytes) and the report
of every backward pass run meanwhile. It holds nodes and tensors only through weak references,
so tracing never keeps a graph (or its saved activations) alive.

:func:`snapshot` builds the same record for a graph that already exists, by walking back from
its output tensors; the notebook toolkit uses it for ``%backward``.

>>> import gradnb
>>> x = gradnb.tensor(2.0, requires_grad=True)
>>> with gradnb.autograd.graph_trace() as t:
...     y = (x * x).exp()
>>> [op.name for op in t.ops]
['MulBackward0', 'ExpBackward0']
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Self

import numpy as np

from .._core import events
from .._core.graph import AccumulateGrad, Node
from .memory import BackwardReport, owner_of

__all__ = ["LeafRecord", "ModuleCall", "OpRecord", "SavedRecord", "Trace", "graph_trace", "snapshot"]

#: An input of an op: the key of the record that produces it and which of its outputs.
Edge = tuple[int, int]

_SELF = -1  # marks a saved output of the op being recorded, before the op has its key


def _dead() -> None:
    return None


@dataclass(slots=True)
class LeafRecord:
    """A leaf tensor feeding the graph: a parameter or input (``requires_grad``) or a constant."""

    key: int
    shape: tuple[int, ...]
    dtype: str
    requires_grad: bool
    tensor: Callable[[], object] = field(repr=False)
    #: For an op recorded before the trace began: its name (the trace draws it as an input).
    horizon: str = ""

    @property
    def nbytes(self) -> int:
        """The leaf's size in bytes (from shape and dtype, so it is known after the leaf died)."""
        return _nbytes(self.shape, self.dtype)


@dataclass(slots=True)
class SavedRecord:
    """One buffer an op saved for backward.

    ``source`` is the key of the record whose tensor was saved (a leaf, or an op for a saved
    output or intermediate), or None for a constant the op kept.
    """

    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    source: Edge | None


@dataclass(frozen=True, slots=True)
class ModuleCall:
    """One ``nn.Module`` call seen by the trace: ops recorded inside it carry it in ``scope``.

    ``call`` numbers the calls in the trace (a layer called twice has two); ``name`` is the
    attribute name under the enclosing module's call (``fc1``), or the class name for the
    outermost call, which the notebook replaces by the user's variable name (``model``).
    """

    call: int
    name: str
    type_name: str
    module: Callable[[], object] = field(repr=False, compare=False)


@dataclass(slots=True)
class OpRecord:
    """One recorded op: its backward node's name, its inputs and what it keeps for backward."""

    key: int
    name: str
    inputs: tuple[Edge, ...]
    outputs: list[tuple[tuple[int, ...], str]]
    saved: tuple[SavedRecord, ...]
    node: Callable[[], Node | None] = field(repr=False)
    output_tensors: list[Callable[[], object] | None] = field(repr=False, default_factory=list)
    #: The module calls (outermost first) running when the op was recorded.
    scope: tuple[ModuleCall, ...] = ()
    #: The node's creation number (``node._seq``), which outlives the node itself (keyword
    #: only, so records that extend this one keep their positional fields).
    seq: int = field(default=-1, kw_only=True)

    @property
    def saved_bytes(self) -> int:
        """Bytes of the distinct buffers this op saved."""
        return sum(s.nbytes for s in self.saved)

    @property
    def released(self) -> bool:
        """True once backward freed this op's saved tensors (or the op itself is gone)."""
        node = self.node()
        return node is None or node.released


class Trace(events.Subscriber):
    """The ops recorded while a :func:`trace` block ran, and the backward passes run in it.

    ``ops`` and ``leaves`` are in recording order; keys are small integers local to the trace,
    so two runs of the same program give the same trace. ``listeners`` are called with the
    trace after every recorded op (the notebook's live view throttles itself). A trace records
    only the thread that entered it: ops other threads run meanwhile are not part of it.
    """

    this_thread_only = True

    def __init__(self) -> None:
        self.ops: list[OpRecord] = []
        self.leaves: list[LeafRecord] = []
        self.backward_reports: list[BackwardReport] = []
        self.listeners: list[Callable[[Trace], None]] = []
        self._key_of_node: dict[int, int] = {}  # node._seq -> record key
        self._key_of_tensor: dict[int, tuple[weakref.ref, int]] = {}  # constants by id()
        self._records: dict[int, OpRecord | LeafRecord] = {}
        self._scope: list[ModuleCall] = []  # module calls running now, outermost first
        self.module_calls: list[ModuleCall] = []

    # -- context manager ------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether the trace is still recording."""
        return self._subscription is not None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __len__(self) -> int:
        return len(self.ops)

    def __repr__(self) -> str:
        return f"<Trace: {len(self.ops)} ops, {len(self.leaves)} leaves>"

    def record(self, key: int) -> OpRecord | LeafRecord:
        """The op or leaf record with this key."""
        return self._records[key]

    def key_of(self, node: Node) -> int | None:
        """The key of the record made for ``node`` (an op, or a leaf's AccumulateGrad)."""
        return self._key_of_node.get(node._seq)

    def key_of_seq(self, seq: int) -> int | None:
        """Like :meth:`key_of`, by the node's creation number (``node._seq``): for a node
        that may have died since, such as the producer of a value that was detached."""
        return self._key_of_node.get(seq)

    @property
    def saved_bytes(self) -> int:
        """Bytes of all distinct buffers saved by the recorded ops: a tensor saved by two ops
        (``tanh``'s output, saved by TanhBackward0 and by the next matmul) counts once, as in
        ``memory.graph_bytes``."""
        seen = set()
        total = 0
        for op in self.ops:
            for record in op.saved:
                if record.source is not None:
                    if record.source in seen:
                        continue
                    seen.add(record.source)
                total += record.nbytes
        return total

    # -- observer methods (called by the engine) ------------------------------------------------
    def op_recorded(self, node: Node, outputs: tuple) -> None:
        """Engine event: remember ``node`` and its outputs."""
        self._add_op(node, [(tuple(t._data.shape), _dtype_name(t._data.dtype)) for t in outputs],
                     [weakref.ref(t) for t in outputs])
        for listener in tuple(self.listeners):
            listener(self)

    def backward_finished(self, report: BackwardReport) -> None:
        """Engine event: keep the memory report of a backward pass run inside the trace."""
        self.backward_reports.append(report)

    def module_entered(self, module) -> None:
        """Engine event: an ``nn.Module`` call begins; ops until it ends are in its scope."""
        parent = self._scope[-1].module() if self._scope else None
        name = _child_name(parent, module) or type(module).__name__
        call = ModuleCall(len(self.module_calls), name, type(module).__name__,
                          weakref.ref(module))
        self.module_calls.append(call)
        self._scope.append(call)

    def module_exited(self, module) -> None:
        """Engine event: the innermost ``nn.Module`` call ended (normally or by raising)."""
        if self._scope and self._scope[-1].module() is module:
            self._scope.pop()

    # -- building -------------------------------------------------------------------------------
    def _add_op(self, node: Node, outputs, output_tensors) -> OpRecord:
        # Runs per op under %%trace, so it reads two engine fields where the public face costs
        # more: the edges from their slots and ``_next_nr`` (``next_functions`` builds a tuple
        # of pairs: +6% on this method; ``_next`` is a call) and ``_seq`` (a ``_sequence_nr()``
        # call: +2%).
        inputs = []
        nrs = node._next_nr
        n = len(nrs)
        producers = ((node._next0,) if n == 1 else (node._next0, node._next1) if n == 2
                     else node._next)
        for nxt, nr in zip(producers, nrs):
            if nxt is not None:
                inputs.append((self._key_for_node(nxt, nr), nr))
        sources = node.saved_sources()  # (empty once released)
        saved = self._saved_records(sources) if sources else ()  # (may add leaf records first)
        key = self._next_key()
        if saved:  # the node's own outputs get the key of the record being made
            saved = tuple(
                SavedRecord(s.shape, s.dtype, s.nbytes, (key, s.source[1]))
                if s.source is not None and s.source[0] == _SELF else s
                for s in saved
            )
        record = OpRecord(key, _shown_name(node), tuple(inputs), outputs, saved, weakref.ref(node),
                          output_tensors, tuple(self._scope), seq=node._seq)
        self._key_of_node[node._seq] = key
        self._records[key] = record
        self.ops.append(record)
        return record

    def _next_key(self) -> int:
        return len(self._records)

    def _key_for_node(self, node: Node, output_nr: int = 0) -> int:
        """The key of the record for ``node``: a leaf's AccumulateGrad becomes a leaf record; an
        op recorded before the trace started becomes a leaf too (the trace's horizon), drawn
        with the shape of its output ``output_nr``."""
        key = self._key_of_node.get(node._seq)
        if key is not None:
            return key
        if type(node) is AccumulateGrad:
            return self._add_leaf(node.variable, requires_grad=True, node_seq=node._seq)
        return self._add_horizon(node, node.output_metadata(output_nr))

    def _add_leaf(self, tensor, requires_grad: bool, node_seq: int | None = None) -> int:
        record = LeafRecord(self._next_key(), tuple(tensor._data.shape),
                            _dtype_name(tensor._data.dtype), requires_grad, weakref.ref(tensor))
        self._records[record.key] = record
        self.leaves.append(record)
        if node_seq is not None:
            self._key_of_node[node_seq] = record.key
        else:
            self._key_of_tensor[id(tensor)] = (weakref.ref(tensor), record.key)
        return record.key

    def _add_horizon(self, node: Node, meta) -> int:
        """An op from before the trace: drawn as an input leaf carrying the op's name."""
        shape, dtype = (tuple(meta[0]), _dtype_name(meta[1])) if meta is not None else ((), "")
        record = LeafRecord(self._next_key(), shape, dtype, True, _dead, horizon=_shown_name(node))
        self._records[record.key] = record
        self.leaves.append(record)
        self._key_of_node[node._seq] = record.key
        return record.key

    def _key_for_constant(self, tensor) -> int:
        entry = self._key_of_tensor.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return entry[1]
        return self._add_leaf(tensor, requires_grad=False)

    def _saved_records(self, sources: list) -> tuple[SavedRecord, ...]:
        """The distinct buffers among a node's ``saved_sources()``, each with the record it came
        from."""
        seen: set[int] = set()
        saved = []
        for array, tensor, output_nr in sources:
            if tensor is not None:
                source = self._edge_of_tensor(tensor)
            else:
                source = (_SELF, output_nr) if output_nr is not None else None
            owner = owner_of(array)
            if id(owner) in seen:
                continue
            seen.add(id(owner))
            saved.append(SavedRecord(tuple(array.shape), _dtype_name(array.dtype), int(owner.nbytes),
                                     source))
        return tuple(saved)

    def _edge_of_tensor(self, tensor) -> Edge:
        if tensor.grad_fn is not None:
            return (self._key_for_node(tensor.grad_fn, tensor._output_nr), tensor._output_nr)
        if tensor._requires_grad and tensor._accumulator is not None:
            acc = tensor._accumulator()
            if acc is not None:
                return (self._key_for_node(acc), 0)
        return (self._key_for_constant(tensor), 0)


def graph_trace() -> Trace:
    """A context manager that records every op run inside it; see :class:`Trace`.

    >>> import gradnb
    >>> w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    >>> with gradnb.autograd.graph_trace() as t:
    ...     loss = (w * w).sum()
    >>> [op.name for op in t.ops], t.leaves[0].shape
    (['MulBackward0', 'SumBackward0'], (2,))
    """
    return Trace()


def snapshot(roots: Iterable) -> Trace:
    """A :class:`Trace` of the graph that already exists behind ``roots`` (tensors).

    Ops are recorded inputs-first, in the order they were created, so the record reads as if
    the graph had been traced while it was built.
    """
    roots = [t for t in roots if getattr(t, "grad_fn", None) is not None]
    nodes = _reachable_ops(t.grad_fn for t in roots)
    output_meta = _output_meta(nodes, roots)
    result = Trace()
    for node in sorted(nodes, key=lambda n: n._seq):
        meta = output_meta.get(node._seq, {})
        outputs = [meta.get(nr, ((), "")) for nr in range(max(meta, default=0) + 1)]
        tensors: list = [None] * len(outputs)
        for t in roots:
            if t.grad_fn is node:
                tensors[t._output_nr] = weakref.ref(t)
        result._add_op(node, outputs, tensors)
    return result


def _reachable_ops(start: Iterable[Node]) -> list[Node]:
    seen: dict[int, Node] = {}
    stack = [n for n in start if n is not None]
    while stack:
        node = stack.pop()
        if node._seq in seen or type(node) is AccumulateGrad:
            continue
        seen[node._seq] = node
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return list(seen.values())


def _output_meta(nodes: list[Node], roots: list) -> dict[int, dict[int, tuple]]:
    """Shape and dtype of each op output that a root or another op uses, as the op recorded
    it."""
    meta: dict[int, dict[int, tuple]] = {}
    for t in roots:
        meta.setdefault(t.grad_fn._seq, {})[t._output_nr] = (
            tuple(t._data.shape), _dtype_name(t._data.dtype))
    for node in nodes:
        for nxt, nr in node.next_functions:
            if nxt is not None and type(nxt) is not AccumulateGrad:
                info = nxt.output_metadata(nr)
                if info is not None:
                    meta.setdefault(nxt._seq, {}).setdefault(nr, (tuple(info[0]), _dtype_name(info[1])))
    return meta


# NumPy computes ``dtype.name`` in Python on every read; a trace reads it for every op.
_DTYPE_NAMES: dict = {}


def _dtype_name(dtype) -> str:
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _child_name(parent, module) -> str | None:
    """The attribute name under which ``parent`` holds ``module`` (None if it does not)."""
    children = getattr(parent, "_modules", None) if parent is not None else None
    if not isinstance(children, dict):
        return None
    return next((name for name, child in children.items() if child is module), None)


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    if not dtype:
        return 0
    count = 1
    for d in shape:
        count *= d
    return count * np.dtype(dtype).itemsize


def _shown_name(node) -> str:
    """A node's name as a trace shows it: without a C++ namespace (``CopySlices`` for
    ``gradnb::autograd::CopySlices``)."""
    return node.name().rpartition("::")[2]
