"""Tensor printing that matches PyTorch's ``repr``/``str`` byte for byte.

A port of PyTorch's ``torch/_tensor_str.py`` (BSD-3-Clause, Copyright (c) Meta Platforms,
Inc. and affiliates), reduced to what dense NumPy-backed tensors need: no sparse, quantized,
nested or meta tensors. Where PyTorch writes ``dtype=torch.float64`` we write
``dtype=gradnb.float64``; everything else is identical, including PyTorch's quirks (the
width of a column ignores zeros and non-finite values, so ``-0.`` or ``nan`` may stick out).

>>> import numpy as np

>>> format_tensor(np.array([1.0, 2.0], dtype=np.float32), default_dtype_name="float32",
...               dtype_name="float32", suffixes=["requires_grad=True"])
'tensor([1., 2.], requires_grad=True)'
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = [
    "PRINT_OPTS",
    "PrintOptions",
    "format_tensor",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
]

_PREFIX = "tensor("
# The module named in ``dtype=`` suffixes; a module-level name so that tests can print as
# ``torch`` would and compare with PyTorch byte for byte, line wrapping included.
_DTYPE_MODULE = "gradnb"


@dataclasses.dataclass
class PrintOptions:
    """The knobs :func:`set_printoptions` turns; see it for their meaning."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors, exactly as ``torch.set_printoptions`` does.

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which a tensor is summarized with ``...``
            (default 1000).
        edgeitems: items kept at each end of every summarized dimension (default 3).
        linewidth: characters per line before a line break (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"`` presets; the other arguments
            override it.
        sci_mode: force scientific notation on (True) or off (False); None (the
            default, and what every call without it sets) chooses automatically.

    >>> set_printoptions(precision=2)
    >>> import numpy as np
    >>> format_tensor(np.array([1.12345]), default_dtype_name="float64",
    ...               dtype_name="float64", suffixes=[])
    'tensor([1.12])'
    >>> set_printoptions(profile="default")
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # Like PyTorch: sci_mode is always written, so omitting it restores automatic choice.
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change print options; takes :func:`set_printoptions`'s arguments."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


class _Formatter:
    """Chooses one notation and column width for all elements of a tensor."""

    def __init__(self, sample: np.ndarray) -> None:
        self.floating = np.issubdtype(sample.dtype, np.floating)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = sample.reshape(-1)
        if not self.floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return
        magnitudes = np.abs(nonzero_finite).astype(np.float64)
        # Python floats: their division overflows to inf silently, as PyTorch's does.
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        for value in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{value:.{precision}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1  # room for the trailing "." of "2."
            else:
                width = len(f"{value:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: float | bool) -> str:
        """Format one Python scalar, right-aligned to the common width."""
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return (self.max_width - len(text)) * " " + text


class _ComplexFormatter:
    """PyTorch's pair of formatters for complex tensors: real and imaginary parts each get
    their own notation and width; an element prints as ``real+imagj``."""

    def __init__(self, sample: np.ndarray) -> None:
        self.real = _Formatter(sample.real)
        self.imag = _Formatter(sample.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # the "j"

    def format(self, value: complex) -> str:
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized(array: np.ndarray) -> np.ndarray:
    """Keep only the elements a summarized print shows, so they alone set the format."""
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array
    if array.ndim == 1:
        if array.shape[0] > 2 * edge:
            # array[-0:] is the whole array, as in PyTorch: with edgeitems=0 the
            # formatter still sees every element.
            return np.concatenate((array[:edge], array[-edge:]))
        return array
    if not edge:
        return np.empty((0,) * array.ndim, dtype=array.dtype)
    rows = list(array)
    if len(rows) > 2 * edge:
        rows = rows[:edge] + rows[-edge:]
    return np.stack([_summarized(row) for row in rows])


def _vector_str(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    element_length = formatter.max_width + 2  # the ", " between elements
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        data = (
            [formatter.format(value) for value in array[:edge].tolist()]
            + [" ..."]
            + [formatter.format(value) for value in array[-edge:].tolist()]
        )
    else:
        data = [formatter.format(value) for value in array.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _vector_str(array, indent, summarize, formatter)
    edge = PRINT_OPTS.edgeitems
    count = array.shape[0]
    if summarize and count > 2 * edge:
        shown = [*range(edge), None, *range(count - edge, count)]
    else:
        shown = list(range(count))
    slices = [
        "..." if i is None else _nested_str(array[i], indent + 1, summarize, formatter)
        for i in shown
    ]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _contents_str(array: np.ndarray, indent: int) -> str:
    if array.dtype.kind == "V":  # ml_dtypes' bfloat16: PyTorch formats its values as floats
        array = array.astype(np.float32)
    summarize = array.size > PRINT_OPTS.threshold
    sample = _summarized(array) if summarize else array
    formatter = _ComplexFormatter(sample) if array.dtype.kind == "c" else _Formatter(sample)
    return _nested_str(array, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    pieces = [text]
    # PyTorch's own arithmetic (off by one from the true length); kept for identical wraps.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def format_tensor(
    array: np.ndarray, *, default_dtype_name: str, dtype_name: str, suffixes: list[str]
) -> str:
    """Return PyTorch's ``repr`` of a tensor holding ``array``, with ``gradnb.`` dtypes.

    Args:
        array: the tensor's data, on the CPU.
        default_dtype_name: the current default float dtype, e.g. ``"float32"``.
        dtype_name: the tensor's dtype name, e.g. ``"float64"``, ``"int64"``, ``"bool"``.
        suffixes: extra ``key=value`` strings, e.g. ``"requires_grad=True"``,
            ``"grad_fn=<MulBackward0>"`` or ``"device='cuda:0'"``. A ``device=`` entry is
            placed before the ``size=``/``dtype=`` entries, where PyTorch puts it; the rest
            follow them in the given order.

    >>> format_tensor(np.array([], dtype=np.int64), default_dtype_name="float32",
    ...               dtype_name="int64", suffixes=[])
    'tensor([], dtype=gradnb.int64)'
    """
    indent = len(_PREFIX)
    own: list[str] = [s for s in suffixes if s.startswith("device=")]
    dtype_suffix = f"dtype={_DTYPE_MODULE}.{dtype_name}"
    if array.size == 0:
        # NumPy-style: an empty tensor shows its shape unless it is (0,), and its dtype
        # unless it is the default float, since no element hints at it.
        if array.ndim != 1:
            own.append(f"size={tuple(array.shape)}")
        if dtype_name != default_dtype_name:
            own.append(dtype_suffix)
        contents = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            own.append(f"size={tuple(array.shape)}")
        default_complex = "complex128" if default_dtype_name == "float64" else "complex64"
        if dtype_name not in (default_dtype_name, default_complex, "int64", "bool"):
            own.append(dtype_suffix)
        contents = _contents_str(array, indent)
    own += [s for s in suffixes if not s.startswith("device=")]
    return _add_suffixes(_PREFIX + contents, own, indent)
