"""Matplotlib figures as deterministic inline SVG.

Figures are made with ``matplotlib.figure.Figure`` (never pyplot, so no global figure state and
no backend switch in the user's session), text stays text (``svg.fonttype = none``) and ids
come from a fixed hash salt with no date, so the same data gives the same SVG bytes.
"""

from __future__ import annotations

import base64
import io
from html import escape

__all__ = ["SVG_RC", "figure_svg", "new_figure", "svg_image"]

SVG_RC = {"svg.hashsalt": "gradnb", "svg.fonttype": "none", "font.size": 9.0}


def new_figure(width_in: float = 6.4, height_in: float = 2.6):
    """A fresh figure with one axes; returns ``(figure, axes)``."""
    from matplotlib.figure import Figure  # matplotlib loads on the first plot (import time)

    figure = Figure(figsize=(width_in, height_in), dpi=100, layout="constrained")
    return figure, figure.add_subplot()


def figure_svg(figure) -> str:
    """The figure as an ``<svg>`` element (XML prolog and doctype stripped, for inlining)."""
    import matplotlib  # loaded on the first plot (import time)

    buffer = io.StringIO()
    with matplotlib.rc_context(SVG_RC):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def svg_image(svg: str, alt: str) -> str:
    """``svg`` as an ``<img>`` with a data URI, for HTML outputs: a sanitizing renderer (an
    untrusted notebook, GitHub) keeps an image but strips inline ``<svg>``, leaving its labels
    as run-on text."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/svg+xml;base64,{data}">'
