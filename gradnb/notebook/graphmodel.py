"""An engine-independent model of a computation graph as the notebook toolkit draws it.

The tracer turns tensors and backward nodes into :class:`GraphNode` objects and their
connections into :class:`GraphEdge` objects; layout and renderers only ever see this model,
so they never touch the engine (and never keep a tensor alive).

Ids are stable integers handed out by the caller's counter, never ``id()``, so the same
program draws the same picture in every run.

>>> g = Graph()
>>> w = g.add_node(GraphNode(0, "leaf_grad", "w", "(3,) float32"))
>>> mul = g.add_node(GraphNode(1, "op", "MulBackward0"))
>>> g.add_edge(0, 1)
GraphEdge(src=0, dst=1, kind='data')
>>> [n.label for n in g.ordered_nodes()]
['w', 'MulBackward0']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["EDGE_KINDS", "HIGHLIGHTS", "NODE_KINDS", "Graph", "GraphEdge", "GraphNode"]

#: What a node stands for. ``summary`` nodes are made only by the layout when it collapses
#: a big graph; they are the only nodes allowed a negative id.
NODE_KINDS: tuple[str, ...] = (
    "leaf_grad",  # leaf tensor that requires grad (a parameter, an input being studied)
    "leaf",  # leaf that does not require grad (a constant input)
    "op",  # a backward node such as MulBackward0
    "saved",  # a tensor an op saved for backward; its bytes go in the sublabel
    "output",  # a named non-leaf tensor such as ``loss``
    "accumulate",  # AccumulateGrad, which writes a leaf's ``.grad``
    "cut",  # where a value left the graph (``detach()``, ``.item()``, ``no_grad``) or was edited
    "summary",  # stands for many nodes hidden by collapsing
)

#: ``data`` carries values forward; ``saved`` ties a saved tensor to the op that keeps it;
#: ``cut`` is a value that left the graph (drawn dashed: no gradient flows back along it).
EDGE_KINDS: tuple[str, ...] = ("data", "saved", "cut")

#: How the ``%backward`` view marks a node: the gradient flowed through it (``path``), it is
#: the node being run in step-through (``active``), or step-through already ran it (``done``);
#: how a diff of two traces marks it: new in the second (``added``), only in the first
#: (``removed``), or present in both with another shape, dtype or gradient (``changed``).
HIGHLIGHTS: tuple[str | None, ...] = (None, "path", "active", "done", "added", "removed",
                                      "changed")


@dataclass(slots=True)
class GraphNode:
    """One box in the drawing.

    ``label`` is the headline (a variable name such as ``w`` or an op name such as
    ``MulBackward0``), ``sublabel`` a second line (shape and dtype, or saved bytes) and
    ``detail`` the tooltip (one fact per line). ``highlight`` is one of :data:`HIGHLIGHTS`.
    ``group`` names the module calls the node ran in, outermost first (``("model",
    "model.fc1")``); the interactive view folds a group into one box.
    """

    id: int
    kind: str
    label: str
    sublabel: str = ""
    detail: str = ""
    highlight: str | None = None
    group: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in NODE_KINDS:
            raise ValueError(f"unknown node kind {self.kind!r}; expected one of {NODE_KINDS}")
        if self.highlight not in HIGHLIGHTS:
            raise ValueError(f"unknown highlight {self.highlight!r}; expected one of {HIGHLIGHTS}")
        if self.id < 0 and self.kind != "summary":
            raise ValueError(f"node id {self.id} is negative; negative ids are reserved")


@dataclass(frozen=True, slots=True, order=True)
class GraphEdge:
    """A connection in data-flow direction: ``src`` is an input of ``dst``."""

    src: int
    dst: int
    kind: str = "data"

    def __post_init__(self) -> None:
        if self.kind not in EDGE_KINDS:
            raise ValueError(f"unknown edge kind {self.kind!r}; expected one of {EDGE_KINDS}")


class Graph:
    """Nodes by id plus a set of edges, with deterministic iteration.

    Adding an edge twice keeps one (``a + a`` draws a single arrow). Iterate with
    :meth:`ordered_nodes` and :meth:`ordered_edges`, which sort by id, so drawings do not
    depend on the order the tracer happened to visit things in.
    """

    def __init__(self, nodes: Iterable[GraphNode] = (), edges: Iterable[GraphEdge] = ()) -> None:
        self.nodes: dict[int, GraphNode] = {}
        self._edges: dict[GraphEdge, None] = {}
        for node in nodes:
            self.add_node(node)
        for edge in edges:
            self.add_edge(edge.src, edge.dst, edge.kind)

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __repr__(self) -> str:
        return f"Graph({len(self.nodes)} nodes, {len(self._edges)} edges)"

    def add_node(self, node: GraphNode) -> GraphNode:
        """Add ``node`` and return it; an id may be used once."""
        if node.id in self.nodes:
            raise ValueError(f"duplicate node id {node.id}")
        self.nodes[node.id] = node
        return node

    def add_edge(self, src: int, dst: int, kind: str = "data") -> GraphEdge:
        """Connect two existing nodes (``src`` feeds ``dst``) and return the edge."""
        for end in (src, dst):
            if end not in self.nodes:
                raise KeyError(f"edge endpoint {end} is not a node of this graph")
        if src == dst:
            raise ValueError(f"edge {src} -> {dst} is a self-loop; graphs are acyclic")
        edge = GraphEdge(src, dst, kind)
        self._edges[edge] = None
        return edge

    @property
    def edges(self) -> list[GraphEdge]:
        """Edges in insertion order."""
        return list(self._edges)

    def node(self, node_id: int) -> GraphNode:
        """The node with id ``node_id``."""
        return self.nodes[node_id]

    def ordered_nodes(self) -> list[GraphNode]:
        """Nodes sorted by id."""
        return [self.nodes[i] for i in sorted(self.nodes)]

    def ordered_edges(self) -> list[GraphEdge]:
        """Edges sorted by (src, dst, kind)."""
        return sorted(self._edges)

    def set_highlight(self, node_ids: Iterable[int], state: str | None) -> None:
        """Mark ``node_ids`` with ``state`` (one of :data:`HIGHLIGHTS`)."""
        if state not in HIGHLIGHTS:
            raise ValueError(f"unknown highlight {state!r}; expected one of {HIGHLIGHTS}")
        for node_id in node_ids:
            self.nodes[node_id].highlight = state

    def clear_highlights(self) -> None:
        """Remove every highlight."""
        for node in self.nodes.values():
            node.highlight = None

    def copy(self) -> Graph:
        """An independent copy (highlights can then change without touching this graph)."""
        nodes = (
            GraphNode(n.id, n.kind, n.label, n.sublabel, n.detail, n.highlight, n.group)
            for n in self.nodes.values()
        )
        return Graph(nodes, self._edges)
