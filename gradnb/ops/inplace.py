"""In-place ops (``add_``, ``mul_``, ``zero_``, ``t[k] = v``, ...), guarded by version counters.

An in-place op takes one of three paths:

- Nothing to record (grad mode off, as in optimizer steps, or nothing requires grad): the new
  values go straight into ``t._data`` (NumPy ``out=`` where possible) and the version counter is
  bumped.
- Recording on a tensor that is not a view: the out-of-place op runs on a *shadow*, a tensor
  holding a copy of the old values with ``t``'s history, so the new node saves old values; the
  result is written into ``t``'s memory, the version is bumped (so every node that saved ``t``
  earlier refuses to run backward, with PyTorch's message), and ``t`` is rebased onto the node.
- Recording on a view of a tensor that requires grad: as above, then the *base* is rebased onto a
  ``CopySlices`` node that writes the view's new values into it, and the view becomes an
  ``AsStridedBackward0`` view of the new base, as in PyTorch. Other views of the same base that
  were taken before the write are regenerated the same way when next looked at
  (``gradnb._core.views``).

The leaf check comes first and nothing changes when an op raises.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._core import events
from .._core.backend import CPU, device_of, get_array_module, silent, to_device
from .._core.graph import Node, bump_version
from .._core.record import record, would_record
from .._core.views import _address as address_of
from .._core.views import base_key, positions_in_base, rebase_refusal, rebase_view
from . import arithmetic, elementwise, pointwise
from ._args import converted_number, cpp_type_name, scalar_type_name, type_name
from ._common import (
    Tensor,
    as_tensor_operand,
    cast_array,
    check_broadcast,
    check_fits_output,
    grad_state,
)
from ._refusals import refuse
from .creation import ZeroGradBackward, default_generator
from .indexing import (
    CopySlices,
    IndexPutBackward0,
    _consumed,
    _is_basic,
    _items,
    index_add,
    index_put,
    masked_fill,
    put,
    scatter,
    scatter_add,
    sum_all,
    write_key,
)
from .sampling import check_probabilities
from .shape import expand

__all__ = [
    "abs_",
    "add_",
    "addcdiv_",
    "addcmul_",
    "apply_inplace",
    "clamp_",
    "clip_",
    "copy_",
    "div_",
    "exp_",
    "fill_",
    "fill_diagonal_",
    "index_add_",
    "index_put_",
    "log_",
    "masked_fill_",
    "mul_",
    "neg_",
    "normal_",
    "pow_",
    "put_",
    "relu_",
    "scatter_",
    "scatter_add_",
    "sigmoid_",
    "sqrt_",
    "sub_",
    "tanh_",
    "uniform_",
    "write_region",
    "zero_",
]

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = ("a view of a leaf Variable that requires grad is being used in an "
                        "in-place operation.")
_OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers "
                    "to a single memory location. Please clone() the tensor before performing the "
                    "operation.")


# -- the machinery -------------------------------------------------------------------------------
def _differentiable_base(t: Tensor):
    """The base whose history a write into ``t`` must rebase: set for views made while
    recording, and for views of a base without history (``zeros(4).narrow(0, 1, 2).copy_(x)``
    gives the base a ``CopySlices``, as PyTorch). A detached tensor shares memory but not
    history, and a view made under no_grad of a base that requires grad is not rebased."""
    base = t._base
    if base is not None and (t.grad_fn is not None or not base._requires_grad):
        return base
    return None


def _write_root(t: Tensor, key):
    """Where a recorded write of ``t[key]`` goes: ``(base, positions, root, root_key)``, the
    differentiable base of ``t`` (None: ``t`` itself), ``t``'s positions in it, and the tensor
    and index the node writes (the base and ``key`` mapped into it, or ``t`` and ``key``)."""
    base = _differentiable_base(t)
    if base is None:
        return None, None, t, key
    positions = positions_in_base(t._data, base._data)
    return base, positions, base, base_key(positions[key], base._data.shape)


INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


def check_writable(t: Tensor, leaf_message: str = LEAF_MESSAGE, others=()) -> None:
    """Refuse in-place writes autograd cannot follow (PyTorch's errors); changes nothing.
    ``others``: the op's other operands (a recorded write into a view PyTorch will not rebase is
    refused even where ``t`` itself does not require grad)."""
    if t._inference and not grad_state.inference:
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    if grad_state.enabled:
        if t._creation is not None and (t._requires_grad or any(
                isinstance(o, Tensor) and o._requires_grad for o in others)):
            raise RuntimeError(rebase_refusal(t, indirect=False))
        if t._requires_grad and t.grad_fn is None:
            raise RuntimeError(leaf_message)
        base = _differentiable_base(t)
        if base is not None and base._requires_grad and base.grad_fn is None:
            raise RuntimeError(VIEW_OF_LEAF_MESSAGE)
    data = t._data
    if data.size > 1 and any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape)):
        raise RuntimeError(_OVERLAP_MESSAGE)


_SHARED_MESSAGE = ("unsupported operation: some elements of the input tensor and the written-to "
                   "tensor refer to a single memory location. Please clone() the tensor before "
                   "performing the operation.")


def _dense(a) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: the strides lay the entries out with no gap
    and no repeat, in some order of the dimensions."""
    dims = sorted((stride, n) for stride, n in zip(a.strides, a.shape) if n != 1)
    required = a.itemsize
    for stride, n in dims:
        if stride != required:
            return False
        required *= n
    return True


