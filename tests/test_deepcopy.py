"""copy.deepcopy of tensors, parameters, modules and optimizers, against PyTorch."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import gradnb
from gradnb import nn


def test_leaf_tensor_copy_matches_torch(torch):
    for lib in (gradnb, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = lib.tensor([0.5, 0.5])
        y = copy.deepcopy(x)
        assert y.requires_grad and y.is_leaf and y.grad.tolist() == [0.5, 0.5]
        assert y.grad is not x.grad
        with lib.no_grad():
            y.mul_(10)
            y.grad.zero_()
        assert x.tolist() == [1.0, 2.0] and x.grad.tolist() == [0.5, 0.5]


def test_views_keep_sharing_memory_in_the_copy(torch):
    for lib in (gradnb, torch):
        base = lib.arange(6.0)
        view = base[2:4]
        base2, view2 = copy.deepcopy((base, view))
        view2[0] = 100.0
        assert base2.tolist() == [0.0, 1.0, 100.0, 3.0, 4.0, 5.0]
        assert base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_non_leaf_is_refused_with_torchs_message(torch):
    with pytest.raises(RuntimeError) as theirs:
        copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as ours:
        copy.deepcopy(gradnb.ones(2, requires_grad=True) * 2)
    assert str(ours.value) == str(theirs.value).replace("torch.", "gradnb.")


def test_parameter_copy_matches_torch(torch):
    for lib in (gradnb, torch):
        for requires_grad in (True, False):
            p = lib.nn.Parameter(lib.ones(2), requires_grad=requires_grad)
            if requires_grad:
                p.grad = lib.ones(2)
            q = copy.deepcopy(p)
            assert type(q) is lib.nn.Parameter and q.requires_grad == requires_grad
            assert q.grad is None  # PyTorch does not copy a Parameter's .grad
            with lib.no_grad():
                q.add_(1)
            assert p.tolist() == [1.0, 1.0]


def test_module_copy_is_independent_and_keeps_shared_parameters():
    gradnb.manual_seed(0)
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared, nn.BatchNorm1d(3))
    model.register_buffer("steps", gradnb.tensor(0))
    clone = copy.deepcopy(model)
    assert clone[0] is clone[2] and clone[0] is not shared
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in model.named_parameters()]
    assert all(a is not b for a, b in zip(clone.parameters(), model.parameters()))
    x = gradnb.randn(4, 3)
    np.testing.assert_array_equal(clone(x).detach().numpy(), model(x).detach().numpy())
    with gradnb.no_grad():
        clone[0].weight.fill_(0.0)
    assert model[0].weight.abs().sum().item() > 0
    assert clone[3].running_mean is not model[3].running_mean


def test_keep_the_best_model_loop():
    gradnb.manual_seed(0)
    model = nn.Linear(2, 1)
    opt = gradnb.optim.SGD(model.parameters(), lr=0.1)
    best = None
    for step in range(3):
        loss = model(gradnb.ones(1, 2)).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1:
            best = copy.deepcopy(model.state_dict())
            best_model = copy.deepcopy(model)
    assert not gradnb.equal(best["weight"], model.weight)
    model.load_state_dict(best)
    assert gradnb.equal(model.weight, best_model.weight)


def test_optimizer_copied_with_its_model_steps_the_copy():
    gradnb.manual_seed(0)
    model = nn.Linear(2, 1)
    opt = gradnb.optim.Adam(model.parameters(), lr=0.1)
    model(gradnb.ones(1, 2)).sum().backward()
    opt.step()
    model2, opt2 = copy.deepcopy((model, opt))
    assert opt2.param_groups[0]["params"][0] is model2.weight
    state = opt2.state[model2.weight]
    assert state["exp_avg"] is not opt.state[model.weight]["exp_avg"]
    np.testing.assert_array_equal(state["exp_avg"].numpy(),
                                  opt.state[model.weight]["exp_avg"].numpy())
    before = model.weight.detach().clone()
    model2(gradnb.ones(1, 2)).sum().backward()
    opt2.step()
    assert gradnb.equal(model.weight, before)
    assert not gradnb.equal(model2.weight, before)


def test_pickling_stays_refused():
    for obj in (gradnb.ones(2), nn.Parameter(gradnb.ones(2)), nn.Linear(2, 2)):
        with pytest.raises(TypeError, match="not pickled"):
            pickle.dumps(obj)
