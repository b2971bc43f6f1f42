"""A NumPy-backed stand-in for CuPy: runs the CUDA test cases on machines without a GPU.

It is no GPU (timings and numerics are NumPy's); it reproduces the CuPy behaviours that expose
device bugs in array code:

- ``cupy.ndarray`` is its own class, not a ``numpy.ndarray``, so type checks see a device array;
- an operation that mixes it with a NumPy array raises ``TypeError``, as CuPy's do;
- ``numpy.asarray(x)`` raises ``TypeError`` (CuPy refuses implicit device-to-host copies) and
  ``x.get()`` copies to the host;
- NumPy ufuncs and functions called on it dispatch to "CuPy" and return device arrays, and
  reductions and scalar indexing return 0-d device arrays, never NumPy scalars;
- views keep their base alive through ``.base``, and a memory pool counts the bytes of live
  arrays rounded up to 512, as CuPy's default pool does.

``install()`` puts ``cupy`` and ``cupyx`` into ``sys.modules``; the test suite does so when
``GRADNB_EMULATE_CUDA=1``. Real CuPy, where installed, is never replaced unless asked.
"""

from __future__ import annotations

import math
import sys
import types
import warnings
import weakref
from typing import Self

import numpy as np

_ROUND = 512  # CuPy's pool hands out multiples of 512 bytes


