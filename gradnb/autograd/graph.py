"""Graph nodes: what a forward op leaves behind for backward.

Ownership follows one rule, so a graph never forms a reference cycle: a tensor holds its
``grad_fn`` strongly, a node holds the nodes of its inputs strongly (``next_functions``), and
nothing points back. A node that needs its own output for backward (``exp``, ``tanh``) saves the
output's *array*, not the output tensor, and rebuilds a tensor around it on demand. So when the
last reference to a loss goes, the whole graph is freed by reference counting alone.

Saved values live in ``node._saved``, a tuple of entries, so that a node can release all of them
in one step after its backward ran and report how many bytes that gave back.
"""

from __future__ import annotations

import itertools
import weakref
from typing import ClassVar

import numpy as np

from . import events

__all__ = [
    "NO_EDGE",
    "SECOND_BACKWARD_MESSAGE",
    "AccumulateGrad",
    "Node",
    "record",
    "saved_const",
    "saved_input",
    "saved_output",
]

NO_EDGE = (None, 0)

# Set by gradnb._tensor once the Tensor class exists (graph.py is imported first).
TensorType: type = type(None)
_sequence = itertools.count()
_RELEASED = None  # ``node._saved`` after release

SECOND_BACKWARD_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

# Saved-entry kinds. An entry is a small tuple so that saving costs one allocation.
_INPUT, _OUTPUT, _CONST, _PACKED = 0, 1, 2, 3


