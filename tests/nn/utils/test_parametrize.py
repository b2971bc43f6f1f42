"""``nn.utils.parametrize``: registration, reading, caching, removal and errors, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn
from gradnb.nn.utils import parametrize

pytestmark = pytest.mark.torch

W = np.arange(9, dtype=np.float32).reshape(3, 3) / 10 - 0.4


def _setup(lib):
    """A Linear with fixed weights and a symmetric-weight parametrization, in ``lib``."""

    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    layer = lib.nn.Linear(3, 3)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(W))
        layer.bias.fill_(0.1)
    original = layer.weight
    lib.nn.utils.parametrize.register_parametrization(layer, "weight", Symmetric())
    return layer, original


def _np(t):
    return t.detach().numpy()


def test_a_parametrized_layer_reads_trains_and_prints_as_torchs(torch):
    (ours, our_original), (theirs, their_original) = _setup(gradnb), _setup(torch)
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert repr(ours).replace("gradnb", "torch") == repr(theirs).replace(
        "test_parametrize.", "")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    # right_inverse ran on the original in place: the parameter object is the same one
    assert ours.parametrizations.weight.original is our_original
    assert theirs.parametrizations.weight.original is their_original
    np.testing.assert_allclose(_np(ours.weight), _np(theirs.weight))
    x = np.array([[1.0, -2.0, 0.5]], dtype=np.float32)
    (ours(gradnb.tensor(x)) ** 2).sum().backward()
    (theirs(torch.tensor(x)) ** 2).sum().backward()
    # (float32; the [0, 2] entry sums two symmetric halves to nearly 0, so it is compared in
    # absolute terms: which last bit survives depends on the CPU's kernels in either library)
    np.testing.assert_allclose(_np(our_original.grad), _np(their_original.grad), rtol=1e-6,
                               atol=1e-6)
    assert parametrize.is_parametrized(ours) and parametrize.is_parametrized(ours, "weight")
    assert not parametrize.is_parametrized(ours, "bias")
    assert parametrize.type_before_parametrizations(ours) is nn.Linear


def test_assigning_goes_through_right_inverse(torch):
    for lib in (gradnb, torch):
        layer, original = _setup(lib)
        layer.weight = lib.tensor(W.T.copy())
        assert np.allclose(_np(original), np.triu(W.T))
        assert np.allclose(_np(layer.weight), np.triu(W.T) + np.triu(W.T, 1).T)


def test_cached_computes_each_tensor_once():
    layer, _ = _setup(gradnb)
    assert layer.weight is not layer.weight
    with parametrize.cached():
        first = layer.weight
        assert layer.weight is first
    assert layer.weight is not first


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_as_torch(torch, leave_parametrized):
    results = []
    for lib in (gradnb, torch):
        layer, original = _setup(lib)
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight", leave_parametrized)
        assert type(layer) is lib.nn.Linear and layer.weight is original
        assert not hasattr(layer, "parametrizations")
        results.append((_np(layer.weight), list(layer.state_dict())))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def test_an_optimizer_trains_the_original_and_keeps_it_after_removal():
    layer, original = _setup(gradnb)
    opt = gradnb.optim.SGD(layer.parameters(), lr=0.1)
    layer(gradnb.ones(2, 3)).sum().backward()
    opt.step()
    w = layer.weight
    assert np.allclose(_np(w), _np(w).T)  # still symmetric after the step
    parametrize.remove_parametrizations(layer, "weight")
    assert layer.weight is original
    assert any(p is original for p in opt.param_groups[0]["params"])


def test_stacked_parametrizations_apply_in_order(torch):
    outs = []
    for lib in (gradnb, torch):
        class Double(lib.nn.Module):
            def forward(self, X):
                return 2 * X

        layer, _ = _setup(lib)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", Double())
        assert len(layer.parametrizations.weight) == 2
        outs.append(_np(layer.weight))
    np.testing.assert_allclose(outs[0], outs[1])


def _errors(lib):
    class Flatten(lib.nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    messages = []
    for call in (
        lambda: lib.nn.utils.parametrize.register_parametrization(
            lib.nn.Linear(2, 2), "weight", Flatten()),
        lambda: lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "bias"),
        lambda: lib.nn.utils.parametrize.register_parametrization(
            lib.nn.Linear(2, 2), "nothing", Flatten()),
    ):
        with pytest.raises(ValueError) as err:
            call()
        messages.append(str(err.value).split("\n")[0].split("'")[0].split(" Linear")[0])
    return messages


def test_errors_as_torch(torch):
    assert _errors(gradnb) == _errors(torch)


def test_transfer_shares_the_originals_as_torch(torch):
    for lib in (gradnb, torch):
        source, _ = _setup(lib)
        lib.nn.utils.parametrizations.weight_norm(source, "bias", dim=None)
        target = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrize.transfer_parametrizations_and_params(source, target)
        assert type(target).__name__ == "ParametrizedLinear"
        assert target.parametrizations.weight.original is source.parametrizations.weight.original
        assert (target.parametrizations.bias.original1
                is source.parametrizations.bias.original1)
        np.testing.assert_allclose(_np(target.weight), _np(source.weight))
        np.testing.assert_allclose(_np(target.bias), _np(source.bias), rtol=1e-6)
