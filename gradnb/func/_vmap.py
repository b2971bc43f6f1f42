"""``vmap``: map a function over a batch dimension.

gradnb has no batching rules, so ``vmap`` is a Python loop: it slices every mapped argument
along its ``in_dims`` entry, calls ``func`` once per batch element, and stacks the results
along ``out_dims``. The values, shapes and error messages are PyTorch's; the speed is that of
the loop (it also means a function that prints or mutates state does so once per element).
"""

from __future__ import annotations

import functools

from .._core.tensor import Tensor
from ..ops.shape import stack
from ._tree import tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _broadcast_dims(dims, tree, what: str):
    """``dims`` expanded to one entry per leaf of ``tree`` (an int or None applies to all)."""
    leaves, spec = tree_flatten(tree)
    if dims is None or isinstance(dims, int):
        return [dims] * len(leaves)
    dim_leaves, dim_spec = tree_flatten(dims)
    if dim_spec == spec:
        return dim_leaves
    # A prefix: each entry covers a whole subtree of the argument.
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)) \
            and len(dims) == len(tree):
        out = []
        for d, sub in zip(dims, tree):
            out += _broadcast_dims(d, sub, what)
        return out
    raise ValueError(f"vmap(f, {what}={dims}, ...)(<inputs>): {what} is not compatible with the "
                     "structure of `inputs`.")


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs; results stacked at
    ``out_dims`` (see the module docstring: a loop, not a batched kernel).

    >>> import gradnb
    >>> from gradnb.func import vmap
    >>> vmap(gradnb.dot)(gradnb.ones(3, 2), gradnb.arange(6.0).reshape(3, 2))
    tensor([1., 5., 9.])
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                             "compatible with the structure of `inputs`. in_dims has structure "
                             f"with {len(in_dims)} entries but inputs has {len(args)}.")
        leaves, spec = tree_flatten(list(args))
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) else
                               [in_dims] * len(args), list(args), "in_dims")
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(  # noqa: TRY004 - PyTorch's type
                    f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                                 f"an input but the input is of type {type(x)}. We cannot vmap "
                                 "over non-Tensor arguments, please use None as the respective "
                                 "in_dim")
            if not -max(x.dim(), 1) <= d < max(x.dim(), 1) or x.dim() == 0:
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                                 f"some input, but that input is a Tensor of dimensionality "
                                 f"{x.dim()} so expected in_dim to satisfy -{x.dim()} <= in_dim "
                                 f"< {x.dim()}.")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): at least one input "
                             "must be a Tensor with a mapped dimension (in_dim not None)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        results = []
        for b in range(sizes[0]):
            sliced = [x.select(d, b) if d is not None else x for x, d in zip(leaves, dims)]
            results.append(func(*tree_unflatten(sliced, spec), **kwargs))
        out_leaves_per_b = [tree_flatten(r) for r in results]
        out_spec = out_leaves_per_b[0][1]
        n_out = len(out_leaves_per_b[0][0])
        odims = _broadcast_dims(out_dims, results[0], "out_dims")
        stacked = []
        for i in range(n_out):
            column = [leaves_b[i] for leaves_b, _ in out_leaves_per_b]
            if odims[i] is None:
                stacked.append(column[0])
            else:
                stacked.append(stack(column, odims[i]))
        return tree_unflatten(stacked, out_spec)

    return wrapper