class Node:
    """A backward function in the graph (``MulBackward0``, ``AccumulateGrad``, ...).

    Subclasses implement ``backward(self, *grad_outputs) -> tuple`` returning one gradient (or
    ``None``) per entry of ``next_functions``. Rules are written with operators and the helpers of
    ``gradnb.ops.dual``, so the same code runs on raw arrays in a first-order backward and on
    tensors (recording a graph) under ``create_graph=True``.
    """

    # Only what every node needs is a slot; hooks and metadata are rare, so they default to the
    # class attribute and land in the instance ``__dict__`` when set (recording stays cheap).
    __slots__ = ("__dict__", "__weakref__", "_meta", "_saved", "_seq", "next_functions")
    num_outputs = 1
    runs_user_code = False  # True for nodes whose backward is user code (custom Functions)
    _pre_hooks = None
    _hooks = None
    _tensor_hooks = None
    metadata = None

    def name(self) -> str:
        """The node's name as PyTorch prints it, e.g. ``MulBackward0``."""
        return type(self).__name__

    def backward(self, *grad_outputs):  # pragma: no cover - every op defines it
        raise NotImplementedError

    # -- saved values -------------------------------------------------------------------------
    def saved(self, like):
        """The saved values as arrays, or as tensors when ``like`` (a gradient) is a tensor.

        Raises PyTorch's errors when the graph was already freed or a saved tensor was modified
        in place after it was saved.
        """
        entries = self._saved
        if entries is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        if isinstance(like, TensorType):
            return [_unpack(self, entry, True) for entry in entries]
        # First-order backward: the hot path, unrolled for the common entry kinds.
        out = []
        for entry in entries:
            kind = entry[0]
            if kind == _INPUT:
                t = entry[1]
                if t._version[0] != entry[2]:
                    check_versions(self)
                out.append(t._data)
            elif kind == _CONST:
                out.append(entry[1])
            elif kind == _OUTPUT:
                if entry[2][0] != entry[3]:
                    check_versions(self)
                out.append(entry[1])
            else:
                out.append(_unpack(self, entry, False))
        return out

    def needs(self, i: int) -> bool:
        """Whether input ``i`` wants a gradient (PyTorch's ``needs_input_grad[i]``)."""
        return self.next_functions[i][0] is not None

    @property
    def released(self) -> bool:
        """True once backward freed this node's saved tensors."""
        return self._saved is _RELEASED

    def saved_arrays(self):
        """The arrays this node keeps alive for backward (for memory accounting). Runs once per
        node in every backward (via ``release``), so the common entry kinds are unrolled."""
        if self._saved is _RELEASED:
            return []
        arrays = []
        for entry in self._saved:
            kind = entry[0]
            if kind == _INPUT:
                arrays.append(entry[1]._data)
            elif kind == _OUTPUT:
                arrays.append(entry[1])
            else:
                arr = _entry_array(entry)
                if arr is not None:
                    arrays.append(arr)
        return arrays

    def release(self) -> list:
        """Drop the saved values; return the arrays that were held (caller does accounting)."""
        arrays = self.saved_arrays()
        self._saved = _RELEASED
        return arrays

    # -- hooks --------------------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward; it may return new
        ``grad_inputs``."""
        if self._hooks is None:
            self._hooks = {}
        return _register(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node's backward; it may return new grads."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _register(self._pre_hooks, fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object #{self._seq}>"

    def __getattr__(self, name: str):
        # Only reached for names the node lacks: PyTorch's ``_saved_*`` / ``_raw_saved_*``.
        if name.startswith(("_saved_", "_raw_saved_")):
            from .saved_attributes import saved_attribute

            return saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # Nodes are compared by identity and ordered by creation, newest first, in the ready heap.
    def __lt__(self, other: Node) -> bool:
        return self._seq > other._seq


class AccumulateGrad(Node):
    """The node that adds a gradient into a leaf's ``.grad``; ``variable`` is that leaf."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        self.variable = variable
        self.next_functions = ()
        self._saved = ()
        self._meta = ()
        self._seq = next(_sequence)

    def backward(self, grad):
        return ()


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook."""

    _ids = itertools.count()
    __slots__ = ("_table", "id")

    def __init__(self, table: dict) -> None:
        self._table = weakref.ref(table) if hasattr(table, "__weakref__") else (lambda: table)
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        table = self._table()
        if table is not None:
            table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _register(table: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle


# -- recording ------------------------------------------------------------------------------------
def accumulator(leaf) -> AccumulateGrad:
    """The leaf's AccumulateGrad node. The leaf holds it weakly, so the graph owns it and a leaf
    that outlives its graph does not keep the node alive; within one graph it is shared."""
    ref = leaf._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        leaf._accumulator = weakref.ref(node)
    return node


def refresh_view(t) -> None:
    """Regenerate the grad_fn of a view whose base (or a sibling view) was written in place
    since the view's grad_fn was set, as PyTorch does: the view becomes ``AsStridedBackward0``
    of its base's current history. Without this, the view would still point at the history from
    before the write and its gradient would be silently wrong."""
    t._grad_fn_version = t._version[0]
    base = t._base
    if base is None or base.grad_fn is None:
        return  # a view of a leaf (or of a tensor without history) needs no new node
    from ..ops.inplace import _rebase_view, positions_in_base

    _rebase_view(t, base, positions_in_base(t._data, base._data))


def _edge(t):
    """The edge into ``t``'s producer (its grad_fn, or its AccumulateGrad if it is a leaf)."""
    fn = t.grad_fn
    return (fn, t._output_nr) if fn is not None else (accumulator(t), 0)


def record(cls, inputs, meta=True):
    """Create a ``cls`` node whose inputs are ``inputs`` (tensors or None for constants).

    Callers check first that grad mode is on and some input requires grad. This runs once per
    recorded op, so the one- and two-input cases (nearly every op) are unrolled.
    """
    node = object.__new__(cls)
    for t in inputs:  # only views carry a version to compare; everything else skips fast
        if t is not None and t._grad_fn_version is not None and t._grad_fn_version != t._version[0]:
            refresh_view(t)
    if len(inputs) == 2:
        a, b = inputs
        a_on = a is not None and a._requires_grad
        b_on = b is not None and b._requires_grad
        node.next_functions = (_edge(a) if a_on else NO_EDGE, _edge(b) if b_on else NO_EDGE)
        node._meta = ((a._data.shape, a._data.dtype) if a_on else None,
                      (b._data.shape, b._data.dtype) if b_on else None) if meta else None
    elif len(inputs) == 1 and inputs[0] is not None and inputs[0]._requires_grad:
        a = inputs[0]
        node.next_functions = (_edge(a),)
        node._meta = ((a._data.shape, a._data.dtype),) if meta else None
    else:
        on = [t is not None and t._requires_grad for t in inputs]
        node.next_functions = tuple(_edge(t) if o else NO_EDGE for t, o in zip(inputs, on))
        node._meta = tuple((t._data.shape, t._data.dtype) if o else None
                           for t, o in zip(inputs, on)) if meta else None
    node._seq = next(_sequence)
    node._saved = ()
    if _hooks_state.anomaly:
        from .anomaly import remember_forward_stack

        remember_forward_stack(node)
    return node


