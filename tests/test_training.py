"""Training end to end: parity with PyTorch over 20 optimizer steps, gradient accumulation,
frozen parameters, save/load, and a real data set (scikit-learn's bundled digits)."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn, optim
from gradnb.autograd import memory
from gradnb.serialization import load, save

F = nn.functional


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(12, 16), lib.nn.Tanh(), lib.nn.Linear(16, 16),
                             lib.nn.ReLU(), lib.nn.Linear(16, 3))


def cnn(lib):
    return lib.nn.Sequential(
        lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Conv2d(4, 6, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(6 * 2 * 2, 3))


def same_weights(g_model, t_model):
    """Load the torch model's float64 weights into the gradnb model (through load_state_dict)."""
    g_model.double()
    g_model.load_state_dict({k: gradnb.tensor(v.detach().numpy())
                             for k, v in t_model.state_dict().items()})


def trajectory(lib, model, opt, xs, ys):
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


@pytest.mark.torch
@pytest.mark.parametrize("arch, shape", [(mlp, (16, 12)), (cnn, (8, 1, 8, 8))])
@pytest.mark.parametrize("opt_name, kwargs", [
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}),
    ("Adam", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.05, "amsgrad": True}),
])
def test_twenty_steps_match_pytorch(torch, arch, shape, opt_name, kwargs):
    torch.set_num_threads(1)  # tiny models: thread start-up would dominate (50x on 2 cores)
    torch.manual_seed(0)
    t_model = arch(torch).double()
    g_model = arch(gradnb)
    same_weights(g_model, t_model)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal(shape), rng.integers(0, 3, shape[0])) for _ in range(4)]
    xs, ys = zip(*(batches * 5))
    t_losses = trajectory(torch, t_model, getattr(torch.optim, opt_name)(t_model.parameters(),
                                                                          **kwargs), xs, ys)
    g_losses = trajectory(gradnb, g_model, getattr(optim, opt_name)(g_model.parameters(),
                                                                    **kwargs), xs, ys)
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-6)
    assert t_losses[-4:].mean() < t_losses[:4].mean()


def test_gradient_accumulation_over_micro_batches_equals_full_batch():
    model = mlp(gradnb).double()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 12)), rng.integers(0, 3, 16)

    F.cross_entropy(model(gradnb.tensor(x)), gradnb.tensor(y)).backward()
    full = [p.grad.numpy().copy() for p in model.parameters()]

    model.zero_grad()
    for xb, yb in zip(np.split(x, 4), np.split(y, 4)):
        (F.cross_entropy(model(gradnb.tensor(xb)), gradnb.tensor(yb)) / 4).backward()
    for p, expected in zip(model.parameters(), full):
        np.testing.assert_allclose(p.grad.numpy(), expected, rtol=1e-12, atol=1e-15)


def test_frozen_backbone_gets_no_gradient_and_records_no_backward_work():
    backbone = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
    head = nn.Linear(32, 2)
    backbone.requires_grad_(False)
    out = head(backbone(gradnb.randn(4, 8)))
    addmm = out.grad_fn
    assert addmm.name() == "AddmmBackward0"
    assert addmm.next_functions[1] == (None, 0)  # nothing behind the head to run
    out.sum().backward()
    assert all(p.grad is None for p in backbone.parameters())
    assert all(p.grad is not None for p in head.parameters())
    frozen_nodes = memory.last_backward().nodes_executed

    backbone.requires_grad_(True)
    head(backbone(gradnb.randn(4, 8))).sum().backward()
    assert memory.last_backward().nodes_executed > frozen_nodes + 4


def test_save_and_load_round_trip_through_npz(tmp_path):
    model = cnn(gradnb)
    opt = optim.Adam(model.parameters(), lr=0.01)
    x = gradnb.randn(4, 1, 8, 8)
    y = gradnb.tensor([0, 1, 2, 1])
    for _ in range(2):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    save(model.state_dict(), tmp_path / "model.npz")
    save(opt.state_dict(), tmp_path / "opt.pt")

    restored = cnn(gradnb)
    restored.load_state_dict(load(tmp_path / "model.npz"))
    restored_opt = optim.Adam(restored.parameters(), lr=0.5)
    restored_opt.load_state_dict(load(tmp_path / "opt.pt"))
    assert restored_opt.param_groups[0]["lr"] == 0.01
    assert restored_opt.param_groups[0]["betas"] == (0.9, 0.999)
    for m, o in ((model, opt), (restored, restored_opt)):
        o.zero_grad()
        F.cross_entropy(m(x), y).backward()
        o.step()
    for (name, a), (_, b) in zip(model.state_dict().items(), restored.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_digits_mlp_reaches_95_percent_test_accuracy():
    datasets = pytest.importorskip("sklearn.datasets")
    digits = datasets.load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))
    split = int(0.8 * len(x))
    train, test = order[:split], order[split:]

    gradnb.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))
    opt = optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(1)
    for _ in range(15):
        model.train()
        for batch in np.array_split(rng.permutation(train), len(train) // 64):
            opt.zero_grad()
            F.cross_entropy(model(gradnb.tensor(x[batch])), gradnb.tensor(y[batch])).backward()
            opt.step()
    model.eval()
    with gradnb.no_grad():
        logits = model(gradnb.tensor(x[test])).numpy()
    accuracy = (logits.argmax(1) == y[test]).mean()
    assert accuracy >= 0.95
