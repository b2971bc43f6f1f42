"""Tensor.new, resize_, pin_memory, record_stream, dequantize: torch's behaviour on a CPU."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb


def test_new_makes_a_tensor_of_the_same_dtype():
    x = gradnb.tensor([1.0, 2.0], dtype=gradnb.float64)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == gradnb.float64
    assert x.new([3, 4]).tolist() == [3.0, 4.0] and x.new([3, 4]).dtype == gradnb.float64
    assert x.new().shape == (0,)


def test_resize_keeps_the_first_elements_and_bumps_the_version():
    x = gradnb.tensor([1.0, 2.0, 3.0, 4.0])
    version = x._version
    assert x.resize_(2, 2) is x
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert x._version == version + 1
    x.resize_(5)
    np.testing.assert_array_equal(x.numpy()[:4], [1.0, 2.0, 3.0, 4.0])
    assert x.resize_(0).shape == (0,)


def test_resize_refuses_a_tensor_that_requires_grad_unchanged():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        x.resize_(4)
    assert x.shape == (2,)


def test_cpu_only_answers_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, gradnb):
        x = lib.tensor([1.0, 2.0])
        assert x.dequantize() is x
        assert x.is_pinned() is False
        assert x.is_sparse_csr is False
        with pytest.raises(RuntimeError, match="unknown parameter type"):
            x.record_stream(1)
        if not (lib is gradnb and gradnb.cuda.is_available()):
            with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
                x.pin_memory()
