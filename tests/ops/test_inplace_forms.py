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
