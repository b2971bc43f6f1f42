"""The rest of PyTorch's autograd API: Variable, grad_fn._saved_*, register_multi_grad_hook,
set_default_device, .numpy() inside Function.forward, gradgradcheck of 0-d custom Functions."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.autograd import Variable
from gradnb.autograd.graph import register_multi_grad_hook


def test_variable_is_a_tensor_as_in_torch(torch):
    for lib in (gradnb, torch):
        x = lib.ones(2)
        v = lib.autograd.Variable(x)
        assert type(v) is lib.Tensor and v is not x and not v.requires_grad
        assert isinstance(x, lib.autograd.Variable)
        w = lib.autograd.Variable(x, requires_grad=True)
        assert w.requires_grad and w.is_leaf and not x.requires_grad
        w.data[0] = 5.0  # shares memory with x
        assert x.tolist() == [5.0, 1.0]
        y = lib.autograd.Variable(lib.ones(2, requires_grad=True) * 2)
        assert y.is_leaf and not y.requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])


def _graphs(lib):
    x = lib.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.0, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    return x, w, {
        "mul": x * w, "mul_number": x * 2, "div": x / w, "exp": x.exp(), "log": x.log(),
        "sin": x.sin(), "tanh": x.tanh(), "sigmoid": x.sigmoid(), "sqrt": x.sqrt(),
        "relu": x.relu(), "pow_number": x ** 3, "pow_tensor": x ** w, "mm": lib.mm(x, x.t()),
        "maximum": lib.maximum(x, w), "softmax": lib.softmax(x, 1) if lib is not gradnb
        else gradnb.nn.functional.softmax(x, 1), "transpose": x.transpose(0, 1),
        "sum_dim": x.sum(1), "mean_dim": x.mean(1), "add": x + w, "sub": x - w,
    }


def _names(fn):
    return sorted(a for a in dir(fn) if a.startswith("_saved_") and not a.endswith(
        ("_sym_strides", "_sym_numel")) and not (a.endswith("_sym_sizes")
                                                  and fn.name() == "MmBackward0"))


def _plain(value):
    if hasattr(value, "detach"):
        return np.asarray(value.detach().numpy()).tolist()
    return value


@pytest.mark.parametrize("name", list(_graphs(gradnb)[2]))
def test_saved_attributes_match_torch(torch, name):
    _, _, ours = _graphs(gradnb)
    _, _, theirs = _graphs(torch)
    fn_t = theirs[name].grad_fn
    for attr in _names(fn_t):
        got, expected = _plain(getattr(ours[name].grad_fn, attr)), _plain(getattr(fn_t, attr))
        if isinstance(expected, list):
            np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=attr)
        else:
            assert got == expected, attr


def test_saved_inputs_are_the_inputs_and_freed_after_backward(torch):
    for lib in (gradnb, torch):
        x, w, graphs = _graphs(lib)
        y = graphs["mul"]
        assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is w
        y.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            y.grad_fn._saved_self  # noqa: B018
    with pytest.raises(AttributeError):
        gradnb.ones(1, requires_grad=True).exp().grad_fn._saved_self  # noqa: B018


def test_raw_saved_tensor_hooks_match_torch(torch):
    for lib in (gradnb, torch):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.grad_fn._raw_saved_result.register_hooks(
            lambda t, log=log: (log.append("pack"), t * 1)[1],
            lambda t, log=log: (log.append("unpack"), t)[1])
        assert log == ["pack"]
        y.sum().backward()
        assert log == ["pack", "unpack"]
        np.testing.assert_allclose(np.asarray(x.grad.numpy()), np.exp([1.0, 2.0]), rtol=1e-6)


def _multi_hook_run(lib):
    a, b, c = (lib.ones(2, requires_grad=True) for _ in range(3))
    calls = []
    h = lib.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda gs: calls.append([None if g is None else g.tolist() for g in gs]))
    (a * 2 + b * 3).sum().backward()
    (a * 2).sum().backward()
    h2 = lib.autograd.graph.register_multi_grad_hook(
        (a, b), lambda g: calls.append(("any", g.tolist())), mode="any")
    (a * 2 + b * 3).sum().backward()
    h.remove()
    h2.remove()
    (a * 2).sum().backward()
    x, y = a * 1, b * 1
    h = lib.autograd.graph.register_multi_grad_hook((x, y), lambda gs: calls.append(len(gs)))
    (x + y).sum().backward()
    return calls


def test_multi_grad_hook_matches_torch(torch):
    assert _multi_hook_run(gradnb) == _multi_hook_run(torch)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got x"):
        register_multi_grad_hook((gradnb.ones(1, requires_grad=True),), print, mode="x")


def test_default_device_round_trip():
    assert str(gradnb.get_default_device()) == "cpu"
    try:
        gradnb.set_default_device("cpu")
        assert gradnb.zeros(2).device.type == "cpu"
        assert gradnb.get_default_device().type == "cpu"
    finally:
        gradnb.set_default_device(None)


@pytest.mark.cuda
def test_default_device_moves_factories_to_cuda():
    try:
        gradnb.set_default_device("cuda")
        for t in (gradnb.zeros(2), gradnb.tensor([1.0]), gradnb.randn(2), gradnb.arange(3),
                  gradnb.as_tensor(np.ones(2))):
            assert t.device.type == "cuda"
    finally:
        gradnb.set_default_device(None)


def test_numpy_inside_function_forward_as_in_torch(torch):
    for lib in (gradnb, torch):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, lib=lib):
                return lib.from_numpy(x.numpy() * 2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = lib.ones(2, requires_grad=True)
        Double.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
        with lib.no_grad():
            assert x.numpy().tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires"):
            x.numpy()


@pytest.mark.parametrize("body", ["cube", "exp", "sum_of_squares"])
def test_gradgradcheck_of_a_custom_function_on_a_0d_tensor(body):
    forward = {"cube": lambda x: x ** 3, "exp": lambda x: x.exp(),
               "sum_of_squares": lambda x: (x * x).sum()}[body]
    backward = {"cube": lambda x, g: 3 * x * x * g, "exp": lambda x, g: g * x.exp(),
                "sum_of_squares": lambda x, g: 2 * x * g}[body]

    class Op(gradnb.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return forward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return backward(x, g)

    x = gradnb.tensor(1.5, dtype=gradnb.float64, requires_grad=True)
    assert gradnb.autograd.gradcheck(Op.apply, (x,))
    assert gradnb.autograd.gradgradcheck(Op.apply, (x,))
