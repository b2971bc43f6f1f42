"""The Optimizer API beyond the update rules: reprs, constructor errors, flags PyTorch refuses on
CPU, hooks, named parameters, ``add_param_group``, tensor ``lr``."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import optim
from gradnb.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

NAMES = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon",
         "NAdam", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam"]
BAD_ARGUMENTS = [{"lr": -1}, {"lr": -0.5}, {"eps": -1e-3}, {"eps": 0.0}, {"weight_decay": -0.1},
                 {"betas": (1.0, 0.9)}, {"betas": (0.9, -0.1)}, {"momentum": -0.5},
                 {"rho": 1.5}, {"lr_decay": -1}, {"initial_accumulator_value": -1},
                 {"alpha": -1}, {"etas": (1.5, 2.0)}, {"momentum_decay": -1}, {"d": 0.5},
                 {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)}, {"adjust_lr_fn": "nope"},
                 {"nesterov": True, "momentum": 0}, {"fused": True, "foreach": True}]


def _param(lib, name):
    return lib.zeros((2, 3) if name == "Muon" else 3, requires_grad=True)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_repr_matches_torch(torch, name):
    assert repr(getattr(optim, name)([_param(gradnb, name)])) == repr(
        getattr(torch.optim, name)([_param(torch, name)]))


def _outcome(lib, name, kwargs):
    try:
        getattr(lib.optim, name)([_param(lib, name)], **kwargs)
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error).__name__, str(error)
    return None


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_constructor_errors_match_torch(torch, name):
    import inspect

    accepted = inspect.signature(getattr(torch.optim, name)).parameters
    for kwargs in BAD_ARGUMENTS:
        if all(k in accepted for k in kwargs):
            assert _outcome(gradnb, name, kwargs) == _outcome(torch, name, kwargs), kwargs


@pytest.mark.parametrize("name", ["Adadelta", "Adam", "AdamW", "Adamax", "ASGD", "NAdam",
                                  "RAdam", "RMSprop", "Rprop"])
def test_capturable_is_refused_for_cpu_tensors_at_step_as_torch(name):
    w = gradnb.zeros(3, requires_grad=True)
    opt = getattr(optim, name)([w], capturable=True)
    w.sum().backward()
    with pytest.raises(AssertionError, match="If capturable=True, params.* must be on supported "
                                             "devices"):
        opt.step()
    assert w.tolist() == [0.0, 0.0, 0.0]


def test_differentiable_steps_are_refused_with_a_reason():
    with pytest.raises(NotImplementedError, match="optimizer steps are not recorded"):
        optim.Adam([gradnb.zeros(1, requires_grad=True)], differentiable=True)


@pytest.mark.torch
def test_fused_and_foreach_run_the_same_update(torch):
    results = []
    for kwargs in ({}, {"foreach": True}, {"fused": True}, {"foreach": False}):
        w = gradnb.tensor([1.0, -2.0], requires_grad=True)
        opt = optim.Adam([w], lr=0.1, **kwargs)
        for _ in range(3):
            opt.zero_grad()
            (w ** 2).sum().backward()
            opt.step()
        results.append(w.tolist())
    assert all(r == results[0] for r in results)


def test_step_hooks_run_in_order_and_can_replace_arguments():
    w = gradnb.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)
    calls = []

    def closure():
        calls.append("closure")
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre") or ((closure,),
                                                                                     {}))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    global_pre = register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global pre"))
    global_post = register_optimizer_step_post_hook(lambda o, a, k: calls.append("global post"))
    try:
        assert opt.step().item() == 1.0  # the pre hook supplied the closure
    finally:
        global_pre.remove()
        global_post.remove()
    assert calls == ["global pre", "pre", "closure", "post", "global post"]
    pre.remove()
    post.remove()
    calls.clear()
    opt.step()
    assert calls == []


def test_a_pre_hook_returning_something_else_is_an_error():
    opt = optim.SGD([gradnb.zeros(1, requires_grad=True)], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple of"):
        opt.step()


def test_subclass_step_gets_hooks_too():
    class Halve(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.data = p.data / 2

    w = gradnb.ones(2, requires_grad=True)
    opt = Halve([w])
    seen = []
    opt.register_step_post_hook(lambda o, a, k: seen.append(w.tolist()))
    opt.step()
    assert seen == [[0.5, 0.5]]


def test_state_dict_hooks():
    w = gradnb.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    order = []
    opt.register_state_dict_pre_hook(lambda o: order.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(lambda o, sd: order.append("load pre"))
    opt.register_load_state_dict_post_hook(lambda o: order.append("load post"), prepend=True)
    state = opt.state_dict()
    assert state["extra"] == 1
    opt.load_state_dict(state)
    assert order == ["pre", "load pre", "load post"]


@pytest.mark.torch
def test_named_parameters_give_param_names_as_torch(torch):
    ours = optim.Adam(gradnb.nn.Linear(2, 1).named_parameters()).state_dict()["param_groups"]
    theirs = torch.optim.Adam(torch.nn.Linear(2, 1).named_parameters()).state_dict()[
        "param_groups"]
    assert ours == theirs
    with pytest.raises(ValueError, match="all optimizer params should be with/without names"):
        optim.SGD([("w", gradnb.zeros(1, requires_grad=True)), gradnb.zeros(1,
                                                                           requires_grad=True)])


def test_add_param_group_fills_defaults_and_rejects_overlap():
    a, b = gradnb.zeros(1, requires_grad=True), gradnb.zeros(1, requires_grad=True)
    opt = optim.Adam([a], lr=0.01)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([a])
    with pytest.raises(TypeError, match="ordering of tensors in sets will change"):
        opt.add_param_group({"params": {b}})
    assert len(opt.param_groups) == 2


@pytest.mark.torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "NAdam", "RAdam",
                                  "Adamax", "Adadelta", "Rprop"])
def test_tensor_lr_matches_torch(torch, name):
    init = np.array([1.0, -2.0, 0.5])
    out = []
    for lib in (gradnb, torch):
        w = lib.tensor(init.copy(), requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=lib.tensor(0.01))
        for _ in range(3):
            opt.zero_grad()
            (w ** 4).sum().backward()
            opt.step()
        out.append(w.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def test_sparse_gradient_errors_and_dense_gradient_error():
    weight = gradnb.zeros((4, 2), requires_grad=True)
    gradnb.nn.functional.embedding(gradnb.tensor([1, 2]), weight, sparse=True).sum().backward()
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients, please "
                                           "consider SparseAdam instead"):
        optim.Adam([weight]).step()
    with pytest.raises(RuntimeError, match="RMSprop does not support sparse gradients"):
        optim.RMSprop([weight]).step()
    dense = gradnb.zeros(2, requires_grad=True)
    dense.sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        optim.SparseAdam([dense]).step()


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1,
                                                                           "momentum": 0.9}),
                                          ("Adagrad", {"lr": 0.1}), ("SparseAdam", {"lr": 0.1})])
def test_sparse_gradients_match_torch(torch, name, kwargs):
    init = np.random.default_rng(0).standard_normal((6, 3))
    rows = [[1, 4, 1], [0, 1, 5], [2, 2, 2]]
    out = []
    for lib, functional in ((gradnb, gradnb.nn.functional), (torch, torch.nn.functional)):
        w = lib.tensor(init.copy(), requires_grad=True)
        opt = getattr(lib.optim, name)([w], **kwargs)
        for step_rows in rows:
            opt.zero_grad()
            (functional.embedding(lib.tensor(step_rows), w, sparse=True) ** 2).sum().backward()
            opt.step()
        out.append(w.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12, atol=1e-15)


def _signature(callable_):
    import inspect

    return [(name, p.kind, p.default)
            for name, p in inspect.signature(callable_).parameters.items()]


@pytest.mark.torch
def test_every_optimizer_and_scheduler_has_torchs_signature(torch):
    from gradnb.optim import lr_scheduler

    for name in NAMES:
        assert _signature(getattr(optim, name)) == _signature(getattr(torch.optim, name)), name
    for name in lr_scheduler.__all__:
        assert _signature(getattr(lr_scheduler, name)) == _signature(
            getattr(torch.optim.lr_scheduler, name)), name
