"""The in-place error drawn: which saved tensor, which node saved it, which write changed it.

PyTorch's message ("one of the variables needed for gradient computation has been modified by
an inplace operation: [...] is at version 1; expected version 0") gives only version numbers.
:class:`InplaceErrorView` finds the node whose saved tensor's version moved on (walking the
graph newest node first, the order backward meets them), and draws the graph with that node
marked, its saved box, and the in-place write as a ``cut`` box with its line (from the watcher,
when the write ran watched) joined by dashed edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from gradnb._core.graph import AccumulateGrad
from gradnb.autograd.trace import Trace
from gradnb.notebook.build import build_graph, describe
from gradnb.notebook.explain.notes import short_name
from gradnb.notebook.explain.watcher import Write, watcher
from gradnb.notebook.explain.where import Where
from gradnb.notebook.graph_view import GraphView
from gradnb.notebook.graphmodel import GraphNode
from gradnb.notebook.naming import Names

__all__ = ["INPLACE_MESSAGE", "Culprit", "InplaceErrorView", "find_culprit", "is_inplace_error"]

#: The part of PyTorch's message that identifies the error.
INPLACE_MESSAGE = "modified by an inplace operation"


def is_inplace_error(error: BaseException) -> bool:
    """Whether ``error`` is autograd's "modified by an inplace operation" error."""
    return isinstance(error, RuntimeError) and INPLACE_MESSAGE in str(error)


@dataclass
class Culprit:
    """The saved tensor a write invalidated, the node that saved it, and the writes."""

    node: object
    tensor: object  # the saved input tensor, or None for a saved output
    shape: tuple[int, ...]
    dtype: str
    saved_version: int
    version: int
    saved_where: Where | None
    writes: list[Write]
    #: the version counter the saved tensor shares with its views and aliases.
    counter: list


def find_culprit(root_nodes) -> Culprit | None:
    """The node (newest first, behind ``root_nodes``) holding a saved tensor whose version
    moved on, or None."""
    nodes = []
    seen = set()
    stack = [n for n in root_nodes if n is not None]
    while stack:
        node = stack.pop()
        seq = node._sequence_nr()
        if seq in seen or type(node) is AccumulateGrad:
            continue
        seen.add(seq)
        nodes.append(node)
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    watch = watcher()
    for node in sorted(nodes, key=lambda n: -n._sequence_nr()):
        stale = node.stale_saved()
        if stale is not None:
            t, shape, dtype, saved_version, counter = stale
            return Culprit(node, t, tuple(shape), dtype.name, saved_version, counter[0],
                           watch.where_of(node), watch.writes_to(counter, saved_version), counter)
    return None


class InplaceErrorView:
    """The graph of ``trace`` with the in-place culprit behind ``root_nodes`` marked.

    ``%backward`` passes a snapshot of its output's graph and its root; ``%%trace`` its
    recording and the nodes it recorded (autograd checks versions before the pass starts, so
    the failing pass's roots are not known there: the newest node with a stale saved tensor
    is the one it tripped on).
    """

    def __init__(self, trace: Trace, root_nodes, error: BaseException,
                 namespace: Mapping[str, object], label: str = "output") -> None:
        self.error = error
        self.label = label
        self.culprit = find_culprit(root_nodes)
        names = Names(namespace)
        built = build_graph(trace, names)
        graph = built.graph
        self.saved_name = "a saved tensor"
        culprit = self.culprit
        if culprit is not None:
            key = trace.key_of(culprit.node)
            # The saved tensor, or the variable that still shares its version counter (an
            # output written in place, ``y.mul_(2)``, is that same ``y``).
            sharing = [n for n, t in names.tensors() if t._version_counter is culprit.counter]
            if culprit.tensor is not None and names.of_tensor(culprit.tensor):
                self.saved_name = names.of_tensor(culprit.tensor)
            elif sharing:
                self.saved_name = sharing[0]
            else:
                self.saved_name = f"the result of {short_name(culprit.node)}"
            op_box = built.box_of.get(key)
            if op_box is not None:
                graph.set_highlight([op_box], "active")
            saved_box = next((e.src for e in graph.edges
                              if e.kind == "saved" and e.dst == op_box), None)
            if saved_box is not None:
                graph.set_highlight([saved_box], "path")
            target = saved_box if saved_box is not None else op_box
            next_id = max(graph.nodes, default=-1) + 1
            for write in culprit.writes or [None]:
                op = write.op if write is not None else "in-place write"
                sub = write.where.short() if write is not None and write.where else (
                    f"version {culprit.saved_version} -> {culprit.version}")
                box = graph.add_node(GraphNode(next_id, "cut", op, sub,
                                               f"{op} wrote {self.saved_name} in place ({sub})"))
                next_id += 1
                if target is not None:
                    graph.add_edge(box.id, target, "cut")
        self.graph_view = GraphView(graph, title=f"in-place error in backward({label})")

    def headline(self) -> str:
        """One line: what was saved, by which node, and what modified it."""
        c = self.culprit
        if c is None:
            return f"backward({self.label}) failed: a saved tensor was modified in place"
        saved_at = f" at {c.saved_where}" if c.saved_where else ""
        return (f"in-place error: {self.saved_name} ({describe(c.shape, c.dtype)}) was saved by "
                f"{short_name(c.node)}{saved_at} and then modified in place by "
                f"{self._writes_text()} (version {c.saved_version} -> {c.version})")

    def _writes_text(self) -> str:
        writes = self.culprit.writes if self.culprit else []
        if not writes:
            return "an in-place op (run it watched, e.g. in %%trace, to see which line)"
        return ", then ".join(f"{w.op}" + (f" at {w.where}" if w.where else "") for w in writes)

    def fix(self) -> str:
        """How to avoid the error."""
        return ("use the out-of-place form (y = y * 2 instead of y.mul_(2) or y *= 2), or "
                "clone() the tensor before changing it")

    def text(self) -> str:
        """Headline, the engine's message (first line) and the fix."""
        first = str(self.error).splitlines()[0] if str(self.error) else ""
        return (f"{self.headline()}\n  {type(self.error).__name__}: {first}\n"
                f"  fix: {self.fix()}")

    def to_html(self) -> str:
        """Headline, the graph (the interactive HTML form, an image where scripts do not run:
        sanitizing renderers strip inline SVG) and the fix."""
        return ('<div class="gradnb-inplace">'
                f"<p><b>{escape(self.headline())}</b></p>"
                f'<div class="gradnb-graph-box">{self.graph_view.to_html()}</div>'
                f"<p><b>fix:</b> {escape(self.fix())}</p></div>")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()