# -- the memory pool ------------------------------------------------------------------------------
class MemoryPool:
    """Counts the bytes of live emulated arrays, as ``cupy.get_default_memory_pool()`` does."""

    def __init__(self) -> None:
        self._used = 0
        self._cached = 0

    def used_bytes(self) -> int:
        return self._used

    def total_bytes(self) -> int:
        return self._used + self._cached

    def free_all_blocks(self) -> None:
        self._cached = 0

    def _allocate(self, nbytes: int) -> int:
        size = -(-nbytes // _ROUND) * _ROUND
        self._used += size
        self._cached = max(0, self._cached - size)
        return size

    def _release(self, size: int) -> None:
        self._used -= size
        self._cached += size


_pool = MemoryPool()
_pinned_pool = MemoryPool()
_owners: dict[int, weakref.ref] = {}  # id(host array that owns memory) -> its device array


# -- wrapping and unwrapping ---------------------------------------------------------------------
def _unwrap(x, *, host_ok: bool = False):
    """The NumPy data behind ``x``; a NumPy array is a TypeError unless ``host_ok``."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, np.ndarray) and not host_ok:
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(i, host_ok=host_ok) for i in x)
    if isinstance(x, dict):
        return {k: _unwrap(v, host_ok=host_ok) for k, v in x.items()}
    return x


def _wrap(x):
    """Device arrays for the NumPy arrays (and NumPy scalars) in a result."""
    if isinstance(x, np.ndarray):
        return _device_array(x)
    if isinstance(x, np.generic):
        return _device_array(np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_wrap(i) for i in x)
    if isinstance(x, list):
        return [_wrap(i) for i in x]
    return x


def _owner(a: np.ndarray) -> np.ndarray | None:
    """The NumPy array that owns the memory behind the view ``a`` (None if ``a`` owns it)."""
    owner, b = None, a.base
    while b is not None:
        if isinstance(b, np.ndarray):
            owner = b
        b = getattr(b, "base", None)
    return owner


def _device_array(a: np.ndarray) -> ndarray:
    owner = _owner(a)
    if owner is None:
        ref = _owners.get(id(a))
        existing = ref() if ref is not None else None
        if existing is not None and existing._a is a:
            return existing
        out = ndarray.__new__(ndarray)
        out._a, out._base = a, None
        _owners[id(a)] = weakref.ref(out)
        weakref.finalize(out, _forget, id(a), _pool._allocate(a.nbytes))
        return out
    out = ndarray.__new__(ndarray)
    out._a, out._base = a, _device_array(owner)
    return out


def _forget(key: int, size: int) -> None:
    _pool._release(size)
    ref = _owners.get(key)
    if ref is not None and ref() is None:
        del _owners[key]


def _device_function(fn, *, host_ok: bool = False):
    """``fn`` on device arrays: unwrap the arguments, wrap the result."""

    def call(*args, **kwargs):
        return _wrap(fn(*_unwrap(args, host_ok=host_ok), **_unwrap(kwargs, host_ok=host_ok)))

    call.__name__ = getattr(fn, "__name__", "function")
    return call


class _Device:
    """``cupy.cuda.Device``: one emulated GPU, index 0."""

    def __init__(self, index: int | None = None) -> None:
        index = 0 if index is None else int(index)
        if index != 0:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {index}")
        self.id = index

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def synchronize(self) -> None:
        return None


# The public attributes of cupy.ndarray that NumPy's ndarray also has (CuPy 13).
_NDARRAY_ATTRIBUTES = frozenset([
    "T", "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose",
    "clip", "compress", "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot",
    "dtype", "dump", "dumps", "fill", "flat", "flatten", "imag", "item", "itemsize", "max",
    "mean", "min", "nbytes", "ndim", "nonzero", "partition", "prod", "ptp", "put", "ravel",
    "real", "repeat", "reshape", "round", "shape", "size", "sort", "squeeze", "std", "strides",
    "sum", "swapaxes", "take", "tobytes", "tofile", "tolist", "trace", "transpose", "var",
    "view",
])


# -- the array ------------------------------------------------------------------------------------
class ndarray:
    """An emulated device array holding a NumPy array."""

    __slots__ = ("__weakref__", "_a", "_base")
    __hash__ = None

    def __init__(self, shape, dtype=float) -> None:
        raise TypeError("create emulated arrays through the cupy functions")

    @property
    def base(self):
        return self._base

    @property
    def device(self) -> _Device:
        return _Device(0)

    def get(self) -> np.ndarray:
        """A host copy."""
        return self._a.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` "
                        "to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
        return None if method == "at" else _wrap(out)

    def __array_function__(self, func, types_, args, kwargs):
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    @property
    def shape(self) -> tuple:
        return self._a.shape

    @shape.setter
    def shape(self, value) -> None:
        # CuPy reshapes in place without a copy, or raises AttributeError (as NumPy does).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.5 deprecates this
            self._a.shape = value

    @property
    def flags(self) -> types.SimpleNamespace:
        """CuPy's flags: no ``writeable``, no ``aligned``."""
        f = self._a.flags
        return types.SimpleNamespace(c_contiguous=f.c_contiguous, f_contiguous=f.f_contiguous,
                                     owndata=self._base is None)

    @property
    def data(self) -> types.SimpleNamespace:
        """A memory pointer: ``.data.ptr`` is the address of the first element."""
        return types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0])

    @property
    def __cuda_array_interface__(self) -> dict:
        return self._a.__array_interface__

    def __getattr__(self, name):
        # Only what cupy.ndarray has: never NumPy's __array_interface__ (no implicit host copies)
        # nor NumPy-only methods, whose use would fail on a GPU.
        if name not in _NDARRAY_ATTRIBUTES:
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        value = getattr(self._a, name)
        return _device_function(value) if callable(value) else _wrap(value)

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, host_ok=True)])

    def __setitem__(self, key, value) -> None:
        self._a[_unwrap(key, host_ok=True)] = _unwrap(value, host_ok=True)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __complex__(self) -> complex:
        return complex(self._a)

    def __repr__(self) -> str:
        return repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    def __format__(self, spec: str) -> str:
        return format(self._a, spec)

    def __copy__(self) -> ndarray:
        return self.copy()

    def __deepcopy__(self, memo) -> ndarray:
        return self.copy()


def _binary(ufunc):
    return (lambda self, other: _wrap(ufunc(self._a, _unwrap(other))),
            lambda self, other: _wrap(ufunc(_unwrap(other), self._a)))


