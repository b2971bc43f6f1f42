"""What the user's code did while recording was off (``no_grad``, ``inference_mode``,
``set_grad_enabled(False)``): which values that require grad went into an op, and which tensors
without history came out.

The engine records no node for an op run while recording is off, so no event reports one. The
grad-mode events say when recording goes off and back on; while it is off in a block the user
wrote, :class:`UnrecordedCalls` puts a profile function on the watched thread (``sys.setprofile``
reaches only the calling thread) that sees each gradnb function the user's code calls: its
arguments when it starts, its result when it returns. Calls that gradnb makes itself are not
reported (an optimizer's own ``no_grad`` step never starts it), and it is removed as soon as
recording is back on. A profiler that is already set (``%prun``) is left alone: the block is
then known without its ops. The price is paid only inside such a block while watched: every call
there goes through the profile function (an op on a small tensor takes about 6-8x as long).

>>> import gradnb
>>> seen = []
>>> calls = UnrecordedCalls(lambda caller, line, args, result: seen.append(result))
>>> w = gradnb.ones(2, requires_grad=True)
>>> with gradnb.no_grad():
...     calls.start()
...     q = w * 2
...     calls.stop()
>>> seen[0] is q
True
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from gradnb.notebook.explain.where import is_internal_code

__all__ = ["UnrecordedCalls"]

_VARARGS, _VARKEYWORDS = 0x04, 0x08  # code.co_flags bits
#: Calls that read state rather than compute (``w.grad``, a module's ``__getattr__``).
_NOT_OPS = frozenset({"grad", "__getattr__", "__getattribute__"})


class UnrecordedCalls:
    """Reports every gradnb call made from user code while started, on the starting thread, as
    ``report(caller_frame, line, arguments, result)``; ``arguments`` lists the call's argument
    values, with those passed in a tuple, list or dict (``cat([a, b])``, ``*args``) spread out.
    """

    def __init__(self, report: Callable[[object, int, list, object], None]) -> None:
        self._report = report
        self._open: list[tuple] = []  # (frame, caller, line, arguments) of calls under way
        self.running = False

    def start(self) -> None:
        """Begin (idempotent); does nothing while another profile function is set."""
        if not self.running and sys.getprofile() is None:
            sys.setprofile(self._profile)
            self.running = True

    def stop(self) -> None:
        """End (idempotent); calls still under way are not reported."""
        if self.running:
            if sys.getprofile() == self._profile:
                sys.setprofile(None)
            self.running = False
            self._open.clear()

    def _profile(self, frame, event: str, arg) -> None:
        if event == "call":
            code = frame.f_code
            if is_internal_code(code) and code.co_name not in _NOT_OPS:
                caller = frame.f_back
                if caller is not None and not is_internal_code(caller.f_code):
                    self._open.append((frame, caller, caller.f_lineno, _arguments(frame)))
        elif event == "return" and self._open and self._open[-1][0] is frame:
            _, caller, line, arguments = self._open.pop()
            try:
                self._report(caller, line, arguments, arg)
            except Exception:  # noqa: BLE001, S110 - explaining must never break the user's code
                pass


def _arguments(frame) -> list:
    """The values a call was made with (read when it starts, before its body rebinds them)."""
    code = frame.f_code
    count = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & _VARARGS)
             + bool(code.co_flags & _VARKEYWORDS))
    found = frame.f_locals
    values: list = []
    for name in code.co_varnames[:count]:
        value = found.get(name)
        if type(value) in (tuple, list):
            values.extend(value)
        elif type(value) is dict:
            values.extend(value.values())
        else:
            values.append(value)
    return values
