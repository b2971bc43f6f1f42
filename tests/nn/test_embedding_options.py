"""``F.embedding``'s ``max_norm`` (the looked-up rows renormalised in the table, in place) and
``scale_grad_by_freq`` (each row's gradient divided by its count in the batch), against torch."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")

OPTIONS = {
    "max_norm": {"max_norm": 1.0},
    "max_norm L1": {"max_norm": 1.5, "norm_type": 1.0},
    "max_norm with padding": {"max_norm": 1.0, "padding_idx": 1},
    "scale_grad_by_freq": {"scale_grad_by_freq": True},
    "scale_grad_by_freq with padding": {"scale_grad_by_freq": True, "padding_idx": 2},
    "both": {"max_norm": 2.0, "scale_grad_by_freq": True},
}


def _run(t, options):
    weight = t.tensor(np.arange(15.0).reshape(5, 3) / 4 - 1, requires_grad=True)
    indices = t.tensor([[0, 2, 2], [1, 4, 2]])
    out = t.nn.functional.embedding(indices, weight, **options)
    (out * t.arange(18.0, dtype=t.float64).reshape(2, 3, 3)).sum().backward()
    grad = weight.grad.to_dense() if weight.grad.is_sparse else weight.grad
    return (np.asarray(out.tolist()), np.asarray(weight.tolist()), np.asarray(grad.tolist()),
            weight._version if hasattr(weight, "_version") else None)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_embedding_options_match_torch(name):
    ours, theirs = _run(gradnb, OPTIONS[name]), _run(torch, OPTIONS[name])
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert (ours[3] > 0) == (theirs[3] > 0)  # renormalising bumps the table's version


@pytest.mark.parametrize("lib", [gradnb, torch], ids=["gradnb", "torch"])
def test_scale_grad_by_freq_refuses_sparse_gradients_at_backward(lib):
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
        _run(lib, {"scale_grad_by_freq": True, "sparse": True})


def test_embedding_module_max_norm():
    for lib in (gradnb, torch):
        lib.manual_seed(0)
    layer = gradnb.nn.Embedding(10, 4, max_norm=0.5)
    layer(gradnb.tensor([1, 3, 3]))
    norms = np.linalg.norm(layer.weight.detach().numpy()[[1, 3]], axis=1)
    assert (norms <= 0.5 + 1e-6).all()


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_scale_grad_by_freq_is_embeddings(mode, padding_idx):
    """Each row's gradient over its count among all indices: what ``F.embedding`` with
    ``scale_grad_by_freq`` gives under the bag reduction (checked on torch's ``embedding``:
    torch 2.13's CPU ``embedding_bag`` divides by the wrong counts, e.g. a row looked up once by
    2 and a row looked up three times by 1)."""
    table = np.arange(15.0).reshape(5, 3) / 4 - 1
    flat, bag_of = [0, 2, 2, 1, 4, 2, 0], [0, 0, 0, 1, 1, 2, 2]
    upstream = np.arange(9.0).reshape(3, 3)

    w = gradnb.tensor(table, requires_grad=True)
    out = gradnb.nn.functional.embedding_bag(
        gradnb.tensor(flat), w, gradnb.tensor([0, 3, 5]), mode=mode,
        scale_grad_by_freq=True, padding_idx=padding_idx)
    (out * gradnb.tensor(upstream)).sum().backward()

    tw = torch.tensor(table, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(flat), tw, padding_idx=padding_idx,
                                         scale_grad_by_freq=True)
    keep = torch.tensor([i != padding_idx for i in flat], dtype=torch.float64)[:, None]
    bags = torch.zeros(3, 3, dtype=torch.float64).index_add(0, torch.tensor(bag_of), rows * keep)
    if mode == "mean":
        sizes = torch.zeros(3, dtype=torch.float64).index_add(0, torch.tensor(bag_of), keep[:, 0])
        bags = bags / sizes.clamp(min=1)[:, None]
    (bags * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), bags.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
