"""``functional_call``: run a module with some parameters and buffers swapped for others."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["functional_call"]


def _owner(module, dotted: str):
    *path, leaf = dotted.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


@contextmanager
def _swapped(module, tensors: dict):
    """Put ``tensors`` in place of the named parameters/buffers; restore them afterwards."""
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _owner(module, name)
            for table_name in ("_parameters", "_buffers"):
                table = owner.__dict__[table_name]
                if leaf in table:
                    saved.append((table, leaf, table[leaf]))
                    table[leaf] = value
                    break
            else:
                saved.append((owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                owner.__dict__[leaf] = value
        yield
    finally:
        for table, leaf, old in reversed(saved):
            if old is _MISSING:
                del table[leaf]
            else:
                table[leaf] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts) replaced by the given
    tensors for this call only. With ``tie_weights`` a tensor shared by two names (tied
    weights) follows a replacement given for either name; ``strict`` demands every parameter
    and buffer be given."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        tensors = dict(dicts)
    else:
        tensors = {}
        for d in dicts:
            for key in d:
                if key in tensors:
                    raise ValueError(f"{key} appeared in multiple dictionaries; behavior of "
                                     "functional call is ambiguous")
            tensors.update(d)
    names = dict(module.named_parameters(remove_duplicate=False))
    names.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = sorted(set(names) - set(tensors))
        unexpected = sorted(set(tensors) - set(names))
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
            if missing:
                parts.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__ + ":\n\t"
                               + "\n\t".join(parts))
    if tie_weights:
        # Names sharing one tensor with a replaced name get the same replacement.
        for name, value in list(tensors.items()):
            original = names.get(name)
            for other, t in names.items():
                if t is original and other not in tensors:
                    tensors[other] = value
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))
