"""The one way an op joins the graph: :func:`record`.

Every op computes its forward on raw arrays, then hands the result to ``record`` with its inputs
and its node class. ``record`` decides whether to record (grad mode on and an input requires
grad), brings stale views among the inputs up to date, links the node, keeps what the node's
backward reads, tells observers (the event seam), and returns the output tensor::

    class ExpBackward0(Node):
        saves = (OUTPUT,)

        def backward(self, g):
            (y,) = self.saved(g)
            return (g * y,)

    def exp(input):
        return record(ExpBackward0, (input,), np.exp(input._data))

Where the install built it, ``record`` is the compiled ``_record.c``: the same steps for the case
nearly every op is in, handing every other call to the Python function below (kept as
``_python_record``).
"""

from __future__ import annotations

import os

import numpy as np

from . import events
from .events import observers as _observers
from .grad_mode import grad_off_threads as _grad_off_threads
from .grad_mode import inference_threads as _inference_threads
from .grad_mode import state as _grad_state
from .graph import (
    _CONST,
    _INPUT,
    _NOTHING,
    _OUTPUT,
    _ZERO_NRS,
    SAVE_SECOND,
    AccumulateGrad,
    Node,
    Output,
    _sequence,
    accumulator,
    link,
)
from .graph import _save_input as save_input
from .graph import save as keep_saved
from .graph import switches as _switches
from .tensor import Tensor
from .views import refresh, share_memory, view_creation

__all__ = ["record", "would_record", "wrap"]

_make = Tensor._make
_new = object.__new__
_ndarray = np.ndarray
_ZERO_NRS1, _ZERO_NRS2 = _ZERO_NRS[1], _ZERO_NRS[2]


def wrap(data, node=None) -> Tensor:
    """A tensor around the array ``data`` (NumPy 0-d scalars are turned back into arrays)."""
    if type(data) is not _ndarray and (not hasattr(data, "base") or isinstance(data, np.generic)):
        data = np.asarray(data)
    return _make(data, node is not None, node)


