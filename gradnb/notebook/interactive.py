"""The graph's interactive HTML form: zoom, pan, fold and hover with no extension at all.

The output is one ``<div>`` holding the static drawing as an ``<img>`` (an SVG data URI) and
one inline ``<script>``. Where scripts run (JupyterLab, Notebook 7, VS Code, Colab, nbviewer)
the script swaps the image for the same SVG made live:

- the mouse wheel zooms around the pointer, dragging pans, buttons zoom, fit and fold;
- every module call (``model.fc1``) and every long chain of ops is a framed group whose name
  folds it into one box (and the box unfolds it again); edges into a folded group end on it;
- hovering a box shows its details: shape, dtype, bytes, module, gradient, source line.

Where scripts do not run or HTML is sanitized (an untrusted notebook, GitHub), the ``<img>``
stays: a data-URI image survives sanitizers that strip inline ``<svg>``, so the static graph
still shows instead of a run-on paragraph of labels. No CDN, no ipywidgets, no ids from
``id()`` or randomness: the same graph gives byte-identical HTML.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from dataclasses import dataclass

from gradnb.notebook.graphmodel import Graph
from gradnb.notebook.layout import Layout, chain_label

__all__ = ["CHAIN_GROUP_MIN", "FOLD_FIRST_ABOVE", "Group", "graph_groups", "interactive_html"]

#: Graphs with more drawn boxes than this start with their top-level groups folded.
FOLD_FIRST_ABOVE = 40
#: The shortest run of single-input, single-output ops that becomes a foldable chain group.
CHAIN_GROUP_MIN = 4


@dataclass(frozen=True)
class Group:
    """A foldable set of drawn boxes: a module call or a chain of ops."""

    label: str
    members: tuple[int, ...]
    folded: bool
    summary: str


def graph_groups(graph: Graph, layout: Layout) -> list[Group]:
    """The module groups and op chains of the drawn graph, outer groups before inner ones."""
    drawn = layout.graph
    paths = {node_id: _path(node_id, graph, layout) for node_id in drawn.nodes}
    by_label: dict[str, list[int]] = {}
    for node_id in sorted(drawn.nodes):
        for label in paths[node_id]:
            by_label.setdefault(label, []).append(node_id)
    depth = {label: min(paths[m].index(label) for m in members)
             for label, members in by_label.items()}
    many = len(drawn) > FOLD_FIRST_ABOVE
    groups = [
        Group(label, tuple(members), many and depth[label] == 1 and len(members) > 1,
              f"{label}: {len(members)} box{'es' if len(members) != 1 else ''}")
        for label, members in sorted(by_label.items(), key=lambda item: (depth[item[0]],
                                                                          item[1][0]))
    ]
    grouped = {m for group in groups for m in group.members}
    groups += _chain_groups(drawn, grouped)
    return groups


def _path(node_id: int, graph: Graph, layout: Layout) -> tuple[str, ...]:
    """The groups of a drawn box; a summary box is in the groups all its members share."""
    if node_id in graph.nodes:
        return graph.nodes[node_id].group
    members = [graph.nodes[m].group for m in layout.members.get(node_id, ()) if m in graph.nodes]
    if not members:
        return ()
    common = members[0]
    for path in members[1:]:
        shared = 0
        while shared < min(len(common), len(path)) and common[shared] == path[shared]:
            shared += 1
        common = common[:shared]
    return common


def _chain_groups(drawn: Graph, grouped: set[int]) -> list[Group]:
    """Runs of ops with one data input and one consumer (their saved boxes included), outside
    any module group: a 500-step loop body is one foldable group, folded to start with."""
    preds: dict[int, list[int]] = {i: [] for i in drawn.nodes}
    succs: dict[int, list[int]] = {i: [] for i in drawn.nodes}
    saved_of: dict[int, list[int]] = {i: [] for i in drawn.nodes}
    uses = Counter(edge.src for edge in drawn.edges)
    for edge in drawn.ordered_edges():
        if edge.kind == "saved" and uses[edge.src] == 1:  # a buffer only this op keeps
            saved_of[edge.dst].append(edge.src)
            continue
        if edge.src not in preds[edge.dst]:
            preds[edge.dst].append(edge.src)
            succs[edge.src].append(edge.dst)

    def link(node_id: int) -> bool:
        node = drawn.nodes[node_id]
        return (node.kind == "op" and node_id not in grouped and len(preds[node_id]) == 1
                and len(succs[node_id]) == 1)

    groups = []
    for start in sorted(drawn.nodes):
        if not link(start) or link(preds[start][0]):
            continue
        run = [start]
        while link(succs[run[-1]][0]) and succs[run[-1]][0] not in run:
            run.append(succs[run[-1]][0])
        if len(run) >= CHAIN_GROUP_MIN:
            members = sorted(run + [s for op in run for s in saved_of[op]])
            label = chain_label([drawn.nodes[i].label for i in run])
            groups.append(Group(label, tuple(members), True, f"{label}: {len(run)} ops"))
    return groups


def interactive_html(svg: str, graph: Graph, layout: Layout) -> str:
    """The self-contained HTML form of a drawn graph (see the module docstring)."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    groups = [
        {"label": g.label, "members": list(g.members), "folded": g.folded, "summary": g.summary}
        for g in graph_groups(graph, layout)
    ]
    config = json.dumps({"groups": groups}, ensure_ascii=True, separators=(",", ":"))
    script = _SCRIPT.replace("__CONFIG__", config.replace("</", "<\\/"))
    return (
        '<div class="gradnb-igraph" style="position:relative">'
        f'<img class="gradnb-igraph-static" alt="computation graph" '
        f'src="data:image/svg+xml;base64,{data}">'
        f"<script>{script}</script></div>"
    )


