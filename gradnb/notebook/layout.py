"""A deterministic layered layout for computation graphs (Sugiyama style), in pure Python.

Data flows top to bottom: inputs sit at the top, the loss at the bottom. The steps are

1. collapse graphs above ``LayoutOptions.node_limit``: long chains of ops become one
   summary node, and if that is not enough, only the nodes nearest the outputs stay and
   one "… k more nodes" node stands for the rest;
2. layer assignment by longest path from the inputs (iterative, so 100k-deep graphs
   work), with each input pulled down to sit right above its first consumer;
3. dummy vertices on edges that span several layers, so edges bend around boxes;
4. crossing reduction by barycenter sweeps, keeping the order with fewest crossings;
5. x coordinates by repeatedly pulling each vertex towards the mean of its neighbours and
   solving the "stay in order, keep a gap" problem exactly (pool-adjacent-violators), so
   boxes never overlap.

Every loop runs over ids in sorted order and ties break by id, so the same graph always
gets the same coordinates.

>>> from gradnb.notebook.graphmodel import Graph, GraphNode
>>> g = Graph([GraphNode(0, "leaf_grad", "x"), GraphNode(1, "op", "ExpBackward0")])
>>> _ = g.add_edge(0, 1)
>>> lay = layout_graph(g)
>>> lay.layers
{0: 0, 1: 1}
>>> lay.boxes[0].bottom < lay.boxes[1].y
True
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from gradnb.notebook.graphmodel import Graph, GraphEdge, GraphNode

__all__ = [
    "CHAR_WIDTH_EM",
    "LABEL_FONT_PX",
    "SUBLABEL_FONT_PX",
    "Box",
    "EdgeRoute",
    "Layout",
    "LayoutOptions",
    "assign_layers",
    "box_size",
    "chain_label",
    "clip_text",
    "collapse",
    "layout_graph",
]

#: Font sizes the renderer uses; the layout sizes boxes from them.
LABEL_FONT_PX = 12.0
SUBLABEL_FONT_PX = 10.5
#: Advance width of a monospace glyph in em; 0.62 covers the common monospace fonts.
CHAR_WIDTH_EM = 0.62

_BOX_PADDING_X = 12.0
_MIN_BOX_WIDTH = 44.0
_BOX_HEIGHT_ONE_LINE = 26.0
_BOX_HEIGHT_TWO_LINES = 40.0
_MAX_PORT_SPREAD = 0.6  # share of a box's width that edge ends may spread over
_PORT_STEP = 12.0
_COORDINATE_PASSES = 4
# Above this many vertices (nodes plus dummies) crossing reduction and coordinate passes
# do less work, so a 2,000-node graph still lays out in well under a second.
_LARGE_VERTEX_COUNT = 10_000
_DUMMY_WEIGHT = 2.0  # dummies pull harder, which keeps long edges straight
_HIGHLIGHT_STRENGTH = {"active": 3, "path": 2, "done": 1, "removed": 6, "added": 5,
                       "changed": 4, None: 0}


@dataclass(frozen=True)
class LayoutOptions:
    """Knobs for :func:`layout_graph`; the defaults suit notebook output.

    ``node_limit`` is the most nodes drawn before collapsing (``None`` never collapses);
    ``chain_min_run`` the shortest chain of single-input, single-output ops that collapsing
    folds into one node; ``long_chain_run`` the shortest chain folded even in a graph under
    the limit (a 100-step loop is one box, not a column thousands of pixels tall; ``None``
    never); ``sweeps`` the barycenter sweep pairs of crossing reduction.
    """

    node_limit: int | None = 200
    chain_min_run: int = 6
    long_chain_run: int | None = 24
    sweeps: int = 4
    layer_gap: float = 40.0
    node_gap: float = 18.0
    edge_gap: float = 10.0
    margin: float = 16.0
    max_label_chars: int = 32

    def __post_init__(self) -> None:
        if self.node_limit is not None and self.node_limit < 2:
            raise ValueError(f"node_limit must be at least 2 (or None), got {self.node_limit}")
        if self.chain_min_run < 3:
            raise ValueError(f"chain_min_run must be at least 3, got {self.chain_min_run}")


@dataclass(frozen=True, slots=True)
class Box:
    """A node's rectangle: top-left corner ``(x, y)``, width ``w``, height ``h``."""

    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        """Horizontal centre."""
        return self.x + self.w / 2

    @property
    def right(self) -> float:
        """Right edge."""
        return self.x + self.w

    @property
    def bottom(self) -> float:
        """Bottom edge."""
        return self.y + self.h


