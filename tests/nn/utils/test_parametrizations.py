"""``nn.utils.parametrizations``: weight norm, spectral norm and orthogonal, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb.nn.utils import parametrizations

pytestmark = pytest.mark.torch

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 4)).astype(np.float32)


def _linear(lib, out_features=3, in_features=4, dtype=np.float32):
    layer = lib.nn.Linear(in_features, out_features)
    weight = np.linspace(-1.0, 1.3, out_features * in_features).reshape(
        out_features, in_features) ** 3
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(weight.astype(np.float32)))
        layer.bias.fill_(0.2)
    return layer


def _np(t):
    return t.detach().numpy()


def _same_step(ours, theirs, x=X):
    """One forward and backward in each; the outputs and every parameter's gradient agree."""
    y_ours, y_theirs = ours(gradnb.tensor(x)), theirs(__import__("torch").tensor(x))
    np.testing.assert_allclose(_np(y_ours), _np(y_theirs), rtol=1e-5, atol=1e-6)
    (y_ours ** 2).sum().backward()
    (y_theirs ** 2).sum().backward()
    their_params = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(their_params)
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(_np(p.grad), _np(their_params[name].grad), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch, dim):
    ours = parametrizations.weight_norm(_linear(gradnb), dim=dim)
    theirs = torch.nn.utils.parametrizations.weight_norm(_linear(torch), dim=dim)
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key, value in theirs_state.items():
        np.testing.assert_allclose(ours_state[key].numpy(), value.numpy(), rtol=1e-6)
    _same_step(ours, theirs)


def test_weight_norm_on_a_conv_and_its_repr(torch):
    layers = []
    weight = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    for lib in (gradnb, torch):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(2, 3, 3)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(weight))
        layers.append(lib.nn.utils.parametrizations.weight_norm(conv))
    ours, theirs = layers
    assert repr(ours) == repr(theirs)
    assert tuple(ours.parametrizations.weight.original0.shape) == (3, 1, 1, 1)
    np.testing.assert_allclose(_np(ours.weight), _np(theirs.weight), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("train", [True, False])
def test_spectral_norm_matches_torch_from_the_same_singular_vectors(torch, train):
    ours = parametrizations.spectral_norm(_linear(gradnb))
    theirs = torch.nn.utils.parametrizations.spectral_norm(_linear(torch))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # The random starting vectors differ between libraries: start both from torch's.
    with gradnb.no_grad():
        for name in ("_u", "_v"):
            getattr(ours.parametrizations.weight[0], name).copy_(
                gradnb.tensor(_np(getattr(theirs.parametrizations.weight[0], name))))
    ours.train(train)
    theirs.train(train)
    _same_step(ours, theirs)
    for name in ("_u", "_v"):
        np.testing.assert_allclose(_np(getattr(ours.parametrizations.weight[0], name)),
                                   _np(getattr(theirs.parametrizations.weight[0], name)),
                                   rtol=1e-5, atol=1e-6)


def test_spectral_norm_divides_by_the_largest_singular_value():
    layer = parametrizations.spectral_norm(_linear(gradnb, 5, 4), n_power_iterations=30)
    layer(gradnb.ones(1, 4))  # a training-mode read refines the estimate
    weight = _np(layer.weight)
    assert abs(np.linalg.svd(weight, compute_uv=False)[0] - 1.0) < 1e-4
    transposed = parametrizations.spectral_norm(gradnb.nn.ConvTranspose2d(2, 3, 2))
    assert transposed.parametrizations.weight[0].dim == 1


def test_spectral_norm_errors_as_torch(torch):
    for call in (lambda lib: lib.nn.utils.parametrizations.spectral_norm(
                     lib.nn.Linear(2, 2), n_power_iterations=0),
                 lambda lib: lib.nn.utils.parametrizations.spectral_norm(
                     lib.nn.Linear(2, 2), "missing")):
        with pytest.raises(ValueError) as theirs:
            call(torch)
        with pytest.raises(ValueError) as ours:
            call(gradnb)
        assert str(ours.value).split("'")[0] == str(theirs.value).split("'")[0]


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_square_matches_torch(torch, orthogonal_map):
    ours = parametrizations.orthogonal(_linear(gradnb, 4, 4), orthogonal_map=orthogonal_map)
    theirs = torch.nn.utils.parametrizations.orthogonal(_linear(torch, 4, 4),
                                                        orthogonal_map=orthogonal_map)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    weight = _np(ours.weight)
    np.testing.assert_allclose(weight.T @ weight, np.eye(4), atol=1e-5)
    np.testing.assert_allclose(weight, _np(theirs.weight), atol=1e-5)
    _same_step(ours, theirs)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_rectangular_is_semi_orthogonal_and_trains(orthogonal_map, shape):
    layer = parametrizations.orthogonal(_linear(gradnb, *shape), orthogonal_map=orthogonal_map)
    opt = gradnb.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (layer(gradnb.randn(2, shape[1])) ** 2).sum().backward()
        opt.step()
    w = _np(layer.weight)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)


def test_orthogonal_householder_without_trivialization_matches_torch(torch):
    ours = parametrizations.orthogonal(_linear(gradnb, 5, 3), orthogonal_map="householder",
                                       use_trivialization=False)
    theirs = torch.nn.utils.parametrizations.orthogonal(
        _linear(torch, 5, 3), orthogonal_map="householder", use_trivialization=False)
    np.testing.assert_allclose(_np(ours.weight), _np(theirs.weight), atol=1e-5)
    _same_step(ours, theirs, X[:, :3])


def test_orthogonal_errors_as_torch(torch):
    for kwargs in ({"orthogonal_map": "nope"}, {"name": "bias"}):
        with pytest.raises(ValueError) as theirs:
            torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(2, 2), **kwargs)
        with pytest.raises(ValueError) as ours:
            parametrizations.orthogonal(gradnb.nn.Linear(2, 2), **kwargs)
        assert str(ours.value) == str(theirs.value)
