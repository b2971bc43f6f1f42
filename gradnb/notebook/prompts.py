"""The prompt number (``In [5]``) of the notebook cell running now.

IPython counts a cell that stores history before running it, so inside the cell
``shell.execution_count`` is already the *next* number (and a cell run without history, as
nbval runs them, is not counted at all). A ``pre_run_cell`` callback, registered by
``%load_ext gradnb``, works the number out as each cell starts (and starts watching torch code
when ``%watch on`` is in force and torch has been imported since).
"""

from __future__ import annotations

from gradnb.notebook.explain.watcher import follow_session

__all__ = ["running_prompt", "unwatch", "watch"]

_prompts: dict[int, int] = {}  # id(shell) -> prompt number of the cell running now
_callbacks: dict[int, object] = {}  # id(shell) -> its pre_run_cell callback


def running_prompt(shell) -> int | None:
    """The prompt number of the cell ``shell`` is running, if :func:`watch` saw it start."""
    return _prompts.get(id(shell))


def watch(shell) -> None:
    """Follow ``shell``'s cells from now on."""
    def pre_run_cell(info=None) -> None:
        counted = getattr(info, "store_history", True)
        _prompts[id(shell)] = shell.execution_count - (1 if counted else 0)
        follow_session()  # torch imported after ``%watch on`` is watched from now on

    _callbacks[id(shell)] = pre_run_cell
    shell.events.register("pre_run_cell", pre_run_cell)


def unwatch(shell) -> None:
    """Stop following ``shell``'s cells."""
    callback = _callbacks.pop(id(shell), None)
    if callback is not None:
        shell.events.unregister("pre_run_cell", callback)
    _prompts.pop(id(shell), None)
