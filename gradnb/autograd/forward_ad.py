"""Forward-mode AD: ``dual_level``, ``make_dual``, ``unpack_dual`` (PyTorch's API).

>>> import gradnb
>>> import gradnb.autograd.forward_ad as fwAD
>>> x, v = gradnb.tensor([0.0, 1.0]), gradnb.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, v).exp()
...     fwAD.unpack_dual(y).tangent        # exp'(x) * v
tensor([1.0000, 5.4366])

Design: one derivative table, used both ways
--------------------------------------------
Every op already has a reverse rule (its node's ``backward``), written in gradnb's own ops so
that it can itself be differentiated. A vector-Jacobian product is *linear* in the incoming
gradient ``u``: ``vjp(u) = J^T u``. Differentiating it with respect to ``u`` along the input
tangent ``t`` gives ``J t``, the Jacobian-vector product -- the "double-vjp" trick. So forward
mode needs no second rule per op: while a dual level is open, an engine observer receives every
recorded op (the ``op_recorded`` event, sent after the node saved what its backward needs), and
if one of the op's inputs carries a tangent it

1. runs the node's ``backward`` on fresh zero gradients ``u`` (requiring grad, one per output),
   which records the small graph of ``J^T u``;
2. fits each input gradient to its input's shape and dtype (the engine's central unbroadcast);
3. takes ``grad(sum_j <J_j^T u, t_j>, u)`` = ``J t``: the output tangents.

Tangents are computed eagerly, op by op, as in PyTorch (a fused op that announces itself
before it finished saving is done on first use of its tangent instead), and ops gradnb adds later get forward
mode for free, custom ``Function``s included (when their ``backward`` is written in gradnb ops).
Tangents are kept on the node that produced a tensor, per output, so they follow the tensor
through views and in-place ops exactly as its ``grad_fn`` does. The price is one small reverse
pass per op instead of a closed formula: fine for a teaching engine, not for speed.

Because it rides on recording, two things differ from PyTorch (both documented, both visible
only to code that looks): a dual tensor reports ``requires_grad=True`` and has a ``grad_fn``
(``MakeDualBackward0``), and ops run under ``no_grad`` drop the tangent (PyTorch keeps it).
``unpack_dual(...).primal`` is detached when no real (reverse-mode) input was involved, so its
``requires_grad`` is PyTorch's.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import ops
from .._core import events
from .._core.grad_mode import enable_grad
from .._core.graph import Node, link
from .engine import _fit, grad

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and its tangent (None without one)."""

    primal: object
    tangent: object


class _Level:
    """An open dual level; it is also the engine observer that propagates tangents."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.busy = False  # True while computing tangents: the ops that records are internal
        self.subscription = events.subscribe(self)

    def op_recorded(self, node, outputs) -> None:
        if self.busy:
            return
        tangents = [_tangent_at(fn, nr, self) for fn, nr in node.next_functions]
        if all(t is None for t in tangents):
            return
        node._fw_level = self
        node._fw_only = all(fn is None or getattr(fn, "_fw_only", False)
                            for fn, _ in node.next_functions)
        node._fw_outputs = [(out._output_nr, out.shape, out.dtype, out.device)
                            for out in outputs if out.grad_fn is node]
        node._fw_pending = tangents
        try:
            self.resolve(node)
        except (ValueError, AttributeError):
            # A few fused ops tell observers before they finished saving what their backward
            # needs; their tangents are computed on first use instead (by then they are whole).
            node._fw_pending = tangents

    def resolve(self, node) -> None:
        """Compute (once) the output tangents of a node recorded with tangent inputs."""
        tangents, node._fw_pending = node._fw_pending, None
        self.busy = True
        try:
            node._fw_tangents = _propagate(node, node._fw_outputs, tangents)
        finally:
            self.busy = False


_current: _Level | None = None


def enter_dual_level() -> int:
    """Open a dual level (only one at a time, as in PyTorch); returns its index."""
    global _current
    if _current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current = _Level(0)
    return _current.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made inside it is dropped."""
    global _current
    if _current is None or (level is not None and level != _current.index):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _current.subscription.remove()
    _current = None


