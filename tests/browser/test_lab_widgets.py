"""A real browser shows the toolkit: JupyterLab renders the ``%%trace`` and ``%backward --step``
widgets in headless Chromium, and stepping moves the highlighted node.

Run alone with ``python -m pytest -m browser``; it skips where Chromium or Playwright is
missing. Set ``GRADNB_BROWSER_SCREENSHOT=docs/screenshot-trace.png`` to also keep the
screenshot (the README's one is made this way).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

#: Milliseconds for the kernel to start and the whole notebook to run and render.
RUN_TIMEOUT_MS = 90_000
#: Milliseconds for the step widget to show a new frame (Play moves one frame per 0.9 s).
UPDATE_TIMEOUT_MS = 15_000

#: Window size for the screenshot: tall enough for the trace graph and the step widget.
SCREENSHOT_VIEWPORT = {"width": 1100, "height": 1560}

SEED_CELLS = [
    "import sys, gradnb\nprint(sys.executable)\nprint(gradnb.__file__)",
    "%load_ext gradnb",
    (
        "import gradnb as torch\n"
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "b = torch.tensor(1.0, requires_grad=True)"
    ),
    "%%trace\ny = w * x + b\nloss = y * y",
    "%backward loss --step",
]
KERNEL_CELL, TRACE_CELL, STEP_CELL = 0, 3, 4

#: Runs every cell once the kernel is up; not awaited, so a stuck kernel cannot hang evaluate().
RUN_ALL_JS = """async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    await panel.context.ready;
    await panel.sessionContext.ready;
    void window.jupyterapp.commands.execute('notebook:run-all-cells');
}"""

#: The step widget graph's active nodes, by id or by label (their first text), sorted, joined.
ACTIVE_JS = """(byLabel) => Array.from(
    document.querySelectorAll('.gradnb-step-through .widget-html svg [data-highlight="active"]'),
    node => byLabel ? node.querySelector('text').textContent : node.getAttribute('data-node-id')
).sort().join(',')"""

#: True once the active nodes (by id) are some and differ from ``before``.
ACTIVE_MOVED_JS = f"(before) => {{ const now = ({ACTIVE_JS})(false); return now && now !== before; }}"

#: True once the active nodes, by label, are exactly ``wanted``.
ACTIVE_LABELS_ARE_JS = f"(wanted) => ({ACTIVE_JS})(true) === wanted"


def write_notebook(folder: Path, kernel_name: str) -> str:
    """Write the seed notebook (no outputs) for ``kernel_name`` into ``folder``; its name."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": kernel_name, "display_name": kernel_name,
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in SEED_CELLS]
    nbformat.write(notebook, folder / "seed.ipynb")
    return "seed.ipynb"


def frame_both_cells_for_screenshot(page, trace_cell) -> None:
    """Hide the file browser and fit the %%trace and %backward --step cells in the window."""
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    page.set_viewport_size(SCREENSHOT_VIEWPORT)
    trace_cell.evaluate("cell => cell.scrollIntoView({block: 'start'})")


def test_trace_and_step_widgets_render_and_step(browser_page, lab_server, tmp_path):
    # browser_page first: where Chromium is missing the test skips before JupyterLab starts.
    page = browser_page
    page.goto(lab_server.notebook_url(write_notebook(lab_server.root, lab_server.kernel_name)))
    page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext",
                           timeout=RUN_TIMEOUT_MS)
    page.evaluate(RUN_ALL_JS)
    cells = page.locator(".jp-Notebook .jp-Cell")
    step_box = cells.nth(STEP_CELL).locator(".gradnb-step-through")
    step_box.locator(".widget-html svg").wait_for(timeout=RUN_TIMEOUT_MS)

    assert page.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
    kernel_lines = cells.nth(KERNEL_CELL).locator(".jp-OutputArea-output").inner_text()
    assert kernel_lines.split() == [sys.executable, str(ROOT / "gradnb" / "__init__.py")]

    trace_graph = cells.nth(TRACE_CELL).locator(".gradnb-igraph svg.gradnb-graph")
    trace_graph.wait_for(timeout=UPDATE_TIMEOUT_MS)
    # The live widget is closed; the final graph is the interactive HTML (no widget).
    assert cells.nth(TRACE_CELL).locator(".widget-html svg").count() == 0
    assert trace_graph.count() == 1
    labels = trace_graph.locator("text").all_text_contents()
    for label in ("x", "w", "b", "loss", "MulBackward0"):
        assert label in labels

    caption = step_box.locator(".widget-hbox .widget-html-content")  # "step 1/4: MulBackward0"
    assert caption.inner_text().startswith("step 1/")
    assert page.evaluate(ACTIVE_JS, True) == "MulBackward0"  # loss = y * y runs first
    first = page.evaluate(ACTIVE_JS, False)
    step_box.locator(".noUi-handle").press("ArrowRight")
    page.wait_for_function(ACTIVE_MOVED_JS, arg=first, timeout=UPDATE_TIMEOUT_MS)
    assert page.evaluate(ACTIVE_JS, True) == "AddBackward0"
    assert caption.inner_text().startswith("step 2/")

    step_box.locator(".widget-play button").first.click()  # Play runs on to the last frame
    page.wait_for_function(ACTIVE_LABELS_ARE_JS, arg="b,w,x", timeout=UPDATE_TIMEOUT_MS * 4)
    caption.filter(has_text=".grad written").wait_for(timeout=UPDATE_TIMEOUT_MS)
    step_box.locator("td", has_text="42").first.wait_for(timeout=UPDATE_TIMEOUT_MS)  # x.grad
    step_box.locator(".widget-play i.fa-play").wait_for(timeout=UPDATE_TIMEOUT_MS)  # stopped

    screenshot = tmp_path / "screenshot-trace.png"
    frame_both_cells_for_screenshot(page, cells.nth(TRACE_CELL))
    page.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 0
    keep = os.environ.get("GRADNB_BROWSER_SCREENSHOT")
    if keep:
        shutil.copyfile(screenshot, keep)
