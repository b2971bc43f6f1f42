"""Reductions: values, gradients (gradcheck and PyTorch), ties, zeros, 0-d and empty inputs,
grad_fn names, error messages and second derivatives.

The hypothesis tests draw shapes with 0 to 3 dims and sides 0 to 4 (so 0-d and empty tensors),
every kind of ``dim`` an op accepts, and ``keepdim``. Where PyTorch raises, gradnb must raise the
same exception type with the same first line; where it does not, values, dtypes, grad_fn names
and gradients must agree.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


# -- helpers ---------------------------------------------------------------------------------------
def smooth_values(shape, seed):
    """Values away from 0 and from each other (a.s.), so every op is differentiable there."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def tied_values(shape, seed):
    """Small integers: many ties and zeros, to compare tie-breaking with PyTorch."""
    return np.random.default_rng(seed).integers(-2, 3, shape).astype(np.float64)


def _tensors(module, arrays, requires_grad=True):
    return [module.tensor(a, dtype=module.float64, requires_grad=requires_grad) for a in arrays]


def _outputs(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else ""


def assert_matches_torch(torch, fn, arrays, *, requires_grad=True):
    """Run ``fn(module, *tensors)`` with gradnb and torch: same error, or same outputs and
    gradients. Returns gradnb's outputs (None when both raised)."""
    theirs_in = _tensors(torch, arrays, requires_grad)
    ours_in = _tensors(gradnb, arrays, requires_grad)
    try:
        theirs = fn(torch, *theirs_in)
    except Exception as exc:  # noqa: BLE001 - whatever PyTorch raises, gradnb must raise too
        with pytest.raises(type(exc)) as info:
            fn(gradnb, *ours_in)
        assert _first_line(info.value) == _first_line(exc)
        return None
    ours = fn(gradnb, *ours_in)
    assert type(ours).__name__ == type(theirs).__name__
    rng = np.random.default_rng(1)
    ours_loss, theirs_loss = [], []
    for o, t in zip(_outputs(ours), _outputs(theirs), strict=True):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.dtype.name == str(t.dtype).removeprefix("torch.")
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-7, atol=1e-9,
                                   equal_nan=True)
        assert (o.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert o.grad_fn.name() == t.grad_fn.name()
            w = rng.standard_normal(tuple(t.shape))
            ours_loss.append((o * gradnb.tensor(w)).sum())
            theirs_loss.append((t * torch.tensor(w)).sum())
    if theirs_loss:
        sum(theirs_loss).backward()
        sum(ours_loss).backward()
        for o, t in zip(ours_in, theirs_in, strict=True):
            assert (o.grad is None) == (t.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9,
                                           equal_nan=True)
    return ours


def assert_gradcheck(fn, array, *, second_order=False):
    """gradcheck (and gradgradcheck) of ``fn(gradnb, x)`` at ``array`` in float64."""
    x = gradnb.tensor(array, dtype=gradnb.float64, requires_grad=True)
    out = fn(gradnb, x)
    if not out.requires_grad or not np.isfinite(out.detach().numpy()).all():
        return  # NaN (var of one element) or inf: nothing for finite differences to check
    assert gradcheck(lambda t: fn(gradnb, t), (x,))
    if second_order:
        assert gradgradcheck(lambda t: fn(gradnb, t), (x,))


@st.composite
def reduction_cases(draw, dims="any", keepdim=True):
    """A shape and a ``dim`` valid in kind for an op: ``dims`` is "any" (None, int or tuple),
    "int_or_none", "int" or "tuple_or_int". Out-of-range dims are drawn too, on purpose."""
    shape = draw(SHAPES)
    n = max(len(shape), 1)
    single = st.integers(-n - 1, n)
    if dims == "int":
        dim = draw(single)
    elif dims == "int_or_none":
        dim = draw(st.none() | single)
    else:
        axes = st.lists(st.integers(-n, n - 1), max_size=n, unique_by=lambda d: d % n).map(tuple)
        dim = draw(single | axes) if dims == "tuple_or_int" else draw(st.none() | single | axes)
    return shape, dim, draw(st.booleans()) if keepdim else False


def _call(name, dim, keepdim, **kwargs):
    """``fn(module, x)`` calling ``x.<name>`` with ``dim``/``keepdim`` as PyTorch spells them."""
    def fn(module, x):
        if dim is None:
            return getattr(x, name)(**kwargs)
        return getattr(x, name)(dim, keepdim=keepdim, **kwargs)

    return fn


def _values_only(fn):
    def values(module, x):
        out = fn(module, x)
        return out[0] if isinstance(out, tuple) else out

    return values


# -- hypothesis: every op against PyTorch -----------------------------------------------------------
# name -> (kind of dim, extra kwargs, whether gradcheck applies at smooth points)
REDUCTIONS = {
    "sum": ("any", {}, True),
    "mean": ("any", {}, True),
    "amax": ("tuple_or_int", {}, True),
    "amin": ("tuple_or_int", {}, True),
    "max": ("int_or_none", {}, True),
    "min": ("int_or_none", {}, True),
    "argmax": ("int_or_none", {}, False),
    "argmin": ("int_or_none", {}, False),
    "median": ("int_or_none", {}, True),
    "prod": ("int_or_none", {}, True),
    "var": ("any", {}, True),
    "std": ("any", {}, True),
    "logsumexp": ("tuple_or_int", {}, True),
    "all": ("any", {}, False),
    "any": ("any", {}, False),
}


def _comparable(name, shape, dim, keepdim):
    """Steer clear of two PyTorch quirks that gradnb deliberately does not copy: ``logsumexp``,
    ``var`` and ``std`` with ``dim=()`` reduce everything (in PyTorch, logsumexp raises a shape
    error and the var/std gradients come out infinite), and keepdim without dim."""
    if REDUCTIONS[name][0] == "int_or_none" and dim is None:
        keepdim = False
    if name in ("logsumexp", "var", "std") and dim == ():
        dim = tuple(range(len(shape))) if shape else 0
    if name == "logsumexp" and dim is None:
        dim = tuple(range(len(shape))) if shape else 0
    return dim, keepdim


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_reduction_matches_torch_at_smooth_points(torch, name, data, seed):
    kind, kwargs, differentiable = REDUCTIONS[name]
    shape, dim, keepdim = data.draw(reduction_cases(kind))
    dim, keepdim = _comparable(name, shape, dim, keepdim)
    fn = _call(name, dim, keepdim, **kwargs)
    x = smooth_values(shape, seed)
    out = assert_matches_torch(torch, fn, [x])
    if out is not None and differentiable and x.size:
        assert_gradcheck(_values_only(fn), x)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "argmax", "argmin", "prod",
                                  "logsumexp", "std"])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_reduction_ties_and_zeros_match_torch(torch, name, data, seed):
    kind = REDUCTIONS[name][0]
    shape, dim, keepdim = data.draw(reduction_cases(kind))
    dim, keepdim = _comparable(name, shape, dim, keepdim)
    assert_matches_torch(torch, _call(name, dim, keepdim), [tied_values(shape, seed)])