class dual_level:
    """Context manager for a dual level: ``with dual_level(): ...``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


class MakeDualBackward0(Node):
    """The node a dual tensor hangs off: gradients pass through to the primal unchanged."""
    rule = "primal: grad (the tangent carries no gradient)"

    __slots__ = ()

    def backward(self, g):
        return (g,)


def _level_for(level: int | None) -> _Level | None:
    if _current is None or (level is not None and level != _current.index):
        return None
    return _current


def make_dual(tensor, tangent, *, level: int | None = None):
    """A tensor with the value of ``tensor`` carrying ``tangent`` (its directional derivative)
    for forward-mode AD. The result shares ``tensor``'s data."""
    current = _level_for(level)
    if current is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{t.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    node = object.__new__(MakeDualBackward0)
    link(node, (tensor,))
    node._shape = tensor._data.shape
    node._dtype = tensor._data.dtype
    node._fw_level = current
    node._fw_pending = None
    node._fw_tangents = (tangent,)
    node._fw_only = not tensor.requires_grad
    dual = type(tensor)._make(tensor._data, True, node, 0, tensor._version_counter)
    dual._base = tensor if tensor._base is None else tensor._base
    if events.observers:
        events.emit("op_recorded", node, (dual,))
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a tensor; the tangent is None if it has none at ``level``."""
    current = _level_for(level)
    fn = tensor.grad_fn
    tangent = _tangent_at(fn, tensor._output_nr, current) if fn is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = tensor.detach() if getattr(fn, "_fw_only", False) else tensor
    return UnpackedDualTensor(primal, tangent)


def _tangent_at(fn, output_nr: int, level) -> object:
    if fn is None or level is None or getattr(fn, "_fw_level", None) is not level:
        return None
    if fn._fw_pending is not None:
        level.resolve(fn)
    tangents = fn._fw_tangents
    return tangents[output_nr] if output_nr < len(tangents) else None


def _propagate(node, outputs, tangents) -> tuple:
    """The output tangents of ``node`` by the double-vjp trick; ``outputs`` lists the
    ``(output_nr, shape, dtype, device)`` of its differentiable outputs."""
    us = [None] * node.num_outputs
    for nr, shape, dtype, device in outputs:
        if dtype.is_floating_point or dtype.is_complex:
            us[nr] = ops.creation.zeros(shape, dtype=dtype, device=device).requires_grad_()
    with enable_grad():
        try:
            grads_in = node.backward(*us)
        except RuntimeError as error:
            if "double backward" not in str(error):
                raise
            # A rule that runs on raw arrays only (first order): PyTorch's error for an op
            # without a forward-mode formula.
            raise RuntimeError(f"Trying to use forward AD with {node.name()} that does not "
                               "support it because it has not been implemented yet.") from error
        total = None
        for i, (g, t) in enumerate(zip(grads_in, tangents)):
            if g is None or t is None or t.numel() == 0:
                continue  # an empty input contributes exactly 0 (even where J^T u is nan)
            meta = node.input_metadata(i) if node.fit_grads else None
            g = _fit(g, *meta, True) if meta is not None else g
            if g._data.dtype.kind == "c":  # Re<g, t>: its gradient in u is J t for complex too
                term = (g.conj() * t.to(dtype=g.dtype)).real.sum()
            else:
                term = (g * t.to(dtype=g.dtype)).sum()
            total = term if total is None else total + term
    wanted = [u for u in us if u is not None]
    # Keep the tangents' graph when they, or the op's primal inputs, have reverse-mode history:
    # reverse over forward (``jacrev(jacfwd(f))``) differentiates the tangents w.r.t. the primal.
    create_graph = (any(t is not None and t.requires_grad for t in tangents)
                    or not getattr(node, "_fw_only", True))
    if total is None or not total.requires_grad:
        found = [None] * len(wanted)
    else:
        found = grad(total, wanted, allow_unused=True, retain_graph=True,
                     create_graph=create_graph)
    result = [None] * node.num_outputs
    k = 0
    for i, u in enumerate(us):
        if u is None:
            continue
        result[i] = found[k] if found[k] is not None else ops.creation.zeros_like(u.detach())
        k += 1
    return tuple(result)
