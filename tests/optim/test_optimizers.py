"""Optimizers: update rules against PyTorch, API, state_dict, errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn, optim

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True, "maximize": True}),
]


def run(lib, opt_name, kwargs, init, steps=8):
    w = lib.tensor(init.copy(), requires_grad=True)
    b = lib.tensor(np.ones(3), requires_grad=True)
    opt = getattr(lib.optim, opt_name)([{"params": [w]}, {"params": [b], "lr": 0.01}], **kwargs)
    target = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w * b - target) ** 2).sum() + (w ** 4).sum() * 0.1
        loss.backward()
        opt.step()
    return w.detach().numpy(), b.detach().numpy()


@pytest.mark.torch
@pytest.mark.parametrize("opt_name, kwargs", CASES)
def test_update_rules_match_torch(torch, opt_name, kwargs):
    init = np.random.default_rng(0).standard_normal((4, 3))
    ours = run(gradnb, opt_name, kwargs, init)
    theirs = run(torch, opt_name, kwargs, init)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("opt_name, kwargs", CASES)
def test_state_dict_round_trip_continues_identically(opt_name, kwargs):
    init = np.random.default_rng(1).standard_normal((4, 3))

    def make():
        w = gradnb.tensor(init.copy(), requires_grad=True)
        return w, getattr(optim, opt_name)([w], **kwargs)

    def step(w, opt):
        opt.zero_grad()
        ((w - 1) ** 2).sum().backward()
        opt.step()

    w1, o1 = make()
    for _ in range(3):
        step(w1, o1)
    w2, o2 = make()
    w2.data = w1.detach().clone()
    o2.load_state_dict(o1.state_dict())
    for _ in range(3):
        step(w1, o1)
        step(w2, o2)
    np.testing.assert_array_equal(w1.detach().numpy(), w2.detach().numpy())


def test_zero_grad_set_to_none_and_zeros():
    lin = nn.Linear(2, 2)
    opt = optim.SGD(lin.parameters(), lr=0.1)
    lin(gradnb.ones(1, 2)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in lin.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in lin.parameters())


def test_step_bumps_versions_so_stale_graphs_are_detected():
    w = gradnb.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    (w * 3).sum().backward()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_closure_and_skipped_parameters():
    w = gradnb.tensor([1.0], requires_grad=True)
    unused = gradnb.tensor([5.0], requires_grad=True)
    opt = optim.Adam([w, unused], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 1.0
    assert unused.tolist() == [5.0] and w.item() < 1.0


def test_param_groups_and_state_dict_layout():
    a, b = nn.Linear(2, 2), nn.Linear(2, 1)
    opt = optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "lr": 0.5}], lr=0.1,
                    momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    (a(gradnb.ones(1, 2)).sum() + b(gradnb.ones(1, 2)).sum()).backward()
    opt.step()
    state = opt.state_dict()
    assert [g["params"] for g in state["param_groups"]] == [[0, 1], [2, 3]]
    assert sorted(state["state"]) == [0, 1, 2, 3]
    assert "momentum_buffer" in state["state"][0]


def test_errors_match_torch():
    w = gradnb.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable"):
        optim.SGD(w, lr=0.1)
