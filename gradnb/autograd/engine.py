"""The backward pass.

One iterative loop, no recursion, in four phases, each a short function:

1. validate and seed (``backward``/``grad``, ``_root_grads``): roots, seed gradients, inputs;
2. discover (``_discover``): the graph reachable from the roots, counting for each node how many
   edges point at it, and checking it can run (nothing freed, nothing modified in place);
3. execute (``_execute``): nodes from a ready heap ordered newest-first (PyTorch's
   order), each exactly once, when every consumer of its outputs has run; gradients are summed
   per node input as they arrive and dropped as soon as the node consumed them;
4. release and report (``_release_and_report``): held-back leaf gradients, freed memory, events.

Two promises beyond the math:
- Nothing half-applied: everything that can be checked before running (a freed graph, a saved
  tensor modified in place, bad root gradients) is checked before any node runs, and leaf
  ``.grad`` writes are applied only after the whole pass succeeded.
- Memory: without ``retain_graph`` each node releases its saved tensors right after its backward
  ran, so activations go back to the allocator during the pass, and the pass reports the bytes.

The per-node loops of phases 2 and 3 also exist compiled (``_loop.c``, an optional C extension,
statement for statement the Python below): a pass that no hook, captured input, node observer or
anomaly mode intercepts, first order, runs them; every other pass, and an install without a C
compiler, runs the Python ones. The derivative rules stay Python either way.
"""

from __future__ import annotations

import heapq
import os
import sys

import numpy as np

from .._core import events
from .._core.backend import get_array_module, silent, sum_to
from .._core.dtype import from_numpy_dtype
from .._core.grad_mode import state as _grad_state
from .._core.graph import (
    _CONST,
    _INPUT,
    _NO_BUFFER,
    _NOTHING,
    _OUTPUT,
    _ZERO_NRS,
    AccumulateGrad,
    Node,
    _donation,
    accumulator,
    bump_version,
    check_graph_versions,
    last_change,
    note_release,
    switches,
)
from .._core.tensor import Tensor
from . import memory
from .anomaly import check_nan, report_failure

_loop = None
if not os.environ.get("GRADNB_PURE_PYTHON"):  # (set: run the Python loops alone, as tests do)
    try:  # the per-node loops, compiled (optional: the Python loops below do the same)
        from . import _loop
    except ImportError:  # pragma: no cover - an install without a C compiler
        pass

