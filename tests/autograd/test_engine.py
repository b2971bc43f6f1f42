"""The backward engine: ordering, accumulation, retain_graph, inputs=, autograd.grad,
higher-order gradients, hooks, and the permanent graph-shape tests (deep chain, fan-in, diamond)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gradnb
from gradnb import autograd


def leaf(values, dtype=gradnb.float64):
    return gradnb.tensor(values, dtype=dtype, requires_grad=True)


def test_chain_rule_scalar():
    x, w, b = leaf(2.0), leaf(3.0), leaf(1.0)
    loss = (w * x + b) * (w * x + b)
    loss.backward()
    assert (x.grad.item(), w.grad.item(), b.grad.item()) == (42.0, 28.0, 14.0)


def test_grad_is_none_until_backward_then_accumulates():
    x = leaf([1.0, 2.0])
    assert x.grad is None
    (x * 3).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert first is x.grad  # accumulated in place, as PyTorch does without create_graph


def test_diamond_each_node_runs_once():
    a = leaf(1.5)
    b = a + a
    c = b + b
    c.backward()
    assert a.grad.item() == 4.0


def test_fan_in_10k():
    x = leaf(1.0)
    total = x * 1.0
    for _ in range(10_000):
        total = total + x
    total.backward()
    assert x.grad.item() == 10_001.0


def test_deep_chain_100k_forward_and_backward():
    x0 = leaf([1.0])
    x = x0
    for _ in range(100_000):
        x = x * 1.0001 + 0.0001
    x.sum().backward()
    assert np.isclose(x0.grad.item(), 1.0001 ** 100_000)
    del x  # freeing a 200k-node graph must not recurse either


def test_grads_do_not_alias_each_other():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + y).sum().backward()
    x.grad._data += 1.0
    assert y.grad.tolist() == [1.0, 1.0]


def test_user_gradient_array_is_not_aliased():
    x = leaf([1.0, 2.0])
    g = gradnb.tensor([1.0, 1.0], dtype=gradnb.float64)
    x.backward(g)
    x.grad._data += 5
    assert g.tolist() == [1.0, 1.0]


def test_broadcasting_gradients_are_reduced():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.ones((4,)))
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[4.0]] * 3
    assert b.grad.shape == (4,) and b.grad.tolist() == [3.0] * 4


def test_float32_stays_float32():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2.5 + 1).exp().sum()
    y.backward()
    assert y.dtype is gradnb.float32 and x.grad.dtype is gradnb.float32


def test_retain_graph_allows_second_backward():
    x = leaf(3.0)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 12.0


def test_second_backward_without_retain_graph_raises_and_changes_nothing():
    x = leaf(3.0)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()
    assert x.grad.item() == 6.0


def test_nodes_that_saved_nothing_can_run_twice():
    x = leaf(3.0)
    y = x + 2
    y.backward()
    y.backward()
    assert x.grad.item() == 2.0


def test_backward_inputs_restricts_accumulation():
    x, w = leaf(2.0), leaf(3.0)
    y = x * w
    y.backward(inputs=[w])
    assert x.grad is None and w.grad.item() == 2.0


def test_backward_inputs_nonleaf_gets_grad():
    x = leaf(2.0)
    h = x * 3
    y = h * h
    y.backward(inputs=[h])
    assert h.grad.item() == 12.0 and x.grad is None


def test_autograd_grad_leaves_grad_fields_alone():
    x = leaf(2.0)
    (gx,) = autograd.grad(x ** 3, x)
    assert gx.item() == 12.0 and x.grad is None


def test_autograd_grad_allow_unused():
    x, z = leaf(2.0), leaf(1.0)
    with pytest.raises(RuntimeError, match="^The differentiated Tensor at index 1 appears to not have been used"):
        autograd.grad(x * 2, [x, z])
    gx, gz = autograd.grad(x * 2, [x, z], allow_unused=True)
    assert gx.item() == 2.0 and gz is None


def test_autograd_grad_input_must_require_grad():
    x = leaf(2.0)
    c = gradnb.tensor(1.0)
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors does not require grad"):
        autograd.grad(x * c, [c])


def test_higher_order_gradients():
    x = leaf(2.0)
    y = x ** 3
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad
    (g2,) = autograd.grad(g, x, create_graph=True)
    assert g2.item() == 12.0
    (g3,) = autograd.grad(g2, x)
    assert g3.item() == 6.0


def test_create_graph_backward_makes_grad_differentiable():
    x = leaf(1.5)
    y = (x * x).exp()
    y.backward(create_graph=True)
    assert x.grad.requires_grad
    gx = x.grad
    x.grad = None
    gx.backward()
    expected = np.exp(1.5 ** 2) * (2 + 4 * 1.5 ** 2)
    assert np.isclose(x.grad.item(), expected)


def test_tensor_hook_replaces_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and x.grad.tolist() == [20.0, 20.0]
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_hook_on_intermediate_and_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    y.sum().backward()
    # PyTorch runs retains_grad after other hooks: y.grad sees the doubled gradient.
    assert y.grad.tolist() == [2.0, 2.0]
    assert x.grad.tolist() == [6.0, 6.0]


def test_post_accumulate_grad_hook():
    p = leaf([1.0, 2.0])
    calls = []
    p.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.tolist()))
    (p * p).sum().backward()
    assert calls == [[2.0, 4.0]]


def test_node_hooks():
    x = leaf(2.0)
    y = x * 3
    seen = {}
    y.grad_fn.register_prehook(lambda gout: seen.update(pre=gout[0].item()))
    y.grad_fn.register_hook(lambda gin, gout: seen.update(post=gin[0].item()))
    y.backward()
    assert seen == {"pre": 1.0, "post": 3.0}


def test_grad_fn_names_and_next_functions():
    x, w = leaf(2.0), leaf(3.0)
    y = w * x + 1
    assert y.grad_fn.name() == "AddBackward0"
    mul_fn, _ = y.grad_fn.next_functions[0]
    assert mul_fn.name() == "MulBackward0"
    names = [n.name() for n, _ in mul_fn.next_functions]
    assert names == ["gradnb::autograd::AccumulateGrad"] * 2  # torch's, in gradnb's namespace
    assert repr(mul_fn.next_functions[0][0]).startswith("<AccumulateGrad object at 0x")
    assert mul_fn.next_functions[0][0].variable is w
    assert y.grad_fn.next_functions[1] == (None, 0)


def test_is_leaf_and_requires_grad_propagation():
    x = gradnb.tensor([1.0])
    w = leaf([2.0])
    y = x * w
    assert x.is_leaf and w.is_leaf and not y.is_leaf
    assert y.requires_grad and not (x * 2).requires_grad


def test_detach_shares_data_and_cuts_graph():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d._data, y._data)


def test_detach_in_place():
    x = leaf([1.0])
    y = x * 2
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_grad_modes():
    x = leaf([1.0])
    with gradnb.no_grad():
        assert not (x * 2).requires_grad
        with gradnb.enable_grad():
            assert (x * 2).requires_grad
    with gradnb.set_grad_enabled(False):
        assert not gradnb.is_grad_enabled()
    assert gradnb.is_grad_enabled()
    with gradnb.inference_mode():
        y = x * 2
        assert not y.requires_grad and y.is_inference()

    @gradnb.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and gradnb.is_grad_enabled()


def test_set_grad_enabled_as_function_call():
    gradnb.set_grad_enabled(False)
    try:
        assert not gradnb.is_grad_enabled()
    finally:
        gradnb.set_grad_enabled(True)
    assert gradnb.is_grad_enabled()


def test_grad_mode_is_thread_local():
    results = {}

    def worker():
        x = leaf([1.0])
        results["other"] = (x * 2).requires_grad

    with gradnb.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert results["other"] is True


def test_non_leaf_grad_access_warns():
    x = leaf([1.0])
    y = x * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None
