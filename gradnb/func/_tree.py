"""Minimal pytrees: tensors nested in tuples, lists and dicts, flattened and rebuilt."""

from __future__ import annotations

__all__ = ["tree_flatten", "tree_map", "tree_unflatten"]


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order and what ``tree_unflatten`` needs to rebuild."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub_leaves, sub_spec = tree_flatten(item)
            leaves += sub_leaves
            specs.append((len(sub_leaves), sub_spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key, item in tree.items():
            sub_leaves, sub_spec = tree_flatten(item)
            leaves += sub_leaves
            specs.append((key, len(sub_leaves), sub_spec))
        return leaves, (dict, specs)
    return [tree], None


def tree_unflatten(leaves, spec):
    """The tree of ``spec`` with ``leaves`` in place of the original ones."""
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        out, start = {}, 0
        for key, n, sub in specs:
            out[key] = tree_unflatten(leaves[start:start + n], sub)
            start += n
        return out
    items, start = [], 0
    for n, sub in specs:
        items.append(tree_unflatten(leaves[start:start + n], sub))
        start += n
    if hasattr(kind, "_fields"):  # a namedtuple
        return kind(*items)
    return kind(items)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)
