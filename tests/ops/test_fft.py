"""``gradnb.fft`` and ``stft``: values, dtypes and gradients against ``torch.fft`` for every norm
and size argument, and gradcheck/gradgradcheck in float64/complex128."""

import numpy as np
import pytest

import gradnb
from gradnb.autograd import gradcheck, gradgradcheck

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "hfftn",
       "ihfft2", "ihfftn"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}


def _input(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if name not in REAL_INPUT:
        data = data + 1j * rng.standard_normal(shape)
    return data


def _compare(torch, name, data, kwargs):
    t = torch.tensor(data, requires_grad=True)
    g = gradnb.tensor(data, requires_grad=True)
    t_out = getattr(torch.fft, name)(t, **kwargs)
    g_out = getattr(gradnb.fft, name)(g, **kwargs)
    assert g_out.dtype.name == str(t_out.dtype).removeprefix("torch.")
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().resolve_conj().numpy(), atol=1e-10)
    weights = np.random.default_rng(9).standard_normal(tuple(t_out.shape) + (2,))
    w = weights[..., 0] + 1j * weights[..., 1] if t_out.is_complex() else weights[..., 0]
    (t_out * torch.tensor(w)).real.sum().backward()
    (g_out * gradnb.tensor(w)).real.sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.resolve_conj().numpy(), atol=1e-10)


@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("n", [None, 3, 8])
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_matches_torch(torch, name, n, norm):
    _compare(torch, name, _input(name, (2, 5)), {"n": n, "dim": 0 if n == 3 else -1,
                                                  "norm": norm})


N_D_ARGS = [{}, {"s": (3, 6)}, {"dim": (0, 2)}, {"s": (4, -1), "dim": (2, 1)},
            {"norm": "ortho", "dim": (-1,)}, {"norm": "forward"}]


@pytest.mark.parametrize("name, args", [
    (name, args) for name in N_D for args in N_D_ARGS
    if not (name.endswith("2") and len(args.get("dim", (0, 1))) != 2)  # fft2 forms: two dims
])
def test_n_dimensional_matches_torch(torch, name, args):
    _compare(torch, name, _input(name, (3, 4, 5)), args)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn",
                                  "hfftn", "ihfftn"])
def test_gradcheck_and_gradgradcheck(name):
    data = _input(name, (3, 4), seed=1)
    x = gradnb.tensor(data, requires_grad=True)
    kwargs = {"norm": "ortho"} if name.endswith("n") else {"n": 5}

    def fn(t):
        return getattr(gradnb.fft, name)(t, **kwargs)

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_real_input_promotes_and_shifts_match_torch(torch):
    data = np.arange(12).reshape(3, 4)
    assert gradnb.fft.fft(gradnb.tensor(data)).dtype == gradnb.complex64
    for name in ("fftshift", "ifftshift"):
        for dim in (None, 0, (0, 1)):
            want = getattr(torch.fft, name)(torch.tensor(data), dim=dim).numpy()
            got = getattr(gradnb.fft, name)(gradnb.tensor(data), dim=dim).numpy()
            np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(gradnb.fft.fftfreq(5, 0.5).numpy(), torch.fft.fftfreq(5, 0.5))
    np.testing.assert_allclose(gradnb.fft.rfftfreq(6).numpy(), torch.fft.rfftfreq(6))


def test_errors_match_torch(torch):
    for call in (lambda m: m.fft.fft(m.tensor(1.0)), lambda m: m.fft.fft(m.ones(3), n=0),
                 lambda m: m.fft.rfft(m.ones(3, dtype=m.complex64)),
                 lambda m: m.fft.fftn(m.ones(3, 3), dim=(0, 0))):
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(gradnb)
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": (5,)}, {"s": (0, 3)}])
@pytest.mark.parametrize("name", sorted(REAL_INPUT))
def test_complex_input_to_a_real_transform_is_refused_as_torch(torch, name, kwargs, dtype):
    """Each real-input transform refuses a complex signal in PyTorch's words (``rfftn`` says
    "real-valued", ``ihfftn`` checks its dims first and names floating-point dtypes)."""
    if name in ("rfft", "ihfft"):
        kwargs = {"n": 0} if kwargs.get("s") else {"dim": 5} if kwargs else {}

    def call(m):
        return getattr(m.fft, name)(m.ones(2, 3, dtype=getattr(m, dtype)), **kwargs)

    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(gradnb)
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


@pytest.mark.parametrize("kwargs", [
    {"n_fft": 8, "return_complex": True},
    {"n_fft": 8, "hop_length": 3, "win_length": 6, "center": False, "return_complex": True},
    {"n_fft": 8, "pad_mode": "constant", "normalized": True, "return_complex": False},
    {"n_fft": 8, "onesided": False, "pad_mode": "circular", "return_complex": True},
])
def test_stft_matches_torch(torch, kwargs):
    data = np.random.default_rng(3).standard_normal((2, 30))
    window = np.hanning(kwargs.get("win_length", 8))
    t, tw = torch.tensor(data, requires_grad=True), torch.tensor(window, requires_grad=True)
    g, gw = gradnb.tensor(data, requires_grad=True), gradnb.tensor(window, requires_grad=True)
    t_out = torch.stft(t, window=tw, **kwargs)
    g_out = gradnb.stft(g, window=gw, **kwargs)
    assert tuple(g_out.shape) == tuple(t_out.shape) and g_out.dtype.name == str(
        t_out.dtype).removeprefix("torch.")
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().resolve_conj().numpy(), atol=1e-10)
    t_out.abs().sum().backward()
    g_out.abs().sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), atol=1e-8)
    np.testing.assert_allclose(gw.grad.numpy(), tw.grad.numpy(), atol=1e-8)


def test_stft_requires_return_complex_for_real_input(torch):
    with pytest.raises(RuntimeError) as want:
        torch.stft(torch.ones(20), 8)
    with pytest.raises(RuntimeError) as got:
        gradnb.stft(gradnb.ones(20), 8)
    assert str(got.value) == str(want.value)
