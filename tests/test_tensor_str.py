"""Tensor printing: fixed expectations, and PyTorch's own ``repr`` as the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from gradnb._core import printing as _tensor_str
from gradnb._core.printing import (
    PRINT_OPTS,
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)


def fmt(array, dtype_name=None, default="float32", suffixes=()):
    """format_tensor with the dtype name taken from the array unless given."""
    return format_tensor(
        np.asarray(array),
        default_dtype_name=default,
        dtype_name=dtype_name or str(np.asarray(array).dtype),
        suffixes=list(suffixes),
    )


@pytest.fixture(autouse=True)
def _default_printoptions():
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


# ---------------------------------------------------------------- fixed expectations


@pytest.mark.parametrize(
    ("array", "suffixes", "expected"),
    [
        (np.float32([1, 2]), ["requires_grad=True"], "tensor([1., 2.], requires_grad=True)"),
        (np.float32(49), ["grad_fn=<MulBackward0>"], "tensor(49., grad_fn=<MulBackward0>)"),
        (np.exp(np.float32([1, 2, 3])), [], "tensor([ 2.7183,  7.3891, 20.0855])"),
        (np.int64([1, 2, 3]), [], "tensor([1, 2, 3])"),
        (np.array([True, False]), [], "tensor([ True, False])"),
        (np.float64([1, 2]), [], "tensor([1., 2.], dtype=gradnb.float64)"),
        (np.int32([1, 2]), [], "tensor([1, 2], dtype=gradnb.int32)"),
        (np.float16([0.5]), [], "tensor([0.5000], dtype=gradnb.float16)"),
        (np.float32([]), [], "tensor([])"),
        (np.zeros((0, 3), np.float32), [], "tensor([], size=(0, 3))"),
        (np.int64([]), [], "tensor([], dtype=gradnb.int64)"),
        (np.array([], bool), [], "tensor([], dtype=gradnb.bool)"),
        (np.float32([1e-5, 1.0]), [], "tensor([1.0000e-05, 1.0000e+00])"),
        (np.float32([np.nan, -np.inf, 2]), [], "tensor([nan, -inf, 2.])"),
        (np.float32([-0.0, 1.5]), [], "tensor([-0.0000, 1.5000])"),  # zeros do not widen columns
        (np.float32([[1, 2], [3, 4]]), [], "tensor([[1., 2.],\n        [3., 4.]])"),
        (np.float32([1, 2]), ["device='cuda:0'"], "tensor([1., 2.], device='cuda:0')"),
    ],
)
def test_fixed_repr(array, suffixes, expected):
    assert fmt(array, suffixes=suffixes) == expected


def test_device_goes_before_dtype_like_pytorch():
    got = fmt(np.float64([1, 2]), suffixes=["device='cuda:0'", "requires_grad=True"])
    assert got == "tensor([1., 2.], device='cuda:0', dtype=gradnb.float64, requires_grad=True)"


def test_non_default_default_dtype():
    assert fmt(np.float64([1, 2]), default="float64") == "tensor([1., 2.])"
    assert fmt(np.float32([1, 2]), default="float64") == "tensor([1., 2.], dtype=gradnb.float32)"


def test_summarized_vector():
    assert fmt(np.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"


def test_long_vector_wraps_at_linewidth():
    lines = fmt(np.arange(30)).split("\n")
    assert (
        lines[0]
        == "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,"
    )
    assert all(len(line) <= 80 for line in lines)


def test_3d_blank_line_between_matrices():
    expected = "tensor([[[0, 1]],\n\n        [[2, 3]]])"
    assert fmt(np.arange(4).reshape(2, 1, 2)) == expected


def test_long_suffix_goes_on_its_own_line():
    got = fmt(np.float32(np.arange(16) + 0.5), suffixes=["grad_fn=<MulBackward0>"])
    assert got.endswith(",\n       grad_fn=<MulBackward0>)")


def test_set_printoptions_semantics():
    set_printoptions(precision=2, sci_mode=True)
    assert fmt(np.float32([1.12345])) == "tensor([1.12e+00])"
    set_printoptions(precision=3)  # omitting sci_mode turns it back to automatic
    assert PRINT_OPTS.sci_mode is None
    assert fmt(np.float32([1.12345])) == "tensor([1.123])"
    set_printoptions(profile="short")
    assert (PRINT_OPTS.precision, PRINT_OPTS.edgeitems) == (2, 2)
    set_printoptions(profile="full")
    assert PRINT_OPTS.threshold == math.inf
    assert "..." not in fmt(np.arange(2000))


def test_printoptions_context_restores():
    before = get_printoptions()
    with printoptions(threshold=5):
        assert fmt(np.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    assert get_printoptions() == before


def test_zero_edgeitems_prints_size():
    set_printoptions(threshold=5, edgeitems=0)
    assert fmt(np.arange(10)) == "tensor([...], size=(10,))"


# ---------------------------------------------------------------- PyTorch as the oracle

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]
SPECIAL_FLOATS = [
    0.0,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    1e8,
    1.5e9,
    3e38,
    1e300,
    1e-4,
    1e-5,
    1e-30,
    5e-324,
    -1e10,
    65504.0,
    1e-8,
]

float_values = st.one_of(
    st.integers(-(10**6), 10**6).map(float),
    st.floats(-1e4, 1e4, allow_nan=False),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(SPECIAL_FLOATS),
    st.floats(-1, 1).map(lambda x: x * 1e-6),
)


@st.composite
def arrays(draw):
    """Arrays of up to 3 dims (0-d and empty included) in every dtype gradnb prints."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(
        st.one_of(
            array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
            array_shapes(min_dims=1, max_dims=1, min_side=10, max_side=40),
        )
    )
    size = math.prod(shape)
    if dtype == "bool":
        values = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    elif dtype.startswith("int"):
        bound = np.iinfo(dtype).max
        ints = st.one_of(st.integers(-bound - 1, bound), st.integers(-20, 20))
        values = draw(st.lists(ints, min_size=size, max_size=size))
    else:
        values = draw(st.lists(float_values, min_size=size, max_size=size))
    with np.errstate(over="ignore"):
        return (
            np.array(values, dtype=np.float64 if dtype[0] == "f" else None)
            .astype(dtype)
            .reshape(shape)
        )


