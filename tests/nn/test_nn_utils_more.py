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