class _HookState:
    """Engine-wide switches read on the hot path (anomaly mode, saved-tensor hooks)."""

    anomaly = False
    saved_tensor_hooks: ClassVar[list] = []  # one process-wide stack of (pack, unpack) pairs


_hooks_state = _HookState()


# -- saved entries ------------------------------------------------------------------------------
def saved_input(t):
    """Save an input tensor for backward (with its version, to detect later in-place edits)."""
    if _hooks_state.saved_tensor_hooks:
        return _pack(t, is_output=False)
    return (_INPUT, t, t._version[0])


def saved_output(t):
    """Save an output of the node being recorded, without holding the output tensor itself."""
    if _hooks_state.saved_tensor_hooks:
        return _pack(t, is_output=True)
    return (_OUTPUT, t._data, t._version, t._version[0], t._output_nr)


def saved_const(value):
    """Save a constant (a Python scalar or an array that is not a tensor)."""
    return (_CONST, value)


assert _CONST == 2  # ops/arithmetic.py builds constant entries inline on its hot path


def _pack(t, is_output):
    pack, unpack = _hooks_state.saved_tensor_hooks[-1]
    output_nr = t._output_nr if is_output else 0
    if is_output:
        t = t.detach()  # the hook must not see (and keep) the output's own grad_fn
    return (_PACKED, pack(t), unpack, is_output, output_nr)


def _version_error(node, t_version, saved_version, shape, dtype, output_nr):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{dtype} {list(shape)}], which is output {output_nr} of {node.name()}, is at "
        f"version {t_version}; expected version {saved_version} instead. Hint: the backtrace "
        "further above can show the operation that failed to compute its gradient."
    )


def check_versions(node) -> None:
    """Raise PyTorch's in-place error if a tensor this node saved was modified since."""
    entries = node._saved
    if not entries:
        return
    for entry in entries:
        kind = entry[0]
        if kind == _INPUT:
            t, v = entry[1], entry[2]
            if t._version[0] != v:
                fn = t.grad_fn
                raise _version_error(fn or node, t._version[0], v, t._data.shape,
                                     t._data.dtype, t._output_nr)
        elif kind == _OUTPUT and entry[2][0] != entry[3]:
            raise _version_error(node, entry[2][0], entry[3], entry[1].shape, entry[1].dtype,
                                 entry[4])


def _unpack(node, entry, as_tensor):
    kind = entry[0]
    if kind == _INPUT:
        t = entry[1]
        if t._version[0] != entry[2]:
            check_versions(node)
        return t if as_tensor else t._data
    if kind == _OUTPUT:
        if entry[2][0] != entry[3]:
            check_versions(node)
        if not as_tensor:
            return entry[1]
        return TensorType._make(entry[1], True, node, entry[4], entry[2])
    if kind == _CONST:
        value = entry[1]
        if as_tensor and hasattr(value, "shape") and not isinstance(value, TensorType):
            if not hasattr(value, "base"):  # a NumPy scalar: tensors always hold arrays
                value = np.asarray(value)
            return TensorType._make(value, False, None, 0, None)
        return value
    t = entry[2](entry[1])  # a saved_tensors_hooks unpack
    if entry[3] and as_tensor:
        return TensorType._make(t._data, True, node, entry[4], None)
    return t if as_tensor else t._data


def _entry_array(entry):
    kind = entry[0]
    if kind == _INPUT:
        return entry[1]._data
    if kind == _OUTPUT:
        return entry[1]
    if kind == _CONST:
        value = entry[1]
        return value if hasattr(value, "nbytes") and hasattr(value, "base") else None
    packed = entry[1]
    if hasattr(packed, "_data"):
        return packed._data
    return packed if hasattr(packed, "nbytes") and hasattr(packed, "base") else None


def emit_op(node, outputs) -> None:
    """Tell observers about a recorded op (callers check ``events.observers`` first)."""
    events.emit("op_recorded", node, outputs)