def record(cls, inputs, data, *, save=None, attrs=None, operands=None, into=None, ctx=None):
    """The output tensor(s) of an op on ``inputs``, with a ``cls`` node when grad is recorded.

    - ``inputs``: the op's tensor inputs in the order of the node's gradients; None marks a
      constant operand (a Python number, say), which gets no gradient.
    - ``data``: the forward result, an array (or a tuple of arrays for an op with several
      outputs). For a view node class (``cls.is_view``) the outputs share the first input's
      memory and version counter, whether or not anything is recorded.
    - ``save``: what backward reads, overriding the class's ``saves`` (see ``graph.save``), or a
      function returning it, called only when recording (for values that cost work to build);
      ``operands``: the raw operands, for inputs saved where the operand was a constant.
    - ``attrs``: attributes for the node (``{"alpha": 2}``).
    - ``into``: instead of wrapping ``data``, rebase this existing tensor (or tuple of tensors,
      None for outputs outside the graph) onto the node: in-place writes and custom Functions.
    - ``ctx``: the node itself, made before the forward ran (a custom Function's ``ctx``).
    """
    # One pass over the inputs decides whether to record, brings stale views up to date and
    # finds each input's producer (``graph.link``'s work, inlined here for one and two inputs,
    # nearly every op): it runs once per op.
    if _grad_off_threads[0] and not _grad_state.enabled:
        on = False
    else:
        n = len(inputs)
        if n == 2:
            a, b = inputs
            on = (a is not None and a._requires_grad) or (b is not None and b._requires_grad)
        elif n == 1:
            a = inputs[0]
            on = a is not None and a._requires_grad
        else:  # (a loop, not ``any()`` over a generator: addmm records here every layer)
            on = False
            for t in inputs:
                if t is not None and t._requires_grad:
                    on = True
                    break
    if not on:
        if into is not None:
            return into
        if type(data) is _ndarray:
            if not cls.is_view:  # the common case, without a call
                return _make(data)
            return _view(data, inputs[0], None)
        return _outputs(cls, inputs, data, None)
    node = _new(cls) if ctx is None else ctx
    if n == 2:
        # Only views carry a version to compare; everything else skips fast.
        if a is not None and a._grad_fn_version is not None \
                and a._grad_fn_version != a._version_counter[0]:
            refresh(a)
        if b is not None and b._grad_fn_version is not None \
                and b._grad_fn_version != b._version_counter[0]:
            refresh(b)
        if a is not None and a._requires_grad:
            fa = a._grad_fn
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
        node._next_nr = (ra, rb) if ra or rb else _ZERO_NRS2
        node._seq = next(_sequence)
        if _switches.anomaly is not None:
            _switches.anomaly(node)
    elif n == 1:
        if a._grad_fn_version is not None and a._grad_fn_version != a._version_counter[0]:
            refresh(a)
        fa = a._grad_fn
        if fa is None:
            node._next0 = accumulator(a)
            node._next_nr = _ZERO_NRS1
        else:
            node._next0 = fa
            node._next_nr = (a._output_nr,) if a._output_nr else _ZERO_NRS1
        node._seq = next(_sequence)
        if _switches.anomaly is not None:
            _switches.anomaly(node)
    else:
        for t in inputs:
            if t is not None and t._grad_fn_version is not None \
                    and t._grad_fn_version != t._version_counter[0]:
                refresh(t)
        link(node, inputs)
    if attrs is not None:
        for name, value in attrs.items():
            setattr(node, name, value)
    if into is not None:
        node._saved = ()  # (``into`` points at the node now, even if saving fails)
        outputs = _rebase(into, node)
    elif type(data) is _ndarray and not cls.is_view:  # the common case: ``_make``, inlined
        node._shape = data.shape
        node._dtype = data.dtype
        outputs = _new(Tensor)
        outputs._data = data
        outputs._requires_grad = True
        outputs._grad_fn = node
        outputs._output_nr = 0
        outputs._version_counter = [0]
        if _inference_threads[0] and _grad_state.inference:
            outputs._inference = True
    elif type(data) is _ndarray:  # a view: ``weight.t()`` in every linear layer, ``x.view()``
        node._shape = data.shape
        node._dtype = data.dtype
        outputs = _view(data, inputs[0], node)
    else:
        outputs = _outputs(cls, inputs, data, node)
    if save is None:
        # A class that reads something off its inputs per recording keeps its ``_prepare`` in
        # a tuple subclass (``graph.PreparedSpec``): one attribute read for every class.
        spec = cls._save_spec
        if spec.__class__ is not tuple:
            spec = spec.prepare(node, inputs)
    elif save.__class__ is tuple:
        spec = save
    else:
        spec = save()
    if spec:
        if spec is not SAVE_SECOND:
            keep_saved(node, spec, inputs, outputs, operands)
        elif inputs[1] is None:  # ``x * 0.5``: the number
            node._saved = (_NOTHING, (_CONST, operands[1]))
        else:  # ``x * c`` of a constant tensor: graph.save's entry for it, without its loop
            node._saved = (_NOTHING, save_input(inputs[1]))
    else:
        node._saved = ()
    if _observers:
        events.emit("op_recorded", node, tuple(t for t in outputs if t is not None)
                    if type(outputs) is tuple else (outputs,))
    return outputs


_python_record = record
_compiled = None
if not os.environ.get("GRADNB_PURE_PYTHON"):  # (set: run the Python code alone, as tests do)
    try:  # ``record``'s common case, compiled (optional: the function above does it all)
        from . import _record as _compiled
    except ImportError:  # pragma: no cover - an install without a C compiler
        pass

if _compiled is not None:
    # The compiled ``record`` does the steps above for one to three tensor inputs and one output
    # array (one input for a view op), with nothing watching; it hands every other call to the
    # Python function.
    _compiled.configure(Tensor, Node, _ndarray, Output, _grad_off_threads, _inference_threads,
                        _grad_state, _switches, _observers, _sequence, _ZERO_NRS, SAVE_SECOND,
                        _NOTHING, (_INPUT, _OUTPUT, _CONST), refresh, accumulator, keep_saved,
                        save_input, record)
    record = _compiled.record


