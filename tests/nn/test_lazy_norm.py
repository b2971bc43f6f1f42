"""Lazy batch and instance norms: sized by the first input, then the eager layer, as in torch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn

CASES = [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)),
         ("LazyBatchNorm2d", (2, 3, 4, 4)), ("LazyBatchNorm3d", (2, 3, 2, 2, 2)),
         ("LazyInstanceNorm1d", (2, 3, 5)), ("LazyInstanceNorm2d", (2, 3, 4, 4)),
         ("LazyInstanceNorm3d", (2, 3, 2, 2, 2))]


@pytest.mark.torch
@pytest.mark.parametrize("name, shape", CASES)
@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"track_running_stats": False},
                                    {"momentum": None, "bias": False}])
def test_lazy_norms_match_torch(torch, name, shape, kwargs):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours) == repr(theirs)
    assert ours.has_uninitialized_params()
    for _ in range(2):  # the second step runs the eager layer
        y_ours, y_theirs = ours(gradnb.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name.replace("Lazy", "")
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(y_ours.detach().numpy(), y_theirs.detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key, value in theirs_state.items():
        np.testing.assert_allclose(ours_state[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-6)
    if not kwargs.get("affine", True):
        return
    (y_ours * y_ours).sum().backward()
    (y_theirs * y_theirs).sum().backward()
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=key)


def test_an_optimizer_built_after_the_first_call_trains_the_sized_layer():
    model = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d(), nn.ReLU(), nn.LazyLinear(1))
    x, y = gradnb.randn(8, 3), gradnb.randn(8, 1)
    model(x)  # the dry run that sizes every lazy layer, as PyTorch's docs advise
    assert type(model[1]) is nn.BatchNorm1d and tuple(model[1].weight.shape) == (4,)
    opt = gradnb.optim.SGD(model.parameters(), lr=0.1)
    before = model[1].weight.detach().numpy().copy()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    assert not np.array_equal(model[1].weight.detach().numpy(), before)
    assert int(model[1].num_batches_tracked) == 2