__all__ = ["backward", "grad"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _edge(t):
    """The edge into ``t``'s producer (``grad_fn`` regenerates a stale view's node first)."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (accumulator(t), 0)


def _root_grads(tensors, grads, create_graph, Tensor):
    """Validate roots and their seed gradients; return gradients as arrays or tensors."""
    for g in grads:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
    if len(grads) != len(tensors):
        raise RuntimeError(
            f"got {len(grads)} tensors and {len(tensors)} gradients"
        )
    out = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward expects tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._data.dtype.kind not in "fV":  # (V: bfloat16, an ml_dtypes float)
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            # (``empty`` + ``fill``: NumPy's ``ones`` is Python code that costs several times more)
            arr = get_array_module(t._data).empty(t._data.shape, dtype=t._data.dtype)
            arr.fill(1)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            if g._data.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and output[{i}] "
                    f"has a shape of {t.shape!r}."
                )
            if type(g._data) is not type(t._data):
                raise RuntimeError(
                    f"invalid gradient at index {i} - expected device {t.device} but got {g.device}"
                )
            if g._data.dtype != t._data.dtype and "c" in (g._data.dtype.kind, t._data.dtype.kind):
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} "
                    f"and output[{i}] has a dtype of {t.dtype}."
                )
            if create_graph:
                out.append(g if g._data.dtype == t._data.dtype else g.to(t.dtype))
                continue
            arr = g._data if g._data.dtype == t._data.dtype else g._data.astype(t._data.dtype)
        out.append(Tensor._make(arr) if create_graph else arr)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves (or of ``inputs``).

    >>> import gradnb
    >>> x = gradnb.tensor(3.0, requires_grad=True)
    >>> gradnb.autograd.backward(x * x)
    >>> x.grad
    tensor(6.)
    """
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if not grads:
        grads = (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    root_grads = _root_grads(tensors, grads, create_graph, Tensor)
    _run(tensors, root_grads, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` w.r.t. ``inputs`` without touching any ``.grad``.

    >>> import gradnb
    >>> x = gradnb.tensor(2.0, requires_grad=True)
    >>> gradnb.autograd.grad(x ** 3, x)
    (tensor(12.),)
    """
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _as_tuple(grad_outputs)
    if not grads:
        grads = (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "  # noqa: TRY004 - PyTorch raises RuntimeError
                               f"{type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    root_grads = _root_grads(outputs, grads, create_graph, Tensor)
    captured = _run(outputs, root_grads, retain_graph, create_graph, inputs, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if materialize_grads:
                g = Tensor._make(get_array_module(t._data).zeros_like(t._data))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        result.append(g)
    return tuple(result)


# The shared output numbers of a node with no to three inputs (see ``Node``'s edges).
_ZERO_NRS0, _ZERO_NRS1, _ZERO_NRS2, _ZERO_NRS3 = _ZERO_NRS


def _discover(root_nodes, targets):
    """Walk the graph from the roots; count dependencies; check it can run.

    Returns ``deps`` (node -> number of edges into it from nodes that will run), ``needed``
    (with ``targets`` -- capture or ``inputs=`` -- only nodes from which a target is reachable
    run; else None) and ``user_code``: whether any hook or custom Function can run (and so
    fail) during the pass.
    """
    # Until the process first sets up a hook or a custom Function, no node can run user code
    # (``switches.user_code``), and the look at each node is skipped.
    user_code = switches.anomaly is not None
    look = not user_code and switches.user_code
    parents: dict | None = {} if targets is not None else None
    # Only a node recorded before the last in-place write or freeing pass can have a freed or
    # modified saved tensor (``graph.last_change``): those are checked once all are found.
    walk = _walk if _loop is None else _loop.discover  # (the same walk, compiled)
    deps, older, found = walk(root_nodes, last_change[0], look, parents)
    user_code = user_code or found
    if older:  # nothing freed, nothing modified in place since recorded
        check_graph_versions(older)
    if targets is None:
        return deps, None, user_code
    seen = deps
    deps = {}
    needed = set()
    frontier = [node for node, _ in targets if node in seen]
    while frontier:
        node = frontier.pop()
        if node in needed:
            continue
        needed.add(node)
        frontier.extend(parents.get(node, ()))
    for node in needed:
        for nxt in node._next:
            if nxt is not None and nxt in needed:
                deps[nxt] = deps.get(nxt, 0) + 1
    return deps, needed, user_code


def _walk(root_nodes, changed_since, look, parents):
    """``_discover``'s walk: ``(deps, older, user_code)``, the edges into each reachable node,
    the nodes recorded before ``changed_since``, and whether a node can run user code (looked
    for while ``look``); ``parents`` (a dict, or None) gets each node's consumers. The compiled
    ``_loop.discover`` does the same steps."""
    user_code = False
    # ``deps`` doubles as the visited set: a node is in it once reached.
    deps: dict = dict.fromkeys(root_nodes, 0)
    stack = list(root_nodes)
    older = [node for node in root_nodes if node._seq < changed_since]
    while stack:
        node = stack.pop()
        if look and (node._hooks or node._pre_hooks or node._tensor_hooks
                     or node.runs_user_code or type(node) is AccumulateGrad):
            user_code = _runs_user_code(node)
            look = not user_code
        # (the edges read from their slots; the shared output numbers of nodes with one to
        # three inputs, nearly all, tell their number without a call)
        nrs = node._next_nr
        for nxt in ((node._next0,) if nrs is _ZERO_NRS1 else (node._next0, node._next1)
                    if nrs is _ZERO_NRS2 else () if nrs is _ZERO_NRS0
                    else (node._next0, node._next1, node._next2) if nrs is _ZERO_NRS3
                    else node._next):
            if nxt is None:
                continue
            if parents is not None:
                parents.setdefault(nxt, []).append(node)
            count = deps.get(nxt)
            if count is None:
                deps[nxt] = 1
                stack.append(nxt)
                if nxt._seq < changed_since:
                    older.append(nxt)
            else:
                deps[nxt] = count + 1
    return deps, older, user_code


def _runs_user_code(node) -> bool:
    if node.runs_user_code or node._hooks or node._pre_hooks or node._tensor_hooks:
        return True
    if type(node) is AccumulateGrad:
        leaf = node.variable
        return bool(leaf._hooks or leaf._post_hooks)
    return False


def _run(roots, root_grads, retain_graph, create_graph, inputs, accumulate):
    """One backward pass, after ``backward``/``grad`` validated the roots and made their seed
    gradients: discover the graph, execute its nodes, then release and report."""
    root_edges = [_edge(t) for t in roots]
    targets, target_index = _targets(inputs)
    root_nodes = [root_edges[0][0]] if len(root_edges) == 1 else \
        list(dict.fromkeys(node for node, _ in root_edges))
    deps, needed, user_code = _discover(root_nodes, targets)
    if not retain_graph:
        note_release()  # this pass frees what the nodes recorded so far saved
    run = _Pass(root_nodes, deps, needed, user_code, create_graph, accumulate, inputs, targets,
                target_index, retain_graph, roots)
    if run.observed:
        events.emit("backward_started", tuple(roots), tuple(root_grads))
    for (node, nr), g in zip(root_edges, root_grads):
        run.add(node, nr, g)
    running.append(run)
    try:
        _execute(run)
    finally:
        running.pop()
        run.report.nodes_executed = run.executed
    return _release_and_report(run)


running: list = []  # the passes executing now, innermost last (a hook may start another)


def _targets(inputs):
    """The edges gradients are captured at (``inputs=``), and which inputs each one serves."""
    if inputs is None:
        return None, {}
    targets, index = [], {}
    for i, t in enumerate(inputs):
        edge = _edge(t)
        targets.append(edge)
        index.setdefault(edge, []).append(i)
    return targets, index


class _Pass:
    """The state of one backward pass, shared by its phases."""

    __slots__ = ("accumulate", "buffers", "captured", "create_graph", "deps", "executed",
                 "inputs", "needed", "observed", "pending_leaves", "report", "root_nodes",
                 "stream", "target_index", "targets", "tracker", "user_code", "watch_freed",
                 "watch_nodes")

    def __init__(self, root_nodes, deps, needed, user_code, create_graph, accumulate, inputs,
                 targets, target_index, retain_graph, roots) -> None:
        self.root_nodes, self.deps, self.needed, self.user_code = root_nodes, deps, needed, user_code
        self.create_graph, self.accumulate = create_graph, accumulate
        self.inputs, self.targets, self.target_index = inputs, targets, target_index
        # Leaf gradients stream into .grad as they are computed (in-place accumulation frees each
        # new buffer at once). When a hook or custom Function could still fail mid-pass, they are
        # held back and applied only after the pass succeeded, so a failed backward touches no
        # .grad.
        self.stream = accumulate and not user_code
        self.observed = bool(events.observers)
        # The per-node events, only when some observer defines them.
        self.watch_nodes = self.observed and events.handled("node_executed")
        self.watch_freed = self.observed and events.handled("buffers_freed")
        self.buffers: dict = {}  # node -> one summed gradient per output, until the node runs
        self.captured = [None] * len(inputs) if inputs is not None else None
        self.pending_leaves: list = []  # (leaf, grad) held back (see ``stream``)
        self.tracker = None if retain_graph else memory.ReleaseTracker(by_node=self.watch_freed)
        self.report = memory.BackwardReport(
            retain_graph=retain_graph,
            device="cpu" if not roots or type(roots[0]._data) is np.ndarray
            else str(roots[0].device))
        self.executed = 0

    def add(self, node, nr: int, g) -> None:
        """Sum ``g`` into the gradient waiting for ``node``'s output ``nr``."""
        buf = self.buffers.get(node)
        if buf is None:
            buf = self.buffers[node] = [None] * node.num_outputs
        prev = buf[nr]
        buf[nr] = g if prev is None else prev + g

    def capture(self, node, grads) -> None:
        """Keep the gradients arriving at a target edge (``inputs=``/``autograd.grad``)."""
        for nr in range(node.num_outputs):
            for i in self.target_index.get((node, nr), ()):
                if self.accumulate:
                    self.pending_leaves.append((self.inputs[i], grads[nr]))
                else:
                    self.captured[i] = _to_tensor(grads[nr], Tensor)


def _execute(run: _Pass) -> None:
    """Run each node once, newest first, when every consumer of its outputs has run; pass its
    input gradients on (fitted to each input's shape and dtype, summed per edge) and queue each
    next node whose consumers have all run. One loop with no helper call per node on the common
    path: it runs once per node of every backward."""
    deps, needed, buffers, user_code = run.deps, run.needed, run.buffers, run.user_code
    targets, accumulate, stream = run.targets, run.accumulate, run.stream
    tensor_mode = create_graph = run.create_graph
    # The ready heap holds ``(-seq, node)``: newest node first, compared as integers (no two
    # nodes share a sequence number, so nodes themselves are never compared).
    ready = [(-node._seq, node) for node in run.root_nodes if deps.get(node, 0) == 0
             and (needed is None or node in needed)]
    heapq.heapify(ready)
    heappop, heappush = heapq.heappop, heapq.heappush
    anomaly = switches.anomaly
    observed, watch_nodes, tracker = run.observed, run.watch_nodes, run.tracker
    zero_nrs1, zero_nrs2, zero_nrs3 = _ZERO_NRS1, _ZERO_NRS2, _ZERO_NRS3
    prev_mode = _grad_state.enabled
    _grad_state.enabled = create_graph
    executed = 0
    # A node that the last one made ready, with its gradients, kept in hand instead of going
    # through the heap and the buffers: in a chain (most of any graph) it is the next to run.
    follow = follow_grads = None
    # Hooks and captured gradients (``inputs=``, ``autograd.grad``) intercept a node's gradients
    # before it runs; in most passes neither exists, and one test skips both.
    intercept = user_code or targets is not None
    # Derivative rules meet inf and NaN as PyTorch's kernels do, silently: no NumPy warnings.
    quiet = silent()
    quiet.__enter__()
    if _loop is not None and not intercept and not watch_nodes and not tensor_mode \
            and anomaly is None:
        # The common pass, nothing intercepting: the same loop, compiled (``_loop.c``).
        counter = [0]
        try:
            _loop.execute(ready, deps, needed, buffers, tracker, accumulate, observed, counter)
        finally:
            run.executed += counter[0]
            quiet.__exit__(None, None, None)
            _grad_state.enabled = prev_mode
        return
    try:
        while True:
            if follow is not None and (not ready or follow._seq > -ready[0][0]):
                node, grads = follow, follow_grads
            else:
                if follow is not None:  # an older node is ready too: the heap orders them
                    if follow_grads is not None:
                        buffers[follow] = follow_grads
                    heappush(ready, (-follow._seq, follow))
                if not ready:
                    break
                node = heappop(ready)[1]
                grads = buffers.pop(node, None)
            follow = follow_grads = None
            executed += 1
            # ``user_code`` (from discovery) is False for most passes: then no node has hooks
            # and the per-node hook lookups are skipped.
            if intercept and grads is not None:
                if user_code and node._tensor_hooks:
                    grads = _run_tensor_hooks(node, grads, tensor_mode, Tensor)
                if user_code and node._pre_hooks:
                    grads = _run_node_prehooks(node, grads, tensor_mode, Tensor)
                if targets is not None:
                    run.capture(node, grads)
            kind = type(node)  # (its class flags are read off the class, as ``_loop.c`` does)
            if kind is AccumulateGrad:
                if accumulate and grads is not None and grads[0] is not None \
                        and targets is None:
                    # Inline, not a helper: ``_owned`` counts the references to ``g``.
                    g = grads[0]
                    grads[0] = None  # the buffer list may still be bound to ``buf``
                    leaf = node.variable
                    if stream:
                        _accumulate(leaf, g, create_graph, observed, Tensor)
                        g = None
                        continue
                    if leaf._hooks:
                        g = _run_leaf_hooks(leaf, g, tensor_mode, Tensor)
                    run.pending_leaves.append((leaf, g))
                continue
            if grads is None:
                results = (None,) * len(node._next_nr)
            else:
                try:
                    if kind.on_tensors and not tensor_mode:
                        results = _backward_on_tensors(node, grads)
                    elif len(grads) == 1:  # (most nodes: a call without unpacking a list)
                        results = node.backward(grads[0])
                    else:
                        results = node.backward(*grads)
                except Exception:
                    if anomaly:
                        report_failure(node)
                    raise
                if user_code:
                    if anomaly:
                        check_nan(node, results)
                    if node._hooks:
                        results = _run_node_hooks(node, results, grads, tensor_mode, Tensor)
            if watch_nodes:
                events.emit("node_executed", node, tuple(grads or ()), tuple(results))
            if tracker is not None and node._saved:
                released = node.release()
                if released:  # (a node that kept only numbers gives back no buffer)
                    tracker.add(node, released)
            # Send: each input's gradient into the buffer of the node that made that input,
            # fitted (summed down from a broadcast, cast) to the output that node recorded.
            fit, nrs = kind.fit_grads, node._next_nr
            i = -1
            for nxt in ((node._next0,) if nrs is zero_nrs1 else (node._next0, node._next1)
                        if nrs is zero_nrs2 else (node._next0, node._next1, node._next2)
                        if nrs is zero_nrs3 else node._next):
                i += 1
                if nxt is None or (needed is not None and nxt not in needed):
                    continue
                g = results[i]
                remaining = deps[nxt] - 1
                deps[nxt] = remaining
                # The last edge into ``nxt`` takes its buffer out with it; earlier ones leave
                # their sum in ``buffers`` (empty all through a chain: no lookup).
                if remaining:
                    if g is None:
                        continue
                    buf = buffers.get(nxt)
                else:
                    buf = buffers.pop(nxt, None) if buffers else None
                if g is not None:
                    nr = nrs[i]
                    single = nxt.num_outputs == 1
                    if fit:
                        if single:
                            shape, dtype = nxt._shape, nxt._dtype
                        else:
                            shape, dtype = nxt._shape[nr], nxt._dtype[nr]
                        if tensor_mode or g.shape != shape or (g.dtype is not dtype
                                                               and g.dtype != dtype):
                            g = _fit(g, shape, dtype, tensor_mode)
                    if buf is None:
                        buf = [g] if single else _one_hot(g, nr, nxt.num_outputs)
                        if remaining:
                            buffers[nxt] = buf
                    else:
                        prev = buf[nr]
                        buf[nr] = g if prev is None else prev + g
                if remaining == 0:
                    if follow is None:
                        follow, follow_grads = nxt, buf
                    else:  # several became ready: keep the newest in hand, queue the other
                        if nxt._seq > follow._seq:
                            follow, follow_grads, nxt, buf = nxt, buf, follow, follow_grads
                        if buf is not None:
                            buffers[nxt] = buf
                        heappush(ready, (-nxt._seq, nxt))
            del results, grads
    finally:
        run.executed += executed
        quiet.__exit__(None, None, None)
        _grad_state.enabled = prev_mode


def _backward_on_tensors(node, grads) -> tuple:
    """A first-order pass through a rule written in tensor ops (``Node.on_tensors``): the
    gradients go in as tensors (grad mode is off, so nothing records) and come out as arrays."""
    make = Tensor._make
    results = node.backward(*[None if g is None else make(g) for g in grads])
    return tuple(g._data if isinstance(g, Tensor) else g for g in results)


def _one_hot(g, nr: int, num_outputs: int) -> list:
    """A new gradient buffer for a node with several outputs: ``g`` at output ``nr``."""
    buf = [None] * num_outputs
    buf[nr] = g
    return buf


def _release_and_report(run: _Pass):
    """After the pass: apply held-back leaf gradients, account the freed memory, tell
    observers; return the captured gradients (``autograd.grad``)."""
    _apply_leaf_grads(run.pending_leaves, run.create_graph, run.observed, Tensor)
    report = run.report
    if run.tracker is not None:
        run.tracker.finish(report)
    else:
        report.retained_bytes = memory.graph_bytes(run.root_nodes)
    memory.record_report(report)
    if run.observed:
        if run.watch_freed:
            for node, freed in report.freed_by_node.items():
                events.emit("buffers_freed", node, freed)
        events.emit("backward_finished", report)
    report.freed_by_node.clear()
    return run.captured


def _fit(g, shape, dtype, tensor_mode):
    """Central unbroadcast and cast: make ``g`` match its input's shape and dtype."""
    if tensor_mode:
        if tuple(g._data.shape) != shape:
            g = sum_to(g, shape)
        if g._data.dtype != dtype:
            if g._data.dtype.kind == "c" and dtype.kind != "c":
                g = g.real  # a real input of a complex op: PyTorch keeps the real part
            g = g.to(dtype=from_numpy_dtype(dtype))
        return g
    if type(g) is not np.ndarray and isinstance(g, np.generic):
        g = np.asarray(g)
    if g.shape != shape:
        g = sum_to(g, shape)
        if g.shape != shape:
            raise AssertionError(f"gradient of shape {g.shape} cannot be reduced to {shape}")
    if g.dtype != dtype:
        if g.dtype.kind == "c" and dtype.kind != "c":
            g = g.real  # a real input of a complex op: PyTorch keeps the real part
        g = g.astype(dtype)
    return g


def _to_tensor(g, Tensor):
    if g is None or isinstance(g, Tensor):
        return g
    if isinstance(g, np.generic):
        g = np.asarray(g)
    return Tensor._make(g)


def _from_tensor(g, tensor_mode):
    return g if tensor_mode else g._data


def _run_tensor_hooks(node, grads, tensor_mode, Tensor):
    grads = list(grads)
    for nr, entries in node._tensor_hooks.items():
        if grads[nr] is None:
            continue
        g = _to_tensor(grads[nr], Tensor)
        retains = []
        for kind, a, b in entries:
            if kind == "retain":
                retains.append(a)
                continue
            fn = a.get(b)
            if fn is None:
                continue
            out = fn(g)
            if out is not None:
                g = out
        for ref in retains:
            t = ref()
            if t is not None:
                new = g if tensor_mode else Tensor._make(g._data.copy())
                t._grad = new if t._grad is None else t._grad + new
        grads[nr] = _from_tensor(g, tensor_mode)
    return grads


def _run_leaf_hooks(leaf, g, tensor_mode, Tensor):
    t = _to_tensor(g, Tensor)
    for fn in list(leaf._hooks.values()):
        out = fn(t)
        if out is not None:
            t = out
    return _from_tensor(t, tensor_mode)


def _run_node_prehooks(node, grads, tensor_mode, Tensor):
    gts = tuple(_to_tensor(g, Tensor) for g in grads)
    for fn in list(node._pre_hooks.values()):
        out = fn(gts)
        if out is not None:
            gts = tuple(out)
    return [None if g is None else _from_tensor(g, tensor_mode) for g in gts]


def _run_node_hooks(node, results, grads, tensor_mode, Tensor):
    gin = tuple(_to_tensor(g, Tensor) for g in results)
    gout = tuple(_to_tensor(g, Tensor) for g in grads)
    for fn in list(node._hooks.values()):
        out = fn(gin, gout)
        if out is not None:
            gin = tuple(out)
    return tuple(None if g is None else _from_tensor(g, tensor_mode) for g in gin)


def _apply_leaf_grads(pending, create_graph, observed, Tensor):
    """Apply the gradients held back during a pass that ran user code (see ``_run``)."""
    if not pending:
        return
    merged: dict = {}
    order = []
    for leaf, g in pending:
        key = id(leaf)
        if key in merged:
            merged[key] = (leaf, merged[key][1] + g)
        else:
            merged[key] = (leaf, g)
            order.append(key)
    pending.clear()
    for key in order:
        leaf, g = merged.pop(key)
        _accumulate(leaf, g, create_graph, observed, Tensor)
        del g


def _accumulate(leaf, g, create_graph, observed, Tensor):
    """Add ``g`` into ``leaf.grad`` (in place when no graph is being built, as PyTorch does),
    then run the leaf's post-accumulate hooks."""
    old = leaf._grad
    if create_graph:
        g = _to_tensor(g, Tensor)
        leaf._grad = g if old is None else old + g
    elif old is None:
        # (an array, the common case, skips the checks: a failed getattr costs a microsecond)
        if type(g) is not np.ndarray:
            if isinstance(g, Tensor):
                g = g._data
            if isinstance(g, np.generic):  # NumPy turned a 0-d result into a scalar
                g = np.asarray(g)
        if type(g) is not np.ndarray and getattr(g, "is_sparse", False):
            leaf._grad = g
        else:
            leaf._grad = Tensor._make(_owned(g))
    elif old.is_sparse or old._requires_grad or (type(g) is not np.ndarray
                                                  and getattr(g, "is_sparse", False)):
        leaf._grad = old + (g if getattr(g, "is_sparse", False) else _to_tensor(g, Tensor))
    else:
        old._data += g._data if isinstance(g, Tensor) else g
        bump_version(old)
    if observed:
        events.emit("grad_accumulated", leaf, leaf._grad, old is not None)
    if leaf._post_hooks:
        for fn in list(leaf._post_hooks.values()):
            fn(leaf)


# The references to a gradient array while ``_owned`` inspects it: the loop's local in the
# caller's caller, ``_accumulate``'s argument, ``_owned``'s argument and getrefcount's own. More
# means someone else (a user's tensor, another leaf's gradient from the same ``AddBackward``)
# shares it, so it must be copied. A view counts as owned when nothing but it sees its base
# (the base is then referenced by the view, our local and getrefcount).
_OWNED_REFS = 4
_OWNED_BASE_REFS = 3


def _owned(g):
    """``g`` if nobody else can see its memory, else a copy: a ``.grad`` never aliases other
    memory, and is C-contiguous like the parameters it will update."""
    # CuPy arrays have no writeable flag (and are always writeable).
    if getattr(g.flags, "writeable", True) and g.flags.c_contiguous \
            and sys.getrefcount(g) <= _OWNED_REFS:
        base = g.base
        if base is None:
            return g
        if getattr(base, "base", True) is None and sys.getrefcount(base) <= _OWNED_BASE_REFS:
            return g
    return g.copy()



def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False,
                     inputs=None) -> None:
    """Compute the gradient of this tensor w.r.t. graph leaves and accumulate it in ``.grad``.

    ``gradient`` is required for non-scalar tensors (it is the vector of the vector-Jacobian
    product). Without ``retain_graph`` the graph's saved tensors are freed.
    """
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__ = "backward"
TENSOR_METHODS = {"backward": _tensor_backward}


if _loop is not None:
    _loop.configure(_ZERO_NRS, AccumulateGrad, heapq.heappush, heapq.heappop, _accumulate, _fit,
                    _one_hot, _backward_on_tensors, _runs_user_code, Tensor, np.ndarray,
                    _donation, Node)
    _loop.configure_release(_INPUT, _OUTPUT, _CONST, _NOTHING, _NO_BUFFER)
