"""``gradnb.testing.assert_close`` raises PyTorch's error, message for message, on the same
inputs (tensors, NumPy arrays, numbers, sequences, mappings); ``make_tensor`` draws in
PyTorch's ranges."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")

PAIRS = {
    "one element differs": lambda t: (t.tensor([1.0, 2.0, 3.0]), t.tensor([1.0, 2.5, 3.0])),
    "shapes": lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0, 3.0])),
    "dtypes": lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0], dtype=t.float64)),
    "floats": lambda t: (1.0, 1.5),
    "ints": lambda t: (1, 2),
    "int and float": lambda t: (1, 1.0),
    "bools": lambda t: (True, False),
    "None": lambda t: (None, 1),
    "list of 0-d tensors": lambda t: ([t.tensor(1.0), t.tensor(2.0)],
                                      [t.tensor(1.0), t.tensor(3.0)]),
    "mapping values": lambda t: ({"a": t.tensor(1.0)}, {"a": t.tensor(2.0)}),
    "mapping keys": lambda t: ({"a": 1}, {"b": 1}),
    "int tensors": lambda t: (t.tensor([1, 2]), t.tensor([1, 3])),
    "NaN without equal_nan": lambda t: (t.tensor([[1.0, float("nan")]]),
                                        t.tensor([[1.0, float("nan")]])),
    "tensor and float": lambda t: (t.tensor(1.0), 1.0),
    "bool tensors": lambda t: (t.tensor([True]), t.tensor([False])),
    "sequence lengths": lambda t: ([1, 2], [1, 2, 3]),
    "NumPy arrays": lambda t: (np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    "2-d": lambda t: (t.tensor([[1.0, 2.0], [3.0, 4.0]]), t.tensor([[1.0, 2.0], [3.0, 5.0]])),
    "complex 0-d": lambda t: (t.tensor(1 + 1j), t.tensor(1 + 2j)),
    "within float32 tolerance": lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.000001])),
    "infinities": lambda t: (t.tensor([1.0, float("inf")]), t.tensor([1.0, float("inf")])),
    "zero expected": lambda t: (t.tensor([0.0, 1.0]), t.tensor([1.0, 1.0])),
    "inf numbers": lambda t: (float("inf"), float("inf")),
    "tuples": lambda t: ((1, 2.0), (1, 2.0)),
    "tensor and array": lambda t: (t.tensor([1.0, 2.0]), np.array([1.0, 2.0])),
}


def _error(lib, call, **kwargs):
    try:
        lib.testing.assert_close(*call(lib), **kwargs)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        text = str(e).replace("torch.", "gradnb.")
        for name in ("<class 'gradnb.Tensor'>", "<class 'gradnb._core.tensor.Tensor'>"):
            text = text.replace(name, "<tensor class>")
        return type(e).__name__, text
    return None


@pytest.mark.parametrize("name", list(PAIRS))
def test_assert_close_matches_torch(name):
    assert _error(gradnb, PAIRS[name]) == _error(torch, PAIRS[name])


@pytest.mark.parametrize("kwargs", [{"rtol": 1e-3}, {"atol": 1}, {"msg": "custom"},
                                    {"msg": lambda m: "prefix " + m[:20]},
                                    {"check_dtype": False}, {"rtol": 0.0, "atol": 0.0},
                                    {"equal_nan": True}],
                         ids=["rtol alone", "atol alone", "msg", "msg callable",
                              "check_dtype off", "exact", "equal_nan"])
def test_assert_close_options_match_torch(kwargs):
    def pair(t):
        return (t.tensor([1.0, float("nan"), 2]), t.tensor([1.0, float("nan"), 2.5],
                                                           dtype=t.float64))

    assert _error(gradnb, pair, **kwargs) == _error(torch, pair, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
def test_make_tensor_draws_in_torchs_ranges(dtype):
    gradnb.manual_seed(0)
    t = gradnb.testing.make_tensor(200, 3, dtype=getattr(gradnb, dtype), device="cpu")
    assert tuple(t.shape) == (200, 3) and t.dtype == getattr(gradnb, dtype)
    values = np.asarray(t.tolist())
    if dtype in ("float32", "float64", "int64"):
        assert values.min() >= -9 and values.max() <= 9 and values.min() < 0
    if dtype == "uint8":
        assert values.min() >= 0 and values.max() <= 9
    low = gradnb.testing.make_tensor(50, dtype=gradnb.float64, low=2, high=3,
                                     exclude_zero=True, requires_grad=True)
    assert low.requires_grad and 2 <= low.min().item() and low.max().item() <= 3


def test_make_tensor_noncontiguous():
    t = gradnb.testing.make_tensor(4, 3, dtype=gradnb.float32, noncontiguous=True)
    assert not t.is_contiguous() and tuple(t.shape) == (4, 3)
