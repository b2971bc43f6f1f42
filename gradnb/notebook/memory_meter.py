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

HEADER = ["call", "nodes", "freed", "released", "retained"]

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
        self.entries.append(_entry(len(self.entries) + 1, report))
        for listener in tuple(self.listeners):
            listener(self)


def _entry(call: int, report: BackwardReport) -> MemoryEntry:
    return MemoryEntry(call, report.nodes_executed, report.freed_bytes, report.released_bytes,
                       report.retained_bytes)


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
        return [[str(e.call), str(e.nodes), format_bytes(e.freed), format_bytes(e.released),
                 format_bytes(e.retained)] for e in self.entries[-TABLE_ROWS:]]

    def text(self) -> str:
        """Headline and the most recent calls as text."""
        if not self.entries:
            return self.headline()
        return f"{self.headline()}\n{text_table(HEADER, self._rows())}"

    def plot_svg(self) -> str:
        """Bars of freed and released bytes per call, a line for retained (inline SVG)."""
        from gradnb.notebook.plotting import figure_svg, new_figure

        figure, axes = new_figure()
        calls = [e.call for e in self.entries]
        freed = [e.freed for e in self.entries]
        released = [e.released for e in self.entries]
        axes.bar(calls, freed, color="#6a9e3a", label="freed")
        axes.bar(calls, released, bottom=freed, color="#e08a1e", label="released, still referenced")
        axes.plot(calls, [e.retained for e in self.entries], color="#4a90c8", marker="o",
                  label="retained by graph")
        axes.set_xlabel("backward call")
        axes.set_ylabel("bytes")
        axes.set_title("memory per backward call")
        axes.xaxis.get_major_locator().set_params(integer=True)
        if calls:
            axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        return figure_svg(figure)

    def to_html(self) -> str:
        """Headline, plot and table."""
        table = html_table(HEADER, self._rows(), "gradnb-memory") if self.entries else ""
        return (f'<div class="gradnb-memory-meter"><p><b>{escape(self.headline())}</b></p>'
                f"{self.plot_svg() if self.entries else ''}{table}</div>")

    def widget(self):
        """An HTML widget that redraws after every backward call (needs ``%load_ext``)."""
        from gradnb.notebook.widgets import refreshing_widget

        return refreshing_widget(lambda: MemoryMeter(self.log).to_html(), self.log)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": self.to_html(), "text/plain": self.text()}

    def __repr__(self) -> str:
        return self.text()
