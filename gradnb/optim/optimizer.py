"""Optimizer: parameter groups, per-parameter state, hooks, ``zero_grad``, ``state_dict``.

Updates run on the raw arrays, in place, outside any graph (PyTorch's optimizers run under
``no_grad`` too); each update bumps the parameter's version counter, so a graph that saved the
old value reports the in-place change instead of computing a wrong gradient.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy as np

from .._core.backend import device_of, to_device
from .._core.deepcopy import copy_attributes
from .._core.grad_mode import enable_grad
from .._core.hooks import RemovableHandle
from .._core.hooks import register as _register
from .._core.tensor import Tensor
from ..nn.modules.module import zero_grads

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]

_global_pre_hooks: dict = {}
_global_post_hooks: dict = {}


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    new ``(args, kwargs)``."""
    return _register(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return _register(_global_post_hooks, hook)


def _with_step_hooks(step: Callable) -> Callable:
    """Wrap a ``step`` so the global and per-optimizer pre/post hooks run around it."""
    if getattr(step, "hooked", False):
        return step

    @functools.wraps(step)
    def hooked_step(self, *args, **kwargs):
        if _global_pre_hooks or self._optimizer_step_pre_hooks:
            for hook in [*_global_pre_hooks.values(), *self._optimizer_step_pre_hooks.values()]:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
        out = step(self, *args, **kwargs)
        if self._optimizer_step_post_hooks or _global_post_hooks:
            for hook in [*self._optimizer_step_post_hooks.values(), *_global_post_hooks.values()]:
                hook(self, args, kwargs)
        return out

    hooked_step.hooked = True
    return hooked_step


class Optimizer:
    """Base class of every optimizer, PyTorch's API.

    A subclass passes its ``defaults`` (every hyper-parameter) to ``__init__`` and implements
    ``_update_group(group)``, which updates the parameters of one group that have a gradient;
    or it overrides ``step(closure)`` itself (step hooks still run around it, as in PyTorch).
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = {}
        self._optimizer_step_post_hooks: dict = {}
        self._optimizer_state_dict_pre_hooks: dict = {}
        self._optimizer_state_dict_post_hooks: dict = {}
        self._optimizer_load_state_dict_pre_hooks: dict = {}
        self._optimizer_load_state_dict_post_hooks: dict = {}
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (``defaults`` fill the rest).

        Parameters may be given as ``(name, tensor)`` pairs (``named_parameters()``); the group
        then records ``param_names``.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple):
                names.append(param[0])
                param = param[1]
            tensors.append(param)
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        if self.param_groups and bool(names) != ("param_names" in self.param_groups[0]):
            current = "with names" if names else "without names"
            raise ValueError("all optimizer param groups should be with/without names. "
                             f"cannot add param group {current} to the optimizer")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        for key, value in self.defaults.items():
            param_group.setdefault(key, value)
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter this optimizer updates (to None by default)."""
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    @_with_step_hooks
    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            if group.get("capturable"):
                self._refuse_capture_on_cpu(group)
            self._update_group(group)
        return loss

    # What PyTorch's capturable check names, per optimizer.
    _capturable_holders = "params and state_steps"

    def _refuse_capture_on_cpu(self, group: dict) -> None:
        """``capturable=True`` is for CUDA-graph capture: PyTorch refuses it for CPU tensors."""
        if any(type(p._data) is np.ndarray for p in group["params"] if p._grad is not None):
            raise AssertionError(f"If capturable=True, {self._capturable_holders} must be on "
                                 "supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone', "
                                 "'xla'].")

    def _update_group(self, group: dict) -> None:  # pragma: no cover - every optimizer has one
        raise NotImplementedError

    # -- hooks --------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` before ``step``; it may return new
        ``(args, kwargs)``."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Run ``hook(optimizer, args, kwargs)`` after ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer)`` before ``state_dict()`` builds its result."""
        return _register_ordered(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer, state_dict)`` on ``state_dict()``'s result (a returned dict
        replaces it)."""
        return _register_ordered(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer, state_dict)`` before loading (a returned dict is loaded
        instead)."""
        return _register_ordered(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run ``hook(optimizer)`` after ``load_state_dict``."""
        return _register_ordered(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state --------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}``:
        parameters are numbered in group order and every hyper-parameter is kept, as in PyTorch.
        The state entries are the optimizer's own tensors (not copies), as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: s for p, s in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and per-parameter state saved by ``state_dict()``.

        State tensors are copied onto each parameter's device (floating ones also take its
        dtype; ``step`` keeps its own), so the loaded optimizer shares no buffer with the source.
        """
        state_dict = dict(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = [dict(g) for g in state_dict["param_groups"]]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(ours["params"]) != len(theirs["params"])
               for ours, theirs in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                            chain.from_iterable(g["params"] for g in self.param_groups)))
        state: defaultdict = defaultdict(dict)
        for key, entry in state_dict["state"].items():
            param = by_index.get(key)
            if param is None:
                state[key] = entry
            else:
                state[param] = {k: _cast(param, v, k) for k, v in entry.items()}
        for ours, theirs in zip(self.param_groups, saved_groups):
            theirs["params"] = ours["params"]
            if "param_names" in ours and "param_names" not in theirs:
                theirs["param_names"] = ours["param_names"]
        self.state = state
        self.param_groups = saved_groups
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(k for k in group if k != "params"):
                text += f"    {key}: {group[key]}\n"
        return text + ")"

    def __reduce_ex__(self, protocol):
        raise TypeError("gradnb optimizers are not pickled; save optimizer.state_dict() with "
                        "gradnb.save")

    def __deepcopy__(self, memo):
        """A copy with its state; copied together with its model, it steps the copy's
        parameters."""
        return copy_attributes(self, memo)


def _register_ordered(table: dict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = _register(table, hook)
    if prepend:
        entries = list(table.items())
        table.clear()
        table.update([entries[-1], *entries[:-1]])
    return handle


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return "gradnb.Tensor"
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else f"{module}.{type(obj).__qualname__}"


def _cast(param: Tensor, value, key=None):
    """A private copy of a saved state value for ``param``, recursing into containers (LBFGS
    keeps lists of tensors): on the parameter's device, and floating tensors other than the
    ``step`` counter in the parameter's dtype."""
    if isinstance(value, Tensor):
        data = value._data
        if type(data) is not type(param._data):
            data = to_device(data, device_of(param._data))
        if key != "step" and param._data.dtype.kind in "fcV":
            data = data.astype(param._data.dtype)
        return Tensor._make(data.copy())
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value
