"""``GradTable``: the ``.grad`` of named tensors as a table (HTML and text).

One row per tensor: name, shape, dtype, the gradient's values (or a summary when large), its
norm, warning flags (NaN, Inf, all zero) and, after ``%backward``, whether this call wrote a
fresh ``.grad`` or accumulated onto an earlier one.

>>> import gradnb
>>> w = gradnb.tensor([1.0, -2.0], requires_grad=True)
>>> (w * w).sum().backward()
>>> print(GradTable([("w", w)]).text())
name  shape  dtype    grad     norm   flags  update
w     (2,)   float32  [2, -4]  4.472         -
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from gradnb.notebook.formatting import (
    array_flags,
    format_number,
    format_shape,
    format_values,
    html_table,
    l2_norm,
    text_table,
)
from gradnb.notebook.naming import Names, caller_namespace
from gradnb.notebook.tensors import dtype_name, grad_array

__all__ = ["HEADER", "NO_GRAD", "GradRow", "GradTable", "grad_row"]

HEADER = ["name", "shape", "dtype", "grad", "norm", "flags", "update"]
NO_GRAD = "None"


@dataclass(frozen=True)
class GradRow:
    """One tensor's gradient, already formatted (so the row never changes after it is made)."""

    name: str
    shape: str
    dtype: str
    grad: str
    norm: str
    flags: str
    update: str

    def cells(self) -> list[str]:
        """The row's cells in :data:`HEADER` order."""
        return [self.name, self.shape, self.dtype, self.grad, self.norm, self.flags, self.update]


def grad_row(name: str, tensor, update: str = "-") -> GradRow:
    """Format ``tensor.grad`` (a gradnb or torch tensor's, read without the non-leaf warning)
    as a row."""
    data = grad_array(tensor)
    shape, dtype = format_shape(tensor.shape), dtype_name(tensor)
    if data is None:
        return GradRow(name, shape, dtype, NO_GRAD, "", "", update)
    return GradRow(name, shape, dtype, format_values(data), format_number(l2_norm(data)),
                   ", ".join(array_flags(data)), update)


class GradTable:
    """The gradients of ``tensors``: ``(name, tensor)`` pairs, a name -> tensor mapping, or None
    for every tensor in the namespace that requires grad.

    ``updates`` maps a tensor's name to ``"fresh"`` or ``"accumulated"`` (``%backward`` fills
    it in); other rows say ``-``.
    """

    def __init__(
        self,
        tensors: Sequence[tuple[str, object]] | Mapping[str, object] | None = None,
        *,
        namespace: Mapping[str, object] | None = None,
        updates: Mapping[str, str] | None = None,
        title: str | None = None,
    ) -> None:
        if tensors is None:
            names = Names(caller_namespace(1) if namespace is None else namespace)
            pairs = [(n, t) for n, t in names.tensors() if t.requires_grad]
        elif isinstance(tensors, Mapping):
            pairs = list(tensors.items())
        else:
            pairs = list(tensors)
        updates = updates or {}
        self.rows = [grad_row(name, t, updates.get(name, "-")) for name, t in pairs]
        self.title = title

    def text(self) -> str:
        """The table as aligned text columns."""
        if not self.rows:
            return "GradTable: no tensors that require grad"
        table = text_table(HEADER, [row.cells() for row in self.rows])
        return f"{self.title}\n{table}" if self.title else table

    def to_html(self) -> str:
        """The table as an HTML fragment."""
        caption = f"<p><b>{escape(self.title)}</b></p>" if self.title else ""
        if not self.rows:
            return caption + "<p>No tensors that require grad.</p>"
        return caption + html_table(HEADER, [row.cells() for row in self.rows], "gradnb-grads")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()