def would_record(operands) -> bool:
    """Whether an op on ``operands`` (tensors, numbers, None) records: ``record``'s own test, for
    in-place ops that choose how to compute by it (``record`` inlines it on its hot path)."""
    return _grad_state.enabled and any(
        isinstance(o, Tensor) and o._requires_grad for o in operands)


def _view(data, source, node):
    """The tensor around ``data``, a view op's one array: ``wrap`` and ``share_memory`` in one
    call. It shares ``source``'s version counter and base when ``data`` is a view of
    ``source``'s array (a view op may also return a copy, which stays independent)."""
    t = _new(Tensor)
    t._data = data
    t._requires_grad = node is not None
    t._grad_fn = node
    t._output_nr = 0
    src = source._data
    base = data.base
    if data is not src and base is not None and (base is src or base is src.base):
        t._version_counter = source._version_counter
        t._base = source if source._base is None else source._base
        t._grad_fn_version = source._version_counter[0]
        if source._inference:  # a view of an inference tensor is one (of a normal one, not)
            t._inference = True
        if _grad_off_threads[0] and not _grad_state.enabled or source._creation is not None:
            _made_view(t, source, node is not None, False)
        return t
    t._version_counter = [0]
    if _inference_threads[0] and _grad_state.inference:
        t._inference = True
    return t


def _made_view(t, source, recorded: bool, multi_output: bool) -> None:
    """PyTorch's ``CreationMeta`` for the view ``t`` of ``source`` (see views.py). A view made
    with grad mode off of a tensor that requires grad requires grad too, through its base: it
    has no history, and gradients reaching it go no further (``graph.accumulator``)."""
    creation = view_creation(source, multi_output)
    if creation is not None:
        t._creation = creation
    if not recorded and not _grad_state.enabled:
        t._grad_through_base = True
        if source._requires_grad:
            t._requires_grad = True


def _outputs(cls, inputs, data, node):
    if type(data) is not tuple:
        t = wrap(data, node)
        if node is not None:
            node._shape = t._data.shape
            node._dtype = t._data.dtype
        if cls.is_view:
            share_memory(t, inputs[0])
            if t._base is not None:
                _made_view(t, inputs[0], node is not None, False)
        return t
    # Several outputs of one node (split, unbind): each is a view of the input.
    if node is not None:
        node.num_outputs = len(data)
    source = inputs[0]
    base = source if source._base is None else source._base
    tensors = []
    for i, out in enumerate(data):
        t = wrap(out, node)
        t._output_nr = i
        if cls.is_view:
            t._version_counter = source._version_counter
            t._base = base
            t._grad_fn_version = source._version_counter[0]
            if t._inference and not source._inference:  # a view of a normal tensor is normal
                t._inference = False
            _made_view(t, source, node is not None, True)
        tensors.append(t)
    if node is not None:
        _describe_outputs(node, tensors)
    return tuple(tensors)


def _rebase(into, node):
    if type(into) is not tuple:
        _rebase_one(into, node, 0)
        node._shape = into._data.shape
        node._dtype = into._data.dtype
        return into
    node.num_outputs = len(into)
    for i, t in enumerate(into):
        if t is not None:
            _rebase_one(t, node, i)
    _describe_outputs(node, into)
    return into


def _describe_outputs(node, tensors) -> None:
    """The node's output metadata for a tuple of outputs (None: an output outside the graph):
    one shape and dtype per output, unwrapped when there is only one, as every single-output
    node keeps it."""
    shapes = tuple(None if t is None else t._data.shape for t in tensors)
    dtypes = tuple(None if t is None else t._data.dtype for t in tensors)
    node._shape, node._dtype = (shapes[0], dtypes[0]) if len(tensors) == 1 else (shapes, dtypes)


def _rebase_one(t, node, output_nr: int) -> None:
    t._grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True
    if t._grad_fn_version is not None:
        t._grad_fn_version = t._version_counter[0]


if _compiled is not None:  # (``_view`` is defined above by now)
    _compiled.configure_views(_view)
    _compiled.configure_leaves(AccumulateGrad)
