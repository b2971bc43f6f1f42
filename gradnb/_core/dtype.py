"""Tensor dtypes: thin named wrappers around NumPy dtypes, spelled as PyTorch spells them."""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_dtype",
    "bfloat16",
    "bool",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "dtype",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "int8",
    "int16",
    "int32",
    "int64",
    "set_default_dtype",
    "uint8",
]


class dtype:
    """A tensor element type (``gradnb.float32``, ``gradnb.int64`` ...).

    Each gradnb dtype wraps exactly one NumPy dtype; ``np`` is that dtype. ``bfloat16``'s is
    ``ml_dtypes.bfloat16``, imported the first time ``bfloat16.np`` is read (the package's
    extension takes longer to load than the rest of gradnb).
    """

    __slots__ = ("is_complex", "is_floating_point", "is_signed", "itemsize", "name", "np")

    def __init__(self, name: str, np_dtype) -> None:
        self.name = name
        if np_dtype is None:  # bfloat16: a float whose NumPy dtype is loaded on first use
            self.is_floating_point, self.is_complex, self.is_signed = True, False, True
            self.itemsize = 2
            return
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fic"
        self.itemsize = self.np.itemsize

    def __getattr__(self, attr: str):
        # Reached only for an unset slot: bfloat16's ``np`` before ml_dtypes is loaded.
        if attr == "np" and self.name == "bfloat16":
            return _load_bfloat16()
        raise AttributeError(f"'gradnb.dtype' object has no attribute '{attr}'")

    def __repr__(self) -> str:
        return f"gradnb.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = dtype("float16", np.float16)
half = float16
float32 = dtype("float32", np.float32)
float = float32
float64 = dtype("float64", np.float64)
double = float64
# NumPy has no complex32 (PyTorch's chalf): it is not offered rather than silently aliased.
bfloat16 = dtype("bfloat16", None)
complex64 = dtype("complex64", np.complex64)
cfloat = complex64
complex128 = dtype("complex128", np.complex128)
cdouble = complex128
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
short = int16
int32 = dtype("int32", np.int32)
int = int32
int64 = dtype("int64", np.int64)
long = int64
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)

_ALL = [float16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8, bool]
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(bfloat16=bfloat16, half=float16, float=float32, double=float64, short=int16, int=int32, long=int64,
                cfloat=complex64, cdouble=complex128)

_default_float = float32


def _load_bfloat16() -> np.dtype:
    """Import ml_dtypes and make ``bfloat16.np`` its bfloat16 (once)."""
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        raise RuntimeError("gradnb.bfloat16 needs the ml_dtypes package "
                           "(pip install ml_dtypes)") from None
    bfloat16.np = np.dtype(ml_dtypes.bfloat16)
    _BY_NP[bfloat16.np] = bfloat16
    return bfloat16.np


def is_bfloat16_np(np_dtype) -> bool:
    """Whether a NumPy dtype is ml_dtypes' bfloat16 (without importing ml_dtypes)."""
    return np_dtype.kind == "V" and np_dtype.name == "bfloat16"


def is_float_np(np_dtype) -> bool:
    """Whether a NumPy dtype is a real floating type, bfloat16 included."""
    return np_dtype.kind == "f" or (np_dtype.kind == "V" and np_dtype.name == "bfloat16")


def get_default_dtype() -> dtype:
    """The dtype of floating-point tensors created from Python floats (``float32`` unless changed)."""
    return _default_float


def default_complex_dtype() -> dtype:
    """The complex dtype paired with the default float (``complex64`` for ``float32``,
    ``complex128`` for ``float64``): what complex Python numbers and integer-complex promotion
    give, as in PyTorch."""
    return complex128 if _default_float is float64 else complex64


def complex_of(np_dtype) -> np.dtype:
    """The complex NumPy dtype with ``np_dtype``'s precision (float16 has no complex partner
    in NumPy, so it pairs with complex64)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "c":
        return np_dtype
    return np.dtype(np.complex128) if np_dtype == np.float64 else np.dtype(np.complex64)


def real_of(np_dtype) -> np.dtype:
    """The real NumPy dtype of a complex one's parts (``np_dtype`` itself when real)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "c":
        return np.dtype(np.float64) if np_dtype == np.complex128 else np.dtype(np.float32)
    return np_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype, as ``torch.set_default_dtype``.

    >>> import gradnb
    >>> gradnb.set_default_dtype(gradnb.float64); gradnb.tensor(1.5).dtype
    gradnb.float64
    >>> gradnb.set_default_dtype(gradnb.float32)
    """
    global _default_float
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def as_dtype(d) -> dtype:
    """Accept a gradnb dtype, a NumPy dtype/type or a name and return the gradnb dtype."""
    if type(d) is dtype:
        return d
    if isinstance(d, str):
        try:
            return _BY_NAME[d]
        except KeyError:
            raise TypeError(f"unknown dtype {d!r}") from None
    try:
        return _BY_NP[np.dtype(d)]
    except (KeyError, TypeError):
        if getattr(d, "__name__", getattr(d, "name", None)) == "bfloat16":
            _load_bfloat16()
            return bfloat16
        raise TypeError(f"gradnb has no dtype for {d!r}") from None


def from_numpy_dtype(np_dtype) -> dtype:
    """The gradnb dtype of a NumPy array's dtype (fast path for the engine)."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        if is_bfloat16_np(np_dtype):  # an ml_dtypes array made before gradnb.bfloat16 was used
            _load_bfloat16()
            return bfloat16
        raise


# Legacy tensor type names (``Tensor.type()``, PyTorch's messages): ``gradnb.FloatTensor``.
_LEGACY_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def legacy_type_name(d) -> str:
    """The legacy type name (``FloatTensor``) of a gradnb or NumPy dtype."""
    return _LEGACY_TYPE_NAMES.get(getattr(d, "name", str(d)), "Tensor")


# The dtypes PyTorch has no legacy ``torch.*Tensor`` class for: its C++ ``toString()`` names
# their tensor type by backend and scalar type instead.
_BACKEND_TYPE_NAMES = {"complex64": "CPUComplexFloatType", "complex128": "CPUComplexDoubleType",
                       "bfloat16": "CPUBFloat16Type"}


def tensor_type_string(d) -> str:
    """The tensor type as PyTorch's error messages print it: ``gradnb.FloatTensor``, or
    ``CPUComplexDoubleType`` for the dtypes without a legacy tensor class."""
    name = getattr(d, "name", str(d))
    backend = _BACKEND_TYPE_NAMES.get(name)
    return backend if backend is not None else f"gradnb.{legacy_type_name(d)}"
