"""Time graph layout and SVG rendering of a random 2,000-node DAG (fixed seed).

Run ``python benchmarks/bench_layout.py`` (or ``python -m benchmarks.bench_layout``) from
the repository root; ``--quick`` takes fewer repeats. A benchmark driver calls
:func:`run` instead. Two cases are timed, best of N:

* ``full``: every node drawn (``node_limit=None``), the stress case for layout;
* ``collapsed``: the default options, which fold the graph to 200 nodes as a notebook does.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradnb.notebook.graphmodel import Graph, GraphNode
from gradnb.notebook.layout import LayoutOptions, layout_graph
from gradnb.notebook.render_svg import to_svg

NODE_COUNT = 2_000
SEED = 20_240_601
OP_NAMES = ("AddBackward0", "MulBackward0", "ExpBackward0", "MmBackward0", "ReluBackward0")


def random_dag(node_count: int = NODE_COUNT, seed: int = SEED) -> Graph:
    """A computation-graph-like DAG: ops read one or two of the dozen nodes made just before.

    About one node in seven is a fresh leaf, which starts a shallow branch that later merges
    into a deep one; those long edges are what makes layout expensive.
    """
    rng = random.Random(seed)
    graph = Graph()
    for node_id in range(node_count):
        if node_id < 4 or rng.random() < 0.15:
            graph.add_node(GraphNode(node_id, "leaf_grad", f"p{node_id}", "(64, 64) float32"))
            continue
        graph.add_node(GraphNode(node_id, "op", rng.choice(OP_NAMES)))
        window = range(max(0, node_id - 12), node_id)
        for src in rng.sample(window, k=min(len(window), rng.choice((1, 2, 2)))):
            graph.add_edge(src, node_id)
    return graph


def _best_ms(call: object, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best * 1e3


def run(quick: bool = False) -> dict[str, object]:
    """Best-of-N milliseconds for layout and SVG, per case, plus the sizes involved."""
    repeats = 3 if quick else 7
    graph = random_dag()
    results: dict[str, object] = {
        "benchmark": "layout",
        "nodes": len(graph),
        "edges": len(graph.edges),
        "repeats": repeats,
    }
    for case, options in (("full", LayoutOptions(node_limit=None)), ("collapsed", LayoutOptions())):
        layout = layout_graph(graph, options)
        results[case] = {
            "drawn_nodes": len(layout.graph),
            "layout_ms": round(_best_ms(lambda o=options: layout_graph(graph, o), repeats), 1),
            "svg_ms": round(_best_ms(lambda lay=layout: to_svg(graph, lay), repeats), 1),
            "total_ms": round(
                _best_ms(lambda o=options: to_svg(graph, layout_graph(graph, o)), repeats), 1
            ),
            "svg_bytes": len(to_svg(graph, layout).encode()),
        }
    return results


def main() -> None:
    """Print the timings of :func:`run`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    results = run(quick=parser.parse_args().quick)
    print(
        f"random DAG: {results['nodes']:,} nodes, {results['edges']:,} edges, "
        f"best of {results['repeats']}"
    )
    for case in ("full", "collapsed"):
        r = results[case]
        print(
            f"  {case:<9} drawn {r['drawn_nodes']:>5,} nodes   layout {r['layout_ms']:7.1f} ms   "
            f"svg {r['svg_ms']:6.1f} ms   layout+svg {r['total_ms']:7.1f} ms   "
            f"{r['svg_bytes'] / 1e6:.2f} MB"
        )


if __name__ == "__main__":
    main()
