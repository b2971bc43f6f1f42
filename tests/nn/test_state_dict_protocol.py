"""PyTorch's state-dict protocol: per-module ``_save_to_state_dict``/``_load_from_state_dict``
(overridden by custom modules to migrate old checkpoints), extra state, ``_metadata`` versions and
the four hook kinds, compared with torch on the same module code. One difference on purpose:
nothing is loaded when an error is found (PyTorch leaves a module half-loaded)."""

from __future__ import annotations

import numpy as np
import pytest

import gradnb

torch = pytest.importorskip("torch")


def _migrating(lib):
    class Migrating(lib.nn.Module):
        """Version 2 renamed ``scale`` to ``weight``; old checkpoints still load."""
        _version = 2

        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.zeros(3))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                  missing_keys, unexpected_keys, error_msgs):
            if local_metadata.get("version", 1) < 2 and prefix + "scale" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "scale")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)

    return Migrating


def _with_extra(lib):
    class WithExtra(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.steps = 0

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    return WithExtra


def _facts(lib):
    facts = []
    outer = lib.nn.Sequential(_migrating(lib)())
    saved = outer.state_dict()
    facts.append((list(saved), dict(saved._metadata)))
    old = {"0.scale": lib.ones(3)}
    facts.append(repr(outer.load_state_dict(old)))
    facts.append(outer[0].weight.tolist())
    extra = _with_extra(lib)()
    extra.steps = 7
    state = extra.state_dict()
    facts.append(sorted(state))
    fresh = _with_extra(lib)()
    fresh.load_state_dict(state)
    facts.append(fresh.steps)
    calls = []
    lin = lib.nn.Linear(2, 1)
    lin.register_state_dict_pre_hook(lambda m, prefix, keep: calls.append(("pre", prefix)))
    lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: calls.append(("post", len(sd))))
    lin.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, mk, uk, em: calls.append(("load pre", sorted(sd))))

    def forgive(module, keys):
        calls.append(("load post", list(keys.missing_keys)))
        keys.missing_keys.clear()

    lin.register_load_state_dict_post_hook(forgive)
    lin.state_dict()
    facts.append(repr(lin.load_state_dict({"weight": lib.ones(1, 2)})))  # bias forgiven
    facts.append((calls, lin.weight.tolist()))
    loose = lib.nn.Linear(2, 1)
    facts.append(repr(loose.load_state_dict({"weight": lib.ones(1, 2), "other": lib.ones(1)},
                                            strict=False)))
    try:
        loose.load_state_dict([1, 2])
    except TypeError as e:
        facts.append(str(e).split("got")[0])
    facts.append(repr(lib.nn.Linear(2, 1).load_state_dict(
        {"weight": lib.ones(1, 2), "bias": lib.ones(1)})))
    return facts


def test_protocol_matches_torch():
    assert _facts(gradnb) == _facts(torch)


def test_nothing_is_loaded_when_an_error_is_found():
    model = gradnb.nn.Sequential(gradnb.nn.Linear(2, 2), gradnb.nn.Linear(2, 3))
    before = [p.detach().clone() for p in model.parameters()]
    bad = {k: gradnb.ones(*v.shape) for k, v in model.state_dict().items()}
    bad["1.weight"] = gradnb.ones(4, 2)  # the second layer's weight has the wrong shape
    with pytest.raises(RuntimeError, match="size mismatch for 1.weight"):
        model.load_state_dict(bad)
    for p, b in zip(model.parameters(), before):
        assert np.array_equal(p.detach().numpy(), b.numpy())  # the first layer unchanged too