@pytest.mark.torch
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 0, math.inf, -math.inf])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**16), tied=st.booleans())
def test_norm_matches_torch(torch, p, data, seed, tied):
    shape, dim, keepdim = data.draw(reduction_cases("any"))
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        dim = None  # torch.norm(p, dim=()) routes to a matrix norm check; no vector meaning
    x = tied_values(shape, seed) if tied else smooth_values(shape, seed)

    def fn(module, t):
        return t.norm(p, dim, keepdim)

    out = assert_matches_torch(torch, fn, [x])
    if out is not None and not tied and x.size and p not in (0,):
        assert_gradcheck(fn, x)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**16), tied=st.booleans())
def test_scans_match_torch(torch, name, data, seed, tied):
    shape, dim, _ = data.draw(reduction_cases("int", keepdim=False))
    x = tied_values(shape, seed) if tied else smooth_values(shape, seed)

    def fn(module, t):
        return getattr(t, name)(dim)

    out = assert_matches_torch(torch, fn, [x])
    if out is not None and x.size:
        assert_gradcheck(fn, x)


@pytest.mark.torch
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_count_nonzero_matches_torch(torch, data, seed):
    shape, dim, _ = data.draw(reduction_cases("any", keepdim=False))
    assert_matches_torch(torch, lambda m, t: t.count_nonzero(dim), [tied_values(shape, seed)])


