"""``TraceDiff``: what changed between two traced runs of a cell (``%tracediff before after``).

Ops are matched in recording order by where they ran and what they are (module group and
op name), the way ``difflib`` matches lines: an op only in the second run is *added*, only in
the first *removed*, and a matched op whose outputs changed shape or dtype is *changed*.
Named leaves are matched by name; a leaf whose gradient differs (values, shape or dtype, as
fingerprinted when each view was made) is *changed* too.

The drawing is the second graph with its added and changed boxes marked, plus the removed
boxes of the first (dashed red) wired to the boxes they connected to.

>>> import gradnb
>>> from gradnb.notebook import GraphView
>>> w = gradnb.tensor([1.0, 2.0], requires_grad=True)
>>> with gradnb.autograd.graph_trace() as t1:
...     y = (w * 2).sum()
>>> with gradnb.autograd.graph_trace() as t2:
...     y = (w * 2).exp().sum()
>>> print(diff(GraphView(t1), GraphView(t2)).text().splitlines()[0])
TraceDiff: 2 ops -> 3 ops: 1 added, 0 removed, 0 changed; 0 gradients changed
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from html import escape

from gradnb.autograd.trace import OpRecord, Trace
from gradnb.notebook.build import describe
from gradnb.notebook.graph_view import GraphView
from gradnb.notebook.graphmodel import Graph, GraphNode

__all__ = ["TEXT_CHANGE_LINES", "Change", "TraceDiff", "diff"]

#: The text form lists at most this many changes, then says how many more there are.
TEXT_CHANGE_LINES = 20


@dataclass(frozen=True)
class Change:
    """One difference: ``kind`` is ``added``, ``removed``, ``changed`` or ``grad``."""

    kind: str
    what: str
    before: str = ""
    after: str = ""

    def line(self) -> str:
        """The change as one line of text."""
        mark = {"added": "+", "removed": "-", "changed": "~", "grad": "~"}[self.kind]
        if self.kind in ("changed", "grad"):
            return f"{mark} {self.what}: {self.before} -> {self.after}"
        return f"{mark} {self.what} {self.before or self.after}"


class TraceDiff:
    """The differences between two :class:`GraphView`\\ s of traced runs (``%%trace -o``)."""

    def __init__(self, before: GraphView | Trace, after: GraphView | Trace) -> None:
        self.before = _as_view(before, "before")
        self.after = _as_view(after, "after")
        self.changes: list[Change] = []
        self._matched: dict[int, int] = {}  # before op key -> after op key
        self._changed: set[int] = set()  # after op keys whose outputs changed
        self._match_ops()
        self._match_grads()
        self.graph = self._drawing()
        self.view = GraphView(self.graph, title="trace diff: before -> after",
                              saved_bytes=self.after.saved_bytes)

    # -- matching -------------------------------------------------------------------------------
    def _match_ops(self) -> None:
        old, new = self.before.trace.ops, self.after.trace.ops
        matcher = difflib.SequenceMatcher(None, [_op_key(self.before, op) for op in old],
                                          [_op_key(self.after, op) for op in new], autojunk=False)
        for tag, i0, i1, j0, j1 in matcher.get_opcodes():
            if tag == "equal":
                for a, b in zip(old[i0:i1], new[j0:j1]):
                    self._matched[a.key] = b.key
                    if a.outputs != b.outputs:
                        self._changed.add(b.key)
                        self.changes.append(Change("changed", _where(self.after, b),
                                                   _outputs(a), _outputs(b)))
                continue
            self.changes += [Change("removed", _where(self.before, a), _outputs(a))
                             for a in old[i0:i1]]
            self.changes += [Change("added", _where(self.after, b), after=_outputs(b))
                             for b in new[j0:j1]]

    def _match_grads(self) -> None:
        for name, grad in self.after.grads.items():
            if name not in self.before.grads:
                continue
            old = self.before.grads[name]
            if (old is None) != (grad is None) or (old is not None and old != grad):
                self.changes.append(Change("grad", f"{name}.grad",
                                           old.describe() if old else "None",
                                           grad.describe() if grad else "None"))

    # -- drawing --------------------------------------------------------------------------------
    def _drawing(self) -> Graph:
        graph = self.after.graph.copy()
        graph.clear_highlights()
        before_built, after_built = self.before.built, self.after.built
        matched_after = set(self._matched.values())
        for op in self.after.trace.ops:
            if op.key not in matched_after:
                graph.nodes[after_built.box_of[op.key]].highlight = "added"
        for key in self._changed:
            graph.nodes[after_built.box_of[key]].highlight = "changed"
        grads = {c.what[: -len(".grad")] for c in self.changes if c.kind == "grad"}
        for node in graph.nodes.values():
            if node.kind == "leaf_grad" and node.label in grads:
                node.highlight = "changed"
        # Removed boxes of the first graph join the drawing, with fresh ids after the others.
        box_in_after = {before_built.box_of[a]: after_built.box_of[b]
                        for a, b in self._matched.items()}
        labels = {n.label: n.id for n in graph.nodes.values() if n.kind in ("leaf", "leaf_grad")}
        for node in self.before.graph.nodes.values():
            if node.kind in ("leaf", "leaf_grad") and node.label in labels:
                box_in_after.setdefault(node.id, labels[node.label])
        removed_keys = {op.key for op in self.before.trace.ops if op.key not in self._matched}
        next_id = max(graph.nodes, default=-1) + 1
        for key in sorted(removed_keys):
            old = self.before.graph.nodes[before_built.box_of[key]]
            graph.add_node(GraphNode(next_id, old.kind, old.label, old.sublabel,
                                     f"removed: {old.detail}", "removed", old.group))
            box_in_after[old.id] = next_id
            next_id += 1
        for edge in self.before.graph.ordered_edges():
            src, dst = box_in_after.get(edge.src), box_in_after.get(edge.dst)
            touches_removed = any(before_built.box_of.get(k) in (edge.src, edge.dst)
                                  for k in removed_keys)
            if touches_removed and src is not None and dst is not None and src != dst:
                graph.add_edge(src, dst, edge.kind)
        return graph

    # -- forms ----------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """How many ops were added, removed and changed, and how many gradients changed."""
        kinds = [c.kind for c in self.changes]
        return {k: kinds.count(k) for k in ("added", "removed", "changed", "grad")}

    def headline(self) -> str:
        """``TraceDiff: 5 ops -> 7 ops: 2 added, 0 removed, 1 changed; 1 gradient changed``."""
        c = self.counts()
        n_old, n_new = len(self.before.trace.ops), len(self.after.trace.ops)
        grads = f"{c['grad']} gradient{'s' if c['grad'] != 1 else ''} changed"
        return (f"TraceDiff: {n_old} op{'s' if n_old != 1 else ''} -> {n_new} "
                f"op{'s' if n_new != 1 else ''}: {c['added']} added, {c['removed']} removed, "
                f"{c['changed']} changed; {grads}")

    def text(self) -> str:
        """Headline, then one line per change (``+`` added, ``-`` removed, ``~`` changed)."""
        lines = [self.headline()]
        lines += [f"  {c.line()}" for c in self.changes[:TEXT_CHANGE_LINES]]
        if len(self.changes) > TEXT_CHANGE_LINES:
            lines.append(f"  ... {len(self.changes) - TEXT_CHANGE_LINES} more changes")
        if not self.changes:
            lines.append("  the two traces ran the same ops with the same shapes and gradients")
        return "\n".join(lines)

    def to_svg(self) -> str:
        """The drawing (the second graph, marked) as SVG."""
        return self.view.to_svg()

    def to_html(self, svg: str | None = None) -> str:
        """Headline, the interactive drawing (of ``svg``, default :meth:`to_svg`) and the list
        of changes."""
        items = "".join(f"<li><code>{escape(c.line())}</code></li>" for c in self.changes)
        return (f'<div class="gradnb-trace-diff"><p><b>{escape(self.headline())}</b></p>'
                f"{self.view.to_html(svg)}<ul>{items}</ul></div>")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        svg = self.to_svg()
        return {"image/svg+xml": svg, "text/html": self.to_html(svg), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


def diff(before: GraphView | Trace, after: GraphView | Trace) -> TraceDiff:
    """The :class:`TraceDiff` of two traced runs: ``diff(before, after)``."""
    return TraceDiff(before, after)


def _as_view(value: GraphView | Trace, which: str) -> GraphView:
    if isinstance(value, Trace):
        return GraphView(value, namespace={})
    if isinstance(value, GraphView) and value.trace is not None:
        return value
    raise TypeError(f"diff: {which} must be a traced GraphView (from %%trace -o NAME) or a "
                    f"Trace, got {type(value).__name__}")


def _op_key(view: GraphView, op: OpRecord) -> tuple:
    return (view.graph.nodes[view.built.box_of[op.key]].group, op.name)


def _where(view: GraphView, op: OpRecord) -> str:
    group = view.graph.nodes[view.built.box_of[op.key]].group
    return f"{op.name} in {group[-1]}" if group else op.name


def _outputs(op: OpRecord) -> str:
    return ", ".join(describe(shape, dtype) for shape, dtype in op.outputs)
