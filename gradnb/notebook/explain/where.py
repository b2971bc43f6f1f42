"""Where a value came from: the line of user code that ran an op, as a cell or ``file:line``.

:func:`caller_where` walks up the stack past gradnb's own frames (ops, modules, the magics)
and IPython's to the first frame of user code. In IPython a cell's code has a file name that the shell's compiler
maps to the cell's execution count, so the place reads ``cell [3], line 2`` (``%%trace``
registers its cell the same way, counting the magic's own line). Elsewhere it reads
``model.py:12``. Looking a code object up is cached, so a capture costs a short frame walk.
"""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass

__all__ = ["CellNumbers", "Where", "caller_where", "is_internal_code", "skip_folder", "user_frame"]

# gradnb's own folder, found from this file (gradnb/notebook/explain/where.py) rather than by
# importing the package, which would make the toolkit import itself in a circle.
_GRADNB_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_GRADNB_DIR += os.sep
#: IPython's own frames are skipped too: a magic's caller is the cell that ran the magic.
_IPYTHON_MARK = os.sep + "IPython" + os.sep

_internal_code: dict = {}  # code object -> whether it is gradnb's own (or the runtime's)
_other_folders: list[str] = []  # libraries whose frames are skipped too (torch, once met)


@dataclass(frozen=True, slots=True)
class Where:
    """A line of user code: ``cell`` is the notebook execution count, or None for a file."""

    filename: str
    line: int
    cell: int | None = None

    def __str__(self) -> str:
        if self.cell is not None:
            return f"cell [{self.cell}], line {self.line}"
        return f"{os.path.basename(self.filename)}:{self.line}"

    def short(self) -> str:
        """``line 2`` for a cell (drawings use it: a saved drawing then reads the same whatever
        numbers the cells got when they ran), ``model.py:12`` for a file."""
        return f"line {self.line}" if self.cell is not None else str(self)

    def source(self) -> str:
        """The text of the line, stripped ('' when the source is not available)."""
        return linecache.getline(self.filename, self.line).strip()


def _is_internal(filename: str) -> bool:
    return (filename.startswith(_GRADNB_DIR) or _IPYTHON_MARK in filename
            or filename.endswith(("contextlib.py", "functools.py"))
            or os.path.abspath(filename).startswith(_GRADNB_DIR)
            or any(filename.startswith(folder) for folder in _other_folders))


def skip_folder(folder: str) -> None:
    """Treat the code under ``folder`` as a library's, not the user's (the torch adapter skips
    torch's own frames: a ``model(x)`` line is where torch's ops ran, not ``module.py``)."""
    folder = os.path.join(os.path.abspath(folder), "")
    if folder not in _other_folders:
        _other_folders.append(folder)
        _internal_code.clear()


def is_internal_code(code) -> bool:
    """Whether ``code`` (a code object) is gradnb's own, a skipped library's or the runtime's
    (IPython, ``contextlib``), rather than the user's; cached per code object."""
    inside = _internal_code.get(code)
    if inside is None:
        inside = _internal_code[code] = _is_internal(code.co_filename)
    return inside


def user_frame(depth: int = 1):
    """``(frame, api)``: the first frame of user code above the caller, and the name of the
    outermost gradnb function called from it (``mul_``, ``__setitem__``), or ``""``."""
    frame = sys._getframe(depth + 1)
    api = ""
    while frame is not None:
        code = frame.f_code
        inside = _internal_code.get(code)
        if inside is None:
            inside = _internal_code[code] = _is_internal(code.co_filename)
        if not inside:
            return frame, api
        api = code.co_name
        frame = frame.f_back
    return None, api


class CellNumbers:
    """Maps a code file name to its notebook cell (IPython's compiler keeps the map)."""

    def __init__(self) -> None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        self.shell = shell
        self._map = getattr(getattr(shell, "compile", None), "_filename_map", None)

    def where(self, frame) -> Where:
        """The :class:`Where` of ``frame``'s current line."""
        return self.at(frame.f_code.co_filename, frame.f_lineno)

    def at(self, filename: str, line: int) -> Where:
        """The :class:`Where` of ``line`` in the code file ``filename``."""
        cell = self._map.get(filename) if self._map is not None else None
        return Where(filename, line, cell)


def caller_where(cells: CellNumbers | None = None, depth: int = 1) -> Where | None:
    """Where the user code above the caller is now (None if there is no user frame)."""
    frame, _ = user_frame(depth + 1)
    if frame is None:
        return None
    return (cells or CellNumbers()).where(frame)

