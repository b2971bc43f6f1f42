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

import warnings

import numpy as np

from .._core import events
from .._core.backend import device_of, get_array_module, silent, to_device
from .._core.graph import Node, bump_version
from .._core.record import record, would_record
from .._core.views import base_key, positions_in_base, rebase_view
from . import arithmetic, elementwise
from ._args import scalar_type_name
from ._common import Tensor, as_tensor_operand, grad_state
from ._refusals import refuse
from .creation import default_generator
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
from .shape import expand

__all__ = [
    "abs_",
    "add_",
    "addcdiv_",
    "addcmul_",
    "apply_inplace",
    "clamp_",
    "copy_",
    "div_",
    "exp_",
    "fill_",
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
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # ("V": bfloat16)


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


INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


def check_writable(t: Tensor, leaf_message: str = LEAF_MESSAGE) -> None:
    """Refuse in-place writes autograd cannot follow (PyTorch's errors); changes nothing."""
    if t._inference and not grad_state.inference:
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
    if grad_state.enabled:
        if t._requires_grad and t.grad_fn is None:
            raise RuntimeError(leaf_message)
        base = _differentiable_base(t)
        if base is not None and base._requires_grad and base.grad_fn is None:
            raise RuntimeError(VIEW_OF_LEAF_MESSAGE)
    data = t._data
    if data.size > 1 and any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape)):
        raise RuntimeError(_OVERLAP_MESSAGE)


def _check_result(t: Tensor, result) -> None:
    """The result must fit ``t``: same shape, and no float written into an integer tensor."""
    if tuple(result.shape) != t._data.shape:
        raise RuntimeError(f"output with shape {list(t._data.shape)} doesn't match the broadcast "
                           f"shape {list(result.shape)}")
    if _CATEGORY[result.dtype.kind] > _CATEGORY[t._data.dtype.kind]:
        raise RuntimeError(f"result type {scalar_type_name(result.dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(t._data.dtype)}")


def _adopt(t: Tensor, node, output_nr: int = 0) -> None:
    """Make ``t`` output ``output_nr`` of ``node`` (recorded on a shadow of ``t``)."""
    t._grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True
    if t._grad_fn_version is not None:
        t._grad_fn_version = t._version_counter[0]


