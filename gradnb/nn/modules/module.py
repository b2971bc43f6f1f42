"""Module: the base class of every layer and model.

A module owns parameters, buffers and sub-modules, registered by assigning them as attributes;
everything else (``parameters()``, ``state_dict()``, ``to()``, ``train()``/``eval()``, hooks,
``repr``) walks that tree, with PyTorch's names and behaviour.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..._core import dtype as _dtype
from ..._core import events
from ..._core.backend import device as Device
from ..._core.backend import to_device
from ..._core.deepcopy import copy_attributes
from ..._core.graph import bump_version
from ..._core.hooks import RemovableHandle
from ..._core.hooks import register as _register
from ..._core.tensor import Tensor
from ...utils.hooks import BackwardHook
from ..parameter import Buffer, Parameter
from .state_dict import StateDictMixin, _IncompatibleKeys  # noqa: F401 - re-exported

__all__ = ["Module", "zero_grads"]


def zero_grads(params, set_to_none: bool = True) -> None:
    """Reset the ``.grad`` of each parameter: to None, or to zeros in place."""
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p._grad = None
        elif getattr(g, "is_sparse", False):
            g.zero_()
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g._requires_grad = False
            g._data[...] = 0
            bump_version(g)


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module(StateDictMixin):
    """Base class for layers and models: subclass it, assign layers and ``Parameter``s in
    ``__init__``, and write ``forward``. Call the module (not ``forward``) so hooks run.

    >>> import gradnb
    >>> from gradnb import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", {})
        setattr_(self, "_forward_pre_hooks", {})
        setattr_(self, "_backward_hooks", {})
        setattr_(self, "_backward_pre_hooks", {})

    def forward(self, *args, **kwargs):
        """The computation of this module; subclasses define it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if not events.observers:
            # A module without hooks (nearly every call) runs its forward directly.
            d = self.__dict__
            if d.get("_forward_pre_hooks") or d.get("_forward_hooks") \
                    or d.get("_backward_hooks") or d.get("_backward_pre_hooks") \
                    or d.get("_non_full_backward_hooks"):
                return self._call_with_hooks(args, kwargs)
            return self.forward(*args, **kwargs)
        # Observers (a trace grouping ops by module) see which module's forward is running.
        events.emit("module_entered", self)
        try:
            return self._call_with_hooks(args, kwargs)
        finally:
            events.emit("module_exited", self)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        backward_hooks = self.__dict__.get("_backward_hooks")
        backward_pre_hooks = self.__dict__.get("_backward_pre_hooks")
        bw_hook = None
        if backward_hooks or backward_pre_hooks:
            bw_hook = BackwardHook(self, list(backward_hooks.values()),
                                   list(backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if bw_hook is not None:
            if not isinstance(output, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor "
                              f"or a tuple of Tensors but received {type(output)}", stacklevel=3)
            output = bw_hook.setup_output_hook(output)
        non_full = self.__dict__.get("_non_full_backward_hooks")
        if non_full:
            self._attach_non_full_backward_hooks(args, output, list(non_full.values()))
        return output

    def _attach_non_full_backward_hooks(self, args: tuple, output, hooks: list) -> None:
        """PyTorch's deprecated ``register_backward_hook``: each hook is a hook on the node that
        made the (first) output, called as ``hook(module, grad_input, grad_output)`` with that
        node's gradients, which are the module's only when the module is one op."""
        var = output
        while not isinstance(var, Tensor):
            var = next(iter(var.values())) if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in hooks:
            grad_fn.register_hook(lambda gi, go, hook=hook: hook(self, gi, go))
        _warn_non_full_backward_hook(args, output, grad_fn)

    # -- registration ---------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is saved and moved with the module but not trained."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name: str, kind: str, table: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        buffers = self.__dict__.get("_buffers")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            if "." in name or not name:  # (only setattr() passes these: PyTorch registers, so
                self._check_name(name, "parameter", params)  # it refuses them)
            self._forget(name, keep="_parameters")
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer):
            self._forget(name)
            self.register_buffer(name, value.data, value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str | None = None) -> None:
        # ``keep`` is the table about to receive ``name`` again: leaving its entry in place keeps
        # the registration order, so ``seq[1] = layer`` replaces layer 1 where it stands.
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            if table != keep:
                self.__dict__[table].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        # (unrolled: ``self.weight`` in every layer's forward comes here)
        d = self.__dict__
        table = d.get("_parameters")
        if table is not None and name in table:
            return table[name]
        table = d.get("_buffers")
        if table is not None and name in table:
            return table[name]
        table = d.get("_modules")
        if table is not None and name in table:
            return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(table, {}):
                del self.__dict__[table][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # -- traversal ------------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every descendant, each once, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every descendant, each once."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for each direct child, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children, each once."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in module.__dict__[table].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs, shared parameters once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module and its descendants (what optimizers take)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(name, buffer)`` pairs of this module and its descendants."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module and its descendants."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` (``''`` is this module)."""
        module = self
        if target == "":
            return module
        for part in target.split("."):
            if part not in module._modules:
                raise AttributeError(f"{module._get_name()} has no attribute `{part}`")
            module = module._modules[part]
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target``, replacing what is there (with ``strict``,
        only an existing attribute)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")  # noqa: TRY004 - as PyTorch
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(f"{parent._get_name()} has no attribute `{atoms[-1]}`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError(f"`{atoms[-1]}` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def compile(self, *args, **kwargs) -> None:
        """``torch.compile`` this module's forward in place: it takes ``gradnb.compile``'s
        arguments (checked) and the module runs as it is, eagerly."""
        from ..._runtime import compile as compile_

        compile_(self, *args, **kwargs)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move the parameters and buffers to ``device`` without copying their values (they read
        as zeros: gradnb never hands out old memory)."""
        target = Device(device) if not isinstance(device, Device) else device
        modules = self.modules() if recurse else [self]
        for module in modules:
            for tensors in (module._parameters, module._buffers):
                for t in tensors.values():
                    if t is not None:
                        t._data = to_device(np.zeros(t._data.shape, t._data.dtype), target)
        return self

    def type(self, dst_type) -> Module:
        """Cast every parameter and buffer to ``dst_type`` (a dtype or a legacy type name)."""
        from ...ops import tensor_api

        if isinstance(dst_type, str):  # "torch.DoubleTensor"
            dst_type = getattr(tensor_api, dst_type.rpartition(".")[2])
        if isinstance(dst_type, tensor_api._LegacyTensorMeta):
            dst_type = getattr(_dtype, dst_type._dtype_name)
        np_dtype = _dtype.as_dtype(dst_type).np
        return self._apply(lambda a: a.astype(np_dtype, copy=False), floating_only_buffers=False)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every descendant, then on this module (e.g. to initialise weights)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients --------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch statistics) on this module and below."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004 - as PyTorch
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (False) or unfreeze every parameter: frozen ones get no gradient, and the
        backward pass skips the work that would only feed them."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None by default)."""
        zero_grads(self.parameters(), set_to_none)

    # -- hooks ----------------------------------------------------------------------------------
    def register_forward_hook(self, hook: Callable, *, prepend: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-None return replaces the
        output. Returns a handle with ``remove()``."""
        handle = _register(self._forward_hooks, hook)
        if prepend:
            self._move_first(self._forward_hooks, handle.id)
        return handle

    def register_forward_pre_hook(self, hook: Callable, *,
                                  prepend: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None return replaces ``args``."""
        handle = _register(self._forward_pre_hooks, hook)
        if prepend:
            self._move_first(self._forward_pre_hooks, handle.id)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False
                                    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs once the gradients of the module's
        positional tensor inputs are computed; a non-None return (a tuple as long as
        ``grad_input``) replaces them. Entries that are not tensors, or need no gradient, are
        None. Returns a handle with ``remove()``.

        >>> import gradnb
        >>> layer = gradnb.nn.Linear(2, 1)
        >>> seen = []
        >>> _ = layer.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> layer(gradnb.ones(3, 2, requires_grad=True)).sum().backward()
        >>> seen
        [gradnb.Size([3, 1])]
        """
        if self.__dict__.get("_non_full_backward_hooks"):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on "
                               "a single Module. Please use only one of them.")
        handle = _register(self._backward_hooks, hook)
        if prepend:
            self._move_first(self._backward_hooks, handle.id)
        return handle

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated for ``register_full_backward_hook``: ``hook(module, grad_input,
        grad_output)`` on the node that made the module's output, so ``grad_input`` is that
        node's (PyTorch warns when that is not the module's)."""
        if self._backward_hooks or self._backward_pre_hooks:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on "
                               "a single Module. Please use only one of them.")
        hooks = self.__dict__.get("_non_full_backward_hooks")
        if hooks is None:
            hooks = {}
            object.__setattr__(self, "_non_full_backward_hooks", hooks)
        return _register(hooks, hook)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False
                                        ) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the module's outputs are
        computed, before those of its inputs; a non-None return replaces ``grad_output``."""
        handle = _register(self._backward_pre_hooks, hook)
        if prepend:
            self._move_first(self._backward_pre_hooks, handle.id)
        return handle

    @staticmethod
    def _move_first(table: dict, key) -> None:
        value = table.pop(key)
        rest = dict(table)
        table.clear()
        table[key] = value
        table.update(rest)

    # -- state ----------------------------------------------------------------------------------
    # -- devices and dtypes ---------------------------------------------------------------------
    def _apply(self, fn: Callable, floating_only_buffers: bool = True) -> Module:
        """Replace the array of every parameter, gradient and buffer by ``fn(array)``; the
        tensor objects stay the same (optimizers keep working)."""
        for module in self.modules():
            for p in module._parameters.values():
                if p is None:
                    continue
                p._data = fn(p._data)
                if p._grad is not None and not getattr(p._grad, "is_sparse", False):
                    p._grad._data = fn(p._grad._data)
            for b in module._buffers.values():
                if b is not None:
                    b._data = fn(b._data) if _dtype.is_float_np(b._data.dtype) or not \
                        floating_only_buffers else _device_only(fn, b._data)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move (``'cuda'``, ``'cpu'``) and/or cast floating-point state (``gradnb.float64``)."""
        dtype = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        for a in args:
            if isinstance(a, Tensor):
                dtype, dev = a.dtype, a.device
            elif isinstance(a, (str, Device)):
                dev = a
            else:
                dtype = a
        np_dtype = None if dtype is None else _dtype.as_dtype(dtype).np
        target = None if dev is None else Device(dev)
        if target is not None and target.type == "cuda" and target.index is None:
            target = Device("cuda", 0)

        def convert(arr):
            if target is not None:
                arr = to_device(arr, target)
            if np_dtype is not None and _dtype.is_float_np(arr.dtype) and arr.dtype != np_dtype:
                arr = arr.astype(np_dtype)
            return arr

        return self._apply(convert)

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """Move every parameter and buffer to a CUDA device (CuPy)."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self.to(dtype="float32")

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self.to(dtype="float64")

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self.to(dtype="float16")

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self.to(dtype="bfloat16")

    # -- printing -------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (subclasses override)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    def __reduce_ex__(self, protocol):
        raise TypeError("gradnb modules are not pickled; save model.state_dict() with gradnb.save")

    def __deepcopy__(self, memo):
        """An independent copy; parameters shared inside the module stay shared."""
        return copy_attributes(self, memo)


def _warn_non_full_backward_hook(inputs: tuple, result, grad_fn) -> None:
    """PyTorch's warnings where a non-full backward hook sees less than the module's
    gradients."""
    def warn(text: str) -> None:
        warnings.warn(text, FutureWarning, stacklevel=4)

    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warn("Using non-full backward hooks on a Module that does not return a single Tensor or a "
             "tuple of Tensors is deprecated and will be removed in future versions. This hook "
             "will be missing some of the grad_output. Please use register_full_backward_hook to "
             "get the documented behavior.")
        return
    if not all(isinstance(i, Tensor) for i in inputs):
        warn("Using non-full backward hooks on a Module that does not take as input a single "
             "Tensor or a tuple of Tensors is deprecated and will be removed in future versions. "
             "This hook will be missing some of the grad_input. Please use "
             "register_full_backward_hook to get the documented behavior.")
        return
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warn("Using a non-full backward hook when outputs are nested in python data structure is "
             "deprecated and will be removed in future versions. This hook will be missing some "
             "grad_output.")
    elif len(out_grad_fn) > 1:
        warn("Using a non-full backward hook when outputs are generated by different autograd "
             "Nodes is deprecated and will be removed in future versions. This hook will be "
             "missing some grad_output. Please use register_full_backward_hook to get the "
             "documented behavior.")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != \
            {n for n, _ in grad_fn.next_functions}:
        warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
             "deprecated and will be removed in future versions. This hook will be missing some "
             "grad_input. Please use register_full_backward_hook to get the documented "
             "behavior.")


def _device_only(fn, arr):
    """Apply a conversion's device move but not its dtype cast (integer buffers keep dtype)."""
    out = fn(arr)
    return out if out.dtype == arr.dtype else out.astype(arr.dtype)