def _overlap(a, b) -> str:
    """PyTorch's ``get_overlap_status`` of two arrays: ``"full"`` (the same entries, the same
    layout), ``"partial"`` (shared memory otherwise), ``"no"``, or ``"too hard"`` where either is
    not dense (PyTorch then does not look further)."""
    if a is b:
        return "full"
    if a.size == 0 or b.size == 0 or type(a) is not type(b) or not get_array_module(
            a).may_share_memory(a, b):
        return "no"
    if not (_dense(a) and _dense(b)):
        return "too hard"
    a_begin, b_begin = address_of(a), address_of(b)
    a_end, b_end = a_begin + a.nbytes, b_begin + b.nbytes
    if a_begin == b_begin and a_end == b_end:
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a_begin < b_end and b_begin < a_end else "no"


def check_no_overlap(written, read, full_too: bool = False) -> None:
    """PyTorch's refusal of an in-place op that reads memory it writes (``x[1:].add_(x[:-1])``):
    partly shared memory, or any for the index ops (``full_too``: ``assert_no_overlap``)."""
    status = _overlap(written, read)
    if status == "partial" or (full_too and status == "full"):
        raise RuntimeError(_SHARED_MESSAGE)


def _adopt(t: Tensor, node, output_nr: int = 0) -> None:
    """Make ``t`` output ``output_nr`` of ``node`` (recorded on a shadow of ``t``)."""
    t._grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True
    if t._grad_fn_version is not None:
        t._grad_fn_version = t._version_counter[0]


def apply_inplace(t: Tensor, compute, others=(), fast=None, *, reads=None,
                  refuse_full_overlap: bool = False) -> Tensor:
    """Run ``compute`` (an out-of-place op, ``tensor -> tensor``) in place on ``t``.

    ``others`` are the op's other operands (to know whether to record); ``fast(data)`` may write
    the result straight into ``data`` when nothing records, returning False to decline.
    ``reads``: the tensors whose memory PyTorch checks against ``t``'s (``others`` by default):
    none may share part of it, nor, with ``refuse_full_overlap`` (the index ops), all of it.
    """
    check_writable(t, others=others)
    data = t._data
    for other in others if reads is None else reads:
        if isinstance(other, Tensor) and type(other._data) is type(data) and (
                np.may_share_memory(data, other._data) if type(data) is np.ndarray
                else get_array_module(data).may_share_memory(data, other._data)):
            check_no_overlap(data, other._data, full_too=refuse_full_overlap)
    xp = get_array_module(t._data)
    if not would_record((t, *others)):
        if fast is None or not fast(t._data):
            result = compute(t)._data
            check_fits_output(t._data, result.shape, result.dtype)
            xp.copyto(t._data, result, casting="unsafe")
        bump_version(t)
        return _modified(t)
    shadow = Tensor._make(t._data.copy(), t._requires_grad, t.grad_fn, t._output_nr)
    result = compute(shadow)
    check_fits_output(t._data, result._data.shape, result._data.dtype)
    if result.grad_fn is None:
        # An op without a derivative (``x.logical_and_(y)``): PyTorch writes the values and
        # leaves ``t``'s history as it was.
        xp.copyto(t._data, result._data, casting="unsafe")
        bump_version(t)
        return _modified(t)
    base = _differentiable_base(t)
    if base is None:
        xp.copyto(t._data, result._data, casting="unsafe")
        bump_version(t)
        _adopt(t, result.grad_fn, result._output_nr)
        if result.grad_fn is not None:  # a node that saved its output now finds it in ``t``
            result.grad_fn.retarget_output(result._data, t)
        return _modified(t)
    positions = positions_in_base(t._data, base._data)
    xp.copyto(t._data, result._data, casting="unsafe")
    bump_version(t)
    record(CopySlices, (base, result), None, into=base,
           attrs={"key": base_key(positions, base._data.shape), "accumulate": False})
    rebase_view(t, base, positions)
    return _modified(t)