def apply_inplace(t: Tensor, compute, others=(), fast=None) -> Tensor:
    """Run ``compute`` (an out-of-place op, ``tensor -> tensor``) in place on ``t``.

    ``others`` are the op's other operands (to know whether to record); ``fast(data)`` may write
    the result straight into ``data`` when nothing records, returning False to decline.
    """
    check_writable(t)
    xp = get_array_module(t._data)
    if not would_record((t, *others)):
        if fast is None or not fast(t._data):
            result = compute(t)._data
            _check_result(t, result)
            xp.copyto(t._data, result, casting="unsafe")
        bump_version(t)
        return _modified(t)
    shadow = Tensor._make(t._data.copy(), t._requires_grad, t.grad_fn, t._output_nr)
    result = compute(shadow)
    _check_result(t, result._data)
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
    check_writable(t, VIEW_OF_LEAF_MESSAGE if view_write else LEAF_MESSAGE)
    data_key = write_key(t._data, items if is_tuple else items[0])
    region_shape = t._data[data_key].shape if basic else tuple(data_key[0].shape)
    vt = _as_value_tensor(value, t)
    if vt is not None:
        vt = _fit_value(vt, region_shape, basic)
    if not _takes_view(items, is_tuple, t._data.shape) and basic:
        if vt is None:
            fill_(t, Tensor._make(xp.asarray(value)))
        else:
            copy_(t, vt)
        return
    raw = vt._data if vt is not None else value
    if not (grad_state.enabled and (t._requires_grad or (vt is not None and vt._requires_grad))):
        t._data[data_key] = raw
        bump_version(t)
        _modified(t)
        return
    base = _differentiable_base(t)
    root, root_key = t, data_key
    if base is not None:
        positions = positions_in_base(t._data, base._data)
        root, root_key = base, base_key(positions[data_key], base._data.shape)
    view_made = base is not None or _takes_view(items, is_tuple, t._data.shape)
    cls = CopySlices if view_made else IndexPutBackward0
    t._data[data_key] = raw
    bump_version(t)
    record(cls, (root, vt if vt is not None and vt._requires_grad else None), None, into=root,
           attrs={"key": root_key, "accumulate": False})
    if base is not None:
        rebase_view(t, base, positions)
    _modified(t)


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
        if data.dtype.kind != "f":
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
    return apply_inplace(self, lambda s: s + tensor1 * tensor2 * value, (tensor1, tensor2))


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self += value * tensor1 / tensor2`` in place (Adam's update)."""
    return apply_inplace(self, lambda s: s + tensor1 / tensor2 * value, (tensor1, tensor2))


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
_abs_ = _unary_inplace("abs_", elementwise.abs, "absolute")
relu_ = _unary_inplace("relu_", elementwise.relu, "maximum", 0)
sigmoid_ = _unary_inplace("sigmoid_", elementwise.sigmoid, None)


def abs_(self: Tensor) -> Tensor:
    """In-place ``abs``: refused for a complex tensor, whose abs is real, as in PyTorch."""
    refuse("abs_", self._data)
    return _abs_(self)


def clamp_(self: Tensor, min=None, max=None) -> Tensor:
    """Limit values to ``[min, max]`` in place."""
    numbers = not isinstance(min, Tensor) and not isinstance(max, Tensor)
    ordered = min is None or max is None or min <= max
    fast = _fast_unary("clip", min, max) if numbers and ordered and (
        min is not None or max is not None) else None
    if max is None:
        return apply_inplace(self, lambda s: elementwise.clamp_min(s, min), (min,), fast)
    if min is None:
        return apply_inplace(self, lambda s: elementwise.clamp_max(s, max), (max,), fast)
    return apply_inplace(self, lambda s: elementwise.clamp(s, min, max), (min, max), fast)


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

        return apply_inplace(self, compute, (value,))

    def compute_number(s):
        xp = get_array_module(s._data)
        return _overwrite(FillBackward2, s, xp.full(s._data.shape, value, dtype=s._data.dtype))

    return apply_inplace(self, compute_number, (), lambda data: data.fill(value) or True)


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast, moved across devices; a Python number too) into ``self``."""
    if isinstance(src, (bool, int, float, complex)):
        src = as_tensor_operand(src, self)
    shape = self._data.shape
    try:
        fits = np.broadcast_shapes(tuple(src.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(_size_mismatch(shape, tuple(src.shape)))

    def compute(s):
        data = src._data
        moved = type(data) is not type(s._data)
        if moved:
            data = to_device(data, device_of(s._data))
        xp = get_array_module(s._data)
        if data.dtype.kind == "c" and s._data.dtype.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=4)  # PyTorch's warning, not NumPy's
            data = data.real
        new = xp.broadcast_to(data, shape).astype(s._data.dtype)
        return _overwrite(CopyBackwards, s, new, src,
                          attrs={"src_device": device_of(src._data) if moved else None})

    # An integer or bool destination cannot carry a gradient: a grad-requiring source is
    # copied without recording (PyTorch's result does not require grad).
    differentiable = self._data.dtype.kind in "fc"
    return apply_inplace(self, compute, (src,) if differentiable else ())


def _size_mismatch(a, b) -> str:
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y) or (x != y and x == 1):
            return (f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {max(len(a), len(b)) - i}")
    return f"output with shape {list(a)} doesn't match the broadcast shape {list(b)}"


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


# -- indexing ops in place -----------------------------------------------------------------------
def masked_fill_(self: Tensor, mask, value) -> Tensor:
    """Write ``value`` where ``mask`` (broadcast to ``self``) is True, in place."""
    return apply_inplace(self, lambda s: masked_fill(s, mask, value), (value,))


def scatter_(self: Tensor, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """In-place ``scatter``."""
    return apply_inplace(self, lambda s: scatter(s, dim, index, src, value=value, reduce=reduce),
                         (src,))


def scatter_add_(self: Tensor, dim: int, index, src: Tensor) -> Tensor:
    """In-place ``scatter_add``."""
    return apply_inplace(self, lambda s: scatter_add(s, dim, index, src), (src,))


def index_add_(self: Tensor, dim: int, index, source: Tensor, *, alpha=1) -> Tensor:
    """In-place ``index_add``."""
    return apply_inplace(self, lambda s: index_add(s, dim, index, source, alpha=alpha), (source,))


def index_put_(self: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """In-place ``index_put``."""
    return apply_inplace(self, lambda s: index_put(s, indices, values, accumulate), (values,))


def put_(self: Tensor, index, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place ``put``."""
    return apply_inplace(self, lambda s: put(s, index, source, accumulate), (source,))


def _clamp_min_(self: Tensor, min) -> Tensor:
    return clamp_(self, min=min)


def _clamp_max_(self: Tensor, max) -> Tensor:
    return clamp_(self, max=max)


TENSOR_METHODS = {
    "__setitem__": write_region,
    "add_": add_, "sub_": sub_, "subtract_": sub_, "mul_": mul_, "multiply_": mul_,
    "div_": div_, "divide_": div_, "true_divide_": div_, "floor_divide_": floor_divide_,
    "pow_": pow_, "neg_": neg_,
    "negative_": neg_, "exp_": exp_, "log_": log_, "sqrt_": sqrt_, "tanh_": tanh_,
    "sigmoid_": sigmoid_, "relu_": relu_, "abs_": abs_, "absolute_": abs_, "clamp_": clamp_, "clip_": clamp_,
    "clamp_min_": _clamp_min_, "clamp_max_": _clamp_max_, "addcmul_": addcmul_,
    "addcdiv_": addcdiv_, "zero_": zero_, "fill_": fill_, "copy_": copy_, "uniform_": uniform_,
    "normal_": normal_, "masked_fill_": masked_fill_, "scatter_": scatter_,
    "scatter_add_": scatter_add_, "index_add_": index_add_, "index_put_": index_put_,
    "put_": put_,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_, "__ipow__": pow_,
}
