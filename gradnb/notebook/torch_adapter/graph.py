"""Draw a :class:`~.records.TorchTrace` as the toolkit's graph model: the shared builder lays
out its records (module groups included), then each tensor box learns its device when that is
not the CPU."""

from __future__ import annotations

from collections.abc import Mapping

from gradnb.notebook.build import BuiltGraph, build_graph
from gradnb.notebook.naming import Names
from gradnb.notebook.torch_adapter.records import TorchTrace

__all__ = ["build_torch_graph"]


def build_torch_graph(
    trace: TorchTrace,
    names: Names,
    *,
    show_saved: bool = True,
    root_labels: Mapping[tuple[int, int], str] | None = None,
) -> BuiltGraph:
    """:func:`~gradnb.notebook.build.build_graph`, with devices other than the CPU shown."""
    built = build_graph(trace, names, show_saved=show_saved, root_labels=root_labels)
    graph = built.graph
    boxes = [*built.box_of.items(), *((key, box) for (key, _), box in built.output_box.items())]
    for key, box_id in boxes:
        device = getattr(trace.record(key), "device", "cpu")
        if device != "cpu":
            node = graph.nodes[box_id]
            node.sublabel = f"{node.sublabel} {device}".strip()
            node.detail = f"{node.detail}\ndevice: {device}"
    return built