print_options = st.fixed_dictionaries(
    {
        "precision": st.sampled_from([None, 0, 2, 4, 7]),
        "threshold": st.sampled_from([None, 1000, 4, 10, 30]),
        "edgeitems": st.sampled_from([None, 0, 1, 2, 3]),
        "linewidth": st.sampled_from([None, 80, 20, 50, 120]),
        "sci_mode": st.sampled_from([None, None, True, False]),
    }
)


def torch_repr(torch, array, autograd_state):
    """PyTorch's repr of the array as a tensor, and the suffix gradnb would pass for it."""
    tensor = torch.tensor(array, requires_grad=autograd_state is not None)
    suffixes = []
    if autograd_state == "leaf":
        suffixes = ["requires_grad=True"]
    elif autograd_state == "mul":
        tensor = tensor * 1
        suffixes = ["grad_fn=<MulBackward0>"]
    return repr(tensor), suffixes


@pytest.fixture
def print_like_torch(monkeypatch):
    """Name dtypes ``torch.float64`` so reprs compare byte for byte with PyTorch's.

    Replacing "torch." by "gradnb." in PyTorch's output is not enough: "gradnb" is one
    character longer, which can move a suffix to the next line.
    """
    monkeypatch.setattr(_tensor_str, "_DTYPE_MODULE", "torch")


@pytest.mark.torch
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    array=arrays(),
    options=print_options,
    autograd_state=st.sampled_from([None, "leaf", "mul"]),
    default=st.sampled_from(["float32", "float64"]),
)
def test_matches_pytorch_repr(print_like_torch, array, options, autograd_state, default):
    torch = pytest.importorskip("torch")
    if array.dtype.kind != "f":
        autograd_state = None
    saved_default = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default))
    try:
        with torch._tensor_str.printoptions(**options), printoptions(**options):
            expected, suffixes = torch_repr(torch, array, autograd_state)
            got = fmt(array, default=default, suffixes=suffixes)
    finally:
        torch.set_default_dtype(saved_default)
    assert got == expected


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(1001,), (40, 40), (11, 12, 13), (2000, 1), (1, 2000)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_summarized_matches_pytorch(print_like_torch, shape, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    array = (rng.standard_normal(shape) * 100).astype(dtype)
    expected, _ = torch_repr(torch, array, None)
    assert fmt(array) == expected
