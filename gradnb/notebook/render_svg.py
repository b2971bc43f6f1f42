"""Render a :class:`~gradnb.notebook.graphmodel.Graph` as a self-contained SVG string.

No Graphviz, no external CSS or fonts: styles are inline and fonts are generic families,
so the SVG shows the same in JupyterLab, on GitHub/nbviewer and in a saved notebook. The
colours follow pytorchviz, which many users already read fluently: blue leaves that
require grad, grey constants, orange saved tensors, green outputs.

The output is deterministic: the same graph gives byte-identical SVG in every process.

>>> from gradnb.notebook.graphmodel import Graph, GraphNode
>>> g = Graph([GraphNode(0, "leaf_grad", "x", "(3,) float32")])
>>> svg = to_svg(g)
>>> svg.startswith("<svg") and 'data-node-id="0"' in svg
True
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

from gradnb.notebook.graphmodel import Graph, GraphNode
from gradnb.notebook.layout import (
    LABEL_FONT_PX,
    SUBLABEL_FONT_PX,
    Box,
    EdgeRoute,
    Layout,
    clip_text,
    layout_graph,
)

__all__ = [
    "CUT_EDGE_COLOUR",
    "EDGE_COLOUR",
    "FONT_FAMILY",
    "HIGHLIGHT_STYLES",
    "NODE_STYLES",
    "PATH_EDGE_COLOUR",
    "PATH_HIGHLIGHTS",
    "SAVED_EDGE_COLOUR",
    "SUBTEXT_COLOUR",
    "TEXT_COLOUR",
    "NodeStyle",
    "to_svg",
]


@dataclass(frozen=True)
class NodeStyle:
    """Fill and outline of one node kind, and how the legend names it."""

    fill: str
    stroke: str
    legend: str


#: Colours per node kind (shared with the DOT export).
NODE_STYLES: dict[str, NodeStyle] = {
    "leaf_grad": NodeStyle("#cfe6f7", "#4a90c8", "leaf, requires grad"),
    "leaf": NodeStyle("#e9e9e9", "#9a9a9a", "leaf, no grad"),
    "op": NodeStyle("#fafafa", "#8a8a8a", "backward op"),
    "accumulate": NodeStyle("#eef1f6", "#7d8ba1", "AccumulateGrad"),
    "saved": NodeStyle("#ffdcae", "#e08a1e", "saved tensor"),
    "output": NodeStyle("#d6f0b8", "#6a9e3a", "output"),
    "summary": NodeStyle("#ffffff", "#a0a0a0", "collapsed nodes"),
    "cut": NodeStyle("#fde2e2", "#c0392b", "left the graph / edited"),
}

#: Outline colour and width per highlight state.
HIGHLIGHT_STYLES: dict[str, tuple[str, float, str]] = {
    "path": ("#d62728", 2.2, "gradient path"),
    "active": ("#ff7f0e", 3.6, "running now"),
    "done": ("#9b2c2c", 1.8, "already run"),
    "added": ("#2e9d4a", 3.0, "added"),
    "removed": ("#c0392b", 3.0, "removed"),
    "changed": ("#7b3fb5", 3.0, "changed"),
}

#: Highlights that mark the gradient's path (edges between two such nodes are drawn red).
PATH_HIGHLIGHTS = frozenset({"path", "active", "done"})

EDGE_COLOUR = "#7a7a7a"
PATH_EDGE_COLOUR = "#d62728"
SAVED_EDGE_COLOUR = "#e08a1e"
CUT_EDGE_COLOUR = "#c0392b"
TEXT_COLOUR = "#1f1f1f"
SUBTEXT_COLOUR = "#5c5c5c"
FONT_FAMILY = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"

_TENSOR_KINDS = frozenset({"leaf_grad", "leaf", "saved", "output"})
_ARROW_LENGTH = 7.0
_ARROW_HALF_WIDTH = 3.6
_CORNER_RADIUS = 5.0
_TITLE_HEIGHT = 26.0
_LEGEND_ROW_HEIGHT = 22.0
_LEGEND_SWATCH = 12.0
_LEGEND_CHAR_WIDTH = 6.6
_LEGEND_LEFT = 16.0
_MIN_LEGEND_WIDTH = 420.0
_MIN_WIDTH = 120.0


def to_svg(
    graph: Graph,
    layout: Layout | None = None,
    *,
    title: str | None = None,
    legend: bool = False,
) -> str:
    """SVG markup for ``graph``.

    ``layout`` may be reused across calls (for example while step-through changes only the
    highlights); node styles and highlights always come from ``graph``, so a summary
    node made by collapsing shows the strongest highlight of the nodes it hides.
    """
    layout = layout or layout_graph(graph)
    nodes = {node_id: _appearance(node_id, graph, layout) for node_id in sorted(layout.boxes)}
    top = _TITLE_HEIGHT if title else 0.0
    legend_rows = (
        _legend_rows(list(nodes.values()), max(layout.width, _MIN_LEGEND_WIDTH)) if legend else []
    )
    legend_width = max(
        (sum(_legend_entry_width(text) for _, text in row) for row in legend_rows), default=0.0
    )
    width = max(layout.width, _MIN_WIDTH, legend_width + 2 * _LEGEND_LEFT)
    height = (
        layout.height + top + len(legend_rows) * _LEGEND_ROW_HEIGHT + (6.0 if legend_rows else 0.0)
    )

    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
            f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
            f'font-family="{FONT_FAMILY}" font-size="{_num(LABEL_FONT_PX)}" class="gradnb-graph">'
        ),
    ]
    if title:
        out.append(f"<title>{escape(title)}</title>")
    out.append(f'<rect width="{_num(width)}" height="{_num(height)}" fill="#ffffff"/>')
    if title:
        out.append(
            f'<text x="16" y="19" font-size="13" font-weight="bold" fill="{TEXT_COLOUR}">'
            f"{escape(title)}</text>"
        )
    out.append(f'<g transform="translate(0,{_num(top)})">')
    out.append('<g class="gradnb-edges" fill="none">')
    for route in layout.routes:
        out.append(_edge(route, nodes))
    out.append("</g>")
    out.append('<g class="gradnb-nodes">')
    for node_id, node in nodes.items():
        out.append(_node(node, layout.boxes[node_id]))
    out.append("</g>")
    out.append("</g>")
    if legend_rows:
        out.append(_legend(legend_rows, top + layout.height))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _appearance(node_id: int, graph: Graph, layout: Layout) -> GraphNode:
    """The node to draw for ``node_id``, with its highlight taken from ``graph``."""
    if node_id in graph.nodes:
        return graph.nodes[node_id]
    summary = layout.graph.nodes[node_id]
    hidden = [graph.nodes[i] for i in layout.members.get(node_id, ()) if i in graph.nodes]
    if not hidden:
        return summary
    states = {node.highlight for node in hidden}
    order = ("removed", "added", "changed", "active", "path", "done")
    strongest = next((s for s in order if s in states), None)
    return GraphNode(
        summary.id, summary.kind, summary.label, summary.sublabel, summary.detail, strongest
    )


def _node(node: GraphNode, box: Box) -> str:
    style = NODE_STYLES[node.kind]
    stroke, stroke_width = style.stroke, 1.2
    if node.highlight:
        stroke, stroke_width, _ = HIGHLIGHT_STYLES[node.highlight]
    highlight = f' data-highlight="{node.highlight}"' if node.highlight else ""
    dash = (' stroke-dasharray="4 3"' if node.kind in ("summary", "cut")
            or node.highlight == "removed" else "")
    tooltip = node.detail or " ".join(part for part in (node.label, node.sublabel) if part)
    weight = ' font-weight="bold"' if node.kind in _TENSOR_KINDS else ""
    italic = ' font-style="italic"' if node.kind == "summary" else ""
    lines = [
        f'<g class="gradnb-node gradnb-{node.kind}" data-node-id="{node.id}"{highlight}>',
        f"<title>{escape(tooltip)}</title>",
        (
            f'<rect x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(box.w)}" '
            f'height="{_num(box.h)}" rx="{_num(_CORNER_RADIUS)}" fill="{style.fill}" '
            f'stroke="{stroke}" stroke-width="{_num(stroke_width)}"{dash}/>'
        ),
    ]
    label_y = box.y + (15.5 if node.sublabel else box.h / 2 + 4.2)
    lines.append(
        f'<text x="{_num(box.cx)}" y="{_num(label_y)}" text-anchor="middle" '
        f'fill="{TEXT_COLOUR}"{weight}{italic}>{escape(clip_text(node.label, 32))}</text>'
    )
    if node.sublabel:
        lines.append(
            f'<text x="{_num(box.cx)}" y="{_num(box.y + 31.0)}" text-anchor="middle" '
            f'font-size="{_num(SUBLABEL_FONT_PX)}" fill="{SUBTEXT_COLOUR}">'
            f"{escape(clip_text(node.sublabel, 32))}</text>"
        )
    lines.append("</g>")
    return "\n".join(lines)


def _edge(route: EdgeRoute, nodes: dict[int, GraphNode]) -> str:
    on_path = (nodes[route.src].highlight in PATH_HIGHLIGHTS
               and nodes[route.dst].highlight in PATH_HIGHLIGHTS)
    if on_path:
        colour, width = PATH_EDGE_COLOUR, 1.8
    elif route.kind == "saved":
        colour, width = SAVED_EDGE_COLOUR, 1.2
    elif route.kind == "cut":
        colour, width = CUT_EDGE_COLOUR, 1.4
    else:
        colour, width = EDGE_COLOUR, 1.2
    dash = {"saved": ' stroke-dasharray="4 3"', "cut": ' stroke-dasharray="2 3"'}.get(
        route.kind, "")
    end_x, end_y = route.points[-1]
    # Curves arrive vertically, so the arrowhead points straight down at the box.
    points = [*route.points[:-1], (end_x, end_y - _ARROW_LENGTH + 0.5)]
    head = (
        f"M{_num(end_x - _ARROW_HALF_WIDTH)},{_num(end_y - _ARROW_LENGTH)}"
        f"L{_num(end_x + _ARROW_HALF_WIDTH)},{_num(end_y - _ARROW_LENGTH)}"
        f"L{_num(end_x)},{_num(end_y)}Z"
    )
    return (
        f'<g class="gradnb-edge gradnb-edge-{route.kind}" data-src="{route.src}" '
        f'data-dst="{route.dst}">'
        f'<path d="{_path_data(points)}" stroke="{colour}" stroke-width="{_num(width)}"{dash}/>'
        f'<path d="{head}" fill="{colour}"/></g>'
    )


def _path_data(points: list[tuple[float, float]]) -> str:
    """Straight drops where x is unchanged, vertical-tangent curves between layers."""
    (x0, y0), rest = points[0], points[1:]
    parts = [f"M{_num(x0)},{_num(y0)}"]
    for x1, y1 in rest:
        if abs(x1 - x0) < 0.05:
            parts.append(f"L{_num(x1)},{_num(y1)}")
        else:
            middle = (y0 + y1) / 2
            parts.append(
                f"C{_num(x0)},{_num(middle)} {_num(x1)},{_num(middle)} {_num(x1)},{_num(y1)}"
            )
        x0, y0 = x1, y1
    return "".join(parts)


def _legend_rows(nodes: list[GraphNode], max_width: float) -> list[list[tuple[str, str]]]:
    """Legend entries for the kinds and highlights the drawing uses, wrapped into rows."""
    kinds = {node.kind for node in nodes}
    states = {node.highlight for node in nodes}
    entries = [(kind, style.legend) for kind, style in NODE_STYLES.items() if kind in kinds]
    entries += [(state, style[2]) for state, style in HIGHLIGHT_STYLES.items() if state in states]
    rows: list[list[tuple[str, str]]] = []
    used = max_width
    for entry in entries:
        entry_width = _legend_entry_width(entry[1])
        if used + entry_width > max_width - 2 * _LEGEND_LEFT:
            rows.append([])
            used = 0.0
        rows[-1].append(entry)
        used += entry_width
    return rows


def _legend_entry_width(text: str) -> float:
    return _LEGEND_SWATCH + 6.0 + len(text) * _LEGEND_CHAR_WIDTH + 14.0


def _legend(rows: list[list[tuple[str, str]]], y: float) -> str:
    parts = [
        (
            f'<g class="gradnb-legend" font-size="11" '
            f'transform="translate({_num(_LEGEND_LEFT)},{_num(y)})">'
        )
    ]
    for row_number, row in enumerate(rows):
        row_y = row_number * _LEGEND_ROW_HEIGHT
        x = 0.0
        for key, text in row:
            if key in NODE_STYLES:
                fill, stroke, width = NODE_STYLES[key].fill, NODE_STYLES[key].stroke, 1.2
            else:
                fill, (stroke, width, _) = "#ffffff", HIGHLIGHT_STYLES[key]
            parts.append(
                f'<rect x="{_num(x)}" y="{_num(row_y + 4)}" width="{_num(_LEGEND_SWATCH)}" '
                f'height="{_num(_LEGEND_SWATCH)}" rx="2" fill="{fill}" stroke="{stroke}" '
                f'stroke-width="{_num(width)}"/>'
                f'<text x="{_num(x + _LEGEND_SWATCH + 6.0)}" y="{_num(row_y + 14)}" '
                f'fill="{SUBTEXT_COLOUR}">{escape(text)}</text>'
            )
            x += _legend_entry_width(text)
    parts.append("</g>")
    return "".join(parts)


def _num(value: float) -> str:
    """Fixed formatting (two decimals, trailing zeros dropped) so output is byte-stable."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
