"""``%load_ext gradnb`` / ``%unload_ext gradnb``: what gets registered, and removed again.

Loading registers the magics, an HTML formatter for tensors and a :class:`MemoryLog` that
records every backward from then on, and silences NumPy's floating-point warnings raised inside
gradnb (``log(0)``, ``0/0``), where PyTorch is silent. Unloading removes all of it, so the
session is as it was (tensors print as text only, the magics are gone, no observer listens to
the engine).
"""

from __future__ import annotations

import warnings

from gradnb._core.tensor import Tensor
from gradnb.notebook import prompts
from gradnb.notebook.explain import watch_session
from gradnb.notebook.memory_meter import (
    has_session_log,
    session_log,
    start_session_log,
    stop_session_log,
)
from gradnb.notebook.tensor_html import tensor_html

__all__ = ["is_loaded", "load", "session_log", "unload"]

#: Loading ignores NumPy's RuntimeWarnings raised in modules whose name matches this.
_QUIET_MODULES = r"gradnb\."


def is_loaded(shell) -> bool:
    """Whether the extension is loaded in ``shell``."""
    return has_session_log(shell)


def load(shell) -> None:
    """Register magics, the tensor HTML formatter and the memory log (idempotent)."""
    if is_loaded(shell):
        return
    # Magics and HTML import IPython's display machinery: loaded only when a shell loads us.
    from gradnb.notebook.magics import GradnbMagics

    shell.register_magics(GradnbMagics)
    html = shell.display_formatter.formatters["text/html"]
    html.for_type(Tensor, tensor_html)
    html.for_type_by_name("torch", "Tensor", tensor_html)  # by name: torch is not imported
    start_session_log(shell)
    prompts.watch(shell)
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=_QUIET_MODULES)


def unload(shell) -> None:
    """Remove everything :func:`load` registered."""
    if not stop_session_log(shell):
        return
    prompts.unwatch(shell)
    from gradnb.notebook.magics import GradnbMagics  # loaded by ``load`` (see there)

    watch_session(False)
    _remove_warning_filter()

    registry = shell.magics_manager.magics
    for kind, names in GradnbMagics.magics.items():
        for name in names:
            registry[kind].pop(name, None)
    shell.magics_manager.registry.pop(GradnbMagics.__name__, None)
    shell.display_formatter.formatters["text/html"].pop(Tensor, None)
    shell.display_formatter.formatters["text/html"].pop("torch.Tensor", None)


def _remove_warning_filter() -> None:
    for entry in list(warnings.filters):
        action, message, category, module, lineno = entry
        if (action, category, lineno) == ("ignore", RuntimeWarning, 0) and \
                getattr(module, "pattern", module) == _QUIET_MODULES and message is None:
            warnings.filters.remove(entry)
            warnings._filters_mutated()
            return
