"""The watcher: an engine observer that remembers what later explanations need.

While it watches (inside ``%%trace`` and ``%backward``, inside :func:`watching`, or for the whole
session after ``%watch on``), it keeps, for the thread that started it:

- where every recorded node was created (:meth:`Watcher.where_of`);
- every place a value left the graph (``detach()``, ``.item()``, ``no_grad``, ...), as
  :class:`Cut` records: for ``no_grad``, ``inference_mode`` and ``set_grad_enabled(False)`` (as
  ``with`` blocks, decorators or calls) every op the user's code ran while recording was off that
  took a value requiring grad (:mod:`.unrecorded`);
- every in-place write, by version counter, with its line (:meth:`Watcher.writes_to`);
- what each backward pass did: its roots, the leaves it reached, and the first node that made a
  gradient all-zero or non-finite (:class:`Blame`) on the way to each leaf.

It holds nodes and tensors only through weak references, so watching never keeps a graph alive.
The engine knows nothing of it: everything arrives through the event seam
(:mod:`gradnb.autograd.events`), which sends nothing when no one watches.

It is the notebook's one observer: a recording that watches too (``%%trace``'s graph,
``graph_trace()``, ``%backward``'s pass) is fed by it (:meth:`Watcher.feeding`) instead of
subscribing itself, so each op reaches the toolkit once, whether ``%watch`` is on or not.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from gradnb._core import grad_mode
from gradnb._core.graph import AccumulateGrad
from gradnb._core.tensor import Tensor
from gradnb.autograd import events
from gradnb.autograd.trace import Trace
from gradnb.nn.modules.module import Module
from gradnb.notebook.explain.notes import note_of, short_name
from gradnb.notebook.explain.unrecorded import UnrecordedCalls
from gradnb.notebook.explain.where import CellNumbers, Where, is_internal_code, user_frame
from gradnb.notebook.formatting import format_shape, host_array

__all__ = [
    "HISTORY",
    "ORIGINS",
    "BackwardRecord",
    "Blame",
    "Block",
    "Cut",
    "WatchedTrace",
    "Watcher",
    "Write",
    "watch_session",
    "watcher",
    "watching",
]

#: How many cuts, writes and backward passes are remembered (oldest forgotten first).
HISTORY = 256
#: How many nodes' source lines are remembered (oldest forgotten first).
ORIGINS = 100_000

#: Readable names for the gradnb functions that write in place.
_WRITE_NAMES = {"__setitem__": "[...] =", "setitem": "[...] =", "__iadd__": "+=", "__isub__": "-=", "__imul__": "*=",
                "__itruediv__": "/=", "__ipow__": "**="}


@dataclass(frozen=True)
class Block:
    """Code that ran with recording off: the switch (``no_grad``, ``inference_mode`` or
    ``set_grad_enabled``), how it was used (``with``, ``decorator``, ``call``, or ``switch``
    where that is not known) and where."""

    how: str
    form: str
    where: Where | None

    @property
    def switch(self) -> str:
        """The switch as written: ``no_grad()``, ``set_grad_enabled(False)``."""
        return "set_grad_enabled(False)" if self.how == "set_grad_enabled" else f"{self.how}()"

    def describe(self) -> str:
        """``the `with no_grad():` block at cell [3], line 2`` and the like."""
        at = f" at {self.where}" if self.where is not None else ""
        if self.form == "decorator":
            return f"a function decorated with @{self.switch}, called{at}"
        if self.form == "call":
            return f"{self.switch}{at} (recording stays off until set_grad_enabled(True))"
        if self.form == "switch":  # torch's set_grad_enabled: a call or a ``with``, unknown
            return f"{self.switch}{at}"
        return f"the `with {self.switch}:` block{at}"


@dataclass(frozen=True)
class Cut:
    """A place where a value left the graph.

    ``how`` is ``detach()``, ``.data``, ``.item()``, ``.numpy()``, ``.tolist()``, ``tensor()``,
    ``no_grad``, ``inference_mode`` or ``set_grad_enabled``; ``source_seq`` (or ``source_leaf``)
    says which node (or leaf) the value came from, and ``result`` is the tensor that came out
    (weak; None for a Python number or NumPy array). A cut made by a grad-mode switch is the op
    that ran with recording off, at its own line, and ``block`` is the switch.
    """

    how: str
    where: Where | None
    source_name: str
    #: creation number (``_sequence_nr()``) of the node behind the value, or None (a leaf).
    source_seq: int | None = None
    result: weakref.ref | None = field(repr=False, default=None)
    #: the leaves the value was computed from (weak references).
    leaves: tuple[weakref.ref, ...] = ()
    #: the leaf the value came from when it left from the leaf itself (``w.detach()``).
    source_leaf: weakref.ref | None = field(repr=False, default=None)
    block: Block | None = None
    #: False for an op under a grad-mode switch that took only values already cut there (its
    #: leaves are those values'), True where the value left from a tensor that requires grad.
    direct: bool = True


@dataclass(frozen=True)
class Write:
    """An in-place write: the version it made, the op (``mul_``, ``+=``) and its line."""

    version: int
    op: str
    where: Where | None


@dataclass(frozen=True)
class Blame:
    """The first node whose backward made a gradient all-zero (``zero``) or ``NaN``/``Inf``;
    ``fix``: how to avoid a non-finite one, as that node's class says ("" when it does not)."""

    kind: str
    node: str
    where: Where | None
    detail: str
    fix: str = ""


