"""gradcheck (float64) for every fused op of nn.functional, and gradgradcheck where the rule is
written in tensor-capable math."""

from __future__ import annotations

import pytest

import gradnb
import gradnb.nn.functional as F
from gradnb.autograd import gradcheck, gradgradcheck


def rand(*shape, requires_grad=True):
    return gradnb.randn(*shape, dtype=gradnb.float64, requires_grad=requires_grad)


def labels(*shape, high):
    return gradnb.randint(0, high, shape)


def test_linear():
    x, w, b = rand(3, 4), rand(2, 4), rand(2)
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (x, w, b))
    assert gradcheck(F.linear, (rand(2, 3, 4), w, b))
    assert gradcheck(lambda x, w: F.linear(x, w), (x, w))


@pytest.mark.parametrize("bias_shape", [(2,), (1,), (), (1, 2), (3, 2)])
def test_linear_bias_of_any_broadcastable_shape(bias_shape):
    """The rule sums a vector bias's gradient itself and leaves other shapes to the engine;
    both ways hold to second order."""
    x, w, b = rand(3, 4), rand(2, 4), rand(*bias_shape)
    assert F.linear(x, w, b).grad_fn.name() == "AddmmBackward0"
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (x, w, b))
    assert gradcheck(lambda b: F.linear(x.detach(), w.detach(), b), (b,))


@pytest.mark.parametrize("kwargs", [
    {},
    {"stride": 2, "padding": 1},
    {"padding": "same", "dilation": 2},
    {"groups": 2},
])
def test_conv2d(kwargs):
    x = rand(2, 4, 6, 5)
    w = rand(3 * (2 if kwargs.get("groups") else 1), 4 // kwargs.get("groups", 1), 3, 2)
    b = rand(w.shape[0])
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))


def test_conv2d_without_bias_and_unbatched():
    assert gradcheck(lambda x, w: F.conv2d(x, w), (rand(2, 5, 5), rand(3, 2, 2, 2)))


@pytest.mark.parametrize("kwargs", [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 1, "padding": 1},
    {"kernel_size": 2, "stride": 2, "ceil_mode": True},
    {"kernel_size": 2, "dilation": 2},
])
def test_max_pool2d(kwargs):
    assert gradcheck(lambda x: F.max_pool2d(x, **kwargs), (rand(2, 3, 5, 5),))


def test_embedding_dense():
    idx = gradnb.tensor([[0, 2, 2], [4, 1, 0]])
    assert gradcheck(lambda w: F.embedding(idx, w), (rand(5, 3),))


def test_layer_norm():
    x, w, b = rand(3, 2, 4), rand(2, 4), rand(2, 4)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (2, 4), w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (2, 4), w, b), (x, w, b))
    assert gradcheck(lambda x: F.layer_norm(x, (4,)), (x,))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training):
    x, w, b = rand(5, 3, 2), rand(3), rand(3)
    mean = gradnb.randn(3, dtype=gradnb.float64)
    var = gradnb.rand(3, dtype=gradnb.float64) + 0.5

    def fn(x, w, b):
        return F.batch_norm(x, mean.clone(), var.clone(), w, b, training=training)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("op", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(op, dim):
    x = rand(3, 4, 2)
    assert gradcheck(lambda x: op(x, dim), (x,))
    assert gradgradcheck(lambda x: op(x, dim), (x,))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    x = rand(4, 3)
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))
    assert gradgradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))


def test_dropout_with_a_fixed_mask():
    def fn(x):
        gradnb.manual_seed(3)
        return F.dropout(x, 0.4)

    assert gradcheck(fn, (rand(5, 4),))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    x, y = rand(3, 4), rand(3, 4)
    assert gradcheck(lambda x, y: F.mse_loss(x, y, reduction=reduction), (x, y))
    assert gradgradcheck(lambda x, y: F.mse_loss(x, y, reduction=reduction), (x, y))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    x = rand(5, 4)
    target = gradnb.tensor([0, 3, -100, 1, 3])
    weight = gradnb.rand(4, dtype=gradnb.float64) + 0.5

    def fn(x):
        return F.nll_loss(x, target, weight, reduction=reduction)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_nll_loss_spatial_and_unbatched():
    target = labels(2, 3, 2, high=4)
    assert gradcheck(lambda x: F.nll_loss(x, target), (rand(2, 4, 3, 2),))
    assert gradcheck(lambda x: F.nll_loss(x, gradnb.tensor(2)), (rand(4),))


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.2}, {"reduction": "sum"}])
def test_cross_entropy(kwargs):
    x = rand(4, 5)
    target = labels(4, high=5)
    assert gradcheck(lambda x: F.cross_entropy(x, target, **kwargs), (x,))
    assert gradgradcheck(lambda x: F.cross_entropy(x, target, **kwargs), (x,))


def test_cross_entropy_with_probabilities():
    x = rand(4, 5)
    probs = F.softmax(gradnb.randn(4, 5, dtype=gradnb.float64), 1)
    assert gradcheck(lambda x: F.cross_entropy(x, probs, label_smoothing=0.1), (x,))


@pytest.mark.parametrize("with_weights", [False, True])
def test_bce_with_logits(with_weights):
    x, y = rand(3, 4), gradnb.rand(3, 4, dtype=gradnb.float64, requires_grad=True)
    kwargs = {}
    if with_weights:
        kwargs = {"weight": gradnb.rand(4, dtype=gradnb.float64),
                  "pos_weight": gradnb.rand(4, dtype=gradnb.float64) + 0.5}

    def fn(x, y):
        return F.binary_cross_entropy_with_logits(x, y, **kwargs)

    assert gradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y))