def _modified(t: Tensor) -> Tensor:
    """Tell observers that ``t`` was written in place; returns ``t``."""
    if events.observers:
        events.emit("tensor_modified", t)
    return t


# -- t[key] = value ------------------------------------------------------------------------------
def write_region(t: Tensor, key, value) -> None:
    """``t[key] = value`` in place. A tensor ``value`` that requires grad gets the gradient of
    the entries it was written to; ``t`` gets the gradient of the others.

    The node is the one PyTorch records: ``CopySlices`` when the key takes a view first (an
    int, None or a partial slice), ``IndexPutBackward0`` for array and mask indices alone, and
    ``fill_``/``copy_``'s nodes when the key covers the whole tensor (``t[...] = v``).
    """
    xp = get_array_module(t._data)
    items, is_tuple = _items(key, xp)
    basic = _is_basic(items)
    view_write = any(k is None or (isinstance(k, int) and not isinstance(k, bool)) for k in items)
    check_writable(t, VIEW_OF_LEAF_MESSAGE if view_write else LEAF_MESSAGE, (value,))
    data_key = write_key(t._data, items if is_tuple else items[0])
    region_shape = (t._data[data_key].shape if basic or t._data.ndim == 0
                    else tuple(data_key[0].shape))
    vt = _as_value_tensor(value, t)
    if vt is not None:
        vt = _fit_value(vt, region_shape, basic)
    if not _takes_view(items, is_tuple, t._data.shape) and basic:
        if vt is None:
            fill_(t, Tensor._make(xp.asarray(value)))
        else:
            copy_(t, vt)
        return
    # (``t[mask] = v`` with a 0-d ``v`` is PyTorch's masked_fill_, which reads ``v`` as a number)
    mask_fill = (vt is not None and not is_tuple and not basic and vt._data.ndim == 0
                 and (isinstance(items[0], bool) or items[0].dtype == bool))
    if vt is not None and not basic and not mask_fill:
        # PyTorch index_puts into the view the key's basic entries take: it may share no memory
        # with the value (but ``t[mask] = v`` with a 0-d ``v`` is its masked_fill_: no check)
        check_no_overlap(t._data[_view_part(items)], vt._data, full_too=True)
    elif vt is not None and vt._data.shape == tuple(region_shape):
        # ... or copies into the view ``t[key]``, which may not share part of the value's memory
        # (a value it broadcasts is read through an expanded view, which PyTorch does not check)
        check_no_overlap(t._data[data_key], vt._data)
    raw = vt._data if vt is not None else value
    if vt is not None and vt._version_counter is t._version_counter and vt.grad_fn is not None:
        # A value read from ``t`` itself (``t[0] = t[1]``): PyTorch links it as it was before
        # the write, which bumps the version it shares with ``t`` (after the bump gradnb would
        # regenerate it as an AsStridedBackward0 view of the written ``t``).
        vt = Tensor._make(raw, True, vt.grad_fn, vt._output_nr)
    if not (grad_state.enabled and (t._requires_grad or (vt is not None and vt._requires_grad))):
        t._data[data_key] = raw
        bump_version(t)
        _modified(t)
        return
    base, positions, root, root_key = _write_root(t, data_key)
    view_made = base is not None or _takes_view(items, is_tuple, t._data.shape)
    cls = CopySlices if view_made else IndexPutBackward0
    t._data[data_key] = raw
    bump_version(t)
    record(cls, (root, vt if vt is not None and vt._requires_grad else None), None, into=root,
           attrs={"key": root_key, "accumulate": False})
    if base is not None:
        rebase_view(t, base, positions)
    _modified(t)


def _view_part(items) -> tuple:
    """The basic entries of a key with array indices, each array index standing for the whole
    dimensions it indexes: the view PyTorch index_puts into."""
    return tuple(item if item is None or item is Ellipsis or isinstance(item, (bool, int, slice))
                 else slice(None) for item in items for _ in range(max(_consumed(item), 1)))


def _takes_view(items, is_tuple: bool, shape) -> bool:
    """Whether PyTorch's indexing makes a view before writing: any int, None or bool, a slice
    that is not the whole dimension, or a slice written on its own."""
    dim = 0
    for item in items:
        if item is None or isinstance(item, (bool, int)):
            return True
        if isinstance(item, slice):
            if not is_tuple or item.indices(shape[dim]) != (0, shape[dim], 1):
                return True
            dim += 1
        elif item is Ellipsis:
            dim += len(shape) - sum(_consumed(k) for k in items)
        else:
            dim += item.ndim if item.dtype == bool else 1
    return False