@dataclass(frozen=True, slots=True)
class EdgeRoute:
    """An edge drawn as a polyline from ``src``'s bottom to ``dst``'s top.

    Consecutive points either share an x (a straight drop past a layer of boxes) or sit in
    the gap between two layers, where a renderer may draw a curve.
    """

    src: int
    dst: int
    kind: str
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Layout:
    """Where everything goes.

    ``graph`` is the graph actually drawn: the input itself, or its collapsed form whose
    summary nodes (negative ids) stand for the original ids listed in ``members``.
    """

    graph: Graph
    boxes: dict[int, Box]
    routes: list[EdgeRoute]
    layers: dict[int, int]
    width: float
    height: float
    members: dict[int, tuple[int, ...]] = field(default_factory=dict)


def clip_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def box_size(node: GraphNode, max_label_chars: int = 32) -> tuple[float, float]:
    """Width and height of ``node``'s box, from its (clipped) label and sublabel."""
    label = len(clip_text(node.label, max_label_chars)) * LABEL_FONT_PX * CHAR_WIDTH_EM
    sublabel = len(clip_text(node.sublabel, max_label_chars)) * SUBLABEL_FONT_PX * CHAR_WIDTH_EM
    width = max(_MIN_BOX_WIDTH, max(label, sublabel) + 2 * _BOX_PADDING_X)
    height = _BOX_HEIGHT_TWO_LINES if node.sublabel else _BOX_HEIGHT_ONE_LINE
    return width, height


def layout_graph(graph: Graph, options: LayoutOptions | None = None) -> Layout:
    """Lay out ``graph`` (collapsing it first if it is above ``options.node_limit``)."""
    options = options or LayoutOptions()
    drawn, members = collapse(graph, options)
    layers = assign_layers(drawn)
    return _place(drawn, layers, members, options)


# --- collapsing -------------------------------------------------------------------------


def collapse(graph: Graph, options: LayoutOptions) -> tuple[Graph, dict[int, tuple[int, ...]]]:
    """``graph`` reduced to at most ``options.node_limit`` nodes, and what each summary hides.

    Returns ``graph`` itself when it is small enough and has no chain of
    ``options.long_chain_run`` ops.
    """
    limit = options.node_limit
    if limit is None:
        return graph, {}
    ids = _SummaryIds(graph)
    if len(graph) <= limit:
        if options.long_chain_run is None:
            return graph, {}
        return _collapse_chains(graph, options.long_chain_run, ids)
    drawn, members = _collapse_chains(graph, options.chain_min_run, ids)
    if len(drawn) > limit:
        drawn, members = _keep_nearest_outputs(drawn, members, limit, ids)
    return drawn, members


class _SummaryIds:
    """Hands out -1, -2, … below every id already in the graph."""

    def __init__(self, graph: Graph) -> None:
        self._next = min(min(graph.nodes, default=0), 0) - 1

    def take(self) -> int:
        node_id, self._next = self._next, self._next - 1
        return node_id


