"""Storages: the memory behind tensors, as ``Tensor.untyped_storage()`` (bytes) and the
deprecated ``Tensor.storage()`` (elements of the tensor's dtype) show it.

A gradnb tensor holds a NumPy array; its storage is the memory from the start of its view base
(``storage_offset()`` elements before its first element) to the end of the buffer that array
lives in. A storage reads and writes that memory itself, so ``t.untyped_storage().data_ptr()``
is the address PyTorch code compares to tell whether two tensors share memory.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._core.backend import CPU, device_of
from ._core.tensor import Tensor
from .ops.tensor_api import data_ptr as _tensor_data_ptr
from .ops.tensor_api import storage_offset as _storage_offset

__all__ = ["TypedStorage", "UntypedStorage", "is_storage"]


def _owner(array):
    """The array that owns the memory behind ``array`` (the end of its ``.base`` chain)."""
    while isinstance(getattr(array, "base", None), np.ndarray):
        array = array.base
    return array


class _Memory:
    """``nbytes`` bytes from ``address``, as a NumPy array (``__array_interface__``); it keeps
    the owning array alive while anything reads through it."""

    def __init__(self, address: int, nbytes: int, owner) -> None:
        self._owner = owner
        self.__array_interface__ = {"data": (address, False), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}


class UntypedStorage:
    """The bytes behind a tensor (``Tensor.untyped_storage()``)."""

    def __init__(self, tensor: Tensor) -> None:
        data = tensor._data
        if device_of(data) != CPU:
            raise NotImplementedError("gradnb reads storages of CPU tensors only")
        owner = _owner(data)
        start = _tensor_data_ptr(tensor) - _storage_offset(tensor) * data.itemsize
        end = int(owner.__array_interface__["data"][0]) + owner.nbytes
        self._bytes = np.asarray(_Memory(start, max(end - start, 0), owner))

    @property
    def device(self):
        from ._core.backend import device

        return device("cpu")

    def data_ptr(self) -> int:
        """The address of the first byte."""
        return int(self._bytes.__array_interface__["data"][0])

    def nbytes(self) -> int:
        return self._bytes.size

    def size(self) -> int:
        return self._bytes.size

    def __len__(self) -> int:
        return self._bytes.size

    def element_size(self) -> int:
        return 1

    def is_shared(self) -> bool:
        return False  # (gradnb never hands tensors to other processes)

    def __getitem__(self, index):
        return self._bytes[index].tolist()

    def tolist(self) -> list:
        return self._bytes.tolist()

    def __repr__(self) -> str:
        body = "".join(f" {v}\n" for v in self._bytes.tolist())
        return f"{body}[gradnb.storage.UntypedStorage(device=cpu) of size {self.size()}]"


class TypedStorage:
    """The elements behind a tensor in its dtype (``Tensor.storage()``, deprecated in PyTorch
    for ``untyped_storage()``)."""

    def __init__(self, tensor: Tensor) -> None:
        self._untyped = UntypedStorage(tensor)
        self.dtype = tensor.dtype
        itemsize = tensor._data.itemsize
        count = self._untyped.nbytes() // itemsize
        self._values = self._untyped._bytes[:count * itemsize].view(tensor._data.dtype)

    @property
    def device(self):
        return self._untyped.device

    def _untyped_storage(self) -> UntypedStorage:
        return self._untyped

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def size(self) -> int:
        return self._values.size

    def __len__(self) -> int:
        return self._values.size

    def element_size(self) -> int:
        return self._values.itemsize

    def nbytes(self) -> int:
        return self._values.nbytes

    def is_shared(self) -> bool:
        return False

    def __getitem__(self, index):
        return self._values[index].tolist()

    def tolist(self) -> list:
        return self._values.tolist()

    def __repr__(self) -> str:
        body = "".join(f" {v}\n" for v in self._values.tolist())
        return (f"{body}[gradnb.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                f"{self.size()}]")


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage (``untyped_storage()``'s or ``storage()``'s)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes behind this tensor, from its view base's start."""
    return UntypedStorage(self)


def storage(self: Tensor) -> TypedStorage:
    """The elements behind this tensor, in its dtype (deprecated: ``untyped_storage()``)."""
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to you "
                  "if you are using storages directly.  To access UntypedStorage directly, use "
                  "tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=2)
    return TypedStorage(self)


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors view the same memory the same way (start, sizes and strides)."""
    a, b = self._data, tensor._data
    return (UntypedStorage(self).data_ptr() == UntypedStorage(tensor).data_ptr()
            and _tensor_data_ptr(self) == _tensor_data_ptr(tensor)
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


TENSOR_METHODS = {"untyped_storage": untyped_storage, "storage": storage,
                  "is_set_to": is_set_to}
