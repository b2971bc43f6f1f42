"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The state is thread-local (as in PyTorch): a ``no_grad`` block in one thread does not switch off
recording in another. Each mode is a context manager and a decorator, and nests.
"""

from __future__ import annotations

import functools
import threading

from . import events

__all__ = [
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


# How many threads have grad mode off, and how many are in inference mode, now. Every op reads
# its thread's grad mode and every new tensor whether it is an inference tensor, and reading a
# thread-local costs about as much as making the tensor: so the hot paths read these
# process-wide counts first and the thread's own flag only while a count is not zero (grad mode
# off: inside a backward pass or a ``no_grad`` block; inference mode: almost never).
grad_off_threads = [0]
inference_threads = [0]
_counts_lock = threading.Lock()  # a thread switch inside ``+=`` would lose an update


class _State(threading.local):
    _enabled = True
    _inference = False

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, on: bool) -> None:
        on = bool(on)
        if on != self._enabled:
            self._enabled = on
            with _counts_lock:
                grad_off_threads[0] += -1 if on else 1

    @property
    def inference(self) -> bool:
        return self._inference

    @inference.setter
    def inference(self, on: bool) -> None:
        on = bool(on)
        if on != self._inference:
            self._inference = on
            with _counts_lock:
                inference_threads[0] += 1 if on else -1


state = _State()


def is_grad_enabled() -> bool:
    """Whether ops record a graph right now (in this thread)."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active in this thread."""
    return state.inference


class _Mode:
    """Base of the grad-mode switches: a re-entrant context manager that also decorates."""

    def _target(self) -> tuple[bool, bool]:
        raise NotImplementedError

    def __enter__(self):
        self.__dict__.setdefault("_saved", []).append((state.enabled, state.inference))
        state.enabled, state.inference = self._target()
        if events.observers and self._saved[-1][0] and not state.enabled:
            events.emit("grad_mode_entered", type(self).__name__)
        return self

    def __exit__(self, *exc) -> None:
        switched_off = not state.enabled
        state.enabled, state.inference = self._saved.pop()
        if events.observers and switched_off and state.enabled:
            events.emit("grad_mode_exited", type(self).__name__)

    def clone(self) -> _Mode:
        """A fresh switch with the same setting (each decorated call gets its own)."""
        return type(self)()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_Mode):
    """Switch off graph recording: results of ops have ``requires_grad=False``.

    >>> import gradnb
    >>> x = gradnb.ones(2, requires_grad=True)
    >>> with gradnb.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def _target(self):
        return False, state.inference


class enable_grad(_Mode):
    """Switch recording back on inside a ``no_grad`` block."""

    def _target(self):
        return True, state.inference


class set_grad_enabled(_Mode):
    """Set recording on or off. Takes effect at once when called, like PyTorch, and also works
    as a context manager that restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._saved = [(state.enabled, state.inference)]
        state.enabled = self.mode
        if events.observers:
            _announce(self._saved[0][0])

    def clone(self) -> _Mode:
        clone = object.__new__(set_grad_enabled)
        clone.mode = self.mode
        return clone

    def __call__(self, fn):
        # Used as a decorator, the switch made by __init__ must not outlive the decoration.
        was_enabled = state.enabled
        state.enabled, state.inference = self._saved.pop()
        if events.observers:
            _announce(was_enabled)
        return super().__call__(fn)

    def _target(self):
        return self.mode, state.inference

    def __enter__(self):
        if "_saved" in self.__dict__ and self._saved:
            return self  # the switch already happened in __init__
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        was_enabled = state.enabled
        state.enabled, state.inference = self._saved.pop()
        if events.observers:
            _announce(was_enabled)


def _announce(was_enabled: bool) -> None:
    """Tell observers that a ``set_grad_enabled`` call (which switches at once, not on entry)
    switched recording off or back on."""
    if was_enabled != state.enabled:
        events.emit("grad_mode_entered" if was_enabled else "grad_mode_exited",
                    "set_grad_enabled")


class inference_mode(_Mode):
    """Like ``no_grad``, and tensors created inside are inference tensors that can never join a
    graph later. ``inference_mode(False)`` is a no-op switch, as in PyTorch."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def clone(self) -> _Mode:
        return inference_mode(self.mode)

    def _target(self):
        if not self.mode:
            return state.enabled, False
        return False, True
