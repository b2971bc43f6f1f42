"""Draw a :class:`~.records.TorchTrace` as the toolkit's graph model: the shared builder lays
out its records, then each op box learns the module that ran it and each tensor box its device
when that is not the CPU."""

from __future__ import annotations

from collections.abc import Mapping

from gradnb.notebook.build import BuiltGraph, build_graph
from gradnb.notebook.naming import Names
from gradnb.notebook.torch_adapter.records import TorchOpRecord, TorchTrace


def build_torch_graph(
    trace: TorchTrace,
    names: Names,
    *,
    show_saved: bool = True,
    root_labels: Mapping[tuple[int, int], str] | None = None,
) -> BuiltGraph:
    """:func:`~gradnb.notebook.build.build_graph` plus module groups and devices."""
    built = build_graph(trace, names, show_saved=show_saved, root_labels=root_labels)
    graph = built.graph
    for key, box_id in built.box_of.items():
        record = trace.record(key)
        node = graph.nodes[box_id]
        device = getattr(record, "device", "cpu")
        if device != "cpu":
            node.sublabel = f"{node.sublabel} {device}".strip()
            node.detail = f"{node.detail} on {device}"
        if isinstance(record, TorchOpRecord):
            node.group = module_label(record.modules, names)
    for (key, _), box_id in built.output_box.items():
        device = trace.record(key).device
        if device != "cpu":
            graph.nodes[box_id].sublabel += f" {device}"
    return built


def module_label(modules: tuple, names: Names) -> str:
    """``model.0 (Linear)`` for the innermost module that ran an op; ``Linear`` when the
    namespace has no name for it; empty when no module was running."""
    for ref in reversed(modules):
        module = ref()
        if module is None:
            continue
        name = names.of_module(module)
        kind = type(module).__name__
        return f"{name} ({kind})" if name else kind
    return ""
