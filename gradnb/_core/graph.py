"""Graph nodes and what they save: what a forward op leaves behind for backward.

Ownership follows one rule, so a graph never forms a reference cycle: a tensor holds its
``grad_fn`` strongly, a node holds the nodes of its inputs strongly (``next_functions``), and
nothing points back. A node that needs its own output for backward (``exp``, ``tanh``) saves the
output's *array*, not the output tensor, and rebuilds a tensor around it on demand. So when the
last reference to a loss goes, the whole graph is freed by reference counting alone.

A node class says what its backward reads in ``saves`` (input positions, ``OUTPUT``); the one
recording function (:func:`gradnb._core.record.record`) saves exactly that, and the rule reads it
back with ``self.saved(g)``. Only this module knows how a saved value is stored: so a node can
check versions, release everything in one step after its backward ran, and report the bytes.

This module does not import the Tensor class: a saved value comes back as a tensor of the
gradient's own class when backward runs on tensors (``create_graph=True``).
"""

from __future__ import annotations

import functools
import itertools
import re
import weakref
from typing import ClassVar

import numpy as np

from .dtype import tensor_type_string
from .hooks import register

__all__ = [
    "NO_EDGE",
    "OUTPUT",
    "SECOND_BACKWARD_MESSAGE",
    "AccumulateGrad",
    "Node",
    "Output",
    "accumulator",
    "bump_version",
    "check_graph_versions",
    "check_versions",
    "const",
    "donated",
    "last_change",
    "link",
    "note_release",
    "unlinked",
]

NO_EDGE = (None, 0)

# Reads PyTorch's ``grad_fn._saved_<name>`` attributes; installed by
# ``gradnb.autograd.saved_attributes`` (names come from each class's ``saved_names``).
saved_attribute_reader = None

_sequence = itertools.count()
_ndarray = np.ndarray
_RELEASED = None  # ``node._saved`` after release

# The gradient the compiled backward loop hands the rule it is running as the rule's own, to
# overwrite: put here for the rule's call only when nothing but the pass holds it (see
# ``_loop.c``'s ``donate``). NumPy does the same for the temporaries of an expression; here it
# saves the allocation of an elementwise rule's result, such as ReLU's on a layer's gradient.
_donation = [None]


def donated(g) -> bool:
    """Whether a derivative rule may write its result into its gradient ``g``: the backward
    pass gave ``g`` to this rule alone, and ``g`` owns its memory."""
    return g is _donation[0] and g.base is None and g.flags.writeable


SECOND_BACKWARD_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `gradnb.no_grad()` instead of "
    "`gradnb.inference_mode()`."
)

# How a saved value is stored: a small tuple whose first item is its kind, so saving costs one
# allocation. Nothing outside this module reads these tuples.
_INPUT, _OUTPUT, _CONST, _PACKED = 0, 1, 2, 3


