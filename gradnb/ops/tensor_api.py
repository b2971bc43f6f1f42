"""The rest of PyTorch's ``Tensor`` API that real code calls: ``new_*`` constructors,
``type()``, ``stride()``, ``is_contiguous()``, ``data_ptr()``, ``random_``, in-place view ops
(``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``), the legacy typed constructors
(``gradnb.FloatTensor``, ``gradnb.LongTensor``, ``gradnb.Tensor(data)``), and the NumPy-style
keyword aliases ``axis=``/``keepdims=`` that PyTorch accepts beside ``dim=``/``keepdim=``.
"""

from __future__ import annotations

import functools

import numpy as np

from .._core import dtype as _dtype
from .._core.backend import cuda_is_available, get_array_module
from .._core.grad_mode import state as _grad_state
from .._core.graph import bump_version, element_strides
from .._core.views import _address as address_of
from .._core.views import rebase_refusal
from . import shape as sh
from ._common import Tensor, wrap
from .creation import full, randint, tensor, zeros
from .inplace import RandomBackward0, RandomBackward1, RandomBackward2, index_put_, random_fill_

__all__ = [
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "index_put_", "resize_as_",
]

# Legacy type names, as ``Tensor.type()`` prints them.
_DTYPES_BY_TYPE_NAME = {v: k for k, v in _dtype._LEGACY_TYPE_NAMES.items()}


def legacy_new(dtype, args, kwargs, device=None) -> Tensor:
    """PyTorch's legacy constructor: ``T(data)`` copies data; ``T(2, 3)`` (or a size) makes an
    uninitialised (here zero) tensor of that shape; ``T()`` an empty one."""
    device = kwargs.pop("device", device)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"unexpected keyword '{next(iter(kwargs))}'")
    if not args:
        return zeros(0, dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Tensor):
            return data if data.dtype == dtype else data.to(dtype)
        if isinstance(data, tuple) and all(isinstance(n, int) for n in data) and \
                type(data).__name__ == "Size":
            return zeros(data, dtype=dtype, device=device)
        return tensor(data, dtype=dtype, device=device)
    if all(isinstance(n, int) for n in args):
        return zeros(args, dtype=dtype, device=device)
    raise TypeError("new(): data must be a sequence (got " + type(args[0]).__name__ + ")")


Tensor._legacy_new = staticmethod(legacy_new)


class _LegacyTensorMeta(type):
    """``isinstance(t, gradnb.FloatTensor)`` is True for float32 tensors, as in PyTorch."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype.name == cls._dtype_name


def _legacy_type(name: str, dtype_name: str):
    def __new__(cls, *args, **kwargs):
        return legacy_new(getattr(_dtype, dtype_name), args, kwargs)

    return _LegacyTensorMeta(name, (), {
        "__new__": __new__, "_dtype_name": dtype_name,
        "__doc__": f"``gradnb.{name}(data)``: a {dtype_name} tensor (PyTorch's legacy form).",
    })


FloatTensor = _legacy_type("FloatTensor", "float32")
DoubleTensor = _legacy_type("DoubleTensor", "float64")
HalfTensor = _legacy_type("HalfTensor", "float16")
BFloat16Tensor = _legacy_type("BFloat16Tensor", "bfloat16")
LongTensor = _legacy_type("LongTensor", "int64")
IntTensor = _legacy_type("IntTensor", "int32")
ShortTensor = _legacy_type("ShortTensor", "int16")
CharTensor = _legacy_type("CharTensor", "int8")
ByteTensor = _legacy_type("ByteTensor", "uint8")
BoolTensor = _legacy_type("BoolTensor", "bool")


# -- new_* -------------------------------------------------------------------------------------
def _new(fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False, fill_value=None):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        value = fill if fill is not None else fill_value
        return full(size, value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    return method


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype and device."""
    return _new(None)(self, size, dtype=dtype, device=device, requires_grad=requires_grad,
                      fill_value=fill_value)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False) -> Tensor:
    """A copy of ``data`` with this tensor's dtype and device (unless given)."""
    if isinstance(data, Tensor):
        data = data.detach()
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