@dataclass
class BackwardRecord:
    """One observed backward pass."""

    index: int
    where: Where | None
    root_name: str
    roots: list = field(default_factory=list)  # weak references to the root tensors
    reached: dict[int, bool] = field(default_factory=dict)  # id(leaf) -> accumulated
    blame: dict[int, Blame] = field(default_factory=dict)  # id(leaf) -> why its grad is bad
    executed: int = 0


class Watcher:
    """Engine observer behind ``%why``, the cut edges and the in-place error view."""

    def __init__(self) -> None:
        # node._sequence_nr() -> (file name, line): by number, so a drawing made after a temporary's
        # node died still finds its line; the oldest entries go first past ORIGINS.
        self._origin: dict[int, tuple[str, int]] = {}
        self.cuts: deque[Cut] = deque(maxlen=HISTORY)
        self._cut_of_result: dict[int, tuple[weakref.ref, Cut]] = {}
        self._writes: dict[int, tuple[list, list[Write]]] = {}
        self.backwards: deque[BackwardRecord] = deque(maxlen=HISTORY)
        self._leaf_last_use: dict[int, tuple[weakref.ref, weakref.ref, tuple[str, int]]] = {}
        self._leaf_history: dict[int, tuple[weakref.ref, list[int]]] = {}
        # The grad-mode switches now off in the watched thread, innermost last (None for one
        # that gradnb turned off itself: an optimizer step, not the user's block).
        self._blocks: list[Block | None] = []
        self._unrecorded = UnrecordedCalls(self._unrecorded_call)
        self._marks: dict[int, Blame] = {}  # node number -> the blame it passes on
        self._leaf_marks: dict[int, Blame] = {}  # id(leaf) -> the blame that reached it
        self._recorders: list = []  # recordings fed with this watcher's events (``feeding``)
        self._current: BackwardRecord | None = None
        self._cells = CellNumbers()
        self._subscription = None
        self._thread: int | None = None
        self._depth = 0
        self.session = False

    # -- switching on and off ---------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether the watcher is receiving events now."""
        return self._subscription is not None

    def start(self) -> None:
        """Begin (or nest) watching the calling thread."""
        self._depth += 1
        if self._subscription is None:
            self._cells = CellNumbers()
            self._thread = threading.get_ident()
            self._subscription = events.subscribe(self, thread=self._thread)
            if not grad_mode.is_grad_enabled():  # a set_grad_enabled(False) from before
                self._blocks.append(Block("set_grad_enabled", "call", None))
                self._unrecorded.start()

    def stop(self) -> None:
        """End one :meth:`start`; the last one (and no ``%watch on``) stops watching."""
        self._depth = max(0, self._depth - 1)
        if self._depth == 0 and not self.session and self._subscription is not None:
            self._subscription.remove()
            self._subscription = None
            self._blocks.clear()
            self._unrecorded.stop()

    def watches_this_thread(self) -> bool:
        """Whether the watcher is watching the calling thread now."""
        return self.active and self._thread == threading.get_ident()

    @contextmanager
    def feeding(self, recorder) -> Iterator[None]:
        """Watch the calling thread and hand ``recorder`` (an observer: a trace, a backward
        recorder) every event while the block runs: through this watcher's own subscription
        when it watches this thread, so each op is observed once for both, else through one of
        the recorder's own."""
        self.start()
        try:
            if self.watches_this_thread():
                self._recorders.append(recorder)
                try:
                    yield
                finally:
                    self._recorders.remove(recorder)
            else:
                with events.subscribe(recorder, thread=threading.get_ident()):
                    yield
        finally:
            self.stop()

    def _forward(self, event: str, *payload) -> None:
        for recorder in tuple(self._recorders):
            method = getattr(recorder, event, None)
            if method is not None:
                method(*payload)

    def _where(self) -> Where | None:
        frame, _ = user_frame(2)
        return None if frame is None else self._cells.where(frame)

    # -- what explanations ask ------------------------------------------------------------------
    def where_of(self, node) -> Where | None:
        """The line that created ``node`` (None if it was not watched)."""
        return self.where_of_seq(node._sequence_nr())

    def where_of_seq(self, seq: int) -> Where | None:
        """The line that created the node numbered ``seq`` (``node._sequence_nr()``), even if
        the node has died since."""
        spot = self._origin.get(seq)
        return None if spot is None else self._cells.at(*spot)

    def cut_of(self, tensor) -> Cut | None:
        """The cut that produced ``tensor`` (a detached copy, a tensor made under no_grad)."""
        entry = self._cut_of_result.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def cuts_from_leaf(self, leaf) -> list[Cut]:
        """Cuts whose value was computed from ``leaf`` (newest first; the ops that took a
        value requiring grad before those that only took what such an op gave)."""
        found = [c for c in reversed(self.cuts) if any(ref() is leaf for ref in c.leaves)]
        return sorted(found, key=lambda c: not c.direct)

    def writes_to(self, version_counter: list, after: int) -> list[Write]:
        """In-place writes through this version counter that made a version above ``after``."""
        entry = self._writes.get(id(version_counter))
        if entry is None or entry[0] is not version_counter:
            return []
        return [w for w in entry[1] if w.version > after]

    def last_use(self, leaf) -> tuple[object, Where | None] | None:
        """The last watched node that used ``leaf`` as an input, and its line."""
        entry = self._leaf_last_use.get(id(leaf))
        if entry is None or entry[0]() is not leaf:
            return None
        node = entry[1]()
        return (node, self._cells.at(*entry[2])) if node is not None else None

    def passes_of(self, leaf) -> list[int]:
        """Indexes of the backward passes that wrote ``leaf.grad``, since it was last fresh."""
        entry = self._leaf_history.get(id(leaf))
        if entry is None or entry[0]() is not leaf:
            return []
        return list(entry[1])

    def backward(self, index: int) -> BackwardRecord | None:
        """The record of backward pass ``index``, if still remembered."""
        for record in self.backwards:
            if record.index == index:
                return record
        return None

    # -- events: forward ------------------------------------------------------------------------
    def op_recorded(self, node, outputs) -> None:
        """Remember the node's line (as file name and line, made readable when asked) and
        which leaves it used: this runs for every op, so it stays a frame walk and a store."""
        frame, _ = user_frame(1)
        if frame is not None:
            spot = (frame.f_code.co_filename, frame.f_lineno)
            origin = self._origin
            origin[node._sequence_nr()] = spot
            if len(origin) > ORIGINS:
                del origin[next(iter(origin))]
            for nxt, _ in node.next_functions:
                if type(nxt) is AccumulateGrad:
                    leaf = nxt.variable
                    self._leaf_last_use[id(leaf)] = (weakref.ref(leaf), weakref.ref(node), spot)
        if self._recorders:
            self._forward("op_recorded", node, outputs)

    def module_entered(self, module) -> None:
        """An ``nn.Module`` call begins: for the recordings fed by this watcher."""
        if self._recorders:
            self._forward("module_entered", module)

    def module_exited(self, module) -> None:
        """An ``nn.Module`` call ended: for the recordings fed by this watcher."""
        if self._recorders:
            self._forward("module_exited", module)

    def value_detached(self, source, result, how: str) -> None:
        """Remember where a value left the graph."""
        self._remember_cut(_cut_from(source, how, self._where(),
                                     weakref.ref(result) if result is not None else None),
                           result)

    def grad_mode_entered(self, mode: str) -> None:
        """Recording went off: if the user's code switched it, watch the ops it runs until it
        comes back on (they record nothing, so no other event reports them)."""
        frame, form = _switch_site()
        if form is None:  # gradnb switched it itself (an optimizer step): not the user's block
            self._blocks.append(None)
            return
        self._blocks.append(Block(mode, form, self._cells.where(frame)))
        self._unrecorded.start()

    def grad_mode_exited(self, mode: str) -> None:
        """Recording is back on."""
        if self._blocks:
            self._blocks.pop()
        if not any(self._blocks):
            self._unrecorded.stop()

    def _unrecorded_call(self, caller, line: int, arguments: list, result) -> None:
        """A call the user's code made with recording off: each tensor it returned without
        history, from values that require grad (or came out of such a call), is a cut at the
        call's line."""
        outputs = [t for t in (result if type(result) in (tuple, list) else (result,))
                   if isinstance(t, Tensor) and not t.requires_grad and self.cut_of(t) is None]
        block = next((b for b in reversed(self._blocks) if b is not None), None)
        if not outputs or block is None:
            return
        source = None
        leaves: dict[int, weakref.ref] = {}
        for value in arguments:
            if isinstance(value, Module):
                found = [(p, (weakref.ref(p),)) for p in value.parameters() if p.requires_grad]
            elif isinstance(value, Tensor) and value.requires_grad:
                found = [(value, _leaves_of(value))]
            elif isinstance(value, Tensor) and (cut := self.cut_of(value)) is not None \
                    and cut.block is not None:
                found = [(None, cut.leaves)]
            else:
                continue
            for tensor, refs in found:
                source = source if source is not None or tensor is None else tensor
                for ref in refs:
                    leaves.setdefault(id(ref()), ref)
        if not leaves:
            return
        where = self._cells.at(caller.f_code.co_filename, line)
        for out in outputs:
            self._remember_cut(_cut_from(source, block.how, where, weakref.ref(out), block,
                                         tuple(leaves.values())), out)

    def tensor_modified(self, tensor) -> None:
        """Remember an in-place write (its op and line), by version counter."""
        frame, api = user_frame(1)
        where = None if frame is None else self._cells.where(frame)
        counter = tensor._version_counter
        entry = self._writes.get(id(counter))
        if entry is None or entry[0] is not counter:
            if len(self._writes) >= HISTORY:
                self._writes.pop(next(iter(self._writes)))
            entry = self._writes[id(counter)] = (counter, [])
        entry[1].append(Write(counter[0], _WRITE_NAMES.get(api, api), where))

    def _remember_cut(self, cut: Cut, result) -> None:
        self.cuts.append(cut)
        if result is not None:
            if len(self._cut_of_result) >= 4 * HISTORY:
                self._cut_of_result = {k: v for k, v in self._cut_of_result.items()
                                       if v[0]() is not None}
            self._cut_of_result[id(result)] = (weakref.ref(result), cut)

    # -- events: backward -----------------------------------------------------------------------
    def backward_started(self, roots, grads) -> None:
        """A pass begins: open its record."""
        index = self.backwards[-1].index + 1 if self.backwards else 1
        names = ", ".join(short_name(r.grad_fn) if r.grad_fn is not None else "a leaf" for r in roots)
        self._current = BackwardRecord(index, self._where(), names,
                                       [weakref.ref(r) for r in roots])
        self._marks = {}
        self._leaf_marks = {}
        self.backwards.append(self._current)
        if self._recorders:
            self._forward("backward_started", roots, grads)

    def node_executed(self, node, grad_outputs, grad_inputs) -> None:
        """Find the first node that made a gradient all-zero or non-finite, and pass it on.

        The common case (a finite, non-zero gradient out) costs one sum and one ``any`` per
        gradient (a float comparison for a scalar); the incoming gradients are only looked at
        when an outgoing one is bad."""
        if self._recorders:
            self._forward("node_executed", node, grad_outputs, grad_inputs)
        record = self._current
        if record is None:
            return
        record.executed += 1
        inherited = self._marks.pop(node._sequence_nr(), None)
        for i, ((nxt, _), g) in enumerate(zip(node.next_functions, grad_inputs)):
            if nxt is None or g is None:
                continue
            out = host_array(_array(g))
            blame = None
            if out.size == 1 and out.dtype.kind == "f":  # scalars: Python floats are cheaper
                value = float(out.reshape(()))
                if value == 0.0 or not math.isfinite(value):
                    blame = self._judge(node, i, grad_outputs, out, inherited)
            elif (out.dtype.kind in "fc" and not np.isfinite(out.sum())
                  and not np.isfinite(out).all()) or not out.any():
                blame = self._judge(node, i, grad_outputs, out, inherited)
            if blame is not None:
                if type(nxt) is AccumulateGrad:
                    self._leaf_marks.setdefault(id(nxt.variable), blame)
                else:
                    self._marks.setdefault(nxt._sequence_nr(), blame)

    def _judge(self, node, index: int, grad_outputs, out, inherited) -> Blame | None:
        """Blame for a bad outgoing gradient: this node if what came in was fine, else the
        blame that came in with it."""
        if out.dtype.kind in "fc" and not np.isfinite(out).all():
            incoming = _incoming(grad_outputs)
            finite_in = all(np.isfinite(a).all() for a in incoming if a.dtype.kind in "fc")
            return self._blame_nonfinite(node, index, incoming, out) if finite_in else inherited
        nonzero_in = any(a.any() for a in _incoming(grad_outputs))
        return self._blame_zero(node, out) if nonzero_in else inherited

    def grad_accumulated(self, tensor, grad, accumulated) -> None:
        """A leaf's ``.grad`` was written: note the pass, and any blame that reached it."""
        if self._recorders:
            self._forward("grad_accumulated", tensor, grad, accumulated)
        record = self._current
        if record is None:
            return
        record.reached[id(tensor)] = bool(accumulated)
        entry = self._leaf_history.get(id(tensor))
        if not accumulated or entry is None or entry[0]() is not tensor:
            entry = self._leaf_history[id(tensor)] = (weakref.ref(tensor), [])
        entry[1].append(record.index)
        blame = self._leaf_marks.get(id(tensor))
        if blame is not None:
            record.blame[id(tensor)] = blame

    def backward_finished(self, report) -> None:
        """The pass ended."""
        self._current = None
        self._marks = {}
        self._leaf_marks = {}
        if self._recorders:
            self._forward("backward_finished", report)

    # -- blame ----------------------------------------------------------------------------------
    def _blame_nonfinite(self, node, index: int, incoming, out) -> Blame:
        kind = "NaN" if np.isnan(out).any() else "Inf"
        bad = np.flatnonzero(~np.isfinite(out.reshape(-1)))
        position = int(bad[0]) if bad.size else 0
        inputs = _saved_values(node)
        values = []
        for label, array in inputs:
            if array.size == out.size:
                values.append(f"{label} = {array.reshape(-1)[position].item()!r}")
            elif array.size == 1:
                values.append(f"{label} = {array.reshape(-1)[0].item()!r}")
        at = f" at index {position}" if out.size > 1 else ""
        cause = note_of(node, "why_nonfinite") or ""
        detail = (f"{cause}{'; ' if cause else ''}"
                  f"{', '.join(values) if values else 'its inputs'}{at}").strip()
        return Blame(kind, short_name(node), self.where_of(node), detail,
                     note_of(node, "fix_nonfinite") or "")

    def _blame_zero(self, node, out) -> Blame:
        name = short_name(node)
        reason = note_of(node, "why_zero") or "it multiplied the gradient by zeros"
        return Blame("zero", name, self.where_of(node),
                     f"{reason} (the gradient it passed on, {format_shape(out.shape)}, is all 0)")


