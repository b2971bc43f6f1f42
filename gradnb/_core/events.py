"""The observer seam: how tools (the notebook toolkit, ``autograd.graph_trace()``) watch the engine.

An observer is any object with some of these methods; each is called only if defined:

- ``op_recorded(node, outputs)``: a forward op created ``node`` (its ``next_functions`` are its
  inputs' nodes) and produced the tensors ``outputs``.
- ``backward_started(roots, grads)``: a backward pass begins from these tensors.
- ``node_executed(node, grad_outputs, grad_inputs)``: a node's derivative ran; ``grad_outputs``
  are the gradients that flowed in, ``grad_inputs`` those it sent to ``node.next_functions``.
- ``grad_accumulated(tensor, grad, accumulated)``: a leaf's ``.grad`` was set (``accumulated`` is
  True when it was added to an earlier gradient).
- ``buffers_freed(node, freed_bytes)``: after the pass, for each node that released saved
  tensors, the bytes of those that really went back to the allocator (exact: liveness is
  checked once the pass is over). Sent just before ``backward_finished``.
- ``backward_finished(report)``: the pass ended; ``report`` is a ``memory.BackwardReport``.
- ``value_detached(source, result, how)``: a value left the graph: ``source`` (a tensor that
  requires grad) gave ``result`` (a tensor without history, or None for a Python number or a
  NumPy array) through ``how``: ``"detach()"``, ``".data"``, ``".item()"``, ``".numpy()"``,
  ``".tolist()"`` or ``"tensor()"`` (re-wrapping a tensor).
- ``grad_mode_entered(mode)`` / ``grad_mode_exited(mode)``: a ``no_grad``, ``inference_mode`` or
  ``set_grad_enabled`` switch (a ``with`` block, a decorated function, a ``set_grad_enabled(False)``
  call) switched recording off, or switched it back on (``mode`` is the switch's name).
- ``tensor_modified(tensor)``: ``tensor`` was written in place (its version counter moved on).
- ``module_entered(module)`` / ``module_exited(module)``: an ``nn.Module`` call (hooks and
  ``forward``) begins / ends, even when it raises; ops recorded between the two ran inside it.

The engine checks ``if observers:`` (a list's truthiness) before building any payload, so with no
observer the seam costs one global lookup per op.

Observation can be per thread: ``subscribe(observer, thread=threading.get_ident())`` sends the
observer only the events raised in that thread, so a trace in one thread does not record the ops
another thread runs.
"""

from __future__ import annotations

from threading import get_ident

__all__ = ["Subscriber", "emit", "handled", "observers", "subscribe"]

observers: list = []
_thread_of: dict[int, int] = {}  # id(observer) -> the thread it watches (absent: every thread)


class _Subscription:
    """Handle returned by :func:`subscribe`; ``remove()`` (or ``with``) unsubscribes."""

    __slots__ = ("observer",)

    def __init__(self, observer) -> None:
        self.observer = observer

    def remove(self) -> None:
        try:
            observers.remove(self.observer)
        except ValueError:
            return
        if self.observer not in observers:
            _thread_of.pop(id(self.observer), None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def subscribe(observer, *, thread: int | None = None) -> _Subscription:
    """Start sending engine events to ``observer``; returns a handle with ``remove()``.

    With ``thread`` (a ``threading.get_ident()``), only events raised in that thread are sent.
    """
    observers.append(observer)
    if thread is not None:
        _thread_of[id(observer)] = thread
    return _Subscription(observer)


def handled(event: str) -> bool:
    """Whether any observer now defines ``event``: the engine asks once per backward pass
    before it would emit an event for every node (a failed attribute lookup per node and
    observer costs more than the node's own bookkeeping)."""
    return any(getattr(observer, event, None) is not None for observer in tuple(observers))


def emit(event: str, *payload) -> None:
    """Call ``event`` on every observer that defines it and watches this thread (callers check
    ``observers`` first)."""
    here = None
    for observer in tuple(observers):
        method = getattr(observer, event, None)
        if method is None:
            continue
        if _thread_of:
            wanted = _thread_of.get(id(observer))
            if wanted is not None:
                here = get_ident() if here is None else here
                if wanted != here:
                    continue
        method(*payload)


class Subscriber:
    """Base for observers that switch themselves on and off: ``start()`` subscribes (once),
    ``stop()`` unsubscribes; both are idempotent. A subclass with ``this_thread_only = True``
    hears only the thread that started it."""

    _subscription: _Subscription | None = None
    this_thread_only = False

    def start(self):
        """Begin receiving engine events (idempotent)."""
        if self._subscription is None:
            thread = get_ident() if self.this_thread_only else None
            self._subscription = subscribe(self, thread=thread)
        return self

    def stop(self) -> None:
        """Stop receiving engine events (idempotent)."""
        if self._subscription is not None:
            self._subscription.remove()
            self._subscription = None
