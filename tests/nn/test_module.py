"""Module, Parameter and the layers: registration, traversal, modes, state, hooks, repr."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb
from gradnb import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Dropout(0.5))
        self.norm = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 2)
        self.scale = nn.Parameter(gradnb.ones(1))

    def forward(self, x):
        return self.head(self.norm(self.body(x))) * self.scale


def test_parameter_is_a_leaf_tensor_that_requires_grad():
    p = nn.Parameter(gradnb.tensor([1.0, 2.0]))
    assert isinstance(p, gradnb.Tensor) and p.is_leaf and p.requires_grad
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert str(p) == repr(p)
    assert not nn.Parameter(gradnb.ones(1), requires_grad=False).requires_grad
    assert type(p * 2) is gradnb.Tensor


def test_traversal_names_and_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "body.0.weight", "body.0.bias", "norm.weight", "norm.bias", "head.weight",
        "head.bias"]
    assert [n for n, _ in net.named_children()] == ["body", "norm", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "body.2",
                                                   "norm", "head"]
    assert [n for n, _ in net.named_buffers()] == ["norm.running_mean", "norm.running_var",
                                                   "norm.num_batches_tracked"]
    assert net.get_submodule("body.0") is net.body[0]
    assert net.get_parameter("head.bias") is net.head.bias


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2


def test_train_eval_and_dropout():
    net = Net()
    assert net.training and net.body[2].training
    net.eval()
    assert not net.training and not net.body[2].training
    x = gradnb.randn(5, 3)
    np.testing.assert_array_equal(net(x).detach().numpy(), net(x).detach().numpy())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_zero_grad_to_none_and_to_zeros():
    net = Net()
    net(gradnb.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_state_dict_round_trip_and_strictness():
    a, b = Net(), Net()
    a(gradnb.randn(5, 3))  # moves the running stats
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    for (k, va), (_, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(va.numpy(), vb.numpy(), err_msg=k)
    state = a.state_dict()
    assert state["head.weight"].grad_fn is None and not state["head.weight"].requires_grad
    del state["head.bias"]
    state["extra"] = gradnb.zeros(1)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "head.bias"'):
        b.load_state_dict(state)
    missing, unexpected = b.load_state_dict(state, strict=False)
    assert missing == ["head.bias"] and unexpected == ["extra"]
    with pytest.raises(RuntimeError, match="size mismatch for head.weight"):
        b.load_state_dict({**a.state_dict(), "head.weight": gradnb.zeros(3, 3)})


def test_load_state_dict_keeps_parameter_objects():
    net = Net()
    before = list(net.parameters())
    net.load_state_dict(Net().state_dict())
    assert all(p is q for p, q in zip(before, net.parameters()))


def test_to_dtype_keeps_parameter_identity_and_casts_floats_only():
    net = Net()
    weight = net.head.weight
    net.double()
    assert net.head.weight is weight and weight.dtype == gradnb.float64
    assert net.norm.num_batches_tracked.dtype == gradnb.int64
    assert net(gradnb.randn(4, 3, dtype=gradnb.float64)).dtype == gradnb.float64
    net.to(gradnb.float32)
    assert weight.dtype == gradnb.float32


def test_forward_hooks_can_observe_and_replace():
    lin = nn.Linear(2, 2)
    seen = []
    handle = lin.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    pre = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    out = lin(gradnb.ones(3, 2))
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(lin.bias.detach().numpy(),
                                                                      (3, 2)))
    assert seen == [gradnb.Size([3, 2])]
    handle.remove()
    pre.remove()
    replaced = lin.register_forward_hook(lambda m, args, out: out * 0)
    assert not lin(gradnb.ones(1, 2)).detach().numpy().any()
    replaced.remove()
    lin(gradnb.ones(1, 2))
    assert len(seen) == 1


def test_assignment_errors():
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'scale'"):
        net.scale = gradnb.ones(1)
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        _ = net.missing

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(gradnb.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_requires_grad_false_freezes_a_submodule():
    net = Net()
    net.body.requires_grad_(False)
    net(gradnb.randn(5, 3)).sum().backward()
    assert all(p.grad is None for p in net.body.parameters())
    assert net.head.weight.grad is not None


def test_containers():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.ReLU())
    assert len(layers) == 4 and isinstance(layers[-1], nn.ReLU)
    assert len(list(layers.parameters())) == 6
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    d = nn.ModuleDict({"a": nn.Linear(1, 1)})
    assert "a" in d and list(d.keys()) == ["a"]


def test_layer_shapes():
    x = gradnb.randn(2, 3, 8, 8)
    assert nn.Conv2d(3, 5, 3, padding=1)(x).shape == (2, 5, 8, 8)
    assert nn.MaxPool2d(2)(x).shape == (2, 3, 4, 4)
    assert nn.Flatten()(x).shape == (2, 192)
    assert nn.LayerNorm(8)(x).shape == x.shape
    assert nn.Embedding(10, 4)(gradnb.tensor([[1, 2]])).shape == (1, 2, 4)
    assert nn.Softmax(dim=1)(gradnb.randn(2, 3)).sum(1).tolist() == pytest.approx([1.0, 1.0])


def test_batchnorm_running_stats_and_eval():
    bn = nn.BatchNorm1d(2, momentum=None)
    x = gradnb.tensor([[1.0, 2.0], [3.0, 6.0]])
    bn(x)
    bn(x)
    assert bn.num_batches_tracked.item() == 2
    np.testing.assert_allclose(bn.running_mean.numpy(), [2.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), [2.0, 8.0], rtol=1e-6)
    bn.eval()
    out = bn(x).detach().numpy()
    np.testing.assert_allclose(out, (x.numpy() - [2.0, 4.0]) / np.sqrt([2.0, 8.0]), rtol=1e-4)


@pytest.mark.torch
def test_reprs_match_torch(torch):
    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Linear(3, 2), lib.nn.ReLU(), lib.nn.Dropout(0.1),
            lib.nn.Conv2d(1, 2, 3), lib.nn.Conv2d(2, 2, (3, 1), stride=2, padding=1, bias=False),
            lib.nn.MaxPool2d(2), lib.nn.LayerNorm(3), lib.nn.BatchNorm1d(3),
            lib.nn.Embedding(10, 3, sparse=True), lib.nn.Embedding(10, 3, padding_idx=0),
            lib.nn.GELU(), lib.nn.Softmax(dim=1), lib.nn.LogSoftmax(dim=-1), lib.nn.Tanh(),
            lib.nn.Sigmoid(), lib.nn.Flatten(), lib.nn.CrossEntropyLoss(), lib.nn.MSELoss(),
            lib.nn.BCEWithLogitsLoss(), lib.nn.NLLLoss(), lib.nn.Identity(),
            lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.Tanh()]))

    assert repr(build(gradnb)) == repr(build(torch))


@pytest.mark.torch
def test_default_initialisation_matches_torch_distribution(torch):
    gradnb.manual_seed(0)
    torch.manual_seed(0)
    w = nn.Linear(400, 300).weight.detach().numpy()
    bound = np.float32(1 / np.sqrt(400))  # weights are float32: compare with the rounded bound
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.99 * bound
    assert torch.nn.Linear(400, 300).weight.abs().max().item() <= bound


def test_replacing_a_layer_keeps_its_position():
    seq = gradnb.nn.Sequential(gradnb.nn.Linear(2, 2), gradnb.nn.Tanh(), gradnb.nn.Linear(2, 1))
    seq[1] = gradnb.nn.ReLU()
    assert list(seq._modules) == ["0", "1", "2"]
    assert isinstance(seq[1], gradnb.nn.ReLU)
    seq.weight_like = gradnb.nn.Parameter(gradnb.zeros(1))
    first = list(seq.state_dict())
    seq.weight_like = gradnb.nn.Parameter(gradnb.ones(1))
    assert list(seq.state_dict()) == first


def test_load_state_dict_refuses_a_value_that_is_not_a_tensor_unchanged():
    model = gradnb.nn.Sequential(gradnb.nn.Linear(2, 1))
    before = model[0].weight.detach().clone()
    state = model.state_dict()
    state["0.weight"] = [[1.0, 2.0]]
    with pytest.raises(RuntimeError, match='Error\\(s\\) in loading state_dict for Sequential:\n\t'
                                           'While copying the parameter named "0.weight", '
                                           "expected gradnb.Tensor or Tensor-like object from "
                                           "checkpoint but received <class 'list'>"):
        model.load_state_dict(state)
    assert gradnb.equal(model[0].weight.detach(), before)
