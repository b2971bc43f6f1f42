"""gradcheck / gradgradcheck: passing and failing checks, PyTorch's messages and warnings."""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest

import gradnb
from gradnb.autograd import GradcheckError, gradcheck, gradgradcheck


def leaf(*shape):
    return gradnb.randn(*shape, dtype=gradnb.float64, requires_grad=True)


def doubled_backward_exp(t):
    """exp(t), but a hook doubles the gradient flowing into it: a wrong first derivative."""
    y = t * 1.0
    y.register_hook(lambda g: g * 2)
    return y.exp()


def detached_backward_sin(t):
    """sin(t) whose incoming gradient is cut from the graph: the first derivative is right, but
    the input gradient no longer depends on ``grad_output`` in the double-backward graph."""
    y = t.sin()
    y.register_hook(lambda g: g.detach())
    return y


# -- passing checks --------------------------------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("fn, shapes", [
    (gradnb.sin, [(3,)]),
    (gradnb.exp, [(2, 3)]),
    (gradnb.mul, [(2, 3), (3,)]),
    (gradnb.matmul, [(2, 3), (3, 4)]),
    (lambda a: (a * a).sum(), [(4,)]),
    (gradnb.tanh, [()]),
])
def test_correct_gradients_pass(fn, shapes, fast_mode):
    assert gradcheck(fn, tuple(leaf(*s) for s in shapes), fast_mode=fast_mode) is True


def test_single_tensor_input_needs_no_tuple():
    assert gradcheck(gradnb.sin, leaf(3))


def test_multiple_outputs_are_all_checked():
    a, b = leaf(2, 3), leaf(3)
    assert gradcheck(lambda x, y: (x * y, x + y, (x * x).sum()), (a, b))
    with pytest.raises(GradcheckError, match="output 1 with respect to input 0"):
        gradcheck(lambda x: (x.sin(), doubled_backward_exp(x)), (a,))


def test_inputs_without_grad_and_non_tensors_are_skipped():
    a = leaf(3)
    const = gradnb.randn(3, dtype=gradnb.float64)
    assert gradcheck(lambda x, c, k: x * c * k, (a, const, 2.5))


def test_non_float_outputs_are_ignored():
    a = leaf(4)
    assert gradcheck(lambda x: (x > 0, x.exp()), (a,))


def test_empty_tensors():
    assert gradcheck(gradnb.exp, (leaf(0),))
    assert gradcheck(lambda x: x.sum(), (leaf(0, 3),))


def test_inputs_are_restored_after_the_check():
    a = leaf(2, 3)
    before = a.detach().numpy().copy()
    gradcheck(gradnb.exp, (a,))
    gradcheck(gradnb.exp, (a,), fast_mode=True)
    np.testing.assert_array_equal(a.detach().numpy(), before)
    assert a.grad is None


def test_non_contiguous_input():
    a = leaf(3, 4).detach().t().requires_grad_()
    assert gradcheck(lambda x: x.exp() * 2, (a,))