class Output:
    """In a save spec: output ``index`` of the op being recorded (``OUTPUT`` is output 0)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


OUTPUT = Output(0)


def const(value) -> tuple:
    """In a save spec: keep ``value`` (a Python number, an array that is not a tensor, None)."""
    return (_CONST, value)


_NOTHING = const(None)
# The save spec of ``x * 2``: nothing for the first input, the second (a number here) for the
# first input's gradient. ``record`` saves it without a call (the commonest op with a save).
SAVE_SECOND = (None, 1)
# Constants that hold no buffer (``x * 2`` saves the 2): memory accounting skips them.
_NO_BUFFER = frozenset((type(None), bool, int, float, complex))


class Node:
    """A backward function in the graph (``MulBackward0``, ``AccumulateGrad``, ...).

    Subclasses implement ``backward(self, *grad_outputs) -> tuple`` returning one gradient (or
    ``None``) per entry of ``next_functions``. Rules are written with operators and the helpers of
    ``gradnb.ops.dual``, so the same code runs on raw arrays in a first-order backward and on
    tensors (recording a graph) under ``create_graph=True``. A rule that needs gradnb's own
    tensor ops (``solve``, ``where``, ``einsum``) sets ``on_tensors``: the engine then hands it
    tensors in every pass (grad mode off in a first-order one, so nothing records) and takes
    arrays back, and the rule is differentiable to any order.

    A node class declares its op once, in PyTorch's words (``tools/autograd/derivatives.yaml``)::

        class MulBackward0(Node):
            saves = ("other", "self")       # what backward reads, by PyTorch's names
            rule = "self: grad * other.conj(); other: grad * self.conj()"

            def backward(self, g):
                other, x = self.saved(g)
                ...

    - ``inputs``: PyTorch's names of the op's differentiable arguments, in ``next_functions``
      order (default ``("self", "other")``); ``outputs``: its outputs' names (default
      ``("result",)``; ``("Q", "R")`` for ``linalg.qr``).
    - ``saves``: PyTorch's names of what it saves, in PyTorch's order (the order
      ``saved_tensors_hooks`` see). An input's name saves that input tensor; ``result`` (or
      ``result0``, ``result1``, ...) or an output's name the op's output; ``<input>_sym_sizes``, ``_sym_numel``,
      ``_sym_strides``, ``_scalar_type`` and ``_dim`` are read from that input when the op
      records; any other name (``dim``, ``keepdim``) is a plain value the op passes in
      ``record(attrs=...)`` (kept under the attribute ``saved_attrs`` maps it to, else its own
      name). A tensor the op saves that is neither a differentiable input nor an output
      (gather's ``index``, max_pool's ``indices``) is named in ``computed`` too: the op passes
      it as a tensor in ``record(attrs=...)`` and it is saved, versioned and packed like an
      input, in its place in ``saves``. ``self.saved(g)`` gives the tensors back in this order; ``grad_fn._saved_<name>``
      shows each of them. (Old style, still read: positions, ``OUTPUT``, ``const(v)``, with
      ``saved_names`` beside them; a recording may pass its own spec in ``record(save=...)``.)
    - ``unsigned``: the plain int values (``dim``, ``shifts``) PyTorch shows as unsigned 64-bit
      numbers, as its ``int64_t`` attributes print (``-1`` shows as ``18446744073709551615``);
      the op keeps the value as the caller gave it.
    - ``rule``: the chain rule in one line, as derivatives.yaml writes it (the step player shows
      it); ``why_nonfinite`` / ``fix_nonfinite`` / ``why_zero``: how this node can make a NaN or
      an all-zero gradient, and the fix, in words (``%why`` says them).
    - ``torch_name``: the name ``grad_fn`` prints, when it differs from the class name;
      ``fit_grads`` (False when the rule already returns gradients in each input's shape and
      dtype, so the engine need not sum or cast them), ``is_view`` (the output shares its
      input's memory) and ``on_tensors`` (the rule works on tensors, above).
    """

    # Only what every node needs is a slot; hooks and metadata are rare, so they default to the
    # class attribute and land in the instance ``__dict__`` when set (recording stays cheap).
    # The edges: the producer node of each input (None: no gradient) in the slots ``_next0``,
    # ``_next1``, ``_next2`` (and a tuple ``_next_rest`` for a fourth input on), and their output
    # numbers in one tuple ``_next_nr``, whose length is the number of inputs. Not a tuple of
    # producers: CPython's cyclic garbage collector walks every object that can refer to others
    # each time it collects the oldest generation, and a tuple of nodes is one, so it doubled
    # the objects a live graph adds per op (the deep chain's forward spent more time in those
    # collections than in its ops: ``benchmarks/bench_gc.py``). The output numbers hold only
    # ints (mostly the shared ``_ZERO_NRS``), which the collector stops walking. ``_next``
    # builds the tuple of producers on demand, ``next_functions`` the pairs.
    # ``_shape``/``_dtype`` describe the node's output (a tuple of them, one per output, when
    # ``num_outputs > 1``), as PyTorch's per-node ``InputMetadata``: the engine fits each
    # gradient it sends to the metadata of the node that receives it.
    __slots__ = ("__dict__", "__weakref__", "_dtype", "_next0", "_next1", "_next2", "_next_nr",
                 "_next_rest", "_saved", "_seq", "_shape")
    num_outputs = 1
    runs_user_code = False  # True for nodes whose backward is user code (custom Functions)
    saves: ClassVar[tuple] = ()
    fit_grads = True
    is_view = False
    on_tensors = False
    # The name PyTorch prints, for classes named for what they do (several PyTorch names cover
    # different rules: ``SliceBackward0`` of ``narrow`` and of ``t[1:]``); None: the class name.
    torch_name: ClassVar[str | None] = None
    _pre_hooks = None
    _hooks = None
    _tensor_hooks = None
    metadata = None
    # The order PyTorch packs this node's saved tensors in (positions in its save spec), where
    # that differs from the spec's: saved_tensors_hooks see PyTorch's order. None: in order.
    pack_order = None
    # PyTorch's name of each saved value, in the order they are saved (``("self", "other")``):
    # ``grad_fn._saved_self`` reads the one named ``self``. ``saved_attrs`` names the plain
    # values a node keeps as attributes: PyTorch's name -> the attribute (``{"dim": "dim"}``).
    saved_names: ClassVar[tuple] = ()
    saved_attrs: ClassVar[dict] = {}
    computed: ClassVar[tuple] = ()
    unsigned: ClassVar[tuple] = ()
    inputs: ClassVar[tuple] = ("self", "other")
    outputs: ClassVar[tuple] = ("result",)
    rule: ClassVar[str | None] = None
    why_nonfinite: ClassVar[str | None] = None
    fix_nonfinite: ClassVar[str | None] = None
    why_zero: ClassVar[str | None] = None
    # ``{"self": ("other",)}``: save ``self`` only when ``other`` needs a gradient (as PyTorch,
    # which saves a value only for the formulas that will run; ``_saved_self`` is then None).
    saved_when: ClassVar[dict] = {}
    # Compiled from ``saves`` when the class is made: the spec ``record`` saves (positions,
    # Output), and ``_prepare(node, inputs) -> spec``, None for the classes that need nothing
    # done per recording (reading ``self_sym_sizes`` off the inputs, leaving out a value no
    # formula will read).
    _save_spec: ClassVar[tuple] = ()
    _prepare: ClassVar = None

    def name(self) -> str:
        """The node's name as PyTorch prints it, e.g. ``MulBackward0``."""
        return self.torch_name or type(self).__name__

    def _sequence_nr(self) -> int:
        """The node's creation number, as PyTorch's: backward runs newer nodes first."""
        return self._seq

    @property
    def _next(self) -> tuple:
        """The producer node of each input (None where the input gets no gradient)."""
        n = len(self._next_nr)
        if n == 1:
            return (self._next0,)
        if n == 2:
            return (self._next0, self._next1)
        if n == 3:
            return (self._next0, self._next1, self._next2)
        if n == 0:
            return ()
        return (self._next0, self._next1, self._next2, *self._next_rest)

    @_next.setter
    def _next(self, producers) -> None:
        # (the caller sets ``_next_nr``, of the same length, beside it)
        n = len(producers)
        if n:
            self._next0 = producers[0]
            if n > 1:
                self._next1 = producers[1]
                if n > 2:
                    self._next2 = producers[2]
                    if n > 3:
                        self._next_rest = tuple(producers[3:])

    @property
    def next_functions(self) -> tuple:
        """One ``(node, output_nr)`` per input: the node that made the input (its
        ``AccumulateGrad`` for a leaf) and which of its outputs the input is; ``(None, 0)`` for
        an input that gets no gradient."""
        return tuple(zip(self._next, self._next_nr))

    def backward(self, *grad_outputs):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def output_metadata(self, nr: int = 0):
        """``(shape, dtype)`` (NumPy's) of output ``nr`` as recorded, or None for an output that
        is not in the graph."""
        if self.num_outputs == 1:
            return None if self._shape is None else (self._shape, self._dtype)
        shape = self._shape[nr]
        return None if shape is None else (shape, self._dtype[nr])

    def input_metadata(self, i: int):
        """``(shape, dtype)`` of input ``i`` as recorded (what the engine fits its gradient to),
        or None when input ``i`` gets no gradient."""
        nxt = self._next0 if i == 0 else self._next[i]
        return None if nxt is None else nxt.output_metadata(self._next_nr[i])

    # -- saved values -------------------------------------------------------------------------
    def saved(self, like) -> list:
        """The saved values, in ``saves`` order: arrays, or tensors when ``like`` (a gradient)
        is a tensor.

        Raises PyTorch's errors when the graph was already freed or a saved tensor was modified
        in place after it was saved.
        """
        entries = self._saved
        if entries is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        if type(like) is not _ndarray:  # (a failed getattr is slow: arrays skip it)
            make = getattr(type(like), "_make", None)
            if make is not None:
                return [_unpack(self, entry, make) for entry in entries]
        # First-order backward: the hot path, unrolled for the common entry kinds.
        if len(entries) == 1:
            entry = entries[0]
            kind = entry[0]
            if kind == _OUTPUT:
                if entry[2][0] != entry[3]:
                    check_versions(self)
                return (entry[1],)
            if kind == _INPUT:
                t = entry[1]
                if t._version_counter[0] != entry[2]:
                    check_versions(self)
                return (t._data,)
        elif len(entries) == 2 and entries[0] is _NOTHING:
            # ``x * c`` (``SAVE_SECOND``): nothing for ``x``, the factor for its gradient
            entry = entries[1]
            kind = entry[0]
            if kind == _CONST:
                return (None, entry[1])
            if kind == _INPUT:
                t = entry[1]
                if t._version_counter[0] != entry[2]:
                    check_versions(self)
                return (None, t._data)
        out = []
        for entry in entries:
            kind = entry[0]
            if kind == _INPUT:
                t = entry[1]
                if t._version_counter[0] != entry[2]:
                    check_versions(self)
                out.append(t._data)
            elif kind == _CONST:
                out.append(entry[1])
            elif kind == _OUTPUT:
                if entry[2][0] != entry[3]:
                    check_versions(self)
                out.append(entry[1])
            else:
                out.append(_unpack(self, entry, None))
        return out

    def saved_as(self, tensor_cls) -> tuple:
        """The saved values as tensors of ``tensor_cls`` (``ctx.saved_tensors``)."""
        entries = self._saved
        if entries is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        return tuple(_unpack(self, entry, tensor_cls._make) for entry in entries)

    def saved_named(self, name: str, tensor_cls):
        """The saved value named ``name`` in ``saved_names``, as a ``tensor_cls`` tensor (a
        plain value stays plain)."""
        entries = self._saved
        if entries is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        return _unpack(self, entries[self.saved_names.index(name)], tensor_cls._make)

    def hook_saved(self, name: str, pack_hook, unpack_hook, tensor_cls) -> None:
        """Replace the saved tensor named ``name`` by ``pack_hook(tensor)`` now; backward (and
        every read) gets ``unpack_hook(packed)`` back (PyTorch's ``SavedTensor.register_hooks``).
        """
        if self._saved is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        entries = list(self._saved)
        index = self.saved_names.index(name)
        entry = entries[index]
        if entry[0] == _PACKED:
            raise RuntimeError("SavedTensor hooks have already been set")
        tensor = _unpack(self, entry, tensor_cls._make)
        if tensor is None:
            raise RuntimeError("None is forbidden")
        is_output = entry[0] == _OUTPUT
        output_nr = tensor._output_nr if is_output else 0
        packed = pack_hook(tensor.detach() if is_output else tensor)
        entries[index] = (_PACKED, packed, unpack_hook, is_output, output_nr)
        self._saved = tuple(entries)

    def stale_saved(self):
        """The first saved tensor modified in place since it was saved, as ``(tensor, shape,
        dtype, saved_version, version_counter)`` (``tensor`` None for the node's own output), or
        None. Tools explain PyTorch's in-place error with it."""
        for entry in self._saved or ():
            kind = entry[0]
            if kind == _INPUT and entry[1]._version_counter[0] != entry[2]:
                t = entry[1]
                return t, t._data.shape, t._data.dtype, entry[2], t._version_counter
            if kind == _OUTPUT and entry[2][0] != entry[3]:
                return None, entry[1].shape, entry[1].dtype, entry[3], entry[2]
        return None

    def needs(self, i: int) -> bool:
        """Whether input ``i`` wants a gradient (PyTorch's ``needs_input_grad[i]``)."""
        if i == 0:  # (every node with inputs has a first one: no tuple built)
            return self._next0 is not None
        if i == 1 and len(self._next_nr) > 1:
            return self._next1 is not None
        return self._next[i] is not None

    @property
    def released(self) -> bool:
        """True once backward freed this node's saved tensors."""
        return self._saved is _RELEASED

    def saved_arrays(self) -> list:
        """The arrays this node keeps alive for backward (for memory accounting: what a graph
        still holds)."""
        return [] if self._saved is _RELEASED else _arrays_of(self._saved)

    def saved_sources(self) -> list:
        """For each saved buffer: ``(array, tensor, output_nr)``. ``tensor`` is the saved input
        tensor, or None for the node's own output ``output_nr`` (``output_nr`` None: a constant
        or a value packed by a saved-tensor hook). Tools (the tracer) read saved values here."""
        if self._saved is _RELEASED:
            return []
        sources = []
        for entry in self._saved:
            kind = entry[0]
            if kind == _INPUT:
                sources.append((entry[1]._data, entry[1], None))
            elif kind == _OUTPUT:
                sources.append((entry[1], None, entry[4]))
            else:
                arr = _entry_array(entry)
                if arr is not None:
                    sources.append((arr, None, None))
        return sources

    def release(self):
        """Drop the saved values; return the arrays that were held (caller does accounting).
        Runs once per node in every backward: the one-entry case (most nodes) and ``x * c``'s
        (``x * 2`` keeps its 2, ``x * c`` its constant tensor) are unrolled."""
        entries = self._saved
        self._saved = _RELEASED
        if len(entries) == 1:
            entry = entries[0]
            if entry[0] == _OUTPUT:
                return (entry[1],)
            if entry[0] == _INPUT:
                return (entry[1]._data,)
        elif len(entries) == 2 and entries[0] is _NOTHING:  # ``x * c``: the factor alone
            entry = entries[1]
            if entry[0] == _CONST and entry[1].__class__ in _NO_BUFFER:
                return ()
            if entry[0] == _INPUT:
                return (entry[1]._data,)
        return _arrays_of(entries)

    def retarget_output(self, old_array, t) -> None:
        """The output whose array ``old_array`` was saved now lives in ``t`` (an in-place op
        wrote it there): save ``t`` instead, so the array is not kept twice and a later in-place
        write to ``t`` is caught."""
        if self._saved:
            self._saved = tuple(_save_output(t) if e[0] == _OUTPUT and e[1] is old_array else e
                                for e in self._saved)

    # -- hooks --------------------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward; it may return new
        ``grad_inputs``."""
        if self._hooks is None:
            self._hooks = {}
        switches.user_code = True
        return register(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node's backward; it may return new grads."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        switches.user_code = True
        return register(self._pre_hooks, fn)

    def __repr__(self) -> str:
        # As Python prints any object, and PyTorch its nodes: the name and the address.
        # (Without a C++ namespace: a leaf's node prints as ``<AccumulateGrad object ...>``.)
        return f"<{self.name().rpartition('::')[2]} object at {id(self):#x}>"

    def __init_subclass__(cls, **kwargs) -> None:
        # PyTorch's ``grad_fn._saved_<name>`` and ``_raw_saved_<name>``, one property per name
        # the class declares. Not a ``__getattr__``: on a class that defines one, CPython takes
        # its slow path for every attribute read, and the engine reads node attributes on
        # every op.
        super().__init_subclass__(**kwargs)
        if any(k in cls.__dict__ for k in ("saves", "inputs", "outputs", "saved_when",
                                            "computed")):
            _compile_saves(cls)
        for name in cls.saved_names:
            _add_saved_reader(cls, "_saved_" + name)
            _add_saved_reader(cls, "_raw_saved_" + name)
        for name in cls.saved_attrs:
            _add_saved_reader(cls, "_saved_" + name)


_RESULT = re.compile(r"result(\d*)$")
_FILLED = re.compile(r"(\w+?)_(sym_sizes|sym_numel|sym_strides|scalar_type|dim)$")


def _compile_saves(cls) -> None:
    """Turn a class's ``saves`` (PyTorch's names) into what ``record`` and the readers use."""
    saves = cls.saves
    cls._prepare = None  # (not a parent's: this class says again what it saves)
    if not all(isinstance(name, str) for name in saves):  # old style: positions, Output
        cls._save_spec = tuple(saves)
        return
    spec, tensors, attrs, fills = [], [], dict(cls.saved_attrs), []
    for name in saves:
        result = _RESULT.match(name)
        filled = _FILLED.match(name)
        if name in cls.inputs:
            spec.append(cls.inputs.index(name))
            tensors.append(name)
        elif name in cls.outputs:
            spec.append(Output(cls.outputs.index(name)))
            tensors.append(name)
        elif name in cls.computed:  # (before ``result1``: max_pool's indices are one)
            spec.append(None)  # the op's tensor, put in its place per recording
            tensors.append(name)
        elif result:
            spec.append(Output(int(result.group(1) or 0)))
            tensors.append(name)
        elif filled and filled.group(1) in cls.inputs:
            fills.append((name, cls.inputs.index(filled.group(1)), filled.group(2)))
            attrs.setdefault(name, name)
        else:
            attrs.setdefault(name, name)
    spec = tuple(spec)
    cls._save_spec = spec
    cls.saved_names = tuple(tensors)
    cls.saved_attrs = attrs
    when = [(tensors.index(name), tuple(cls.inputs.index(i) for i in needers))
            for name, needers in cls.saved_when.items()]
    computed = tuple((tensors.index(name), name) for name in saves if name in cls.computed)
    if fills or when or computed:
        prepare = functools.partial(_prepare, tuple(fills), tuple(when), computed, spec)
        cls._prepare = staticmethod(prepare)
        cls._save_spec = PreparedSpec(spec, prepare)


class PreparedSpec(tuple):
    """The ``_save_spec`` of a class that has a ``_prepare``: the same tuple, carrying the
    function. ``record`` reads one attribute per recording, ``_save_spec``, and calls ``prepare``
    only when it is not a plain tuple (most classes need nothing done per recording)."""

    def __new__(cls, spec: tuple, prepare):
        self = super().__new__(cls, spec)
        self.prepare = prepare
        return self


def _prepare(fills, when, computed, spec, node, inputs) -> tuple:
    """The spec to save for this recording, after reading what the class reads off its inputs.
    """
    if fills:
        _fill(node, fills, inputs)
    if when or computed:
        spec = list(spec)
        # The op's own tensors: moved from the attributes ``record`` set into the saved
        # entries (so the node holds each once, and a later in-place edit is caught).
        attrs = node.__dict__
        for index, name in computed:
            spec[index] = attrs.pop(name, None)
        nxt = node._next
        for index, needers in when:
            if all(nxt[i] is None for i in needers):
                spec[index] = None
        spec = tuple(spec)
    return spec


def _fill(node, fills, inputs) -> None:
    """Keep what a node reads off its inputs (``self_sym_sizes``...) when it is recorded."""
    for name, position, kind in fills:
        t = inputs[position]
        if t is None:
            continue
        data = t._data
        if kind == "sym_sizes":
            value = data.shape
        elif kind == "sym_numel":
            value = data.size
        elif kind == "dim":
            value = data.ndim
        elif kind == "sym_strides":
            value = element_strides(data)
        else:
            value = t.dtype
        setattr(node, name, value)


def element_strides(data) -> tuple:
    """An array's strides in elements, as PyTorch shows a tensor's: where NumPy gives an empty
    array zero strides, PyTorch's empty tensor has contiguous ones."""
    strides = data.strides
    if data.size or all(strides):
        return tuple(st // data.itemsize for st in strides)
    return _contiguous_strides(data.shape)


def _contiguous_strides(shape) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _add_saved_reader(cls, attr: str) -> None:
    if attr in cls.__dict__:
        return

    def read(node):
        if saved_attribute_reader is None:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
        return saved_attribute_reader(node, attr)

    setattr(cls, attr, property(read))


class AccumulateGrad(Node):
    """The node that adds a gradient into a leaf's ``.grad``; ``variable`` is that leaf."""
    rule = "adds grad into the leaf's .grad"

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        self.variable = variable
        self._next_nr = ()  # (no inputs: no edge slots to set)
        self._saved = ()
        self._shape = variable._data.shape
        self._dtype = variable._data.dtype
        self._seq = next(_sequence)

    def backward(self, grad):
        return ()

    def name(self) -> str:
        """As PyTorch names its C++ node (``torch::autograd::AccumulateGrad``), in gradnb's
        namespace."""
        return "gradnb::autograd::AccumulateGrad"


class _Switches:
    """Engine-wide switches read on the hot path (instance attributes, not class ones: CPython
    reads those fastest).

    - ``anomaly``: None, or (while anomaly mode is on) the function that remembers where each
      node was recorded;
    - ``saved_tensor_hooks``: one process-wide stack of (pack, unpack) pairs;
    - ``user_code``: False until the process first registers a hook on a tensor or node, keeps
      a non-leaf's gradient (``retain_grad``) or records a custom Function. Until then no
      backward can run user code, and discovery skips looking for it node by node.
    """

    def __init__(self) -> None:
        self.anomaly = None
        self.saved_tensor_hooks: list = []
        self.user_code = False


switches = _Switches()


# -- linking a node into the graph ------------------------------------------------------------------
def accumulator(leaf) -> AccumulateGrad | None:
    """The leaf's AccumulateGrad node. The leaf holds it weakly, so the graph owns it and a leaf
    that outlives its graph does not keep the node alive; within one graph it is shared."""
    ref = leaf._accumulator
    node = ref() if ref is not None else None
    if node is None:
        if leaf._grad_through_base:
            # A view made with grad mode off requires grad through its base alone: as in
            # PyTorch, it has no AccumulateGrad, and gradients reaching it go no further.
            return None
        node = AccumulateGrad(leaf)
        leaf._accumulator = weakref.ref(node)
    return node


def link(node, inputs) -> None:
    """Connect ``node`` to ``inputs`` (tensors, or None for constants): one edge per input. Runs
    once per recorded op, so the one- and two-input cases (nearly every op) are unrolled. The
    caller sets the node's output metadata (``_shape``, ``_dtype``)."""
    if len(inputs) == 2:
        a, b = inputs
        if a is not None and a._requires_grad:
            fa = a._grad_fn  # callers brought stale views up to date first
            if fa is None:
                fa, ra = accumulator(a), 0
            else:
                ra = a._output_nr
        else:
            fa, ra = None, 0
        if b is not None and b._requires_grad:
            fb = b._grad_fn
            if fb is None:
                fb, rb = accumulator(b), 0
            else:
                rb = b._output_nr
        else:
            fb, rb = None, 0
        node._next0 = fa
        node._next1 = fb
        node._next_nr = (ra, rb) if ra or rb else _ZERO_NRS[2]
    elif len(inputs) == 1 and inputs[0] is not None and inputs[0]._requires_grad:
        a = inputs[0]
        fa = a._grad_fn
        if fa is None:
            node._next0 = accumulator(a)
            node._next_nr = _ZERO_NRS[1]
        else:
            node._next0 = fa
            node._next_nr = (a._output_nr,) if a._output_nr else _ZERO_NRS[1]
    else:  # three or more inputs (addmm, custom Functions): one loop, no edge pairs
        fns, nrs = [], []
        for t in inputs:
            if t is None or not t._requires_grad:
                fns.append(None)
                nrs.append(0)
            elif t._grad_fn is None:
                fns.append(accumulator(t))
                nrs.append(0)
            else:
                fns.append(t._grad_fn)
                nrs.append(t._output_nr)
        if len(fns) == 3:  # (addmm: every linear layer; the setter's call saved)
            node._next0, node._next1, node._next2 = fns
        else:
            node._next = fns
        node._next_nr = _ZERO_NRS[len(nrs)] if len(nrs) < 4 and not any(nrs) else tuple(nrs)
    node._seq = next(_sequence)
    node._saved = ()
    if switches.anomaly is not None:
        switches.anomaly(node)


# Output numbers of a node whose inputs all come from output 0 (nearly every node), shared:
# the engine tells a node's number of inputs by which one it holds, without a call.
_ZERO_NRS = ((), (0,), (0, 0), (0, 0, 0))


def unlinked(cls, num_inputs: int):
    """A ``cls`` node with no edges (a custom Function's ctx when nothing requires grad)."""
    node = object.__new__(cls)
    node._next = (None,) * num_inputs
    node._next_nr = (0,) * num_inputs
    node._shape = node._dtype = None
    node._seq = -1
    node._saved = ()
    return node


def save(node, spec, inputs, outputs, operands) -> None:
    """Keep what ``node``'s backward reads, as ``spec`` lists it: an input position (a Python
    operand at that position is kept as a constant, taken from ``operands``), ``Output(i)``,
    ``const(value)``, None (nothing, to keep positions), or any other tensor (custom Functions
    save intermediates). Runs once per recorded op: the entries are built inline."""
    packing = switches.saved_tensor_hooks
    if packing and node.pack_order is not None:
        entries = [None] * len(spec)
        for i in node.pack_order:  # each entry saved (and so packed) in PyTorch's order
            entries[i] = _entry(spec[i], inputs, outputs, operands)
        node._saved = tuple(entries)
        return
    entries = []
    for item in spec:
        if item.__class__ is int:
            t = inputs[item]
            if t is None:
                entries.append((_CONST, operands[item]))
            elif t._inference:
                raise RuntimeError(INFERENCE_SAVED_MESSAGE)
            else:
                entries.append(_pack(t, False) if packing else (_INPUT, t, t._version_counter[0]))
        elif item is None:
            entries.append(_NOTHING)
        elif item.__class__ is Output:
            t = outputs[item.index] if item.index or outputs.__class__ is tuple else outputs
            entries.append(_pack(t, True) if packing else
                           (_OUTPUT, t._data, t._version_counter, t._version_counter[0], t._output_nr))
        elif item.__class__ is tuple:
            entries.append(item)
        else:
            entries.append(_save_input(item))
    node._saved = tuple(entries)


def _entry(item, inputs, outputs, operands) -> tuple:
    """One entry of a save spec (``save``'s loop, for saving in a given order)."""
    if item.__class__ is int:
        t = inputs[item]
        return (_CONST, operands[item]) if t is None else _save_input(t)
    if item is None:
        return _NOTHING
    if item.__class__ is Output:
        t = outputs[item.index] if item.index or outputs.__class__ is tuple else outputs
        return _save_output(t)
    return item if item.__class__ is tuple else _save_input(item)


# -- saved entries ------------------------------------------------------------------------------
def _save_input(t):
    """An input tensor, with its version, to detect later in-place edits."""
    if t._inference:
        raise RuntimeError(INFERENCE_SAVED_MESSAGE)
    if switches.saved_tensor_hooks:
        return _pack(t, is_output=False)
    return (_INPUT, t, t._version_counter[0])


def _save_output(t):
    """An output of the node being recorded, without holding the output tensor itself."""
    if switches.saved_tensor_hooks:
        return _pack(t, is_output=True)
    return (_OUTPUT, t._data, t._version_counter, t._version_counter[0], t._output_nr)


def _pack(t, is_output):
    pack, unpack = switches.saved_tensor_hooks[-1]
    output_nr = t._output_nr if is_output else 0
    if is_output:
        t = t.detach()  # the hook must not see (and keep) the output's own grad_fn
    return (_PACKED, pack(t), unpack, is_output, output_nr)


def _version_error(producer, t_version, saved_version, shape, dtype, output_nr):
    """PyTorch's in-place error: the tensor as ``[gradnb.FloatTensor [2]]``, the node that
    produced it by its short name (``Exp`` for ``ExpBackward0``; nothing for a leaf)."""
    source = ""
    if producer is not None:
        short = re.sub(r"Backward\d*$", "", producer.name())
        source = f", which is output {output_nr} of {short},"
    hint = ("Hint: the backtrace further above can show the operation that failed to compute "
            "its gradient. The variable in question was changed in there or anywhere later. "
            "Good luck!" if switches.anomaly is not None else
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with gradnb.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor_type_string(dtype)} {list(shape)}]{source} is at version "
        f"{t_version}; expected version {saved_version} instead. {hint}"
    )


