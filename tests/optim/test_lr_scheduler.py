"""Learning-rate schedulers: the same lr (and momentum) sequences as PyTorch's, the same
``state_dict``, a round trip through it, and no warning in normal use."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb
from gradnb.optim import lr_scheduler

STEPS = 12


def _constant_then_exponential(lib, opt):
    sched = lib.optim.lr_scheduler
    return sched.SequentialLR(opt, [sched.ConstantLR(opt, factor=0.5, total_iters=2),
                                    sched.ExponentialLR(opt, gamma=0.9)], milestones=[3])


def _chained(lib, opt):
    sched = lib.optim.lr_scheduler
    return sched.ChainedScheduler([sched.ConstantLR(opt, factor=0.5, total_iters=4),
                                   sched.ExponentialLR(opt, gamma=0.9)])


SCHEDULERS = {
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda epoch: 0.95 ** epoch),
    "LambdaLR-per-group": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.9),
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.3),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=5, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=2,
                                                    step_size_down=3, mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                  mode="exp_range", gamma=0.9),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=0.2, total_steps=STEPS),
    "OneCycleLR-three_phase-linear": lambda s, o: s.OneCycleLR(
        o, max_lr=[0.2, 0.3], epochs=3, steps_per_epoch=4, three_phase=True,
        anneal_strategy="linear"),
    "SequentialLR": lambda s, o: _constant_then_exponential(_lib_of(s), o),
    "ChainedScheduler": lambda s, o: _chained(_lib_of(s), o),
    "ReduceLROnPlateau": lambda s, o: s.ReduceLROnPlateau(o, factor=0.5, patience=1,
                                                          cooldown=1, min_lr=0.002),
}
METRICS = [1.0, 0.9, 0.95, 0.97, 0.99, 0.8, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9]


def _lib_of(sched_module):
    return gradnb if sched_module is lr_scheduler else __import__("torch")


def _run(lib, name: str, optimizer: str, steps: int = STEPS, state_dict=None, start: int = 0):
    """The lr, momentum and get_last_lr() after every step, and the final state_dicts of the
    scheduler and the optimizer (``state_dict`` resumes both: chainable schedules keep their
    lr in the optimizer's groups)."""
    w = lib.zeros(3, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    if optimizer == "SGD":
        opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)
    else:
        opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1)
    sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
    if state_dict is not None:
        sched.load_state_dict(state_dict[0])
        opt.load_state_dict(state_dict[1])
    seen = []
    for i in range(start, start + steps):
        (w.sum() + b.sum()).backward()
        opt.step()
        opt.zero_grad()
        if name == "ReduceLROnPlateau":
            sched.step(METRICS[i])
        else:
            sched.step()
        momenta = [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups]
        seen.append(([float(lr) for lr in sched.get_last_lr()],
                     [float(g["lr"]) for g in opt.param_groups], momenta))
    return seen, (sched.state_dict(), opt.state_dict())


def _comparable(state: dict) -> dict:
    """The state_dict entries that are data (callables and nested states aside)."""
    return {k: v for k, v in state.items()
            if not callable(v) and k not in ("_schedulers", "lr_lambdas", "_scale_fn_custom")}


@pytest.mark.torch
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_sequence_and_state_dict_match_torch(torch, name, optimizer):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # normal use is warning-free, as in PyTorch
        ours, (our_state, _) = _run(gradnb, name, optimizer)
    theirs, (their_state, _) = _run(torch, name, optimizer)
    np.testing.assert_allclose(np.array([x[0] + x[1] + x[2] for x in ours]),
                               np.array([x[0] + x[1] + x[2] for x in theirs]), rtol=1e-12)
    assert sorted(our_state) == sorted(their_state)
    for key, value in _comparable(their_state).items():
        assert our_state[key] == value, key


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_state_dict_round_trip_continues_the_sequence(name):
    whole, _ = _run(gradnb, name, "SGD")
    first, state = _run(gradnb, name, "SGD", steps=5)
    rest, _ = _run(gradnb, name, "SGD", steps=STEPS - 5, state_dict=state, start=5)
    assert first + rest == whole


def test_scheduler_stepped_before_optimizer_warns_as_torch():
    opt = gradnb.optim.SGD([gradnb.zeros(1, requires_grad=True)], lr=0.1)
    sched = lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                         r"`optimizer.step\(\)`"):
        sched.step()


def test_get_lr_outside_step_warns_and_epoch_argument_is_deprecated():
    opt = gradnb.optim.SGD([gradnb.zeros(1, requires_grad=True)], lr=0.1)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.step(4)
    assert sched.get_last_lr() == [0.1 * 0.5 ** 2]  # the closed form at epoch 4


def test_errors_match_torch():
    opt = gradnb.optim.SGD([gradnb.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=1)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        lr_scheduler.StepLR(opt, step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between"):
        lr_scheduler.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.OneCycleLR(gradnb.optim.Adagrad([gradnb.zeros(1, requires_grad=True)]),
                                max_lr=0.1, total_steps=10)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1, cycle_momentum=False)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0)


def test_tensor_lr_is_filled_in_place():
    lr = gradnb.tensor(0.1)
    opt = gradnb.optim.SGD([gradnb.zeros(1, requires_grad=True)], lr=lr)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    np.testing.assert_allclose(lr.item(), 0.05, rtol=1e-6)


@pytest.mark.torch
def test_schedulers_name_their_module_as_torch(torch):
    for name in gradnb.optim.lr_scheduler.__all__:
        theirs = getattr(torch.optim.lr_scheduler, name).__module__
        ours = getattr(gradnb.optim.lr_scheduler, name).__module__
        assert ours == theirs.replace("torch.", "gradnb.", 1), name
