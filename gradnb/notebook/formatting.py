"""Short, deterministic text for shapes, byte counts and gradient values.

Everything here is a pure function of its input (no addresses, no timings), so outputs built
from it compare equal across runs of a notebook.

>>> format_bytes(12), format_bytes(3 * 1024 * 1024)
('12 B', '3,145,728 B (3.0 MiB)')
>>> format_shape((2, 3)), format_shape(())
('(2, 3)', '()')
"""

from __future__ import annotations

from html import escape

import numpy as np

__all__ = [
    "SMALL_NUMEL",
    "array_flags",
    "format_bytes",
    "format_number",
    "format_shape",
    "format_values",
    "host_array",
    "html_table",
    "l2_norm",
    "text_table",
]

#: Tensors with at most this many elements show their values; bigger ones a summary.
SMALL_NUMEL = 8

_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def format_bytes(nbytes: int) -> str:
    """An exact byte count, with a binary-unit reading when it is 1 KiB or more."""
    text = f"{nbytes:,} B"
    for unit, size in _UNITS:
        if nbytes >= size:
            return f"{text} ({nbytes / size:.1f} {unit})"
    return text


def format_shape(shape) -> str:
    """A shape as a tuple literal: ``(2, 3)``, ``(4,)``, ``()``."""
    return str(tuple(int(d) for d in shape))


def format_number(value: float) -> str:
    """A number in at most four significant digits (``42``, ``0.3333``, ``1e-08``, ``nan``)."""
    return f"{float(value):.4g}"


def host_array(data) -> np.ndarray:
    """``data`` as a NumPy array (CuPy arrays are copied to the host, scalars wrapped)."""
    if isinstance(data, np.ndarray):
        return data
    return np.asarray(data.get() if hasattr(data, "get") else data)


def format_values(array: np.ndarray) -> str:
    """Values of a small array, or a one-line summary of a large one."""
    array = host_array(array)
    if array.size <= SMALL_NUMEL:
        if array.ndim == 0:
            return format_number(array)
        return "[" + ", ".join(format_number(v) for v in array.reshape(-1)) + "]"
    finite = array[np.isfinite(array)] if array.dtype.kind in "fc" else array
    if finite.size == 0:
        return "no finite values"
    return (
        f"mean {format_number(finite.mean())}, std {format_number(finite.std())}, "
        f"min {format_number(finite.min())}, max {format_number(finite.max())}"
    )


def array_flags(array: np.ndarray) -> list[str]:
    """``NaN``, ``Inf`` and ``all zero`` warnings for a gradient array."""
    array = host_array(array)
    flags = []
    if array.dtype.kind in "fc":
        if np.isnan(array).any():
            flags.append("NaN")
        if np.isinf(array).any():
            flags.append("Inf")
    if array.size and not array.any():
        flags.append("all zero")
    return flags


def l2_norm(array: np.ndarray) -> float:
    """The Euclidean norm over all elements (in float64, so float16 grads do not overflow)."""
    array = host_array(array)
    return float(np.sqrt(np.sum(np.abs(array.astype(np.float64)) ** 2)))


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell, for text/plain output."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
             for row in [header, *rows]]
    return "\n".join(lines)


def html_table(header: list[str], rows: list[list[str]], css_class: str) -> str:
    """A plain HTML table (cells are escaped)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (f'<table class="{css_class}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")
