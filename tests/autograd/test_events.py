"""The observer seam: per-thread subscription and the events that say where values left the
graph (``value_detached``), grad-mode blocks and in-place writes."""

from __future__ import annotations

import threading

import pytest

import gradnb
from gradnb._core import events as core_events
from gradnb.autograd import events


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def op_recorded(self, node, outputs) -> None:
        self.seen.append(("op", node.name()))

    def value_detached(self, source, result, how) -> None:
        self.seen.append(("cut", how, result is not None))

    def grad_mode_entered(self, mode) -> None:
        self.seen.append(("enter", mode))

    def grad_mode_exited(self, mode) -> None:
        self.seen.append(("exit", mode))

    def tensor_modified(self, tensor) -> None:
        self.seen.append(("write", tensor._version))


def run_in_other_thread(fn) -> None:
    thread = threading.Thread(target=fn)
    thread.start()
    thread.join()


def test_a_trace_records_only_its_own_thread():
    x = gradnb.tensor(2.0, requires_grad=True)

    def busy_other_thread():
        for _ in range(50):
            x * 3

    with gradnb.autograd.graph_trace() as t:
        y = x * 2
        run_in_other_thread(busy_other_thread)  # 50 ops, recorded while the trace is open
        y.exp()
    assert [op.name for op in t.ops] == ["MulBackward0", "ExpBackward0"]
    assert events.observers == [] or t not in events.observers


def test_subscribe_with_a_thread_filters_and_without_hears_all():
    x = gradnb.tensor(2.0, requires_grad=True)
    mine, everyone = Recorder(), Recorder()
    with events.subscribe(mine, thread=threading.get_ident()), events.subscribe(everyone):
        x * 2
        run_in_other_thread(lambda: x + 1)
    assert mine.seen == [("op", "MulBackward0")]
    assert everyone.seen == [("op", "MulBackward0"), ("op", "AddBackward0")]
    assert mine not in events.observers and id(mine) not in core_events._thread_of


@pytest.mark.parametrize(("make", "how", "has_result"), [
    (lambda t: t.detach(), "detach()", True),
    (lambda t: t.data, ".data", True),
    (lambda t: t.sum().item(), ".item()", False),
    (lambda t: t.tolist(), ".tolist()", False),
    (lambda t: gradnb.tensor(t), "tensor()", True),
])
def test_values_leaving_the_graph_are_reported(make, how, has_result):
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    recorder = Recorder()
    with events.subscribe(recorder):
        make(h)
    cuts = [e for e in recorder.seen if e[0] == "cut"]
    assert cuts == [("cut", how, has_result)]


def test_numpy_of_a_tensor_that_requires_grad_is_reported_only_when_it_succeeds():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    recorder = Recorder()
    with events.subscribe(recorder):
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            x.numpy()
        x.numpy(force=True)
        gradnb.ones(2).numpy()  # no graph to leave: no event
    assert recorder.seen == [("cut", ".numpy()", False)]


def test_grad_mode_blocks_and_in_place_writes_are_reported():
    x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    recorder = Recorder()
    with events.subscribe(recorder):
        with gradnb.no_grad(), gradnb.no_grad():  # already off: no second event
            x * 2
        with gradnb.inference_mode():
            pass
        with gradnb.enable_grad():  # switches nothing off
            pass
        y = x * 1
        y.mul_(3)
        y[0] = 5.0
    assert recorder.seen == [
        ("enter", "no_grad"), ("exit", "no_grad"),
        ("enter", "inference_mode"), ("exit", "inference_mode"),
        ("op", "MulBackward0"), ("op", "MulBackward0"), ("write", 1),
        ("op", "gradnb::autograd::CopySlices"), ("write", 2),
    ]
