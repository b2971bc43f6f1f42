"""``Module.state_dict`` and ``load_state_dict`` as PyTorch's protocol: each module saves and
loads its own entries through ``_save_to_state_dict``/``_load_from_state_dict`` (which custom
modules override to migrate old checkpoints), ``get_extra_state``/``set_extra_state`` carry
non-tensor state under ``<prefix>_extra_state``, the state dict's ``_metadata`` holds each
module's ``_version``, and the four state-dict hook kinds run where PyTorch runs them.

One difference, on purpose: PyTorch copies each value as it reaches it and raises at the end,
leaving a module half-loaded after a size mismatch. The default ``_load_from_state_dict`` here
queues its copies and the load applies them only once no module reported an error.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import NamedTuple

from ..._core.backend import device_of, to_device
from ..._core.grad_mode import no_grad
from ..._core.graph import bump_version
from ..._core.hooks import RemovableHandle
from ..._core.tensor import Tensor
from ..parameter import Parameter

__all__ = ["StateDictMixin"]

EXTRA_STATE_KEY_SUFFIX = "_extra_state"
_PENDING = "_gradnb_pending_copies"  # (in local_metadata: the copies waiting for no errors)


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


def _size_repr(shape) -> str:
    return f"gradnb.Size({list(shape)})"


def _copy_into(target: Tensor, value) -> None:
    """``target.copy_(value)`` without recording: cast and move ``value`` to the target."""
    data = value._data if isinstance(value, Tensor) else value
    if type(data) is not type(target._data):
        data = to_device(data, device_of(target._data))
    target._data[...] = data
    bump_version(target)


def _hooks(module, name: str) -> dict:
    """The module's hooks of one kind (created on first registration)."""
    hooks = module.__dict__.get(name)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, name, hooks)
    return hooks


class StateDictMixin:
    """The state-dict half of ``Module``."""

    _version: int = 1  # written to the state dict's metadata; bump it when the layout changes

    # -- saving --------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters, persistent buffers and extra state by dotted name (detached tensors that
        share memory with the module's, unless ``keep_vars``)."""
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in _hooks(self, "_state_dict_pre_hooks").values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in _hooks(self, "_state_dict_hooks").values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (not its children's) into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:
            destination[prefix + EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self):
        """State beyond tensors for the state dict: override together with
        ``set_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state) -> None:
        """Restore what ``get_extra_state`` returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    # -- loading -------------------------------------------------------------------------------
    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Load ``state_dict`` into this module and its children: values are copied into the
        existing tensors (so optimizers built before keep working), or with ``assign`` put in
        their places (their dtype and memory; a parameter keeps ``requires_grad``). With
        ``strict``, missing and unexpected keys are errors; a shape mismatch always is. Nothing
        is loaded when any error is found. Returns the missing and unexpected keys."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        pending: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            local_metadata[_PENDING] = pending
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items()
                                   if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)

        load(self, state_dict)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        if error_msgs or (strict and (missing_keys or unexpected_keys)):
            # The post-hooks may edit the key lists (PyTorch's strict check reads them after):
            # they run first here, with nothing loaded yet.
            self._run_load_post_hooks(incompatible)
            self._raise_load_errors(error_msgs, missing_keys, unexpected_keys, strict)
            hooks_ran = True
        else:
            hooks_ran = False
        with no_grad():
            for apply in pending:
                apply()
        if not hooks_ran:
            self._run_load_post_hooks(incompatible)
            self._raise_load_errors([], missing_keys, unexpected_keys, strict)
        return incompatible

    def _run_load_post_hooks(self, incompatible) -> None:
        for module in self.modules():
            for hook in _hooks(module, "_load_state_dict_post_hooks").values():
                if hook(module, incompatible) is not None:
                    raise RuntimeError("load_state_dict post-hook must return None")

    def _raise_load_errors(self, error_msgs: list, missing_keys: list, unexpected_keys: list,
                           strict: bool) -> None:
        errors = list(error_msgs)
        if strict:
            if unexpected_keys:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected_keys) + ". ")
            if missing_keys:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing_keys) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                               + "\n\t".join(errors))

    def _load_from_state_dict(self, state_dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """Load this module's own entries from ``state_dict`` (its keys under ``prefix``),
        reporting missing and unexpected keys and errors into the lists."""
        for hook in _hooks(self, "_load_state_dict_pre_hooks").values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update({k: v for k, v in self._buffers.items()
                            if v is not None and k not in self._non_persistent_buffers_set})
        assign = local_metadata.get("assign_to_params_buffers", False)
        pending = local_metadata.get(_PENDING)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not hasattr(value, "shape"):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"gradnb.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if len(param.shape) == 0 and len(value.shape) == 1:  # PyTorch 0.3's 1-element
                value = value[0]
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{_size_repr(value.shape)} from checkpoint, the shape in "
                                  f"current model is {_size_repr(param.shape)}.")
                continue
            apply = (self._assigner(name, param, value) if assign
                     else (lambda p=param, v=value: _copy_into(p, v)))
            if pending is None:  # (called by a custom module's own code: applied at once)
                with no_grad():
                    apply()
            else:
                pending.append(apply)
        extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not StateDictMixin.set_extra_state:
            if extra_key in state_dict:
                value = state_dict[extra_key]
                if pending is None:
                    self.set_extra_state(value)
                else:
                    pending.append(lambda v=value: self.set_extra_state(v))
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    name = key[len(prefix):].split(".", 1)
                    if len(name) > 1:
                        if name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif name[0] not in local_state:
                        unexpected_keys.append(key)

    def _assigner(self, name: str, current, value):
        """``load_state_dict(assign=True)``'s step for one entry: ``value`` in its place."""
        def apply():
            new = value if isinstance(value, Tensor) else Tensor._make(value)
            if name in self._parameters:
                if isinstance(new, Parameter):
                    new.requires_grad_(current.requires_grad)
                else:
                    new = Parameter(new, requires_grad=current.requires_grad)
                self._parameters[name] = new
            else:
                self._buffers[name] = new
        return apply

    # -- hooks ---------------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return self._add_state_hook("_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` saved this
        module and its children (it must return None)."""
        return self._add_state_hook("_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries."""
        def bound(*args):
            return hook(self, *args)
        return self._add_state_hook("_load_state_dict_pre_hooks", bound)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after ``load_state_dict`` (it must return None;
        it may edit the key lists in place)."""
        return self._add_state_hook("_load_state_dict_post_hooks", hook)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        return self._add_state_hook("_state_dict_hooks", hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self._add_state_hook("_load_state_dict_pre_hooks", hook)

    def _add_state_hook(self, kind: str, hook) -> RemovableHandle:
        hooks = _hooks(self, kind)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle
