"""``x.sin_()`` and ``torch.sin_(x)``: every in-place form records its op's node, as torch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.ops.inplace_forms import FORMS

UNARY = ["acos_", "asin_", "atan_", "cos_", "sin_", "tan_", "cosh_", "sinh_", "erf_", "expm1_",
         "exp2_", "log1p_", "log2_", "log10_", "rsqrt_", "reciprocal_", "square_", "sinc_",
         "trunc_", "floor_", "ceil_", "round_", "frac_", "deg2rad_", "rad2deg_", "logit_",
         "i0_", "erfc_", "fix_", "nan_to_num_"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_form_matches_torch(name):
    torch = pytest.importorskip("torch")
    values = np.array([0.1, 0.3, 0.7])
    out = {}
    for lib in (torch, gradnb):
        x = lib.tensor(values, requires_grad=True)
        y = x * 1
        returned = getattr(lib, name)(y)
        assert returned is y
        z = x * 1
        getattr(z, name)()
        y.sum().backward()
        out[lib.__name__] = (y.detach().numpy(), x.grad.numpy(), y.grad_fn.name(),
                             z.detach().numpy())
    t, g = out["torch"], out["gradnb"]
    np.testing.assert_allclose(g[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(g[1], t[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g[3], t[3], rtol=1e-12)
    assert g[2] == t[2]


def test_a_leaf_that_requires_grad_is_refused_unchanged():
    x = gradnb.tensor([0.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        gradnb.sin_(x)
    assert x.item() == 0.5


def test_an_integer_tensor_cannot_hold_a_float_result():
    x = gradnb.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x.sin_()
    assert x.tolist() == [1, 2]


def test_every_form_has_both_faces():
    for name in FORMS:
        if hasattr(gradnb, name[:-1]):
            assert callable(getattr(gradnb, name)) and callable(getattr(gradnb.Tensor, name))


def _more_forms(t):
    """Method calls of the other in-place forms, each on fresh tensors of library ``t``."""
    x = lambda: t.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]], dtype=t.float64)
    y = t.tensor([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]], dtype=t.float64)
    i = lambda: t.tensor([[1, 2, 3], [4, 5, 6]])
    j = t.tensor([[3, 1, 2], [1, 1, 2]])
    b = lambda: t.tensor([True, False])
    c = t.tensor([True, True])
    m = t.tensor([[True, False, True], [False, True, False]])
    return {
        "absolute_": lambda: x().absolute_(), "atan2_": lambda: x().atan2_(y),
        "addmm_": lambda: t.ones(2, 2, dtype=t.float64).addmm_(x(), y.T, beta=0.5, alpha=2),
        "addbmm_": lambda: t.ones(2, 2, dtype=t.float64).addbmm_(x()[None], y.T[None]),
        "baddbmm_": lambda: t.ones(1, 2, 2, dtype=t.float64).baddbmm_(x()[None], y.T[None]),
        "addr_": lambda: t.ones(2, 3, dtype=t.float64).addr_(t.ones(2, dtype=t.float64), y[0]),
        "bitwise_and_": lambda: i().bitwise_and_(j), "bitwise_xor_": lambda: i().bitwise_xor_(j),
        "bitwise_not_": lambda: i().bitwise_not_(),
        "bitwise_left_shift_": lambda: i().bitwise_left_shift_(j),
        "bitwise_right_shift_": lambda: i().bitwise_right_shift_(j),
        "copysign_": lambda: x().copysign_(y), "cumprod_": lambda: x().cumprod_(1),
        "cumsum_": lambda: x().cumsum_(0), "digamma_": lambda: x().digamma_(),
        "erfinv_": lambda: (x() / 3).erfinv_(), "float_power_": lambda: x().float_power_(2),
        "float_power_ of float32": lambda: x().float().float_power_(2),
        "floor_divide_": lambda: x().floor_divide_(y), "fmod_": lambda: x().fmod_(y),
        "remainder_": lambda: x().remainder_(y), "heaviside_": lambda: x().heaviside_(y),
        "hypot_": lambda: x().hypot_(y),
        "index_copy_": lambda: x().index_copy_(0, t.tensor([1, 0]), y),
        "index_fill_": lambda: x().index_fill_(1, t.tensor([0, 2]), -1.0),
        "lerp_": lambda: x().lerp_(y, 0.3), "lgamma_": lambda: x().lgamma_(),
        "logical_and_": lambda: b().logical_and_(c), "logical_xor_": lambda: b().logical_xor_(c),
        "logical_not_ of float": lambda: x().logical_not_(),
        "masked_scatter_": lambda: x().masked_scatter_(m, y),
        "mvlgamma_": lambda: (x().abs() + 2).mvlgamma_(2), "nextafter_": lambda: x().nextafter_(y),
        "renorm_": lambda: x().renorm_(2, 0, 1.0), "sgn_": lambda: x().sgn_(),
        "sign_": lambda: x().sign_(), "tril_": lambda: x().tril_(), "triu_": lambda: x().triu_(1),
        "eq_": lambda: x().eq_(y), "ne_": lambda: x().ne_(0.5), "gt_": lambda: x().gt_(y),
        "greater_": lambda: x().greater_(y), "less_equal_": lambda: x().less_equal_(y),
        "not_equal_": lambda: x().not_equal_(y), "eq_ of int64": lambda: i().eq_(j),
        "lerp_ records": lambda: (x().requires_grad_() * 1).lerp_(y, 0.3).grad_fn.name(),
        "squeeze_ records": lambda: (x()[None].requires_grad_() * 1).squeeze_(0).grad_fn.name(),
        "transpose_ records": lambda: (x().requires_grad_() * 1).transpose_(0, 1).grad_fn.name(),
        "t_ records": lambda: (x().requires_grad_() * 1).t_().grad_fn.name(),
    }


def _result(call):
    try:
        value = call()
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e).split("\n")[0]
    if isinstance(value, str):
        return "ok", value
    return "ok", str(value.dtype).split(".")[-1], np.asarray(value.tolist())


@pytest.mark.parametrize("name", list(_more_forms(gradnb)))
def test_more_forms_match_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _result(_more_forms(gradnb)[name]), _result(_more_forms(torch)[name])
    assert ours[:2] == theirs[:2]
    if len(ours) == 3:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-12)
