"""The fast paths of an MLP training step (``nll_loss`` on ``(N, C)`` inputs without class
weights, ...) give PyTorch's numbers and keep the general path's behaviour: errors, ignored
targets, gradients of gradients."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F
from gradnb.autograd import gradcheck, gradgradcheck


def _logits(n, c, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal((n, c)).astype(dtype)


def _targets(n, c, seed=1):
    return np.random.default_rng(seed).integers(0, c, n)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("n", [1, 16, 300])
def test_cross_entropy_fast_path_matches_torch(torch, reduction, n):
    x, t = _logits(n, 10), _targets(n, 10)
    ours = gradnb.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    loss = F.cross_entropy(ours, gradnb.tensor(t), reduction=reduction)
    expected = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), reduction=reduction)
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert loss.grad_fn.name() == "NllLossBackward0"


def test_nll_loss_gradient_zeros_are_positive_as_in_torch(torch):
    # PyTorch writes -w * g at the targets of a zero tensor: the other entries are +0.0.
    x, t = _logits(4, 3), _targets(4, 3)
    ours = gradnb.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    F.nll_loss(ours, gradnb.tensor(t)).backward()
    torch.nn.functional.nll_loss(theirs, torch.tensor(t)).backward()
    assert np.array_equal(np.signbit(ours.grad.numpy()), np.signbit(theirs.grad.numpy()))


@pytest.mark.parametrize("ignore_index", [2, -100])
def test_nll_loss_ignored_targets_still_take_the_general_path(torch, ignore_index):
    x = _logits(6, 4)
    t = np.array([0, 2, 1, 2, 3, 0])
    ours = gradnb.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    loss = F.nll_loss(ours, gradnb.tensor(t), ignore_index=ignore_index)
    expected = torch.nn.functional.nll_loss(theirs, torch.tensor(t), ignore_index=ignore_index)
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("bad", [5, -1])
def test_nll_loss_out_of_bounds_target_raises(bad):
    x = gradnb.tensor(_logits(3, 5), requires_grad=True)
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        F.nll_loss(x, gradnb.tensor(np.array([0, bad, 1])))


def test_cross_entropy_fast_path_gradgradcheck():
    x = gradnb.tensor(_logits(5, 4, np.float64), requires_grad=True)
    t = gradnb.tensor(_targets(5, 4))
    for reduction in ("mean", "sum"):
        def loss(x, reduction=reduction):
            return F.cross_entropy(x, t, reduction=reduction)
        assert gradcheck(loss, (x,))
        assert gradgradcheck(loss, (x,))


def test_plain_sgd_step_matches_torch_and_leaves_grad_alone(torch):
    w0 = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    ours = gradnb.nn.Parameter(gradnb.tensor(w0))
    theirs = torch.nn.Parameter(torch.tensor(w0))
    opt_ours = gradnb.optim.SGD([ours], lr=0.1)
    opt_theirs = torch.optim.SGD([theirs], lr=0.1)
    for _ in range(3):
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        (ours * ours).sum().backward()
        (theirs * theirs).sum().backward()
        grad_before = ours.grad.numpy().copy()
        opt_ours.step()
        opt_theirs.step()
        np.testing.assert_array_equal(ours.grad.numpy(), grad_before)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


def test_plain_sgd_step_is_seen_by_graphs_that_saved_the_parameter():
    w = gradnb.nn.Parameter(gradnb.tensor([1.0, 2.0]))
    opt = gradnb.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    saved_by = (w * w).sum()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved_by.backward()


def test_nll_loss_negative_ignore_index_present_in_targets(torch):
    # A target equal to a negative ignore_index fails the fast path's unsigned bounds check and
    # is ignored by the general path, as in PyTorch.
    x = _logits(5, 3)
    t = np.array([0, -1, 2, -1, 1])
    ours = gradnb.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    loss = F.cross_entropy(ours, gradnb.tensor(t), ignore_index=-1)
    expected = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), ignore_index=-1)
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("ignore_index", [-100, 1])  # the fast path, and the general one
def test_nll_loss_saves_the_targets_as_pytorch_does(ignore_index):
    # PyTorch saves the target tensor itself (``_saved_target``): writing into it before
    # backward raises its in-place error rather than silently changing the gradient.
    ours = gradnb.tensor(_logits(4, 3), requires_grad=True)
    target = gradnb.tensor(np.array([0, 2, 1, 2]))
    loss = F.nll_loss(ours, target, ignore_index=ignore_index)
    assert loss.grad_fn._saved_target is target
    target.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
