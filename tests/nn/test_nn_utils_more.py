"""The rest of ``nn.utils``: parameters <-> vector, the two halves of clip_grad_norm_ and its
deprecated alias, conv/linear + batch-norm fusion, skip_init, and the hook-based weight and
spectral norm; each compared with PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb
from gradnb import nn

pytestmark = pytest.mark.torch


def _raises_like(torch, ours, theirs):
    """The same exception type, and the same first sentence with gradnb. for torch."""
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(type(expected.value)) as got:
        ours()
    first = str(expected.value).split(". ")[0].replace("torch.", "gradnb.")
    assert str(got.value).split(". ")[0] == first


# -- parameters_to_vector / vector_to_parameters -------------------------------------------------
def test_parameters_to_vector_matches_torch_and_is_differentiable(torch):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    ours = [gradnb.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    v, tv = nn.utils.parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    assert type(v.grad_fn).__name__ == type(tv.grad_fn).__name__
    (v * gradnb.arange(10.0, dtype=gradnb.float64)).sum().backward()
    (tv * torch.arange(10.0, dtype=torch.float64)).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.grad.numpy(), t.grad.numpy())


def test_parameters_to_vector_errors_match_torch(torch):
    _raises_like(torch, lambda: nn.utils.parameters_to_vector([]),
                 lambda: torch.nn.utils.parameters_to_vector([]))
    _raises_like(torch, lambda: nn.utils.parameters_to_vector([gradnb.ones(2, 3).t()]),
                 lambda: torch.nn.utils.parameters_to_vector([torch.ones(2, 3).t()]))


def test_vector_to_parameters_shares_the_vector_memory_as_torch(torch):
    lin, tlin = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    vec = gradnb.arange(8.0)
    tvec = torch.arange(8.0)
    versions = [p._version for p in lin.parameters()]
    nn.utils.vector_to_parameters(vec, lin.parameters())
    torch.nn.utils.vector_to_parameters(tvec, tlin.parameters())
    for p, tp in zip(lin.parameters(), tlin.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())
        assert isinstance(p, nn.Parameter) and p.requires_grad
    assert [p._version for p in lin.parameters()] == versions
    vec.add_(1)
    tvec.add_(1)
    np.testing.assert_array_equal(lin.bias.detach().numpy(), tlin.bias.detach().numpy())
    assert lin.bias.tolist() == [7.0, 8.0]
    # A longer vector is fine (the tail is unused); a shorter one is view's error.
    nn.utils.vector_to_parameters(gradnb.zeros(9), lin.parameters())
    _raises_like(torch, lambda: nn.utils.vector_to_parameters(gradnb.zeros(7), lin.parameters()),
                 lambda: torch.nn.utils.vector_to_parameters(torch.zeros(7), tlin.parameters()))
    _raises_like(torch, lambda: nn.utils.vector_to_parameters([1.0], lin.parameters()),
                 lambda: torch.nn.utils.vector_to_parameters([1.0], tlin.parameters()))


# -- get_total_norm / clip_grads_with_norm_ / clip_grad_norm -------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1, 0.5, 0, -1, float("inf"), "-inf"])
def test_get_total_norm_matches_torch(torch, norm_type):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(4),
              np.array([0.0, 2.0], dtype=np.float32)]
    ours = nn.utils.get_total_norm([gradnb.tensor(a) for a in arrays], norm_type)
    theirs = torch.nn.utils.get_total_norm([torch.tensor(a) for a in arrays], norm_type)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    one = nn.utils.get_total_norm(gradnb.tensor(arrays[0]), norm_type)
    np.testing.assert_allclose(one.numpy(), torch.nn.utils.get_total_norm(
        torch.tensor(arrays[0]), norm_type).numpy(), rtol=1e-6)


def test_get_total_norm_edges_match_torch(torch):
    assert nn.utils.get_total_norm([]).tolist() == torch.nn.utils.get_total_norm([]).tolist()
    nan = [float("nan"), 1.0]
    assert np.isnan(nn.utils.get_total_norm(gradnb.tensor(nan)).item())
    _raises_like(torch,
                 lambda: nn.utils.get_total_norm([gradnb.tensor(nan)], error_if_nonfinite=True),
                 lambda: torch.nn.utils.get_total_norm([torch.tensor(nan)],
                                                       error_if_nonfinite=True))
    _raises_like(torch, lambda: nn.utils.get_total_norm([gradnb.tensor([1, 2])]),
                 lambda: torch.nn.utils.get_total_norm([torch.tensor([1, 2])]))
    # A requires-grad input records no graph: the norm is a plain number.
    assert nn.utils.get_total_norm([gradnb.ones(2, requires_grad=True)]).grad_fn is None


@pytest.mark.parametrize("total_dtype", ["float32", "float64"])
def test_clip_grads_with_norm_matches_torch(torch, total_dtype):
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal((2, 2)).astype(np.float32), rng.standard_normal(3)]
    ours = [nn.Parameter(gradnb.zeros(g.shape, dtype=getattr(gradnb, str(g.dtype))))
            for g in grads]
    theirs = [torch.nn.Parameter(torch.zeros(g.shape, dtype=getattr(torch, str(g.dtype))))
              for g in grads]
    for p, tp, g in zip(ours, theirs, grads):
        p.grad, tp.grad = gradnb.tensor(g), torch.tensor(g)
    ours.append(nn.Parameter(gradnb.zeros(2)))  # no gradient: skipped
    theirs.append(torch.nn.Parameter(torch.zeros(2)))
    total = 3.7
    assert nn.utils.clip_grads_with_norm_(
        ours, 0.5, gradnb.tensor(total, dtype=getattr(gradnb, total_dtype))) is None
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.5, torch.tensor(
        total, dtype=getattr(torch, total_dtype)))
    for p, tp in zip(ours[:2], theirs[:2]):
        assert p.grad.dtype.itemsize == tp.grad.dtype.itemsize
        np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())
    assert ours[2].grad is None
    # A small norm never scales up.
    before = ours[0].grad.numpy().copy()
    nn.utils.clip_grads_with_norm_(ours[0], 10.0, gradnb.tensor(0.1))
    np.testing.assert_array_equal(ours[0].grad.numpy(), before)


def test_clip_grad_norm_is_deprecated_and_clips(torch):
    p, tp = nn.Parameter(gradnb.ones(2)), torch.nn.Parameter(torch.ones(2))
    p.grad, tp.grad = gradnb.tensor([3.0, 4.0]), torch.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning) as ours:
        total = nn.utils.clip_grad_norm([p], 1.0)
    with pytest.warns(FutureWarning) as theirs:
        ttotal = torch.nn.utils.clip_grad_norm([tp], 1.0)
    assert str(ours[0].message) == str(theirs[0].message).replace("torch.", "gradnb.")
    assert total.item() == ttotal.item()
    np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())


def test_clip_grad_norm_warns_on_an_empty_generator_as_torch(torch):
    with pytest.warns(UserWarning) as ours:
        total = nn.utils.clip_grad_norm_((p for p in []), 1.0)
    with pytest.warns(UserWarning) as theirs:
        torch.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    assert str(ours[0].message) == str(theirs[0].message)
    assert total.item() == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.utils.clip_grad_norm_([], 1.0)  # an empty list is silent


# -- conv / linear + batch norm fusion -----------------------------------------------------------
def _twin(torch, tmod, gmod):
    """``gmod`` with ``tmod``'s state (random running statistics so the fusion is not trivial)."""
    rng = np.random.default_rng(3)
    with torch.no_grad():
        for name, buf in tmod.named_buffers():
            if name.endswith("running_mean"):
                buf.copy_(torch.tensor(rng.standard_normal(buf.shape)))
            elif name.endswith("running_var"):
                buf.copy_(torch.tensor(rng.uniform(0.5, 2.0, buf.shape)))
        for name, p in tmod.named_parameters():
            p.copy_(torch.tensor(rng.standard_normal(p.shape)))
    gmod.load_state_dict({k: gradnb.tensor(v.numpy()) for k, v in tmod.state_dict().items()})
    return tmod.eval(), gmod.eval()


