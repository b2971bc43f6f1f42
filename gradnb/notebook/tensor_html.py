"""Rich display of tensors in notebooks: a small HTML table next to torch's text repr.

Registered for ``text/html`` only, so ``repr(t)`` and the text/plain output stay exactly
PyTorch's. Tensors too big for a readable table get no HTML (the text repr shows instead).

>>> import gradnb
>>> html = tensor_html(gradnb.tensor([[1.0, 2.0]], requires_grad=True))
>>> html.splitlines()[0]
'<div class="gradnb-tensor"><div>tensor (1, 2) float32, requires_grad=True</div>'
"""

from __future__ import annotations

from html import escape

from gradnb.notebook.explain.notes import short_name
from gradnb.notebook.formatting import format_number, format_shape
from gradnb.notebook.tensors import dtype_name, values

__all__ = ["MAX_COLUMNS", "MAX_NUMEL", "tensor_html"]

#: Largest tensor (elements) and widest row shown as an HTML table.
MAX_NUMEL = 64
MAX_COLUMNS = 16


def tensor_html(tensor) -> str | None:
    """An HTML table of a 0-, 1- or 2-d tensor (gradnb's or torch's) with at most
    :data:`MAX_NUMEL` elements."""
    if tensor.ndim > 2 or tensor.numel() > MAX_NUMEL:
        return None
    data = values(tensor)
    rows = data.reshape(1, -1) if data.ndim < 2 else data
    if rows.shape[1] > MAX_COLUMNS:
        return None
    autograd = ""
    if tensor.grad_fn is not None:
        autograd = f", grad_fn={short_name(tensor.grad_fn)}"
    elif tensor.requires_grad:
        autograd = ", requires_grad=True"
    caption = f"tensor {format_shape(tensor.shape)} {dtype_name(tensor)}{autograd}"
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    return (f'<div class="gradnb-tensor"><div>{escape(caption)}</div>\n'
            f'<table style="font-family: monospace">{body}</table></div>')


def _cell(value) -> str:
    if isinstance(value, (bool, int)) or getattr(value, "dtype", None) is not None and (
            value.dtype.kind in "biu"):
        return str(value)
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "c":
        return str(value)
    return format_number(value)
