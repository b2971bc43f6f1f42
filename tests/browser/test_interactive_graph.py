"""The graph's interactive HTML in headless Chromium, with no Jupyter at all: it needs nothing
but the browser (no extension, no ipywidgets, no network), so a plain page is the test.

Checked: the script swaps the static image for the live SVG; the wheel and the buttons zoom;
clicking a module's name folds it into one box (edges end on it) and clicking the box unfolds
it; hovering a box shows its details. Where scripts do not run, the static image stays.

Set ``GRADNB_INTERACTIVE_SCREENSHOT=docs/screenshot-interactive.png`` to keep the screenshot
(the README's one is made this way).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import gradnb
from gradnb import nn
from gradnb.notebook import GraphView

pytestmark = pytest.mark.browser

PAGE = "<!doctype html><html><head><meta charset='utf-8'></head><body>{}</body></html>"


def mlp_view() -> GraphView:
    gradnb.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = gradnb.randn(2, 3)
    with gradnb.autograd.graph_trace() as recording:
        loss = model(x).pow(2).sum()
    loss.backward()
    return GraphView(recording, namespace={"model": model, "x": x, "loss": loss})


def open_page(page, tmp_path: Path, html: str):
    path = tmp_path / "graph.html"
    path.write_text(PAGE.format(html), encoding="utf-8")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    return errors


def visible(page, selector: str) -> bool:
    return page.locator(selector).first.is_visible()


def test_zoom_fold_and_hover_in_a_plain_page(browser_page, tmp_path):
    page = browser_page
    errors = open_page(page, tmp_path, mlp_view().to_html())
    page.wait_for_selector(".gradnb-igraph[data-ready]", timeout=10_000)
    assert errors == []
    assert not visible(page, "img.gradnb-igraph-static")
    assert visible(page, ".gradnb-igraph-canvas svg .gradnb-node")
    groups = page.eval_on_selector_all(".gradnb-group", "gs => gs.map(g => g.dataset.group)")
    assert groups == ["model", "model.0", "model.1", "model.2"]

    # Zoom: the wheel zooms in around the pointer, the buttons out again, "fit" resets.
    root = page.locator(".gradnb-igraph")
    page.mouse.move(300, 300)
    page.mouse.wheel(0, -300)
    zoomed = float(root.get_attribute("data-zoom"))
    assert zoomed > 1.1
    page.click(".gradnb-igraph-zoom-out")
    assert float(root.get_attribute("data-zoom")) < zoomed
    page.click(".gradnb-igraph-fit")
    assert float(root.get_attribute("data-zoom")) == 1.0

    # Fold model.0: its boxes hide, one folded box stands for them, edges end on it.
    tanh_input = page.locator('.gradnb-edge[data-src="4"]').first.locator("path").first
    before = tanh_input.get_attribute("d")
    page.click('.gradnb-group[data-group="model.0"] .gradnb-group-toggle')
    assert root.get_attribute("data-folded") == "model.0"
    assert visible(page, '.gradnb-folded[data-group="model.0"]')
    weight = page.locator(".gradnb-node", has_text="model.0.weight").first
    assert not weight.is_visible()
    assert tanh_input.get_attribute("d") != before  # rerouted to the folded box

    # Hover: the folded box lists what it holds; an ordinary box its shape, bytes and grad.
    page.hover('.gradnb-folded[data-group="model.0"]')
    tip = page.locator(".gradnb-igraph-tip")
    assert tip.is_visible() and tip.inner_text().startswith("model.0: 5 boxes")
    page.screenshot(path=str(tmp_path / "folded.png"))

    page.click('.gradnb-folded[data-group="model.0"]')  # unfold again
    assert root.get_attribute("data-folded") == ""
    assert weight.is_visible()
    assert tanh_input.get_attribute("d") == before
    page.locator(".gradnb-node", has_text="model.2.weight").first.hover()
    details = tip.inner_text()
    assert "(2, 4) float32" in details and "32 B" in details and "\ngrad: [" in details

    page.click(".gradnb-igraph-fold-all")
    assert root.get_attribute("data-folded") == "model|model.0|model.1|model.2"
    shown = page.eval_on_selector_all(".gradnb-folded", "fs => fs.filter(f => f.style.display "
                                      "!== 'none').map(f => f.dataset.group)")
    assert shown == ["model"]  # the outermost fold hides the folds inside it

    page.click(".gradnb-igraph-unfold-all")
    page.click('.gradnb-group[data-group="model.1"] .gradnb-group-toggle')
    page.locator(".gradnb-node", has_text="model.0.weight").first.hover()
    screenshot = tmp_path / "screenshot-interactive.png"
    page.locator(".gradnb-igraph").screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 0
    keep = os.environ.get("GRADNB_INTERACTIVE_SCREENSHOT")
    if keep:
        shutil.copyfile(screenshot, keep)


def test_without_scripts_the_static_image_shows(browser_page, tmp_path):
    page = browser_page
    html = mlp_view().to_html()
    # What a sanitizer leaves (scripts removed) is still a picture of the graph.
    static = html[: html.index("<script>")] + "</div>"
    open_page(page, tmp_path, static)
    image = page.locator("img.gradnb-igraph-static")
    image.wait_for(timeout=10_000)
    assert image.is_visible()
    assert page.evaluate("() => document.querySelector('img.gradnb-igraph-static').naturalWidth"
                         ) > 100


def test_a_stored_notebook_opened_untrusted_in_jupyterlab_shows_graph_images(
        browser_page, lab_server):
    # browser_page first: where Chromium is missing the test skips before JupyterLab starts.
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": lab_server.kernel_name, "language": "python",
                                       "display_name": lab_server.kernel_name}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in (
        "%load_ext gradnb\nimport gradnb as torch\nx = torch.tensor(2.0, requires_grad=True)",
        "%%trace\ny = x * x\nloss = y.exp()",
        "%backward loss",
    )]
    root = str(Path(__file__).resolve().parents[2])  # this checkout's gradnb
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": root}}).execute()
    # Written by this test, never signed in this server's trust database: opened untrusted,
    # as a fresh clone's tutorials are. JupyterLab then sanitizes HTML and runs no script.
    nbformat.write(notebook, lab_server.root / "stored.ipynb")
    page = browser_page
    page.goto(lab_server.notebook_url("stored.ipynb"))
    images = page.locator(".jp-OutputArea-output img.gradnb-igraph-static")
    images.first.wait_for(timeout=60_000)
    assert images.count() == 2  # the %%trace graph and %backward's graph
    for index in range(2):
        assert images.nth(index).evaluate("img => img.naturalWidth") > 100
    assert page.locator(".gradnb-igraph[data-ready]").count() == 0  # no script ran
    report = page.locator(".jp-OutputArea-output", has_text="backward(loss):").first
    assert "MulBackward0" not in report.inner_text()  # no run-on labels of a stripped SVG
