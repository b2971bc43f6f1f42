"""The same training program on every device: ``Module.to``, optimizers, sparse gradients,
checkpointing, gradient clipping and saving.

Random numbers come from one host generator, so a seeded model initialises identically on every
device; a few training steps on ``device`` must then match the CPU's within float32 tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F
from gradnb import nn
from gradnb.utils.checkpoint import checkpoint

RTOL, ATOL = 1e-4, 1e-5


def host(t):
    return t.detach().cpu().numpy()


def _data(device, n=16, features=8, classes=3):
    rng = np.random.default_rng(1)
    x = gradnb.tensor(rng.standard_normal((n, features)).astype(np.float32), device=device)
    y = gradnb.tensor(rng.integers(0, classes, size=n), device=device)
    return x, y


def _mlp():
    gradnb.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 3))


OPTIMIZERS = {
    "sgd_momentum": lambda ps: gradnb.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                                weight_decay=1e-3),
    "adam": lambda ps: gradnb.optim.Adam(ps, lr=1e-2),
    "adamw_amsgrad": lambda ps: gradnb.optim.AdamW(ps, lr=1e-2, amsgrad=True),
}


def _train(device, make_optimizer, steps=3):
    model = _mlp().to(device)
    opt = make_optimizer(model.parameters())
    x, y = _data(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        losses.append(loss.item())
    return model, opt, losses


def test_module_to_moves_every_parameter_and_buffer(device):
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).to(device)
    for p in model.parameters():
        assert p.device == gradnb.device(device) and p.is_leaf and p.requires_grad
    for b in model.buffers():
        assert b.device == gradnb.device(device)
    assert model[1].num_batches_tracked.dtype is gradnb.int64
    model(gradnb.randn(5, 4, device=device)).sum().backward()
    assert all(p.grad.device == gradnb.device(device) for p in model.parameters())


def test_module_to_returns_the_same_module_with_the_same_parameter_objects(device):
    model = nn.Linear(3, 2)
    weight = model.weight
    assert model.to(device) is model
    assert model.weight is weight


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_training_steps_on_device_match_the_cpu(device, name):
    model, _, losses = _train(device, OPTIMIZERS[name])
    ref_model, _, ref_losses = _train("cpu", OPTIMIZERS[name])
    np.testing.assert_allclose(losses, ref_losses, rtol=RTOL, atol=ATOL)
    for p, ref in zip(model.parameters(), ref_model.parameters()):
        assert p.device == gradnb.device(device)
        np.testing.assert_allclose(host(p), host(ref), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_state_lives_on_the_parameters_device(device, name):
    model, opt, _ = _train(device, OPTIMIZERS[name], steps=1)
    for p in model.parameters():
        for value in opt.state[p].values():
            if isinstance(value, gradnb.Tensor) and value.ndim > 0:
                assert value.device == p.device


def test_optimizer_state_dict_loads_onto_the_parameters_device(device):
    _, cpu_opt, _ = _train("cpu", OPTIMIZERS["adam"], steps=2)
    model = _mlp().to(device)
    opt = OPTIMIZERS["adam"](model.parameters())
    opt.load_state_dict(cpu_opt.state_dict())
    for p in model.parameters():
        assert opt.state[p]["exp_avg"].device == p.device
    opt.zero_grad()
    x, y = _data(device)
    F.cross_entropy(model(x), y).backward()
    opt.step()


def test_module_state_dict_moves_between_devices(device):
    src = _mlp()
    dst = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 3)).to(device)
    dst.load_state_dict(src.state_dict())
    for p, ref in zip(dst.parameters(), src.parameters()):
        assert p.device == gradnb.device(device)
        np.testing.assert_array_equal(host(p), host(ref))


def test_save_and_load_with_map_location(device, tmp_path):
    model = _mlp().to(device)
    path = tmp_path / "model.npz"
    gradnb.save(model.state_dict(), path)
    loaded = gradnb.load(path, map_location=device)
    for key, value in model.state_dict().items():
        assert loaded[key].device == gradnb.device(device)
        np.testing.assert_array_equal(host(loaded[key]), host(value))


def _embedding_steps(device, sparse):
    gradnb.manual_seed(0)
    emb = nn.Embedding(10, 4, sparse=sparse).to(device)
    opt = (gradnb.optim.SparseAdam if sparse else gradnb.optim.Adam)(emb.parameters(), lr=0.1)
    idx = gradnb.tensor([[1, 3, 3], [7, 1, 0]], device=device)
    for _ in range(2):
        opt.zero_grad()
        (emb(idx) ** 2).sum().backward()
        opt.step()
    return emb


def test_sparse_embedding_gradients_on_device(device):
    emb = nn.Embedding(10, 4, sparse=True).to(device)
    emb(gradnb.tensor([1, 3, 3], device=device)).sum().backward()
    grad = emb.weight.grad
    assert grad.is_sparse and grad.device == gradnb.device(device)
    dense = host(grad.to_dense())
    assert dense[3].tolist() == [2.0] * 4 and dense[1].tolist() == [1.0] * 4
    assert dense[0].tolist() == [0.0] * 4


def test_sparse_adam_on_device_matches_the_cpu(device):
    emb = _embedding_steps(device, sparse=True)
    ref = _embedding_steps("cpu", sparse=True)
    np.testing.assert_allclose(host(emb.weight), host(ref.weight), rtol=RTOL, atol=ATOL)


def test_sgd_with_sparse_gradients_on_device(device):
    emb = nn.Embedding(10, 4, sparse=True).to(device)
    before = host(emb.weight).copy()
    opt = gradnb.optim.SGD(emb.parameters(), lr=0.5)
    emb(gradnb.tensor([2], device=device)).sum().backward()
    opt.step()
    after = host(emb.weight)
    np.testing.assert_allclose(after[2], before[2] - 0.5, rtol=RTOL)
    np.testing.assert_array_equal(after[5], before[5])


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_with_dropout_on_device_matches_plain_backward(device, use_reentrant):
    def block(t, w):
        return F.dropout((t @ w).tanh(), 0.3, training=True) @ w.t()

    def grads(checkpointed):
        gradnb.manual_seed(5)
        w = gradnb.randn(6, 6, device=device, requires_grad=True)
        x = gradnb.randn(4, 6, device=device, requires_grad=True)
        gradnb.manual_seed(11)
        y = checkpoint(block, x, w, use_reentrant=use_reentrant) if checkpointed else block(x, w)
        y.pow(2).sum().backward()
        return host(x.grad), host(w.grad)

    for got, expected in zip(grads(True), grads(False)):
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_clip_grad_norm_returns_the_norm_on_the_device(device):
    model = _mlp().to(device)
    x, y = _data(device)
    F.cross_entropy(model(x), y).backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1e-3)
    assert norm.device == gradnb.device(device)
    total = np.sqrt(sum((host(p.grad) ** 2).sum() for p in model.parameters()))
    assert total == pytest.approx(1e-3, rel=1e-3)
