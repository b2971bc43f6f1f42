"""Pooling against PyTorch where op_db's samples do not look: the index each max pool keeps on
ties, NaNs and all ``-inf`` windows, fractional pooling with fixed samples in float32 and
float64, and the nodes' saved values."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.torch


def awkward(shape, dtype=np.float64, nan: bool = True) -> np.ndarray:
    """Random values with a block of ``-inf``, two of NaNs and a plane of ties."""
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x[0, 0, ..., :2] = -np.inf
    if nan:
        x[-1, -1, ..., 1:3] = np.nan
    x[0, -1] = np.round(x[0, -1])
    return x


def same(g_fn, t_fn, x: np.ndarray) -> None:
    """Same values, indices, node name and gradient."""
    g_in = gradnb.tensor(x, requires_grad=True)
    t_in = torch.tensor(x, requires_grad=True)
    (g_out, g_idx), (t_out, t_idx) = g_fn(g_in), t_fn(t_in)
    np.testing.assert_array_equal(g_out.detach().numpy(), t_out.detach().numpy())
    np.testing.assert_array_equal(g_idx.numpy(), t_idx.numpy())
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    w = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(x.dtype)
    (g_out * gradnb.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(g_in.grad.numpy(), t_in.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("nan", [True, False])
@pytest.mark.parametrize("kw", [
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": (2, 3, 2), "stride": 1, "dilation": 2},
    {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2},
])
def test_max_pool3d_indices(kw, nan):
    same(lambda x: F.max_pool3d(x, return_indices=True, **kw),
         lambda x: TF.max_pool3d(x, return_indices=True, **kw),
         awkward((2, 3, 5, 6, 7), nan=nan))


@pytest.mark.parametrize("size", [(2, 3, 4), (3, None, 5)])
def test_adaptive_max_pool3d_indices(size):
    same(lambda x: F.adaptive_max_pool3d(x, size, True),
         lambda x: TF.adaptive_max_pool3d(x, size, True), awkward((2, 3, 5, 6, 7)))


def test_adaptive_max_pool1d_composes_like_torch():
    same(lambda x: F.adaptive_max_pool1d(x, 4, True),
         lambda x: TF.adaptive_max_pool1d(x, 4, True), awkward((2, 3, 9)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fractional_max_pool_with_fixed_samples(dtype):
    x = awkward((2, 3, 6, 7, 8), dtype)
    u = np.random.default_rng(2).random((2, 3, 3)).astype(dtype)
    same(lambda t: F.fractional_max_pool3d(t, 2, output_size=(3, 4, 4), return_indices=True,
                                           _random_samples=gradnb.tensor(u)),
         lambda t: TF.fractional_max_pool3d(t, 2, output_size=(3, 4, 4), return_indices=True,
                                            _random_samples=torch.tensor(u)), x)
    same(lambda t: F.fractional_max_pool2d(t[0, :, 0], (2, 3), output_size=3,
                                           return_indices=True,
                                           _random_samples=gradnb.tensor(u[:1, :, :2])),
         lambda t: TF.fractional_max_pool2d(t[0, :, 0], (2, 3), output_size=3,
                                            return_indices=True,
                                            _random_samples=torch.tensor(u[:1, :, :2])), x)


def saved(node) -> dict:
    return {a: getattr(node, a) for a in dir(node)
            if a.startswith("_saved_") and a != "_saved_self" and "result" not in a}


@pytest.mark.parametrize(("n", "args"), [
    (2, (3,)), (2, ((2, 3), None, 1, True, False, 2)), (2, ([2], [1], 0)),
    (3, (2,)), (3, ((2, 3, 2), 1, 1, True, False, 3)), (3, ([2, 2, 2], None, (0, 1, 0))),
])
def test_avg_pool_saves_torchs_values(n, args):
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 7, 5)[3 - n:])
    g_fn, t_fn = (F.avg_pool2d, TF.avg_pool2d) if n == 2 else (F.avg_pool3d, TF.avg_pool3d)
    g_out = g_fn(gradnb.tensor(x, requires_grad=True), *args)
    t_out = t_fn(torch.tensor(x, requires_grad=True), *args)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy())
    assert saved(g_out.grad_fn) == saved(t_out.grad_fn)


def test_max_unpool_gradient_gathers():
    x = torch.tensor(np.random.default_rng(4).standard_normal((2, 3, 6, 6, 6)))
    out, idx = TF.max_pool3d(x, 2, return_indices=True)
    g_in = gradnb.tensor(out.numpy(), requires_grad=True)
    t_in = out.clone().requires_grad_(True)
    g_out = F.max_unpool3d(g_in, gradnb.tensor(idx.numpy()), 2)
    t_out = TF.max_unpool3d(t_in, idx, 2)
    np.testing.assert_array_equal(g_out.detach().numpy(), t_out.detach().numpy())
    assert g_out.grad_fn.name() == t_out.grad_fn.name() == "MaxUnpool3DBackward0"
    w = np.random.default_rng(5).standard_normal(tuple(t_out.shape))
    (g_out * gradnb.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(g_in.grad.numpy(), t_in.grad.numpy())


@pytest.mark.parametrize(("name", "call", "shape"), [
    ("adaptive_max_pool2d", lambda m, x: m.adaptive_max_pool2d(x, 2), (0, 3, 4, 4)),
    ("max_pool3d", lambda m, x: m.max_pool3d(x, 2), (0, 3, 4, 4, 4)),
    ("fractional_max_pool2d", lambda m, x: m.fractional_max_pool2d(x, 2, output_size=2),
     (0, 3, 4, 4)),
])
def test_empty_batch(name, call, shape):
    """A batch of none pools to a batch of none, and its gradient is empty too."""
    g_in = gradnb.tensor(np.zeros(shape), requires_grad=True)
    t_in = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    g_out, t_out = call(F, g_in), call(TF, t_in)
    assert tuple(g_out.shape) == tuple(t_out.shape)
    g_out.sum().backward()
    assert tuple(g_in.grad.shape) == shape


def test_max_unpool_empty_batch():
    g_in = gradnb.tensor(np.zeros((0, 3, 2, 2)), requires_grad=True)
    out = F.max_unpool2d(g_in, gradnb.zeros(0, 3, 2, 2, dtype=gradnb.int64), 2)
    assert tuple(out.shape) == (0, 3, 4, 4)
    out.sum().backward()
    assert tuple(g_in.grad.shape) == (0, 3, 2, 2)