# The script runs once per output: it finds its own <div> (the script's parent) and marks it, so
# a notebook that re-renders the output does not wire it twice.
_SCRIPT = r"""
(function () {
  var me = document.currentScript;
  var root = me ? me.parentElement : null;
  if (!root || root.getAttribute('data-ready')) { return; }
  var config = __CONFIG__;
  var NS = 'http://www.w3.org/2000/svg';
  var img = root.querySelector('img.gradnb-igraph-static');
  var bytes = Uint8Array.from(atob(img.getAttribute('src').split(',')[1]),
                              function (c) { return c.charCodeAt(0); });
  var doc = new DOMParser().parseFromString(new TextDecoder().decode(bytes), 'image/svg+xml');
  var svg = document.importNode(doc.documentElement, true);
  if (svg.nodeName.toLowerCase() !== 'svg') { return; }
  root.setAttribute('data-ready', '1');
  var full = svg.getAttribute('viewBox').split(' ').map(Number);
  var view = full.slice();

  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  function html(name, css, text) {
    var node = document.createElement(name);
    node.style.cssText = css;
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  // -- layout of the page: toolbar, canvas, tooltip -------------------------------------------
  var bar = html('div', 'display:flex;gap:4px;align-items:center;margin:2px 0 4px 0;' +
                 'font:12px sans-serif;color:#555');
  var canvas = html('div', 'overflow:hidden;border:1px solid #ddd;border-radius:4px;' +
                    'cursor:grab;touch-action:none;background:#fff;max-width:' + full[2] + 'px;' +
                    'height:' + Math.min(full[3], 640) + 'px');
  canvas.className = 'gradnb-igraph-canvas';
  var tip = html('div', 'position:absolute;display:none;pointer-events:none;z-index:10;' +
                 'background:#fffff0;border:1px solid #aaa;border-radius:3px;padding:4px 6px;' +
                 'font:11px ui-monospace,monospace;white-space:pre;color:#222;' +
                 'box-shadow:0 1px 4px rgba(0,0,0,.2)');
  tip.className = 'gradnb-igraph-tip';
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  svg.style.cssText = 'width:100%;height:100%;display:block';
  svg.setAttribute('preserveAspectRatio', 'xMidYMin meet');
  canvas.appendChild(svg);
  img.style.display = 'none';
  root.insertBefore(bar, img);
  root.insertBefore(canvas, img);
  root.appendChild(tip);

  // -- hover details ------------------------------------------------------------------------------
  var top = svg.querySelector(':scope > title');
  if (top) { top.remove(); }
  function details(node) {
    var title = node.querySelector(':scope > title');
    if (title) { node.setAttribute('data-detail', title.textContent); title.remove(); }
    node.addEventListener('mouseenter', function () {
      tip.textContent = node.getAttribute('data-detail') || '';
      tip.style.display = 'block';
    });
    node.addEventListener('mousemove', function (e) {
      var r = root.getBoundingClientRect();
      tip.style.left = (e.clientX - r.left + 14) + 'px';
      tip.style.top = (e.clientY - r.top + 14) + 'px';
    });
    node.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  }

  // -- boxes, edges, groups -----------------------------------------------------------------------
  var nodes = {};
  svg.querySelectorAll('g.gradnb-node').forEach(function (node) {
    var r = node.querySelector('rect');
    nodes[node.getAttribute('data-node-id')] = {
      el: node, x: +r.getAttribute('x'), y: +r.getAttribute('y'),
      w: +r.getAttribute('width'), h: +r.getAttribute('height')};
    details(node);
  });
  var edges = [];
  svg.querySelectorAll('g.gradnb-edge').forEach(function (edge) {
    var paths = edge.querySelectorAll('path');
    edges.push({el: edge, src: edge.getAttribute('data-src'), dst: edge.getAttribute('data-dst'),
                line: paths[0], head: paths[1], d: [paths[0].getAttribute('d'),
                                                    paths[1].getAttribute('d')]});
  });
  var layer = svg.querySelector('g.gradnb-nodes').parentNode;
  var frames = el('g', {'class': 'gradnb-groups'});
  layer.insertBefore(frames, layer.firstChild);
  var folds = el('g', {'class': 'gradnb-folds'}, layer);
  var groups = config.groups.map(function (g, i) {
    var members = g.members.map(String).filter(function (m) { return m in nodes; });
    return {index: i, label: g.label, summary: g.summary, folded: g.folded, members: members,
            set: new Set(members)};
  });
  groups = groups.filter(function (g) { return g.members.length > 0; });
  function inside(inner, outer) {
    return inner !== outer && inner.members.every(function (m) { return outer.set.has(m); }) &&
      inner.members.length < outer.members.length;
  }
  // Frames: inner groups first, so an outer frame can make room around its inner frames' labels.
  groups.slice().sort(function (a, b) { return a.members.length - b.members.length; })
    .forEach(function (g) {
      var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      g.members.forEach(function (m) {
        var n = nodes[m];
        x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y);
        x1 = Math.max(x1, n.x + n.w); y1 = Math.max(y1, n.y + n.h);
      });
      g.box = {x: x0, y: y0, w: x1 - x0, h: y1 - y0};
      groups.forEach(function (inner) {
        if (inner.frame && inside(inner, g)) {
          x0 = Math.min(x0, inner.frame.x); y0 = Math.min(y0, inner.frame.y);
          x1 = Math.max(x1, inner.frame.x + inner.frame.w);
          y1 = Math.max(y1, inner.frame.y + inner.frame.h);
        }
      });
      g.frame = {x: x0 - 6, y: y0 - 15, w: x1 - x0 + 12, h: y1 - y0 + 21};
    });
  // Frames reach above the top boxes: grow the drawing so the outermost label stays visible.
  var shift = +((layer.getAttribute('transform') || '').split(',')[1] || '0').replace(')', '');
  var reach = Math.min.apply(null, [0].concat(groups.map(function (g) {
    return g.frame.y + shift - 4; })));
  full = [full[0], full[1] + reach, full[2], full[3] - reach];
  view = full.slice();
  groups.forEach(function (g) {
    var f = g.frame;
    g.frameEl = el('g', {'class': 'gradnb-group', 'data-group': g.label}, frames);
    el('rect', {x: f.x, y: f.y, width: f.w, height: f.h, rx: 6, fill: '#7d8ba1',
                'fill-opacity': 0.06, stroke: '#7d8ba1', 'stroke-dasharray': '3 3',
                'pointer-events': 'none'}, g.frameEl);
    var name = el('text', {x: f.x + 5, y: f.y + 11, 'font-size': 10, fill: '#4b5870',
                           'class': 'gradnb-group-toggle', style: 'cursor:pointer'}, g.frameEl);
    name.textContent = '\u25be ' + g.label;
    name.addEventListener('click', function (e) { e.stopPropagation(); toggle(g); });
    var w = Math.max((g.label.length + 2) * 7.5, (g.summary.length - g.label.length + 5) * 6.5)
      + 20;
    var b = {x: g.box.x + g.box.w / 2 - w / 2, y: g.box.y, w: w, h: 40};
    g.fold = b;
    g.foldEl = el('g', {'class': 'gradnb-node gradnb-folded', 'data-group': g.label,
                        style: 'cursor:pointer'}, folds);
    el('rect', {x: b.x, y: b.y, width: b.w, height: b.h, rx: 5, fill: '#eef1f6',
                stroke: '#4b5870', 'stroke-width': 1.4, 'stroke-dasharray': '5 2'}, g.foldEl);
    var head = el('text', {x: b.x + b.w / 2, y: b.y + 16, 'text-anchor': 'middle',
                           'font-weight': 'bold', fill: '#1f1f1f'}, g.foldEl);
    head.textContent = '\u25b8 ' + g.label;
    var sub = el('text', {x: b.x + b.w / 2, y: b.y + 31, 'text-anchor': 'middle',
                          'font-size': 10.5, fill: '#5c5c5c'}, g.foldEl);
    sub.textContent = g.summary.slice(g.label.length + 2) + ' folded';
    g.foldEl.setAttribute('data-detail', g.summary + ' (click to unfold)\n' +
      g.members.slice(0, 12).map(function (m) {
        return '  ' + (nodes[m].el.getAttribute('data-detail') || '').split('\n')[0];
      }).join('\n') + (g.members.length > 12 ? '\n  \u2026' : ''));
    details(g.foldEl);
    g.foldEl.addEventListener('click', function (e) { e.stopPropagation(); toggle(g); });
  });

  // -- folding ------------------------------------------------------------------------------------
  function owner(id) {  // the outermost folded group holding box ``id``, or null
    for (var i = 0; i < groups.length; i++) {
      if (groups[i].folded && groups[i].set.has(id) && !hiddenGroup(groups[i])) {
        return groups[i];
      }
    }
    return null;
  }
  function hiddenGroup(g) {
    return groups.some(function (o) { return o.folded && inside(g, o); });
  }
  function anchor(id, bottom) {
    var g = owner(id);
    var b = g ? g.fold : nodes[id];
    return {key: g ? 'g' + g.index : id, x: b.x + b.w / 2, y: bottom ? b.y + b.h : b.y};
  }
  function redraw() {
    Object.keys(nodes).forEach(function (id) {
      nodes[id].el.style.display = owner(id) ? 'none' : '';
    });
    groups.forEach(function (g) {
      var hidden = hiddenGroup(g);
      g.frameEl.style.display = hidden || g.folded ? 'none' : '';
      g.foldEl.style.display = !hidden && g.folded ? '' : 'none';
    });
    edges.forEach(function (e) {
      var s = anchor(e.src, true), t = anchor(e.dst, false);
      if (s.key === e.src && t.key === e.dst) {
        e.el.style.display = '';
        e.line.setAttribute('d', e.d[0]);
        e.head.setAttribute('d', e.d[1]);
        return;
      }
      e.el.style.display = s.key === t.key ? 'none' : '';
      var m = (s.y + t.y) / 2, ty = t.y - 7;
      e.line.setAttribute('d', 'M' + s.x + ',' + s.y + 'C' + s.x + ',' + m + ' ' + t.x + ',' +
                          m + ' ' + t.x + ',' + (ty + 0.5));
      e.head.setAttribute('d', 'M' + (t.x - 3.6) + ',' + ty + 'L' + (t.x + 3.6) + ',' + ty +
                          'L' + t.x + ',' + t.y + 'Z');
    });
    root.setAttribute('data-folded', groups.filter(function (g) { return g.folded; })
      .map(function (g) { return g.label; }).join('|'));
  }
  function toggle(g) { g.folded = !g.folded; tip.style.display = 'none'; redraw(); }

  // -- zoom and pan -------------------------------------------------------------------------------
  function apply() {
    svg.setAttribute('viewBox', view.map(function (v) { return +v.toFixed(2); }).join(' '));
    root.setAttribute('data-zoom', (full[2] / view[2]).toFixed(3));
  }
  function zoom(factor, cx, cy) {
    var w = Math.min(Math.max(view[2] / factor, full[2] / 40), full[2] * 4);
    var k = w / view[2];
    view = [cx - (cx - view[0]) * k, cy - (cy - view[1]) * k, w, view[3] * k];
    apply();
  }
  function point(e) {
    var p = svg.createSVGPoint();
    p.x = e.clientX; p.y = e.clientY;
    p = p.matrixTransform(svg.getScreenCTM().inverse());
    return p;
  }
  canvas.addEventListener('wheel', function (e) {
    e.preventDefault();
    var p = point(e);
    zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2, p.x, p.y);
  }, {passive: false});
  var drag = null;
  canvas.addEventListener('pointerdown', function (e) {
    drag = {x: e.clientX, y: e.clientY, view: view.slice()};
    canvas.style.cursor = 'grabbing';
  });
  window.addEventListener('pointermove', function (e) {
    if (!drag) { return; }
    var scale = view[2] / canvas.clientWidth;
    view[0] = drag.view[0] - (e.clientX - drag.x) * scale;
    view[1] = drag.view[1] - (e.clientY - drag.y) * scale;
    apply();
  });
  window.addEventListener('pointerup', function () { drag = null; canvas.style.cursor = 'grab'; });

  // -- toolbar ------------------------------------------------------------------------------------
  function button(text, name, title, action) {
    var b = html('button', 'font:12px sans-serif;padding:1px 7px;cursor:pointer', text);
    b.title = title;
    b.className = 'gradnb-igraph-' + name;
    b.addEventListener('click', action);
    bar.appendChild(b);
  }
  function centre() { return [view[0] + view[2] / 2, view[1] + view[3] / 2]; }
  button('+', 'zoom-in', 'zoom in', function () { var c = centre(); zoom(1.25, c[0], c[1]); });
  button('\u2212', 'zoom-out', 'zoom out', function () { var c = centre(); zoom(0.8, c[0], c[1]); });
  button('fit', 'fit', 'fit the whole graph', function () { view = full.slice(); apply(); });
  if (groups.length) {
    button('fold all', 'fold-all', 'fold every group', function () {
      groups.forEach(function (g) { g.folded = true; }); redraw();
    });
    button('unfold all', 'unfold-all', 'unfold every group', function () {
      groups.forEach(function (g) { g.folded = false; }); redraw();
    });
  }
  bar.appendChild(html('span', 'margin-left:6px', 'wheel: zoom \u00b7 drag: pan \u00b7 ' +
    (groups.length ? 'click a group\u2019s name to fold it \u00b7 ' : '') + 'hover: details'));
  redraw();
  apply();
})();
"""
