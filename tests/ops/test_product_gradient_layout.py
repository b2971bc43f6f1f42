"""The matrix products' gradients: laid out as PyTorch lays them out, and computed in column
blocks where NumPy's BLAS is slow for one call, with the same numbers.

PyTorch's ``mm_mat2_backward`` gives a column-major ``mat2`` (``weight.t()``, as ``F.linear``
passes it) a column-major gradient, so the weight's own gradient is C-contiguous like the weight;
any other ``mat2`` gets a row-major one. ``mm`` and ``addmm`` both follow it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradnb
from gradnb.ops import _blas


def _mat2_gradient_strides(lib, column_major: bool, with_bias: bool):
    """The strides of the gradient ``mat2`` receives, and of the leaf's ``.grad`` behind it."""
    lib.manual_seed(0)
    x = lib.randn(4, 3)
    w = lib.randn(5, 3, requires_grad=True) if column_major else lib.randn(3, 5,
                                                                          requires_grad=True)
    mat2 = w.t() if column_major else w * 1
    seen = []
    mat2.register_hook(lambda g: seen.append(g.stride()))
    y = lib.addmm(lib.zeros(5), x, mat2) if with_bias else x @ mat2
    y.sum().backward()
    return seen[0], w.grad.stride()


@pytest.mark.parametrize("column_major", [True, False], ids=["weight.t()", "row-major"])
@pytest.mark.parametrize("with_bias", [False, True], ids=["mm", "addmm"])
def test_mat2_gradient_layout_is_pytorchs(torch, column_major, with_bias):
    assert _mat2_gradient_strides(gradnb, column_major, with_bias) == \
        _mat2_gradient_strides(torch, column_major, with_bias)


def _mat1_gradient_strides(lib, column_major: bool, op: str):
    lib.manual_seed(0)
    x = lib.randn(3, 4, requires_grad=True) if column_major else lib.randn(4, 3,
                                                                         requires_grad=True)
    mat1 = x.t() if column_major else x * 1
    w = lib.randn(3, 5)
    if op == "mm":
        y = mat1.mm(w)
    elif op == "addmm":
        y = lib.addmm(lib.zeros(5), mat1, w)
    else:
        y = lib.nn.functional.linear(mat1, w.t(), lib.zeros(5))
    (g,) = lib.autograd.grad(y.sum(), mat1)
    return g.stride()


@pytest.mark.parametrize("column_major", [True, False], ids=["x.t()", "row-major"])
@pytest.mark.parametrize("op", ["mm", "addmm", "linear"])
def test_mat1_gradient_layout_is_pytorchs(torch, column_major, op):
    """PyTorch's ``mm_mat1_backward``: a column-major ``mat1`` gets a column-major gradient."""
    assert _mat1_gradient_strides(gradnb, column_major, op) == \
        _mat1_gradient_strides(torch, column_major, op)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_weight_gradient_is_the_products_own_array(bias):
    """A bias-free ``F.linear`` records ``MmBackward0``: its weight gradient comes out
    C-contiguous and becomes ``.grad`` without a transposing copy, as ``addmm``'s does."""
    layer = gradnb.nn.Linear(6, 4, bias=bias)
    x = gradnb.randn(3, 6)
    layer(x).sum().backward()
    grad = layer.weight.grad._data
    assert grad.flags.c_contiguous
    np.testing.assert_allclose(grad, np.ones((4, 3)) @ x._data, rtol=1e-6)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch_in_the_blocked_regime(torch, monkeypatch, bias):
    """A 256-512 layer at batch 16 takes the column blocks (on any BLAS: forced here); values
    and layouts as PyTorch's."""
    monkeypatch.setattr(_blas, "_blas", (True, 2))
    rng = np.random.default_rng(0)
    w = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    x = rng.standard_normal((16, 512)).astype(np.float32)
    grads = []
    for lib in (gradnb, torch):
        weight = lib.tensor(w, requires_grad=True)
        bias_t = lib.tensor(b, requires_grad=True) if bias else None
        out = lib.nn.functional.linear(lib.tensor(x), weight, bias_t)
        (out * out).sum().backward()
        grads.append((weight.grad, weight.grad.stride()))
    (ours, our_strides), (theirs, their_strides) = grads
    assert our_strides == their_strides
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-3)


@settings(max_examples=400, deadline=None)
@given(k=st.integers(0, 70), m=st.integers(250, 300), extra=st.integers(0, 320),
       dtype=st.sampled_from([np.float32, np.float64]),
       threads=st.sampled_from([1, 2, 4]), openblas=st.booleans())
def test_transposed_product_is_the_one_call_bit_for_bit(k, m, extra, dtype, threads, openblas):
    """Whether it splits or not: ``p.T @ q`` exactly, C-contiguous, same dtype (each entry is
    the same dot product over ``k``, in the same order)."""
    rng = np.random.default_rng(k * 1000 + m + extra)
    p = rng.standard_normal((k, m)).astype(dtype)
    q = rng.standard_normal((k, m + extra)).astype(dtype)
    saved, _blas._blas = _blas._blas, (openblas, threads)
    try:
        out = _blas.transposed_product(p, q)
    finally:
        _blas._blas = saved
    expected = p.T @ q
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, expected)


def test_transposed_product_blocks_only_where_it_pays(monkeypatch):
    """Two or more threads of OpenBLAS, float32, at least 256 rows, between one and two times as
    many columns, an inner dimension of 2 to 64."""
    calls = []
    real = np.matmul

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    def blocks(k, m, n, dtype=np.float32):
        calls.clear()
        monkeypatch.setattr(_blas.np, "matmul", counting)
        try:
            _blas.transposed_product(np.ones((k, m), dtype), np.ones((k, n), dtype))
        finally:
            monkeypatch.setattr(_blas.np, "matmul", real)
        return len(calls)

    monkeypatch.setattr(_blas, "_blas", (True, 2))
    assert blocks(16, 512, 784) == 3  # 784 columns in blocks of about 256
    assert blocks(16, 256, 512) == 4
    assert blocks(64, 256, 256) == 2
    assert blocks(16, 128, 784) == 0  # too few rows
    assert blocks(16, 512, 1025) == 0  # more than twice as wide
    assert blocks(16, 512, 500) == 0  # taller than wide
    assert blocks(128, 512, 784) == 0  # a long inner dimension
    assert blocks(1, 512, 784) == 0
    assert blocks(16, 512, 784, np.float64) == 0
    monkeypatch.setattr(_blas, "_blas", (True, 1))
    assert blocks(16, 512, 784) == 0
    monkeypatch.setattr(_blas, "_blas", (False, 8))
    assert blocks(16, 512, 784) == 0


def test_set_num_threads_reaches_the_rule():
    before = gradnb.get_num_threads()
    try:
        gradnb.set_num_threads(1)
        assert _blas._blas_state()[1] == 1
        gradnb.set_num_threads(3)
        assert _blas._blas_state()[1] == 3
    finally:
        gradnb.set_num_threads(before)

