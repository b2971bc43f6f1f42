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
- ``module_entered(module)`` / ``module_exited(module)``: an ``nn.Module`` call (hooks and
  ``forward``) begins / ends, even when it raises; ops recorded between the two ran inside it.

The engine checks ``if observers:`` (a list's truthiness) before building any payload, so with no
observer the seam costs one global lookup per op.
"""

from __future__ import annotations

__all__ = ["Subscriber", "emit", "observers", "subscribe"]

observers: list = []


class _Subscription:
    """Handle returned by :func:`subscribe`; ``remove()`` (or ``with``) unsubscribes."""

    __slots__ = ("observer",)

    def __init__(self, observer) -> None:
        self.observer = observer

    def remove(self) -> None:
        try:
            observers.remove(self.observer)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def subscribe(observer) -> _Subscription:
    """Start sending engine events to ``observer``; returns a handle with ``remove()``."""
    observers.append(observer)
    return _Subscription(observer)


def emit(event: str, *payload) -> None:
    """Call ``event`` on every observer that defines it (callers check ``observers`` first)."""
    for observer in tuple(observers):
        method = getattr(observer, event, None)
        if method is not None:
            method(*payload)


class Subscriber:
    """Base for observers that switch themselves on and off: ``start()`` subscribes (once),
    ``stop()`` unsubscribes; both are idempotent."""

    _subscription: _Subscription | None = None

    def start(self):
        """Begin receiving engine events (idempotent)."""
        if self._subscription is None:
            self._subscription = subscribe(self)
        return self

    def stop(self) -> None:
        """Stop receiving engine events (idempotent)."""
        if self._subscription is not None:
            self._subscription.remove()
            self._subscription = None
