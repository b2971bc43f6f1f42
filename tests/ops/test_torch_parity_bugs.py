"""Behaviours random programs found differing from PyTorch, now matching it."""

from __future__ import annotations

import math
import warnings

import pytest

import gradnb


def _grad(fn, values):
    x = gradnb.tensor(values, dtype=gradnb.float64, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.tolist()


@pytest.mark.parametrize("fn", [
    lambda x: gradnb.sqrt(gradnb.relu(x)),
    lambda x: gradnb.sqrt(x.clamp(min=0)),
    lambda x: gradnb.log(x.clamp_min(0)),
    lambda x: gradnb.sqrt(gradnb.maximum(x, gradnb.zeros(2, dtype=gradnb.float64))),
    lambda x: gradnb.sqrt(gradnb.floor(x).abs()) * 0 + gradnb.sqrt(x.clamp(min=0)),
])
def test_masked_gradients_are_zero_not_nan(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        g = _grad(fn, [-1.0, 4.0])
    assert g[0] == 0.0 and g[1] == pytest.approx(0.25)


def test_clamp_tie_goes_to_input_and_nan_stays():
    a = gradnb.tensor([1.0, 2.0], requires_grad=True)
    b = gradnb.tensor([1.0, 3.0], requires_grad=True)
    gradnb.clamp(a, min=b).sum().backward()
    assert a.grad.tolist() == [1.0, 0.0] and b.grad.tolist() == [0.0, 1.0]
    assert math.isnan(gradnb.clamp(gradnb.tensor(float("nan")), min=2, max=1).item())


def test_sign_of_nan_and_pow_at_zero(torch):
    assert gradnb.sign(gradnb.tensor(float("nan"))).item() == 0.0
    x = gradnb.tensor(0.0, requires_grad=True)
    (x ** x).backward()
    tx = torch.tensor(0.0, requires_grad=True)
    (tx ** tx).backward()
    assert x.grad.item() == tx.grad.item()


def test_inplace_through_view_of_0d_tensor():
    a0 = gradnb.tensor(2.0, requires_grad=True)
    a = a0 * 1
    a.view(1).mul_(3)
    a.backward()
    assert a.item() == 6.0 and a0.grad.item() == 3.0


def test_unbind_returns_views():
    x = gradnb.arange(3.0)
    x.unbind(0)[0].add_(5)
    assert x.tolist() == [5.0, 1.0, 2.0]


def test_broadcast_and_rank_errors_are_torchs():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(16\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 3"):
        gradnb.ones(2, 3, 4, 16) + gradnb.ones(4)
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected, got 1, 1, 1"):
        gradnb.mv(gradnb.ones(2), gradnb.ones(2))
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        gradnb.outer(gradnb.ones(2, 2), gradnb.ones(2))


def test_no_numpy_warnings_where_torch_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradnb.log(gradnb.zeros(1))
        gradnb.exp(gradnb.tensor([1000.0]))
        gradnb.tensor([0.0]) ** -1
        x = gradnb.tensor([0.0], requires_grad=True)
        gradnb.sqrt(x).sum().backward()


def test_tensor_api_forms():
    x = gradnb.ones(2, 3)
    assert x.new_zeros(2).dtype == x.dtype and x.new_full((2,), 3.0).tolist() == [3.0, 3.0]
    assert x.type() == "gradnb.FloatTensor" and x.stride() == (3, 1) and x.is_contiguous()
    assert gradnb.LongTensor([1, 2]).dtype == gradnb.int64
    assert isinstance(x, gradnb.FloatTensor) and gradnb.Tensor([2.0]).tolist() == [2.0]
    assert x.sum(axis=0, keepdims=True).shape == (1, 3)
    assert gradnb.randn(size=(2,)).shape == (2,) and x[range(1)].shape == (1, 3)
    assert x.to(memory_format=gradnb.channels_last) is x
    assert repr(gradnb.preserve_format) == "gradnb.preserve_format"


_SILENT_IN_TORCH = {
    "div by zero": lambda t, x, z: x / z,
    "number by zero": lambda t, x, z: 1 / z,
    "floor division by zero": lambda t, x, z: x // z,
    "trunc division by zero": lambda t, x, z: t.div(x, z, rounding_mode="trunc"),
    "logit": lambda t, x, z: t.logit(x),
    "sum of inf and -inf": lambda t, x, z: (x / z).sum(),
    "sum over a dim": lambda t, x, z: (x / z).reshape(1, 3).sum(1),
    "negative-order norm of zeros": lambda t, x, z: t.linalg.vector_norm(z, -1).reshape(1),
}


@pytest.mark.parametrize("name", list(_SILENT_IN_TORCH))
def test_float_division_and_sums_are_silent_and_match_torch(torch, name):
    fn = _SILENT_IN_TORCH[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fn(gradnb, gradnb.tensor([1.0, 0.0, -1.0]), gradnb.zeros(3))
    want = fn(torch, torch.tensor([1.0, 0.0, -1.0]), torch.zeros(3))
    assert got.tolist() == pytest.approx(want.tolist(), nan_ok=True)


@pytest.mark.parametrize("op", [lambda x, y: x // y, lambda x, y: x % y,
                                lambda x, y: gradnb.div(x, y, rounding_mode="trunc")])
def test_integer_division_by_zero_raises_torchs_error(op):
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        op(gradnb.tensor([1, 2]), gradnb.tensor([0, 1]))