@pytest.mark.parametrize("kind, transpose, bias, affine", [
    ("Conv2d", False, True, True), ("Conv1d", False, False, True), ("Conv3d", False, True, False),
    ("ConvTranspose2d", True, True, True), ("ConvTranspose1d", True, False, False)])
def test_fuse_conv_bn_eval_equals_conv_then_bn_as_torch(torch, kind, transpose, bias, affine):
    dims = int(kind[-2])
    bn_kind = f"BatchNorm{dims}d"
    tconv = getattr(torch.nn, kind)(2, 3, 2, bias=bias)
    tbn = getattr(torch.nn, bn_kind)(3, affine=affine)
    tconv, conv = _twin(torch, tconv, getattr(nn, kind)(2, 3, 2, bias=bias))
    tbn, bn = _twin(torch, tbn, getattr(nn, bn_kind)(3, affine=affine))
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    tfused = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose=transpose)
    assert type(fused) is type(conv) and fused is not conv and not fused.training
    assert sorted(fused.state_dict()) == sorted(tfused.state_dict())
    for k, v in tfused.state_dict().items():
        np.testing.assert_allclose(fused.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(fused.weight, nn.Parameter) and fused.weight.requires_grad
    x = np.random.default_rng(4).standard_normal((2, 2) + (5,) * dims).astype(np.float32)
    with gradnb.no_grad():
        pair = bn(conv(gradnb.tensor(x)))
        np.testing.assert_allclose(fused(gradnb.tensor(x)).numpy(), pair.numpy(),
                                   rtol=1e-4, atol=1e-5)
    # The originals are untouched.
    np.testing.assert_array_equal(conv.weight.detach().numpy(), tconv.weight.detach().numpy())


def test_fuse_linear_bn_eval_equals_linear_then_bn_as_torch(torch):
    for out, feats in [(3, 3), (3, 1)]:
        tlin, lin = _twin(torch, torch.nn.Linear(4, out), nn.Linear(4, out))
        tbn, bn = _twin(torch, torch.nn.BatchNorm1d(feats), nn.BatchNorm1d(feats))
        fused = nn.utils.fuse_linear_bn_eval(lin, bn)
        tfused = torch.nn.utils.fuse_linear_bn_eval(tlin, tbn)
        for k, v in tfused.state_dict().items():
            np.testing.assert_allclose(fused.state_dict()[k].numpy(), v.numpy(), rtol=1e-5)
        x = gradnb.tensor(np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32))
        if feats == out:
            with gradnb.no_grad():
                np.testing.assert_allclose(fused(x).numpy(), bn(lin(x)).numpy(), rtol=1e-4,
                                           atol=1e-5)


