"""nn.functional against PyTorch: values, gradients, node names, and stability at huge logits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.torch


def pair(*shape, dtype=np.float64, scale=1.0):
    """The same random leaf in gradnb and in torch."""
    arr = (np.random.standard_normal(shape) * scale).astype(dtype)
    return (gradnb.tensor(arr, requires_grad=True),
            torch.tensor(arr, requires_grad=True))


def check(g_out, t_out, g_inputs, t_inputs, rtol=1e-7, atol=1e-9):
    """Same forward values, same grad_fn name, same gradients after backward of a weighted sum."""
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol,
                               atol=atol)
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    weights = np.random.standard_normal(tuple(t_out.shape))
    (g_out * gradnb.tensor(weights, dtype=g_out.dtype)).sum().backward()
    (t_out * torch.tensor(weights, dtype=t_out.dtype)).sum().backward()
    for g, t in zip(g_inputs, t_inputs):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def test_linear_and_its_graph():
    (gx, tx), (gw, tw), (gb, tb) = pair(4, 3), pair(2, 3), pair(2)
    check(F.linear(gx, gw, gb), TF.linear(tx, tw, tb), [gx, gw, gb], [tx, tw, tb])
    out = F.linear(gx, gw, gb)
    names = [fn.name() for fn, _ in out.grad_fn.next_functions]
    assert names == ["gradnb::autograd::AccumulateGrad", "gradnb::autograd::AccumulateGrad",
                     "TBackward0"]
    torch_names = [fn.name() for fn, _ in TF.linear(tx, tw, tb).grad_fn.next_functions]
    assert [n.replace("torch::", "gradnb::") for n in torch_names] == names


def test_linear_batched_input():
    (gx, tx), (gw, tw), (gb, tb) = pair(2, 4, 3), pair(2, 3), pair(2)
    check(F.linear(gx, gw, gb), TF.linear(tx, tw, tb), [gx, gw, gb], [tx, tw, tb])


@pytest.mark.parametrize("kwargs", [
    {}, {"stride": 2, "padding": 1}, {"padding": "same", "dilation": 2}, {"groups": 2},
    {"stride": (2, 1), "padding": (0, 2)},
])
def test_conv2d(kwargs):
    groups = kwargs.get("groups", 1)
    (gx, tx), (gw, tw), (gb, tb) = pair(2, 4, 7, 6), pair(4, 4 // groups, 3, 2), pair(4)
    check(F.conv2d(gx, gw, gb, **kwargs), TF.conv2d(tx, tw, tb, **kwargs), [gx, gw, gb],
          [tx, tw, tb])


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 2, "ceil_mode": True}, {"kernel_size": 3, "stride": 1, "dilation": 2},
])
def test_max_pool2d(kwargs):
    gx, tx = pair(2, 3, 7, 7)
    check(F.max_pool2d(gx, **kwargs), TF.max_pool2d(tx, **kwargs), [gx], [tx])
    _, g_idx = F.max_pool2d(gx.detach(), return_indices=True, **kwargs)
    _, t_idx = TF.max_pool2d(tx.detach(), return_indices=True, **kwargs)
    np.testing.assert_array_equal(g_idx.numpy(), t_idx.numpy())


def test_embedding_with_padding_idx():
    gw, tw = pair(6, 3)
    idx = np.array([[0, 2, 2], [5, 1, 0]])
    check(F.embedding(gradnb.tensor(idx), gw, padding_idx=2),
          TF.embedding(torch.tensor(idx), tw, padding_idx=2), [gw], [tw])


def test_layer_norm():
    (gx, tx), (gw, tw), (gb, tb) = pair(3, 4, 5), pair(4, 5), pair(4, 5)
    check(F.layer_norm(gx, (4, 5), gw, gb), TF.layer_norm(tx, (4, 5), tw, tb), [gx, gw, gb],
          [tx, tw, tb])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_updates_running_stats_like_torch(training):
    (gx, tx), (gw, tw), (gb, tb) = pair(6, 3, 4), pair(3), pair(3)
    g_mean, g_var = gradnb.zeros(3, dtype=gradnb.float64), gradnb.ones(3, dtype=gradnb.float64)
    t_mean, t_var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    check(F.batch_norm(gx, g_mean, g_var, gw, gb, training, 0.3),
          TF.batch_norm(tx, t_mean, t_var, tw, tb, training, 0.3), [gx, gw, gb], [tx, tw, tb])
    np.testing.assert_allclose(g_mean.numpy(), t_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g_var.numpy(), t_var.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name):
    gx, tx = pair(3, 4, 5)
    for dim in (0, 1, 2):
        gx.grad = tx.grad = None
        check(getattr(F, name)(gx, dim), getattr(TF, name)(tx, dim), [gx], [tx])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    gx, tx = pair(5, 4, scale=3.0)
    check(F.gelu(gx, approximate=approximate), TF.gelu(tx, approximate=approximate), [gx], [tx])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    (gx, tx), (gy, ty) = pair(3, 4), pair(3, 4)
    check(F.mse_loss(gx, gy, reduction=reduction), TF.mse_loss(tx, ty, reduction=reduction),
          [gx, gy], [tx, ty])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted):
    gx, tx = pair(6, 4)
    target = np.array([0, 3, 1, -100, 3, 2])
    weight = np.array([0.5, 2.0, 1.0, 1.5]) if weighted else None
    check(F.nll_loss(gx, gradnb.tensor(target),
                     None if weight is None else gradnb.tensor(weight), reduction=reduction),
          TF.nll_loss(tx, torch.tensor(target), None if weight is None else torch.tensor(weight),
                      reduction=reduction), [gx], [tx])


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 4, 3)])
@pytest.mark.parametrize(("loss", "kwargs"), [
    ("nll_loss", {}), ("nll_loss", {"weighted": True}), ("cross_entropy", {}),
    ("cross_entropy", {"weighted": True}), ("cross_entropy", {"label_smoothing": 0.2}),
    ("cross_entropy", {"weighted": True, "label_smoothing": 0.2}),
])
def test_mean_loss_with_every_target_ignored(shape, loss, kwargs):
    """0 / 0: the loss is NaN, silently, and the input's gradient is exactly zero, as PyTorch."""
    kwargs = dict(kwargs)
    gx, tx = pair(*shape, dtype=np.float32)
    target = np.full(shape[:1] + shape[2:] if len(shape) > 1 else (), 1)
    if kwargs.pop("weighted", False):
        weight = np.array([0.5, 2.0, 1.0, 1.5], dtype=np.float32)
        g_kw, t_kw = {"weight": gradnb.tensor(weight)}, {"weight": torch.tensor(weight)}
    else:
        g_kw, t_kw = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out_g = getattr(F, loss)(gx, gradnb.tensor(target), ignore_index=1, **g_kw, **kwargs)
        out_g.backward()
    out_t = getattr(TF, loss)(tx, torch.tensor(target), ignore_index=1, **t_kw, **kwargs)
    out_t.backward()
    assert np.isnan(out_g.item()) and np.isnan(out_t.item())
    assert out_g.dtype == gradnb.float32
    np.testing.assert_array_equal(gx.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("kwargs", [
    {}, {"label_smoothing": 0.1}, {"reduction": "sum", "label_smoothing": 0.3},
    {"ignore_index": 1, "label_smoothing": 0.2},
])
def test_cross_entropy(kwargs):
    gx, tx = pair(5, 4, 3)
    target = np.random.randint(0, 4, (5, 3))
    check(F.cross_entropy(gx, gradnb.tensor(target), **kwargs),
          TF.cross_entropy(tx, torch.tensor(target), **kwargs), [gx], [tx])


def test_cross_entropy_weighted_with_label_smoothing():
    gx, tx = pair(6, 4)
    target = np.random.randint(0, 4, 6)
    weight = np.array([0.5, 2.0, 1.0, 1.5])
    check(F.cross_entropy(gx, gradnb.tensor(target), gradnb.tensor(weight), label_smoothing=0.2),
          TF.cross_entropy(tx, torch.tensor(target), torch.tensor(weight), label_smoothing=0.2),
          [gx], [tx])


def test_cross_entropy_with_probability_targets():
    gx, tx = pair(5, 4)
    probs = np.random.dirichlet(np.ones(4), size=5)
    out_g = F.cross_entropy(gx, gradnb.tensor(probs), label_smoothing=0.1)
    out_t = TF.cross_entropy(tx, torch.tensor(probs), label_smoothing=0.1)
    np.testing.assert_allclose(out_g.item(), out_t.item(), rtol=1e-12)
    out_g.backward()
    out_t.backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("weights", [False, True])
def test_bce_with_logits(weights):
    (gx, tx), (gy, ty) = pair(4, 3, scale=4.0), pair(4, 3)
    kw_g, kw_t = {}, {}
    if weights:
        w, pw = np.random.rand(3), np.random.rand(3) + 0.5
        kw_g = {"weight": gradnb.tensor(w), "pos_weight": gradnb.tensor(pw)}
        kw_t = {"weight": torch.tensor(w), "pos_weight": torch.tensor(pw)}
    check(F.binary_cross_entropy_with_logits(gx, gy, **kw_g),
          TF.binary_cross_entropy_with_logits(tx, ty, **kw_t), [gx, gy], [tx, ty])


def test_dropout_scales_kept_elements_and_is_off_in_eval():
    x = gradnb.ones(1000, requires_grad=True)
    out = F.dropout(x, 0.25)
    kept = out.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(out.detach().numpy()[kept], 1 / 0.75)
    assert out.grad_fn.name() == "MulBackward0"
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy())
    assert F.dropout(x, 0.25, training=False) is x