def _neighbours(graph: Graph) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Sorted, duplicate-free predecessor and successor lists of every node."""
    preds: dict[int, list[int]] = {i: [] for i in sorted(graph.nodes)}
    succs: dict[int, list[int]] = {i: [] for i in preds}
    previous = None
    for edge in graph.ordered_edges():
        pair = (edge.src, edge.dst)
        if pair != previous:  # edges are sorted, so a repeated pair is adjacent
            succs[edge.src].append(edge.dst)
            preds[edge.dst].append(edge.src)
        previous = pair
    for lists in (preds, succs):
        for neighbours in lists.values():
            neighbours.sort()
    return preds, succs


def _collapse_chains(
    graph: Graph, min_run: int, ids: _SummaryIds
) -> tuple[Graph, dict[int, tuple[int, ...]]]:
    """Fold the middle of every run of >= ``min_run`` single-in, single-out ops.

    A saved-tensor box that only its op uses rides along with the op: it neither breaks the
    run nor stays behind when the op is folded (a 500-op loop becomes one box, not a
    staircase of 500 saved boxes).
    """
    preds, succs = _neighbours(graph)
    attached = {
        node_id: [p for p in preds[node_id]
                  if graph.nodes[p].kind == "saved" and succs[p] == [node_id] and not preds[p]]
        for node_id in preds
    }
    data_preds = {i: [p for p in preds[i] if p not in attached[i]] for i in preds}

    def in_chain(node_id: int) -> bool:
        return (
            graph.nodes[node_id].kind == "op"
            and len(data_preds[node_id]) == 1
            and len(succs[node_id]) == 1
        )

    groups: list[tuple[GraphNode, list[int]]] = []
    for start in preds:
        if not in_chain(start) or in_chain(data_preds[start][0]):
            continue
        run = [start]
        while in_chain(succs[run[-1]][0]):
            run.append(succs[run[-1]][0])
        if len(run) >= min_run:
            # Keep both ends so the reader sees what enters and leaves the run.
            hidden = run[1:-1]
            extra = [saved for op in hidden for saved in attached[op]]
            summary = _chain_summary(ids.take(), [graph.nodes[i] for i in hidden],
                                     [graph.nodes[i] for i in extra])
            groups.append((summary, hidden + extra))
    return _contract(graph, groups, {})


def chain_label(names: list[str]) -> str:
    """A chain of ops by its shortest repeating body: ``MulBackward0 → ExpBackward0 ×249``
    (``+1`` when the last repetition is cut short), else ``N ops``."""
    for period in range(1, min(len(names) // 2, 8) + 1):
        if all(names[i] == names[i % period] for i in range(len(names))):
            repeats, rest = divmod(len(names), period)
            body = " → ".join(names[:period])
            return f"{body} ×{repeats:,}" + (f" +{rest}" if rest else "")
    return f"{len(names):,} ops"


def _chain_summary(node_id: int, hidden: list[GraphNode], saved: list[GraphNode]) -> GraphNode:
    counts = Counter(node.label for node in hidden)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    label = chain_label([node.label for node in hidden])
    parts = ", ".join(f"{name} ×{count:,}" for name, count in ranked[:8])
    more = ", …" if len(ranked) > 8 else ""
    kept = f", with {len(saved):,} saved-tensor boxes" if saved else ""
    return GraphNode(
        node_id,
        "summary",
        label,
        f"{len(hidden):,} ops folded",
        f"{len(hidden):,} ops in a chain, folded{kept}: {parts}{more}",
        _strongest_highlight(hidden),
    )


def _keep_nearest_outputs(
    graph: Graph, members: dict[int, tuple[int, ...]], limit: int, ids: _SummaryIds
) -> tuple[Graph, dict[int, tuple[int, ...]]]:
    """Keep the ``limit - 1`` nodes nearest the outputs; one summary node feeds the rest.

    A node is kept only after all its consumers are, so the hidden part is closed under
    inputs and folding it into one node cannot create a cycle.
    """
    preds, succs = _neighbours(graph)
    height = _height_above_outputs(preds, succs)
    waiting = {node_id: len(succs[node_id]) for node_id in succs}
    ready = [(height[i], -i) for i in succs if not succs[i]]
    heapq.heapify(ready)
    kept: set[int] = set()
    while ready and len(kept) < limit - 1:
        _, negated = heapq.heappop(ready)
        kept.add(-negated)
        for pred in preds[-negated]:
            waiting[pred] -= 1
            if waiting[pred] == 0:
                heapq.heappush(ready, (height[pred], -pred))
    hidden = [i for i in succs if i not in kept]
    hidden_nodes = [graph.nodes[i] for i in hidden]
    original_count = sum(len(members.get(i, (i,))) for i in hidden)
    summary = GraphNode(
        ids.take(),
        "summary",
        f"… {original_count:,} more nodes",
        "nearer the inputs",
        f"{original_count:,} nodes nearer the inputs are hidden; "
        f"showing the {len(kept):,} nearest the outputs",
        _strongest_highlight(hidden_nodes),
    )
    return _contract(graph, [(summary, hidden)], members)


def _height_above_outputs(
    preds: dict[int, list[int]], succs: dict[int, list[int]]
) -> dict[int, int]:
    """Longest path from each node down to an output, computed without recursion."""
    height: dict[int, int] = {}
    waiting = {node_id: len(succs[node_id]) for node_id in succs}
    queue = deque(i for i in succs if not succs[i])
    while queue:
        node_id = queue.popleft()
        height[node_id] = max((height[s] + 1 for s in succs[node_id]), default=0)
        for pred in preds[node_id]:
            waiting[pred] -= 1
            if waiting[pred] == 0:
                queue.append(pred)
    if len(height) != len(succs):
        raise ValueError("graph has a cycle; only acyclic graphs can be laid out")
    return height


def _contract(
    graph: Graph,
    groups: list[tuple[GraphNode, list[int]]],
    members: dict[int, tuple[int, ...]],
) -> tuple[Graph, dict[int, tuple[int, ...]]]:
    """Replace each group of nodes by its summary node, rewiring edges to it."""
    if not groups:
        return graph, members
    owner: dict[int, int] = {}
    new_members = dict(members)
    for summary, hidden in groups:
        originals: list[int] = []
        for node_id in hidden:
            owner[node_id] = summary.id
            originals.extend(new_members.pop(node_id, (node_id,)))
        new_members[summary.id] = tuple(sorted(originals))
    kept = (graph.nodes[i] for i in sorted(graph.nodes) if i not in owner)
    result = Graph([*kept, *(summary for summary, _ in groups)])
    for edge in graph.ordered_edges():
        src, dst = owner.get(edge.src, edge.src), owner.get(edge.dst, edge.dst)
        if src != dst:
            result.add_edge(src, dst, edge.kind)
    return result, new_members


def _strongest_highlight(nodes: Iterable[GraphNode]) -> str | None:
    return max(
        (node.highlight for node in nodes), key=_HIGHLIGHT_STRENGTH.__getitem__, default=None
    )


# --- layering ---------------------------------------------------------------------------


def assign_layers(graph: Graph) -> dict[int, int]:
    """Layer of every node: longest path from an input, then nodes moved next to consumers.

    Every edge goes from a lower layer number to a higher one. Raises ``ValueError`` on a
    cycle.
    """
    preds, succs = _neighbours(graph)
    waiting = {node_id: len(preds[node_id]) for node_id in preds}
    queue = deque(i for i in preds if not preds[i])
    layer: dict[int, int] = {}
    order: list[int] = []
    while queue:
        node_id = queue.popleft()
        order.append(node_id)
        layer[node_id] = max((layer[p] + 1 for p in preds[node_id]), default=0)
        for succ in succs[node_id]:
            waiting[succ] -= 1
            if waiting[succ] == 0:
                queue.append(succ)
    if len(layer) != len(preds):
        raise ValueError("graph has a cycle; only acyclic graphs can be laid out")
    for node_id in reversed(order):
        node_succs = succs[node_id]
        if node_succs and len(node_succs) >= len(preds[node_id]):
            # Sinking a node with more consumers than inputs shortens more edges than it
            # stretches: a leaf used late sits right above its first consumer, not at the
            # top with a long edge (and many dummy vertices) down.
            layer[node_id] = min(layer[s] for s in node_succs) - 1
    return {node_id: layer[node_id] for node_id in preds}


# --- placement --------------------------------------------------------------------------


class _Vertices:
    """Real nodes (index = position in sorted ids) plus dummies on long edges."""

    def __init__(self, graph: Graph, layers: dict[int, int], options: LayoutOptions) -> None:
        self.node_ids = sorted(graph.nodes)
        self.real_count = len(self.node_ids)
        index = {node_id: i for i, node_id in enumerate(self.node_ids)}
        sizes = [box_size(graph.nodes[i], options.max_label_chars) for i in self.node_ids]
        self.width = [w for w, _ in sizes]
        self.height = [h for _, h in sizes]
        self.layer = [layers[i] for i in self.node_ids]
        self.up: list[list[int]] = [[] for _ in self.node_ids]
        self.down: list[list[int]] = [[] for _ in self.node_ids]
        self.chains: list[tuple[GraphEdge, list[int]]] = []
        for edge in graph.ordered_edges():
            chain = [index[edge.src]]
            for layer in range(layers[edge.src] + 1, layers[edge.dst]):
                chain.append(self._add_dummy(layer))
            chain.append(index[edge.dst])
            for upper, lower in itertools.pairwise(chain):
                self.down[upper].append(lower)
                self.up[lower].append(upper)
            self.chains.append((edge, chain))

    def _add_dummy(self, layer: int) -> int:
        self.width.append(0.0)
        self.height.append(0.0)
        self.layer.append(layer)
        self.up.append([])
        self.down.append([])
        return len(self.layer) - 1


def _place(
    graph: Graph,
    layers: dict[int, int],
    members: dict[int, tuple[int, ...]],
    options: LayoutOptions,
) -> Layout:
    vertices = _Vertices(graph, layers, options)
    large = len(vertices.layer) > _LARGE_VERTEX_COUNT
    rows = _order_rows(vertices, min(options.sweeps, 1) if large else options.sweeps)
    x = _assign_x(vertices, rows, options, 2 if large else _COORDINATE_PASSES)
    row_top, row_height = _assign_rows(vertices, rows, options)
    left = min((x[v] - vertices.width[v] / 2 for row in rows for v in row), default=0.0)
    shift = options.margin - left
    boxes: dict[int, Box] = {}
    for v, node_id in enumerate(vertices.node_ids):
        row = vertices.layer[v]
        top = row_top[row] + (row_height[row] - vertices.height[v]) / 2
        boxes[node_id] = Box(
            x[v] + shift - vertices.width[v] / 2, top, vertices.width[v], vertices.height[v]
        )
    routes = _route_edges(vertices, boxes, x, shift, row_top, row_height)
    width = max((box.right for box in boxes.values()), default=0.0) + options.margin
    height = max((box.bottom for box in boxes.values()), default=0.0) + options.margin
    return Layout(graph, boxes, routes, dict(layers), width, height, members)


def _order_rows(vertices: _Vertices, sweeps: int) -> list[list[int]]:
    """Vertices of each layer, left to right, after barycenter crossing reduction."""
    # assign_layers numbers layers 0, 1, 2, ... with none empty (a longest path spans them).
    rows: list[list[int]] = [[] for _ in range(max(vertices.layer, default=-1) + 1)]
    for v, layer in enumerate(vertices.layer):
        rows[layer].append(v)
    position = [0] * len(vertices.layer)
    _number(rows, position)
    best = [row[:] for row in rows]
    fewest = _count_crossings(rows, vertices.up, position)
    for _ in range(sweeps):
        if fewest == 0:
            break
        for index in range(1, len(rows)):
            _sort_by_barycenter(rows, index, vertices.up, position)
        for index in range(len(rows) - 2, -1, -1):
            _sort_by_barycenter(rows, index, vertices.down, position)
        crossings = _count_crossings(rows, vertices.up, position)
        if crossings < fewest:
            fewest, best = crossings, [row[:] for row in rows]
    _number(best, position)
    return best


def _number(rows: list[list[int]], position: list[int]) -> None:
    for row in rows:
        for i, v in enumerate(row):
            position[v] = i


def _sort_by_barycenter(
    rows: list[list[int]], index: int, neighbours: list[list[int]], position: list[int]
) -> None:
    def key(v: int) -> tuple[float, int]:
        adjacent = neighbours[v]
        if not adjacent:
            return (position[v], position[v])
        return (sum(position[u] for u in adjacent) / len(adjacent), position[v])

    row = sorted(rows[index], key=key)
    rows[index] = row
    for i, v in enumerate(row):
        position[v] = i


def _count_crossings(rows: list[list[int]], up: list[list[int]], position: list[int]) -> int:
    """Edge crossings between all adjacent rows (inversions counted with a Fenwick tree)."""
    total = 0
    for lower in rows[1:]:
        ends = sorted((position[u], position[v]) for v in lower for u in up[v])
        tree = [0] * (len(lower) + 1)
        for seen, (_, end) in enumerate(ends):
            at_most_end = 0
            i = end + 1
            while i > 0:
                at_most_end += tree[i]
                i -= i & -i
            total += seen - at_most_end
            i = end + 1
            while i <= len(lower):
                tree[i] += 1
                i += i & -i
    return total


def _assign_x(
    vertices: _Vertices, rows: list[list[int]], options: LayoutOptions, passes: int
) -> list[float]:
    """Centre x of every vertex; neighbours in a row never come closer than their gap."""
    x = [0.0] * len(vertices.layer)
    for row in rows:
        _pack(row, [0.0] * len(row), vertices, x, options)  # a start: centred, tightly packed
    for _ in range(passes):
        for row in rows[1:]:
            _pull_towards(row, (vertices.up,), vertices, x, options)
        for row in reversed(rows[:-1]):
            _pull_towards(row, (vertices.down,), vertices, x, options)
    for row in rows:
        _pull_towards(row, (vertices.up, vertices.down), vertices, x, options)
    return x


def _pull_towards(
    row: list[int],
    sides: tuple[list[list[int]], ...],
    vertices: _Vertices,
    x: list[float],
    options: LayoutOptions,
) -> None:
    desired = []
    for v in row:
        total, count = 0.0, 0
        for side in sides:
            for u in side[v]:
                total += x[u]
            count += len(side[v])
        desired.append(total / count if count else x[v])
    _pack(row, desired, vertices, x, options)


def _pack(
    row: list[int],
    desired: list[float],
    vertices: _Vertices,
    x: list[float],
    options: LayoutOptions,
) -> None:
    """Set ``x`` for ``row`` as close (least squares) to ``desired`` as the gaps allow.

    Writing ``x[i] = offset[i] + z[i]``, where ``offset`` accumulates the minimum gaps,
    turns the problem into isotonic regression of ``desired - offset`` (``z`` must not
    decrease), which pool-adjacent-violators solves in linear time.
    """
    width, real_count = vertices.width, vertices.real_count
    offsets = [0.0] * len(row)
    for i in range(1, len(row)):
        left, right = row[i - 1], row[i]
        gap = options.node_gap if left < real_count and right < real_count else options.edge_gap
        offsets[i] = offsets[i - 1] + (width[left] + width[right]) / 2 + gap
    means: list[float] = []  # pooled blocks, as parallel lists for speed
    weights: list[float] = []
    counts: list[int] = []
    for v, target, offset in zip(row, desired, offsets):
        mean, weight, count = target - offset, (1.0 if v < real_count else _DUMMY_WEIGHT), 1
        while means and means[-1] > mean:
            merged = weights[-1] + weight
            mean = (means.pop() * weights.pop() + mean * weight) / merged
            weight, count = merged, count + counts.pop()
        means.append(mean)
        weights.append(weight)
        counts.append(count)
    i = 0
    for mean, count in zip(means, counts):
        for _ in range(count):
            x[row[i]] = offsets[i] + mean
            i += 1


def _assign_rows(
    vertices: _Vertices, rows: list[list[int]], options: LayoutOptions
) -> tuple[dict[int, float], dict[int, float]]:
    """Top and height of every layer's band, keyed by layer number."""
    row_top: dict[int, float] = {}
    row_height: dict[int, float] = {}
    y = options.margin
    for layer, row in enumerate(rows):
        height = max((vertices.height[v] for v in row), default=0.0)
        row_top[layer], row_height[layer] = y, height
        y += height + options.layer_gap
    return row_top, row_height


