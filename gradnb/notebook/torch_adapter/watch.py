"""The torch side of watching: source lines and cuts for torch code, for ``%why`` and the graph.

torch has no engine-wide observer, but a ``TorchFunctionMode`` sees every torch function a cell
calls. :class:`TorchWatcher` is that mode, and the toolkit's one observer of torch code: it
remembers the line that created every backward node (by ``grad_fn._sequence_nr()``), every
place a value left the graph (``detach()``, ``.data``, ``.item()``, ``.tolist()``, ``.numpy()``,
``torch.tensor(t)``, and each op run under ``no_grad``/``set_grad_enabled(False)``/
``inference_mode`` on values that require grad), and it feeds ``%%trace``'s
:class:`~.live.LiveTorchTrace` while the cell runs (:meth:`TorchWatcher.feeding`), so one mode
serves both ``%%trace`` and ``%watch on``. The records are the gradnb watcher's own
(:class:`~gradnb.notebook.explain.watcher.Cut`, :class:`~gradnb.notebook.explain.watcher.Block`),
so ``%why`` says the same things about both engines.

A watching mode stays on the thread's mode stack from :meth:`TorchWatcher.start` to the last
:meth:`TorchWatcher.stop` (for ``%watch on``, across cells: a kernel runs every cell on one
thread).
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from gradnb.notebook.explain.watcher import HISTORY, ORIGINS, Block, Cut
from gradnb.notebook.explain.where import CellNumbers, Where, is_internal_code, skip_folder
from gradnb.notebook.torch_adapter.records import new_nodes

__all__ = ["TorchWatcher", "torch_watcher"]

skip_folder(os.path.dirname(torch.__file__))  # a line in torch is never the user's line

# Torch functions through which a value leaves the graph, and how the user wrote them.
_DETACHING = {torch.Tensor.detach: "detach()", torch.Tensor.item: ".item()",
              torch.Tensor.tolist: ".tolist()", torch.Tensor.numpy: ".numpy()",
              torch.tensor: "tensor()"}
# torch's grad-mode classes, by the name of the method through which they switch.
_SWITCHES = ("no_grad", "set_grad_enabled", "inference_mode", "enable_grad")


def _backward_functions() -> tuple:
    return (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)


class TorchWatcher(TorchFunctionMode):
    """The mode behind watching torch code (one per process: :func:`torch_watcher`)."""

    def __init__(self) -> None:
        super().__init__()
        self._origin: dict[int, tuple[str, int]] = {}  # sequence number -> (file, line)
        self.cuts: deque[Cut] = deque(maxlen=HISTORY)
        self._cut_of_result: dict[int, tuple[weakref.ref, Cut]] = {}
        self._blocks: list[Block | None] = []
        self._recorders: list = []
        self._cells = CellNumbers()
        self._depth = 0
        self._entered = False
        self._thread: int | None = None
        self.session = False

    # -- switching on and off ---------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether the mode is on the watched thread's stack."""
        return self._entered

    def start(self) -> None:
        """Begin (or nest) watching the calling thread's torch calls."""
        self._depth += 1
        if not self._entered:
            self._cells = CellNumbers()
            self._thread = threading.get_ident()
            self._blocks = [] if torch.is_grad_enabled() else [
                Block("set_grad_enabled", "switch", None)]
            self.__enter__()
            self._entered = True

    def stop(self) -> None:
        """End one :meth:`start`; the last one (and no session) takes the mode off."""
        self._depth = max(0, self._depth - 1)
        if self._depth == 0 and not self.session and self._entered:
            self._entered = False
            self.__exit__(None, None, None)

    def watches_this_thread(self) -> bool:
        """Whether the mode is on the calling thread's stack."""
        return self._entered and self._thread == threading.get_ident()

    @contextmanager
    def feeding(self, recorder) -> Iterator[bool]:
        """Watch while the block runs and hand ``recorder`` (a live trace) each call's outputs
        (``record_outputs``) and the cell's backward calls (``run_backward``). Yields False
        when another thread is being watched: the recorder then records nothing."""
        self.start()
        fed = self.watches_this_thread()
        if fed:
            self._recorders.append(recorder)
        try:
            yield fed
        finally:
            if fed:
                self._recorders.remove(recorder)
            self.stop()

    # -- what explanations ask ------------------------------------------------------------------
    def where_of(self, node) -> Where | None:
        """The line that created the torch node ``node`` (None if it was not watched)."""
        return self.where_of_seq(node._sequence_nr())

    def where_of_seq(self, seq: int) -> Where | None:
        """The line that created the node numbered ``seq``."""
        spot = self._origin.get(seq)
        return None if spot is None else self._cells.at(*spot)

    def cut_of(self, tensor) -> Cut | None:
        """The cut that produced ``tensor``."""
        entry = self._cut_of_result.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def cuts_from_leaf(self, leaf) -> list[Cut]:
        """Cuts whose value was computed from ``leaf`` (newest first, direct ones first)."""
        found = [c for c in reversed(self.cuts) if any(ref() is leaf for ref in c.leaves)]
        return sorted(found, key=lambda c: not c.direct)

    # -- the mode -------------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _backward_functions():
            for recorder in self._recorders:
                return recorder.run_backward(func, args, kwargs)
            return func(*args, **kwargs)
        if func is torch._C._set_grad_enabled:
            self._switch(bool(args[0]) if args else bool(kwargs.get("enabled")))
            return func(*args, **kwargs)
        recording = torch.is_grad_enabled()
        result = func(*args, **kwargs)
        try:
            self._observe(func, args, kwargs, result, recording)
        except Exception:  # noqa: BLE001, S110 - watching must never break the user's code
            pass
        if recording:
            for recorder in self._recorders:
                recorder.record_outputs(result)
        return result

    def _observe(self, func, args, kwargs, result, recording: bool) -> None:
        caller = sys._getframe(2)  # the code that called the torch function (C sits between)
        frame = _user_frame(caller)
        if frame is None:
            return
        spot = (frame.f_code.co_filename, frame.f_lineno)
        how = _DETACHING.get(func) or (".data" if _is_data_getter(func) else None)
        if how is not None:
            if not is_internal_code(caller.f_code):
                source = args[0] if args else None
                if isinstance(source, torch.Tensor) and source.requires_grad:
                    out = result if isinstance(result, torch.Tensor) else None
                    self._remember(_cut(source, how, self._cells.at(*spot), out), out)
            return
        outputs = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)]
        if recording:
            roots = [t.grad_fn for t in outputs if t.grad_fn is not None]
            if roots:
                origin = self._origin
                for node in new_nodes(roots, lambda n: type(n).__name__ != "AccumulateGrad"
                                      and n._sequence_nr() not in origin):
                    origin[node._sequence_nr()] = spot
                while len(origin) > ORIGINS:
                    del origin[next(iter(origin))]
            return
        block = self._block()
        if block is None:
            return
        outputs = [t for t in outputs if not t.requires_grad and self.cut_of(t) is None]
        if outputs:
            self._cut_unrecorded(tree_leaves((args, kwargs)), outputs, block,
                                 self._cells.at(*spot))

    def _block(self) -> Block | None:
        """The user's switch now in force, if recording is off because of one."""
        if self._blocks:
            return self._blocks[-1]
        if torch.is_inference_mode_enabled():
            return Block("inference_mode", "switch", None)
        return None

    def _switch(self, enabled: bool) -> None:
        """``torch._C._set_grad_enabled``: a switch begins or ends."""
        before = torch.is_grad_enabled()
        if before and not enabled:
            self._blocks.append(_switch_block(self._cells))
        elif enabled and not before and self._blocks:
            self._blocks.pop()

    def _cut_unrecorded(self, inputs, outputs, block: Block, where: Where) -> None:
        source = None
        leaves: dict[int, weakref.ref] = {}
        for value in inputs:
            if not isinstance(value, torch.Tensor):
                continue
            if value.requires_grad:
                source = value if source is None else source
                refs = _leaves_of(value)
            elif (cut := self.cut_of(value)) is not None and cut.block is not None:
                refs = cut.leaves
            else:
                continue
            for ref in refs:
                leaves.setdefault(id(ref()), ref)
        if not leaves:
            return
        for out in outputs:
            cut = _cut(source, block.how, where, out, block, tuple(leaves.values()))
            self._remember(cut, out)

    def _remember(self, cut: Cut, result) -> None:
        self.cuts.append(cut)
        if result is not None:
            if len(self._cut_of_result) >= 4 * HISTORY:
                self._cut_of_result = {k: v for k, v in self._cut_of_result.items()
                                       if v[0]() is not None}
            self._cut_of_result[id(result)] = (weakref.ref(result), cut)


