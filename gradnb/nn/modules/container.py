"""Containers: Sequential, ModuleList, ModuleDict."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

from .module import Module

__all__ = ["ModuleDict", "ModuleList", "Sequential"]


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
