"""Views and their history: sharing a version counter, and regenerating a stale ``grad_fn``.

A view (``x[0]``, ``x.t()``, ``x.view(...)``) shares its base's memory and version counter. When
the base or a sibling view is written in place, the view's recorded history is out of date: as
in PyTorch, its ``grad_fn`` is regenerated as ``AsStridedBackward0`` of the base's current
history, the next time anyone looks at it (an op using the view, ``backward``, or reading
``view.grad_fn``).

Some views cannot be given a history that way, and PyTorch refuses to write them in place or to
regenerate them (its ``CreationMeta``, kept here as ``Tensor._creation``):

- ``"no_grad"``: made with grad mode off. Its history would be ambiguous: the write happened with
  grad mode on, the view without. Such a view of a tensor that requires grad requires grad too,
  with no history of its own (a leaf that gradients do not reach).
- ``"inference"``: made in inference mode, of a normal tensor.
- ``"multi_output"``: one of several views one op returns (``split``, ``unbind``), whose node
  cannot stand for a write into one of them.
- ``"custom_function"``: a view a custom ``autograd.Function`` returned, whose custom backward a
  rebase would override (``autograd/function.py``).

A view of such a view keeps its meta (a view made with grad mode off takes ``"no_grad"``, unless
its source's is ``"inference"``, the strictest).
"""

from __future__ import annotations

import numpy as np

from . import events
from .backend import get_array_module
from .grad_mode import state as _grad_state
from .graph import Node, link

__all__ = [
    "AsStridedBackward0",
    "base_key",
    "positions_in_base",
    "rebase_refusal",
    "rebase_view",
    "refresh",
    "share_memory",
    "shares_memory",
    "strided_view",
    "view_creation",
]


class AsStridedBackward0(Node):
    """A view regenerated after an in-place write through it: its entries, read from the base.
    The gradient is ``g`` written at the view's positions into zeros of the base's shape."""
    rule = "base: zeros with grad written at the view's positions"

    __slots__ = ("base_shape", "key")
    fit_grads = False

    def backward(self, g):
        make = getattr(type(g), "_make", None)
        if make is not None:  # under create_graph: a recorded index_put, differentiable again
            xp = get_array_module(g._data)
            zeros = make(xp.zeros(self.base_shape, dtype=g._data.dtype))
            return (zeros.index_put(self.key, g),)
        out = get_array_module(g).zeros(self.base_shape, dtype=g.dtype)
        out[self.key] = g
        return (out,)


def base_key(positions, shape):
    """The index into a base array of ``shape`` for flat ``positions``. A 0-d base, whose one
    element NumPy cannot unravel to, takes ``None`` per view dimension: ``g[key]`` then has the
    view's shape (all ones)."""
    if not shape:
        return (None,) * positions.ndim
    return get_array_module(positions).unravel_index(positions, shape)

def share_memory(t, input) -> None:
    """Make ``t`` a view of ``input`` (its version counter and base) if its array is a view of
    ``input``'s array; a copy stays independent."""
    out = t._data
    if out is not input._data and getattr(out, "base", None) is not None \
            and shares_memory(out, input._data):
        t._version_counter = input._version_counter
        t._base = input if input._base is None else input._base
        t._grad_fn_version = input._version_counter[0]


def strided_view(strided, data):
    """``strided`` (a view of the NumPy array ``data``'s memory that NumPy hands out read-only,
    or through ``as_strided``, whose ``.base`` is a stand-in) as the writable view NumPy's own
    views are: its ``.base`` the array owning the memory, which gradnb's version counters,
    storages and memory reports follow. Read-only where that array is. None where it cannot
    lend its buffer (another array library, an exotic owner)."""
    if type(data) is not np.ndarray:
        return None
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    offset = strided.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        view = np.ndarray(strided.shape, strided.dtype, buffer=root, offset=offset,
                          strides=strided.strides)
    except (TypeError, ValueError, BufferError):
        return None
    if not root.flags.writeable:
        view.flags.writeable = False
    return view


def shares_memory(a, b) -> bool:
    base_a = a.base if a.base is not None else a
    base_b = b.base if b.base is not None else b
    return base_a is base_b or base_a is b or a.base is b


def refresh(t) -> None:
    """Regenerate the grad_fn of a view whose base (or a sibling view) was written in place
    since the view's grad_fn was set. Without this, the view would still point at the history
    from before the write and its gradient would be silently wrong. A view PyTorch cannot
    regenerate (see the module's docstring) is refused, changing nothing."""
    base = t._base
    if t._creation is not None and (t._grad_fn is not None
                                    or (base is not None and base._requires_grad)):
        raise RuntimeError(rebase_refusal(t, indirect=True))
    t._grad_fn_version = t._version_counter[0]
    if base is None or base._grad_fn is None:
        return  # a view of a leaf (or of a tensor without history) needs no new node
    rebase_view(t, base, positions_in_base(t._data, base._data))


