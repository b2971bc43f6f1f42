"""``GraphView``: a computation graph as a notebook object (SVG, DOT, text, widget).

>>> import gradnb
>>> x = gradnb.tensor(2.0, requires_grad=True)
>>> loss = x * x
>>> view = GraphView(loss, namespace={"x": x, "loss": loss})
>>> print(view.text())
GraphView: 1 op, 1 leaf, 1 output; 4 B saved
  MulBackward0(x) -> loss () float32
>>> view.to_svg().startswith("<svg")
True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gradnb.autograd.trace import Trace
from gradnb.notebook import torch_adapter
from gradnb.notebook.build import BuiltGraph
from gradnb.notebook.formatting import format_bytes
from gradnb.notebook.grad_print import GradPrint, leaf_grads
from gradnb.notebook.graphmodel import Graph
from gradnb.notebook.interactive import interactive_html
from gradnb.notebook.layout import Layout, layout_graph
from gradnb.notebook.naming import Names, caller_namespace
from gradnb.notebook.render_dot import to_dot
from gradnb.notebook.render_svg import to_svg
from gradnb.notebook.tensors import is_tensor
from gradnb.notebook.widgets import svg_widget

__all__ = ["TEXT_OP_LINES", "GraphView", "graph_text"]

#: text/plain lists at most this many ops, then says how many more there are.
TEXT_OP_LINES = 12

_LEAF_KINDS = ("leaf_grad", "leaf")


class GraphView:
    """A drawable graph from a :class:`~gradnb.autograd.trace.Trace`, tensors (gradnb's or
    torch's), or a Graph.

    Names come from ``namespace`` (default: the notebook's, or the caller's variables) at the
    moment the view is made. ``show_saved`` draws the saved-tensor boxes.
    """

    def __init__(
        self,
        source: Trace | object | list | tuple | Graph,
        *,
        namespace: Mapping[str, object] | None = None,
        title: str | None = None,
        show_saved: bool = True,
        saved_bytes: int | None = None,
    ) -> None:
        #: The trace drawn and where its records went (None when drawn from a Graph).
        self.trace: Trace | None = None
        self.built: BuiltGraph | None = None
        #: Each named leaf's gradient when the view was made (what ``diff`` compares).
        self.grads: dict[str, GradPrint | None] = {}
        if isinstance(source, Graph):
            self.graph = source
            self.saved_bytes = saved_bytes or 0
        else:
            trace = source if isinstance(source, Trace) else torch_adapter.snapshot_of(
                _tensors(source))
            names = Names(caller_namespace(1) if namespace is None else namespace)
            self.trace = trace
            self.built = torch_adapter.build_graph_for(trace, names, show_saved=show_saved)
            self.graph = self.built.graph
            self.grads = leaf_grads(trace, self.built)
            self.saved_bytes = trace.saved_bytes if saved_bytes is None else saved_bytes
        self.title = title
        self._layout: Layout | None = None

    @property
    def layout(self) -> Layout:
        """The graph's layout (computed once; highlights can change without a new one)."""
        if self._layout is None:
            self._layout = layout_graph(self.graph)
        return self._layout

    def to_svg(self) -> str:
        """The graph as a standalone SVG document (byte-identical across runs)."""
        return to_svg(self.graph, self.layout, title=self.title, legend=True)

    def to_dot(self) -> str:
        """The graph as Graphviz DOT source."""
        return to_dot(self.graph)

    def save(self, path: str | Path) -> Path:
        """Write SVG (``.svg``) or DOT (``.dot``/``.gv``) to ``path``; returns the path."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            path.write_text(self.to_svg(), encoding="utf-8")
        elif suffix in (".dot", ".gv"):
            path.write_text(self.to_dot(), encoding="utf-8")
        else:
            raise ValueError(f"cannot tell the format from {path.name!r}; use .svg, .dot or .gv")
        return path

    def text(self) -> str:
        """A short, deterministic summary: counts, then one line per op."""
        return graph_text(self.graph, self.saved_bytes)

    def widget(self):
        """An ipywidgets HTML widget showing the SVG (for layouts with other widgets)."""
        return svg_widget(self.to_svg())

    def to_html(self, svg: str | None = None) -> str:
        """Self-contained interactive HTML (zoom, pan, fold groups, hover details) whose
        fallback, where scripts do not run, is the SVG (``svg``, default :meth:`to_svg`) as an
        image; see :mod:`gradnb.notebook.interactive`."""
        return interactive_html(self.to_svg() if svg is None else svg, self.graph, self.layout)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        # Renderers pick what they can show: the interactive HTML where scripts run, the SVG
        # on GitHub/nbviewer/nbval, the text summary in a terminal.
        svg = self.to_svg()
        return {"image/svg+xml": svg, "text/html": self.to_html(svg), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text().splitlines()[0]


def graph_text(graph: Graph, saved_bytes: int) -> str:
    """The text/plain form of a graph: counts, then ``Op(inputs) -> outputs`` lines (each
    distinct input once, as the drawing shows it)."""
    nodes = graph.ordered_nodes()
    ops = [n for n in nodes if n.kind == "op"]
    leaves = [n for n in nodes if n.kind in _LEAF_KINDS]
    outputs = [n for n in nodes if n.kind == "output"]
    head = (f"GraphView: {_count(len(ops), 'op')}, {_count(len(leaves), 'leaf', 'leaves')}, "
            f"{_count(len(outputs), 'output')}; {format_bytes(saved_bytes)} saved")
    inputs: dict[int, list[str]] = {}
    consumers: dict[int, list[str]] = {}
    for edge in graph.ordered_edges():
        if edge.kind != "data":
            continue
        inputs.setdefault(edge.dst, []).append(graph.nodes[edge.src].label)
        if graph.nodes[edge.dst].kind == "output":
            consumers.setdefault(edge.src, []).append(graph.nodes[edge.dst].label)
    lines = [head]
    for node in ops[:TEXT_OP_LINES]:
        args = ", ".join(inputs.get(node.id, []))
        named = ", ".join(consumers.get(node.id, []))
        result = f"{named} {node.sublabel}" if named else node.sublabel
        lines.append(f"  {node.label}({args}) -> {result}")
    if len(ops) > TEXT_OP_LINES:
        lines.append(f"  ... {len(ops) - TEXT_OP_LINES} more ops")
    return "\n".join(lines)


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _tensors(source) -> list:
    items = source if isinstance(source, (list, tuple)) else [source]
    bad = [type(t).__name__ for t in items if not is_tensor(t)]
    if bad:
        raise TypeError(f"GraphView draws tensors, a Trace or a Graph; got {bad[0]}")
    return list(items)