# -- failing checks --------------------------------------------------------------------------------
def test_wrong_gradient_raises_with_both_jacobians():
    a = gradnb.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=gradnb.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(doubled_backward_exp, (a,))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[1.1052, 0.0000")
    assert "\nanalytical:tensor([[2.2103, 0.0000" in msg
    assert isinstance(info.value, RuntimeError)


def test_raise_exception_false_returns_false():
    assert gradcheck(doubled_backward_exp, (leaf(3),), raise_exception=False) is False
    assert gradcheck(doubled_backward_exp, (leaf(3),), fast_mode=True,
                     raise_exception=False) is False


def test_fast_mode_failure_reports_slow_mode_jacobians():
    with pytest.raises(GradcheckError) as info:
        gradcheck(doubled_backward_exp, (leaf(3),), fast_mode=True)
    msg = str(info.value)
    assert re.match(r"Jacobian mismatch for output 0 with respect to input 0,\nnumerical:[-0-9.e]+\n"
                    r"analytical:[-0-9.e]+\n", msg)
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in msg
    assert "The max per-element difference (slow mode) is:" in msg


def test_second_input_named_in_message():
    a, b = leaf(3), leaf(3)
    with pytest.raises(GradcheckError, match="output 0 with respect to input 1"):
        gradcheck(lambda x, y: x.sin() + doubled_backward_exp(y), (a, b))


def test_nondeterministic_backward_is_reported():
    calls = itertools.count()

    def jittery(t):
        y = t * 1.0
        y.register_hook(lambda g: g * (1 + 1e-3 * next(calls)))
        return y

    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(jittery, (leaf(2),), atol=1.0, rtol=1.0)
    assert gradcheck(jittery, (leaf(2),), atol=1.0, rtol=1.0, nondet_tol=1.0)


def test_function_without_differentiable_outputs_must_be_constant():
    a = leaf(3)
    assert gradcheck(lambda x: gradnb.ones(3, dtype=gradnb.float64), (a,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda x: x.detach() * 2, (a,))


def test_no_input_requires_grad_is_a_value_error():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require "
                                         "gradient, but none of them have requires_grad=True."):
        gradcheck(gradnb.sin, (gradnb.randn(3, dtype=gradnb.float64),))


def test_float32_inputs_warn():
    a = gradnb.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision "
                                         "floating point or complex."):
        gradcheck(gradnb.sin, (a,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_float64_inputs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(gradnb.sin, (leaf(3),))


def test_expanded_input_is_rejected():
    a = gradnb.randn(1, dtype=gradnb.float64).expand(3).requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(gradnb.sin, (a,))


def test_unsupported_modes_say_so():
    with pytest.raises(NotImplementedError, match="forward-mode"):
        gradcheck(gradnb.sin, (leaf(2),), check_forward_ad=True)


# -- gradgradcheck ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, shapes", [
    (lambda x: (x ** 3).sum(), [(3,)]),
    (gradnb.sin, [(2, 3)]),
    (gradnb.mul, [(3,), (3,)]),
    (gradnb.matmul, [(2, 3), (3, 2)]),
    (lambda x: x.exp() * x, [(4,)]),
])
def test_gradgradcheck_passes_for_correct_second_derivatives(fn, shapes):
    assert gradgradcheck(fn, tuple(leaf(*s) for s in shapes)) is True


def test_gradgradcheck_with_explicit_grad_outputs():
    a = leaf(3)
    g = gradnb.randn(3, dtype=gradnb.float64, requires_grad=True)
    assert gradgradcheck(gradnb.tanh, (a,), (g,))


def test_gradgradcheck_catches_a_broken_second_derivative():
    a = leaf(3)
    assert gradcheck(detached_backward_sin, (a,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 1"):
        gradgradcheck(detached_backward_sin, (a,))
    assert gradgradcheck(detached_backward_sin, (a,), raise_exception=False) is False


# -- oracle ----------------------------------------------------------------------------------------
@pytest.mark.torch
def test_failure_message_matches_torch(torch):
    values = np.array([[0.1, 0.2], [0.3, 0.4]])

    def message(lib):
        def fn(t):
            y = t * 1.0
            y.register_hook(lambda g: g * 2)
            return y.exp()

        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(fn, (x,))
        return type(info.value).__name__, str(info.value).replace("torch.", "").replace("gradnb.", "")

    assert message(gradnb) == message(torch)


@pytest.mark.torch
def test_float32_warning_matches_torch(torch):
    def caught(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lib.sin, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
        return [str(r.message) for r in records]

    assert caught(gradnb) == caught(torch)


@pytest.mark.torch
@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_verdicts_agree_with_torch(torch, check):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((2, 3))
    for broken in (False, True):
        verdicts = []
        for lib in (gradnb, torch):
            def fn(t, lib=lib, broken=broken):
                y = t * 1.0
                if broken:
                    y.register_hook(lambda g: g.detach() * 2 if check == "gradcheck" else g.detach())
                return y.sin()

            x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
            verdicts.append(getattr(lib.autograd, check)(fn, (x,), raise_exception=False))
        assert verdicts[0] == verdicts[1] == (not broken)
