"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``.

Each call differentiates with ``create_graph=True`` whenever an input already has a graph, so
transforms compose (``grad(grad(f))``, ``jacrev(jacrev(f))``); results are detached otherwise.
"""

from __future__ import annotations

import functools

from .. import ops
from .._core.tensor import Tensor
from ..autograd.engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ._tree import tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "jacrev", "vjp"]


def _argnums_tuple(argnums, n_args: int, api: str):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{api}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(  # noqa: TRY004 - PyTorch's type
                f"{api}: argnums must be int or Tuple[int, ...], got: "
                               f"{type(argnums)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    return tuple(a % n_args for a in nums)


def track(x):
    """A fresh tensor to differentiate at: a view when ``x`` has history (so outer transforms
    see through it), a detached leaf requiring grad otherwise."""
    if not isinstance(x, Tensor):
        raise RuntimeError(  # noqa: TRY004 - PyTorch's type
            f"Expected tensors as inputs to differentiate, got {type(x).__name__}")
    if x.requires_grad:
        return x.view_as(x)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return x.detach().requires_grad_()


def prepare(args, argnums, api):
    """``(args with tracked leaves, leaves, spec, was_int, outer)`` for the differentiated args;
    ``outer`` is True when an input already had history (an enclosing transform)."""
    nums = _argnums_tuple(argnums, len(args), api)
    args = list(args)
    leaves_per_arg, specs = [], []
    outer = False
    for a in nums:
        leaves, spec = tree_flatten(args[a])
        outer = outer or any(isinstance(x, Tensor) and x.requires_grad for x in leaves)
        tracked = [track(x) for x in leaves]
        args[a] = tree_unflatten(tracked, spec)
        leaves_per_arg.append(tracked)
        specs.append(spec)
    return args, leaves_per_arg, specs, isinstance(argnums, int), outer


def finish(x, outer: bool):
    return x if outer else (x.detach() if isinstance(x, Tensor) else x)


def _split_aux(out, has_aux: bool, api: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}(f, ...)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


def grads_of(output, leaves_per_arg, specs, was_int, create_graph, grad_outputs=None):
    flat = [x for leaves in leaves_per_arg for x in leaves]
    if output.requires_grad:
        found = _autograd_grad(output, flat, grad_outputs, create_graph=create_graph,
                               retain_graph=True, allow_unused=True)
    else:
        found = (None,) * len(flat)
    found = [g if g is not None else ops.creation.zeros_like(x) for g, x in zip(found, flat)]
    out, start = [], 0
    for leaves, spec in zip(leaves_per_arg, specs):
        out.append(tree_unflatten(found[start:start + len(leaves)], spec))
        start += len(leaves)
    return out[0] if was_int else tuple(out)


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``(gradient, value)`` of a scalar-valued ``func`` (``((gradient, (value, aux)))`` with
    ``has_aux``), w.r.t. the positional arguments ``argnums``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, specs, was_int, outer = prepare(args, argnums, "grad_and_value")
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError(  # noqa: TRY004 - PyTorch's type
                    "grad_and_value(f)(*args): Expected f(*args) to return a "
                    f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            g = grads_of(output, leaves, specs, was_int, create_graph=outer)
        g = _map_finish(g, outer)
        value = finish(output, outer)
        if has_aux:
            return g, (value, _map_finish(aux, outer))
        return g, value

    return wrapper


def _map_finish(tree, outer):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([finish(x, outer) for x in leaves], spec)


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a scalar-valued ``func`` w.r.t. its arguments ``argnums`` (a tuple of
    gradients for a tuple ``argnums``; ``(gradient, aux)`` with ``has_aux``).

    >>> import gradnb
    >>> from gradnb.func import grad
    >>> grad(lambda x: (x ** 3).sum())(gradnb.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> grad(grad(lambda x: x ** 3))(gradnb.tensor(2.0))
    tensor(12.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (and ``aux``); ``vjp_fn(cotangents)`` returns one gradient
    per primal, as a tuple."""
    with enable_grad():
        args, leaves, specs, _, outer = prepare(primals, tuple(range(len(primals))), "vjp")
        output, aux = _split_aux(func(*args), has_aux, "vjp")
    out_leaves, out_spec = tree_flatten(output)

    def vjp_fn(cotangents):
        cot_leaves, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec and not (out_spec is None and cot_spec is None):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function.")
        with enable_grad():
            kept = [(o, c) for o, c in zip(out_leaves, cot_leaves) if o.requires_grad]
            flat = [x for ls in leaves for x in ls]
            create = outer or any(c.requires_grad for _, c in kept)
            found = (_autograd_grad([o for o, _ in kept], flat, [c for _, c in kept],
                                    create_graph=create, retain_graph=True, allow_unused=True)
                     if kept else (None,) * len(flat))
        found = [finish(g, create) if g is not None else ops.creation.zeros_like(x)
                 for g, x in zip(found, flat)]
        out, start = [], 0
        for ls, spec in zip(leaves, specs):
            out.append(tree_unflatten(found[start:start + len(ls)], spec))
            start += len(ls)
        return tuple(out)

    result = _map_finish(output, outer)
    if has_aux:
        return result, vjp_fn, _map_finish(aux, outer)
    return result, vjp_fn


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """The Jacobian of ``func`` by reverse mode, one output element per backward pass: for
    each output ``out.shape + input.shape``, nested as the outputs and ``argnums`` are.
    ``chunk_size`` is accepted (every row runs on its own anyway)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, specs, was_int, outer = prepare(args, argnums, "jacrev")
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev")
            out_leaves, out_spec = tree_flatten(output)
            per_output = []
            for out in out_leaves:
                rows = []
                flat_out = out.reshape(-1)
                for k in range(out.numel()):
                    rows.append(grads_of(flat_out[k], leaves, specs, False, create_graph=True))
                per_output.append(_assemble_rows(rows, out, leaves, specs, was_int))
        jac = tree_unflatten([_map_finish(j, outer) for j in per_output], out_spec)
        if has_aux:
            return jac, _map_finish(aux, outer)
        return jac

    return wrapper


def _assemble_rows(rows, out, leaves_per_arg, specs, was_int):
    """Stack per-element gradients into ``out.shape + input.shape`` blocks, per input leaf."""
    blocks = []
    for a, (leaves, spec) in enumerate(zip(leaves_per_arg, specs)):
        arg_rows = [tree_flatten(r[a])[0] for r in rows]
        arg_blocks = []
        for i, x in enumerate(leaves):
            shape = (*out.shape, *x.shape)
            if arg_rows:
                arg_blocks.append(ops.shape.stack([r[i] for r in arg_rows], 0).reshape(shape))
            else:
                arg_blocks.append(ops.creation.zeros(shape, dtype=x.dtype, device=x.device))
        blocks.append(tree_unflatten(arg_blocks, spec))
    return blocks[0] if was_int else tuple(blocks)
