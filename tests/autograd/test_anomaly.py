"""Anomaly detection: NaN gradients raise, failing backwards report their forward line."""

from __future__ import annotations

import warnings

import pytest

import gradnb
from gradnb import autograd

pytestmark = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled", "ignore:invalid value encountered")


class Broken(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("Some error in backward")


def make_broken(x):
    return Broken.apply(x)  # the forward line the report must point at


def test_entering_warns_like_torch():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled. This mode will "
                                         "increase the runtime and should only be enabled for "
                                         "debugging."):
        autograd.detect_anomaly()


@pytest.mark.filterwarnings("ignore:Error detected in")
def test_nan_gradient_raises_with_the_node_name():
    x = gradnb.tensor([-1.0, 4.0], requires_grad=True)
    with autograd.detect_anomaly():
        y = x.sqrt().sum()
        with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan values in "
                                               r"its 0th output\.$"):
            y.backward()
    assert x.grad is None  # nothing half-applied


def test_nan_report_points_at_the_forward_line():
    x = gradnb.tensor([-1.0], requires_grad=True)
    with autograd.detect_anomaly():
        y = x.sqrt()  # forward line
        with pytest.warns(UserWarning) as records, pytest.raises(RuntimeError):
            y.backward()
    messages = [str(r.message) for r in records]
    report = next(m for m in messages if m.startswith("Error detected in SqrtBackward0."))
    assert "Traceback of forward call that caused the error:" in report
    assert "y = x.sqrt()  # forward line" in report
    assert "gradnb/ops" not in report.replace("\\", "/")


def test_check_nan_false_lets_nan_through():
    x = gradnb.tensor([-1.0], requires_grad=True)
    with autograd.detect_anomaly(check_nan=False):
        x.sqrt().backward()
    assert x.grad.isnan().all() if hasattr(x.grad, "isnan") else x.grad.item() != x.grad.item()


def test_without_anomaly_nan_passes_silently():
    x = gradnb.tensor([-1.0], requires_grad=True)
    x.sqrt().backward()
    assert x.grad.item() != x.grad.item()


def test_failing_backward_warns_with_the_forward_stack():
    x = gradnb.rand(3, requires_grad=True)
    with autograd.detect_anomaly():
        out = make_broken(x).sum()
        with pytest.warns(UserWarning, match="Error detected in BrokenBackward") as records, \
                pytest.raises(RuntimeError, match="Some error in backward"):
            out.backward()
    report = next(str(r.message) for r in records if "BrokenBackward" in str(r.message))
    assert "return Broken.apply(x)  # the forward line the report must point at" in report
    assert "in make_broken" in report


def test_node_recorded_outside_anomaly_mode_has_no_stack():
    x = gradnb.rand(3, requires_grad=True)
    out = make_broken(x).sum()
    with autograd.set_detect_anomaly(True), \
            pytest.warns(UserWarning, match="Error detected in BrokenBackward. No forward pass "
                                            "information available."), \
            pytest.raises(RuntimeError):
        out.backward()


def test_stack_is_kept_in_node_metadata():
    x = gradnb.rand(2, requires_grad=True)
    with autograd.detect_anomaly():
        y = x * 2
    assert "traceback_" in y.grad_fn.metadata
    z = x * 2
    assert z.grad_fn.metadata is None


def test_modes_nest_and_restore():
    assert not autograd.is_anomaly_enabled()
    with autograd.detect_anomaly(check_nan=False):
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
        with autograd.set_detect_anomaly(False):
            assert not autograd.is_anomaly_enabled()
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()


def test_set_detect_anomaly_as_a_plain_call():
    autograd.set_detect_anomaly(True)
    try:
        assert autograd.is_anomaly_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


def test_detect_anomaly_as_a_decorator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @autograd.detect_anomaly()
        def inside():
            return autograd.is_anomaly_enabled()

    assert inside() and not autograd.is_anomaly_enabled()


def test_healthy_backward_is_unchanged():
    x = gradnb.tensor([1.0, 4.0], requires_grad=True)
    with autograd.detect_anomaly():
        x.sqrt().sum().backward()
    assert x.grad.tolist() == [0.5, 0.25]


@pytest.mark.torch
def test_nan_message_matches_torch(torch):
    def message(lib):
        x = lib.tensor([-1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = (x.sqrt() * 2).sum()
                with pytest.raises(RuntimeError) as info:
                    y.backward()
        return str(info.value)

    assert message(gradnb) == message(torch)
