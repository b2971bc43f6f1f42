"""``%load_ext gradnb`` / ``%unload_ext gradnb``: what gets registered, and removed again.

Loading registers the magics, an HTML formatter for tensors and a :class:`MemoryLog` that
records every backward from then on. Unloading removes all three, so the session is as it
was (tensors print as text only, the magics are gone, no observer listens to the engine).
"""

from __future__ import annotations

from gradnb._tensor import Tensor
from gradnb.notebook.memory_meter import MemoryLog

_loaded: dict[int, MemoryLog] = {}  # id(shell) -> its log
_prompts: dict[int, int] = {}  # id(shell) -> prompt number of the cell running now
_hooks: dict[int, object] = {}  # id(shell) -> its pre_run_cell callback


def running_prompt(shell) -> int | None:
    """The prompt number (``In [5]``) of the cell ``shell`` is running, if the extension saw it
    start. IPython counts a cell that stores history before running it, so inside the cell
    ``shell.execution_count`` is one ahead; the number is worked out as the cell starts."""
    return _prompts.get(id(shell))


def _remember_prompt(shell):
    def pre_run_cell(info=None) -> None:
        counted = getattr(info, "store_history", True)  # IPython has already counted it
        _prompts[id(shell)] = shell.execution_count - (1 if counted else 0)

    return pre_run_cell


def session_log() -> MemoryLog | None:
    """The memory log of the running IPython session, if the extension is loaded there."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return next(iter(_loaded.values()), None)
    return _loaded.get(id(shell))


def is_loaded(shell) -> bool:
    """Whether the extension is loaded in ``shell``."""
    return id(shell) in _loaded


def load(shell) -> None:
    """Register magics, the tensor HTML formatter and the memory log (idempotent)."""
    if is_loaded(shell):
        return
    from gradnb.notebook.magics import GradnbMagics
    from gradnb.notebook.tensor_html import tensor_html

    shell.register_magics(GradnbMagics)
    shell.display_formatter.formatters["text/html"].for_type(Tensor, tensor_html)
    _loaded[id(shell)] = MemoryLog().start()
    _hooks[id(shell)] = _remember_prompt(shell)
    shell.events.register("pre_run_cell", _hooks[id(shell)])


def unload(shell) -> None:
    """Remove everything :func:`load` registered."""
    log = _loaded.pop(id(shell), None)
    if log is None:
        return
    log.stop()
    shell.events.unregister("pre_run_cell", _hooks.pop(id(shell)))
    _prompts.pop(id(shell), None)
    from gradnb.notebook.magics import GradnbMagics

    registry = shell.magics_manager.magics
    for kind, names in GradnbMagics.magics.items():
        for name in names:
            registry[kind].pop(name, None)
    shell.magics_manager.registry.pop(GradnbMagics.__name__, None)
    shell.display_formatter.formatters["text/html"].pop(Tensor, None)