def check_versions(node) -> None:
    """Raise PyTorch's in-place error if a tensor this node saved was modified since; or its
    second-backward error if the saved values were already freed."""
    entries = node._saved
    if entries is _RELEASED:
        raise RuntimeError(SECOND_BACKWARD_MESSAGE)
    for entry in entries:
        kind = entry[0]
        if kind == _INPUT:
            t, v = entry[1], entry[2]
            if t._version_counter[0] != v:
                raise _version_error(t.grad_fn, t._version_counter[0], v, t._data.shape,
                                     t._data.dtype, t._output_nr)
        elif kind == _OUTPUT and entry[2][0] != entry[3]:
            raise _version_error(node, entry[2][0], entry[3], entry[1].shape, entry[1].dtype,
                                 entry[4])


# The sequence number drawn at the last change that can stop a recorded node from running: an
# in-place write to any tensor (``bump_version``: a saved tensor may now be stale) or a backward
# pass that frees saved tensors (``note_release``). A node recorded later (a larger ``_seq``)
# cannot be affected by either, so before a pass the engine checks only the nodes older than
# this: in a training loop, where each step builds its graph after the last step's backward and
# optimizer update, none.
last_change = [-1]


def bump_version(t) -> None:
    """Count an in-place write to ``t`` (its version counter is shared with its views)."""
    t._version_counter[0] += 1
    last_change[0] = next(_sequence)


