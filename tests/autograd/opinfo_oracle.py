"""PyTorch's OpInfo database as the oracle's inputs, for the function transforms' tests.

``op_db`` lives in torch's testing internals, which import ``expecttest`` (a test-runner
dependency the database never calls); a stand-in lets it load where that is not installed.
Samples convert to gradnb by value; only ops gradnb has are used.
"""

from __future__ import annotations

import functools
import sys
import types
import unittest

import numpy as np

import gradnb


@functools.cache
def op_db():
    """``op_db`` (raises ImportError without torch)."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("expecttest")
        stand_in.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stand_in
    from torch.testing._internal.common_methods_invocations import op_db as db

    return db


def gradnb_function(name: str):
    """``gradnb.<name>`` (dotted: ``nn.functional.relu``), or None where gradnb lacks it."""
    obj = gradnb
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def to_gradnb(value):
    """A sample argument converted to gradnb (tensors by value, dtypes by name)."""
    import torch

    if isinstance(value, torch.Tensor):
        return gradnb.tensor(value.detach().numpy().copy())
    if isinstance(value, torch.dtype):
        return getattr(gradnb, str(value).split(".")[-1])
    if isinstance(value, (list, tuple)):
        return type(value)(to_gradnb(v) for v in value)
    if isinstance(value, dict):
        return {k: to_gradnb(v) for k, v in value.items()}
    return value


def ops_with(flag: str):
    """(OpInfo, gradnb function) for the entries with ``flag`` set that gradnb implements."""
    return [(op, gradnb_function(op.name)) for op in op_db()
            if getattr(op, flag) and not op.variant_test_name
            and gradnb_function(op.name) is not None]


def first_output(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def as_array(t):
    return None if t is None else np.asarray(t.detach()._data)