def test_fusion_asserts_match_torch(torch):
    conv, tconv = nn.Conv2d(2, 3, 1), torch.nn.Conv2d(2, 3, 1)
    bn, tbn = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    _raises_like(torch, lambda: nn.utils.fuse_conv_bn_eval(conv, bn),
                 lambda: torch.nn.utils.fuse_conv_bn_eval(tconv, tbn))
    conv.eval(), tconv.eval()
    bn = nn.BatchNorm2d(3, track_running_stats=False).eval()
    tbn = torch.nn.BatchNorm2d(3, track_running_stats=False).eval()
    _raises_like(torch, lambda: nn.utils.fuse_conv_bn_eval(conv, bn),
                 lambda: torch.nn.utils.fuse_conv_bn_eval(tconv, tbn))
    lin, tlin = nn.Linear(2, 3).eval(), torch.nn.Linear(2, 3).eval()
    bn, tbn = nn.BatchNorm1d(2).eval(), torch.nn.BatchNorm1d(2).eval()
    with pytest.raises(AssertionError) as got:
        nn.utils.fuse_linear_bn_eval(lin, bn)
    with pytest.raises(AssertionError) as expected:
        torch.nn.utils.fuse_linear_bn_eval(tlin, tbn)
    assert str(got.value) == str(expected.value)


