"""Elementwise math: values, gradients (gradcheck + PyTorch), second order, bounds and ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb

FAST = settings(max_examples=15, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)

# name -> (domain low, high)
UNARY = {
    "exp": (-3, 3), "expm1": (-2, 2), "log": (0.2, 4), "log2": (0.2, 4), "log10": (0.2, 4),
    "log1p": (-0.5, 3), "sqrt": (0.2, 4), "rsqrt": (0.2, 4), "sin": (-3, 3), "cos": (-3, 3),
    "tan": (-1.2, 1.2), "tanh": (-3, 3), "sinh": (-2, 2), "cosh": (-2, 2), "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9), "atan": (-3, 3), "sigmoid": (-5, 5), "relu": (-3, 3), "abs": (-3, 3),
    "erf": (-2, 2), "exp2": (-2, 2), "reciprocal": (0.5, 3),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@FAST
@given(shape=SHAPES, seed=st.integers(0, 2**16))
def test_unary(check, name, shape, seed):
    low, high = UNARY[name]
    x = np.random.default_rng(seed).uniform(low, high, shape)
    if name in ("relu", "abs"):
        x = np.where(np.abs(x) < 1e-3, 0.5, x)  # away from the kink for finite differences
    check(lambda m, t: getattr(m, name)(t), [x])


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "tan"])
def test_unary_second_order(check, name):
    low, high = UNARY[name]
    x = np.random.default_rng(0).uniform(low, high, (3,))
    check(lambda m, t: getattr(m, name)(t), [x], gradgrad=True)


@pytest.mark.parametrize("kwargs", [{"min": -0.5, "max": 0.5}, {"min": 0.0}, {"max": 0.1}])
def test_clamp(check, kwargs):
    x = np.array([-1.0, -0.3, 0.05, 0.4, 2.0])
    check(lambda m, t: m.clamp(t, **kwargs), [x])


def test_clamp_gradient_passes_at_bounds_like_pytorch():
    x = gradnb.tensor([-1.0, 0.0, 1.0, 2.0], requires_grad=True)
    x.clamp(0.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 0.0]


# (no float16: with a complex bound PyTorch computes in complex32, which NumPy lacks)
CLAMP_DTYPES = ("bool", "uint8", "int8", "int64", "float32", "float64", "complex64")
CLAMP_BOUNDS = {  # name -> lib -> bound
    "bool": lambda lib: True, "-3": lambda lib: -3, "2": lambda lib: 2, "0.5": lambda lib: 0.5,
    "2+0j": lambda lib: 2 + 0j, "1j": lambda lib: 1j,
    "0-d int8": lambda lib: lib.tensor(-3, dtype=lib.int8),
    "0-d int64 -300": lambda lib: lib.tensor(-300),
    "0-d float64": lambda lib: lib.tensor(0.5).double(),
    "0-d complex": lambda lib: lib.tensor(2 + 0j),
    "1-d bool": lambda lib: lib.tensor([True, False, True]),
    "1-d uint8": lambda lib: lib.tensor([2, 0, 1], dtype=lib.uint8),
    "1-d float32": lambda lib: lib.tensor([2.0, 0.0, 1.0]),
}
CLAMP_CALLS = {
    "clamp(min)": lambda x, b: x.clamp(min=b), "clamp(max)": lambda x, b: x.clamp(max=b),
    "clamp(b, b)": lambda x, b: x.clamp(b, b), "clamp_min": lambda x, b: x.clamp_min(b),
    "clamp_max": lambda x, b: x.clamp_max(b), "clamp_(min)": lambda x, b: x.clamp_(min=b),
    "clamp_(b, b)": lambda x, b: x.clamp_(b, b), "clamp_min_": lambda x, b: x.clamp_min_(b),
    "clamp_max_": lambda x, b: x.clamp_max_(b),
}


def _clamp_outcome(lib, dtype, bound, call):
    x = lib.tensor([3, 0, 1]).to(getattr(lib, dtype))
    try:
        out = CLAMP_CALLS[call](x, CLAMP_BOUNDS[bound](lib))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc).split("\n")[0].replace("torch.", "gradnb.")
    return str(out.dtype).split(".")[-1], out.tolist()


@pytest.mark.torch
@pytest.mark.parametrize("dtype", CLAMP_DTYPES)
def test_clamp_dtypes_conversions_and_refusals_match_pytorch(torch, dtype):
    """Every clamp form, every kind of bound: PyTorch's result dtype and values (a uint8 clamped
    at -3 is clamped at 253), or its error (complex refused, the in-place cast error naming the
    C++ type, a bound that overflows, the kernels without bool)."""
    differ = [(call, bound, ours, theirs) for call in CLAMP_CALLS for bound in CLAMP_BOUNDS
              if (ours := _clamp_outcome(gradnb, dtype, bound, call))
              != (theirs := _clamp_outcome(torch, dtype, bound, call))]
    assert not differ


@pytest.mark.torch
def test_clamp_keeps_the_sign_of_a_zero_on_a_tie_like_pytorch(torch):
    import math

    for lib in (gradnb, torch):
        x = lib.tensor([-0.0, 0.0])
        for out in (x.clamp(0.0), x.clamp(-0.0), x.clamp(max=0.0), x.clamp(-0.0, 1.0),
                    x.clamp(lib.tensor(0.0)), x.clamp(max=lib.tensor(-0.0)),
                    x.clone().clamp_(0.0)):
            assert [math.copysign(1, v) for v in out.tolist()] == [-1, 1]


@pytest.mark.torch
def test_clamp_backward_with_a_complex_bound_fails_like_pytorch(torch):
    for lib in (gradnb, torch):
        x = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        y = (x * 1).clamp_(2 + 0j)
        assert y.tolist() == [2.0, 3.0]
        with pytest.raises(NotImplementedError, match="\"ge_cpu\" not implemented for "
                                                      "'ComplexDouble'"):
            y.sum().backward()


def test_relu_gradient_at_zero_is_zero():
    x = gradnb.tensor([0.0, 1.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_relu_gradient_with_non_finite_values_matches_pytorch(torch, dtype, create_graph):
    # the gradient is selected, never multiplied: inf or NaN upstream stays out of masked
    # entries, a NaN output passes its gradient on, and a masked entry is +0.0
    values = [-1.0, 0.0, -0.0, 2.0, float("nan"), float("inf"), -float("inf"), 3.0]
    upstream = [float("inf"), float("nan"), -2.0, 3.0, 4.0, -5.0, float("nan"), -float("inf")]
    grads = []
    for module in (gradnb, torch):
        x = module.tensor(values, dtype=getattr(module, dtype), requires_grad=True)
        g = module.tensor(upstream, dtype=getattr(module, dtype))
        (grad,) = module.autograd.grad(x.relu(), x, g, create_graph=create_graph)
        grads.append(grad.detach().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert (np.signbit(grads[0]) == np.signbit(grads[1])).all()


def test_sigmoid_is_stable_for_huge_inputs():
    x = gradnb.tensor([-1e4, 1e4], requires_grad=True)
    y = x.sigmoid()
    y.sum().backward()
    assert y.tolist() == [0.0, 1.0]
    assert np.isfinite(x.grad.numpy()).all()


@FAST
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3,
                                                 max_side=3).map(lambda r: r.input_shapes),
       seed=st.integers(0, 2**16))
def test_where(check, shapes, seed):
    rng = np.random.default_rng(seed)
    cond = rng.random(shapes[0]) > 0.5
    a, b = rng.standard_normal(shapes[1]), rng.standard_normal(shapes[2])
    check(lambda m, x, y: m.where(m.tensor(cond), x, y), [a, b])


def test_comparisons_have_no_grad():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    for y in (x > 1, x == 2, x <= 1.5, x != 1):
        assert y.dtype is gradnb.bool and not y.requires_grad


def test_integer_inputs_promote_to_default_float():
    assert gradnb.exp(gradnb.tensor([1, 2])).dtype is gradnb.float32
    assert gradnb.sqrt(gradnb.tensor([4])).tolist() == [2.0]


@pytest.mark.parametrize("fn", ["floor", "ceil", "round", "trunc", "sign"])
def test_piecewise_constant_have_zero_grad(fn):
    x = gradnb.tensor([0.3, 1.7, -2.5], requires_grad=True)
    getattr(x, fn)().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(("alias", "op"), [("absolute", "abs"), ("fix", "trunc")])
def test_aliases_match_pytorch(torch, alias, op):
    """``absolute``/``fix`` are PyTorch's aliases of ``abs``/``trunc``: same values, node and
    gradient, as functions and as tensor methods."""
    data = [-2.5, -0.5, 0.75, 3.0]
    x = gradnb.tensor(data, dtype=gradnb.float64, requires_grad=True)
    tx = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    y, ty = getattr(gradnb, alias)(x), getattr(torch, alias)(tx)
    assert np.array_equal(y.detach().numpy(), ty.detach().numpy())
    assert y.grad_fn.name() == ty.grad_fn.name()
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert np.array_equal(getattr(x, alias)().detach().numpy(), y.detach().numpy())
