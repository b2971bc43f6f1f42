"""The live (ipywidgets) forms of the views, and how they are displayed.

A live widget is shown with its static form in the same output (:class:`WithStaticForm`), so
JupyterLab, Notebook 7 and VS Code render the widget while GitHub, nbviewer, ``nbval`` and a
terminal fall back to SVG/HTML and text/plain. Widget state changes travel as comm messages,
never as output updates, so a saved notebook's outputs stay comparable.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

__all__ = [
    "LIVE_INTERVAL_S",
    "WIDGET_MIME",
    "LiveGraph",
    "WithStaticForm",
    "refreshing_widget",
    "step_widget",
    "svg_widget",
    "widgets_available",
]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: Shortest gap between two redraws of the live %%trace graph, in seconds.
LIVE_INTERVAL_S = 0.25


def widgets_available(shell) -> bool:
    """Whether live widgets can work: ipywidgets is importable and a kernel runs the shell."""
    if getattr(shell, "kernel", None) is None:
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


class WithStaticForm:
    """Display a widget together with another object's static mimebundle."""

    def __init__(self, widget, static) -> None:
        self.widget = widget
        self.static = static

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = dict(self.static._repr_mimebundle_())
        view = self.widget._repr_mimebundle_()
        if isinstance(view, tuple):
            view = view[0]
        if WIDGET_MIME in view:
            bundle[WIDGET_MIME] = view[WIDGET_MIME]
        return bundle


def svg_widget(svg: str):
    """An ipywidgets ``HTML`` showing ``svg`` (the SVG keeps its labels and ``data-`` marks)."""
    import ipywidgets  # optional and slow to import: only when a widget is shown

    return ipywidgets.HTML(value=svg)


class LiveGraph:
    """An ``HTML`` widget that redraws a growing trace, at most every ``interval`` seconds.

    Drawing time is measured, and the next redraw waits at least twice as long as the last one
    took, so a cell with 10,000 ops spends its time computing, not drawing.
    """

    def __init__(self, render: Callable[[], str], interval: float = LIVE_INTERVAL_S) -> None:
        import ipywidgets  # optional and slow to import: only when a widget is shown

        self.render = render
        self.interval = interval
        self.widget = ipywidgets.HTML(value="<i>tracing...</i>")
        self._next = 0.0

    def __call__(self, _trace=None) -> None:
        """A trace listener: redraw if enough time has passed."""
        now = time.monotonic()
        if now < self._next:
            return
        try:
            self.refresh()
        except Exception:  # noqa: BLE001 - a drawing bug must not fail the user's cell
            self._next = float("inf")  # the final static drawing after the cell shows the error
            return
        took = time.monotonic() - now
        self._next = time.monotonic() + max(self.interval, 2 * took)

    def refresh(self) -> None:
        """Redraw now."""
        self.widget.value = self.render()

    def close(self) -> None:
        """Close the widget (JupyterLab then hides its output). Its value is emptied first:
        saved widget state must not keep a half-drawn graph."""
        self.widget.value = ""
        self.widget.close()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        # The widget view and an empty text: a saved notebook (GitHub, nbviewer) then shows
        # nothing for the live view, which the static graph displayed after the cell replaces.
        view = self.widget._repr_mimebundle_()
        bundle = {"text/plain": ""}
        if WIDGET_MIME in view:
            bundle[WIDGET_MIME] = view[WIDGET_MIME]
        return bundle


def step_widget(stepper):
    """``Play`` + slider over a :class:`~gradnb.notebook.step_view.StepThrough`'s frames,
    above the graph of the current frame and the gradients of its node."""
    import ipywidgets  # optional and slow to import: only when a widget is shown

    # The slider counts frames from 1, as the captions ("step 1/5") do.
    last = stepper.frame_count
    play = ipywidgets.Play(value=1, min=1, max=last, step=1, interval=900,
                           description="play backward")
    slider = ipywidgets.IntSlider(value=1, min=1, max=last, step=1, description="step",
                                  continuous_update=True)
    ipywidgets.jslink((play, "value"), (slider, "value"))
    caption = ipywidgets.HTML(value=stepper.frame_title(0))
    graph = ipywidgets.HTML(value=stepper.frame_svg(0))
    detail = ipywidgets.HTML(value=stepper.frame_html(0))
    # JupyterLab styles tables in rendered HTML outputs, not inside widgets: borrow its class.
    detail.add_class("jp-RenderedHTMLCommon")

    def show(change) -> None:
        index = change["new"] - 1
        caption.value = stepper.frame_title(index)
        graph.value = stepper.frame_svg(index)
        detail.value = stepper.frame_html(index)

    slider.observe(show, names="value")
    box = ipywidgets.VBox([ipywidgets.HBox([play, slider, caption]), graph, detail])
    box.add_class("gradnb-step-through")
    return box


def refreshing_widget(render: Callable[[], str], log):
    """An ``HTML`` widget showing ``render()``, redrawn after the backward calls that ``log`` (a
    :class:`~gradnb.notebook.memory_meter.MemoryLog`) sees; static if there is no log.

    A loop of many backward calls redraws at most every :data:`LIVE_INTERVAL_S` (and never
    spends more than a third of the time drawing); once the cell is over the widget shows the
    final state.
    """
    import ipywidgets  # optional and slow to import: only when a widget is shown

    widget = ipywidgets.HTML(value=render())
    if log is not None:
        redraw = _Throttled(lambda: setattr(widget, "value", render()))
        log.listeners.append(lambda _log: redraw())
        shell = _running_shell()
        if shell is not None:
            shell.events.register("post_run_cell", lambda *_: redraw.flush())
    return widget


class _Throttled:
    """Call ``action`` now if enough time has passed since the last call, else remember that
    a call is due; ``flush()`` makes a due call."""

    def __init__(self, action: Callable[[], None], interval: float = LIVE_INTERVAL_S) -> None:
        self.action = action
        self.interval = interval
        self._next = 0.0
        self._due = False

    def __call__(self) -> None:
        now = time.monotonic()
        if now < self._next:
            self._due = True
            return
        self._run(now)

    def flush(self) -> None:
        """Run the call that throttling postponed, if any."""
        if self._due:
            self._run(time.monotonic())

    def _run(self, start: float) -> None:
        self._due = False
        self.action()
        took = time.monotonic() - start
        self._next = time.monotonic() + max(self.interval, 2 * took)


def _running_shell():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None
