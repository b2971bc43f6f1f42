"""Group a drawn graph's boxes by the ``nn.Module`` call that made them (``model.fc1``).

A trace records, for every op, the module calls running when it was recorded
(:attr:`~gradnb.autograd.trace.OpRecord.scope`). Here each call gets a readable label: the
user's name for the module when the namespace has one (``model``, ``model.fc1``), else the
enclosing call's label plus the attribute name, else the class name. A module called twice
gets ``#2`` on its second call, so every group label names one call.

Boxes inherit their op's groups: the op itself, the saved-tensor box above it and the named
output box below it. A parameter leaf joins the group of the module that owns it
(``model.fc1.weight`` joins ``model.fc1``), so folding a layer folds its weights too.
"""

from __future__ import annotations

from collections import Counter

from gradnb.autograd.trace import ModuleCall, Trace
from gradnb.notebook.graphmodel import Graph
from gradnb.notebook.naming import Names

__all__ = ["assign_groups", "call_labels"]


def call_labels(trace: Trace, names: Names) -> dict[int, str]:
    """A label for every module call in ``trace`` (keyed by :attr:`ModuleCall.call`)."""
    labels: dict[int, str] = {}
    uses: Counter[str] = Counter()
    for op in trace.ops:
        parent = ""
        for call in op.scope:
            if call.call not in labels:
                label = _base_label(call, parent, names)
                uses[label] += 1
                labels[call.call] = label if uses[label] == 1 else f"{label} #{uses[label]}"
            parent = labels[call.call]
    return labels


def _base_label(call: ModuleCall, parent: str, names: Names) -> str:
    module = call.module()
    named = names.of_module(module) if module is not None else None
    if named is not None:
        return named
    return f"{parent}.{call.name}" if parent else call.name


def assign_groups(graph: Graph, trace: Trace, names: Names, box_of: dict[int, int],
                  output_box: dict[tuple[int, int], int]) -> None:
    """Set ``group`` on the boxes of ``graph`` built from ``trace`` (see the module docstring).

    ``box_of`` and ``output_box`` say where each record went (as in ``BuiltGraph``).
    """
    labels = call_labels(trace, names)
    if not labels:
        return
    path_of_op: dict[int, tuple[str, ...]] = {}
    for op in trace.ops:
        path = tuple(labels[call.call] for call in op.scope)
        path_of_op[op.key] = path
        if path and op.key in box_of:
            graph.nodes[box_of[op.key]].group = path
    for (key, _), box in output_box.items():
        graph.nodes[box].group = path_of_op.get(key, ())
    placed: set[int] = set()
    for edge in graph.edges:  # a buffer saved by several ops sits with the first of them
        if edge.kind == "saved" and edge.src not in placed:
            placed.add(edge.src)
            graph.nodes[edge.src].group = graph.nodes[edge.dst].group
    path_of_label = {path[-1]: path for path in path_of_op.values() if path}
    for leaf in trace.leaves:
        node = graph.nodes.get(box_of.get(leaf.key, -1))
        if node is None or node.kind != "leaf_grad" or "." not in node.label:
            continue
        owner = node.label.rsplit(".", 1)[0]
        node.group = path_of_label.get(owner, ())
