"""PyTorch's optimizer database (``common_optimizers.optim_db``) as the oracle.

Every optimizer it lists and every configuration its ``optim_inputs_func`` yields on CPU in
float64 runs side by side in PyTorch and gradnb on the same parameters and the same loss
(closures, so LBFGS is covered too); parameters, per-parameter state and ``state_dict()`` (PyTorch's
format: state keyed by index, groups listing indices and every default) must agree after each
step. Then gradnb loads PyTorch's own ``state_dict()`` into a fresh optimizer and both continue.

Run ``python tests/optim/test_optim_db.py`` for the figures: optimizers present, configurations
that match.
"""

from __future__ import annotations

import copy
import sys
import types
import unittest
from collections import Counter

import numpy as np
import pytest

import gradnb
import gradnb.nn.functional as F

torch = pytest.importorskip("torch")

STEPS = 3
# Muon orthogonalises its update in bfloat16 (as PyTorch does): 8 bits of mantissa. LBFGS runs
# to convergence within a step, where its history entries are differences of nearly equal
# numbers: rounding differences of 1e-16 grow to 1e-11 there.
TOLERANCES = {"Muon": {"rtol": 1e-5, "atol": 1e-8}, "LBFGS": {"rtol": 1e-7, "atol": 1e-9}}
DEFAULT_TOLERANCE = {"rtol": 1e-9, "atol": 1e-12}


def _optim_db():
    """optim_db, importable without ``expecttest`` (a test-runner dependency of
    ``common_utils`` that the database itself never calls). A stand-in is used for the import
    only and removed again, so other test modules still see whether it is installed."""
    stand_in = None
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("expecttest")
        stand_in.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stand_in
    try:
        from torch.testing._internal.common_optimizers import optim_db
    finally:
        if stand_in is not None and sys.modules.get("expecttest") is stand_in:
            del sys.modules["expecttest"]
    return optim_db


def _cases():
    cases = []
    for info in _optim_db():
        name = info.optim_cls.__name__
        for optim_input in info.optim_inputs_func(device="cpu", dtype=torch.float64):
            cases.append(pytest.param(name, optim_input.kwargs, id=f"{name}-{optim_input.desc}"))
    return cases


CASES = _cases()


# -- one side of the comparison ----------------------------------------------------------------
class Run:
    """Parameters, optimizer and closure in one library (``torch`` or ``gradnb``)."""

    def __init__(self, lib, name: str, kwargs: dict, state_dict=None) -> None:
        rng = np.random.default_rng(0)
        self.lib, self.name = lib, name
        self.sparse = name == "SparseAdam"
        self.x = lib.tensor(rng.standard_normal((3, 5)))
        self.target = lib.tensor(rng.standard_normal((4, 5)))
        self.rows = lib.tensor([0, 3, 3, 1])
        if self.sparse:
            self.params = [lib.tensor(rng.standard_normal((6, 3)), requires_grad=True)]
        else:
            self.params = [lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)]
            if name != "Muon":  # Muon takes matrices only
                self.params.append(lib.tensor(rng.standard_normal(4), requires_grad=True))
        kwargs = {k: _convert(v, lib) for k, v in kwargs.items()}
        self.opt = getattr(lib.optim, name)(self.params, **kwargs)
        if state_dict is not None:
            self.opt.load_state_dict(state_dict)

    def loss(self):
        self.opt.zero_grad()
        w = self.params[0]
        if self.sparse:
            embedded = (F if self.lib is gradnb else torch.nn.functional).embedding(
                self.rows, w, sparse=True)
            # Only the rows looked up get a gradient: the gradient stays sparse.
            return self._backward(((embedded @ self.x - self.target) ** 2).sum() * 0.5)
        else:
            out = w @ self.x
            if len(self.params) > 1:
                out = out + self.params[1][:, None]
        return self._backward(((out - self.target) ** 2).sum() * 0.5 + (w ** 4).sum() * 0.05)

    @staticmethod
    def _backward(loss):
        loss.backward()
        return loss

    def step(self):
        if self.name == "LBFGS":
            return self.opt.step(self.loss)
        self.loss()
        return self.opt.step()


def _convert(value, lib):
    """A configuration value (or state entry) for ``lib``: tensors are copied across."""
    if isinstance(value, torch.Tensor) and lib is gradnb:
        return gradnb.tensor(value.detach().numpy().copy())
    if isinstance(value, gradnb.Tensor) and lib is torch:
        return torch.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _convert(v, lib) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(v, lib) for v in value)
    return value