# -- introspection -----------------------------------------------------------------------------
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Without arguments, the legacy type name (``'gradnb.FloatTensor'``); with a dtype or a
    type name, a cast."""
    if dtype is None:
        return f"gradnb.{_dtype.legacy_type_name(self.dtype)}"
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        if name not in _DTYPES_BY_TYPE_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_dtype, _DTYPES_BY_TYPE_NAME[name])
    elif isinstance(dtype, _LegacyTensorMeta):
        dtype = getattr(_dtype, dtype._dtype_name)
    return self.to(dtype)


def stride(self, dim=None):
    """Elements to skip to move one step along each dimension (of the array gradnb holds)."""
    data = self._data
    strides = element_strides(data)
    if dim is None:
        return strides
    n = max(data.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return strides[dim % n] if data.ndim else 1


def is_contiguous(self, memory_format=None) -> bool:
    """Whether the elements are laid out in row-major order without gaps."""
    return bool(self._data.flags.c_contiguous)


def data_ptr(self) -> int:
    """The address of the first element."""
    data = self._data
    if isinstance(data, np.ndarray):
        return int(data.__array_interface__["data"][0])
    return int(data.data.ptr)


def random_(self, from_=0, to=None, *, generator=None):
    """Fill in place with integers drawn uniformly from ``[from_, to)`` (``[0, from_)`` with one
    argument; up to the dtype's mantissa range without any)."""
    # PyTorch's node per overload: random_(from, to), random_(to), random_()
    node = RandomBackward0 if to is not None else RandomBackward1 if from_ != 0 else RandomBackward2
    if to is None:
        if from_ == 0:
            bits = np.finfo(self._data.dtype).nmant + 1 if self.dtype.is_floating_point else (
                1 if self.dtype.name == "bool" else np.iinfo(self._data.dtype).bits - 1)
            from_, to = 0, 2 ** bits
        else:
            from_, to = 0, from_

    def sample(shape):
        return randint(from_, to, tuple(shape), generator=generator)._data

    return random_fill_(self, node, sample)


def _inplace_view(view):
    """An in-place form of a view op: ``self`` takes the view's data and (when recording) its
    graph position, as PyTorch rewrites a tensor's metadata and grad_fn in place."""
    def method(self, *args, **kwargs):
        if _grad_state.enabled and self._creation is not None and self._requires_grad:
            raise RuntimeError(rebase_refusal(self, indirect=False))  # (PyTorch checks it first)
        if self.is_leaf and self.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        out = view(self, *args, **kwargs)
        self._data = out._data
        node = out._grad_fn
        if node is not None:
            # The in-place form's own node (``SqueezeBackward4`` for ``squeeze_(dim)``): a
            # subclass with the same slots, so the recorded node changes only its class.
            node.__class__ = sh.INPLACE_VIEW_NODES.get(type(node), type(node))
            self._grad_fn = node
            self._output_nr = out._output_nr
        bump_version(self)
        return self

    method.__name__ = f"{view.__name__}_"
    return method


# -- keyword aliases -----------------------------------------------------------------------------
def with_numpy_keywords(fn):
    """``fn`` accepting ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)

    wrapper.numpy_keywords = True
    return wrapper


# Ops whose ``dim``/``keepdim`` PyTorch also accepts as ``axis``/``keepdims``.
ALIASED = ("all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod",
           "cumsum", "logsumexp", "max", "mean", "median", "min", "nanmean", "nansum", "norm",
           "prod", "std", "sum", "var", "std_mean", "var_mean", "squeeze", "unsqueeze",
           "softmax", "log_softmax", "flip", "roll", "cat", "concat", "concatenate", "stack")


def new(self, *args, **kwargs) -> Tensor:
    """PyTorch's legacy ``x.new(...)``: ``x.new(2, 3)`` an uninitialised (here zero) tensor of
    that shape, ``x.new(data)`` a copy of ``data``, both with ``x``'s dtype and device."""
    return Tensor._legacy_new(self.dtype, args, kwargs, device=self.device)


def resize_(self, *sizes, memory_format=None) -> Tensor:
    """Give ``self`` the shape ``sizes`` in place, keeping its first elements in row-major
    order; new elements are zero (PyTorch leaves them uninitialised)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    data = self._data
    count = int(np.prod(shape, dtype=np.int64))
    flat = data.reshape(-1)
    if count <= flat.size and data.flags.c_contiguous:
        self._data = flat[:count].reshape(shape)  # the same memory, as PyTorch's storage
    else:
        grown = get_array_module(data).zeros(count, dtype=data.dtype)
        keep = min(count, flat.size)
        grown[:keep] = flat[:keep]
        self._data = grown.reshape(shape)
    bump_version(self)
    return self


def pin_memory(self, device=None) -> Tensor:
    """A copy in page-locked host memory, for fast copies to a GPU. Without a GPU there is
    nothing to pin for: PyTorch's error."""
    if not cuda_is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self.clone()


def is_pinned(self, device=None) -> bool:
    """False: gradnb's host tensors live in ordinary NumPy memory."""
    return False


def record_stream(self, stream) -> None:
    """PyTorch's CUDA caching-allocator hint. gradnb has no stream objects (CuPy frees memory
    when the last reference goes), so no argument is a stream: PyTorch's error for a
    non-stream."""
    raise RuntimeError("unknown parameter type")


def dequantize(self) -> Tensor:
    """``self``: gradnb has no quantized tensors, and PyTorch returns a float tensor as is."""
    return self


def resize_as_(self, the_template, memory_format=None) -> Tensor:
    """``self.resize_(the_template.shape)``."""
    return resize_(self, the_template.shape, memory_format=memory_format)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False) -> Tensor:
    """A new tensor of ``size`` laid out with element strides ``stride`` (here zero-filled;
    PyTorch leaves it uninitialised), with this tensor's dtype and device unless given."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    needed = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    storage = zeros(needed, dtype=dtype or self.dtype, device=device or self.device)._data
    strided = get_array_module(storage).lib.stride_tricks.as_strided(
        storage, size, tuple(s * storage.itemsize for s in stride))
    return wrap(strided).requires_grad_(requires_grad)


def storage_offset(self) -> int:
    """Elements between the start of the storage and this tensor's first element: a view's
    position in its base (0 for a tensor that is no view), as PyTorch counts it."""
    base = self._base if self._base is not None else self._storage_of
    if base is None:
        return 0
    return (address_of(self._data) - address_of(base._data)) // self._data.itemsize


def is_nonzero(self) -> bool:
    """The truth of a one-element tensor (PyTorch refuses more than one element, or none)."""
    n = self._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self._data.reshape(-1)[0])


def is_signed(self) -> bool:
    """Whether the dtype holds negative values: every dtype but uint8 and bool."""
    return self._data.dtype.kind not in "ub"


def get_device(self) -> int:
    """The CUDA device index, or -1 for a CPU tensor."""
    index = self.device.index
    return -1 if self.device.type == "cpu" else (0 if index is None else index)


def dim_order(self, *, ambiguity_check=False) -> tuple:
    """The dimensions from the outermost in memory to the innermost (``(0, 1, ..., n-1)`` when
    contiguous): ordered by decreasing stride, ties in index order."""
    strides = element_strides(self._data)
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    """A dense tensor is its own dense form (cast to ``dtype`` when given)."""
    return self if dtype is None else self.to(dtype)


# Where a tensor lives: gradnb's tensors are on the CPU (NumPy) or a CUDA GPU (CuPy), never on
# the other devices PyTorch can name, so those flags are False as on a CPU-only PyTorch.
_DEVICE_FLAGS = {
    "is_cpu": property(lambda self: self.device.type == "cpu"),
    **{name: property(lambda self: False)
       for name in ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_maia", "is_mtia", "is_xla",
                    "is_vulkan", "is_mkldnn", "is_quantized", "is_nested", "is_sparse_csr")},
}


TENSOR_METHODS = {
    **_DEVICE_FLAGS,
    "new_zeros": _new(0), "new_ones": _new(1), "new_empty": _new(0), "new_full": new_full,
    "new_tensor": new_tensor, "type": type_, "stride": stride, "is_contiguous": is_contiguous,
    "data_ptr": data_ptr, "random_": random_, "new": new, "resize_": resize_,
    "pin_memory": pin_memory, "is_pinned": is_pinned, "record_stream": record_stream,
    "dequantize": dequantize,
    "unsqueeze_": _inplace_view(sh.unsqueeze), "squeeze_": _inplace_view(sh.squeeze),
    "t_": _inplace_view(sh.t), "transpose_": _inplace_view(sh.transpose),
    "swapaxes_": _inplace_view(sh.transpose), "swapdims_": _inplace_view(sh.transpose),
    "resize_as_": resize_as_, "new_empty_strided": new_empty_strided,
    "storage_offset": storage_offset, "is_nonzero": is_nonzero, "is_signed": is_signed,
    "get_device": get_device,
    "itemsize": property(lambda self: self.dtype.itemsize,
                         doc="Bytes per element (the dtype's itemsize)."),
    "ndimension": lambda self: self._data.ndim,
    "is_same_size": lambda self, other: tuple(self.shape) == tuple(other.shape),
    "dim_order": dim_order, "to_dense": to_dense,
    "sparse_dim": lambda self: 0, "dense_dim": lambda self: self._data.ndim,
    "is_neg": lambda self: False,  # gradnb has no lazy negation bit: values are always real
}
