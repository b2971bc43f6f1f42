"""Complex tensors: dtypes and promotion, printing, views of their parts, conjugation, and
gradients in PyTorch's convention (``dL/dx + i dL/dy``), checked by gradcheck and against torch."""

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck


def _z(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _pair(torch, data, dtype="complex128", requires_grad=True):
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    g = gradnb.tensor(data, dtype=getattr(gradnb, dtype), requires_grad=requires_grad)
    return t, g


def test_aliases_and_chalf_absent():
    assert gradnb.cfloat is gradnb.complex64 and gradnb.cdouble is gradnb.complex128
    assert not hasattr(gradnb, "chalf")  # NumPy has no complex32


@pytest.mark.parametrize("a, b", [
    ("float32", "complex128"), ("float64", "complex64"), ("int64", "complex64"),
    ("int32", "complex128"), ("complex64", "complex128"),
])
def test_tensor_promotion_matches_torch(torch, a, b):
    for x, y in ((a, b), (b, a)):
        got = (gradnb.ones(2, dtype=getattr(gradnb, x)) + gradnb.ones(2, dtype=getattr(gradnb, y)))
        want = torch.ones(2, dtype=getattr(torch, x)) + torch.ones(2, dtype=getattr(torch, y))
        assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    zero_d = gradnb.ones(2, dtype=getattr(gradnb, a)) + gradnb.tensor(1j, dtype=getattr(gradnb, b))
    want = torch.ones(2, dtype=getattr(torch, a)) + torch.tensor(1j, dtype=getattr(torch, b))
    assert zero_d.dtype.name == str(want.dtype).removeprefix("torch.")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_python_complex_scalar_promotion(torch, dtype):
    got = gradnb.ones(2, dtype=getattr(gradnb, dtype)) * 1j
    want = torch.ones(2, dtype=getattr(torch, dtype)) * 1j
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    assert gradnb.tensor([1 + 2j]).dtype == gradnb.complex64


@pytest.mark.parametrize("data", [
    [1 + 2j, 3.5 - 1j], 1 + 2j, [[1e-5 + 2j, 3e5]], [0j, -0.0 - 0j, np.nan + 1j],
    np.arange(2000) * (1 - 0.5j), _z(3, 3) * 100,
])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_printing_matches_torch(torch, data, dtype):
    want = repr(torch.tensor(data, dtype=getattr(torch, dtype))).replace("torch.", "gradnb.")
    assert repr(gradnb.tensor(data, dtype=getattr(gradnb, dtype))) == want


def test_parts_are_views_sharing_storage():
    z = gradnb.tensor([1 + 2j, 3 - 4j], dtype=gradnb.complex128)
    r, i, both = z.real, z.imag, gradnb.view_as_real(z)
    assert r.dtype == i.dtype == gradnb.float64 and both.shape == (2, 2)
    r[0] = 10.0
    i[1] = 7.0
    both[1, 0] = -1.0
    assert z.tolist() == [10 + 2j, -1 + 7j]
    back = gradnb.view_as_complex(both)
    back[0] = 0j
    assert z.tolist()[0] == 0j


def test_view_as_complex_errors_match_torch(torch):
    cases = [lambda m: m.zeros(3, 3, dtype=m.float64), lambda m: m.zeros(2, 4)[:, ::2],
             lambda m: m.zeros(4, dtype=m.int64)]
    for make in cases:
        t, g = make(torch), make(gradnb)
        with pytest.raises(RuntimeError) as want:
            torch.view_as_complex(t)
        with pytest.raises(RuntimeError) as got:
            gradnb.view_as_complex(g)
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]
    with pytest.raises(RuntimeError, match="only supported for complex"):
        gradnb.view_as_real(gradnb.zeros(2))


def test_conj_is_materialized_with_torchs_values():
    z = gradnb.tensor([1 + 2j], requires_grad=True)
    c = z.conj()
    assert c.tolist() == [1 - 2j] and not c.is_conj() and c.resolve_conj() is c
    x = gradnb.ones(2)
    assert x.conj() is x and x.conj_physical() is x  # as torch: a real tensor is its own conj


def test_backward_of_complex_scalar_raises_like_torch(torch):
    t, g = _pair(torch, [1 + 2j])
    with pytest.raises(RuntimeError) as want:
        (t * 2).sum().backward()
    with pytest.raises(RuntimeError) as got:
        (g * 2).sum().backward()
    assert str(got.value) == str(want.value).replace("torch.", "gradnb.")


