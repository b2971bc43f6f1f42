"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Self

from ..._core.tensor import Tensor
from ..parameter import Parameter
from .module import Module

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


class Sequential(Module):
    """Modules applied in order: ``Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))``, or
    from an ``OrderedDict`` of names to modules."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        """Feed ``input`` through each module in turn."""
        for module in self._modules.values():
            input = module(input)
        return input

    def _index(self, idx: int) -> str:
        keys = list(self._modules)
        n = len(keys)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return keys[idx % n]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._index(idx), module)

    def __delitem__(self, idx: int) -> None:
        del self._modules[self._index(idx)]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters the parent module sees."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key(self, idx: int) -> str:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx) -> None:
        items = list(self._modules.values())
        del items[idx]
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of ``modules`` at the end."""
        for module in modules:
            self.append(module)
        return self

    def __repr__(self) -> str:
        """Runs of identical children print once, as ``(0-2): 3 x Linear(...)`` (PyTorch)."""
        reprs = [repr(m) for m in self._modules.values()]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                body = reprs[start].replace("\n", "\n  ")
                if i - start > 1:
                    lines.append(f"({start}-{i - 1}): {i - start} x {body}")
                else:
                    lines.append(f"({start}): {body}")
                start = i
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules whose parameters the parent module sees."""

    def __init__(self, modules: dict | None = None) -> None:
        super().__init__()
        if modules is not None:
            for key, module in dict(modules).items():
                self.add_module(key, module)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        """The names, in insertion order."""
        return self._modules.keys()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self):
        """``(name, module)`` pairs, in insertion order."""
        return self._modules.items()


def _as_parameter(value: Any) -> Any:
    """A plain tensor stored in a parameter container becomes a Parameter sharing its memory
    (PyTorch); anything else (a Parameter, a module, any object) is kept as given."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _entry_repr(key: str, value: Any, type_name) -> str:
    """One line of a parameter container's repr, as PyTorch writes it."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(n) for n in value.shape)
    device = f" ({value.device})" if value.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters the parent module sees: entry ``i`` is registered under the name
    ``str(i)``, so ``named_parameters()`` and ``state_dict()`` read ``"params.0"``. Plain
    tensors put in become Parameters; other objects are held as they are."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, value: Any) -> None:
        # Every way in (constructor, append, extend) ends here: the one place that converts.
        setattr(self, self._key(idx), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, values: Iterable[Any]) -> Self:
        return self.extend(values)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each of ``values`` at the end (a tensor is one value, not an iterable)."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(str(i), p, lambda t: str(t.dtype))
                         for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters the parent module sees, each registered under its key. Plain tensors
    put in become Parameters; a plain ``dict`` is added in sorted key order, an ``OrderedDict``,
    a ParameterDict or a sequence of pairs in their own order (PyTorch)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}'). Open an issue on github if "
                            "you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        # Every way in (constructor, update, setdefault) ends here: the one place that converts.
        self._keys[key] = None
        setattr(self, self._attr(key), _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same entries (the same Parameter objects)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, first setting it to ``default`` if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        """Remove ``key`` and return its value."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)`` pair."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` if present, else ``default``."""
        return self[key] if key in self else default  # noqa: SIM401 (this is get)

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with each of ``keys`` set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """``(key, value)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add or overwrite entries from a mapping or an iterable of ``(key, value)`` pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = []
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(pair).__name__}")
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(pair)}; 2 is required")
                pairs.append(pair)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(k, p, lambda t: t.type()) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        new = self.copy()
        new.update(other)
        return new

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        new = other.copy()
        new.update(self)
        return new

    def __ior__(self, other: ParameterDict) -> Self:
        self.update(other)
        return self
