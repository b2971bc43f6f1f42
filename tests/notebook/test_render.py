"""SVG and DOT rendering: well-formed, self-contained, styled by kind and byte-stable."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradnb.notebook.graphmodel import Graph, GraphNode
from gradnb.notebook.layout import LayoutOptions, layout_graph
from gradnb.notebook.render_dot import to_dot
from gradnb.notebook.render_svg import NODE_STYLES, to_svg

SVG = "{http://www.w3.org/2000/svg}"
REPO_ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter imports this file and prints seed_svg(), to compare across processes.
PRINT_SEED_SVG = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("render_case", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.stdout.write(module.seed_svg())
"""


def seed_graph() -> Graph:
    """The seed example with a saved tensor, a constant, AccumulateGrad and highlights."""
    g = Graph()
    specs = [
        ("leaf_grad", "x", "(3,) float32"),
        ("leaf_grad", "w", "(3,) float32"),
        ("leaf_grad", "b", "(3,) float32"),
        ("op", "MulBackward0", ""),
        ("op", "AddBackward0", ""),
        ("op", "MulBackward0", ""),
        ("output", "loss", "() float32"),
        ("saved", "self", "12 B"),
        ("leaf", "<c & d>", "() int64"),
        ("accumulate", "AccumulateGrad", ""),
    ]
    for node_id, (kind, label, sublabel) in enumerate(specs):
        g.add_node(GraphNode(node_id, kind, label, sublabel, detail=f"{label}: tooltip"))
    for src, dst in [(0, 3), (1, 3), (3, 4), (2, 4), (4, 5), (8, 5), (5, 6), (1, 9)]:
        g.add_edge(src, dst)
    g.add_edge(7, 3, "saved")
    g.set_highlight([1, 3, 4, 5, 6], "path")
    g.set_highlight([4], "active")
    return g


def seed_svg() -> str:
    return to_svg(seed_graph(), title="seed: x * w + b", legend=True)


def build_seed() -> tuple[Graph, str]:
    return seed_graph(), seed_svg()


def node_groups(svg: str) -> dict[int, ET.Element]:
    root = ET.fromstring(svg)
    groups = [g for g in root.iter(f"{SVG}g") if "gradnb-node" in g.get("class", "").split()]
    return {int(g.get("data-node-id")): g for g in groups}


def test_svg_is_well_formed_and_has_a_group_per_node() -> None:
    graph, svg = build_seed()
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    groups = node_groups(svg)
    assert sorted(groups) == sorted(graph.nodes)
    for node_id, group in groups.items():
        node = graph.nodes[node_id]
        assert group.get("class") == f"gradnb-node gradnb-{node.kind}"
        assert group.find(f"{SVG}title").text == node.detail
        assert group.find(f"{SVG}rect").get("fill") == NODE_STYLES[node.kind].fill
        texts = [t.text for t in group.findall(f"{SVG}text")]
        assert texts == [t for t in (node.label, node.sublabel) if t]
    assert groups[4].get("data-highlight") == "active"
    assert groups[1].get("data-highlight") == "path"
    assert "data-highlight" not in groups[0].attrib
    assert len([g for g in root.iter(f"{SVG}g") if g.get("data-src") is not None]) == 9


def test_labels_are_escaped() -> None:
    _, svg = build_seed()
    assert "&lt;c &amp; d&gt;" in svg
    assert node_groups(svg)[8].find(f"{SVG}text").text == "<c & d>"


def test_svg_is_self_contained() -> None:
    _, svg = build_seed()
    for external in ("href", "url(", "@import", "<style", "<script", "@font-face"):
        assert external not in svg
    assert "monospace" in svg


def test_svg_is_identical_across_runs_and_processes() -> None:
    _, first = build_seed()
    _, second = build_seed()
    assert first == second
    outputs = []
    for hash_seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
        result = subprocess.run(
            [sys.executable, "-c", PRINT_SEED_SVG, str(Path(__file__).resolve())],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=REPO_ROOT,
        )
        outputs.append(result.stdout)
    assert outputs == [first, first]


def test_legend_is_optional_and_lists_what_is_drawn() -> None:
    graph, with_legend = build_seed()
    assert "gradnb-legend" in with_legend
    assert "saved tensor" in with_legend and "running now" in with_legend
    plain = to_svg(graph)
    assert "gradnb-legend" not in plain
    assert "collapsed nodes" not in with_legend  # no summary node in this graph


def test_a_layout_can_be_reused_while_highlights_change() -> None:
    graph, _ = build_seed()
    layout = layout_graph(graph)
    graph.clear_highlights()
    before = to_svg(graph, layout)
    graph.set_highlight([5], "active")
    after = to_svg(graph, layout)
    assert node_groups(after)[5].get("data-highlight") == "active"
    changed = [a for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed and all('data-node-id="5"' in line or "stroke" in line for line in changed)


def test_collapsed_chain_renders_with_its_summary_highlight() -> None:
    graph = Graph([GraphNode(0, "leaf_grad", "x")])
    for i in range(1, 100_000):
        graph.add_node(GraphNode(i, "op", "AddBackward0"))
        graph.add_edge(i - 1, i)
    graph.set_highlight([5_000], "active")
    layout = layout_graph(graph)
    svg = to_svg(graph, layout, legend=True)
    groups = node_groups(svg)
    summaries = [g for g in groups.values() if g.get("class") == "gradnb-node gradnb-summary"]
    assert len(summaries) == 1
    assert summaries[0].get("data-highlight") == "active"
    assert "collapsed nodes" in svg


def test_dot_lists_every_node_and_edge() -> None:
    graph, _ = build_seed()
    dot = to_dot(graph)
    assert dot.startswith('digraph "gradnb" {') and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    for node_id in graph.nodes:
        assert f'"n{node_id}" [' in dot
    for edge in graph.edges:
        assert f'"n{edge.src}" -> "n{edge.dst}"' in dot
    assert NODE_STYLES["saved"].fill in dot and "style=dashed" in dot
    assert "&lt;c &amp; d&gt;" in dot
    assert dot == to_dot(graph)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_accepts_the_dot_export(tmp_path: Path) -> None:
    graph, _ = build_seed()
    result = subprocess.run(
        ["dot", "-Tsvg"], input=to_dot(graph), capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "MulBackward0" in result.stdout


def test_empty_graph_renders() -> None:
    svg = to_svg(Graph(), layout_graph(Graph(), LayoutOptions(node_limit=None)))
    assert node_groups(svg) == {}
    assert to_dot(Graph()).startswith("digraph")


def test_a_narrow_graph_widens_to_fit_its_legend() -> None:
    graph = Graph([GraphNode(0, "leaf_grad", "x"), GraphNode(1, "op", "ExpBackward0")])
    graph.add_edge(0, 1)
    narrow = layout_graph(graph)
    root = ET.fromstring(to_svg(graph, narrow, legend=True))
    assert float(root.get("width")) > narrow.width
    assert float(root.get("width")) >= len("leaf, requires grad") * 6.6
