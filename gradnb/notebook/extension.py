"""``%load_ext gradnb`` / ``%unload_ext gradnb``: what gets registered, and removed again.

Loading registers the magics, an HTML formatter for tensors and a :class:`MemoryLog` that
records every backward from then on. Unloading removes all three, so the session is as it
was (tensors print as text only, the magics are gone, no observer listens to the engine).
"""

from __future__ import annotations

from gradnb._tensor import Tensor
from gradnb.notebook.memory_meter import MemoryLog

_loaded: dict[int, MemoryLog] = {}  # id(shell) -> its log


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
    html = shell.display_formatter.formatters["text/html"]
    html.for_type(Tensor, tensor_html)
    html.for_type_by_name("torch", "Tensor", tensor_html)  # by name: torch is not imported
    _loaded[id(shell)] = MemoryLog().start()


def unload(shell) -> None:
    """Remove everything :func:`load` registered."""
    log = _loaded.pop(id(shell), None)
    if log is None:
        return
    log.stop()
    from gradnb.notebook.magics import GradnbMagics

    registry = shell.magics_manager.magics
    for kind, names in GradnbMagics.magics.items():
        for name in names:
            registry[kind].pop(name, None)
    shell.magics_manager.registry.pop(GradnbMagics.__name__, None)
    shell.display_formatter.formatters["text/html"].pop(Tensor, None)
    shell.display_formatter.formatters["text/html"].pop("torch.Tensor", None)
