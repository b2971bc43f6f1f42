"""The tutorials as stored: what a reader sees before running anything (GitHub, an untrusted
notebook in JupyterLab, nbviewer). Sanitizing renderers strip inline ``<svg>`` from HTML and
leave its labels as run-on text, so no stored HTML may carry one; graphs are images (their own
``image/svg+xml`` output, or a data-URI ``<img>``) with a readable text summary beside them."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def outputs(path: Path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            yield cell.source, output


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_read_right_untrusted_and_sanitized(path):
    for source, output in outputs(path):
        data = output.get("data", {})
        assert WIDGET_MIME not in data, source  # live views are never stored
        if "text/html" in data:
            assert "<svg" not in data["text/html"], f"inline SVG in the HTML of {source!r}"
        if "image/svg+xml" in data:
            text = data.get("text/plain", "")
            assert text.strip() and not text.lstrip().startswith("<"), source


def test_a_tutorial_uses_step_and_the_live_views():
    sources = {path.stem: [s for s, _ in outputs(path)] for path in NOTEBOOKS}
    cells = {path.stem: [c.source for c in nbformat.read(path, as_version=4).cells]
             for path in NOTEBOOKS}
    everything = [source for stem in cells for source in cells[stem]]
    for magic in ("%backward loss --step", "%memory --live", "%gradflow model --live"):
        using = [s for s in everything if magic in s]
        assert using, f"no tutorial uses {magic}"
        # Each has a stored static form: the step table, the meter, the flow table.
        assert any(s in sources[stem] for stem in sources for s in using), magic