def _array(g):
    return g._data if isinstance(g, Tensor) else g


def _incoming(grad_outputs) -> list[np.ndarray]:
    return [host_array(_array(g)) for g in grad_outputs if g is not None]


def _saved_values(node) -> list[tuple[str, np.ndarray]]:
    """The node's saved inputs as host arrays, labelled as the rules call them."""
    try:
        arrays = node.saved(None)
    except RuntimeError:
        return []
    labels = ("result",) if short_name(node) in ("SqrtBackward0", "RsqrtBackward0",
                                              "ReciprocalBackward0") else ("self", "other")
    out = []
    for label, array in zip(labels, arrays):
        if hasattr(array, "shape") and hasattr(array, "dtype"):
            out.append((label, host_array(array)))
    return out


def _leaves_behind(node) -> tuple[weakref.ref, ...]:
    """Weak references to every leaf whose AccumulateGrad is reachable from ``node``."""
    if node is None:
        return ()
    seen: set[int] = set()
    leaves: list[weakref.ref] = []
    stack = [node]
    while stack:
        current = stack.pop()
        seq = current._sequence_nr()
        if seq in seen:
            continue
        seen.add(seq)
        if type(current) is AccumulateGrad:
            leaves.append(weakref.ref(current.variable))
            continue
        stack.extend(nxt for nxt, _ in current.next_functions if nxt is not None)
    return tuple(leaves)


