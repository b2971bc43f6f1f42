"""``BackwardView``: the report ``%backward`` shows after a watched backward pass.

It holds the graph with the gradient's path highlighted, the ``.grad`` table of every leaf the
pass reached, and the memory the call gave back. All of it is formatted when the view is made,
so showing it again later shows the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from gradnb.notebook import torch_adapter
from gradnb.notebook.backward_run import BackwardRun
from gradnb.notebook.build import BuiltGraph
from gradnb.notebook.formatting import format_bytes
from gradnb.notebook.grad_table import GradTable
from gradnb.notebook.graph_view import GraphView
from gradnb.notebook.naming import Names
from gradnb.notebook.plotting import svg_image

__all__ = ["BackwardView"]


class BackwardView:
    """Graph with the gradient's path, the grad table of reached leaves, and freed memory.

    ``label`` is how the output is called in the report (the ``%backward`` expression).
    """

    def __init__(self, run: BackwardRun, namespace: Mapping[str, object], label: str,
                 *, show_saved: bool = True) -> None:
        self.run = run
        self.label = label
        names = Names(namespace)
        root_labels = {run.root: label} if run.root is not None else {}
        self.built: BuiltGraph = torch_adapter.build_graph_for(
            run.trace, names, show_saved=show_saved, root_labels=root_labels)
        self.path_ids = self._path_ids()
        self.built.graph.set_highlight(self.path_ids, "path")
        self.graph_view = GraphView(self.built.graph, title=f"backward({label})",
                                    saved_bytes=run.trace.saved_bytes)
        leaves = _in_graph_order(run)
        self.grads = GradTable(
            [(_leaf_name(t, names, i), t) for i, (t, _) in enumerate(leaves)],
            updates={_leaf_name(t, names, i): "accumulated" if acc else "fresh"
                     for i, (t, acc) in enumerate(leaves)},
        )

    def _path_ids(self) -> list[int]:
        """Boxes the gradient went through: every op that ran, the leaves it reached, and the
        named outputs on the way."""
        keys = {step.key for step in self.run.steps if step.key is not None}
        leaf_ids = {id(t) for t, _ in self.run.leaves}
        keys |= {leaf.key for leaf in self.run.trace.leaves if id(leaf.tensor()) in leaf_ids}
        built = self.built
        ids = {built.box_of[k] for k in keys if k in built.box_of}
        ids |= {box for (key, _), box in built.output_box.items() if key in keys}
        if self.run.root in built.output_box:
            ids.add(built.output_box[self.run.root])
        return sorted(ids)

    @property
    def ops_run(self) -> int:
        """How many backward nodes ran (not counting the leaves' AccumulateGrad)."""
        return len(self.run.steps)

    @property
    def nodes_run(self) -> int:
        """Every backward node that ran, the leaves' AccumulateGrad included (as ``%memory``
        counts them)."""
        report = self.run.report
        return report.nodes_executed if report is not None else self.ops_run

    def headline(self) -> str:
        """``backward(loss): 6 nodes ran (3 ops, 3 AccumulateGrad), 3 leaves reached``."""
        n, ops, m = self.nodes_run, self.ops_run, len(self.run.leaves)
        return (f"backward({self.label}): {n} node{'s' if n != 1 else ''} ran ({ops} "
                f"op{'s' if ops != 1 else ''}, {n - ops} AccumulateGrad), "
                f"{m} lea{'ves' if m != 1 else 'f'} reached")

    def memory_line(self) -> str:
        """Bytes this call freed, released but still referenced, and still retained."""
        report = self.run.report
        if report is None:
            return "memory: no report"
        return (f"memory: freed {format_bytes(report.freed_bytes)}; released but still "
                f"referenced {format_bytes(report.released_bytes)}; retained by the graph "
                f"{format_bytes(report.retained_bytes)}{getattr(report, 'note', '')}")

    def text(self) -> str:
        """The report as short, deterministic text."""
        return f"{self.headline()}\n{self.grads.text()}\n{self.memory_line()}"

    def to_html(self, graph_svg: str | None = None) -> str:
        """The report as HTML: headline, the graph (an SVG image: sanitizers keep it), the table,
        the memory line."""
        svg = self.graph_view.to_svg() if graph_svg is None else graph_svg
        return (
            '<div class="gradnb-backward">'
            f"<p><b>{escape(self.headline())}</b></p>"
            f'<div class="gradnb-graph-box">{svg_image(svg, "computation graph")}</div>'
            f"{self.grads.to_html()}"
            f'<p class="gradnb-memory">{escape(self.memory_line())}</p>'
            "</div>"
        )

    def report_html(self) -> str:
        """The report without the graph: headline, ``.grad`` table, memory line."""
        return (
            '<div class="gradnb-backward">'
            f"<p><b>{escape(self.headline())}</b></p>"
            f"{self.grads.to_html()}"
            f'<p class="gradnb-memory">{escape(self.memory_line())}</p>'
            "</div>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def _ipython_display_(self) -> None:
        # Two outputs: the graph as its own image (SVG, interactive HTML, text), then the
        # report. A notebook opened untrusted or rendered by a sanitizer (GitHub) then shows
        # the drawing as an image, never the labels of an inline SVG run together as text.
        from IPython.display import display

        display(self.graph_view)
        display({"text/html": self.report_html(), "text/plain": self.text()}, raw=True)

    def __repr__(self) -> str:
        return self.text()


def _in_graph_order(run: BackwardRun) -> list:
    """Reached leaves in the order the graph draws them (then any the trace did not see)."""
    order = {id(leaf.tensor()): leaf.key for leaf in run.trace.leaves}
    return sorted(run.leaves, key=lambda item: order.get(id(item[0]), len(order)))


def _leaf_name(tensor, names: Names, index: int) -> str:
    return names.of_tensor(tensor) or f"leaf {index}"
