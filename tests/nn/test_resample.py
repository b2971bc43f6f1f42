"""interpolate's nodes (gradnb/nn/functional/resample.py): PyTorch's node per mode and rank with
its saved values, its node for the gradient's gradient, and infs and NaNs reaching exactly the
outputs and gradients they reach in PyTorch's kernels (zero-weighted neighbours included).
Antialiased bicubic weights agree with PyTorch's to rounding only: a weight PyTorch rounds to
1e-14 may be 0 here, so an inf gradient there gives NaN where PyTorch gives inf."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

CASES = [
    ("nearest", (2, 3, 5), {"size": 7}),
    ("nearest", (2, 3, 5, 4), {"scale_factor": 2}),
    ("nearest-exact", (1, 2, 3, 4, 5), {"scale_factor": 1.5}),
    ("linear", (2, 3, 5), {"size": 7}),
    ("linear", (2, 3, 5), {"size": 5, "align_corners": True}),
    ("linear", (2, 3, 7), {"scale_factor": 0.6, "recompute_scale_factor": True}),
    ("bilinear", (2, 3, 5, 4), {"size": (5, 9)}),
    ("bilinear", (2, 3, 5, 4), {"scale_factor": 1.3, "align_corners": True}),
    ("bicubic", (2, 3, 5, 4), {"size": (8, 3)}),
    ("bicubic", (2, 3, 5, 4), {"size": (5, 4), "align_corners": True}),
    ("trilinear", (1, 2, 3, 4, 5), {"size": (6, 4, 2)}),
    ("bilinear", (2, 3, 9, 4), {"size": (4, 7), "antialias": True}),
    ("bilinear", (2, 3, 9, 8), {"scale_factor": 0.4, "antialias": True, "align_corners": True}),
    ("bicubic", (2, 3, 9, 4), {"size": (9, 2), "antialias": True}),
]


def _saved(node):
    return {a: getattr(node, a) for a in dir(node) if a.startswith("_saved_")}


@pytest.mark.parametrize(("mode", "shape", "kwargs"), CASES)
def test_nodes_and_saved_values_are_pytorchs(torch, mode, shape, kwargs):
    data = np.random.default_rng(0).standard_normal(shape)
    graphs = []
    for lib, fn in ((gradnb, F.interpolate), (torch, torch.nn.functional.interpolate)):
        x = lib.tensor(data, requires_grad=True)
        y = fn(x, mode=mode, **kwargs)
        g = lib.ones_like(y, requires_grad=True)
        gx, = lib.autograd.grad(y, x, g, create_graph=True)
        graphs.append([(n.name(), _saved(n)) for n in (y.grad_fn, gx.grad_fn)])
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize(("mode", "shape", "kwargs"), CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_inf_and_nan_reach_what_they_reach_in_pytorch(torch, mode, shape, kwargs, dtype):
    rng = np.random.default_rng(1)
    data = rng.standard_normal(shape).astype(dtype)
    data.flat[3], data.flat[7] = np.nan, np.inf
    results = []
    for lib, fn in ((gradnb, F.interpolate), (torch, torch.nn.functional.interpolate)):
        x = lib.tensor(data, requires_grad=True)
        y = fn(x, mode=mode, **kwargs)
        if not results:
            seed = rng.standard_normal(tuple(y.shape)).astype(dtype)
            seed.flat[1], seed.flat[4] = np.inf, np.nan
        y.backward(lib.tensor(seed))
        results.append((y.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(results[0], results[1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_second_order_is_the_interpolation_again():
    x = gradnb.randn(1, 2, 4, 3, dtype=gradnb.float64, requires_grad=True)
    y = F.interpolate(x, scale_factor=1.5, mode="bicubic")
    g = gradnb.randn(*y.shape, dtype=gradnb.float64, requires_grad=True)
    gx, = gradnb.autograd.grad(y, x, g, create_graph=True)
    assert gx.grad_fn.name() == "UpsampleBicubic2DBackwardBackward0"
    assert gx.grad_fn.next_functions[0][0].variable is g
    v = gradnb.randn(*x.shape, dtype=gradnb.float64, requires_grad=True)
    gg, = gradnb.autograd.grad(gx, g, v, create_graph=True)
    assert gg.grad_fn.name() == "UpsampleBicubic2DBackward0"
    expected = F.interpolate(v, scale_factor=1.5, mode="bicubic")
    np.testing.assert_allclose(gg.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize(("mode", "shape"), [("nearest", (1, 1, 4, 4)), ("bilinear", (1, 1, 4))])
def test_antialias_needs_bilinear_or_bicubic_on_4d(mode, shape):
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(gradnb.ones(*shape), size=(2, 2)[: len(shape) - 2], mode=mode,
                      antialias=True)


def test_graph_is_freed_by_reference_counting():
    import gc
    import weakref

    x = gradnb.randn(1, 2, 4, 4, requires_grad=True)
    gc.disable()
    try:
        y = F.interpolate(x, scale_factor=2, mode="bilinear")
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()