def _leaves_of(tensor) -> tuple[weakref.ref, ...]:
    """The leaves a tensor that requires grad was computed from (itself, for a leaf)."""
    node = tensor.grad_fn
    return (weakref.ref(tensor),) if node is None else _leaves_behind(node)


def _cut_from(source, how: str, where: Where | None, result: weakref.ref | None,
              block: Block | None = None, leaves: tuple | None = None) -> Cut:
    """The cut of a value that left ``source`` (a tensor that requires grad, or None)."""
    node = source.grad_fn if source is not None else None
    if node is None:  # a leaf, or only values cut already (``direct`` False)
        leaf = weakref.ref(source) if source is not None else None
        return Cut(how, where, "a leaf", None, result,
                   leaves if leaves is not None else (leaf,) if leaf is not None else (),
                   leaf, block, source is not None)
    return Cut(how, where, short_name(node), node._sequence_nr(), result,
               leaves if leaves is not None else _leaves_behind(node), None, block)


# How user code switches recording off, by the grad-mode function it called.
_SWITCH_FORMS = {"__enter__": "with", "__exit__": "with", "wrapper": "decorator",
                 "__init__": "call"}
_GRAD_MODE_FILE = os.path.abspath(grad_mode.__file__)


def _switch_site():
    """``(frame, form)`` of a grad-mode switch being made: the user's frame and how its code
    switched (``with``, ``decorator``, ``call``), or form None when gradnb's own code did."""
    frame = sys._getframe(2)
    outer = None
    while frame is not None and is_internal_code(frame.f_code):
        outer = frame.f_code
        frame = frame.f_back
    if frame is None or outer is None:
        return frame, None
    if os.path.abspath(outer.co_filename) == _GRAD_MODE_FILE:
        return frame, _SWITCH_FORMS.get(outer.co_name)
    if outer.co_filename.endswith("contextlib.py"):  # an ExitStack, a contextmanager
        return frame, "with"
    return frame, None


