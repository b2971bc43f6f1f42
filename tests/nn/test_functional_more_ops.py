"""nn.functional ops added for op_db's nn family: max_unpool, upsample_*, the dropout variants,
constant_pad_nd, pdist, channel_shuffle, the triplet losses. Each: gradcheck and gradgradcheck in
float64, the same values, gradients and errors as PyTorch on the same inputs, and its module."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F
from gradnb import nn
from gradnb.autograd import gradcheck, gradgradcheck


def rand(*shape, requires_grad=True):
    return gradnb.randn(*shape, dtype=gradnb.float64, requires_grad=requires_grad)


def both(torch, x):
    """The same float64 values as a gradnb leaf and a torch leaf."""
    data = x.detach().numpy() if isinstance(x, gradnb.Tensor) else np.asarray(x)
    return (gradnb.tensor(data, dtype=gradnb.float64, requires_grad=True),
            torch.tensor(data, dtype=torch.float64, requires_grad=True))


def assert_same(g, t):
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


def assert_same_with_grads(torch, fn_g, fn_t, *arrays):
    """Forward and gradients of ``fn_g`` (gradnb) and ``fn_t`` (torch) agree on ``arrays``."""
    pairs = [both(torch, a) for a in arrays]
    out_g = fn_g(*[g for g, _ in pairs])
    out_t = fn_t(*[t for _, t in pairs])
    assert_same(out_g, out_t)
    seed = np.random.default_rng(0).standard_normal(tuple(out_t.shape))
    out_g.backward(gradnb.tensor(seed))
    out_t.backward(torch.tensor(seed))
    for g, t in pairs:
        if g.grad is None:  # gradnb records no node where the derivative is zero (pdist, p=0)
            assert not t.grad.any()
        else:
            assert_same(g.grad, t.grad)


# -- max_unpool --------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_inverts_max_pool(torch, n):
    shape = (2, 3) + (4,) * n
    x = np.random.default_rng(n).standard_normal(shape)
    pool_t = getattr(torch.nn.functional, f"max_pool{n}d")
    unpool_g = getattr(F, f"max_unpool{n}d")
    unpool_t = getattr(torch.nn.functional, f"max_unpool{n}d")
    pooled, idx = pool_t(torch.tensor(x), 2, return_indices=True)
    idx_g = gradnb.tensor(idx.numpy())
    assert_same_with_grads(torch, lambda v: unpool_g(v, idx_g, 2),
                           lambda v: unpool_t(v, idx, 2), pooled.numpy())
    v = gradnb.tensor(pooled.numpy(), requires_grad=True)
    assert gradcheck(lambda v: unpool_g(v, idx_g, 2), (v,))
    assert gradgradcheck(lambda v: unpool_g(v, idx_g, 2), (v,))


def test_max_unpool2d_output_size_and_module(torch):
    x = torch.randn(1, 1, 5, 5, dtype=torch.float64)
    pooled, idx = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    expected = torch.nn.MaxUnpool2d(2)(pooled, idx, output_size=[5, 5])
    got = nn.MaxUnpool2d(2)(gradnb.tensor(pooled.numpy()), gradnb.tensor(idx.numpy()),
                            output_size=[5, 5])
    assert_same(got, expected)
    assert repr(nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))
    assert repr(nn.MaxUnpool1d(3, 1)) == repr(torch.nn.MaxUnpool1d(3, 1))


@pytest.mark.parametrize(("call", "error"), [
    (lambda F, x, i: F.max_unpool2d(x, i, 2, output_size=[9, 9]), ValueError),
    (lambda F, x, i: F.max_unpool2d(x, i * 10, 2), RuntimeError),
    (lambda F, x, i: F.max_unpool2d(x, i.int(), 2), RuntimeError),
    (lambda F, x, i: F.max_unpool2d(x[0, 0], i[0, 0], 2), RuntimeError),
])
def test_max_unpool_errors_match_torch(torch, call, error):
    x = torch.randn(1, 1, 4, 4)
    pooled, idx = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    with pytest.raises(error) as expected:
        call(torch.nn.functional, pooled, idx)
    g_pooled, g_idx = gradnb.tensor(pooled.numpy()), gradnb.tensor(idx.numpy())
    with pytest.raises(error) as got:
        call(F, g_pooled, g_idx)
    assert str(got.value).split(".")[0] == str(expected.value).split(".")[0]


# -- upsample_*, constant_pad_nd, channel_shuffle, pdist ----------------------------------------
def test_upsample_nearest_and_bilinear(torch):
    x = np.random.default_rng(1).standard_normal((1, 2, 3, 4))
    with pytest.warns(UserWarning, match="deprecated"):
        assert_same_with_grads(torch, lambda v: F.upsample_nearest(v, scale_factor=2),
                               lambda v: torch.nn.functional.upsample_nearest(v, scale_factor=2),
                               x)
    with pytest.warns(UserWarning, match="deprecated"):
        assert_same_with_grads(torch, lambda v: F.upsample_bilinear(v, size=(5, 7)),
                               lambda v: torch.nn.functional.upsample_bilinear(v, size=(5, 7)), x)
    with pytest.warns(UserWarning):
        assert gradgradcheck(lambda v: F.upsample_bilinear(v, scale_factor=2), (rand(1, 1, 2, 3),))


@pytest.mark.parametrize("pad", [[1, 2], [0, 1, 2, 0], [-1, 2, 1, -1]])
def test_constant_pad_nd(torch, pad):
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    assert_same_with_grads(torch, lambda v: gradnb.constant_pad_nd(v, pad, 1.5),
                           lambda v: torch.constant_pad_nd(v, pad, 1.5), x)
    assert gradgradcheck(lambda v: gradnb.constant_pad_nd(v, pad), (rand(2, 3, 4),))


@pytest.mark.parametrize("pad", [[1, 2, 3], [1] * 8])
def test_constant_pad_nd_errors(torch, pad):
    with pytest.raises(RuntimeError) as expected:
        torch.constant_pad_nd(torch.zeros(2, 3), pad)
    with pytest.raises(RuntimeError, match=str(expected.value)[:30]):
        gradnb.constant_pad_nd(gradnb.zeros(2, 3), pad)


def test_channel_shuffle(torch):
    x = np.arange(2 * 6 * 2, dtype=np.float64).reshape(2, 6, 2)
    assert_same_with_grads(torch, lambda v: F.channel_shuffle(v, 3),
                           lambda v: torch.nn.functional.channel_shuffle(v, 3), x)
    assert_same(nn.ChannelShuffle(2)(gradnb.tensor(x)), torch.nn.ChannelShuffle(2)(torch.tensor(x)))
    assert repr(nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
    with pytest.raises(RuntimeError, match="divisible by groups. Got 6 channels and 4 groups"):
        F.channel_shuffle(gradnb.tensor(x), 4)


@pytest.mark.parametrize("p", [0, 1, 1.5, 2, float("inf")])
def test_pdist(torch, p):
    x = np.random.default_rng(3).standard_normal((5, 3))
    assert_same_with_grads(torch, lambda v: F.pdist(v, p), lambda v: torch.nn.functional.pdist(v, p),
                           x)
    assert gradcheck(lambda v: gradnb.pdist(v, p), (rand(4, 3),))
    assert tuple(F.pdist(rand(1, 3)).shape) == (0,)


# -- triplet losses ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"swap": True, "p": 1}, {"reduction": "none",
                                                                  "margin": 0.5}])
def test_triplet_margin_loss(torch, kwargs):
    a, p, n = (np.random.default_rng(i).standard_normal((4, 3)) for i in range(3))
    assert_same_with_grads(torch, lambda *v: F.triplet_margin_loss(*v, **kwargs).sum(),
                           lambda *v: torch.nn.functional.triplet_margin_loss(*v, **kwargs).sum(),
                           a, p, n)
    assert gradgradcheck(lambda *v: F.triplet_margin_loss(*v, **kwargs),
                         (rand(4, 3), rand(4, 3), rand(4, 3)))
    module = nn.TripletMarginLoss(**kwargs)
    expected = torch.nn.TripletMarginLoss(**kwargs)(*(torch.tensor(v) for v in (a, p, n)))
    assert_same(module(*(gradnb.tensor(v) for v in (a, p, n))), expected)


def test_triplet_margin_with_distance_loss(torch):
    a, p, n = (np.random.default_rng(i).standard_normal((4, 3)) for i in range(3))

    def cosine_g(x, y):
        return 1 - F.cosine_similarity(x, y)

    def cosine_t(x, y):
        return 1 - torch.nn.functional.cosine_similarity(x, y)

    assert_same_with_grads(
        torch, lambda *v: F.triplet_margin_with_distance_loss(*v, distance_function=cosine_g,
                                                              swap=True),
        lambda *v: torch.nn.functional.triplet_margin_with_distance_loss(
            *v, distance_function=cosine_t, swap=True), a, p, n)
    module = nn.TripletMarginWithDistanceLoss(margin=2.0)
    assert repr(module) == repr(torch.nn.TripletMarginWithDistanceLoss(margin=2.0))
    expected = torch.nn.TripletMarginWithDistanceLoss(margin=2.0)(
        *(torch.tensor(v) for v in (a, p, n)))
    assert_same(module(*(gradnb.tensor(v) for v in (a, p, n))), expected)


@pytest.mark.parametrize(("shapes", "kwargs", "error", "match"), [
    (((3, 4), (3, 4), (4,)), {}, RuntimeError, "same number of dimensions, but got: anchor 2D"),
    (((3, 4),) * 3, {"margin": 0}, ValueError, "margin must be greater than 0, got 0"),
    (((3, 4),) * 3, {"reduction": "x"}, ValueError, "x is not a valid value for reduction"),
])
def test_triplet_errors(torch, shapes, kwargs, error, match):
    for fn in ("triplet_margin_loss", "triplet_margin_with_distance_loss"):
        with pytest.raises(error, match=match):
            getattr(torch.nn.functional, fn)(*(torch.zeros(s) for s in shapes), **kwargs)
        with pytest.raises(error, match=match):
            getattr(F, fn)(*(gradnb.zeros(*s) for s in shapes), **kwargs)


# -- dropout variants --------------------------------------------------------------------------
@pytest.mark.parametrize(("fn", "shape", "lead"), [
    ("dropout1d", (3, 5, 4), 2), ("dropout1d", (5, 4), 1), ("dropout2d", (3, 5, 2, 2), 2),
    ("dropout3d", (3, 5, 2, 2, 2), 2), ("dropout3d", (5, 2, 2, 2), 1),
    ("feature_alpha_dropout", (3, 5, 2, 2), 2),
])
def test_feature_dropout_drops_whole_channels(fn, shape, lead):
    gradnb.manual_seed(0)
    x = gradnb.ones(*shape, dtype=gradnb.float64)
    channels = getattr(F, fn)(x, 0.5, True).numpy().reshape(int(np.prod(shape[:lead])), -1)
    assert np.all(channels == channels[:, :1])  # one draw per channel
    assert len(np.unique(channels[:, 0])) == 2  # some channels kept, some dropped

    def seeded(v):
        gradnb.manual_seed(1)  # the same mask on every call of the check
        return getattr(F, fn)(v, 0.5, True)

    assert gradcheck(seeded, (rand(*shape),))
    assert gradgradcheck(seeded, (rand(*shape),))


def test_dropout_scaling_matches_aten():
    """Kept units scale by 1 / (1 - p); alpha dropout keeps mean 0 and variance 1 of a
    standard normal input, its dropped units take a * (-alpha) + b."""
    gradnb.manual_seed(0)
    x = gradnb.ones(4, 10, 1, 1, dtype=gradnb.float64)
    out = F.dropout2d(x, 0.25).numpy()
    assert set(np.round(np.unique(out), 12)) <= {0.0, round(1 / 0.75, 12)}
    z = gradnb.randn(200_000, dtype=gradnb.float64)
    dropped = F.alpha_dropout(z, 0.3, training=True).numpy()
    assert abs(dropped.mean()) < 0.02 and abs(dropped.var() - 1) < 0.02


def test_dropout_identity_and_errors():
    x = rand(2, 3, 4, 4)
    for fn in (F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                             "but got 1.5"):
            fn(x, 1.5)
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False, as in PyTorch
    assert F.dropout2d(x, 0.5, training=False) is x
    assert np.all(F.feature_alpha_dropout(x, 1.0, True).detach().numpy() == 0)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a "
                                           "4D input"):
        F.dropout1d(x)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(rand(3), 0.5, True)
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        F.dropout2d(rand(2, 3, 4))


def test_dropout_inplace_and_modules(torch):
    gradnb.manual_seed(0)
    x = gradnb.ones(2, 4, 3, dtype=gradnb.float64)
    out = F.dropout1d(x, 0.5, True, inplace=True)
    assert out is x
    shapes = {"Dropout1d": (2, 3, 4), "Dropout2d": (2, 3, 2, 2), "Dropout3d": (2, 3, 2, 2, 2),
              "AlphaDropout": (3,), "FeatureAlphaDropout": (2, 3, 2)}
    for cls, shape in shapes.items():
        module = getattr(nn, cls)(0.2)
        assert repr(module) == repr(getattr(torch.nn, cls)(0.2))
        y = rand(*shape)
        assert module.eval()(y) is y
        assert module.train()(y).shape == y.shape


# -- grid_sample -------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(torch, mode, padding_mode, align_corners):
    rng = np.random.default_rng(4)
    image = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-1.4, 1.4, (2, 3, 6, 2))  # some points outside, for the padding

    def call(lib, functional):
        return lambda x, g: functional.grid_sample(x, g, mode, padding_mode, align_corners)

    assert_same_with_grads(torch, call(gradnb, F), call(torch, torch.nn.functional), image, grid)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d(torch, mode, padding_mode):
    rng = np.random.default_rng(5)
    volume = rng.standard_normal((1, 2, 3, 4, 3))
    grid = rng.uniform(-1.3, 1.3, (1, 2, 3, 2, 3))
    assert_same_with_grads(
        torch, lambda x, g: gradnb.grid_sampler_3d(x, g, ["bilinear", "nearest"].index(mode),
                                                   ["zeros", "border", "reflection"].index(
                                                       padding_mode), False),
        lambda x, g: torch.nn.functional.grid_sample(x, g, mode, padding_mode, False),
        volume, grid)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_gradgradcheck(mode):
    image = rand(1, 2, 3, 3)
    grid = gradnb.tensor(np.random.default_rng(6).uniform(-0.9, 0.9, (1, 2, 2, 2)),
                         requires_grad=True)
    fn = lambda x, g: F.grid_sample(x, g, mode, "reflection", align_corners=False)
    assert gradcheck(fn, (image, grid))
    assert gradgradcheck(fn, (image, grid))


@pytest.mark.parametrize(("args", "kwargs", "error"), [
    (((1, 1, 2, 2), (1, 2, 2, 2)), {"mode": "area"}, ValueError),
    (((1, 1, 2, 2), (1, 2, 2, 2)), {"padding_mode": "wrap"}, ValueError),
    (((1, 1, 2, 2), (2, 2, 2, 2)), {}, RuntimeError),
    (((1, 1, 2, 2), (1, 2, 2, 3)), {}, RuntimeError),
    (((1, 1, 2, 2, 2), (1, 2, 2, 2, 3)), {"mode": "bicubic"}, RuntimeError),
    (((1, 1, 2), (1, 2, 2)), {}, RuntimeError),
])
def test_grid_sample_errors_match_torch(torch, args, kwargs, error):
    kwargs = dict(kwargs, align_corners=False)
    with pytest.raises(error) as expected:
        torch.nn.functional.grid_sample(*(torch.zeros(s) for s in args), **kwargs)
    with pytest.raises(error) as got:
        F.grid_sample(*(gradnb.zeros(*s) for s in args), **kwargs)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_non_finite_grid_like_torch(torch, mode, padding_mode):
    grid = np.array([[[[np.nan, 0.2], [0.1, np.inf]], [[-np.inf, 0.3], [np.nan, np.nan]]]])
    image = np.arange(4.0).reshape(1, 1, 2, 2)
    expected = torch.nn.functional.grid_sample(torch.tensor(image), torch.tensor(grid), mode,
                                               padding_mode, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning where torch is silent
        got = F.grid_sample(gradnb.tensor(image), gradnb.tensor(grid), mode, padding_mode, False)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_grid_sample_warns_without_align_corners():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(rand(1, 1, 2, 2), rand(1, 1, 1, 2))


# -- native_layer_norm / native_group_norm / native_batch_norm ---------------------------------
def _compare_outputs(torch, outs_g, outs_t):
    assert len(outs_g) == len(outs_t)
    for g, t in zip(outs_g, outs_t):
        assert tuple(g.shape) == tuple(t.shape)
        assert g.requires_grad == t.requires_grad
        assert_same(g, t)


def test_native_layer_norm(torch):
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    (xg, xt), (wg, wt), (bg, bt) = both(torch, x), both(torch, w), both(torch, b)
    _compare_outputs(torch, gradnb.native_layer_norm(xg, [3, 4], wg, bg, 1e-5),
                     torch.native_layer_norm(xt, [3, 4], wt, bt, 1e-5))
    assert gradgradcheck(lambda *v: gradnb.native_layer_norm(v[0], (4,), v[1], v[2], 1e-5)[0],
                         (rand(2, 4), rand(4), rand(4)))
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as "
                                           "normalized_shape, but got weight of shape \\[4\\]"):
        gradnb.native_layer_norm(xg, [3, 4], rand(4), None, 1e-5)


def test_native_group_norm_statistics_are_differentiable(torch):
    x = np.random.default_rng(8).standard_normal((2, 4, 3))
    (xg, xt), (wg, wt) = both(torch, x), both(torch, np.linspace(0.5, 2, 4))
    outs_g = gradnb.native_group_norm(xg, wg, None, 2, 4, 3, 2, 1e-5)
    outs_t = torch.native_group_norm(xt, wt, None, 2, 4, 3, 2, 1e-5)
    _compare_outputs(torch, outs_g, outs_t)
    sum(o.sum() * (i + 1) for i, o in enumerate(outs_g)).backward()
    sum(o.sum() * (i + 1) for i, o in enumerate(outs_t)).backward()
    assert_same(xg.grad, xt.grad)
    assert gradgradcheck(lambda v: gradnb.native_group_norm(v, None, None, 2, 4, 3, 2, 1e-5)[2],
                         (rand(2, 4, 3),))


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm(torch, training):
    x = np.random.default_rng(9).standard_normal((5, 3, 2))
    (xg, xt), (wg, wt) = both(torch, x), both(torch, np.linspace(0.5, 2, 3))
    mean_g, mean_t = gradnb.zeros(3, dtype=gradnb.float64), torch.zeros(3, dtype=torch.float64)
    var_g, var_t = gradnb.ones(3, dtype=gradnb.float64), torch.ones(3, dtype=torch.float64)
    outs_g = gradnb.native_batch_norm(xg, wg, None, mean_g, var_g, training, 0.3, 1e-5)
    outs_t = torch.native_batch_norm(xt, wt, None, mean_t, var_t, training, 0.3, 1e-5)
    _compare_outputs(torch, outs_g, outs_t)
    assert_same(mean_g, mean_t)
    assert_same(var_g, var_t)


# -- embedding_bag -----------------------------------------------------------------------------
_BAGS = [
    ([5, 1, 6, 5, 6], {"offsets": [0, 3]}),
    ([1, 5, 4, 5, 9], {"offsets": [0, 0, 3]}),  # an empty bag
    ([[2, 1, 1], [0, 2, 4], [2, 0, 0]], {"padding_idx": 2}),  # one bag all padding
    ([4, 1, 1, 0, 4, 4], {"offsets": [0, 3], "padding_idx": -1}),
    ([0, 1, 1, 0, 1, 4], {"offsets": [0, 3, 6], "include_last_offset": True}),
    ([3, 3], {"offsets": [0, 2, 2]}),  # trailing empty bags
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize(("indices", "kwargs"), _BAGS)
def test_embedding_bag_matches_torch(torch, mode, indices, kwargs):
    weight = np.random.default_rng(10).standard_normal((10, 4))

    def call(lib, functional):
        extra = dict(kwargs, mode=mode)
        if "offsets" in extra:
            extra["offsets"] = lib.tensor(extra["offsets"])
        return lambda w: functional.embedding_bag(lib.tensor(indices), w, **extra)

    assert_same_with_grads(torch, call(gradnb, F), call(torch, torch.nn.functional), weight)


def test_embedding_bag_per_sample_weights(torch):
    rng = np.random.default_rng(11)
    weight, per_sample = rng.standard_normal((10, 3)), rng.standard_normal(5)
    assert_same_with_grads(
        torch,
        lambda w, p: F.embedding_bag(gradnb.tensor([5, 1, 6, 5, 6]), w, gradnb.tensor([0, 3]),
                                     mode="sum", per_sample_weights=p),
        lambda w, p: torch.nn.functional.embedding_bag(
            torch.tensor([5, 1, 6, 5, 6]), w, torch.tensor([0, 3]), mode="sum",
            per_sample_weights=p), weight, per_sample)
    w = rand(10, 3)
    assert gradcheck(lambda w: F.embedding_bag(gradnb.tensor([[1, 2], [3, 3]]), w, mode="max"),
                     (w,))


def test_embedding_bag_max_norm_renormalises_rows_in_place(torch):
    weight = np.random.default_rng(12).standard_normal((6, 3)) * 3
    wg, wt = gradnb.tensor(weight), torch.tensor(weight)
    idx = [[0, 2], [2, 5]]
    out_g = F.embedding_bag(gradnb.tensor(idx), wg, max_norm=1.0, norm_type=1.0)
    out_t = torch.nn.functional.embedding_bag(torch.tensor(idx), wt, max_norm=1.0, norm_type=1.0)
    assert_same(out_g, out_t)
    assert_same(wg, wt)


@pytest.mark.parametrize(("indices", "kwargs", "error"), [
    ([1, 2, 7], {"offsets": [0, 1]}, RuntimeError),
    ([1, 2, 3], {"offsets": [1, 2]}, RuntimeError),
    ([1, 2, 3], {"offsets": [0, 4]}, RuntimeError),
    ([1, 2, 3], {"offsets": [0, 1], "padding_idx": 5}, RuntimeError),
    ([1, 2, 3], {"offsets": [], "include_last_offset": True}, RuntimeError),
    ([1, 2, 3], {}, ValueError),
    ([[1, 2]], {"offsets": [0]}, ValueError),
    ([1, 2, 3], {"offsets": [0], "mode": "min"}, ValueError),
    ([1, 2, 3], {"offsets": [0], "mode": "max", "scale_grad_by_freq": True}, ValueError),
    ([1, 2, 3], {"offsets": [0], "per_sample_weights": [1.0, 2.0, 3.0]}, NotImplementedError),
])
def test_embedding_bag_errors_match_torch(torch, indices, kwargs, error):
    def call(lib, functional, weight):
        extra = dict(kwargs)
        for key in ("offsets", "per_sample_weights"):
            if key in extra:
                extra[key] = lib.tensor(extra[key], dtype=lib.int64 if key == "offsets"
                                        else lib.float32)
        return functional.embedding_bag(lib.tensor(indices), weight, **extra)

    with pytest.raises(error) as expected:
        call(torch, torch.nn.functional, torch.zeros(5, 3))
    with pytest.raises(error) as got:
        call(gradnb, F, gradnb.zeros(5, 3))
    first_line = str(expected.value).split("\n")[0].replace("torch.", "gradnb.")
    assert str(got.value) == first_line


def test_embedding_bag_module(torch):
    assert repr(nn.EmbeddingBag(5, 3)) == repr(torch.nn.EmbeddingBag(5, 3))
    kwargs = {"max_norm": 1.0, "norm_type": 1.0, "mode": "sum", "padding_idx": 0}
    assert repr(nn.EmbeddingBag(5, 3, **kwargs)) == repr(torch.nn.EmbeddingBag(5, 3, **kwargs))
    weight = np.random.default_rng(13).standard_normal((5, 3))
    module_g = nn.EmbeddingBag.from_pretrained(gradnb.tensor(weight), mode="max", freeze=False)
    module_t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(weight), mode="max",
                                                     freeze=False)
    idx = [1, 4, 2, 0]
    out_g = module_g(gradnb.tensor(idx), gradnb.tensor([0, 2]))
    out_t = module_t(torch.tensor(idx), torch.tensor([0, 2]))
    assert_same(out_g, out_t)
    out_g.sum().backward()
    out_t.sum().backward()
    assert_same(module_g.weight.grad, module_t.weight.grad)
    padded = nn.EmbeddingBag(5, 3, padding_idx=1)
    assert not padded.weight.detach().numpy()[1].any()


# -- multi_head_attention_forward --------------------------------------------------------------
def _mha_case(rng, batched, separate, bias_kv, emb=4, heads=2, tgt=3, src=5, bsz=2):
    lead = (bsz,) if batched else ()
    arrays = {
        "query": rng.standard_normal((tgt, *lead, emb)),
        "key": rng.standard_normal((src, *lead, emb)),
        "value": rng.standard_normal((src, *lead, emb)),
        "in_proj_bias": rng.standard_normal(3 * emb),
        "out_proj_weight": rng.standard_normal((emb, emb)),
        "out_proj_bias": rng.standard_normal(emb),
    }
    if separate:
        for name in ("q", "k", "v"):
            arrays[f"{name}_proj_weight"] = rng.standard_normal((emb, emb))
    else:
        arrays["in_proj_weight"] = rng.standard_normal((3 * emb, emb))
    if bias_kv:
        arrays["bias_k"], arrays["bias_v"] = rng.standard_normal(emb), rng.standard_normal(emb)
    return arrays


@pytest.mark.parametrize(("batched", "separate", "bias_kv", "extra"), [
    (True, False, False, {}),
    (False, False, False, {"average_attn_weights": False}),
    (True, True, True, {"add_zero_attn": True}),
    (True, False, False, {"attn_mask": "2d", "key_padding_mask": "bool"}),
    (True, False, True, {"attn_mask": "3d", "need_weights": False}),
    (True, False, False, {"attn_mask": "2d", "need_weights": False, "is_causal": True}),
    (False, True, False, {"attn_mask": "bool", "add_zero_attn": True}),
])
def test_multi_head_attention_forward_matches_torch(torch, batched, separate, bias_kv, extra):
    rng = np.random.default_rng(14)
    arrays = _mha_case(rng, batched, separate, bias_kv)
    names = list(arrays)
    masks = {}
    if extra.get("attn_mask") == "2d":
        masks["attn_mask"] = rng.standard_normal((3, 5))
    elif extra.get("attn_mask") == "3d":
        masks["attn_mask"] = rng.standard_normal((4, 3, 5))
    elif extra.get("attn_mask") == "bool":
        masks["attn_mask"] = np.triu(np.ones((3, 5), dtype=bool), 3)
    if extra.get("key_padding_mask") == "bool":
        masks["key_padding_mask"] = np.array([[False] * 4 + [True], [True] + [False] * 4])
    flags = {k: v for k, v in extra.items() if k not in masks}

    def call(lib, functional):
        def run(*tensors):
            given = dict(zip(names, tensors))
            q, k, v = given.pop("query"), given.pop("key"), given.pop("value")
            kwargs = {name: lib.tensor(m) for name, m in masks.items()}
            out, weights = functional.multi_head_attention_forward(
                q, k, v, 4, 2, given.pop("in_proj_weight", None), given.pop("in_proj_bias"),
                given.pop("bias_k", None), given.pop("bias_v", None),
                flags.get("add_zero_attn", False), 0.5, given.pop("out_proj_weight"),
                given.pop("out_proj_bias"), training=False, use_separate_proj_weight=separate,
                need_weights=flags.get("need_weights", True),
                average_attn_weights=flags.get("average_attn_weights", True),
                is_causal=flags.get("is_causal", False),
                **given, **kwargs)
            return out if weights is None else out.sum() + (weights * weights).sum()
        return run

    assert_same_with_grads(torch, call(gradnb, F), call(torch, torch.nn.functional),
                           *arrays.values())


def test_multi_head_attention_forward_gradgradcheck():
    args = [rand(2, 1, 4), rand(3, 1, 4), rand(3, 1, 4)]
    weights = [rand(12, 4), rand(12), rand(4, 4), rand(4)]

    def fn(q, k, v, w_in, b_in, w_out, b_out):
        out, attn = F.multi_head_attention_forward(q, k, v, 4, 2, w_in, b_in, None, None, False,
                                                   0.0, w_out, b_out)
        return out, attn

    assert gradgradcheck(fn, (*args, *weights))


@pytest.mark.parametrize(("shapes", "kwargs"), [
    (((3, 2, 4), (5, 4), (5, 4)), {}),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"attn_mask": (2, 5)}),
    (((3, 2, 4), (5, 2, 4), (4, 2, 4)), {}),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"embed_dim_to_check": 8}),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"key_padding_mask": (2, 4)}),
    (((3, 2, 4), (5, 2, 4), (5, 2, 4)), {"key_padding_mask": (1, 5)}),
    (((3, 4), (5, 4), (5, 4)), {"attn_mask": (3, 3, 5)}),
])
def test_multi_head_attention_forward_errors_match_torch(torch, shapes, kwargs):
    def call(lib, functional):
        extra = {k: (lib.zeros(v) if lib is torch else lib.zeros(*v)) if isinstance(v, tuple)
                 else v for k, v in kwargs.items()}
        embed = extra.pop("embed_dim_to_check", 4)
        tensors = [lib.zeros(s) if lib is torch else lib.zeros(*s) for s in shapes]
        w_in = lib.zeros(12, 4)
        w_out = lib.zeros(4, 4)
        return functional.multi_head_attention_forward(*tensors, embed, 2, w_in, None, None, None,
                                                       False, 0.0, w_out, None, **extra)

    with pytest.raises((AssertionError, RuntimeError)) as expected:
        call(torch, torch.nn.functional)
    with pytest.raises(expected.type) as got:
        call(gradnb, F)
    assert str(got.value).replace("gradnb.Size", "torch.Size") == str(expected.value)
