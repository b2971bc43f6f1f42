"""Export a :class:`~gradnb.notebook.graphmodel.Graph` as Graphviz DOT text.

gradnb draws graphs itself (see :mod:`gradnb.notebook.render_svg`); DOT is for people who
want to post-process a graph with Graphviz. Colours match the SVG renderer. The whole
graph is exported: Graphviz copes with big graphs on its own.

>>> from gradnb.notebook.graphmodel import Graph, GraphNode
>>> g = Graph([GraphNode(0, "leaf_grad", "w"), GraphNode(1, "op", "MulBackward0")])
>>> _ = g.add_edge(0, 1)
>>> print(to_dot(g).splitlines()[-2])
  "n0" -> "n1";
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from gradnb.notebook.graphmodel import Graph, GraphNode
from gradnb.notebook.render_svg import (
    CUT_EDGE_COLOUR,
    EDGE_COLOUR,
    HIGHLIGHT_STYLES,
    NODE_STYLES,
    PATH_EDGE_COLOUR,
    SAVED_EDGE_COLOUR,
)

__all__ = ["to_dot"]

_TENSOR_KINDS = frozenset({"leaf_grad", "leaf", "saved", "output"})


def to_dot(graph: Graph, *, name: str = "gradnb") -> str:
    """DOT source for ``graph``, inputs on top, one statement per line, ids sorted."""
    lines = [
        f"digraph {_quote(name)} {{",
        '  graph [rankdir=TB, nodesep=0.25, ranksep=0.35, fontname="monospace"];',
        (
            '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=10, '
            "height=0.2, penwidth=1.2];"
        ),
        f'  edge [color="{EDGE_COLOUR}", arrowsize=0.6];',
    ]
    for node in graph.ordered_nodes():
        lines.append(f"  {_node_name(node.id)} [{_node_attributes(node)}];")
    for edge in graph.ordered_edges():
        attributes = []
        if edge.kind == "saved":
            attributes += ["style=dashed", f'color="{SAVED_EDGE_COLOUR}"']
        elif edge.kind == "cut":
            attributes += ["style=dashed", f'color="{CUT_EDGE_COLOUR}"']
        if graph.nodes[edge.src].highlight and graph.nodes[edge.dst].highlight:
            attributes = [a for a in attributes if not a.startswith("color=")]
            attributes += [f'color="{PATH_EDGE_COLOUR}"', "penwidth=1.8"]
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"  {_node_name(edge.src)} -> {_node_name(edge.dst)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_name(node_id: int) -> str:
    return f'"n{node_id}"'


def _node_attributes(node: GraphNode) -> str:
    style = NODE_STYLES[node.kind]
    label = escape(node.label)
    if node.kind in _TENSOR_KINDS:
        label = f"<b>{label}</b>"
    if node.sublabel:
        label += f'<br/><font point-size="9" color="#5c5c5c">{escape(node.sublabel)}</font>'
    stroke, width = style.stroke, 1.2
    if node.highlight:
        stroke, width, _ = HIGHLIGHT_STYLES[node.highlight]
    tooltip = node.detail or " ".join(part for part in (node.label, node.sublabel) if part)
    attributes = [
        f"label=<{label}>",
        f'fillcolor="{style.fill}"',
        f'color="{stroke}"',
        f"tooltip={_quote(tooltip)}",
    ]
    if width != 1.2:
        attributes.append(f"penwidth={width}")
    if node.kind in ("summary", "cut"):
        attributes.append('style="rounded,filled,dashed"')
    return ", ".join(attributes)


def _quote(text: str) -> str:
    """A DOT double-quoted string (backslashes and quotes escaped, newlines as \\n)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