def _user_frame(frame):
    while frame is not None and is_internal_code(frame.f_code):
        frame = frame.f_back
    return frame


def _is_data_getter(func) -> bool:
    return getattr(func, "__name__", "") == "__get__" and \
        getattr(getattr(func, "__self__", None), "__name__", "") == "data"


def _switch_block(cells: CellNumbers) -> Block | None:
    """The :class:`Block` of a switch being made now, or None when torch's own code made it
    (an optimizer step): the outermost torch frame the user's code called names the switch."""
    frame = sys._getframe(3)
    chain = []
    while frame is not None and is_internal_code(frame.f_code):
        chain.append(frame)
        frame = frame.f_back
    if frame is None or not chain:
        return None
    outer = chain[-1]
    if outer.f_code.co_name == "decorate_context":  # @torch.no_grad() on a function
        func = outer.f_locals.get("func")
        code = getattr(func, "__code__", None)
        if code is None or is_internal_code(code):
            return None
        how = next((f.f_code.co_qualname.split(".")[0] for f in reversed(chain)
                    if f.f_code.co_qualname.split(".")[0] in _SWITCHES), "no_grad")
        return Block(how, "decorator", cells.where(frame))
    how = outer.f_code.co_qualname.split(".")[0]
    if how not in _SWITCHES:
        return None
    return Block(how, "with" if how != "set_grad_enabled" else "switch", cells.where(frame))


def _leaves_of(tensor) -> tuple[weakref.ref, ...]:
    """Weak references to the leaves a torch tensor that requires grad was computed from."""
    if tensor.grad_fn is None:
        return (weakref.ref(tensor),)
    seen: set[int] = set()
    leaves = []
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.append(weakref.ref(variable))
            continue
        stack.extend(nxt for nxt, _ in node.next_functions)
    return tuple(leaves)


def _cut(source, how: str, where: Where, result, block: Block | None = None,
         leaves: tuple | None = None) -> Cut:
    node = source.grad_fn if source is not None else None
    ref = weakref.ref(result) if result is not None else None
    if node is None:
        leaf = weakref.ref(source) if source is not None else None
        return Cut(how, where, "a leaf", None, ref,
                   leaves if leaves is not None else (leaf,) if leaf is not None else (),
                   leaf, block, source is not None)
    return Cut(how, where, type(node).__name__, node._sequence_nr(), ref,
               leaves if leaves is not None else _leaves_of(source), None, block)


_WATCHER: TorchWatcher | None = None


def torch_watcher() -> TorchWatcher:
    """The process's torch watcher (made when torch code is first watched)."""
    global _WATCHER  # one mode per process, made only once torch is met
    if _WATCHER is None:
        _WATCHER = TorchWatcher()
    return _WATCHER
