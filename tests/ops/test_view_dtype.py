"""``Tensor.view(dtype)``: the same memory read as another dtype, as PyTorch.

Elements of another size scale the last dimension; the result records nothing and does not
require grad, but shares memory and version counter with its source. Each case runs in both
libraries and must end the same way (values, or error type and message).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradnb


def _offset(view):
    return (view.storage_offset(),)


def _flags(view):
    return view.requires_grad, view.grad_fn, view.is_leaf, view._base is None


CASES = {
    "float32 as int32": lambda m: m.tensor([[1.0, -2.0], [0.5, 3.0]]).view(m.int32),
    "float32 as float16": lambda m: m.tensor([[1.0, -2.0], [0.5, 3.0]]).view(m.float16),
    "float32 as float64": lambda m: m.tensor([[1.0, -2.0, 4.0, 8.0]]).view(m.float64),
    "float32 as bfloat16": lambda m: m.tensor([1.0, -2.5]).view(m.bfloat16).float(),
    "keyword": lambda m: m.tensor([[1.0, 2.0]]).view(dtype=m.int16),
    "complex64 as float32": lambda m: m.tensor([1 + 2j, 3 - 4j]).view(m.float32),
    "float32 as complex64": lambda m: m.tensor([1.0, 2.0, 3.0, 4.0]).view(m.complex64),
    "bool as uint8": lambda m: m.tensor([True, False]).view(m.uint8),
    "0-d, same size": lambda m: m.tensor(1.0).view(m.int32),
    "0-d, another size": lambda m: m.tensor(1.0).view(m.float64),
    "odd last dimension": lambda m: m.ones(3).view(m.float64),
    "strided last dimension": lambda m: m.ones(4, 2).t().view(m.float64),
    "odd storage offset": lambda m: m.ones(5)[1:].view(m.float64),
    "even storage offset": lambda m: m.arange(6.0)[2:].view(m.float64),
    "a stride not divisible": lambda m: m.ones(4, 3)[:, :2].view(m.float64),
    "an empty last dimension": lambda m: m.ones(4, 0).view(m.float64),
    "the offset of a chain": lambda m: m.zeros(8, dtype=m.int8)[1:5].view(m.uint8).view(m.int32),
    "its storage offset": lambda m: _offset(m.ones(2, 4)[:, 2:].view(m.float64)),
    "from a tensor that requires grad": lambda m: _flags(
        (m.ones(2, requires_grad=True) * 2).view(m.float32)),
}


def _outcome(lib, make):
    try:
        value = make(lib)
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        return type(error).__name__, str(error).replace("torch.", "gradnb.")
    if isinstance(value, tuple):
        return "ok", repr(value)
    return "ok", str(value.dtype).split(".")[-1], tuple(value.shape), value.numpy().tolist()


@pytest.mark.parametrize("name", list(CASES))
def test_as_pytorch(torch, name):
    assert _outcome(gradnb, CASES[name]) == _outcome(torch, CASES[name])


def test_a_write_through_either_is_seen_by_both():
    x = gradnb.tensor([1.0, 2.0])
    bits = x.view(gradnb.int32)
    bits.add_(1)
    assert x._version == bits._version == 1
    assert x.numpy().tolist() == np.array([1.0, 2.0], np.float32).view(np.int32).__add__(1).view(
        np.float32).tolist()
