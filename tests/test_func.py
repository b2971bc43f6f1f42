"""gradnb.func against torch.func: transforms, composition, argnums/has_aux, functional_call,
vmap, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import func


def _x(lib, *shape, seed=0):
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.standard_normal(shape), dtype=lib.float64)


def _np(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_np(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _np(v) for k, v in tree.items()}
    return np.asarray(tree.detach().numpy())


def _close(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _close(o, t)
    elif isinstance(theirs, dict):
        assert ours.keys() == theirs.keys()
        for k in theirs:
            _close(ours[k], theirs[k])
    else:
        assert tuple(ours.shape) == tuple(theirs.shape)
        rtol = 1e-7 if _np(theirs).dtype == np.float64 else 1e-5
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=1e-10)


def f_scalar(lib):
    return lambda x, y: (x.sin().sum(0) * y * lib.matmul(x, y).sum()).sum()


def f_vector(lib):
    return lambda x, y: (lib.matmul(x, y).tanh(), x.exp().sum(0))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)])
def test_grad_and_value_match_torch(torch, argnums):
    args_g = (_x(gradnb, 2, 3), _x(gradnb, 3, seed=1))
    args_t = (_x(torch, 2, 3), _x(torch, 3, seed=1))
    _close(func.grad(f_scalar(gradnb), argnums)(*args_g),
           torch.func.grad(f_scalar(torch), argnums)(*args_t))
    _close(func.grad_and_value(f_scalar(gradnb), argnums)(*args_g),
           torch.func.grad_and_value(f_scalar(torch), argnums)(*args_t))


def test_grad_has_aux_and_pytrees(torch):
    def make(lib):
        def f(params, x):
            out = (params["w"] * x).sum() + params["b"][0].sum()
            return out, {"out": out, "x": x}
        return f

    params_g = {"w": _x(gradnb, 3), "b": [_x(gradnb, 1, seed=2)]}
    params_t = {"w": _x(torch, 3), "b": [_x(torch, 1, seed=2)]}
    ours = func.grad(make(gradnb), has_aux=True)(params_g, _x(gradnb, 3, seed=3))
    theirs = torch.func.grad(make(torch), has_aux=True)(params_t, _x(torch, 3, seed=3))
    _close(ours, theirs)


def test_grad_composes(torch):
    f_g = lambda x: (x ** 4).sum()
    x_g, x_t = _x(gradnb, 3), _x(torch, 3)
    second = func.grad(lambda x: func.grad(f_g)(x).sum())(x_g)
    f_t = lambda x: (x ** 4).sum()
    _close(second, torch.func.grad(lambda x: torch.func.grad(f_t)(x).sum())(x_t))
    assert not second.requires_grad


@pytest.mark.parametrize("api", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacobians_match_torch(torch, api, argnums):
    args_g = (_x(gradnb, 2, 3), _x(gradnb, 3, seed=1))
    args_t = (_x(torch, 2, 3), _x(torch, 3, seed=1))
    _close(getattr(func, api)(f_vector(gradnb), argnums)(*args_g),
           getattr(torch.func, api)(f_vector(torch), argnums)(*args_t))


def test_hessian_and_nested_jacobians_match_torch(torch):
    args_g, args_t = (_x(gradnb, 2, 3), _x(gradnb, 3, seed=1)), (_x(torch, 2, 3),
                                                                  _x(torch, 3, seed=1))
    _close(func.hessian(f_scalar(gradnb), (0, 1))(*args_g),
           torch.func.hessian(f_scalar(torch), (0, 1))(*args_t))
    _close(func.jacrev(func.jacrev(f_scalar(gradnb)))(*args_g),
           torch.func.jacrev(torch.func.jacrev(f_scalar(torch)))(*args_t))


def test_vjp_and_jvp_match_torch(torch):
    args_g = (_x(gradnb, 2, 3), _x(gradnb, 3, seed=1))
    args_t = (_x(torch, 2, 3), _x(torch, 3, seed=1))
    out_g, vjp_g = func.vjp(f_vector(gradnb), *args_g)
    out_t, vjp_t = torch.func.vjp(f_vector(torch), *args_t)
    _close(out_g, out_t)
    cot_g = (_x(gradnb, 2, seed=4), _x(gradnb, 3, seed=5))
    cot_t = (_x(torch, 2, seed=4), _x(torch, 3, seed=5))
    _close(vjp_g(cot_g), vjp_t(cot_t))
    tan_g = (_x(gradnb, 2, 3, seed=6), _x(gradnb, 3, seed=7))
    tan_t = (_x(torch, 2, 3, seed=6), _x(torch, 3, seed=7))
    _close(func.jvp(f_vector(gradnb), args_g, tan_g), torch.func.jvp(f_vector(torch), args_t,
                                                                      tan_t))


def test_functional_call_matches_torch(torch):
    lin_g, lin_t = gradnb.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    params_g = {"weight": _x(gradnb, 2, 3).float(), "bias": _x(gradnb, 2, seed=1).float()}
    params_t = {"weight": _x(torch, 2, 3).float(), "bias": _x(torch, 2, seed=1).float()}
    x_g, x_t = _x(gradnb, 4, 3, seed=2).float(), _x(torch, 4, 3, seed=2).float()
    _close(func.functional_call(lin_g, params_g, (x_g,)),
           torch.func.functional_call(lin_t, params_t, (x_t,)))
    assert lin_g.weight is not params_g["weight"]  # restored after the call
    grads = func.grad(lambda p: func.functional_call(lin_g, p, x_g).sum())(params_g)
    theirs = torch.func.grad(lambda p: torch.func.functional_call(lin_t, p, x_t).sum())(params_t)
    _close(grads, theirs)
    with pytest.raises(RuntimeError, match="Missing key"):
        func.functional_call(lin_g, {"weight": params_g["weight"]}, (x_g,), strict=True)


@pytest.mark.parametrize(("in_dims", "out_dims"), [(0, 0), ((1, None), 0), ((0, 0), (1, 0))])
def test_vmap_matches_torch(torch, in_dims, out_dims):
    def make(lib):
        return lambda a, b: (a * b.exp(), lib.dot(a, b))

    a_g, a_t = _x(gradnb, 4, 3), _x(torch, 4, 3)
    b_g, b_t = (_x(gradnb, 3, seed=1), _x(torch, 3, seed=1)) if in_dims == (1, None) \
        else (_x(gradnb, 4, 3, seed=1), _x(torch, 4, 3, seed=1))
    if in_dims == (1, None):
        a_g, a_t = a_g.t(), a_t.t()
    _close(func.vmap(make(gradnb), in_dims, out_dims)(a_g, b_g),
           torch.func.vmap(make(torch), in_dims, out_dims)(a_t, b_t))


def test_vmap_of_grad_gives_per_sample_gradients(torch):
    w_g, w_t = _x(gradnb, 3), _x(torch, 3)
    xs_g, xs_t = _x(gradnb, 5, 3, seed=1), _x(torch, 5, 3, seed=1)
    loss_g = lambda w, x: (w * x).sum().tanh()
    loss_t = lambda w, x: (w * x).sum().tanh()
    _close(func.vmap(func.grad(loss_g), (None, 0))(w_g, xs_g),
           torch.func.vmap(torch.func.grad(loss_t), (None, 0))(w_t, xs_t))


def test_errors_match_torch(torch):
    cases = [
        (lambda m, lib: m.grad(lambda x: x * 2)(_x(lib, 3)), RuntimeError),
        (lambda m, lib: m.jvp(lambda x: x, _x(lib, 3), _x(lib, 3)), RuntimeError),
        (lambda m, lib: m.vmap(lambda x, y: x + y)(_x(lib, 3), _x(lib, 4)), ValueError),
        (lambda m, lib: m.grad(lambda x: x.sum(), argnums=2)(_x(lib, 3)), RuntimeError),
    ]
    for call, error in cases:
        with pytest.raises(error) as theirs:
            call(torch.func, torch)
        with pytest.raises(error) as ours:
            call(func, gradnb)
        assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


def test_transforms_keep_the_device(device):
    from gradnb.autograd import forward_ad
    from gradnb.autograd.functional import hvp, jacobian

    x = gradnb.ones(2, device=device)
    f = lambda t: (t ** 3).sum()
    results = [func.grad(f)(x), func.hessian(f)(x), func.jacrev(gradnb.sin)(x),
               func.jacfwd(gradnb.sin)(x), jacobian(gradnb.sin, x),
               jacobian(gradnb.sin, x, vectorize=True, strategy="forward-mode"),
               hvp(f, x, x)[1], func.vmap(gradnb.sin)(x.reshape(2, 1))]
    with forward_ad.dual_level():
        results.append(forward_ad.unpack_dual(forward_ad.make_dual(x, x).exp()).tangent)
    assert all(r.device.type == device for r in results)


# -- forward mode inside forward (or reverse) mode: second and third derivatives -----------------
def _nested(outer, inner):
    return lambda lib, fn, **kw: getattr(lib.func, outer)(getattr(lib.func, inner)(fn, **kw), **kw)


@pytest.mark.torch
@pytest.mark.parametrize("outer, inner", [("jacfwd", "jacfwd"), ("jacrev", "jacfwd"),
                                          ("jacfwd", "jacrev"), ("jacrev", "jacrev")])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_nested_jacobians_give_torchs_hessians(torch, outer, inner, argnums):
    compose = _nested(outer, inner)
    ours = compose(gradnb, f_scalar(gradnb), argnums=argnums)(_x(gradnb, 2, 3),
                                                              _x(gradnb, 3, seed=1))
    theirs = compose(torch, f_scalar(torch), argnums=argnums)(_x(torch, 2, 3),
                                                             _x(torch, 3, seed=1))
    _close(ours, theirs)


@pytest.mark.torch
def test_nested_jacfwd_of_a_vector_function_and_third_order(torch):
    def jac2(lib):
        return lib.func.jacfwd(lib.func.jacfwd(f_vector(lib), argnums=(0, 1)), argnums=1)

    _close(jac2(gradnb)(_x(gradnb, 2, 3), _x(gradnb, 3, seed=1)),
           jac2(torch)(_x(torch, 2, 3), _x(torch, 3, seed=1)))

    def third(lib):
        return lib.func.jacfwd(lib.func.jacfwd(lib.func.jacfwd(lambda x: (x ** 4 * x.sin()).sum())))

    _close(third(gradnb)(_x(gradnb, 3)), third(torch)(_x(torch, 3)))
    assert not third(gradnb)(_x(gradnb, 3)).requires_grad


def test_vmap_is_also_at_the_top_level(torch):
    x = gradnb.arange(6.0).reshape(2, 3)
    assert gradnb.vmap is func.vmap
    _close(gradnb.vmap(lambda r: (r * r).sum())(x),
           torch.vmap(lambda r: (r * r).sum())(torch.arange(6.0).reshape(2, 3)))