# Each function maps complex (and real) inputs to a real loss through complex intermediates.
LOSSES = {
    "mul_abs": lambda z, x: (z * x * z).abs().sum(),
    "div_angle": lambda z, x: (z / (x + 2)).angle().sum() + (x / z).real.sum(),
    "holomorphic": lambda z, x: ((z.exp() + z.sin() * z.cos() + (z * z + 1).log()).imag.sum()
                                 + z.sqrt().abs().sum() + x.tanh().sum()),
    "matmul": lambda z, x: (z.reshape(2, 3) @ z.reshape(3, 2).conj()).abs().sum()
                            + (x.reshape(2, 3).to(gradnb.complex128) @ z.reshape(3, 2)).real.sum(),
    "parts": lambda z, x: (gradnb.view_as_real(z) ** 2).sum() + gradnb.view_as_complex(
        gradnb.stack((x, x * x), -1)).abs().sum() + gradnb.complex(x, 2 * x).angle().sum(),
    "polar_sgn": lambda z, x: (gradnb.polar(x.abs() + 1, x) * z).sgn().real.sum()
                              + (x.to(gradnb.complex128) * z).imag.sum(),
    "pow_reciprocal": lambda z, x: ((z ** 3).abs().sum() + (z ** z.flip(0)).real.sum()
                                    + (1 / z).imag.sum() + (z ** 2.5).real.mean() + (2 ** x).sum()),
}
TORCH_LOSSES = {
    "mul_abs": lambda t, z, x: (z * x * z).abs().sum(),
    "div_angle": lambda t, z, x: (z / (x + 2)).angle().sum() + (x / z).real.sum(),
    "holomorphic": lambda t, z, x: ((z.exp() + z.sin() * z.cos() + (z * z + 1).log()).imag.sum()
                                    + z.sqrt().abs().sum() + x.tanh().sum()),
    "matmul": lambda t, z, x: (z.reshape(2, 3) @ z.reshape(3, 2).conj()).abs().sum()
                               + (x.reshape(2, 3).to(t.complex128) @ z.reshape(3, 2)).real.sum(),
    "parts": lambda t, z, x: (t.view_as_real(z) ** 2).sum() + t.view_as_complex(
        t.stack((x, x * x), -1)).abs().sum() + t.complex(x, 2 * x).angle().sum(),
    "polar_sgn": lambda t, z, x: (t.polar(x.abs() + 1, x) * z).sgn().real.sum()
                                 + (x.to(t.complex128) * z).imag.sum(),
    "pow_reciprocal": lambda t, z, x: ((z ** 3).abs().sum() + (z ** z.flip(0)).real.sum()
                                       + (1 / z).imag.sum() + (z ** 2.5).real.mean() + (2 ** x).sum()),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradients_match_torch(torch, name):
    data_z, data_x = _z(6), np.random.default_rng(1).standard_normal(6)
    tz, gz = _pair(torch, data_z)
    tx, gx = _pair(torch, data_x, "float64")
    TORCH_LOSSES[name](torch, tz, tx).backward()
    LOSSES[name](gz, gx).backward()
    np.testing.assert_allclose(gz.grad.numpy(), tz.grad.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert gz.grad.dtype == gradnb.complex128 and gx.grad.dtype == gradnb.float64


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradcheck_and_gradgradcheck(name):
    z = gradnb.tensor(_z(6, seed=2), requires_grad=True)
    x = gradnb.tensor(np.random.default_rng(3).standard_normal(6), requires_grad=True)
    assert gradcheck(LOSSES[name], (z, x))
    assert gradgradcheck(LOSSES[name], (z, x))


def test_gradcheck_complex_outputs_and_fast_mode():
    z = gradnb.tensor(_z(4, seed=4), requires_grad=True)
    assert gradcheck(lambda z: z * z.conj() * z, (z,))
    assert gradcheck(lambda z: (z * z).exp(), (z,), fast_mode=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):  # GradcheckError
        gradcheck(_WrongConj.apply, (z,))


class _WrongConj(gradnb.autograd.Function):
    """z * z with the real-valued (non-conjugated) derivative: gradcheck must catch it."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z


def test_eig_matches_torch(torch):
    data = np.random.default_rng(5).standard_normal((4, 4))
    ta, ga = _pair(torch, data, "float64")
    tw, tv = torch.linalg.eig(ta)
    gw, gv = gradnb.linalg.eig(ga)
    order_t, order_g = np.argsort(tw.detach().numpy()), np.argsort(gw.detach().numpy())
    np.testing.assert_allclose(gw.detach().numpy()[order_g], tw.detach().numpy()[order_t])
    (tw.abs().sum() + tv.abs().sum()).backward()
    (gw.abs().sum() + gv.abs().sum()).backward()
    np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), rtol=1e-6, atol=1e-8)
    assert gradnb.linalg.eigvals(ga).dtype == gradnb.complex128
    assert gradcheck(lambda a: gradnb.linalg.eigvals(a), (ga,))


def test_eig_refuses_phase_dependent_loss():
    a = gradnb.tensor(np.random.default_rng(6).standard_normal((3, 3)), requires_grad=True)
    _, v = gradnb.linalg.eig(a)
    with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
        v.imag.sum().backward()


def test_grad_output_of_other_complexity_raises_like_torch(torch):
    for out_dtype, grad_dtype in (("float64", "complex128"), ("complex128", "float64")):
        messages = []
        for m in (torch, gradnb):
            x = m.ones(2, dtype=getattr(m, out_dtype), requires_grad=True)
            with pytest.raises(RuntimeError) as err:
                (x * 2).backward(m.ones(2, dtype=getattr(m, grad_dtype)))
            messages.append(str(err.value).replace("torch.", "gradnb."))
        assert messages[0] == messages[1]


def test_in_place_write_through_a_part_with_history_is_refused_unchanged():
    z = gradnb.tensor([1 + 2j, 3 - 1j], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="in-place writes through the real or imaginary part"):
        z.imag.mul_(2)
    assert z.tolist() == [1 + 2j, 3 - 1j]
    plain = gradnb.tensor([1 + 2j, 3 - 1j])
    plain.imag.mul_(2)  # no history: an ordinary write into shared storage
    assert plain.tolist() == [1 + 4j, 3 - 2j]