def view_creation(source, multi_output: bool = False):
    """PyTorch's ``CreationMeta`` of a view of ``source`` made now (None: its ``DEFAULT``): the
    mode's, else ``"multi_output"`` for one of several views, else ``source``'s own."""
    if _grad_state.inference:
        new = "inference"
    elif not _grad_state.enabled:
        new = "no_grad"
    elif multi_output:
        new = "multi_output"
    else:
        return source._creation
    return "inference" if source._creation == "inference" else new


_REFUSAL_ADVICE = {
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
               "clarify your code by moving both the view and the inplace either both inside the "
               "no_grad block (if you don't want the inplace to be tracked) or both outside (if "
               "you want the inplace to be tracked).",
    "inference": " Given that this use case is ambiguous and error-prone, it is forbidden. You "
                 "can clarify your code by moving both the view and the inplace either both "
                 "inside the inference_mode block (if you don't want the inplace to be tracked) "
                 "or both outside (if you want the inplace to be tracked).",
    "multi_output": " This view is the output of a function that returns multiple views. Such "
                    "functions do not allow the output views to be modified inplace. You should "
                    "replace the inplace operation by an out-of-place one.",
    "custom_function": " This view was created inside a custom Function (or because an input "
                       "was returned as-is) and the autograd logic to handle view+inplace would "
                       "override the custom backward associated with the custom Function, "
                       "leading to incorrect gradients. This behavior is forbidden. You can fix "
                       "this by cloning the output of the custom Function.",
}


def rebase_refusal(t, indirect: bool) -> str:
    """PyTorch's words (``handle_view_on_rebase``) refusing an in-place write into the view ``t``
    (``indirect``: into its base or a sibling view, found when ``t`` is next used)."""
    creation = t._creation
    node = t._grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    # PyTorch names the view's op by its node's name less "Backward" and a 0 after it: "Output 0
    # of Split" (SplitBackward0), "of Squeeze1" (SqueezeBackward1).
    op = None if node is None else type(node).__name__.replace("Backward0", "").replace(
        "Backward", "")
    if creation in ("no_grad", "inference") or node is None:
        prefix = ("A view was created in" if node is None else
                  f"Output {t._output_nr} of {op} is a view of a view which was created in")
        message = (f"{prefix} inference mode and {modified} modified inplace in normal mode."
                   if creation == "inference" else
                   f"{prefix} no_grad mode and {modified} modified inplace with grad mode "
                   "enabled.")
    else:
        message = f"Output {t._output_nr} of {op} is a view and {modified} modified inplace."
    return message + _REFUSAL_ADVICE[creation]


def rebase_view(view, base, positions) -> None:
    """Make ``view`` an ``AsStridedBackward0`` view of ``base``'s current history; ``positions``
    are its entries' flat positions in ``base``."""
    node = object.__new__(AsStridedBackward0)
    link(node, (base,))
    node._shape = view._data.shape
    node._dtype = view._data.dtype
    node.base_shape = base._data.shape
    node.key = base_key(positions, base._data.shape)
    view._grad_fn = node
    view._output_nr = 0
    view._requires_grad = True
    view._grad_fn_version = view._version_counter[0]
    if events.observers:
        events.emit("op_recorded", node, (view,))


def positions_in_base(view, base):
    """For each entry of the array ``view`` (a view into ``base``'s memory), its flat C-order
    position in ``base``, found from byte offsets so that any strided view works."""
    if view.dtype != base.dtype:
        # A real or imaginary part of a complex tensor: its entries are halves of the base's,
        # which a CopySlices / AsStrided gradient cannot address. Refuse rather than be wrong.
        raise RuntimeError("gradnb does not support in-place writes through the real or "
                           "imaginary part (real, imag, view_as_real, view_as_complex) of a "
                           "tensor that has autograd history; write into a copy instead")
    xp = get_array_module(base)
    offsets = _byte_offsets(view, xp) + (_address(view) - _address(base))
    itemsize = base.itemsize
    if base.flags.c_contiguous:
        return offsets // itemsize
    base_offsets = _byte_offsets(base, xp).reshape(-1)
    order = xp.argsort(base_offsets)
    return order[xp.searchsorted(base_offsets[order], offsets)]


def _byte_offsets(a, xp):
    offsets = xp.zeros((), dtype=np.int64)
    for k, (n, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = n
        offsets = offsets + (xp.arange(n, dtype=np.int64) * stride).reshape(shape)
    return xp.broadcast_to(offsets, a.shape)


def _address(a) -> int:
    if hasattr(a, "__array_interface__"):
        return a.__array_interface__["data"][0]
    return a.data.ptr