_WATCHER = Watcher()


def watcher() -> Watcher:
    """The process's watcher (one, so that ``%why`` sees what every watched cell recorded)."""
    return _WATCHER


@contextmanager
def watching() -> Iterator[Watcher]:
    """Watch the calling thread for the duration of the block.

    >>> import gradnb
    >>> from gradnb.notebook.explain import watching
    >>> x = gradnb.tensor(2.0, requires_grad=True)
    >>> with watching() as w:
    ...     y = (x * 3).detach()
    >>> w.cut_of(y).how
    'detach()'
    """
    _WATCHER.start()
    try:
        yield _WATCHER
    finally:
        _WATCHER.stop()


#: Functions called whenever ``%watch`` is switched and before each cell, so watchers of other
#: libraries follow the session (the torch adapter adds its own when it loads: this module
#: does not import it, so the layers stay one-way).
SESSION_FOLLOWERS: list = []


def follow_session() -> None:
    """Let every follower catch up with the session (torch may be imported after ``%watch
    on``)."""
    for follow in SESSION_FOLLOWERS:
        follow()


def watch_session(on: bool) -> None:
    """``%watch on``/``off``: keep watching the calling thread between cells, or stop."""
    if on and not _WATCHER.session:
        _WATCHER.session = True
        _WATCHER.start()
    elif not on and _WATCHER.session:
        _WATCHER.session = False
        _WATCHER.stop()
    follow_session()


class WatchedTrace(Trace):
    """A :class:`~gradnb.autograd.trace.Trace` that also watches while it records, so its graph
    shows source lines and cut edges: what ``gradnb.notebook.graph_trace()`` returns and what
    ``%%trace`` records. The watcher feeds it (one observer for both), unless the watcher is
    busy with another thread.

    >>> import gradnb
    >>> from gradnb.notebook import graph_trace
    >>> x = gradnb.tensor(2.0, requires_grad=True)
    >>> with graph_trace() as t:
    ...     y = x.exp()
    >>> watcher().where_of(y.grad_fn) is not None
    True
    """

    _feeding = None

    @property
    def active(self) -> bool:
        """Whether the trace is still recording."""
        return self._feeding is not None

    def start(self):
        """Begin recording and watching (idempotent)."""
        if self._feeding is None:
            self._feeding = _WATCHER.feeding(self)
            self._feeding.__enter__()
        return self

    def stop(self) -> None:
        """Stop recording and watching (idempotent)."""
        if self._feeding is not None:
            feeding, self._feeding = self._feeding, None
            feeding.__exit__(None, None, None)
