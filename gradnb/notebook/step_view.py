"""``StepThrough``: play a recorded backward pass node by node.

Frame ``i`` (for each node that ran, in the engine's order) marks that node ``active``, the
nodes before it ``done``, and lists the gradients that flowed into it and those it sent on.
A last frame marks the leaves whose ``.grad`` the pass wrote. The live form is an ipywidgets
``Play`` button and slider over the frames; the static form lists every step in a table
under the report, so a saved notebook still tells the whole story.
"""

from __future__ import annotations

from html import escape

from gradnb.notebook.backward_run import Step
from gradnb.notebook.backward_view import BackwardView
from gradnb.notebook.formatting import html_table, text_table
from gradnb.notebook.render_svg import to_svg

STEP_HEADER = ["step", "node", "gradient in", "gradients out"]


class StepThrough:
    """Frames of a :class:`BackwardView`'s pass; see the module docstring."""

    def __init__(self, view: BackwardView) -> None:
        self.view = view
        self.steps: list[Step] = view.run.steps
        built = view.built
        self._box = built.box_of
        self._leaf_boxes = sorted(
            built.box_of[leaf.key] for leaf in view.run.trace.leaves
            if built.box_of.get(leaf.key) in set(view.path_ids)
        )

    @property
    def frame_count(self) -> int:
        """One frame per node that ran, plus the final "leaves written" frame."""
        return len(self.steps) + 1

    def frame_svg(self, index: int) -> str:
        """The graph with frame ``index``'s highlights (same layout in every frame)."""
        graph = self.view.built.graph.copy()
        graph.clear_highlights()
        done = [self._box[s.key] for s in self.steps[:index] if s.key in self._box]
        graph.set_highlight(done, "done")
        if index < len(self.steps):
            step = self.steps[index]
            if step.key in self._box:
                graph.set_highlight([self._box[step.key]], "active")
        else:
            graph.set_highlight(self._leaf_boxes, "active")
        title = f"backward({self.view.label}) - {self.frame_title(index)}"
        return to_svg(graph, self.view.graph_view.layout, title=title, legend=True)

    def frame_title(self, index: int) -> str:
        """``step 2/3: AddBackward0`` or ``step 4/4: .grad written``."""
        what = self.steps[index].name if index < len(self.steps) else ".grad written"
        return f"step {index + 1}/{self.frame_count}: {what}"

    def frame_html(self, index: int) -> str:
        """What flowed through frame ``index``'s node, as an HTML table."""
        if index >= len(self.steps):
            return self.view.grads.to_html()
        return html_table(STEP_HEADER, [self._row(index)], "gradnb-step")

    def _row(self, index: int) -> list[str]:
        step = self.steps[index]
        outgoing = [
            f"{_target_label(self.view, target)}: {grad}"
            for target, grad in zip(step.targets, step.outgoing)
            if target is not None
        ]
        return [str(index + 1), step.name, "; ".join(step.incoming), "; ".join(outgoing)]

    def text(self) -> str:
        """The report's text plus every step."""
        rows = [self._row(i) for i in range(len(self.steps))]
        return f"{self.view.text()}\nstep-through:\n{text_table(STEP_HEADER, rows)}"

    def to_html(self) -> str:
        """The static form: the report, then every step in one table."""
        rows = [self._row(i) for i in range(len(self.steps))]
        return (self.view.to_html()
                + f"<p><b>{escape('step-through (in the order backward ran)')}</b></p>"
                + html_table(STEP_HEADER, rows, "gradnb-steps"))

    def widget(self):
        """The live form: ``Play`` and a slider over the frames, the graph and the step."""
        from gradnb.notebook.widgets import step_widget

        return step_widget(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}


def _target_label(view: BackwardView, key: int) -> str:
    label = view.built.label_of.get(key)
    if label:
        return label
    record = view.run.trace.record(key)
    return getattr(record, "name", "") or f"node {key}"
