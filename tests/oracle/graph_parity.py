"""Graph parity: does gradnb record PyTorch's graph for every op_db sample?

For each op_db entry with autograd (the entries ``opinfo_harness.op_db`` measures) and each of
its samples, both libraries build the output from the same inputs, and the whole ``grad_fn``
graph behind the outputs is compared, breadth-first from the outputs:

- **nodes**: every node's name (``MulBackward0``; ``AccumulateGrad`` for a leaf), the number of
  its ``next_functions`` and, edge by edge, which node each points to and its output number;
- **saved**: the ``_saved_*`` attributes of each node, by name and by value (tensors compared
  numerically, numbers and shapes exactly);
- **packed**: the tensors the ops hand to ``saved_tensors_hooks``' pack hook, in order (shape,
  dtype, and which input it is, when it is one).

    python -m tests.oracle.graph_parity           # the figures
    python -m tests.oracle.graph_parity --list    # plus every miss with its reason
    python -m tests.oracle.graph_parity add sum   # only the entries named (or name prefixes)

``test_graph_parity.py`` runs it per entry, with ``graph_known_gaps.GRAPH_GAPS`` as the list of
named misses (which only shrinks).
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import time
import warnings
from collections import deque

import numpy as np

import gradnb

from .opinfo_harness import (
    Converter,
    Unsupported,
    _call,
    _describe,
    _flatten,
    _Fresh,
    _translated,
    entry_id,
    is_random,
    op_db,
    resolve_entry,
    samples_of,
    to_numpy,
)

__all__ = ["GraphResult", "compare_graphs", "run_graph_entry"]


@dataclasses.dataclass
class GraphResult:
    """One entry's graph parity: ``status`` is "pass", "miss" or "missing" (gradnb has no op)."""

    entry: str
    status: str
    samples: int = 0
    passed: int = 0
    reason: str = ""


# -- one graph, as comparable data -------------------------------------------------------------
def _short_name(node) -> str:
    """``torch::autograd::AccumulateGrad`` and ``AccumulateGrad`` name the same node."""
    return node.name().rsplit("::", 1)[-1]


def _walk(roots) -> list:
    """The nodes reachable from ``roots`` (grad_fns), breadth-first, each once."""
    seen, order, queue = set(), [], deque(r for r in roots if r is not None)
    while queue:
        node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and id(child) not in seen:
                queue.append(child)
    return order


