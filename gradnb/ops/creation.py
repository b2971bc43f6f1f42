"""Making tensors: ``tensor``, factories, random numbers, ``from_numpy``, ``to``/``clone``.

Random numbers come from one NumPy ``Generator`` seeded by ``manual_seed``, so a seeded program
is reproducible (the streams differ from PyTorch's; values are not expected to match torch's).
"""

from __future__ import annotations

import math

import numpy as np

from .._core import backend as _backend
from .._core import default_device as _default_device
from .._core import dtype as _dtype
from .._core import events
from .._core.graph import Node
from .._core.record import record, wrap
from .._core.tensor import FACTORY_REQUIRES_GRAD_MESSAGE
from ._args import check_dtype_arg, int_arg, size_arg
from ._common import Tensor, cast_array

__all__ = [
    "Generator",
    "arange",
    "as_tensor",
    "clone",
    "default_generator",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "get_rng_state",
    "initial_seed",
    "linspace",
    "manual_seed",
    "normal",
    "ones",
    "ones_like",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "seed",
    "set_rng_state",
    "tensor",
    "zeros",
    "zeros_like",
]

_make = Tensor._make


def _check_range(start, end, step) -> None:
    """PyTorch's checks of ``arange``/``range`` bounds: a nonzero step, finite bounds, and a
    step that goes from ``start`` towards ``end``."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _resolve(dtype, device, fname: str = "tensor"):
    check_dtype_arg(fname, dtype)
    d = None if dtype is None else _dtype.as_dtype(dtype)
    return d, _default_device.resolve(device)


def _xp_for(dev):
    return np if dev.type == "cpu" else _backend.cupy_module()


def _place(arr: np.ndarray, dev):
    return arr if dev.type == "cpu" else _backend.to_device(arr, dev)


def _finish(arr, requires_grad: bool) -> Tensor:
    t = _make(arr)
    if requires_grad:
        t._set_requires_grad(True, FACTORY_REQUIRES_GRAD_MESSAGE)
    return t


def _infer_array(data, dtype=None):
    """NumPy array from Python data with PyTorch's dtype inference: Python floats become the
    default float dtype, ints int64; NumPy arrays keep their dtype. With ``dtype`` given, Python
    data converts straight to it (``tensor([0.3], dtype=float64)`` never passes through float32)."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _tensors_to_lists(data)
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    try:
        arr = np.asarray(data) if dtype is None else np.asarray(data, dtype=dtype.np)
    except (ValueError, TypeError):
        _check_nested(data)
        raise
    if dtype is not None:
        return arr
    from_python = not isinstance(data, (np.ndarray, np.generic))
    kind = arr.dtype.kind
    if kind not in "biufc":
        if from_python and kind == "U":
            raise ValueError("too many dimensions 'str'")
        _check_nested(data)
        bad = next((x for x in _flat(data) if not isinstance(x, (int, float, complex))), data)
        raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}")
    if from_python and kind == "f":
        arr = arr.astype(_dtype.get_default_dtype().np)
    elif from_python and kind in "iu":
        arr = arr.astype(np.int64)
    elif from_python and kind == "c":
        arr = arr.astype(np.complex128 if _dtype.get_default_dtype() is _dtype.float64
                         else np.complex64)
    return arr


def _check_nested(data, dim: int = 0, shape=None) -> None:
    """Raise PyTorch's error for ragged nested sequences (``[[1, 2], [3]]``), naming the first
    dimension whose length differs from the first element's."""
    if shape is None:
        shape, x = [], data
        while isinstance(x, (list, tuple)):
            shape.append(len(x))
            if not x:
                break
            x = x[0]
    if not isinstance(data, (list, tuple)):
        if dim < len(shape):
            raise TypeError("not a sequence")
        return
    if dim >= len(shape):
        raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as a number")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                         f"(got {len(data)})")
    for x in data:
        _check_nested(x, dim + 1, shape)