def _plain(value):
    """Numbers and arrays from either library, to compare them."""
    if isinstance(value, (torch.Tensor, gradnb.Tensor)):
        return value.detach().numpy()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _assert_same(ours, theirs, tolerance, where):
    ours, theirs = _plain(ours), _plain(theirs)
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, tolerance, f"{where}[{i}]")
    elif isinstance(theirs, np.ndarray) or isinstance(ours, np.ndarray):
        ours_a, theirs_a = np.asarray(ours), np.asarray(theirs)
        if isinstance(theirs, np.ndarray) and isinstance(ours, np.ndarray):
            assert ours_a.dtype == theirs_a.dtype, f"{where}: {ours_a.dtype} != {theirs_a.dtype}"
        np.testing.assert_allclose(ours_a, theirs_a, err_msg=where, **tolerance)
    elif isinstance(theirs, float) or isinstance(ours, float):
        np.testing.assert_allclose(ours, theirs, err_msg=where, **tolerance)
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def _assert_state_dicts_match(ours: dict, theirs: dict, tolerance) -> None:
    assert set(ours) == {"state", "param_groups"}
    assert len(ours["param_groups"]) == len(theirs["param_groups"])
    for i, (g, h) in enumerate(zip(ours["param_groups"], theirs["param_groups"])):
        assert sorted(g) == sorted(h), f"param_groups[{i}] keys"
        for key in h:
            _assert_same(g[key], h[key], tolerance, f"param_groups[{i}][{key!r}]")
    assert sorted(ours["state"]) == sorted(theirs["state"]), "state indices"
    for index, entry in theirs["state"].items():
        assert sorted(ours["state"][index]) == sorted(entry), f"state[{index}] keys"
        for key, value in entry.items():
            _assert_same(ours["state"][index][key], value, tolerance, f"state[{index}][{key!r}]")


def check_config(name: str, kwargs: dict) -> None:
    """Run one optim_db configuration in both libraries; raise on the first difference."""
    tolerance = TOLERANCES.get(name, DEFAULT_TOLERANCE)
    theirs, ours = Run(torch, name, kwargs), Run(gradnb, name, kwargs)
    for step in range(STEPS):
        _assert_same(ours.step(), theirs.step(), tolerance, f"loss returned by step {step}")
        for i, (p, q) in enumerate(zip(ours.params, theirs.params)):
            _assert_same(p, q, tolerance, f"param {i} after step {step}")
        _assert_state_dicts_match(ours.opt.state_dict(), theirs.opt.state_dict(), tolerance)
    # Fresh optimizers load the state_dicts (PyTorch's into gradnb, gradnb's own, and PyTorch's
    # into PyTorch, which also casts state to the parameters' dtype); all take the same step.
    theirs_loaded = Run(torch, name, kwargs, copy.deepcopy(theirs.opt.state_dict()))
    loaded = Run(gradnb, name, kwargs, _convert(theirs.opt.state_dict(), gradnb))
    reloaded = Run(gradnb, name, kwargs, ours.opt.state_dict())
    for run, source in ((theirs_loaded, theirs), (loaded, ours), (reloaded, ours)):
        for p, q in zip(run.params, source.params):
            p.data = q.detach().clone()
    for run in (theirs, theirs_loaded, ours, loaded, reloaded):
        run.step()
    for run, oracle in ((ours, theirs), (loaded, theirs_loaded), (reloaded, theirs_loaded)):
        for i, (p, q) in enumerate(zip(run.params, oracle.params)):
            _assert_same(p, q, tolerance, f"param {i} after loading a state_dict")
        _assert_state_dicts_match(run.opt.state_dict(), oracle.opt.state_dict(), tolerance)


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", CASES)
def test_optim_db_config_matches_torch(name, kwargs):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    check_config(name, kwargs)


def figures() -> str:
    """Optimizers present and configurations matching, one line per optimizer."""
    present, matching, total = Counter(), Counter(), Counter()
    lines = []
    for case in CASES:
        name, kwargs = case.values
        total[name] += 1
        if not hasattr(gradnb.optim, name):
            continue
        present[name] = 1
        try:
            check_config(name, kwargs)
        except Exception as error:  # noqa: BLE001 - a figure, any failure counts
            first = (str(error).strip().splitlines() or [""])[0][:110]
            lines.append(f"  mismatch {case.id}: {type(error).__name__}: {first}")
        else:
            matching[name] += 1
    table = [f"{name:<11} {'present' if present[name] else 'missing':<8} "
             f"{matching[name]}/{total[name]} configs match" for name in total]
    summary = (f"optim_db: {sum(present.values())} of {len(total)} optimizers present; "
               f"{sum(matching.values())} of {sum(total.values())} configs match "
               f"({sum(total[n] for n in present)} configs of present optimizers)")
    return "\n".join([summary, *table, *lines])


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(figures())
