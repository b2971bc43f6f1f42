"""CPU autocast and GradScaler, compared with PyTorch where it is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _run(lib):
    F = lib.nn.functional
    x = lib.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=lib.float32, requires_grad=True)
    w = lib.tensor(np.arange(12.0).reshape(4, 3) / 11 - 0.5, dtype=lib.float32, requires_grad=True)
    b = lib.tensor([0.1, -0.2, 0.3, 0.0], requires_grad=True)
    seen = {}
    with lib.autocast("cpu"):
        seen["state"] = (lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu"),
                         str(lib.get_autocast_dtype("cpu")).split(".")[1])
        y = F.linear(x, w, b)
        seen["linear"] = (str(y.dtype), type(y.grad_fn).__name__,
                          [type(n[0]).__name__ for n in y.grad_fn.next_functions])
        seen["lists"] = [str(t.dtype) for t in (
            lib.mm(x, w.t()), x @ w.t(), lib.bmm(x[None], w.t()[None]), lib.softmax(y, -1),
            y + x[:, :1], F.mse_loss(y, y), F.linear(x.double(), w.double()))]
        loss = F.cross_entropy(y, lib.tensor([0, 1]))
        with lib.autocast("cpu", enabled=False):
            seen["off"] = (str((x @ w.t()).dtype), lib.is_autocast_enabled("cpu"))
        seen["back_on"] = lib.is_autocast_enabled("cpu")
    loss.backward()
    seen["after"] = lib.is_autocast_enabled("cpu")
    seen["loss"] = (str(loss.dtype), round(loss.item(), 2))
    seen["grads"] = [g.numpy().round(2).tolist() for g in (x.grad, w.grad, b.grad)]
    return seen


def _same(g, t):
    return repr(g).replace("gradnb.", "torch.") == repr(t)


def test_cpu_autocast_matches_torch():
    assert _same(_run(gradnb), _run(torch))


def test_decorator_and_float16():
    @gradnb.autocast("cpu", dtype=gradnb.float16)
    def f(a):
        return a @ a

    assert f(gradnb.ones(2, 2)).dtype == gradnb.float16
    assert not gradnb.is_autocast_enabled("cpu")


def test_conv_runs_in_bfloat16():
    with gradnb.amp.autocast("cpu"):
        assert gradnb.nn.Conv2d(2, 3, 3)(gradnb.ones(1, 2, 5, 5)).dtype == gradnb.bfloat16


def test_errors_and_warnings_match_torch():
    for lib in (gradnb, torch):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            lib.autocast("foo")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(3)
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not"), \
                lib.autocast("cpu", dtype=lib.float64):
            assert not lib.is_autocast_enabled("cpu")
        with pytest.warns(FutureWarning, match=r"\.cpu\.amp\.autocast\(args...\)` is deprecated"):
            ctx = lib.cpu.amp.autocast()
        with ctx:
            assert lib.is_autocast_enabled("cpu")
        assert str(lib.get_autocast_dtype("cuda")).endswith("float16")


def test_grad_scaler_matches_torch():
    def run(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
        trace = []
        for bad in (False, True, False, False):
            opt.zero_grad()
            loss = (w * w).sum() * (float("inf") if bad else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            trace.append((scaler.get_scale(), w.detach().numpy().round(4).tolist()))
        return trace, scaler.state_dict()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(gradnb) == run(torch)


def test_functional_switches_and_custom_fwd():
    assert gradnb.amp.is_autocast_available("cpu")
    assert gradnb.is_autocast_cache_enabled()
    gradnb.set_autocast_enabled("cpu", True)
    try:
        assert gradnb.is_autocast_enabled("cpu")
        assert (gradnb.ones(2, 2) @ gradnb.ones(2, 2)).dtype == gradnb.bfloat16
    finally:
        gradnb.set_autocast_enabled("cpu", False)
    with pytest.warns(DeprecationWarning, match="is_autocast_cpu_enabled"):
        assert not gradnb.is_autocast_cpu_enabled()

    class Square(gradnb.autograd.Function):
        @staticmethod
        @gradnb.amp.custom_fwd(device_type="cpu", cast_inputs=gradnb.float32)
        def forward(ctx, x):
            return x @ x

        @staticmethod
        @gradnb.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g

    with gradnb.autocast("cpu"):
        assert Square.apply(gradnb.ones(2, 2).bfloat16()).dtype == gradnb.float32


def test_public_names_exist_in_torch():
    for name in ("autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
                 "is_autocast_cpu_enabled", "clear_autocast_cache", "bfloat16", "sparse_coo",
                 "strided", "layout"):
        assert hasattr(torch, name) and hasattr(gradnb, name), name
    for name in ("autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"):
        assert hasattr(torch.amp, name) and hasattr(gradnb.amp, name), name
