"""Optimizer: parameter groups, per-parameter state, ``zero_grad``, ``state_dict``.

Updates run on the raw arrays, in place, outside any graph (PyTorch's optimizers run under
``no_grad`` too); each update bumps the parameter's version counter, so a graph that saved the
old value reports the in-place change instead of computing a wrong gradient.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._core.backend import device_of, to_device
from .._core.grad_mode import enable_grad
from .._core.tensor import Tensor
from ..nn.modules.module import zero_grads

__all__ = ["Optimizer"]


class Optimizer:
    """Base class: subclasses set ``defaults`` and implement ``_update_group(group)``."""

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self.state: dict = {}
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (defaults fill the rest)."""
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter this optimizer updates (to None by default)."""
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group: dict) -> None:  # pragma: no cover - every optimizer has one
        raise NotImplementedError

    # -- state ----------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}`` with
        parameters numbered in group order, as in PyTorch."""
        index: dict = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and per-parameter state saved by ``state_dict()``."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for ours, theirs in zip(self.param_groups, saved_groups):
            if len(ours["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {}
        for ours, theirs in zip(self.param_groups, saved_groups):
            for idx, p in zip(theirs["params"], ours["params"]):
                by_index[idx] = p
        self.state = {}
        for idx, entry in state_dict["state"].items():
            p = by_index.get(int(idx))
            if p is not None:
                self.state[p] = {k: _restore(p, k, v) for k, v in entry.items()}
        for ours, theirs in zip(self.param_groups, saved_groups):
            for key, value in theirs.items():
                if key != "params":
                    ours[key] = tuple(value) if key == "betas" else value

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __reduce_ex__(self, protocol):
        raise TypeError("gradnb optimizers are not pickled; save optimizer.state_dict() with "
                        "gradnb.save")

    def __deepcopy__(self, memo):
        """A copy with its state; copied together with its model, it steps the copy's
        parameters."""
        from .._deepcopy import copy_attributes

        return copy_attributes(self, memo)


def _restore(param: Tensor, key: str, value):
    """A private copy of a saved state value on the parameter's device (buffers also take the
    parameter's dtype; the step counter keeps its own)."""
    if not isinstance(value, Tensor):
        return value
    data = value._data
    if type(data) is not type(param._data):
        data = to_device(data, device_of(param._data))
    if key != "step" and data.dtype.kind == "f":
        data = data.astype(param._data.dtype)
    return Tensor._make(data.copy())