def note_release() -> None:
    """A backward pass is about to free the saved tensors of nodes recorded before now."""
    last_change[0] = next(_sequence)


def check_graph_versions(nodes) -> None:
    """``check_versions`` for each of ``nodes`` in one call: before a backward runs, the engine
    checks every node it reached that is older than ``last_change`` (a loop here, not a call
    per node)."""
    for node in nodes:
        entries = node._saved
        if entries is _RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        for entry in entries:
            kind = entry[0]
            if (kind == _INPUT and entry[1]._version_counter[0] != entry[2]) or \
                    (kind == _OUTPUT and entry[2][0] != entry[3]):
                check_versions(node)


def _unpack(node, entry, make):
    """One saved value: an array, or (``make``: a tensor class's ``_make``) a tensor."""
    kind = entry[0]
    if kind == _INPUT:
        t = entry[1]
        if t._version_counter[0] != entry[2]:
            check_versions(node)
        return t if make is not None else t._data
    if kind == _OUTPUT:
        if entry[2][0] != entry[3]:
            check_versions(node)
        if make is None:
            return entry[1]
        return make(entry[1], True, node, entry[4], entry[2])
    if kind == _CONST:
        value = entry[1]
        if make is not None and hasattr(value, "shape") and not hasattr(value, "_data"):
            if not hasattr(value, "base"):  # a NumPy scalar: tensors always hold arrays
                value = np.asarray(value)
            return make(value, False, None, 0, None)
        return value
    t = entry[2](entry[1])  # a saved_tensors_hooks unpack
    if entry[3] and make is not None:
        return make(t._data, True, node, entry[4], None)
    return t if make is not None else t._data


def _arrays_of(entries) -> list:
    """The arrays saved ``entries`` hold (constants that are plain numbers hold none)."""
    arrays = []
    for entry in entries:
        kind = entry[0]
        if kind == _INPUT:
            arrays.append(entry[1]._data)
        elif kind == _OUTPUT:
            arrays.append(entry[1])
        elif kind != _CONST or entry[1].__class__ not in _NO_BUFFER:
            arr = _entry_array(entry)
            if arr is not None:
                arrays.append(arr)
    return arrays


def _entry_array(entry):
    kind = entry[0]
    if kind == _INPUT:
        return entry[1]._data
    if kind == _OUTPUT:
        return entry[1]
    if kind == _CONST:
        value = entry[1]
        # A NumPy scalar (a constant operand such as ``np.float64(2.0)``) is no buffer to count.
        return value if hasattr(value, "nbytes") and hasattr(value, "base") \
            and not isinstance(value, np.generic) else None
    packed = entry[1]
    if hasattr(packed, "_data"):
        return packed._data
    return packed if hasattr(packed, "nbytes") and hasattr(packed, "base") else None