@pytest.mark.torch
@pytest.mark.parametrize("form", [
    lambda m, t: t.var(0, False), lambda m, t: t.var(False), lambda m, t: t.var(unbiased=False),
    lambda m, t: t.var(1, keepdim=True, correction=0), lambda m, t: t.std(correction=2),
    lambda m, t: m.var(t, 1, True, True), lambda m, t: t.std(dim=(0, 1), correction=0.5),
    lambda m, t: m.std(t, 0, unbiased=False, keepdim=True),
])
def test_var_std_argument_forms_match_torch(torch, form):
    x = smooth_values((3, 4), 0)
    assert_matches_torch(torch, form, [x])
    assert_gradcheck(form, x)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("op", [
    lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.prod(), lambda t: t.prod(1),
    lambda t: t.cumsum(1), lambda t: t.cumprod(0), lambda t: t.max(), lambda t: t.amax(0),
    lambda t: t.argmax(), lambda t: t.all(), lambda t: t.any(1), lambda t: t.count_nonzero(),
    lambda t: t.median(), lambda t: t.logsumexp(1), lambda t: t.sum(dtype=t.dtype),
])
def test_integer_and_bool_dtypes_match_torch(torch, dtype, op):
    data = [[1, 0, 2], [3, 1, 1]]
    ours = gradnb.tensor(data, dtype=getattr(gradnb, dtype))
    theirs = torch.tensor(data, dtype=getattr(torch, dtype))
    try:
        expected = op(theirs)
    except Exception as exc:  # noqa: BLE001 - whatever PyTorch raises, gradnb must raise too
        with pytest.raises(type(exc)) as info:
            op(ours)
        assert _first_line(info.value) == _first_line(exc)
        return
    got = op(ours)
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


# -- ties, zeros and subgradients, with the expected numbers written out ------------------------------
def _grad(fn, data):
    x = gradnb.tensor(data, dtype=gradnb.float64, requires_grad=True)
    out = fn(x)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return x.grad.tolist()


def test_full_max_shares_the_gradient_among_ties():
    assert _grad(lambda x: x.max(), [1.0, 3.0, 3.0, 2.0]) == [0.0, 0.5, 0.5, 0.0]
    assert _grad(lambda x: x.min(), [1.0, 1.0, 1.0, 2.0]) == pytest.approx([1 / 3] * 3 + [0.0])


