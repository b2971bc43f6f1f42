"""The composed ops of nn.functional (activations, losses, norms, pools, padding,
interpolation, convolutions, attention) against PyTorch, and gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F
from gradnb.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _arrays(shapes, positive=()):
    rng = np.random.default_rng(0)
    out = []
    for i, shape in enumerate(shapes):
        a = rng.standard_normal(shape)
        if i in positive:
            a = rng.uniform(0.05, 0.95, shape)
        out.append(a)
    return out


def _compare(g_fn, t_fn, shapes, positive=(), rtol=1e-7, atol=1e-9):
    arrays = _arrays(shapes, positive)
    g_in = [gradnb.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    g_out, t_out = g_fn(*g_in), t_fn(*t_in)
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol,
                               atol=atol)
    seed = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
    (g_out * gradnb.tensor(seed)).sum().backward()
    (t_out * torch.tensor(seed)).sum().backward()
    for g, t in zip(g_in, t_in):
        expected = np.zeros(tuple(t.shape)) if t.grad is None else t.grad.numpy()
        np.testing.assert_allclose(g.grad.numpy(), expected, rtol=rtol, atol=atol)


X = [(3, 4, 5)]
CASES = {
    "silu": (F.silu, TF.silu, X),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2), X),
    "elu": (lambda x: F.elu(x * 30, 0.7), lambda x: TF.elu(x * 30, 0.7), X),
    "selu": (F.selu, TF.selu, X),
    "celu": (lambda x: F.celu(x, 1.5), lambda x: TF.celu(x, 1.5), X),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: TF.gelu(x, approximate="tanh"), X),
    "mish": (F.mish, TF.mish, X),
    "softplus": (lambda x: F.softplus(x * 20, 2, 5), lambda x: TF.softplus(x * 20, 2, 5), X),
    "softsign": (F.softsign, TF.softsign, X),
    "hardtanh": (lambda x: F.hardtanh(x * 3), lambda x: TF.hardtanh(x * 3), X),
    "relu6": (lambda x: F.relu6(x * 8), lambda x: TF.relu6(x * 8), X),
    "hardswish": (lambda x: F.hardswish(x * 4), lambda x: TF.hardswish(x * 4), X),
    "hardsigmoid": (lambda x: F.hardsigmoid(x * 4), lambda x: TF.hardsigmoid(x * 4), X),
    "prelu": (F.prelu, TF.prelu, [(3, 4, 5), (4,)]),
    "tanhshrink": (F.tanhshrink, TF.tanhshrink, X),
    "threshold": (lambda x: F.threshold(x, 0.1, -2.0), lambda x: TF.threshold(x, 0.1, -2.0), X),
    "logsigmoid": (lambda x: F.logsigmoid(x * 50), lambda x: TF.logsigmoid(x * 50), X),
    "softmin": (lambda x: F.softmin(x, 1), lambda x: TF.softmin(x, 1), X),
    "glu": (F.glu, TF.glu, [(3, 4, 6)]),
    "hardshrink": (F.hardshrink, TF.hardshrink, X),
    "softshrink": (F.softshrink, TF.softshrink, X),
    "l1_loss": (F.l1_loss, TF.l1_loss, [(3, 4), (3, 4)]),
    "smooth_l1_loss": (lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
                       lambda a, b: TF.smooth_l1_loss(a, b, beta=0.5), [(3, 4), (3, 4)]),
    "huber_loss": (lambda a, b: F.huber_loss(a, b, delta=0.7, reduction="sum"),
                   lambda a, b: TF.huber_loss(a, b, delta=0.7, reduction="sum"),
                   [(3, 4), (3, 4)]),
    "kl_div": (lambda a, b: F.kl_div(a, b, reduction="batchmean"),
               lambda a, b: TF.kl_div(a, b, reduction="batchmean"), [(3, 4), (3, 4)], (1,)),
    "binary_cross_entropy": (F.binary_cross_entropy, TF.binary_cross_entropy,
                             [(3, 4), (3, 4)], (0, 1)),
    "rms_norm": (lambda x, w: F.rms_norm(x, (5,), w), lambda x, w: TF.rms_norm(x, (5,), w),
                 [(3, 4, 5), (5,)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b),
                   lambda x, w, b: TF.group_norm(x, 2, w, b), [(2, 4, 3, 3), (4,), (4,)]),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
                      lambda x, w, b: TF.instance_norm(x, weight=w, bias=b),
                      [(2, 3, 5), (3,), (3,)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, True, False),
                   lambda x: TF.avg_pool2d(x, 3, 2, 1, True, False), [(2, 3, 7, 6)]),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 2), lambda x: TF.avg_pool1d(x, 2), [(2, 3, 7)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
                            lambda x: TF.adaptive_avg_pool2d(x, (3, 2)), [(2, 3, 7, 5)]),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (3, 2)),
                            lambda x: TF.adaptive_max_pool2d(x, (3, 2)), [(2, 3, 7, 5)]),
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, 1), lambda x: TF.max_pool1d(x, 3, 2, 1),
                   [(2, 3, 8)]),
    "pad_constant": (lambda x: F.pad(x, (1, 2, -1, 3), value=0.5),
                     lambda x: TF.pad(x, (1, 2, -1, 3), value=0.5), [(2, 3, 4)]),
    "pad_reflect": (lambda x: F.pad(x, (2, 1, 1, 3), "reflect"),
                    lambda x: TF.pad(x, (2, 1, 1, 3), "reflect"), [(2, 3, 4, 5)]),
    "pad_replicate": (lambda x: F.pad(x, (2, 1, 1, 3), "replicate"),
                      lambda x: TF.pad(x, (2, 1, 1, 3), "replicate"), [(2, 3, 4, 5)]),
    "pad_circular": (lambda x: F.pad(x, (2, 1), "circular"),
                     lambda x: TF.pad(x, (2, 1), "circular"), [(2, 3, 4)]),
    "interpolate_nearest": (lambda x: F.interpolate(x, scale_factor=1.7),
                            lambda x: TF.interpolate(x, scale_factor=1.7), [(1, 2, 4, 5)]),
    "interpolate_nearest_exact": (lambda x: F.interpolate(x, size=(7, 3), mode="nearest-exact"),
                                  lambda x: TF.interpolate(x, size=(7, 3), mode="nearest-exact"),
                                  [(1, 2, 4, 5)]),
    "interpolate_linear": (lambda x: F.interpolate(x, size=9, mode="linear"),
                           lambda x: TF.interpolate(x, size=9, mode="linear"), [(1, 2, 4)]),
    "interpolate_bilinear": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        lambda x: TF.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        [(1, 2, 4, 5)]),
    "interpolate_bilinear_down": (
        lambda x: F.interpolate(x, size=(3, 2), mode="bilinear"),
        lambda x: TF.interpolate(x, size=(3, 2), mode="bilinear"), [(1, 2, 7, 5)]),
    "interpolate_bicubic": (lambda x: F.interpolate(x, size=(6, 7), mode="bicubic"),
                            lambda x: TF.interpolate(x, size=(6, 7), mode="bicubic"),
                            [(1, 2, 4, 5)]),
    "interpolate_area": (lambda x: F.interpolate(x, size=(3, 2), mode="area"),
                         lambda x: TF.interpolate(x, size=(3, 2), mode="area"), [(1, 2, 7, 5)]),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2),
                      [(2, 8, 3, 2)]),
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, 2, 1, 2),
               lambda x, w, b: TF.conv1d(x, w, b, 2, 1, 2), [(2, 4, 9), (3, 4, 3), (3,)]),
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, (2, 1, 1), 1),
               lambda x, w, b: TF.conv3d(x, w, b, (2, 1, 1), 1),
               [(2, 2, 5, 4, 4), (3, 2, 2, 3, 2), (3,)]),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, 3, 1, 1),
                         lambda x, w, b: TF.conv_transpose1d(x, w, b, 3, 1, 1),
                         [(2, 4, 5), (4, 3, 3), (3,)]),
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 2, 2),
        lambda x, w, b: TF.conv_transpose2d(x, w, b, 2, 1, 1, 2, 2),
        [(2, 4, 3, 4), (4, 1, 3, 2), (2,)]),
    "conv_transpose3d": (lambda x, w: F.conv_transpose3d(x, w, None, 2),
                         lambda x, w: TF.conv_transpose3d(x, w, None, 2),
                         [(1, 2, 2, 3, 2), (2, 3, 2, 2, 2)]),
    "bilinear": (F.bilinear, TF.bilinear, [(3, 4), (3, 5), (2, 4, 5), (2,)]),
    "cosine_similarity": (F.cosine_similarity, TF.cosine_similarity, [(3, 4), (3, 4)]),
    "pairwise_distance": (F.pairwise_distance, TF.pairwise_distance, [(3, 4), (3, 4)]),
    "normalize": (lambda x: F.normalize(x, dim=-1), lambda x: TF.normalize(x, dim=-1),
                  [(3, 4)]),
    "unfold": (lambda x: F.unfold(x, (2, 3), (2, 1), (1, 2), (2, 3)),
               lambda x: TF.unfold(x, (2, 3), (2, 1), (1, 2), (2, 3)), [(2, 3, 7, 6)]),
    "fold": (lambda x: F.fold(x, (7, 6), (2, 3), (2, 1), (1, 2), (2, 3)),
             lambda x: TF.fold(x, (7, 6), (2, 3), (2, 1), (1, 2), (2, 3)), [(2, 18, 12)]),
    "sdpa": (F.scaled_dot_product_attention, TF.scaled_dot_product_attention,
             [(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)]),
    "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True),
                    [(2, 5, 4), (2, 5, 4), (2, 5, 4)]),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    g_fn, t_fn, shapes, *positive = CASES[name]
    _compare(g_fn, t_fn, shapes, positive[0] if positive else ())


GRADCHECK = ["elu", "softplus", "mish", "kl_div", "binary_cross_entropy", "rms_norm",
             "group_norm", "instance_norm", "avg_pool2d", "pad_reflect", "interpolate_bicubic",
             "conv_transpose1d", "bilinear", "cosine_similarity", "sdpa_causal", "unfold",
             "fold"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck(name):
    g_fn, _, shapes, *positive = CASES[name]
    inputs = [gradnb.tensor(a, requires_grad=True)
              for a in _arrays(shapes, positive[0] if positive else ())]
    assert gradcheck(g_fn, tuple(inputs))


@pytest.mark.parametrize("name", ["silu", "softplus", "rms_norm", "interpolate_bilinear",
                                  "sdpa"])
def test_gradgradcheck(name):
    g_fn, _, shapes, *positive = CASES[name]
    inputs = [gradnb.tensor(a, requires_grad=True)
              for a in _arrays(shapes, positive[0] if positive else ())]
    assert gradgradcheck(g_fn, tuple(inputs))


def test_one_hot_and_embedding_of_a_scalar_index():
    out = F.one_hot(gradnb.tensor([0, 2, 1]), 4)
    assert out.dtype == gradnb.int64
    assert out.tolist() == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0]]
    assert F.one_hot(gradnb.tensor([[1], [3]])).shape == (2, 1, 4)
    row = F.embedding(gradnb.tensor(2), gradnb.arange(12.0).reshape(4, 3))
    assert row.tolist() == [6.0, 7.0, 8.0]


def test_relu_in_place():
    x = gradnb.tensor([-1.0, 2.0])
    assert F.relu_(x) is x
    assert x.tolist() == [0.0, 2.0]


def test_batch_norm_of_an_empty_batch_keeps_running_stats():
    mean, var = gradnb.zeros(3), gradnb.ones(3)
    x = gradnb.zeros(0, 3, requires_grad=True)
    out = F.batch_norm(x, mean, var, training=True)
    assert out.shape == (0, 3)
    assert mean.tolist() == [0.0] * 3 and var.tolist() == [1.0] * 3


def test_dropout_and_label_smoothing_of_a_0d_tensor():
    x = gradnb.tensor(3.0, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.backward()
    assert y.item() in (0.0, 6.0) and x.grad.item() == y.item() / 3
    logits = np.random.default_rng(0).standard_normal(5)
    got = F.cross_entropy(gradnb.tensor(logits), gradnb.tensor(2), label_smoothing=0.1)
    want = TF.cross_entropy(torch.tensor(logits), torch.tensor(2), label_smoothing=0.1)
    assert np.isclose(got.item(), want.item())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_through_log_softmax(reduction):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((12, 2, 5))
    targets = np.array([[1, 2, 2, 0], [3, 1, 4, 4]])
    in_lens, tgt_lens = [12, 9], [3, 4]
    g_x = gradnb.tensor(logits, requires_grad=True)
    t_x = torch.tensor(logits, requires_grad=True)
    g = F.ctc_loss(F.log_softmax(g_x, 2), gradnb.tensor(targets), in_lens, tgt_lens,
                   reduction=reduction)
    t = TF.ctc_loss(TF.log_softmax(t_x, 2), torch.tensor(targets), in_lens, tgt_lens,
                    reduction=reduction)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-9)
    g.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(g_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-7, atol=1e-10)


def test_ctc_loss_gradcheck_through_log_softmax():
    logits = gradnb.randn(6, 1, 4, dtype=gradnb.float64, requires_grad=True)
    targets = gradnb.tensor([[1, 3]])

    def loss(x):
        return F.ctc_loss(F.log_softmax(x, 2), targets, [6], [2])

    assert gradcheck(loss, (logits,))
