"""``StepThrough``: play a recorded backward pass step by step, teaching the chain rule.

The frames, in the order the engine worked:

- a node's backward: the gradient that flowed in, the node's local derivative rule in one line
  (``grad * result`` for ``ExpBackward0``) and the gradients it sent on, with shapes;
- a broadcast reduction, as its own frame: a gradient the node returned in the broadcast
  shape, summed back to its input's shape;
- contributions added: before a node (or a leaf's ``.grad``) that received gradients from two
  or more places (a tensor used twice), the sum of those contributions;
- last, the leaves whose ``.grad`` the pass wrote.

Every frame also shows the saved bytes freed so far (each node frees its saved tensors right
after its backward, unless ``retain_graph``), and the saved boxes in the drawing read "freed"
only once their node has run. Frames are numbered from 1 in captions, the slider and the
static table alike. The live form is an ipywidgets ``Play`` button and slider; the static form
lists every frame in a table under the report, so a saved notebook still tells the whole story.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from gradnb.autograd.trace import OpRecord
from gradnb.notebook.backward_run import Step
from gradnb.notebook.backward_view import BackwardView
from gradnb.notebook.formatting import format_bytes, format_shape, html_table, text_table
from gradnb.notebook.render_svg import to_svg
from gradnb.notebook.widgets import step_widget

__all__ = ["STEP_HEADER", "Frame", "StepThrough"]

STEP_HEADER = ["step", "node", "rule", "gradient in", "gradients out", "saved freed"]


@dataclass(frozen=True)
class Frame:
    """One frame: ``kind`` is ``node``, ``reduce``, ``add`` or ``leaves``; ``step`` indexes the
    run's steps (the node that ran, or the node about to run for ``add``)."""

    kind: str
    step: int | None
    title: str
    rule: str
    incoming: str
    outgoing: str
    #: saved bytes freed once this frame is done.
    freed: int


