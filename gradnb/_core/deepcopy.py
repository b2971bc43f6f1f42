"""``copy.deepcopy`` of tensors, parameters, modules and optimizers (the "keep the best model"
idiom), as PyTorch does it.

Pickling stays refused (a pickle can run code when loaded; ``gradnb.save`` writes ``.npz`` files
instead), so ``deepcopy`` cannot fall back on ``__reduce_ex__``: these classes implement
``__deepcopy__`` directly.

- A tensor copies its data into fresh memory; tensors that share memory (a view and its base)
  still share it in the copy, as PyTorch's storages do. ``requires_grad`` and ``.grad`` (deep
  copied) are kept. Only leaves can be copied: PyTorch's error for the others.
- A ``Parameter`` stays a ``Parameter`` with its ``requires_grad``; like PyTorch, its ``.grad``
  is not copied.
- A module or an optimizer copies its attributes through the same memo, so parameters shared or
  tied inside a model stay shared, and ``copy.deepcopy((model, optimizer))`` gives an optimizer
  that updates the copied model's parameters, with its state copied.
"""

from __future__ import annotations

import copy

import numpy as np

__all__ = ["copy_attributes", "copy_tensor"]

NON_LEAF_MESSAGE = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "gradnb.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)


def _root(data):
    """The array owning ``data``'s memory (NumPy views chain through ``.base``)."""
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def copy_data(data, memo: dict):
    """A copy of an array; views of one memory block copied in one ``memo`` keep sharing."""
    if type(data) is not np.ndarray:  # CuPy: a plain copy
        return data.copy()
    root = _root(data)
    if not root.flags.c_contiguous:
        return data.copy()
    key = ("gradnb.storage", id(root))
    if key not in memo:
        memo[key] = root.copy()
        memo.setdefault("gradnb.keepalive", []).append(root)  # ids stay unique while copying
    new_root = memo[key]
    if root is data:
        return new_root
    offset = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(data.shape, data.dtype, buffer=new_root, offset=offset,
                      strides=data.strides)


def copy_tensor(t, memo: dict):
    """``copy.deepcopy`` of a leaf tensor (see the module docstring)."""
    if id(t) in memo:
        return memo[id(t)]
    if t.grad_fn is not None:
        raise RuntimeError(NON_LEAF_MESSAGE)
    new = type(t)._make(copy_data(t._data, memo), t._requires_grad)
    memo[id(t)] = new
    if t._is_param:
        new._is_param = True
    if t._grad is not None:
        new._grad = copy_tensor(t._grad, memo)
    for key, value in t.__dict__.items():  # user attributes; the engine's start with "_"
        if not key.startswith("_"):
            new.__dict__[key] = copy.deepcopy(value, memo)
    return new


def copy_parameter(p, memo: dict):
    """``copy.deepcopy`` of a Parameter: a Parameter with copied data, no ``.grad``."""
    if id(p) in memo:
        return memo[id(p)]
    new = type(p)._make(copy_data(p._data, memo), p._requires_grad)
    new._is_param = True
    memo[id(p)] = new
    return new


def copy_attributes(obj, memo: dict):
    """A new instance of ``obj``'s class with every attribute deep-copied through ``memo``
    (``__init__`` is not run): modules and optimizers."""
    if id(obj) in memo:
        return memo[id(obj)]
    new = object.__new__(type(obj))
    memo[id(obj)] = new
    for key, value in obj.__dict__.items():
        new.__dict__[key] = copy.deepcopy(value, memo)
    return new
