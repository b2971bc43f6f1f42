"""``gradnb.__config__.show()``: how this gradnb was built, as ``torch.__config__.show()``.

gradnb is Python on NumPy, with two optional C extensions for its hottest paths: recording an
op (``gradnb/_core/_record.c``) and the backward pass's per-node loops
(``gradnb/autograd/_loop.c``). An install without a C compiler runs the same steps in Python,
slower; ``GRADNB_PURE_PYTHON=1`` does so on purpose. ``show()`` says which one runs here.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from . import __version__
from ._core import record as _record
from .autograd import engine as _engine

__all__ = ["compiled_parts", "show"]


def compiled_parts() -> tuple[str, ...]:
    """The hot paths running compiled in this process: ``("record", "backward loop")`` where
    the install built both; ``()`` where it runs Python alone."""
    parts = []
    if _record._compiled is not None:
        parts.append("record")
    if _engine._loop is not None:
        parts.append("backward loop")
    return tuple(parts)


def show() -> str:
    """A few lines on this build: versions, and which hot paths run compiled."""
    parts = compiled_parts()
    if parts:
        compiled = ", ".join(parts)
    elif os.environ.get("GRADNB_PURE_PYTHON"):
        compiled = "none (GRADNB_PURE_PYTHON is set: Python code only)"
    else:
        compiled = "none (not built at install, no C compiler found: Python code only)"
    return (f"gradnb {__version__}\n"
            f"  - Python {platform.python_version()}, NumPy {np.__version__}\n"
            f"  - Compiled hot paths: {compiled}\n")
