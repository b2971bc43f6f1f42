"""``Module.get_buffer``, ``set_submodule``, ``type``, ``compile`` and ``to_empty`` as PyTorch's,
errors included (first sentence, ``gradnb.`` for ``torch.``)."""

from __future__ import annotations

import pytest

import gradnb

torch = pytest.importorskip("torch")


def _facts(t):
    facts = []
    m = t.nn.Sequential(t.nn.BatchNorm1d(2), t.nn.Linear(2, 2))
    facts.append(tuple(m.get_buffer("0.running_mean").shape))
    for target in ["0.weight", "x.y", "0.nothing", "1"]:
        try:
            m.get_buffer(target)
        except AttributeError as e:
            facts.append((target, str(e)))
    m.set_submodule("1", t.nn.ReLU())
    facts.append(type(m[1]).__name__)
    for target, value in [("2", t.nn.ReLU()), ("0.x.y", t.nn.ReLU()), ("0", 3),
                          ("", t.nn.ReLU()), ("0.weight", t.nn.ReLU())]:
        try:
            m.set_submodule(target, value)
            facts.append(("ok", target))
        except (AttributeError, ValueError) as e:
            facts.append((target, type(e).__name__, str(e).replace("torch", "gradnb")))
    try:
        m.set_submodule("9", t.nn.ReLU(), strict=True)
    except AttributeError as e:
        facts.append(str(e))
    layer = t.nn.Linear(2, 2)
    facts.append(str(layer.type(t.float64).weight.dtype).split(".")[-1])
    facts.append(str(layer.type("torch.FloatTensor").weight.dtype).split(".")[-1])
    norm = t.nn.BatchNorm1d(2)
    norm.type(t.float64)
    facts.append(str(norm.num_batches_tracked.dtype).split(".")[-1])
    facts.append(t.nn.Linear(2, 2).compile())
    empty = t.nn.Linear(2, 3).to_empty(device="cpu")
    facts.append((tuple(empty.weight.shape), str(empty.weight.dtype).split(".")[-1],
                  empty.weight.requires_grad))
    return facts


def test_module_api_matches_torch():
    assert _facts(gradnb) == _facts(torch)