def _inplace(ufunc):
    def op(self, other):
        ufunc(self._a, _unwrap(other), out=self._a)
        return self

    return op


for _name, _ufunc in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "lshift": np.left_shift, "rshift": np.right_shift,
}.items():
    _forward, _reflected = _binary(_ufunc)
    setattr(ndarray, f"__{_name}__", _forward)
    setattr(ndarray, f"__r{_name}__", _reflected)
    setattr(ndarray, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                      "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(ndarray, f"__{_name}__", _binary(_ufunc)[0])
for _name, _ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                      "invert": np.invert}.items():
    setattr(ndarray, f"__{_name}__", lambda self, _u=_ufunc: _wrap(_u(self._a)))


# -- the modules ----------------------------------------------------------------------------------
def _asarray(a, dtype=None, order=None, *, copy: bool = False):
    """``cupy.asarray``/``cupy.array``: host data is copied to the device; device data stays."""
    if isinstance(a, ndarray):
        data = a._a.astype(dtype, copy=copy) if dtype is not None else (
            a._a.copy() if copy else a._a)
        return a if data is a._a else _device_array(data)
    return _device_array(np.array(_unwrap(a, host_ok=True), dtype=dtype, order=order, copy=True))


class _Namespace(types.ModuleType):
    """A module whose missing attributes are NumPy's, made to work on device arrays."""

    def __init__(self, name: str, host) -> None:
        super().__init__(name)
        self._host = host

    def __getattr__(self, name):
        value = getattr(self._host, name)
        if isinstance(value, types.ModuleType):
            return _Namespace(f"{self.__name__}.{name}", value)
        if isinstance(value, np.ufunc):
            return _Ufunc(value)
        if callable(value) and not isinstance(value, type):
            return _device_function(value)
        return value


class _Ufunc:
    """A NumPy ufunc on device arrays (``cupy.add``, ``cupy.maximum(a, b, out=c)``)."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        return _device_function(self._ufunc)(*args, **kwargs)

    def __getattr__(self, name):
        return _device_function(getattr(self._ufunc, name))


def _scatter_add(a, slices, value) -> None:
    np.add.at(_unwrap(a), _unwrap(slices, host_ok=True), _unwrap(value, host_ok=True))


def _erf(x):
    return _wrap(np.vectorize(math.erf, otypes=[_unwrap(x).dtype])(_unwrap(x)))


def _build() -> tuple[types.ModuleType, types.ModuleType]:
    cupy = _Namespace("cupy", np)
    cupy.__version__ = "emulated"
    cupy.ndarray = ndarray
    cupy.asarray = _asarray
    cupy.array = lambda a, dtype=None, copy=True, order="K": _asarray(a, dtype, None, copy=copy)
    cupy.asnumpy = lambda a: a.get() if isinstance(a, ndarray) else np.asarray(a)
    cupy.get_array_module = lambda *args: cupy if any(
        isinstance(a, ndarray) for a in args) else np
    cupy.get_default_memory_pool = lambda: _pool
    cupy.get_default_pinned_memory_pool = lambda: _pinned_pool
    cupy.cuda = types.ModuleType("cupy.cuda")
    cupy.cuda.Device = _Device
    cupy.cuda.runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, getDevice=lambda: 0, runtimeGetVersion=lambda: 0,
        getDeviceProperties=lambda index: {"name": b"emulated GPU (NumPy)"})
    cupyx = types.ModuleType("cupyx")
    cupyx.scatter_add = _scatter_add
    cupyx.scipy = types.ModuleType("cupyx.scipy")
    cupyx.scipy.special = types.ModuleType("cupyx.scipy.special")
    cupyx.scipy.special.erf = _erf
    return cupy, cupyx


def install() -> None:
    """Register the emulated ``cupy`` and ``cupyx`` modules (before gradnb first imports CuPy)."""
    cupy, cupyx = _build()
    sys.modules.update({"cupy": cupy, "cupy.cuda": cupy.cuda, "cupyx": cupyx,
                        "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special})