def _saved_names(node) -> list[str]:
    return sorted(a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_"))


class _Packs:
    """Records what a pack hook receives: (shape, dtype, index of the input it is, or None)."""

    def __init__(self, inputs) -> None:
        self.inputs = inputs
        self.seen: list[tuple] = []

    def pack(self, t):
        which = next((i for i, x in enumerate(self.inputs) if x is t), None)
        dtype = str(t.dtype).rsplit(".", 1)[-1]
        self.seen.append((tuple(t.shape), dtype, which))
        return t

    @staticmethod
    def unpack(t):
        return t


def compare_graphs(t_roots, g_roots, values: bool = True) -> str:
    """"ok", or the first difference between torch's graph and gradnb's."""
    t_nodes, g_nodes = _walk(t_roots), _walk(g_roots)
    t_index = {id(n): i for i, n in enumerate(t_nodes)}
    g_index = {id(n): i for i, n in enumerate(g_nodes)}
    for i, (t, g) in enumerate(zip(t_nodes, g_nodes)):
        tn, gn = _short_name(t), _short_name(g)
        if tn != gn:
            return f"node {i}: torch {tn}, gradnb {gn}"
        t_next, g_next = t.next_functions, g.next_functions
        if len(t_next) != len(g_next):
            return f"{tn}: {len(t_next)} next_functions in torch, {len(g_next)} in gradnb"
        for k, ((tc, tnr), (gc, gnr)) in enumerate(zip(t_next, g_next)):
            if (tc is None) != (gc is None):
                return (f"{tn}: next_functions[{k}] is "
                        f"{'None' if tc is None else _short_name(tc)} in torch, "
                        f"{'None' if gc is None else _short_name(gc)} in gradnb")
            if tc is None:
                continue
            if t_index[id(tc)] != g_index[id(gc)] or tnr != gnr:
                return (f"{tn}: next_functions[{k}] is ({_short_name(tc)}, {tnr}) in torch, "
                        f"({_short_name(gc)}, {gnr}) in gradnb")
        problem = _compare_saved(tn, t, g, values)
        if problem:
            return problem
    if len(t_nodes) != len(g_nodes):
        extra = t_nodes[len(g_nodes):] or g_nodes[len(t_nodes):]
        who = "torch" if len(t_nodes) > len(g_nodes) else "gradnb"
        return (f"{len(t_nodes)} nodes in torch, {len(g_nodes)} in gradnb "
                f"({who} also has {_short_name(extra[0])})")
    return "ok"


def _compare_saved(name, t, g, values) -> str:
    t_names, g_names = _saved_names(t), _saved_names(g)
    if t_names != g_names:
        return f"{name}: saves {t_names} in torch, {g_names} in gradnb"
    if not values:
        return ""
    for attr in t_names:
        try:
            tv = getattr(t, "_saved_" + attr)
        except RuntimeError:
            continue  # torch itself cannot show it (an undefined tensor, a freed graph)
        try:
            gv = getattr(g, "_saved_" + attr)
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            return f"{name}._saved_{attr} raises {_describe(exc)} in gradnb"
        if _defined_up_to_phase(name, attr, t):
            tv, gv = _phase_aligned(tv, gv, rows=attr == "Vh")
        problem = _same_value(tv, gv)
        if problem:
            return f"{name}._saved_{attr}: {problem}"
    return ""


# Eigenvectors and singular vectors are defined only up to a unit phase per vector (a sign
# when real; torch.linalg.eig/eigh/svd's docs say so), and another LAPACK build picks another
# one. These saved values are compared after giving each vector (a column; a row of Vh) the
# phase that makes torch's largest-magnitude entry of it real and positive, in both libraries.
# op_db's eig/eigh samples take abs() of the eigenvectors: that AbsBackward0 saves them too.
_DEFINED_UP_TO_PHASE = {
    ("LinalgEigBackward0", "eigenvectors"),
    ("LinalgEighBackward0", "eigenvectors"),
    ("LinalgSvdBackward0", "U"),
    ("LinalgSvdBackward0", "V"),
    ("LinalgSvdBackward0", "Vh"),
}


def _defined_up_to_phase(name: str, attr: str, node) -> bool:
    if (name, attr) in _DEFINED_UP_TO_PHASE:
        return True
    if (name, attr) != ("AbsBackward0", "self") or len(node.next_functions) != 1:
        return False
    source, output = node.next_functions[0]
    return (source is not None and output == 1
            and _short_name(source) in ("LinalgEigBackward0", "LinalgEighBackward0"))


def _phase_aligned(tv, gv, rows: bool):
    """``tv`` and ``gv`` as NumPy arrays, each vector turned to the phase fixed by torch's
    largest-magnitude entry of it; unchanged when they cannot be compared so."""
    import torch

    if not isinstance(tv, torch.Tensor) or not isinstance(gv, gradnb.Tensor):
        return tv, gv
    e, a = to_numpy(tv), to_numpy(gv)
    if e.shape != a.shape or e.dtype != a.dtype or e.ndim < 2 or e.size == 0:
        return tv, gv
    axis = -1 if rows else -2  # the axis running along one vector
    k = np.expand_dims(np.argmax(np.abs(e), axis=axis), axis)

    def turned(x):
        pivot = np.take_along_axis(x, k, axis=axis)
        size = np.abs(pivot)
        phase = np.where(size > 0, pivot / np.where(size > 0, size, 1), 1)
        return x * np.conj(phase)

    return torch.from_numpy(turned(e)), gradnb.tensor(turned(a))


def _same_value(tv, gv) -> str:
    import torch

    if isinstance(tv, torch.Tensor) and tv.layout == torch.sparse_coo:
        if not getattr(gv, "is_sparse", False):
            return f"torch a sparse tensor, gradnb {type(gv).__name__}"
        same = np.allclose(np.asarray(gv), to_numpy(tv.to_dense()), rtol=1e-6, atol=1e-6)
        return "" if same else "values differ"
    if isinstance(tv, torch.Tensor):
        if not isinstance(gv, gradnb.Tensor):
            return f"torch a tensor, gradnb {type(gv).__name__}"
        e, a = to_numpy(tv), to_numpy(gv)
        if e.shape != a.shape:
            return f"shape {list(e.shape)} in torch, {list(a.shape)} in gradnb"
        if e.dtype != a.dtype:
            return f"dtype {e.dtype} in torch, {a.dtype} in gradnb"
        if e.dtype.kind in "fc":
            same = np.allclose(a, e, rtol=1e-6, atol=1e-6, equal_nan=True)
        else:
            same = np.array_equal(a, e)
        return "" if same else "values differ"
    if isinstance(tv, (list, tuple)):
        if not isinstance(gv, (list, tuple)) or len(tv) != len(gv):
            return f"{tv!r} in torch, {gv!r} in gradnb"
        for x, y in zip(tv, gv):
            problem = _same_value(x, y)
            if problem:
                return problem
        return ""
    if isinstance(gv, gradnb.Tensor):
        return f"torch {tv!r}, gradnb a tensor"
    if isinstance(tv, (torch.SymInt, torch.SymFloat)):
        tv = int(tv) if isinstance(tv, torch.SymInt) else float(tv)
    if isinstance(tv, torch.dtype):
        tv = str(tv).rsplit(".", 1)[-1]
        gv = str(gv).rsplit(".", 1)[-1]
    if isinstance(tv, float) and isinstance(gv, (int, float)):
        return "" if np.isclose(tv, gv, equal_nan=True) else f"{tv!r} in torch, {gv!r} in gradnb"
    if isinstance(tv, complex) or isinstance(gv, complex):
        return "" if np.isclose(complex(tv), complex(gv)) else f"{tv!r} in torch, {gv!r} in gradnb"
    return "" if tv == gv else f"{tv!r} in torch, {gv!r} in gradnb"


# -- one sample --------------------------------------------------------------------------------
def _roots(out) -> list:
    return [o.grad_fn for o in _flatten(out)
            if hasattr(o, "grad_fn") and o.grad_fn is not None]


def graph_sample(op, fn, sample) -> str:
    """"ok", or the first difference between the graphs torch and gradnb build for
    ``sample``."""
    import torch

    wrapper = op.gradcheck_wrapper
    fresh = _Fresh()
    t_inp, t_args, t_kwargs = fresh(sample.input), fresh(sample.args), fresh(sample.kwargs)
    t_inputs = [x for x in _flatten([t_inp, list(t_args), list(t_kwargs.values())])
                if isinstance(x, torch.Tensor)]
    # gradnb's inputs are converted first: torch's call may write into its inputs (batch
    # norm's running statistics), and gradnb must start from the same values
    conv = Converter(keep_strides=True)
    try:
        g_inp, g_args, g_kwargs = conv(t_inp), conv(t_args), conv(t_kwargs)
    except Unsupported as exc:
        return f"unsupported argument: {exc}"
    g_inputs = [conv(t) for t in t_inputs]
    t_packs = _Packs(t_inputs)
    with torch.autograd.graph.saved_tensors_hooks(t_packs.pack, t_packs.unpack):
        t_out = sample.output_process_fn_grad(_call(op.op, wrapper, t_inp, t_args, t_kwargs))
    g_packs = _Packs(g_inputs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with gradnb.autograd.graph.saved_tensors_hooks(g_packs.pack, g_packs.unpack):
                g_out = sample.output_process_fn_grad(
                    _call(fn, _translated(wrapper), g_inp, g_args, g_kwargs))
    except Exception as exc:  # noqa: BLE001 - any failure of gradnb is the finding
        return f"forward raises {_describe(exc)}"
    result = compare_graphs(_roots(t_out), _roots(g_out), values=not is_random(op, sample))
    if result != "ok":
        return result
    if t_packs.seen != g_packs.seen:
        return f"packed {_packs_text(t_packs.seen)} in torch, {_packs_text(g_packs.seen)} in gradnb"
    return "ok"


def _packs_text(seen) -> str:
    return "[" + ", ".join(f"{'input ' + str(w) if w is not None else 'other'} "
                           f"{list(s)} {d}" for s, d, w in seen) + "]"


# -- one entry ---------------------------------------------------------------------------------
def run_graph_entry(op) -> GraphResult:
    eid = entry_id(op)
    fn = resolve_entry(op)
    if fn is None:
        return GraphResult(eid, "missing", reason=f"gradnb has no {op.name}")
    samples = samples_of(op)
    reasons = []
    for sample in samples:
        try:
            reasons.append(graph_sample(op, fn, sample))
        except Exception as exc:  # noqa: BLE001 - torch itself rejects the sample
            reasons.append(f"harness: {_describe(exc)}")
    misses = [r for r in reasons if r != "ok" and not r.startswith("harness")]
    passed = sum(r == "ok" for r in reasons)
    return GraphResult(eid, "miss" if misses else "pass", len(reasons), passed,
                       misses[0] if misses else "")


def main(argv: list[str]) -> None:
    names = [a for a in argv if not a.startswith("-")]
    ops = [op for op in op_db()
           if not names or any(entry_id(op) == n or op.name.startswith(n) for n in names)]
    start = time.perf_counter()
    results = [run_graph_entry(op) for op in ops]
    elapsed = time.perf_counter() - start
    status = collections.Counter(r.status for r in results)
    print(f"graph parity: {status['pass']} of {len(results)} entries "
          f"({100 * status['pass'] / max(len(results), 1):.1f}%; "
          f"{status['miss']} differ, {status['missing']} missing ops) ({elapsed:.0f} s)")
    if "--list" in argv:
        for r in results:
            if r.status != "pass":
                print(f"{r.entry}: {r.status} ({r.passed}/{r.samples}) {r.reason}")


if __name__ == "__main__":
    main(sys.argv[1:])
