"""Put what the watcher saw into a built graph: source lines and dashed cut edges.

Every op box whose node was created while watched gets its line in the tooltip
(``MulBackward0 -> (3,) float32, created at line 1: h = x * 3``). Every recorded cut whose value
came from a box of this graph, or whose result is a constant the graph uses, becomes a ``cut``
box (``detach()`` with its line) joined by dashed ``cut`` edges: from the box the value left,
and on to the constant it became. No gradient flows back along them, which is the point.
"""

from __future__ import annotations

from gradnb.autograd.trace import OpRecord, Trace
from gradnb.notebook.explain.watcher import Cut, watcher
from gradnb.notebook.graphmodel import GraphNode

__all__ = ["annotate"]


def annotate(built, trace: Trace) -> None:
    """Add source lines to ``built``'s op boxes and draw the watched cuts (see module doc)."""
    watch = watcher()
    graph = built.graph
    for record in trace.ops:
        box = built.box_of.get(record.key)
        where = watch.where_of_seq(record.seq)
        if box is not None and where is not None:
            graph.nodes[box].detail += f", created at {_place(where)}"
    constants = {id(leaf.tensor()): leaf.key for leaf in trace.leaves
                 if not leaf.requires_grad and leaf.tensor() is not None}
    next_id = max(graph.nodes, default=-1) + 1
    for cut in list(watch.cuts):
        source, from_op = _source_box(built, trace, cut)
        result = cut.result() if cut.result is not None else None
        target = built.box_of.get(constants.get(id(result))) if result is not None else None
        if target is None and not from_op:
            continue  # a leaf's .data/.detach() that this graph does not use is not a cut here
        box = graph.add_node(_cut_box(next_id, cut))
        next_id += 1
        if source is not None:
            graph.add_edge(source, box.id, "cut")
        if target is not None:
            graph.add_edge(box.id, target, "cut")


def _source_box(built, trace: Trace, cut: Cut) -> tuple[int | None, bool]:
    """The box the value left from, and whether it is an op (not a leaf)."""
    if cut.source_leaf is not None:
        leaf = cut.source_leaf()
        key = next((r.key for r in trace.leaves if leaf is not None and r.tensor() is leaf),
                   None)
    else:
        key = trace.key_of_seq(cut.source_seq) if cut.source_seq is not None else None
    if key is None:
        return None, False
    if isinstance(trace.record(key), OpRecord):
        named = [box for (k, _), box in built.output_box.items() if k == key]
        return (named[0] if named else built.box_of.get(key)), True
    return built.box_of.get(key), False


def _cut_box(node_id: int, cut: Cut) -> GraphNode:
    detail = f"{cut.how}: the value left the graph here; no gradient flows back"
    if cut.where is not None:
        detail += f" ({_place(cut.where)})"
    return GraphNode(node_id, "cut", cut.how, cut.where.short() if cut.where else "", detail)


def _place(where) -> str:
    """``line 2: h = x * 2``: drawings name the line and its code, not the cell's number (which
    depends on how often cells ran), so a stored drawing reads the same on every run."""
    source = where.source()
    return f"{where.short()}: {source}" if source else where.short()
