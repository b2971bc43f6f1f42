"""A derivative rule writes its result into the gradient it was given only when the backward pass
gave that gradient to it alone (``graph.donated``); every other holder of the same array (a second
consumer, a hook, ``retain_grad``, the user's own ``gradient=``) keeps the values it had."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb._core import graph
from gradnb.autograd import engine
from gradnb.ops import arithmetic, elementwise

compiled = pytest.mark.skipif(engine._loop is None,
                              reason="only the compiled backward loop donates gradients")


def _answers_of_donated(monkeypatch, module) -> list[bool]:
    """What ``donated`` answers the rules of ``module``, call by call."""
    answers: list[bool] = []

    def spy(g):
        answer = graph.donated(g)
        answers.append(answer)
        return answer

    monkeypatch.setattr(module, "donated", spy)
    return answers


@pytest.fixture
def donations(monkeypatch):
    """What ``donated`` answered to ReLU's backward, call by call."""
    return _answers_of_donated(monkeypatch, elementwise)


def _inputs(seed=0, shape=(6, 7)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32)


@compiled
def test_relu_writes_into_a_gradient_only_it_holds(donations):
    a = _inputs()
    x = gradnb.tensor(a, requires_grad=True)
    (gradnb.relu(x * 2) * 3).sum().backward()
    assert donations == [True]
    np.testing.assert_array_equal(x.grad.numpy(), np.where(a * 2 > 0, 6, 0).astype(np.float32))


def test_a_gradient_sent_to_two_rules_reaches_both_unchanged(donations):
    # ``AddBackward0`` sends one array to both ReLUs: the first to run may not zero it for the
    # second (which then holds it alone, and may).
    a, b = _inputs(1), _inputs(2)
    x = gradnb.tensor(a, requires_grad=True)
    y = gradnb.tensor(b, requires_grad=True)
    ((gradnb.relu(x) + gradnb.relu(y)) * 5).sum().backward()
    assert donations[0] is False
    np.testing.assert_array_equal(x.grad.numpy(), np.where(a > 0, 5, 0).astype(np.float32))
    np.testing.assert_array_equal(y.grad.numpy(), np.where(b > 0, 5, 0).astype(np.float32))


def test_a_retained_gradient_keeps_its_values(donations):
    a = _inputs(3)
    x = gradnb.tensor(a, requires_grad=True)
    z = x * 2
    r = gradnb.relu(z)
    out = r * 3
    r.retain_grad()
    out.sum().backward()
    assert not any(donations)
    np.testing.assert_array_equal(r.grad.numpy(), np.full(a.shape, 3, np.float32))


def test_a_gradient_a_hook_kept_keeps_its_values(donations):
    a = _inputs(4)
    x = gradnb.tensor(a, requires_grad=True)
    r = gradnb.relu(x * 2)
    out = r * 3
    kept = []
    out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs[0]))
    out.sum().backward()
    assert not any(donations)
    np.testing.assert_array_equal(kept[0].numpy(), np.full(a.shape, 3, np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(a > 0, 6, 0).astype(np.float32))


def test_the_callers_own_gradient_keeps_its_values(donations):
    a = _inputs(5)
    x = gradnb.tensor(a, requires_grad=True)
    seed = gradnb.ones(a.shape)
    gradnb.relu(x).backward(seed)
    assert donations == [False]
    np.testing.assert_array_equal(seed.numpy(), np.ones(a.shape, np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), (a > 0).astype(np.float32))


def test_a_read_only_or_borrowed_gradient_is_not_donated(donations):
    # ``sum``'s gradient is a broadcast view of one number: not the rule's to write.
    a = _inputs(6)
    x = gradnb.tensor(a, requires_grad=True)
    gradnb.relu(x).sum().backward()
    assert donations == [False]
    np.testing.assert_array_equal(x.grad.numpy(), (a > 0).astype(np.float32))


def test_the_donation_ends_with_the_rule():
    x = gradnb.tensor(_inputs(7), requires_grad=True)
    (gradnb.relu(x * 2) * 3).sum().backward()
    assert graph._donation == [None]


@compiled
def test_a_rule_that_fails_leaves_no_donation_behind(monkeypatch):
    def fail(self, g):
        raise ValueError("rule failed")

    monkeypatch.setattr(elementwise.ReluBackward0, "backward", fail)
    x = gradnb.tensor(_inputs(8), requires_grad=True)
    with pytest.raises(ValueError, match="rule failed"):
        (gradnb.relu(x * 2) * 3).sum().backward()
    assert graph._donation == [None]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_donated_relu_gradient_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    a = _inputs(9, (16, 33)).astype(dtype)
    a[0, :4] = [0.0, -0.0, np.inf, -np.inf]
    x = gradnb.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    w = _inputs(10, (16, 33)).astype(dtype)
    (gradnb.relu(x * 2) * gradnb.tensor(w)).sum().backward()
    (torch.relu(xt * 2) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.fixture
def product_donations(monkeypatch):
    """What ``donated`` answered to MulBackward0, call by call."""
    return _answers_of_donated(monkeypatch, arithmetic)


@compiled
@pytest.mark.parametrize("factor", ["number", "mask", "0-d"])
def test_a_product_by_a_constant_writes_into_its_gradient(factor, product_donations):
    """``x * 0.5``, dropout's ``x * mask`` and ``x * c`` of a 0-d constant give the same
    gradient as torch, computed in the gradient the pass gave the product alone."""
    torch = pytest.importorskip("torch")
    a, w = _inputs(11, (64, 80)), _inputs(12, (64, 80))
    mask = (_inputs(13, (64, 80)) > 0).astype(np.float32) * 2
    constant = {"number": 0.5, "mask": mask, "0-d": np.float32(1.5)}[factor]

    def grad_of(lib, wrap):
        x = lib.tensor(a, requires_grad=True)
        c = constant if factor == "number" else wrap(np.asarray(constant))
        ((x * c) * wrap(w)).sum().backward()
        return x.grad.numpy()

    mine = grad_of(gradnb, gradnb.tensor)
    # (the outer product's gradient is ``sum``'s read-only broadcast: not donated)
    assert product_donations == [False, True]
    np.testing.assert_array_equal(mine, grad_of(torch, torch.tensor))


def test_a_product_whose_factors_both_need_gradients_reads_its_gradient_twice(
        product_donations):
    a, b = _inputs(14, (64, 80)), _inputs(15, (64, 80))
    x = gradnb.tensor(a, requires_grad=True)
    y = gradnb.tensor(b, requires_grad=True)
    ((x * y).tanh() * 3.0).sum().backward()
    assert not any(product_donations)
    g = 3.0 * (1 - np.tanh(a * b) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), g * b, rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), g * a, rtol=1e-6)


def test_small_gradients_skip_the_check(product_donations):
    x = gradnb.tensor(_inputs(16, (4, 5)), requires_grad=True)
    ((x * 0.5).tanh() * 2.0).sum().backward()
    assert product_donations == []


def test_a_product_with_a_constant_of_another_dtype_is_not_written_into_its_gradient(
        product_donations):
    # float64 times a float32 0-d constant: the product is not computed in ``g``'s place
    a = _inputs(17, (64, 80)).astype(np.float64)
    x = gradnb.tensor(a, requires_grad=True)
    c = gradnb.tensor(np.float32(0.5))
    ((x * c).tanh() * 2.0).sum().backward()
    assert not any(product_donations)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * (1 - np.tanh(a * 0.5) ** 2) * 0.5,
                               rtol=1e-12)