def test_max_with_dim_sends_the_gradient_to_the_first_index():
    assert _grad(lambda x: x.max(1), [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]) == [
        [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert _grad(lambda x: x.min(0), [[1.0, 0.0], [1.0, 0.0]]) == [[1.0, 1.0], [0.0, 0.0]]


def test_amax_shares_the_gradient_among_ties_per_slice():
    rows = _grad(lambda x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    assert rows[0] == [0.0, 0.5, 0.5]
    assert rows[1] == pytest.approx([1 / 3, 1 / 3, 1 / 3])


def test_max_of_nan_is_nan_and_shares_the_gradient_among_nans():
    x = gradnb.tensor([1.0, math.nan, math.nan], requires_grad=True)
    y = x.max()
    y.backward()
    assert math.isnan(y.item())
    assert x.grad.tolist() == [0.0, 0.5, 0.5]
    assert gradnb.tensor([1.0, math.nan, 2.0]).argmax().item() == 1


def test_prod_gradient_with_one_zero_and_with_two():
    assert _grad(lambda x: x.prod(), [1.0, 0.0, 3.0, 4.0]) == [0.0, 12.0, 0.0, 0.0]
    assert _grad(lambda x: x.prod(), [1.0, 0.0, 3.0, 0.0]) == [0.0, 0.0, 0.0, 0.0]
    assert _grad(lambda x: x.prod(1), [[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [2.0, 3.0, 4.0]]) == [
        [0.0, 3.0, 0.0], [0.0, 0.0, 0.0], [12.0, 8.0, 6.0]]


def test_cumprod_gradient_with_zeros():
    assert _grad(lambda x: x.cumprod(0), [2.0, 0.0, 3.0, 0.0, 5.0]) == [1.0, 8.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("p", [2, 3, 0.5, "fro"])
def test_norm_of_a_zero_vector_has_zero_gradient(p):
    assert _grad(lambda x: x.norm(p), [0.0, 0.0]) == [0.0, 0.0]
    rows = _grad(lambda x: x.norm(p, dim=1), [[0.0, 0.0], [3.0, 4.0]])
    assert rows[0] == [0.0, 0.0]
    assert np.isfinite(rows[1]).all()


def test_norm_subgradients():
    assert _grad(lambda x: x.norm(1), [0.0, -2.0, 3.0]) == [0.0, -1.0, 1.0]
    assert _grad(lambda x: x.norm(math.inf), [1.0, -3.0, 3.0]) == [0.0, -0.5, 0.5]
    x = gradnb.tensor([1.0, 0.0, 2.0], requires_grad=True)
    x.norm(0).backward()
    assert x.grad is None  # PyTorch leaves the gradient of a count undefined


def test_std_of_constant_input_has_zero_gradient():
    assert _grad(lambda x: x.std(), [1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0]


def test_logsumexp_is_stable_for_huge_and_infinite_inputs():
    x = gradnb.tensor([1000.0, 1000.0, -1000.0], dtype=gradnb.float64, requires_grad=True)
    y = x.logsumexp(0)
    y.backward()
    assert y.item() == pytest.approx(1000.0 + math.log(2.0))
    assert x.grad.tolist() == pytest.approx([0.5, 0.5, 0.0])
    assert gradnb.tensor([-math.inf, -math.inf]).logsumexp(0).item() == -math.inf
    assert gradnb.tensor([math.inf, 1.0]).logsumexp(0).item() == math.inf
    assert gradnb.zeros(0, 2).logsumexp(0).tolist() == [-math.inf, -math.inf]


def test_float32_stays_float32():
    x = gradnb.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True)
    for out in (x.max(), x.amax(0), x.max(1).values, x.prod(), x.var(), x.norm(), x.logsumexp(1),
                x.cumprod(1), x.median()):
        assert out.dtype == gradnb.float32
        x.grad = None
        out.sum().backward()
        assert x.grad.dtype == gradnb.float32


# -- empty and 0-d ---------------------------------------------------------------------------------
def test_sum_of_empty_is_zero_and_max_of_empty_raises():
    assert gradnb.zeros(0).sum().item() == 0.0
    assert gradnb.zeros(0).prod().item() == 1.0
    with pytest.raises(RuntimeError, match=r"^max\(\): Expected reduction dim to be specified"):
        gradnb.zeros(0).max()
    with pytest.raises(IndexError, match=r"^max\(\): Expected reduction dim 0 to have non-zero"):
        gradnb.zeros(0, 3).max(0)
    assert gradnb.zeros(0, 3).max(1).values.shape == (0,)


def test_zero_dim_reductions():
    x = gradnb.tensor(3.0, requires_grad=True)
    values, indices = x.max(0)
    assert values.grad_fn.name() == "MaxBackward0" and indices.item() == 0
    for out in (x.max(), x.sum(0), x.prod(0), x.amax(), x.norm(), x.logsumexp(0), x.cumsum(0),
                x.median(0).values):
        x.grad = None
        out.backward()
        assert x.grad.item() == 1.0


# -- names, return types, errors ----------------------------------------------------------------------
GRAD_FN_NAMES = [
    (lambda x: x.sum(), "SumBackward0"), (lambda x: x.sum(1), "SumBackward1"),
    (lambda x: x.mean(), "MeanBackward0"), (lambda x: x.mean(0), "MeanBackward1"),
    (lambda x: x.max(), "MaxBackward1"), (lambda x: x.max(1).values, "MaxBackward0"),
    (lambda x: x.min(), "MinBackward1"), (lambda x: x.min(0).values, "MinBackward0"),
    (lambda x: x.amax(), "AmaxBackward0"), (lambda x: x.amin(1), "AminBackward0"),
    (lambda x: x.prod(), "ProdBackward0"), (lambda x: x.prod(1), "ProdBackward1"),
    (lambda x: x.var(), "VarBackward0"), (lambda x: x.std(1), "StdBackward0"),
    (lambda x: x.norm(), "LinalgVectorNormBackward0"),
    (lambda x: x.norm(1, 0), "LinalgVectorNormBackward0"),
    (lambda x: x.logsumexp(1), "LogsumexpBackward0"), (lambda x: x.cumsum(0), "CumsumBackward0"),
    (lambda x: x.cumprod(1), "CumprodBackward0"), (lambda x: x.median(), "MedianBackward0"),
    (lambda x: x.median(1).values, "MedianBackward1"),
]


@pytest.mark.parametrize(("op", "name"), GRAD_FN_NAMES)
def test_grad_fn_names(op, name):
    x = gradnb.tensor(smooth_values((2, 3), 0), requires_grad=True)
    assert op(x).grad_fn.name() == name


def test_max_with_dim_returns_a_named_tuple():
    x = gradnb.tensor([[1.0, 5.0], [4.0, 2.0]])
    result = gradnb.max(x, 1, keepdim=True)
    assert isinstance(result, gradnb.return_types.max)
    values, indices = result
    assert values.tolist() == [[5.0], [4.0]] and indices.tolist() == [[1], [0]]
    assert indices.dtype == gradnb.int64
    assert repr(result).startswith("gradnb.return_types.max(\nvalues=tensor(")
    assert gradnb.max(x, gradnb.tensor(3.0)).tolist() == [[3.0, 5.0], [4.0, 3.0]]
    assert isinstance(x.median(0), gradnb.return_types.median)


ERRORS = [
    (lambda: gradnb.zeros(0).amax(), RuntimeError,
     ("amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
      "reduction dim with the 'dim' argument.")),
    (lambda: gradnb.zeros(2, 0, 3).amin((0, 1)), IndexError,
     "amin(): Expected reduction dim 1 to have non-zero size."),
    (lambda: gradnb.zeros(0).argmax(), IndexError,
     "argmax(): Expected reduction dim to be specified for input.numel() == 0."),
    (lambda: gradnb.zeros(2, 3).sum(2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: gradnb.zeros(2, 3).sum((1, -1)), RuntimeError,
     "dim 1 appears multiple times in the list of dims"),
    (lambda: gradnb.tensor(2.0).max(1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: gradnb.tensor([1, 2]).var(), RuntimeError,
     "std and var only support floating point and complex dtypes"),
    (lambda: gradnb.tensor([1, 2]).mean(), RuntimeError,
     ("mean(): could not infer output dtype. Input dtype must be either a floating point or "
      "complex dtype. Got: Long")),
    (lambda: gradnb.tensor([1, 2]).norm(), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: gradnb.zeros(2, 3).argmax((0, 1)), TypeError,
     "argmax(): argument 'dim' (position 1) must be int, not tuple"),
    (lambda: gradnb.zeros(2, 3).norm("abc"), RuntimeError,
     "linalg.matrix_norm: Order abc not supported."),
    (lambda: gradnb.zeros(2, 3, 4).norm("fro", (0, 1, 2)), RuntimeError,
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    (lambda: gradnb.zeros(0).norm(math.inf), RuntimeError,
     ("linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation "
      "does not have an identity")),
    (lambda: gradnb.zeros(0, 3).median(0), IndexError,
     "median(): Expected reduction dim 0 to have non-zero size."),
]


@pytest.mark.parametrize(("call", "exc_type", "message"), ERRORS)
def test_error_messages(call, exc_type, message):
    with pytest.raises(exc_type) as info:
        call()
    assert str(info.value) == message


@pytest.mark.torch
@pytest.mark.parametrize(("call", "exc_type", "message"), ERRORS)
def test_error_messages_are_pytorchs(torch, call, exc_type, message):
    """The messages above are PyTorch's own: the same calls, with ``gradnb`` bound to torch."""
    torch_call = types.FunctionType(call.__code__, {**call.__globals__, "gradnb": torch})
    with pytest.raises(exc_type) as info:
        torch_call()
    assert _first_line(info.value) == message


def test_var_warns_when_degrees_of_freedom_run_out():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert math.isnan(gradnb.tensor([1.0]).var().item())


# -- second order -----------------------------------------------------------------------------------
SECOND_ORDER = {
    "sum": lambda m, x: x.sum(1) ** 2,
    "mean": lambda m, x: x.mean(0) ** 2,
    "max": lambda m, x: x.max() * x.sum(),
    "max_dim": lambda m, x: x.max(1).values ** 2,
    "amax": lambda m, x: x.amax(0) ** 2,
    "norm": lambda m, x: x.norm(),
    "norm_dim": lambda m, x: x.norm(dim=1),
    "norm_p3": lambda m, x: x.norm(3, 0),
    "logsumexp": lambda m, x: x.logsumexp(1),
    "var": lambda m, x: x.var(0),
    "std": lambda m, x: x.std(1),
    "prod": lambda m, x: x.prod(1),
    "cumsum": lambda m, x: x.cumsum(1) ** 2,
    "cumprod": lambda m, x: x.cumprod(0),
    "median": lambda m, x: x.median(1).values ** 2,
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_gradcheck(name):
    assert_gradcheck(SECOND_ORDER[name], smooth_values((3, 4), 7), second_order=True)


@pytest.mark.parametrize("name", ["prod", "cumprod"])
def test_second_order_through_zeros(name):
    x = smooth_values((3, 4), 3)
    x[0, 1] = x[1, 1] = x[1, 2] = 0.0
    assert_gradcheck(SECOND_ORDER[name], x, second_order=True)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_create_graph_matches_torch(torch, name):
    fn = SECOND_ORDER[name]
    x = smooth_values((3, 4), 11)
    results = []
    for module in (gradnb, torch):
        t = module.tensor(x, dtype=module.float64, requires_grad=True)
        (g,) = module.autograd.grad(fn(module, t).sum(), t, create_graph=True)
        (gg,) = module.autograd.grad((g * g).sum(), t)
        results.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


# -- devices ----------------------------------------------------------------------------------------
def _first_and_second_order(fn, array, device):
    x = gradnb.tensor(array, dtype=gradnb.float64, device=device, requires_grad=True)
    out = fn(gradnb, x)
    (g,) = gradnb.autograd.grad((out * out).sum(), x, create_graph=True)
    (gg,) = gradnb.autograd.grad(g.sum(), x)
    assert out.device == x.device and g.device == x.device and gg.device == x.device
    return [t.detach().cpu().numpy() for t in (out, g, gg)]


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_runs_on_device_like_on_the_cpu(device, name):
    x = tied_values((3, 4), 5)  # ties and zeros: the masks and scans must stay on the device
    ours = _first_and_second_order(SECOND_ORDER[name], x, device)
    for got, expected in zip(ours, _first_and_second_order(SECOND_ORDER[name], x, "cpu"),
                             strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)


def test_unique_matches_numpy_and_has_no_grad():
    x = gradnb.tensor([3.0, 1.0, 2.0, 3.0, 1.0], requires_grad=True)
    values, inverse, counts = gradnb.unique(x, return_inverse=True, return_counts=True)
    assert values.tolist() == [1.0, 2.0, 3.0] and not values.requires_grad
    assert inverse.tolist() == [2, 0, 1, 2, 0] and counts.tolist() == [2, 1, 2]
    rows = gradnb.tensor([[1, 2], [1, 2], [0, 1]]).unique(dim=0)
    assert rows.tolist() == [[0, 1], [1, 2]]
