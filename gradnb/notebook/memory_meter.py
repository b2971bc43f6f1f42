"""``MemoryMeter``: what every backward since ``%load_ext gradnb`` did to memory.

Each backward reports exact byte sums (see :mod:`gradnb.autograd.memory`): ``freed`` went
back to the allocator, ``released`` was let go by the graph but is still referenced elsewhere
(a leaf, a named intermediate), ``retained`` is still held by a graph kept with
``retain_graph=True``. The meter shows them per call as a table and a matplotlib plot.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from gradnb.autograd import events, memory
from gradnb.autograd.memory import BackwardReport
from gradnb.notebook.formatting import format_bytes, html_table, text_table
from gradnb.notebook.plotting import figure_svg, new_figure, svg_image
from gradnb.notebook.prompts import running_prompt
from gradnb.notebook.widgets import refreshing_widget

__all__ = [
    "HEADER",
    "TABLE_ROWS",
    "MemoryEntry",
    "MemoryLog",
    "MemoryMeter",
    "has_session_log",
    "session_log",
    "start_session_log",
    "stop_session_log",
]

HEADER = ["call", "cell", "nodes", "freed", "released", "retained"]

#: Tables show this many most recent calls (the plot shows them all).
TABLE_ROWS = 10


@dataclass(frozen=True)
class MemoryEntry:
    """One backward call's figures."""

    call: int
    nodes: int
    freed: int
    released: int
    retained: int
    #: The notebook cell that ran it (``In [5]``), or "" outside IPython.
    cell: str = ""


class MemoryLog(events.Subscriber):
    """An engine observer that keeps an entry per backward call; ``listeners`` are called with
    the log after each one (live meters and gradient-flow widgets refresh that way)."""

    def __init__(self) -> None:
        self.entries: list[MemoryEntry] = []
        self.listeners: list[Callable[[MemoryLog], None]] = []

    def stop(self) -> None:
        """Stop logging and drop the listeners."""
        super().stop()
        self.listeners.clear()

    def backward_finished(self, report: BackwardReport) -> None:
        """Engine event: add the call's entry and tell the listeners."""
        self.entries.append(_entry(len(self.entries) + 1, report, _running_cell()))
        for listener in tuple(self.listeners):
            listener(self)


def _entry(call: int, report: BackwardReport, cell: str = "") -> MemoryEntry:
    return MemoryEntry(call, report.nodes_executed, report.freed_bytes, report.released_bytes,
                       report.retained_bytes, cell)


def _running_cell() -> str:
    """``In [5]`` while IPython runs cell 5 (its prompt number), else ""."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    count = running_prompt(shell) if shell is not None else None
    return f"In [{count}]" if count is not None else ""


_session_logs: dict[int, MemoryLog] = {}  # id(shell) -> the log ``%load_ext gradnb`` started


def session_log() -> MemoryLog | None:
    """The memory log of the running IPython session, if the extension is loaded there."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return next(iter(_session_logs.values()), None)
    return _session_logs.get(id(shell))


def has_session_log(shell) -> bool:
    """Whether ``%load_ext gradnb`` started a memory log in ``shell``."""
    return id(shell) in _session_logs


def start_session_log(shell) -> None:
    """Start recording every backward of ``shell``'s session."""
    _session_logs[id(shell)] = MemoryLog().start()


def stop_session_log(shell) -> bool:
    """Stop and drop ``shell``'s log; False if it had none."""
    log = _session_logs.pop(id(shell), None)
    if log is None:
        return False
    log.stop()
    return True


class MemoryMeter:
    """Freed, released and retained bytes per backward call.

    ``log`` defaults to the one ``%load_ext gradnb`` started; without the extension the meter
    reads the engine's own bounded report history.
    """

    def __init__(self, log: MemoryLog | None = None) -> None:
        self.log = log if log is not None else session_log()
        if self.log is not None:
            self.entries = list(self.log.entries)
        else:
            self.entries = [_entry(i + 1, r) for i, r in enumerate(memory.history())]

    def totals(self) -> dict[str, int]:
        """Sums of freed, released and retained bytes and the number of calls."""
        return {
            "calls": len(self.entries),
            "freed": sum(e.freed for e in self.entries),
            "released": sum(e.released for e in self.entries),
            "retained": self.entries[-1].retained if self.entries else 0,
        }

    def headline(self) -> str:
        """``MemoryMeter: 2 backward calls; freed 1,024 B (1.0 KiB) in total; ...``."""
        t = self.totals()
        calls = f"{t['calls']} backward call{'s' if t['calls'] != 1 else ''}"
        return (f"MemoryMeter: {calls}; freed {format_bytes(t['freed'])} in total; released "
                f"but still referenced {format_bytes(t['released'])}; retained now "
                f"{format_bytes(t['retained'])}")

    def _rows(self) -> list[list[str]]:
        return [[str(e.call), e.cell or "-", str(e.nodes), format_bytes(e.freed),
                 format_bytes(e.released), format_bytes(e.retained)]
                for e in self.entries[-TABLE_ROWS:]]

    def text(self) -> str:
        """Headline and the most recent calls as text."""
        if not self.entries:
            return self.headline()
        return f"{self.headline()}\n{text_table(HEADER, self._rows())}"

    def plot_svg(self) -> str:
        """Freed, released and retained bytes per call, side by side on a log scale (so 4 B
        shows next to 4,000 B), each call labelled by the cell that ran it (inline SVG)."""
        figure, axes = new_figure()
        calls = list(range(len(self.entries)))
        series = (("freed", "#6a9e3a", "freed"), ("released", "#e08a1e",
                  "released, still referenced"), ("retained", "#4a90c8", "retained by graph"))
        width = 0.26
        for offset, (field, colour, label) in zip((-width, 0.0, width), series):
            axes.bar([c + offset for c in calls], [getattr(e, field) for e in self.entries],
                     width=width, color=colour, label=label)
        # symlog: a true log scale above 1 B that still draws 0 B as no bar.
        axes.set_yscale("symlog", linthresh=1.0)
        axes.set_ylim(bottom=0)
        axes.set_ylabel("bytes (log scale)")
        axes.set_title("memory per backward call")
        axes.set_xticks(calls, [_call_label(e) for e in self.entries],
                        rotation=30 if len(calls) > 6 else 0, ha="right" if len(calls) > 6
                        else "center")
        if calls:
            axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        return figure_svg(figure)

    def to_html(self) -> str:
        """Headline, plot and table."""
        table = html_table(HEADER, self._rows(), "gradnb-memory") if self.entries else ""
        plot = svg_image(self.plot_svg(), "memory per backward call") if self.entries else ""
        return (f'<div class="gradnb-memory-meter"><p><b>{escape(self.headline())}</b></p>'
                f"{plot}{table}</div>")

    def widget(self):
        """An HTML widget that redraws after every backward call (needs ``%load_ext``)."""
        return refreshing_widget(lambda: MemoryMeter(self.log).to_html(), self.log)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()


def _call_label(entry: MemoryEntry) -> str:
    """``In [5]`` (with the call number when a cell ran several), else ``call 3``."""
    return f"{entry.cell}\n#{entry.call}" if entry.cell else f"call {entry.call}"
