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


# Complex inputs to reductions whose result is real (var, std, norms) and to the ops whose complex
# form PyTorch computes by its own formula (logsumexp, logaddexp, logcumsumexp).
COMPLEX_INPUT_CALLS = {
    "var": lambda t, z: t.var(z, 0),
    "std": lambda t, z: t.std(z),
    "var_mean": lambda t, z: t.var_mean(z, 1, correction=0),
    "std_mean": lambda t, z: t.std_mean(z, 0),
    "norm": lambda t, z: t.norm(z),
    "norm p=1": lambda t, z: t.norm(z, 1, 1),
    "norm p=3": lambda t, z: t.norm(z, 3),
    "norm p=inf": lambda t, z: t.norm(z, float("inf"), 0),
    "norm p=0.5": lambda t, z: t.norm(z, 0.5, 1, keepdim=True),
    "norm p=0": lambda t, z: t.norm(z, 0),
    "linalg.vector_norm": lambda t, z: t.linalg.vector_norm(z, 1.5, 0),
    "dist": lambda t, z: t.dist(z, z.flip(0), 3),
    "renorm": lambda t, z: t.renorm(z, 2, 0, 1.0),
    "normalize": lambda t, z: t.nn.functional.normalize(z),
    "logsumexp": lambda t, z: t.logsumexp(z * 3, 1),
    "logaddexp": lambda t, z: t.logaddexp(z, z.flip(1)),
    "logcumsumexp": lambda t, z: t.logcumsumexp(z, 0),
}


def _numpy(t):
    return (t.resolve_conj() if hasattr(t, "resolve_conj") else t).detach().numpy()


def _results_and_gradients(lib, call, data, dtype):
    z = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
    out = call(lib, z)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(5)
    weights = [lib.tensor(rng.standard_normal(tuple(o.shape)) + (
        1j * rng.standard_normal(tuple(o.shape)) if o.is_complex() else 0)).to(o.dtype)
        for o in outs]
    (grad,) = lib.autograd.grad(list(outs), [z], weights, allow_unused=True)
    grad = np.zeros_like(data) if grad is None else _numpy(grad)  # norm p=0: no gradient
    return [(str(o.dtype).split(".")[-1], _numpy(o)) for o in outs], grad


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(COMPLEX_INPUT_CALLS))
def test_complex_input_results_and_gradients_match_torch(torch, name, dtype):
    data = _z(3, 4, seed=6)
    data[1, 2] = 0  # a zero element: the norms' masked branches
    want_out, want_grad = _results_and_gradients(torch, COMPLEX_INPUT_CALLS[name], data, dtype)
    got_out, got_grad = _results_and_gradients(gradnb, COMPLEX_INPUT_CALLS[name], data, dtype)
    tol = 1e-4 if dtype == "complex64" else 1e-10
    for (want_dtype, want), (got_dtype, got) in zip(want_out, got_out, strict=True):
        assert got_dtype == want_dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_grad, want_grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["var", "std", "norm p=3", "logaddexp", "logcumsumexp"])
def test_complex_input_gradcheck_and_gradgradcheck(name):
    z = gradnb.tensor(_z(3, 4, seed=7), requires_grad=True)

    def f(z):
        out = COMPLEX_INPUT_CALLS[name](gradnb, z)
        return out.abs() if out.is_complex() else out

    assert gradcheck(f, (z,))
    assert gradgradcheck(f, (z,))


# Zero bases: PyTorch's complex power is C's cpow (0 where Re b > 0, inf + nan j where Re b < 0,
# NaN where Re b == 0, 0 ** 0 included), and its exponent gradient at a zero base is 0 only
# where the exponent is real and >= 0 (-inf for a negative real one, NaN for a complex one).
ZERO_BASE_POWERS = {
    "0 ** z": lambda t, z, x: 0 ** z,
    "0 ** x": lambda t, z, x: 0 ** x,
    "0.0 ** x": lambda t, z, x: 0.0 ** x,
    "0j ** x": lambda t, z, x: 0j ** x,
    "zeros ** z": lambda t, z, x: t.zeros(6, dtype=t.float64) ** z,
    "complex zeros ** x": lambda t, z, x: t.zeros(6, dtype=t.complex128) ** x,
    "complex zeros ** z": lambda t, z, x: t.zeros(6, dtype=t.complex128) ** z,
    "z * 0 ** 2.5": lambda t, z, x: (z * 0) ** 2.5,
    "z * 0 ** (2 + 1j)": lambda t, z, x: (z * 0) ** (2 + 1j),
    "z * 0 ** x": lambda t, z, x: (z * 0) ** x,
    "x * 0 ** z": lambda t, z, x: (x * 0) ** z,
}


@pytest.mark.parametrize("name", list(ZERO_BASE_POWERS))
def test_zero_base_powers_and_gradients_match_torch(torch, name):
    z = np.array([1 + 2j, -1, 0, 2.5, 1j, -1 + 1j])
    x = np.array([1.0, -1, 0, 2.5, 0.5, -2])
    results = []
    for lib in (torch, gradnb):
        tz = lib.tensor(z, requires_grad=True)
        tx = lib.tensor(x, requires_grad=True)
        out = ZERO_BASE_POWERS[name](lib, tz, tx)
        weight = lib.ones_like(out) * (1 - 0.5j if out.is_complex() else 1)
        grads = lib.autograd.grad(out, [tz, tx], weight, allow_unused=True)
        results.append([_numpy(out)] + [None if g is None else _numpy(g) for g in grads])
    for want, got in zip(*results, strict=True):
        if want is None or got is None:
            assert not np.any(want if got is None else got)
            continue
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)  # NaN where torch has NaN
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64", "int64", "bool"])
def test_isreal_matches_torch(torch, dtype):
    data = np.array([1 + 1j, 2, complex(0, np.nan), complex(np.nan, 0), -0.0j, 3j])
    if not dtype.startswith("complex"):
        data = data.real
    for shape in ((6,), (2, 3), (0,)):
        values = data.reshape(-1)[: int(np.prod(shape))].reshape(shape)
        want = torch.isreal(torch.tensor(values).to(getattr(torch, dtype)))
        got = gradnb.isreal(gradnb.tensor(values).to(getattr(gradnb, dtype)))
        assert got.dtype == gradnb.bool and got.tolist() == want.tolist()
        assert gradnb.tensor(values).isreal().tolist() == torch.tensor(values).isreal().tolist()
