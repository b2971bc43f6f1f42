"""``load_state_dict(assign=True)`` puts the state dict's own tensors in place, as PyTorch's
(their dtype and memory; a parameter keeps its ``requires_grad``); without it values are copied
into the module's tensors."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _facts(t):
    facts = []
    m = t.nn.Linear(2, 2)
    sd = {"weight": t.ones(2, 2, dtype=t.float64), "bias": t.zeros(2, dtype=t.float64)}
    before = m.weight
    m.load_state_dict(sd, assign=True)
    facts.append((type(m.weight).__name__, str(m.weight.dtype).split(".")[-1],
                  m.weight is before, m.weight.requires_grad,
                  m.weight.data_ptr() == sd["weight"].data_ptr()))
    bn = t.nn.BatchNorm1d(2)
    sd = {k: v.clone() + 1 for k, v in bn.state_dict().items()}
    bn.load_state_dict(sd, assign=True)
    facts.append((bn.running_mean.data_ptr() == sd["running_mean"].data_ptr(),
                  type(bn.running_mean).__name__, bn.running_mean.tolist()))
    frozen = t.nn.Linear(2, 2)
    frozen.weight.requires_grad_(False)
    frozen.load_state_dict({"weight": t.ones(2, 2, requires_grad=True), "bias": t.zeros(2)},
                           assign=True)
    facts.append(frozen.weight.requires_grad)
    seq = t.nn.Sequential(t.nn.Linear(2, 2))
    sd = {k: v * 2 for k, v in seq.state_dict().items()}
    seq.load_state_dict(sd, assign=True)
    facts.append([bool(np.allclose(p.detach().numpy(), sd[k].numpy()))
                  for k, p in seq.named_parameters()])
    seq(t.ones(1, 2)).sum().backward()
    facts.append(seq[0].weight.grad is not None)
    copied = t.nn.Linear(2, 2)
    kept = copied.weight
    copied.load_state_dict({"weight": t.ones(2, 2, dtype=t.float64), "bias": t.zeros(2)})
    facts.append((copied.weight is kept, str(copied.weight.dtype).split(".")[-1]))
    return facts


def test_assign_matches_torch():
    assert _facts(gradnb) == _facts(torch)
