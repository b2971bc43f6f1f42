"""The graph model and the layered layout: no overlaps, edges point down, big graphs collapse."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradnb.notebook.graphmodel import Graph, GraphEdge, GraphNode
from gradnb.notebook.layout import Layout, LayoutOptions, assign_layers, collapse, layout_graph


def seed_graph() -> Graph:
    """x, w, b -> MulBackward0 -> AddBackward0 -> MulBackward0 -> loss."""
    g = Graph()
    for node in [
        GraphNode(0, "leaf_grad", "x", "(3,) float32"),
        GraphNode(1, "leaf_grad", "w", "(3,) float32"),
        GraphNode(2, "leaf_grad", "b", "(3,) float32"),
        GraphNode(3, "op", "MulBackward0"),
        GraphNode(4, "op", "AddBackward0"),
        GraphNode(5, "op", "MulBackward0"),
        GraphNode(6, "output", "loss", "() float32"),
        GraphNode(7, "saved", "self", "12 B"),
    ]:
        g.add_node(node)
    for src, dst in [(0, 3), (1, 3), (3, 4), (2, 4), (4, 5), (5, 6)]:
        g.add_edge(src, dst)
    g.add_edge(7, 3, "saved")
    return g


def chain(length: int) -> Graph:
    g = Graph([GraphNode(0, "leaf_grad", "x", "() float32")])
    for i in range(1, length):
        g.add_node(GraphNode(i, "op", "AddBackward0"))
        g.add_edge(i - 1, i)
    return g


def diamond() -> Graph:
    """a -> b = a + a -> c = b + b, plus a side path so the middle layer has two nodes."""
    g = Graph(
        [
            GraphNode(0, "leaf_grad", "a"),
            GraphNode(1, "op", "AddBackward0"),
            GraphNode(2, "op", "MulBackward0"),
            GraphNode(3, "op", "AddBackward0"),
            GraphNode(4, "output", "c"),
        ]
    )
    for src, dst in [(0, 1), (0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]:
        g.add_edge(src, dst)
    return g


def fan_in(width: int) -> Graph:
    g = Graph([GraphNode(i, "leaf_grad", f"p{i}", "(2,) float64") for i in range(width)])
    g.add_node(GraphNode(width, "op", "StackBackward0"))
    for i in range(width):
        g.add_edge(i, width)
    return g


def assert_well_formed(layout: Layout) -> None:
    """Boxes are disjoint, every edge runs from an upper layer down to a lower one."""
    boxes = layout.boxes
    assert set(boxes) == set(layout.graph.nodes)
    for (a, box_a), (b, box_b) in itertools.combinations(sorted(boxes.items()), 2):
        apart = (
            box_a.right <= box_b.x
            or box_b.right <= box_a.x
            or box_a.bottom <= box_b.y
            or box_b.bottom <= box_a.y
        )
        assert apart, f"boxes of nodes {a} and {b} overlap: {box_a} {box_b}"
    for box in boxes.values():
        assert box.x >= 0 and box.y >= 0
        assert box.right <= layout.width and box.bottom <= layout.height
    assert len(layout.routes) == len(layout.graph.edges)
    for route in layout.routes:
        assert layout.layers[route.src] < layout.layers[route.dst]
        assert boxes[route.src].bottom < boxes[route.dst].y
        first, last = route.points[0], route.points[-1]
        assert first[1] == boxes[route.src].bottom
        assert boxes[route.src].x <= first[0] <= boxes[route.src].right
        assert last[1] == boxes[route.dst].y
        assert boxes[route.dst].x <= last[0] <= boxes[route.dst].right
        ys = [y for _, y in route.points]
        assert ys == sorted(ys)


@pytest.mark.parametrize(
    "graph",
    [seed_graph(), chain(12), diamond(), fan_in(50), Graph([GraphNode(0, "leaf", "c")]), Graph()],
    ids=["seed", "chain", "diamond", "fan_in_50", "single", "empty"],
)
def test_fixed_graphs_lay_out_without_overlap(graph: Graph) -> None:
    assert_well_formed(layout_graph(graph))


@st.composite
def random_dags(draw: st.DrawFn) -> Graph:
    size = draw(st.integers(min_value=1, max_value=30))
    kinds = ["leaf_grad", "leaf", "op", "saved", "output", "accumulate"]
    g = Graph()
    for i in range(size):
        label = draw(st.text("abcdefghijklmnopqrstuvwxyz_0123456789", max_size=40))
        sublabel = draw(st.sampled_from(["", "(3,) float32", "(128, 256) float64", "4.0 KiB"]))
        g.add_node(GraphNode(i, draw(st.sampled_from(kinds)), label, sublabel))
    if size > 1:
        pairs = st.tuples(st.integers(0, size - 1), st.integers(0, size - 1))
        for a, b in draw(st.lists(pairs, max_size=3 * size)):
            if a != b:
                g.add_edge(min(a, b), max(a, b), draw(st.sampled_from(["data", "saved"])))
    return g


@settings(max_examples=150, deadline=None)
@given(random_dags())
def test_random_dags_lay_out_without_overlap(graph: Graph) -> None:
    assert_well_formed(layout_graph(graph))


@settings(max_examples=40, deadline=None)
@given(random_dags(), st.integers(min_value=2, max_value=12))
def test_collapsed_random_dags_stay_within_the_limit(graph: Graph, limit: int) -> None:
    options = LayoutOptions(node_limit=limit, chain_min_run=3)
    layout = layout_graph(graph, options)
    assert len(layout.graph) <= limit
    assert_well_formed(layout)
    hidden = [i for ids in layout.members.values() for i in ids]
    assert len(hidden) == len(set(hidden))
    assert set(hidden) | (set(layout.graph.nodes) - set(layout.members)) == set(graph.nodes)


def test_layout_does_not_depend_on_insertion_order() -> None:
    forward = seed_graph()
    backward = Graph(reversed(forward.ordered_nodes()), reversed(forward.edges))
    assert layout_graph(forward).boxes == layout_graph(backward).boxes
    assert layout_graph(forward).routes == layout_graph(backward).routes


def test_inputs_sit_on_top_and_loss_at_the_bottom() -> None:
    layout = layout_graph(seed_graph())
    assert layout.layers[0] == layout.layers[1] == 0
    assert layout.layers[6] == max(layout.layers.values())
    # b feeds only AddBackward0, so it sits right above it rather than in the top row.
    assert layout.layers[2] == layout.layers[4] - 1


def test_boxes_grow_with_their_labels() -> None:
    g = Graph([GraphNode(0, "op", "Mm"), GraphNode(1, "op", "ConvolutionBackward0")])
    boxes = layout_graph(g).boxes
    assert boxes[1].w > boxes[0].w
    assert boxes[1].w >= len("ConvolutionBackward0") * 7


def test_hundred_thousand_chain_collapses_without_recursion() -> None:
    layout = layout_graph(chain(100_000))
    assert len(layout.graph) <= LayoutOptions().node_limit
    assert_well_formed(layout)
    ((summary_id, hidden),) = layout.members.items()
    assert summary_id < 0
    assert len(hidden) + len(layout.graph) - 1 == 100_000
    assert layout.graph.nodes[summary_id].label == f"AddBackward0 ×{len(hidden):,}"


def test_hundred_thousand_chain_layers_iteratively() -> None:
    layers = assign_layers(chain(100_000))
    assert layers[99_999] == 99_999


def test_truncation_keeps_the_nodes_nearest_the_outputs() -> None:
    g = fan_in(300)
    drawn, members = collapse(g, LayoutOptions(node_limit=20))
    assert len(drawn) == 20
    assert 300 in drawn  # the consumer stays; the summary stands for the inputs it lost
    ((summary_id, hidden),) = members.items()
    assert drawn.nodes[summary_id].label == f"… {len(hidden):,} more nodes"
    assert GraphEdge(summary_id, 300) in drawn.edges
    assert all(edge.dst != summary_id for edge in drawn.edges)


def test_summary_takes_the_strongest_highlight_it_hides() -> None:
    g = chain(500)
    g.set_highlight(range(100, 200), "path")
    g.set_highlight([150], "active")
    drawn, members = collapse(g, LayoutOptions())
    summaries = [drawn.nodes[i] for i in members]
    assert [s.highlight for s in summaries] == ["active"]


def test_small_graphs_are_not_collapsed() -> None:
    g = chain(20)
    assert collapse(g, LayoutOptions())[0] is g
    assert len(layout_graph(chain(300), LayoutOptions(node_limit=None)).graph) == 300


def test_a_long_chain_folds_even_in_a_small_graph() -> None:
    drawn, members = collapse(chain(50), LayoutOptions())
    (summary,) = [drawn.nodes[i] for i in members]
    assert summary.label == "AddBackward0 ×46" and summary.sublabel == "46 ops folded"
    # x, the run's first op, the fold, the run's last op, the output op: 1 + 1 + 46 + 1 + 1
    assert len(drawn) == 5
    assert collapse(chain(50), LayoutOptions(long_chain_run=None))[0] is not drawn


def test_a_500_op_loop_with_saved_tensors_is_one_readable_box() -> None:
    import gradnb
    from gradnb.notebook import GraphView

    x = gradnb.ones(3, requires_grad=True)
    with gradnb.autograd.graph_trace() as recording:
        y = x
        for step in range(500):
            y = (y * 0.5).sin() if step % 2 else y * 1.001
    view = GraphView(recording, namespace={"x": x, "y": y})
    assert view.text().startswith("GraphView: 750 ops")
    ops = [n for n in view.layout.graph.nodes.values() if n.kind == "op"]
    (fold,) = [n for n in view.layout.graph.nodes.values() if n.kind == "summary"]
    assert fold.sublabel == f"{750 - len(ops):,} ops folded"  # the counts add up
    assert view.layout.width < 800 and view.layout.height < 800  # not a staircase


def test_cycles_are_rejected() -> None:
    g = Graph([GraphNode(0, "op", "A"), GraphNode(1, "op", "B")])
    g.add_edge(0, 1)
    g.add_edge(1, 0)
    with pytest.raises(ValueError, match="cycle"):
        layout_graph(g)


def test_graph_model_validates_its_input() -> None:
    g = Graph([GraphNode(0, "leaf", "c")])
    with pytest.raises(ValueError, match="duplicate"):
        g.add_node(GraphNode(0, "op", "X"))
    with pytest.raises(ValueError, match="kind"):
        GraphNode(1, "tensor", "t")
    with pytest.raises(ValueError, match="highlight"):
        GraphNode(1, "op", "X", highlight="glow")
    with pytest.raises(ValueError, match="reserved"):
        GraphNode(-1, "op", "X")
    with pytest.raises(ValueError, match="self-loop"):
        g.add_edge(0, 0)
    with pytest.raises(KeyError):
        g.add_edge(0, 7)


def test_repeated_edges_are_kept_once_and_ordered() -> None:
    g = diamond()
    assert g.edges.count(GraphEdge(0, 1)) == 1
    assert g.ordered_edges() == sorted(g.edges)
    copy = g.copy()
    copy.set_highlight([0], "path")
    assert g.node(0).highlight is None and copy.node(0).highlight == "path"
    copy.clear_highlights()
    assert copy.node(0).highlight is None