class StepThrough:
    """Frames of a :class:`BackwardView`'s pass; see the module docstring."""

    def __init__(self, view: BackwardView) -> None:
        self.view = view
        self.steps: list[Step] = view.run.steps
        built = view.built
        self._box = built.box_of
        self._savers = _savers_of_saved_boxes(built)
        self._leaf_boxes = sorted(
            built.box_of[leaf.key] for leaf in view.run.trace.leaves
            if built.box_of.get(leaf.key) in set(view.path_ids)
        )
        report = view.run.report
        self._frees = report is None or not report.retain_graph
        self.total_saved = sum(op.saved_bytes for op in view.run.trace.ops)
        self.frames: list[Frame] = self._frames()

    # -- frames ---------------------------------------------------------------------------------
    def _frames(self) -> list[Frame]:
        contributions = self._contributions()
        frames: list[Frame] = []
        freed = 0
        for index, step in enumerate(self.steps):
            received = contributions.get(step.key, [])
            if len(received) > 1:
                frames.append(self._add_frame(index, step.name, received, freed))
            if self._frees:
                freed += self._saved_bytes(step.key)
            frames.append(Frame("node", index, step.name, step.rule, "; ".join(step.incoming),
                                self._outgoing(step), freed))
            for i, raw, shape, summed in step.reductions:
                target = _label(self.view, step.targets[i]) if i < len(step.targets) else "input"
                frames.append(Frame(
                    "reduce", index, f"sum to {format_shape(shape)} for {target}",
                    f"broadcast reduction: sum over the dims broadcasting added, "
                    f"{format_shape(raw)} -> {format_shape(shape)}",
                    f"{format_shape(raw)} from {step.name}", f"{target}: {summed}", freed))
        for key in sorted(k for k in contributions if k not in {s.key for s in self.steps}):
            if len(contributions[key]) > 1:
                frames.append(self._add_frame(None, _label(self.view, key), contributions[key],
                                              freed))
        frames.append(Frame("leaves", None, ".grad written", "AccumulateGrad: .grad += grad",
                            "", "", freed))
        return frames

    def _contributions(self) -> dict[int, list[tuple[str, str]]]:
        """For each trace key, the (sender, gradient) pairs that flowed into it."""
        received: dict[int, list[tuple[str, str]]] = {}
        for step in self.steps:
            for target, grad in zip(step.targets, step.outgoing):
                if target is not None:
                    received.setdefault(target, []).append((step.name, grad))
        return received

    def _add_frame(self, index, name: str, received, freed: int) -> Frame:
        parts = " + ".join(grad for _, grad in received)
        senders = ", ".join(sender for sender, _ in received)
        return Frame("add", index, f"{len(received)} gradients added for {name}",
                     "a tensor used more than once gets the sum of its gradients",
                     f"from {senders}", parts, freed)

    def _saved_bytes(self, key: int | None) -> int:
        if key is None:
            return 0
        record = self.view.run.trace.record(key)
        return record.saved_bytes if isinstance(record, OpRecord) else 0

    def _outgoing(self, step: Step) -> str:
        return "; ".join(f"{_label(self.view, target)}: {grad}"
                         for target, grad in zip(step.targets, step.outgoing)
                         if target is not None)

    @property
    def frame_count(self) -> int:
        """How many frames the pass has (nodes, reductions, additions, then .grad written)."""
        return len(self.frames)

    def frame_title(self, index: int) -> str:
        """``step 2/5: AddBackward0`` (frames count from 1, as the slider does)."""
        return f"step {index + 1}/{self.frame_count}: {self.frames[index].title}"

    def frame_svg(self, index: int) -> str:
        """The graph with frame ``index``'s highlights (same layout in every frame)."""
        frame = self.frames[index]
        graph = self.view.built.graph.copy()
        graph.clear_highlights()
        # Nodes before this frame's node are done; its own saved tensors are freed in its
        # frame (right after its backward), not before.
        done_count = len(self.steps) if frame.step is None else frame.step
        freed_count = done_count + (1 if frame.kind in ("node", "reduce") else 0)
        done = [self._box[s.key] for s in self.steps[:done_count] if s.key in self._box]
        graph.set_highlight(done, "done")
        if frame.kind == "leaves":
            graph.set_highlight(self._leaf_boxes, "active")
        elif frame.step is not None and self.steps[frame.step].key in self._box:
            graph.set_highlight([self._box[self.steps[frame.step].key]], "active")
        self._mark_saved(graph, freed_count)
        title = f"backward({self.view.label}) - {self.frame_title(index)}"
        return to_svg(graph, self.view.graph_view.layout, title=title, legend=True)

    def _mark_saved(self, graph, ran: int) -> None:
        """Saved boxes read "freed" only once every node that saved them has run (and the pass
        frees), instead of "released" from the first frame on."""
        ran_keys = {s.key for s in self.steps[:ran]}
        for box, savers in self._savers.items():
            node = graph.nodes[box]
            size = node.sublabel.removesuffix(", released")
            freed = self._frees and savers <= ran_keys
            node.sublabel = size + (", freed" if freed else "")
            node.detail = node.detail.replace(", released", ", freed" if freed else "")

    def freed_bar(self, index: int) -> str:
        """``saved freed: 12 B of 28 B`` with a text bar."""
        freed = self.frames[index].freed
        total = self.total_saved
        width = 20
        filled = round(width * freed / total) if total else 0
        kept = "" if self._frees else " (retain_graph: nothing is freed)"
        return (f"saved freed: [{'#' * filled}{'.' * (width - filled)}] "
                f"{format_bytes(freed)} of {format_bytes(total)}{kept}")

    def frame_html(self, index: int) -> str:
        """What happened in frame ``index``, as HTML: its row and the freed-bytes bar."""
        frame = self.frames[index]
        bar = self._bar_html(index)
        if frame.kind == "leaves":
            return bar + self.view.grads.to_html()
        return html_table(STEP_HEADER, [self._row(index)], "gradnb-step") + bar

    def _bar_html(self, index: int) -> str:
        freed = self.frames[index].freed
        share = 100.0 * freed / self.total_saved if self.total_saved else 0.0
        return ('<div class="gradnb-freed" style="font-family:monospace;font-size:12px">'
                '<div style="width:240px;height:8px;background:#eee;display:inline-block;'
                f'margin-right:6px"><div style="width:{share:.1f}%;height:8px;'
                'background:#e08a1e"></div></div>'
                f"{escape(self.freed_bar(index).split('] ', 1)[1])}</div>")

    def _row(self, index: int) -> list[str]:
        frame = self.frames[index]
        return [str(index + 1), frame.title, frame.rule, frame.incoming, frame.outgoing,
                format_bytes(frame.freed)]

    def text(self) -> str:
        """The report's text plus every frame."""
        rows = [self._row(i) for i in range(self.frame_count)]
        return (f"{self.view.text()}\nstep-through:\n{text_table(STEP_HEADER, rows)}\n"
                f"{self.freed_bar(self.frame_count - 1)}")

    def to_html(self) -> str:
        """The static form: the report, then every frame in one table."""
        rows = [self._row(i) for i in range(self.frame_count)]
        return (self.view.to_html()
                + f"<p><b>{escape('step-through (in the order backward ran)')}</b></p>"
                + html_table(STEP_HEADER, rows, "gradnb-steps")
                + self._bar_html(self.frame_count - 1))

    def widget(self):
        """The live form: ``Play`` and a slider over the frames, the graph and the step."""
        return step_widget(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}


def _savers_of_saved_boxes(built) -> dict[int, set[int]]:
    """Saved box id -> the trace keys of the ops that keep it (one buffer may serve several)."""
    key_of_box = {box: key for key, box in built.box_of.items()}
    savers: dict[int, set[int]] = {}
    for edge in built.graph.edges:
        if edge.kind == "saved" and edge.dst in key_of_box:
            savers.setdefault(edge.src, set()).add(key_of_box[edge.dst])
    return savers


def _label(view: BackwardView, key: int | None) -> str:
    if key is None:
        return "input"
    label = view.built.label_of.get(key)
    if label:
        return label
    record = view.run.trace.record(key)
    return getattr(record, "name", "") or f"node {key}"
