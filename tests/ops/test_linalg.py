"""matmul in all its shapes (vector, matrix, batched with broadcasting) and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 2)), ((3,), (5, 3, 2)),
    ((5, 2, 3), (3,)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
]


@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_matmul(check, a_shape, b_shape):
    rng = np.random.default_rng(0)
    check(lambda m, a, b: a @ b, [rng.standard_normal(a_shape), rng.standard_normal(b_shape)],
          gradgrad=len(a_shape) + len(b_shape) <= 4)


@pytest.mark.parametrize("requires", [[True, False], [False, True]])
def test_matmul_one_side(check, requires):
    rng = np.random.default_rng(1)
    check(lambda m, a, b: a @ b, [rng.standard_normal((2, 3)), rng.standard_normal((3, 4))],
          requires=requires)


def test_matmul_shape_error():
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        gradnb.ones(2, 3) @ gradnb.ones(4, 5)


def test_matmul_0d_error():
    with pytest.raises(RuntimeError, match="^both arguments to matmul need to be at least 1D"):
        gradnb.ones(()) @ gradnb.ones(2)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (1, 1)])
def test_trace(check, shape):
    check(lambda m, a: m.trace(a), [np.random.default_rng(2).standard_normal(shape)], gradgrad=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_trace_method_and_dtype_match_torch(torch, dtype):
    values = [[1, 0, 2], [3, 1, 4]]
    ours = gradnb.tensor(values, dtype=getattr(gradnb, dtype)).trace()
    theirs = torch.tensor(values, dtype=getattr(torch, dtype)).trace()
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert ours.item() == theirs.item()


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2), ()])
def test_trace_needs_a_matrix(torch, shape):
    with pytest.raises(RuntimeError) as ours:
        gradnb.trace(gradnb.ones(shape))
    with pytest.raises(RuntimeError) as theirs:
        torch.trace(torch.ones(shape))
    assert str(ours.value) == str(theirs.value)


def test_trace_of_bool_is_refused_as_in_torch(torch):
    with pytest.raises(NotImplementedError) as ours:
        gradnb.ones(2, 2, dtype=gradnb.bool).trace()
    with pytest.raises(NotImplementedError) as theirs:
        torch.ones(2, 2, dtype=torch.bool).trace()
    assert str(ours.value) == str(theirs.value)
