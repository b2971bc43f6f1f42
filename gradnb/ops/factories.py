"""The less common tensor factories of PyTorch's namespace: ``logspace``, ``range`` (deprecated,
``end`` included), ``scalar_tensor``, ``empty_strided`` and ``frombuffer``, and the index sets
``tril_indices``/``triu_indices``, ``unravel_index`` and ``isin``.

None of them records a graph: PyTorch has no derivative for any (``isin``'s result is bool).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._core import dtype as _dtype
from ._args import scalar_type_name, size_arg, type_name
from ._common import Tensor
from .creation import _check_range, _finish, _place, _resolve, _shape, _xp_for, linspace

__all__ = ["empty_strided", "frombuffer", "isin", "logspace", "range", "scalar_tensor",
           "tril_indices", "triu_indices", "unravel_index"]



def logspace(start, end, steps: int, base: float = 10.0, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed in float64 and then cast (so an integer
    ``dtype`` gets the powers rounded toward zero, as PyTorch's)."""
    exponents = linspace(start, end, steps, dtype=_dtype.float64)  # (its checks, its messages)
    d, dev = _resolve(dtype, device, "logspace")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    with np.errstate(all="ignore"):  # a negative base meets fractional powers: NaN, silently
        arr = np.power(float(base), exponents._data)
    if np_dtype.kind in "biu":
        arr = np.trunc(np.nan_to_num(arr))
    return _finish(_place(arr.astype(np_dtype), dev), requires_grad)


def range(start, end, step=1, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``start, start + step, ...`` up to and including ``end``: deprecated in PyTorch for
    ``arange`` (which stops before ``end``), with its warning."""
    warnings.warn("gradnb.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "gradnb.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    _check_range(start, end, step)
    d, dev = _resolve(dtype, device, "range")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    count = math.floor((end - start) / step) + 1
    arr = (start + np.arange(count, dtype=np.float64) * step).astype(np_dtype)
    return _finish(_place(arr, dev), requires_grad)


def scalar_tensor(s, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, in the default float dtype unless ``dtype``."""
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type_name(s)}")
    d, dev = _resolve(dtype, device, "scalar_tensor")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    if np_dtype.kind != "c" and isinstance(s, complex):
        s = s.real
    return _finish(_place(np.array(s, dtype=np_dtype), dev), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` whose elements lie ``stride`` elements apart in fresh memory (zeros:
    gradnb never hands out old memory), as large as the strides need."""
    shape = _shape(size, "empty_strided")
    strides = size_arg("empty_strided", stride)
    if len(strides) != len(shape):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of "
                           f"strides ({len(strides)})")
    d, dev = _resolve(dtype, device, "empty_strided")
    np_dtype = d.np if d is not None else _dtype.get_default_dtype().np
    storage = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    xp = _xp_for(dev)
    buffer = xp.zeros(storage, dtype=np_dtype)
    arr = xp.lib.stride_tricks.as_strided(
        buffer, shape, tuple(s * np_dtype.itemsize for s in strides))
    return _finish(arr, requires_grad)


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over an object exposing the buffer protocol, sharing its memory: ``count``
    elements of ``dtype`` from byte ``offset`` (all that fit when ``count`` is -1). A read-only
    buffer (``bytes``) is copied, with PyTorch's warning: a tensor is always writable."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    d = _dtype.as_dtype(dtype)
    length, size = view.nbytes, d.np.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif count * size > length - offset:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    arr = np.frombuffer(view, dtype=d.np, count=count, offset=offset)
    if not arr.flags.writeable:
        warnings.warn("The given buffer is not writable, and gradnb does not support "
                      "non-writable tensors. gradnb copies it: writing to the tensor leaves the "
                      "buffer as it was.", UserWarning, stacklevel=2)
        arr = arr.copy()
    return _finish(arr, requires_grad)


def _triangle_indices(name: str, row: int, col: int, offset: int, dtype, device, lower: bool):
    d, dev = _resolve(dtype if dtype is not None else _dtype.int64, device, name)
    if d.np.kind not in "iu":
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{scalar_type_name(d.np)}'")
    if d.np.itemsize < 4:  # PyTorch's kernel exists for int32 and int64 only
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{scalar_type_name(d.np)}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return _finish(_place(np.stack([rows, cols]).astype(d.np), dev), False)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The ``(2, N)`` coordinates of the lower triangle of a ``row x col`` matrix, row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The ``(2, N)`` coordinates of the upper triangle of a ``row x col`` matrix, row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


def unravel_index(indices: Tensor, shape) -> tuple:
    """Flat indices into ``shape`` as one coordinate tensor per dimension (negative indices
    count from the end, as PyTorch's)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer dtype, but got {type_name(indices)}")
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{_dtype.from_numpy_dtype(indices._data.dtype)}")
    dims = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    if not dims:
        return ()
    # Each dimension from the last takes the floor remainder and passes on the floor quotient,
    # as PyTorch's kernel: out-of-range and negative indices wrap, silently.
    rest = indices._data.astype(np.int64)
    coords = []
    for size in reversed(dims):
        coords.append(np.mod(rest, size) if size else rest)
        rest = np.floor_divide(rest, size) if size else rest
    coords.reverse()
    return tuple(_finish(np.asarray(c, dtype=np.int64), False) for c in coords)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` occurs in ``test_elements`` (either may be a number, not
    both); compared after promoting both to their common dtype."""
    from ._common import result_type_of

    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type_name(elements)}, {type_name(test_elements)}), but expected "
                        "one of:")
    common = result_type_of(elements, test_elements)
    if common.kind == "c":
        raise RuntimeError(f"Unsupported input type encountered for isin(): "
                           f"{scalar_type_name(common)}")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    found = np.isin(a.astype(common), b.astype(common), assume_unique=assume_unique,
                    invert=invert)
    return _finish(np.asarray(found), False)