def _as_value_tensor(value, t: Tensor):
    if isinstance(value, Tensor):
        if type(value._data) is not type(t._data):
            raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                               f"two devices, {device_of(value._data)} and {device_of(t._data)}!")
        return value
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return None
    return Tensor._make(get_array_module(t._data).asarray(value))


def _fit_value(vt: Tensor, region_shape, basic: bool) -> Tensor:
    """Check that ``vt`` broadcasts to the written region (PyTorch's messages); leading size-1
    dimensions beyond the region's are dropped through a recorded reshape."""
    shape = tuple(vt._data.shape)
    while len(shape) > len(region_shape) and shape[0] == 1:
        shape = shape[1:]
    if basic:
        expand(vt.detach().reshape(shape), region_shape)
    else:
        try:
            ok = np.broadcast_shapes(shape, region_shape) == tuple(region_shape)
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(vt._data.shape)} "
                               "cannot be broadcast to indexing result of shape "
                               f"{list(region_shape)}")
    return vt if shape == vt._data.shape else vt.reshape(shape)


# -- fast lanes (nothing records) ----------------------------------------------------------------
def _fast_binary(ufunc_name: str, other, alpha=1):
    """Write ``data <op>= alpha * other`` with NumPy ``out=`` for float tensors; decline
    (return False) for anything the generic path must check."""

    def run(data) -> bool:
        # (float16: the generic path computes a scalar in PyTorch's op math)
        if data.dtype.kind != "f" or data.dtype.itemsize == 2:
            return False
        if isinstance(other, Tensor):
            b = other._data
            # bool (refused by sub) and complex (refused as a cast) get the generic errors
            if type(b) is not type(data) or b.dtype.kind in "bc":
                return False
        elif isinstance(other, (int, float)) and not isinstance(other, bool):
            b = other
        else:
            return False
        if np.broadcast_shapes(data.shape, getattr(b, "shape", ())) != data.shape:
            return False
        if alpha != 1 or alpha is True:
            if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
                return False  # the generic path checks alpha
            b = b * alpha
        ufunc = getattr(get_array_module(data), ufunc_name)
        # x / 0 and (-1) ** 0.5 are inf or NaN silently, as in PyTorch
        if ufunc_name in ("true_divide", "power"):
            with silent():
                ufunc(data, b, out=data, casting="same_kind")
            return True
        ufunc(data, b, out=data, casting="same_kind")
        return True

    return run


def _fast_unary(ufunc_name: str, *args):
    def run(data) -> bool:
        if data.dtype.kind != "f":
            return False
        getattr(get_array_module(data), ufunc_name)(data, *args, out=data)
        return True

    return run


# -- arithmetic ----------------------------------------------------------------------------------
def add_(self: Tensor, other, *, alpha=1) -> Tensor:
    """``self += alpha * other`` in place."""
    return apply_inplace(self, lambda s: arithmetic.add(s, other, alpha=alpha), (other,),
                         _fast_binary("add", other, alpha))


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    """``self -= alpha * other`` in place."""
    return apply_inplace(self, lambda s: arithmetic.sub(s, other, alpha=alpha), (other,),
                         _fast_binary("subtract", other, alpha))


def mul_(self: Tensor, other) -> Tensor:
    """``self *= other`` in place."""
    return apply_inplace(self, lambda s: arithmetic.mul(s, other), (other,),
                         _fast_binary("multiply", other))


def div_(self: Tensor, other, *, rounding_mode=None) -> Tensor:
    """``self /= other`` in place (an integer tensor cannot hold a true quotient)."""
    fast = _fast_binary("true_divide", other) if rounding_mode is None else None
    return apply_inplace(self, lambda s: arithmetic.div(s, other, rounding_mode=rounding_mode),
                         (other,), fast)


def floor_divide_(self: Tensor, other) -> Tensor:
    """``self //= other`` in place (PyTorch has no derivative for it: its node raises, naming
    ``floor_divide_``)."""
    return apply_inplace(
        self, lambda s: arithmetic.underivable_floor_divide(s, other, "floor_divide_"), (other,))