# -- numerical stability in float32 ---------------------------------------------------------------
HUGE = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [5e3, 1e4, 1e4]], dtype=np.float32)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family_is_finite_for_huge_logits(name):
    gx = gradnb.tensor(HUGE, requires_grad=True)
    tx = torch.tensor(HUGE, requires_grad=True)
    g_out, t_out = getattr(F, name)(gx, 1), getattr(TF, name)(tx, 1)
    assert g_out.dtype == gradnb.float32
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy())
    g_out.sum().backward()
    t_out.sum().backward()
    assert np.isfinite(gx.grad.numpy()).all()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), atol=1e-6)


def test_cross_entropy_is_finite_for_huge_logits():
    gx = gradnb.tensor(HUGE, requires_grad=True)
    tx = torch.tensor(HUGE, requires_grad=True)
    target = np.array([1, 0, 0])
    g_loss = F.cross_entropy(gx, gradnb.tensor(target))
    t_loss = TF.cross_entropy(tx, torch.tensor(target))
    np.testing.assert_allclose(g_loss.item(), t_loss.item(), rtol=1e-6)
    g_loss.backward()
    t_loss.backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), atol=1e-6)


def test_bce_with_logits_is_finite_for_huge_logits():
    x = np.array([1e4, -1e4, 3e4, -3e4], dtype=np.float32)
    y = np.array([0.0, 1.0, 1.0, 0.0], dtype=np.float32)
    gx = gradnb.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    g_loss = F.binary_cross_entropy_with_logits(gx, gradnb.tensor(y), reduction="none")
    t_loss = TF.binary_cross_entropy_with_logits(tx, torch.tensor(y), reduction="none")
    np.testing.assert_allclose(g_loss.detach().numpy(), t_loss.detach().numpy())
    g_loss.sum().backward()
    t_loss.sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy())


def test_errors_match_torch():
    x = gradnb.randn(3, 4)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(x, gradnb.tensor([0, 1]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.nll_loss(x, gradnb.tensor([0, 7, 1]))
    with pytest.raises(ValueError, match="Target size"):
        F.binary_cross_entropy_with_logits(x, gradnb.zeros(3))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
