"""``GradFlow``: per-parameter gradient statistics across a model's layers.

The plot people otherwise hand-roll with matplotlib to spot vanishing or exploding gradients:
for each parameter (in the model's order) the norm, mean absolute value and largest absolute
value of its ``.grad``, as a table and a bar chart on a log scale.

>>> import gradnb
>>> w1 = gradnb.tensor([1.0, 2.0], requires_grad=True)
>>> w2 = gradnb.tensor([3.0], requires_grad=True)
>>> ((w1 * 2).sum() * w2).sum().backward()
>>> print(GradFlow([("w1", w1), ("w2", w2)]).text())
GradFlow: 2 parameters with gradients
name  shape  norm   mean |g|  max |g|  flags
w1    (2,)   8.485  6         6
w2    (1,)   6      6         6
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from gradnb.notebook.formatting import (
    array_flags,
    format_number,
    format_shape,
    html_table,
    l2_norm,
    text_table,
)
from gradnb.notebook.memory_meter import session_log
from gradnb.notebook.naming import Names, caller_namespace
from gradnb.notebook.plotting import figure_svg, new_figure, svg_image
from gradnb.notebook.tensors import grad_array, is_tensor
from gradnb.notebook.widgets import refreshing_widget  # ipywidgets: only when asked

__all__ = ["HEADER", "FlowRow", "GradFlow", "flow_row"]

HEADER = ["name", "shape", "norm", "mean |g|", "max |g|", "flags"]


@dataclass(frozen=True)
class FlowRow:
    """One parameter's gradient statistics (None where it has no gradient yet)."""

    name: str
    shape: tuple[int, ...]
    norm: float | None
    mean_abs: float | None
    max_abs: float | None
    flags: tuple[str, ...]

    def cells(self) -> list[str]:
        """The row's cells in :data:`HEADER` order."""
        stats = [self.norm, self.mean_abs, self.max_abs]
        return [self.name, format_shape(self.shape),
                *("None" if s is None else format_number(s) for s in stats), ", ".join(self.flags)]


def flow_row(name: str, param) -> FlowRow:
    """Statistics of ``param.grad`` (a gradnb or torch parameter)."""
    grad = grad_array(param)
    if grad is None:
        return FlowRow(name, tuple(param.shape), None, None, None, ())
    data = np.abs(grad.astype(np.float64))
    return FlowRow(name, tuple(param.shape), l2_norm(grad),
                   float(data.mean()) if data.size else 0.0,
                   float(data.max()) if data.size else 0.0, tuple(array_flags(grad)))


class GradFlow:
    """Gradient flow of a model (anything with ``named_parameters()``), of ``(name, tensor)``
    pairs or a mapping, or (None) of every leaf tensor in the namespace that requires grad."""

    def __init__(
        self,
        source: object | Sequence[tuple[str, object]] | Mapping[str, object] | None = None,
        *,
        namespace: Mapping[str, object] | None = None,
    ) -> None:
        if source is None:  # fix the namespace now, so a refreshed view sees the same one
            source = Names(caller_namespace(1) if namespace is None else namespace)
        self.source = source
        self.rows = [flow_row(n, t) for n, t in _parameters(source)]

    def text(self) -> str:
        """Headline and table."""
        with_grad = sum(1 for r in self.rows if r.norm is not None)
        head = f"GradFlow: {with_grad} parameter{'s' if with_grad != 1 else ''} with gradients"
        if not self.rows:
            return head
        return f"{head}\n{text_table(HEADER, [r.cells() for r in self.rows])}"

    def plot_svg(self) -> str:
        """Max and mean |grad| per parameter as bars on a log scale (inline SVG).

        The bars are the table's numbers (four significant digits) and rise from the decade
        below the smallest to the decade above the largest. So the picture is what the table
        says, and the same on every machine: a gradient's last bits (which BLAS and CPU
        computed it) and matplotlib's autoscaling of bars that start at 0 on a log axis both
        move the drawn coordinates, and a stored notebook output with them."""
        rows = [r for r in self.rows if r.max_abs is not None]
        figure, axes = new_figure(max(4.0, 0.45 * len(rows) + 2.0), 3.0)
        positions = list(range(len(rows)))
        tops = [_shown(r.max_abs) for r in rows]
        means = [_shown(r.mean_abs) for r in rows]
        low, high = _decades(tops + means)
        axes.bar(positions, [t - low for t in tops], bottom=low, color="#4a90c8", alpha=0.45,
                 label="max |g|")
        axes.bar(positions, [m - low for m in means], bottom=low, color="#1f4e79",
                 label="mean |g|")
        axes.set_xticks(positions, [r.name for r in rows], rotation=60, ha="right")
        axes.set_yscale("log")
        axes.set_ylim(low, high)
        axes.set_ylabel("|gradient|")
        axes.set_title("gradient flow")
        if rows:
            axes.legend(loc="upper right", fontsize=8, frameon=False)
        return figure_svg(figure)

    def to_html(self) -> str:
        """Plot and table."""
        if not self.rows:
            return f"<p>{escape(self.text())}</p>"

        plot = (svg_image(self.plot_svg(), "gradient flow")
                if any(r.max_abs is not None for r in self.rows) else "")
        return (f'<div class="gradnb-grad-flow"><p><b>{escape(self.text().splitlines()[0])}'
                f"</b></p>{plot}{html_table(HEADER, [r.cells() for r in self.rows], 'gradnb-flow')}"
                "</div>")

    def refreshed(self) -> GradFlow:
        """A new view of the same parameters with their current gradients."""
        if isinstance(self.source, Names):
            return GradFlow(_parameters(self.source))
        return GradFlow(self.source)

    def widget(self):
        """An HTML widget that redraws after every backward call (needs ``%load_ext``)."""
        return refreshing_widget(lambda: self.refreshed().to_html(), session_log())

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


# The smallest magnitude a bar shows: an all-zero gradient draws as a bar of this height.
_FLOOR = 1e-30


def _shown(value: float) -> float:
    """``value`` as the table prints it (four significant digits), at least ``_FLOOR``."""
    return max(float(format_number(value)), _FLOOR)


def _decades(values: list[float]) -> tuple[float, float]:
    """The powers of ten just below the smallest and just above the largest of ``values``
    (one decade apart at least)."""
    if not values:
        return 0.1, 1.0
    low = 10.0 ** math.floor(math.log10(min(values)))
    high = 10.0 ** math.ceil(math.log10(max(values)))
    if low == min(values):  # a bar exactly on a decade still shows
        low /= 10.0
    return low, max(high, low * 10.0)


def _parameters(source) -> list[tuple[str, object]]:
    if isinstance(source, Names):
        return [(n, t) for n, t in source.tensors() if t.requires_grad and t.is_leaf]
    if isinstance(source, Mapping):
        return list(source.items())
    if callable(getattr(source, "named_parameters", None)):
        return list(source.named_parameters())
    if is_tensor(source):
        raise TypeError("GradFlow needs a model or (name, tensor) pairs, not a single tensor")
    return list(source)
