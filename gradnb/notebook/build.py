"""Turn a :class:`~gradnb.autograd.trace.Trace` into the drawable :class:`Graph` model.

What each record becomes:

- a leaf record: a ``leaf_grad`` box (requires grad) or a ``leaf`` box (a constant the graph
  saved), labelled with the user's name for it;
- an op record: an ``op`` box labelled as ``grad_fn`` prints it (``MulBackward0``) with its
  output's shape and dtype;
- an op output that the namespace names (``y``, ``loss``): an ``output`` box under the op,
  through which the output flows on to its consumers;
- the buffers an op saved for backward: one ``saved`` box above the op, naming what was saved
  and how many bytes it holds (and whether backward already freed it).

Graph ids are handed out in trace order, so the same program gives the same ids (and SVG).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from gradnb.autograd.trace import LeafRecord, OpRecord, SavedRecord, Trace
from gradnb.notebook.explain.cut_edges import annotate
from gradnb.notebook.formatting import format_bytes, format_shape, format_values
from gradnb.notebook.graphmodel import Graph, GraphNode
from gradnb.notebook.groups import assign_groups
from gradnb.notebook.naming import Names
from gradnb.notebook.tensors import itemsize, values

__all__ = ["ROOT_LABEL", "BuiltGraph", "build_graph", "describe"]

#: Shown for the root of ``%backward`` when the expression is not a plain name.
ROOT_LABEL = "output"


@dataclass
class BuiltGraph:
    """The graph plus where each trace record ended up in it."""

    graph: Graph
    #: trace record key -> id of its box.
    box_of: dict[int, int] = field(default_factory=dict)
    #: (op key, output nr) -> id of the named output box.
    output_box: dict[tuple[int, int], int] = field(default_factory=dict)
    #: trace record key -> display name (leaves and named ops).
    label_of: dict[int, str] = field(default_factory=dict)
    #: (record key, output nr) of a saved buffer -> id of the saved box that draws it.
    saved_box_of: dict[tuple[int, int], int] = field(default_factory=dict)


def describe(shape, dtype: str) -> str:
    """The sublabel of a tensor: ``(2, 3) float32``."""
    return f"{format_shape(shape)} {dtype}".strip()


def build_graph(
    trace: Trace,
    names: Names,
    *,
    show_saved: bool = True,
    root_labels: Mapping[tuple[int, int], str] | None = None,
) -> BuiltGraph:
    """Lay the trace's records out as graph boxes and edges (see the module docstring).

    ``root_labels`` names op outputs that the namespace does not (``%backward``'s expression).
    """
    built = BuiltGraph(Graph())
    graph = built.graph
    next_id = iter(range(1 << 62))
    root_labels = dict(root_labels or {})

    for record in _records_in_order(trace):
        if isinstance(record, LeafRecord):
            node = _leaf_box(next(next_id), record, names)
            built.label_of[record.key] = node.label
            graph.add_node(node)
            built.box_of[record.key] = node.id
            continue
        op_box = graph.add_node(_op_box(next(next_id), record))
        built.box_of[record.key] = op_box.id
        for src_key, nr in record.inputs:
            graph.add_edge(_source_box(built, src_key, nr), op_box.id)
        for saved in record.saved:  # constants reach the op only as saved inputs
            src = saved.source
            if src is not None and src not in record.inputs and _is_constant(trace, src[0]):
                graph.add_edge(_source_box(built, *src), op_box.id)
        if show_saved and record.saved:
            # A buffer saved by several ops (tanh's output, kept by TanhBackward0 and by the
            # next matmul) is one box with an edge to each of them, as it is one allocation.
            fresh = [s for s in record.saved
                     if s.source is None or s.source not in built.saved_box_of]
            for saved in record.saved:
                if saved.source in built.saved_box_of:
                    graph.add_edge(built.saved_box_of[saved.source], op_box.id, "saved")
            if fresh:
                saved_box = graph.add_node(_saved_box(next(next_id), record, fresh, built, trace))
                graph.add_edge(saved_box.id, op_box.id, "saved")
                for saved in fresh:
                    if saved.source is not None:
                        built.saved_box_of[saved.source] = saved_box.id
        for nr, (shape, dtype) in enumerate(record.outputs):
            label = _output_name(record, nr, names) or root_labels.get((record.key, nr))
            if label is None:
                continue
            out = graph.add_node(GraphNode(next(next_id), "output", label, describe(shape, dtype),
                                           f"{label}: {describe(shape, dtype)} from {record.name}"))
            graph.add_edge(op_box.id, out.id)
            built.output_box[(record.key, nr)] = out.id
            built.label_of.setdefault(record.key, label)
    assign_groups(graph, trace, names, built.box_of, built.output_box)
    annotate(built, trace)  # source lines and cut edges, where the watcher saw them
    return built


def _records_in_order(trace: Trace) -> list[OpRecord | LeafRecord]:
    records = [*trace.leaves, *trace.ops]
    return sorted(records, key=lambda r: r.key)


def _is_constant(trace: Trace, key: int) -> bool:
    record = trace.record(key)
    return isinstance(record, LeafRecord) and not record.requires_grad


def _source_box(built: BuiltGraph, key: int, nr: int) -> int:
    """Data leaves a named output's box when it has one, else the producing box."""
    return built.output_box.get((key, nr), built.box_of[key])


def _leaf_box(node_id: int, record: LeafRecord, names: Names) -> GraphNode:
    sub = describe(record.shape, record.dtype)
    if record.horizon:
        return GraphNode(node_id, "op", record.horizon, sub,
                         f"{record.horizon} (recorded before the trace began)")
    name = names.of_tensor(record.tensor())
    kind = "leaf_grad" if record.requires_grad else "leaf"
    label = name or ("parameter" if record.requires_grad else "constant")
    what = "leaf, requires grad" if record.requires_grad else "leaf, no grad"
    detail = f"{label}: {sub} ({what}), {format_bytes(record.nbytes)}"
    grad = getattr(record.tensor(), "grad", None) if record.requires_grad else None
    if grad is not None:
        detail += f"\ngrad: {format_values(values(grad))}"
    return GraphNode(node_id, kind, label, sub, detail)


def _op_box(node_id: int, record: OpRecord) -> GraphNode:
    sub = describe(*record.outputs[0]) if len(record.outputs) == 1 else (
        f"{len(record.outputs)} outputs")
    outputs = "\n".join(f"output: {describe(shape, dtype)}, {format_bytes(_nbytes(shape, dtype))}"
                        for shape, dtype in record.outputs)
    return GraphNode(node_id, "op", record.name, sub, f"{record.name}\n{outputs}")


def _saved_box(node_id: int, record: OpRecord, saved: list[SavedRecord], built: BuiltGraph,
               trace: Trace) -> GraphNode:
    parts = [_saved_label(s, record, built, trace) for s in saved]
    freed = ", released" if record.released else ""
    nbytes = sum(s.nbytes for s in saved)
    detail = "\n".join(
        f"{part}: {describe(s.shape, s.dtype)}, {format_bytes(s.nbytes)}"
        for part, s in zip(parts, saved)
    )
    return GraphNode(node_id, "saved", "saved " + ", ".join(parts),
                     format_bytes(nbytes) + freed,
                     f"saved by {record.name} for backward{freed}\n{detail}")


def _saved_label(saved: SavedRecord, record: OpRecord, built: BuiltGraph, trace: Trace) -> str:
    """What a saved buffer is: ``result`` (the op's own output), the user's name for it, or
    the op that made it (``TanhBackward0 out``); ``constant`` for a value the op kept."""
    src = saved.source
    if src is None:
        return "constant"
    if src[0] == record.key:
        return "result"
    if src[0] in built.label_of:
        return built.label_of[src[0]]
    producer = trace.record(src[0])
    if isinstance(producer, OpRecord):
        suffix = f" out{src[1]}" if len(producer.outputs) > 1 else " out"
        return producer.name + suffix
    return producer.horizon or "constant"


def _output_name(record: OpRecord, nr: int, names: Names) -> str | None:
    if nr < len(record.output_tensors) and record.output_tensors[nr] is not None:
        name = names.of_tensor(record.output_tensors[nr]())
        if name is not None:
            return name
    node = record.node()
    return names.of_output(node, nr) if node is not None else None


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    return int(np.prod(shape, dtype=np.int64)) * itemsize(dtype) if dtype else 0