def pow_(self: Tensor, exponent) -> Tensor:
    """``self **= exponent`` in place."""
    return apply_inplace(self, lambda s: arithmetic.pow(s, exponent), (exponent,),
                         _fast_binary("power", exponent))


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self += value * tensor1 * tensor2`` in place (Adam's second moment)."""
    return apply_inplace(self, lambda s: pointwise.addcmul(s, tensor1, tensor2, value=value),
                         (tensor1, tensor2))


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self += value * tensor1 / tensor2`` in place (Adam's update)."""
    return apply_inplace(self, lambda s: pointwise.addcdiv(s, tensor1, tensor2, value=value),
                         (tensor1, tensor2))


def _unary_inplace(name: str, fn, ufunc_name: str | None, *ufunc_args):
    def op(self: Tensor) -> Tensor:
        fast = _fast_unary(ufunc_name, *ufunc_args) if ufunc_name else None
        return apply_inplace(self, fn, (), fast)

    op.__name__ = name
    op.__doc__ = f"In-place ``{name[:-1]}``."
    return op


neg_ = _unary_inplace("neg_", arithmetic.neg, "negative")
exp_ = _unary_inplace("exp_", elementwise.exp, "exp")
log_ = _unary_inplace("log_", elementwise.log, "log")
sqrt_ = _unary_inplace("sqrt_", elementwise.sqrt, "sqrt")
tanh_ = _unary_inplace("tanh_", elementwise.tanh, "tanh")


def _abs(input: Tensor) -> Tensor:
    refuse("abs_", input._data)  # a complex |z| is real: it cannot go back into z
    return elementwise.abs(input)


abs_ = _unary_inplace("abs_", _abs, "absolute")
relu_ = _unary_inplace("relu_", elementwise.relu, "maximum", 0)
sigmoid_ = _unary_inplace("sigmoid_", elementwise.sigmoid, None)


def _clamp_in_place(name: str, op: str, self: Tensor, min, max) -> Tensor:
    min, max = elementwise.clamp_bounds(op, self, min, max, method=name)

    def fast(data) -> bool:  # real number bounds on a float tensor: clamped where it is
        if not elementwise.real_bounds_fit(data.dtype, min, max):
            return False
        elementwise.clamp_into(data, min, max)
        return True

    return apply_inplace(self, lambda s: elementwise.clamp_op(op, s, min, max, inplace=True),
                         (min, max), fast)


def clamp_(self: Tensor, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` in place."""
    return _clamp_in_place("clamp_", "clamp", self, min, max)


def clip_(self: Tensor, min=None, max=None) -> Tensor:
    """``clamp_``'s other name."""
    return _clamp_in_place("clip_", "clamp", self, min, max)


# -- comparisons in place -------------------------------------------------------------------------
def _comparison_in_place(name: str, op: str):
    """``Tensor.<name>``: the comparison ``op`` written as 0/1 into ``self``'s dtype. A float
    (or complex) ``self`` records PyTorch's zero-gradient node; an integer one records none."""
    compare = getattr(elementwise, op)
    number_node, tensor_node = elementwise.COMPARISON_NODES[op]

    def form(self: Tensor, other) -> Tensor:
        def compute(s):
            if isinstance(other, Tensor) and other._data.shape != s._data.shape:
                # the shapes are checked before the kernel (which may refuse the dtypes)
                check_broadcast(s._data.shape, other._data.shape)
                check_fits_output(s._data, np.broadcast_shapes(s._data.shape, other._data.shape),
                                  s._data.dtype)
            out = compare(s, other)._data.astype(s._data.dtype)
            if s._data.dtype.kind not in "fcV":
                # (PyTorch records its node on an integer tensor too, which then fails most
                # ops with "Autograd not support dtype": gradnb records none)
                return Tensor._make(out)
            if isinstance(other, Tensor):
                return record(tensor_node, (s, other), out)
            return record(number_node, (s,), out)

        return apply_inplace(self, compute, (other,))

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"``{op}`` written into ``self`` as 0/1 (PyTorch's ``Tensor.{name}``)."
    return form


_COMPARISONS_IN_PLACE = {
    name: _comparison_in_place(name, op) for name, op in (
        ("eq_", "eq"), ("ne_", "ne"), ("not_equal_", "ne"), ("lt_", "lt"), ("less_", "lt"),
        ("le_", "le"), ("less_equal_", "le"), ("gt_", "gt"), ("greater_", "gt"),
        ("ge_", "ge"), ("greater_equal_", "ge"))}


# -- overwrite: zero_, fill_, copy_, random --------------------------------------------------------
class ZeroBackward0(Node):
    rule = "self: zeros (every entry overwritten)"
    __slots__ = ()

    def backward(self, g):
        return (g * 0,)


class FillBackward2(ZeroBackward0):
    rule = "self: zeros (every entry overwritten)"
    __slots__ = ()


class UniformBackward0(ZeroBackward0):
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class NormalBackward0(ZeroBackward0):
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class RandomBackward0(ZeroBackward0):
    """``random_(from, to)``."""
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class RandomBackward1(ZeroBackward0):
    """``random_(to)``."""
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class RandomBackward2(ZeroBackward0):
    """``random_()``."""
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


def random_fill_(self: Tensor, cls, sample) -> Tensor:
    """Overwrite ``self`` in place with ``sample(shape)`` (an array), recorded as ``cls`` (a node
    whose gradient is zeros), with every in-place check: ``random_``'s machinery."""
    return apply_inplace(self, _random_fill(cls, sample))


class ExponentialBackward0(ZeroBackward0):
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class LogNormalBackward0(ZeroBackward0):
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class CauchyBackward0(ZeroBackward0):
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class GeometricBackward0(ZeroBackward0):
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class BernoulliBackward2(ZeroBackward0):
    """``bernoulli_(p)`` with a number ``p``."""
    rule = "self: zeros (overwritten with random numbers)"
    __slots__ = ()


class BernoulliBackward1(ZeroGradBackward):
    """``bernoulli_(p)`` with a tensor ``p``: zeros for both (a random draw)."""
    rule = "self: zeros (overwritten with random numbers); p: zeros"
    __slots__ = ()


class FillBackward3(Node):
    """Fill with a 0-d tensor: the tensor gets the sum of the gradient."""
    rule = "self: zeros (overwritten); value: sum(grad)"

    __slots__ = ()

    def backward(self, g):
        return ((g * 0) if self.needs(0) else None), (sum_all(g) if self.needs(1) else None)


class CopyBackwards(Node):
    """``self.copy_(src)``: the old values are gone (zero gradient), ``src`` gets ``g``."""
    rule = "self: zeros (overwritten); src: grad cast to src's dtype"

    __slots__ = ("src_device",)

    def name(self) -> str:
        """As PyTorch names this C++ node (``torch::autograd::CopyBackwards``), in gradnb's
        namespace."""
        return "gradnb::autograd::CopyBackwards"

    def backward(self, g):
        g_src = None
        if self.needs(1):
            g_src = g
            if self.src_device is not None:
                g_src = g.to(self.src_device) if isinstance(g, Tensor) else to_device(
                    g, self.src_device)
        return ((g * 0) if self.needs(0) else None), g_src


def _overwrite(cls, old: Tensor, new_data, value: Tensor | None = None, attrs=None) -> Tensor:
    """A tensor of ``new_data`` whose node ``cls`` links to ``old`` (and ``value``)."""
    inputs = (old,) if cls is not FillBackward3 and cls is not CopyBackwards else (old, value)
    return record(cls, inputs, new_data, attrs=attrs)


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place."""
    def compute(s):
        return _overwrite(ZeroBackward0, s, get_array_module(s._data).zeros_like(s._data))

    return apply_inplace(self, compute, (), lambda data: data.fill(0) or True)


def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` (a number or a 0-d tensor) in place."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")

        def compute(s):
            xp = get_array_module(s._data)
            data = xp.full(s._data.shape, value._data, dtype=s._data.dtype)
            return _overwrite(FillBackward3, s, data, value)

        return apply_inplace(self, compute, (value,), reads=())  # (read as a number)

    def compute_number(s):
        # converted as PyTorch's Scalar is: -3 is 253 in uint8, an overflow raises
        number = converted_number(value, s._data.dtype)
        xp = get_array_module(s._data)
        return _overwrite(FillBackward2, s, xp.full(s._data.shape, number, dtype=s._data.dtype))

    def fast(data) -> bool:
        data.fill(converted_number(value, data.dtype))
        return True

    return apply_inplace(self, compute_number, (), fast)


def _diagonal_keys(shape: tuple, wrap: bool) -> list:
    """The index keys of the entries ``fill_diagonal_`` writes, one per strided view PyTorch
    fills: the main diagonal, and for a tall matrix with ``wrap`` the diagonal restarting every
    ``width + 1`` rows (as the flat row-major positions continue past the square part)."""
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = shape[0], shape[1]
    if len(shape) > 2 and any(n != height for n in shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    steps = np.arange(min(height, width))
    keys = [(steps,) * len(shape)]
    if wrap and len(shape) == 2 and height > width + 1:
        step = width + 1
        count = -(-height * width // step) - len(steps)
        flat = width * step + step * np.arange(count)
        keys.append((flat // width, flat % width))
    return keys


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal (of a matrix, or of a tensor whose dimensions
    are all equal) in place; ``wrap`` continues a tall matrix's diagonal below the square part.
    As in PyTorch, each diagonal is written through a strided view, so the graph gains a
    ``CopySlices`` per view."""
    if isinstance(fill_value, Tensor) and fill_value._data.ndim == 0:
        fill_value = fill_value.item()  # (PyTorch's Scalar argument takes a 0-d tensor)
    elif not isinstance(fill_value, numbers.Number):
        raise TypeError("fill_diagonal_(): argument 'fill_value' (position 1) must be Number, "
                        f"not {type_name(fill_value)}")
    keys = _diagonal_keys(tuple(self._data.shape), wrap)
    for key in keys:
        _fill_view(self, key, fill_value)
    return self


def _fill_view(t: Tensor, key, value) -> None:
    """``t.as_strided(...).fill_(value)`` for the entries ``key`` picks: a write through a view,
    recorded (when ``t`` requires grad) as ``CopySlices`` of the base, as ``write_region`` does."""
    check_writable(t, VIEW_OF_LEAF_MESSAGE)
    number = converted_number(value, t._data.dtype)
    xp = get_array_module(t._data)
    key = tuple(xp.asarray(k) for k in key)
    if not (grad_state.enabled and t._requires_grad):
        t._data[key] = number
        bump_version(t)
        _modified(t)
        return
    base, positions, root, root_key = _write_root(t, key)
    t._data[key] = number
    bump_version(t)
    record(CopySlices, (root, None), None, into=root, attrs={"key": root_key, "accumulate": False})
    if base is not None:
        rebase_view(t, base, positions)
    _modified(t)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast, moved across devices; a Python number too) into ``self``."""
    if isinstance(src, (bool, int, float, complex)):
        src = as_tensor_operand(src, self)
    elif not isinstance(src, Tensor):
        raise TypeError("copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type_name(src)}")
    shape = self._data.shape

    def compute(s):
        data = src._data
        if data.shape != shape:  # PyTorch broadcasts self with src: the result must be self's
            check_broadcast(shape, data.shape)
            check_fits_output(s._data, np.broadcast_shapes(shape, data.shape), s._data.dtype)
        moved = type(data) is not type(s._data)
        if moved:
            data = to_device(data, device_of(s._data))
        xp = get_array_module(s._data)
        new = xp.broadcast_to(cast_array(data, s._data.dtype, stacklevel=5), shape)
        return _overwrite(CopyBackwards, s, new, src,
                          attrs={"src_device": device_of(src._data) if moved else None})

    # An integer or bool destination cannot carry a gradient: a grad-requiring source is
    # copied without recording (PyTorch's result does not require grad).
    differentiable = self._data.dtype.kind in "fc"
    return apply_inplace(self, compute, (src,) if differentiable else (), reads=(src,))


def _random_fill(cls, sample):
    def compute(s):
        xp = get_array_module(s._data)
        data = xp.asarray(sample(s._data.shape)).astype(s._data.dtype)
        return _overwrite(cls, s, data)

    return compute


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from ``U(a, b)`` in place (seeded by ``manual_seed``)."""
    rng = (generator or default_generator)._rng
    return apply_inplace(self, _random_fill(UniformBackward0, lambda n: rng.uniform(a, b, n)))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from ``N(mean, std**2)`` in place (seeded by ``manual_seed``)."""
    rng = (generator or default_generator)._rng
    return apply_inplace(self, _random_fill(NormalBackward0, lambda n: rng.normal(mean, std, n)))


def _cpp_number(value) -> str:
    """A double as PyTorch's messages print it (C++ ``ostream``: 6 significant digits)."""
    return f"{float(value):g}"


def _continuous_only(self: Tensor, distribution: str, name_of, empty_ok: bool = False) -> None:
    kind = self._data.dtype.kind
    if kind in "biuc" and not (empty_ok and self._data.size == 0):
        raise RuntimeError(f"{distribution} distribution is a continuous probability "
                           "distribution. dtype must be a floating point but you specified "
                           f"{name_of(self._data.dtype)}")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from the exponential distribution of rate ``lambd`` in place."""
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found "
                           f"lambda={_cpp_number(lambd)}")
    _continuous_only(self, "Exponential", scalar_type_name, empty_ok=True)  # (as PyTorch)
    rng = (generator or default_generator)._rng
    return apply_inplace(self, _random_fill(ExponentialBackward0,
                                            lambda n: rng.exponential(1.0 / lambd, n)))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with ``exp(N(mean, std**2))`` samples in place."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_cpp_number(std)}")
    refuse("log_normal_", self._data)
    rng = (generator or default_generator)._rng
    return apply_inplace(self, _random_fill(LogNormalBackward0,
                                            lambda n: rng.lognormal(mean, std, n)))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from the Cauchy distribution (``median``, scale ``sigma``) in place."""
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_cpp_number(sigma)}")
    _continuous_only(self, "Cauchy", cpp_type_name)
    rng = (generator or default_generator)._rng
    return apply_inplace(self, _random_fill(
        CauchyBackward0, lambda n: median + sigma * rng.standard_cauchy(n)))


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...) in
    place."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_cpp_number(p)}")
    refuse("geometric_", self._data)
    rng = (generator or default_generator)._rng
    return apply_inplace(self, _random_fill(GeometricBackward0, lambda n: rng.geometric(p, n)))


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcast to ``self``), else 0,
    in place."""
    rng = (generator or default_generator)._rng
    if not isinstance(p, Tensor):
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got "
                               f"p={_cpp_number(p)}")
        refuse("bernoulli_scalar", self._data)
        return apply_inplace(self, _random_fill(BernoulliBackward2,
                                                lambda n: rng.random(n) < p))
    refuse("bernoulli_tensor_self", self._data)
    refuse("bernoulli_tensor_p", p._data)
    probs = expand(p, *self.shape)._data
    check_probabilities(probs)
    host = to_device(probs, CPU)  # drawn on the host from the one seeded generator

    def compute(s):
        xp = get_array_module(s._data)
        data = xp.asarray(rng.random(host.shape) < host).astype(s._data.dtype)
        return record(BernoulliBackward1, (s, p), data)

    return apply_inplace(self, compute, (p,), reads=())


# -- indexing ops in place -----------------------------------------------------------------------
def masked_fill_(self: Tensor, mask, value) -> Tensor:
    """Write ``value`` where ``mask`` (broadcast to ``self``) is True, in place."""
    return apply_inplace(self, lambda s: masked_fill(s, mask, value), (value,), reads=())


def scatter_(self: Tensor, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """In-place ``scatter``."""
    return apply_inplace(self, lambda s: scatter(s, dim, index, src, value=value, reduce=reduce),
                         (src,), refuse_full_overlap=True)


def scatter_add_(self: Tensor, dim: int, index, src: Tensor) -> Tensor:
    """In-place ``scatter_add``."""
    return apply_inplace(self, lambda s: scatter_add(s, dim, index, src), (src,),
                         refuse_full_overlap=True)


def index_add_(self: Tensor, dim: int, index, source: Tensor, *, alpha=1) -> Tensor:
    """In-place ``index_add``."""
    return apply_inplace(self, lambda s: index_add(s, dim, index, source, alpha=alpha), (source,),
                         refuse_full_overlap=True)


def index_put_(self: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """In-place ``index_put``."""
    return apply_inplace(self, lambda s: index_put(s, indices, values, accumulate), (values,),
                         refuse_full_overlap=True)


def put_(self: Tensor, index, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place ``put``."""
    return apply_inplace(self, lambda s: put(s, index, source, accumulate), (source,),
                         refuse_full_overlap=True)


def _clamp_min_(self: Tensor, min) -> Tensor:
    return _clamp_in_place("clamp_min_", "clamp_min", self, min, None)


def _clamp_max_(self: Tensor, max) -> Tensor:
    return _clamp_in_place("clamp_max_", "clamp_max", self, None, max)


TENSOR_METHODS = {
    "__setitem__": write_region,
    "add_": add_, "sub_": sub_, "subtract_": sub_, "mul_": mul_, "multiply_": mul_,
    "div_": div_, "divide_": div_, "true_divide_": div_, "floor_divide_": floor_divide_,
    "pow_": pow_, "neg_": neg_,
    "negative_": neg_, "exp_": exp_, "log_": log_, "sqrt_": sqrt_, "tanh_": tanh_,
    "sigmoid_": sigmoid_, "relu_": relu_, "abs_": abs_, "absolute_": abs_, "clamp_": clamp_,
    "clip_": clip_, "clamp_min_": _clamp_min_, "clamp_max_": _clamp_max_, "addcmul_": addcmul_,
    "addcdiv_": addcdiv_, "zero_": zero_, "fill_": fill_, "fill_diagonal_": fill_diagonal_, "copy_": copy_, "uniform_": uniform_,
    "exponential_": exponential_, "log_normal_": log_normal_, "cauchy_": cauchy_,
    "geometric_": geometric_, "bernoulli_": bernoulli_,
    "normal_": normal_, "masked_fill_": masked_fill_, "scatter_": scatter_,
    "scatter_add_": scatter_add_, "index_add_": index_add_, "index_put_": index_put_,
    "put_": put_, **_COMPARISONS_IN_PLACE,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_, "__ipow__": pow_,
}
