"""``Module.register_full_backward_hook`` and ``register_full_backward_pre_hook``: what the
hooks see, what their returns change, and the warnings, compared with PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradnb

pytestmark = pytest.mark.torch


def _listed(grads):
    return [None if g is None else np.round(g.detach().numpy(), 5).tolist() for g in grads]


class Pair:
    """A module with two tensor inputs, a non-tensor one and two outputs (built per library)."""

    @staticmethod
    def build(torch):
        class TwoWay(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.nn.Parameter(torch.tensor([2.0, -1.0]))

            def forward(self, a, b, power):
                return (a * self.scale) ** power, a + b

        return TwoWay()


def _fill(torch, module):
    """The same parameter values in both libraries (their random streams differ)."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0 + i, p.numel()).reshape(p.shape))


def _run(torch, scenario):
    """Run ``scenario`` with ``torch`` (gradnb or torch); return everything the hooks saw."""
    log = []
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario(torch, log)
    log.append(sorted({str(w.message)[:60] for w in caught}))
    return log


def _linear_scaled(torch, log):
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        lin.bias.fill_(0.5)

    def hook(module, grad_input, grad_output):
        log.append(("full", module is lin, _listed(grad_input), _listed(grad_output)))
        return (grad_input[0] * 2,)

    def pre(module, grad_output):
        log.append(("pre", _listed(grad_output)))
        return (grad_output[0] * 10,)

    lin.register_full_backward_hook(hook)
    lin.register_full_backward_pre_hook(pre)
    x = torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]], requires_grad=True)
    (lin(x) * torch.tensor([[1.0, 2.0]])).sum().backward()
    log.append(("grads", _listed([x.grad, lin.weight.grad, lin.bias.grad])))


def _no_input_needs_grad(torch, log):
    lin = torch.nn.Linear(2, 2)
    _fill(torch, lin)
    lin.register_full_backward_hook(
        lambda m, gi, go: log.append(("full", _listed(gi), _listed(go))))
    lin(torch.ones(1, 2)).pow(2).sum().backward()
    log.append(("weight", _listed([lin.weight.grad])[0] is not None))


def _tuple_outputs_and_non_tensor_inputs(torch, log):
    module = Pair.build(torch)
    module.register_full_backward_hook(
        lambda m, gi, go: log.append(("full", _listed(gi), _listed(go))))
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = torch.tensor([0.5, 0.5])  # needs no gradient: None in grad_input
    first, second = module(a, b, 2)
    (first.sum() + 3 * second.sum()).backward()
    log.append(("a", _listed([a.grad])))
    only_first, _ = module(a, b, 3)
    only_first.sum().backward()  # the second output takes no part: its grad_output is None


def _nested_modules_and_removal(torch, log):
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    _fill(torch, model)
    handles = [m.register_full_backward_hook(
        lambda m, gi, go, i=i: log.append((i, _listed(gi), _listed(go))))
        for i, m in enumerate(model)]
    handles.append(model.register_full_backward_pre_hook(
        lambda m, go: log.append(("model-pre", _listed(go)))))
    x = torch.tensor([[0.1, -0.2]], requires_grad=True)
    model(x).sum().backward()
    for h in handles:
        h.remove()
    model(x).sum().backward()
    log.append(("after removal", len(log)))


@pytest.mark.parametrize("scenario", [_linear_scaled, _no_input_needs_grad,
                                      _tuple_outputs_and_non_tensor_inputs,
                                      _nested_modules_and_removal])
def test_full_backward_hooks_see_and_change_what_torchs_do(torch, scenario):
    theirs = _run(torch, scenario)
    ours = _run(gradnb, scenario)
    assert ours == theirs


def test_the_hook_node_is_named_as_torchs(torch):
    for lib in (gradnb, torch):
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda *a: None)
        y = lin(lib.ones(1, 2, requires_grad=True))
        assert type(y.grad_fn).__name__ == "BackwardHookFunctionBackward"


def test_a_wrong_number_of_grads_is_torchs_error(torch):
    messages = []
    for lib in (gradnb, torch):
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: (None, None))
        with pytest.raises(RuntimeError) as err:
            lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_prepend_runs_first(torch):
    order = []
    lin = gradnb.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda *a: order.append("second"))
    lin.register_full_backward_hook(lambda *a: order.append("first"), prepend=True)
    lin(gradnb.ones(1, 2, requires_grad=True)).sum().backward()
    assert order == ["first", "second"]