def _route_edges(
    vertices: _Vertices,
    boxes: dict[int, Box],
    x: list[float],
    shift: float,
    row_top: dict[int, float],
    row_height: dict[int, float],
) -> list[EdgeRoute]:
    """Polylines through each edge's dummies, with edge ends spread along box sides."""
    outgoing: dict[int, list[tuple[float, int]]] = {}
    incoming: dict[int, list[tuple[float, int]]] = {}
    for number, (_, chain) in enumerate(vertices.chains):
        outgoing.setdefault(chain[0], []).append((x[chain[1]], number))
        incoming.setdefault(chain[-1], []).append((x[chain[-2]], number))
    start_x = _spread_ports(outgoing, vertices, x, shift)
    end_x = _spread_ports(incoming, vertices, x, shift)
    routes = []
    for number, (edge, chain) in enumerate(vertices.chains):
        points = [(start_x[number], boxes[edge.src].bottom)]
        for dummy in chain[1:-1]:
            layer = vertices.layer[dummy]
            points.append((x[dummy] + shift, row_top[layer]))
            points.append((x[dummy] + shift, row_top[layer] + row_height[layer]))
        points.append((end_x[number], boxes[edge.dst].y))
        routes.append(EdgeRoute(edge.src, edge.dst, edge.kind, _drop_collinear(points)))
    return routes


def _drop_collinear(points: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """``points`` without the middle ones of vertical runs (a straight drop past dummies)."""
    kept = points[:1]
    for i in range(1, len(points) - 1):
        if not kept[-1][0] == points[i][0] == points[i + 1][0]:
            kept.append(points[i])
    kept.append(points[-1])
    return tuple(kept)


def _spread_ports(
    ends: dict[int, list[tuple[float, int]]], vertices: _Vertices, x: list[float], shift: float
) -> dict[int, float]:
    """x of each edge end on a box side, ordered like the edges' other ends to avoid crossings."""
    port_x: dict[int, float] = {}
    for vertex, edge_ends in ends.items():
        edge_ends.sort()
        spread = min(vertices.width[vertex] * _MAX_PORT_SPREAD, _PORT_STEP * (len(edge_ends) - 1))
        step = spread / (len(edge_ends) - 1) if len(edge_ends) > 1 else 0.0
        left = x[vertex] + shift - spread / 2
        for i, (_, number) in enumerate(edge_ends):
            port_x[number] = left + i * step
    return port_x
