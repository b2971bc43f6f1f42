"""Markdown rendering: tables, number formats, and the whole report."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.worker import Outcome


@dataclass
class Table:
    """One section of the report: a titled Markdown table with a sentence on what it measures."""

    title: str
    description: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def to_markdown(self) -> str:
        """The section: heading, description, table."""
        lines = [f"## {self.title}", "", self.description, ""]
        lines.append("| " + " | ".join(self.header) + " |")
        lines.append("|" + "|".join(" --- " for _ in self.header) + "|")
        lines.extend("| " + " | ".join(_escape(cell) for cell in row) + " |" for row in self.rows)
        return "\n".join(lines)


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def number(value: float) -> str:
    """Three significant digits, no exponent for everyday magnitudes."""
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:.2e}"


def ratio(value: float) -> str:
    """A ratio to the NumPy limit, e.g. ``3.2×``."""
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"


def ratio_with_spread(ratios: Sequence[float]) -> str:
    """Median ratio over rounds, with the lowest and highest round when there are several."""
    text = ratio(statistics.median(ratios))
    if len(ratios) > 1:
        text += f" ({min(ratios):.2f}–{max(ratios):.2f})"
    return text


def megabytes(n_bytes: float) -> str:
    """Bytes as MB (10^6) with one decimal, or as kB below 100 kB."""
    if abs(n_bytes) < 100e3:
        return f"{n_bytes / 1e3:.1f} kB"
    return f"{n_bytes / 1e6:.1f} MB"


def failure_cell(outcome: Outcome) -> str:
    """What a table shows for a call that produced no value."""
    if outcome.unsupported is not None:
        return f"n/a ({outcome.unsupported})"
    return f"error: {outcome.error}"


def render(
    title: str, bullets: Sequence[str], tables: Sequence[Table], notes: Sequence[str]
) -> str:
    """The full report: title, run facts as bullets, every table, then error notes."""
    parts = [f"# {title}", "", *(f"- {line}" for line in bullets)]
    parts.extend(f"\n{table.to_markdown()}" for table in tables)
    if notes:
        parts.extend(["", "## Errors", "", *notes])
    return "\n".join(parts) + "\n"