def _flat(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            yield x


def _tensors_to_lists(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(x) for x in data]
    return data


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor that copies ``data`` (a number, nested lists, an array or a tensor).

    >>> import gradnb
    >>> gradnb.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    d, dev = _resolve(dtype, device)
    if isinstance(data, Tensor):
        arr = data._data.copy()
        if device is None:
            dev = data.device
    else:
        arr = np.array(_infer_array(data, d), copy=True)
    if d is not None:
        arr = arr.astype(d.np, copy=False)
    # to_device, not _place: a tensor's data may already live on a GPU and still have to move.
    result = _finish(_backend.to_device(arr, dev), requires_grad)
    if events.observers and isinstance(data, Tensor) and data._requires_grad:
        events.emit("value_detached", data, result, "tensor()")
    return result


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array (or returns a tensor) when it can."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    if isinstance(data, np.ndarray) and device is None and _default_device.is_cpu():
        d = None if dtype is None else _dtype.as_dtype(dtype)
        return _make(data if d is None else data.astype(d.np, copy=False))
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array`` (changes to one show in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dtype.as_dtype(array.dtype)
    return _make(array)


def _shape(size, fname: str = "empty"):
    out = size_arg(fname, size)
    if any(s < 0 for s in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {list(out)}")
    return out


def _filled(fill, size, dtype, device, requires_grad, default_np=None, fname="full"):
    d, dev = _resolve(dtype, device, fname)
    shape = _shape(size, fname)
    np_dtype = d.np if d is not None else (default_np or _dtype.get_default_dtype().np)
    xp = _xp_for(dev)
    if fill == 0:
        arr = xp.zeros(shape, dtype=np_dtype)
    elif fill == 1:
        arr = xp.ones(shape, dtype=np_dtype)
    else:
        arr = xp.full(shape, fill, dtype=np_dtype)
    return _finish(arr, requires_grad)


def zeros(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    size = shape if size is None else (size,)  # size= as a keyword, as PyTorch allows
    return _filled(0, size, dtype, device, requires_grad, fname="zeros")


def ones(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    size = shape if size is None else (size,)  # size= as a keyword, as PyTorch allows
    return _filled(1, size, dtype, device, requires_grad, fname="ones")


def empty(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (zeros here: NumPy's ``empty`` would leak old memory into demos)."""
    size = shape if size is None else (size,)  # size= as a keyword, as PyTorch allows
    return _filled(0, size, dtype, device, requires_grad, fname="empty")


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, as in PyTorch)."""
    default = None
    if dtype is None:
        if isinstance(fill_value, bool):
            default = np.dtype(np.bool_)
        elif isinstance(fill_value, int):
            default = np.dtype(np.int64)
    return _filled(fill_value, (size,),
                   dtype, device, requires_grad, default, fname="full")


def _like(fill, input: Tensor, dtype, device, requires_grad):
    d = input.dtype if dtype is None else dtype
    dev = input.device if device is None else device
    return _filled(fill, input._data.shape, d, dev, requires_grad)


def zeros_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False, *,
               memory_format=None) -> Tensor:
    return _like(0, input, dtype, device, requires_grad)


def ones_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False, *,
              memory_format=None) -> Tensor:
    return _like(1, input, dtype, device, requires_grad)


def empty_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False, *,
               memory_format=None) -> Tensor:
    return _like(0, input, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value, dtype=None, device=None, requires_grad=False, *,
              memory_format=None) -> Tensor:
    return _like(fill_value, input, dtype, device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``[start, end)`` in steps; integer arguments give int64, any float the default dtype."""
    if end is None:
        start, end = 0, start
    vals = [start, end, step]
    is_float = any(isinstance(v, float) for v in vals)
    d, dev = _resolve(dtype, device, "arange")
    np_dtype = d.np if d is not None else (_dtype.get_default_dtype().np if is_float else np.int64)
    _check_range(start, end, step)
    arr = np.arange(start, end, step, dtype=np.float64 if is_float else np.int64).astype(np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def linspace(start, end, steps: int, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    d, dev = _resolve(dtype, device, "linspace")
    if int_arg("linspace", "steps", 3, steps) < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    arr = np.linspace(start, end, steps).astype(np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def eye(n: int, m: int | None = None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The ``n x m`` identity matrix (square by default)."""
    d, dev = _resolve(dtype, device, "eye")
    for name, position, value in (("n", 1, n), ("m", 2, m)):
        if value is not None and int_arg("eye", name, position, value) < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    return _finish(_place(np.eye(n, m, dtype=np_dtype), dev), requires_grad)


# -- random --------------------------------------------------------------------------------------
class Generator:
    """A seeded source of random numbers (wraps ``numpy.random.Generator``)."""

    def __init__(self, device="cpu") -> None:
        self._rng = np.random.default_rng()
        self._seed = None

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.default_rng(int(seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor, as PyTorch's (whose bytes are its Mersenne
        Twister's; these are NumPy's PCG64: state, increment, the cached half-word)."""
        state = self._rng.bit_generator.state
        words = (state["state"]["state"].to_bytes(16, "little")
                 + state["state"]["inc"].to_bytes(16, "little")
                 + state["has_uint32"].to_bytes(4, "little")
                 + state["uinteger"].to_bytes(4, "little"))
        return _make(np.frombuffer(words, dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state ``get_state`` returned (nothing changes on a wrong one)."""
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a gradnb.ByteTensor")
        words = np.ascontiguousarray(new_state._data).tobytes()
        if len(words) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(words)}")
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(words[:16], "little"),
                      "inc": int.from_bytes(words[16:32], "little")},
            "has_uint32": int.from_bytes(words[32:36], "little"),
            "uinteger": int.from_bytes(words[36:40], "little")}
        return self


_STATE_BYTES = 40  # PCG64's 128-bit state and increment, a flag and a 32-bit word


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed gradnb's random number generator (``rand``, ``randn``, ``nn.init``, dropout)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, a uint8 tensor for ``set_rng_state``."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state``'s tensor."""
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a gradnb.ByteTensor, but got {type(new_state).__name__}")
    default_generator.set_state(new_state)


def _rng(generator):
    return (generator or default_generator)._rng


def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in ``[0, 1)``."""
    size = shape if size is None else (size,)  # size= as a keyword, as PyTorch allows
    d, dev = _resolve(dtype, device, "rand")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    arr = _rng(generator).random(_shape(size, "rand")).astype(np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples (complex ones, as in PyTorch, have real and imaginary parts each
    of variance 1/2)."""
    size = shape if size is None else (size,)  # size= as a keyword, as PyTorch allows
    d, dev = _resolve(dtype, device, "randn")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    rng = _rng(generator)
    if np_dtype.kind == "c":
        parts = rng.standard_normal(_shape(size, "randn") + (2,)) * math.sqrt(0.5)
        arr = (parts[..., 0] + 1j * parts[..., 1]).astype(np_dtype)
    else:
        arr = rng.standard_normal(_shape(size, "randn")).astype(np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def randint(low=0, high=None, size=None, generator=None, dtype=None, device=None) -> Tensor:
    """Integers in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size), as PyTorch reads it
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() received an invalid combination of arguments - "
                        "size is missing")
    d, dev = _resolve(dtype, device)
    arr = _rng(generator).integers(low, high, size=tuple(size)).astype(
        d.np if d is not None else np.int64)
    return _finish(_place(arr, dev), False)


def randperm(n: int, generator=None, dtype=None, device=None) -> Tensor:
    d, dev = _resolve(dtype, device)
    arr = _rng(generator).permutation(n).astype(d.np if d is not None else np.int64)
    return _finish(_place(arr, dev), False)


def rand_like(input: Tensor, dtype=None, device=None, requires_grad=False, *,
              memory_format=None) -> Tensor:
    return rand(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input: Tensor, dtype=None, device=None, requires_grad=False, *,
               memory_format=None) -> Tensor:
    return randn(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False, out=None, layout=None, pin_memory=False) -> Tensor:
    """Normal samples. With a tensor ``mean`` and/or ``std`` the result has their broadcast
    shape and dtype (``mean + std * eps``); as in PyTorch, the draw is not differentiated
    through: ``mean`` and ``std`` get zero gradients."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(tuple(getattr(mean, "shape", ())),
                                    tuple(getattr(std, "shape", ())))
        dt = (mean.dtype if isinstance(mean, Tensor) and isinstance(std, Tensor)
              and mean.dtype.itemsize >= std.dtype.itemsize
              else (std.dtype if isinstance(std, Tensor) else like.dtype))
        eps = _backend.to_device(_rng(generator).standard_normal(shape).astype(dt.np),
                                 like.device)
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        out = (m + s * eps).astype(dt.np, copy=False)
        if not isinstance(std, Tensor):
            return record(NormalBackward1, (mean,), out)
        if not isinstance(mean, Tensor):
            return record(NormalBackward2, (std,), out)
        return record(NormalBackward3, (mean, std), out)
    d, dev = _resolve(dtype, device)
    d = d if d is not None else _dtype.get_default_dtype()
    arr = _rng(generator).normal(mean, std, size=_shape(size or ())).astype(d.np)
    return _finish(_place(arr, dev), requires_grad)


def _zeros_like_input(g, shape):
    """Zeros of an input's ``shape`` in ``g``'s dtype (and kind: array or tensor)."""
    if isinstance(g, Tensor):
        return _make(_backend.get_array_module(g._data).zeros(shape, dtype=g._data.dtype))
    return _backend.get_array_module(g).zeros(shape, dtype=g.dtype)


class NormalBackward1(Node):
    """``normal(Tensor mean, float std)``: a random draw, so ``mean`` gets zeros (PyTorch's)."""
    rule = "mean: at::zeros_symint(mean.sym_sizes(), grad.options())"
    why_zero = "PyTorch does not differentiate through a random draw: its arguments get zeros"

    __slots__ = ("mean_sym_sizes",)
    inputs = ("mean",)
    saves = ("mean_sym_sizes",)

    def backward(self, g):
        return (_zeros_like_input(g, self.mean_sym_sizes),)


class NormalBackward2(Node):
    """``normal(float mean, Tensor std)``: ``std`` gets zeros."""
    rule = "std: at::zeros_symint(std.sym_sizes(), grad.options())"
    why_zero = "PyTorch does not differentiate through a random draw: its arguments get zeros"

    __slots__ = ("std_sym_sizes",)
    inputs = ("std",)
    saves = ("std_sym_sizes",)

    def backward(self, g):
        return (_zeros_like_input(g, self.std_sym_sizes),)


class NormalBackward3(Node):
    """``normal(Tensor mean, Tensor std)``: both get zeros."""
    rule = ("mean: at::zeros_symint(mean.sym_sizes(), grad.options()); "
            "std: at::zeros_symint(std.sym_sizes(), grad.options())")
    why_zero = "PyTorch does not differentiate through a random draw: its arguments get zeros"

    __slots__ = ("mean_sym_sizes", "std_sym_sizes")
    inputs = ("mean", "std")
    saves = ("mean_sym_sizes", "std_sym_sizes")

    def backward(self, g):
        return (_zeros_like_input(g, self.mean_sym_sizes),
                _zeros_like_input(g, self.std_sym_sizes))


class ZeroGradBackward(Node):
    """Piecewise-constant or random ops (rounded division, ``bernoulli``): the output stays in
    the graph, as PyTorch's does, with a zero gradient for every input."""
    rule = "self: zeros (the op is flat)"

    __slots__ = ()
    on_tensors = True

    def backward(self, g):
        xp = _backend.get_array_module(g._data)
        metas = (self.input_metadata(i) for i in range(len(self._next)))
        return tuple(None if meta is None else type(g)._make(xp.zeros(meta[0], dtype=g._data.dtype))
                     for meta in metas)


# -- copies, casts and moves ---------------------------------------------------------------------
class CloneBackward0(Node):
    rule = "self: grad"
    __slots__ = ()

    def backward(self, g):
        return (g,)


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy that stays in the graph (gradient passes through unchanged)."""
    return record(CloneBackward0, (input,), input._data.copy())


class ToCopyBackward0(Node):
    """Gradient of a dtype cast or device move: cast/move the gradient back (the engine's
    central cast to the input's dtype does the dtype half)."""
    rule = "self: grad cast back to self's dtype and device"

    __slots__ = ("src_device",)

    def backward(self, g):
        if self.src_device is None:
            return (g,)
        if isinstance(g, Tensor):
            return (g.to(self.src_device),)
        return (_backend.to_device(g, self.src_device),)


def to(input: Tensor, *args, dtype=None, device=None, non_blocking=False, copy=False,
       memory_format=None) -> Tensor:
    """Cast and/or move: ``to('cuda')``, ``to(gradnb.float64)``, ``to(other)``,
    ``to('cpu', gradnb.float32)``. Returns ``input`` itself when nothing changes."""
    flags = [a for a in args if isinstance(a, bool)]  # positional non_blocking, copy
    args = [a for a in args if not isinstance(a, bool)]
    if len(flags) > 1:
        copy = flags[1]
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (_dtype.dtype, np.dtype)) or (isinstance(a, type) and issubclass(a, np.generic)):
            dtype = a
        elif isinstance(a, (str, _backend.device, int)):
            device = _backend.device("cuda", a) if isinstance(a, int) else a
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    data = input._data
    src_dev = _backend.device_of(data)
    dst_dev = src_dev if device is None else _backend.device(device)
    if dst_dev.type == "cuda" and dst_dev.index is None:
        dst_dev = _backend.device("cuda", 0)
    d = None if dtype is None else _dtype.as_dtype(dtype)
    same_dev = dst_dev == src_dev
    same_dtype = d is None or d.np == data.dtype
    if same_dev and same_dtype and not copy and not _relayout(data, memory_format):
        return input
    out = data if same_dev else _backend.to_device(data, dst_dev)
    if not same_dtype:
        out = cast_array(out, d.np)
    elif out is data:
        out = data.copy()
    if d is not None and not (d.is_floating_point or d.is_complex):
        return wrap(out)  # an integer result carries no gradient
    return record(ToCopyBackward0, (input,), out,
                  attrs={"src_device": None if same_dev else src_dev})


def _relayout(data, memory_format) -> bool:
    """Whether ``memory_format`` asks for a layout ``data`` does not have, so that PyTorch copies
    (``x.to(memory_format=gradnb.channels_last)``). gradnb's copy keeps NumPy's layout: only
    the graph (a ToCopyBackward0 node) follows PyTorch."""
    name = getattr(memory_format, "_name", None)
    rank = {"channels_last": 4, "channels_last_3d": 5}.get(name)
    if rank is None or data.ndim != rank:
        return False
    # Channels last: dims ordered N, spatial..., C from the outermost stride in.
    order = (0, *range(2, rank), 1)
    expected = 1
    for axis in reversed(order):
        size = data.shape[axis]
        if size != 1 and data.strides[axis] != expected * data.itemsize:
            return True
        expected *= size
    return False


def _cuda_device(device):
    if device is None:
        return "cuda"
    return _backend.device("cuda", device) if isinstance(device, int) else device


TENSOR_METHODS = {
    "clone": clone,
    "to": to,
    "cpu": lambda self: to(self, "cpu"),
    "cuda": lambda self, device=None: to(self, _cuda_device(device)),
    "type_as": lambda self, other: to(self, dtype=other.dtype),
    "float": lambda self, memory_format=None: to(self, dtype="float32", memory_format=memory_format),
    "double": lambda self, memory_format=None: to(self, dtype="float64", memory_format=memory_format),
    "half": lambda self, memory_format=None: to(self, dtype="float16", memory_format=memory_format),
    "bfloat16": lambda self, memory_format=None: to(self, dtype="bfloat16", memory_format=memory_format),
    "cfloat": lambda self, memory_format=None: to(self, dtype="complex64", memory_format=memory_format),
    "cdouble": lambda self, memory_format=None: to(self, dtype="complex128", memory_format=memory_format),
    "long": lambda self, memory_format=None: to(self, dtype="int64", memory_format=memory_format),
    "int": lambda self, memory_format=None: to(self, dtype="int32", memory_format=memory_format),
    "short": lambda self, memory_format=None: to(self, dtype="int16", memory_format=memory_format),
    "char": lambda self, memory_format=None: to(self, dtype="int8", memory_format=memory_format),
    "byte": lambda self, memory_format=None: to(self, dtype="uint8", memory_format=memory_format),
    "bool": lambda self, memory_format=None: to(self, dtype="bool", memory_format=memory_format),
}
