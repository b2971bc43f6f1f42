"""The engine's process-wide shortcuts never change what a backward does.

Three switches let the common pass skip work: ``graph.switches.user_code`` (no hook or custom
Function was ever set up, so discovery does not look for user code node by node),
``graph.last_change`` (nodes recorded after the last in-place write or freeing pass are not
version-checked) and ``grad_mode.grad_off_threads`` (no thread has grad mode off, so recording
does not read the thread-local flag). Each test puts the process back in the state where the
shortcut applies, then does what must switch it off, and checks PyTorch's behaviour.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import gradnb
from gradnb._core import graph
from gradnb._core.grad_mode import grad_off_threads


@pytest.fixture
def fresh_process(monkeypatch):
    """As if no hook or custom Function had been set up yet in this process."""
    monkeypatch.setattr(graph.switches, "user_code", False)


def _leaf():
    return gradnb.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_tensor_hook_on_a_non_leaf_runs(fresh_process):
    x = _leaf()
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_tensor_hook_on_a_leaf_runs(fresh_process):
    x = _leaf()
    x.register_hook(lambda g: g + 1)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_retain_grad_keeps_the_gradient(fresh_process):
    x = _leaf()
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0, 12.0]


def test_post_accumulate_grad_hook_runs(fresh_process):
    x = _leaf()
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]


def test_node_hooks_run(fresh_process):
    x = _leaf()
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda grads: calls.append("pre"))
    y.grad_fn.register_hook(lambda grads_in, grads_out: calls.append("post"))
    y.sum().backward()
    assert calls == ["pre", "post"]


def test_custom_function_that_fails_leaves_no_grad(fresh_process):
    class Fails(gradnb.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = _leaf()
    # The leaf's gradient from the first term is held back while user code can still fail.
    loss = (x * 2).sum() + Fails.apply(x).sum()
    with pytest.raises(ValueError, match="boom"):
        loss.backward()
    assert x.grad is None


def test_inplace_write_after_recording_is_caught():
    x = _leaf()
    y = x * 1
    z = y.exp()  # saves its output
    z.add_(1)  # written after it was saved
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    assert x.grad is None


def test_inplace_write_before_recording_is_allowed():
    x = _leaf()
    y = x * 1
    y.add_(1)
    z = y.exp()  # recorded after the write: its saved tensor is current
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy() + 1))


def test_second_backward_through_a_freed_graph_is_refused():
    x = _leaf()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_grad_mode_off_in_another_thread_does_not_leak():
    x = _leaf()
    inside, release = threading.Event(), threading.Event()

    def no_grad_thread():
        with gradnb.no_grad():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=no_grad_thread)
    worker.start()
    inside.wait(5)
    try:
        assert grad_off_threads[0] >= 1
        assert (x * 2).requires_grad  # this thread still records
        with gradnb.no_grad():
            assert not (x * 2).requires_grad
    finally:
        release.set()
        worker.join()
    assert (x * 2).requires_grad