def test_fuse_weights_keep_the_conv_dtypes_as_torch(torch):
    w = np.ones((3, 2, 1, 1), dtype=np.float32)
    stats = [np.arange(3.0), np.ones(3), np.ones(3), np.zeros(3)]
    fw, fb = nn.utils.fuse_conv_bn_weights(gradnb.tensor(w), None, *map(gradnb.tensor, stats[:2]),
                                           1e-5, *map(gradnb.tensor, stats[2:]))
    tw, tb = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(w), None,
                                                 *map(torch.tensor, stats[:2]), 1e-5,
                                                 *map(torch.tensor, stats[2:]))
    assert (fw.dtype, fb.dtype) == (gradnb.float32, gradnb.float32)
    assert (tw.dtype, tb.dtype) == (torch.float32, torch.float32)
    assert fb.requires_grad == tb.requires_grad
    np.testing.assert_allclose(fb.detach().numpy(), tb.detach().numpy(), rtol=1e-6)


# -- skip_init -----------------------------------------------------------------------------------
def test_skip_init_builds_the_module_as_torch(torch):
    m = nn.utils.skip_init(nn.Linear, 5, 2, dtype=gradnb.float64)
    tm = torch.nn.utils.skip_init(torch.nn.Linear, 5, 2, dtype=torch.float64)
    assert sorted(m.state_dict()) == sorted(tm.state_dict())
    for (k, p), (_, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert tuple(p.shape) == tuple(tp.shape) and p.requires_grad == tp.requires_grad
        assert p.dtype == gradnb.float64 and str(p.device) == str(tp.device) == "cpu"
    bn = nn.utils.skip_init(nn.BatchNorm1d, num_features=3)
    assert sorted(bn.state_dict()) == sorted(torch.nn.utils.skip_init(
        torch.nn.BatchNorm1d, num_features=3).state_dict())


def test_skip_init_errors_match_torch(torch):
    _raises_like(torch, lambda: nn.utils.skip_init(int), lambda: torch.nn.utils.skip_init(int))
    _raises_like(torch, lambda: nn.utils.skip_init(nn.ReLU),
                 lambda: torch.nn.utils.skip_init(torch.nn.ReLU))


# -- hook-based weight norm ----------------------------------------------------------------------
def _same_state(mod, tmod):
    assert list(mod.state_dict()) == list(tmod.state_dict())
    for k, v in tmod.state_dict().items():
        np.testing.assert_allclose(mod.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm_matches_torch(torch, dim):
    tconv, conv = _twin(torch, torch.nn.Conv2d(2, 3, 2), nn.Conv2d(2, 3, 2))
    with pytest.warns(FutureWarning) as ours:
        nn.utils.weight_norm(conv, dim=dim)
    with pytest.warns(FutureWarning) as theirs:
        torch.nn.utils.weight_norm(tconv, dim=dim)
    assert str(ours[0].message) == str(theirs[0].message).replace("torch.", "gradnb.")
    _same_state(conv, tconv)
    assert "weight" not in conv._parameters and not isinstance(conv.weight, nn.Parameter)
    # The hook recomputes the weight from g and v before each forward (and gradients reach them).
    with gradnb.no_grad():
        conv.weight_g.mul_(2.0)
    with torch.no_grad():
        tconv.weight_g.mul_(2.0)
    x = np.random.default_rng(6).standard_normal((1, 2, 4, 4)).astype(np.float32)
    out, tout = conv(gradnb.tensor(x)), tconv(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    for name in ("weight_g", "weight_v"):
        np.testing.assert_allclose(getattr(conv, name).grad.numpy(),
                                   getattr(tconv, name).grad.numpy(), rtol=1e-4, atol=1e-5)
    nn.utils.remove_weight_norm(conv)
    torch.nn.utils.remove_weight_norm(tconv)
    _same_state(conv, tconv)
    assert isinstance(conv.weight, nn.Parameter) and not conv._forward_pre_hooks


def test_weight_norm_errors_match_torch(torch):
    lin, tlin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    _raises_like(torch, lambda: nn.utils.remove_weight_norm(lin),
                 lambda: torch.nn.utils.remove_weight_norm(tlin))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(lin)
        torch.nn.utils.weight_norm(tlin)
        _raises_like(torch, lambda: nn.utils.weight_norm(lin),
                     lambda: torch.nn.utils.weight_norm(tlin))
    # A weight-normed module's state loads into a fresh one (the keys are weight_g/weight_v).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        other = nn.utils.weight_norm(nn.Linear(2, 2))
    other.load_state_dict(lin.state_dict())
    np.testing.assert_array_equal(other.weight_v.detach().numpy(), lin.weight_v.detach().numpy())


# -- hook-based spectral norm --------------------------------------------------------------------
def _spectral_twin(torch, kind, **kwargs):
    """A module and its torch twin under spectral_norm, with torch's random u, v copied over."""
    tmod, mod = _twin(torch, getattr(torch.nn, kind)(3, 4, 2) if kind != "Linear"
                      else torch.nn.Linear(5, 3),
                      getattr(nn, kind)(3, 4, 2) if kind != "Linear" else nn.Linear(5, 3))
    tmod.train(), mod.train()
    torch.nn.utils.spectral_norm(tmod, **kwargs)
    nn.utils.spectral_norm(mod, **kwargs)
    with gradnb.no_grad():
        for name in ("weight_u", "weight_v"):
            getattr(mod, name).copy_(gradnb.tensor(getattr(tmod, name).numpy()))
    return mod, tmod


@pytest.mark.parametrize("kind, kwargs", [("Linear", {}), ("Conv2d", {"n_power_iterations": 3}),
                                          ("ConvTranspose2d", {}), ("Conv2d", {"dim": 1})])
def test_spectral_norm_matches_torch(torch, kind, kwargs):
    mod, tmod = _spectral_twin(torch, kind, **kwargs)
    _same_state(mod, tmod)
    assert list(mod.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert isinstance(mod.weight_orig, nn.Parameter) and "weight" not in mod._parameters
    shape = (2, 5) if kind == "Linear" else (1, 3, 4, 4)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    for _ in range(2):  # training mode: each forward refines u and v in place
        out, tout = mod(gradnb.tensor(x)), tmod(torch.tensor(x))
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        _same_state(mod, tmod)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(mod.weight_orig.grad.numpy(), tmod.weight_orig.grad.numpy(),
                               rtol=1e-4, atol=1e-5)
    # Eval mode: no power iteration, u and v stay.
    mod.eval(), tmod.eval()
    u = mod.weight_u.numpy().copy()
    np.testing.assert_allclose(mod(gradnb.tensor(x)).detach().numpy(),
                               tmod(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(mod.weight_u.numpy(), u)
    nn.utils.remove_spectral_norm(mod)
    torch.nn.utils.remove_spectral_norm(tmod)
    _same_state(mod, tmod)
    assert isinstance(mod.weight, nn.Parameter) and not mod._forward_pre_hooks


def test_spectral_norm_errors_match_torch(torch):
    lin, tlin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    _raises_like(torch, lambda: nn.utils.remove_spectral_norm(lin),
                 lambda: torch.nn.utils.remove_spectral_norm(tlin))
    _raises_like(torch, lambda: nn.utils.spectral_norm(lin, n_power_iterations=0),
                 lambda: torch.nn.utils.spectral_norm(tlin, n_power_iterations=0))
    _raises_like(torch, lambda: nn.utils.spectral_norm(nn.Linear(2, 2, bias=False), "bias"),
                 lambda: torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2, bias=False), "bias"))
    nn.utils.spectral_norm(lin)
    torch.nn.utils.spectral_norm(tlin)
    _raises_like(torch, lambda: nn.utils.spectral_norm(lin),
                 lambda: torch.nn.utils.spectral_norm(tlin))
    other = nn.utils.spectral_norm(nn.Linear(2, 2))
    other.load_state_dict(lin.state_dict())
    np.testing.assert_array_equal(other.weight_u.numpy(), lin.weight_u.numpy())


def test_clip_grads_with_norm_refuses_a_float_norm_as_torch(torch):
    p, tp = nn.Parameter(gradnb.ones(2)), torch.nn.Parameter(torch.ones(2))
    p.grad, tp.grad = gradnb.tensor([3.0, 4.0]), torch.tensor([3.0, 4.0])
    with pytest.raises(TypeError):
        torch.nn.utils.clip_grads_with_norm_(tp, 1.0, 5.0)
    with pytest.raises(TypeError, match=r"^clamp\(\) received an invalid combination"):
        nn.utils.clip_grads_with_norm_(p, 1.0, 5.0)
    assert p.grad.tolist() == tp.grad.tolist() == [3.0, 4.0]  # nothing half-applied


# -- stateless.functional_call (deprecated) ------------------------------------------------------
def test_stateless_functional_call_warns_and_calls_as_torch(torch):
    tlin, lin = _twin(torch, torch.nn.Linear(2, 1), nn.Linear(2, 1))
    x = np.ones((1, 2), dtype=np.float32)
    with pytest.warns(FutureWarning) as ours:
        out = nn.utils.stateless.functional_call(lin, {"weight": gradnb.ones(1, 2)},
                                                 (gradnb.tensor(x),))
    with pytest.warns(FutureWarning) as theirs:
        tout = torch.nn.utils.stateless.functional_call(tlin, {"weight": torch.ones(1, 2)},
                                                        (torch.tensor(x),))
    assert str(ours[0].message) == str(theirs[0].message).replace("torch.", "gradnb.")
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        _raises_like(torch, lambda: nn.utils.stateless.functional_call(
            lin, {"weight": gradnb.ones(1, 2)}, (gradnb.tensor(x),), strict=True),
            lambda: torch.nn.utils.stateless.functional_call(
            tlin, {"weight": torch.ones(1, 2)}, (torch.tensor(x),), strict=True))


# -- conv weight memory format -------------------------------------------------------------------
def test_convert_conv_weight_memory_format_as_torch(torch):
    model = nn.Sequential(nn.Conv2d(3, 4, 2), nn.Sequential(nn.ConvTranspose2d(4, 2, 2)),
                          nn.Conv3d(2, 2, 1), nn.Linear(2, 2))
    weights = [m.weight for m in model.modules() if hasattr(m, "weight")]
    before = [w.detach().numpy().copy() for w in weights]
    conv_data = weights[0].detach().numpy()
    assert nn.utils.convert_conv2d_weight_memory_format(model, gradnb.channels_last) is model
    assert nn.utils.convert_conv3d_weight_memory_format(model, gradnb.channels_last_3d) is model
    after = [m.weight for m in model.modules() if hasattr(m, "weight")]
    assert all(a is w for a, w in zip(after, weights))  # the same Parameters, fresh data
    for w, b in zip(after, before):
        np.testing.assert_array_equal(w.detach().numpy(), b)
    assert not np.shares_memory(weights[0].detach().numpy(), conv_data)
    tmodel = torch.nn.Conv2d(3, 4, 2)
    tw = tmodel.weight
    torch.nn.utils.convert_conv2d_weight_memory_format(tmodel, torch.channels_last)
    assert tmodel.weight is tw


@pytest.mark.parametrize("norm_type", [2.0, 0.0, float("inf"), -float("inf"), -1.0])
def test_get_total_norm_of_a_sparse_gradient_equals_its_dense_form(norm_type):
    # A gradnb extension (PyTorch 2.13 refuses sparse tensors here): the implicit zeros count.
    s = gradnb.sparse_coo_tensor([[1, 3]], [3.0, -4.0], (5,))
    assert (nn.utils.get_total_norm([s], norm_type).item()
            == nn.utils.get_total_norm([s.to_dense()], norm_type).item())


def test_hook_norms_refuse_a_lazy_module_as_torch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for ours, theirs in [(nn.utils.weight_norm, torch.nn.utils.weight_norm),
                             (nn.utils.spectral_norm, torch.nn.utils.spectral_norm)]:
            lazy = nn.LazyLinear(3)
            _raises_like(torch, lambda f=ours, m=lazy: f(m),
                         lambda f=theirs: f(torch.nn.LazyLinear(3)))
            assert "weight" in lazy._parameters and not lazy._forward_pre_hooks
