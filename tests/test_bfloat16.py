"""bfloat16 (through ml_dtypes): the dtype, casts, promotion, printing, finfo and autograd, each
compared with PyTorch where it is installed."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` for gradnb and torch, with reprs spelled alike."""
    return fn(gradnb), fn(torch)


def test_importing_gradnb_does_not_load_ml_dtypes():
    code = "import gradnb, sys; assert 'ml_dtypes' not in sys.modules; gradnb.bfloat16"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dtype_facts():
    assert gradnb.bfloat16.is_floating_point and gradnb.bfloat16.itemsize == 2
    assert repr(gradnb.bfloat16) == "gradnb.bfloat16"
    assert gradnb.ones(2).bfloat16().element_size() == 2


@pytest.mark.parametrize("values", [[1.5, 2.3, -0.1], [1e-3, 123456.0], [[0.5, 1.0], [2.0, 3.0]]])
def test_cast_values_and_printing_match_torch(values):
    g, t = _both(lambda lib: lib.tensor(values, requires_grad=True).bfloat16())
    assert repr(g).replace("gradnb", "torch") == repr(t)
    np.testing.assert_array_equal(g.float().detach().numpy(), t.float().detach().numpy())
    g2, t2 = _both(lambda lib: lib.tensor(values).to(lib.bfloat16))
    assert repr(g2).replace("gradnb", "torch") == repr(t2)


@pytest.mark.parametrize(("left", "right"), [
    ("bfloat16", "float16"), ("bfloat16", "float32"), ("int64", "bfloat16"),
    ("bfloat16", "float64"), ("bool", "bfloat16"), ("bfloat16", "complex64"),
])
def test_promotion_matches_torch(left, right):
    def result(lib):
        a = lib.ones(3, dtype=getattr(lib, left))
        b = lib.ones(3, dtype=getattr(lib, right))
        return str((a + b).dtype).split(".")[1], str((a * 2.5).dtype).split(".")[1]

    assert _both(result)[0] == _both(result)[1]


def test_finfo_matches_torch():
    g, t = gradnb.finfo(gradnb.bfloat16), torch.finfo(torch.bfloat16)
    assert repr(g) == repr(t)
    assert (g.eps, g.max, g.tiny, g.bits) == (t.eps, t.max, t.tiny, t.bits)


def test_matmul_and_linear_stay_bfloat16():
    x = gradnb.ones(2, 3).bfloat16()
    w = gradnb.ones(4, 3).bfloat16()
    assert (x @ w.t()).dtype == gradnb.bfloat16
    assert gradnb.nn.functional.linear(x, w, gradnb.ones(4).bfloat16()).dtype == gradnb.bfloat16
    assert gradnb.nn.Linear(3, 4).bfloat16()(x).dtype == gradnb.bfloat16


def test_gradient_through_bfloat16_cast_matches_torch():
    def run(lib):
        x = lib.tensor([1.5, 2.3, -0.1], requires_grad=True)
        y = x.bfloat16()
        (y * y).float().sum().backward()
        return type(y.grad_fn).__name__, x.grad.dtype, x.grad.numpy()

    (gn, gd, gg), (tn, td, tg) = _both(run)
    assert gn == tn == "ToCopyBackward0"
    assert str(gd).split(".")[1] == str(td).split(".")[1] == "float32"
    np.testing.assert_allclose(gg, tg)


def test_legacy_type_name():
    assert gradnb.ones(1).bfloat16().type() == "gradnb.BFloat16Tensor"
    assert gradnb.BFloat16Tensor([1.0]).dtype == gradnb.bfloat16


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "var", "norm", "cumsum", "softmax",
                                  "relu", "matmul", "cross_entropy"])
def test_common_ops_keep_bfloat16_and_carry_gradients_as_torch(name):
    base = np.linspace(-2, 2, 12).reshape(3, 4)

    def run(lib):
        F = lib.nn.functional
        fn = {"sum": lambda x: x.sum(), "mean": lambda x: x.mean(), "amax": lambda x: x.amax(-1),
              "var": lambda x: x.var(), "norm": lambda x: x.norm(),
              "cumsum": lambda x: x.cumsum(0), "softmax": lambda x: F.softmax(x, -1),
              "relu": F.relu, "matmul": lambda x: x @ x.t(),
              "cross_entropy": lambda x: F.cross_entropy(x, lib.tensor([0, 1, 3]))}[name]
        x = lib.tensor(base, dtype=lib.float32).bfloat16().requires_grad_()
        y = fn(x)
        y.backward(lib.ones_like(y))
        return (str(y.dtype).split(".")[1], str(x.grad.dtype).split(".")[1],
                y.detach().float().numpy(), x.grad.float().numpy())

    (gy, gg, gv, gx), (ty, tg, tv, tx) = run(gradnb), run(torch)
    assert (gy, gg) == (ty, tg)
    # bfloat16 keeps 8 bits: gradnb rounds each NumPy step, torch computes in float32 and
    # rounds once, so the last bit may differ.
    np.testing.assert_allclose(gv, tv, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(gx, tx, rtol=2e-2, atol=2e-2)


def test_save_and_load_keep_bfloat16(tmp_path):
    x = gradnb.tensor([1.5, 2.25, -3.0], dtype=gradnb.bfloat16)
    gradnb.save({"x": x}, tmp_path / "t.pt")
    back = gradnb.load(tmp_path / "t.pt")["x"]
    assert back.dtype == gradnb.bfloat16 and back.tolist() == [1.5, 2.25, -3.0]


def test_reductions_accumulate_in_float32_as_torch():
    def run(lib):
        x = lib.ones(10000).bfloat16()
        m = x.reshape(100, 100)
        return [float(v.float().item()) for v in (x.sum(), x.mean(), x.cumsum(0)[-1], x.prod(),
                                                 m.sum(1)[0], m.mean(0)[0])]

    assert run(gradnb) == run(torch) == [9984.0, 1.0, 9984.0, 1.0, 100.0, 1.0]
