"""``default_collate`` and ``default_convert``: how a list of samples becomes a batch.

PyTorch's rules, type by type: tensors are stacked; NumPy arrays and scalars become tensors (then
stacked); Python floats give a float64 tensor, ints an int64 tensor (bools a bool tensor); strings
stay a list; mappings and namedtuples keep their type with each field collated; other sequences
are transposed, and a *tuple* sample gives a *list* of collated fields (so ``x, y = batch`` works
and ``type(batch)`` is ``list``, as in PyTorch).

>>> import numpy as np
>>> from gradnb.utils.data import default_collate
>>> default_collate([(1, 2.0), (3, 4.0)])
[tensor([1, 3]), tensor([2., 4.], dtype=gradnb.float64)]
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ..._core import dtype as _dtype
from ..._core.tensor import Tensor
from ...ops.creation import as_tensor, tensor
from ...ops.shape import stack

__all__ = ["default_collate", "default_convert"]

_STRING_OR_OBJECT_DTYPE = re.compile(r"[SaUO]")
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    """Turn NumPy arrays and scalars into tensors, recursively, without batching (what a
    ``DataLoader`` with ``batch_size=None`` applies to each sample)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.bool_, np.number)):
        if _STRING_OR_OBJECT_DTYPE.search(np.asarray(data).dtype.str) is not None:
            return data
        return as_tensor(np.asarray(data) if isinstance(data, np.generic) else data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return type(data)({key: default_convert(data[key]) for key in data})
        except TypeError:  # the mapping type cannot be built from a dict
            return {key: default_convert(data[key]) for key in data}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Merge a list of samples into a batch, with PyTorch's rules (see the module docstring)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _STRING_OR_OBJECT_DTYPE.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):  # bool is an int: a list of bools gives a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(collated)
                return clone
            return type(elem)(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))  # tuples: a field of strings stays a tuple, as in PyTorch
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))
