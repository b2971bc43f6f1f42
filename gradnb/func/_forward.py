"""Forward-mode transforms: ``jvp``, ``jacfwd``, and ``hessian`` (forward over reverse), built on
:mod:`gradnb.autograd.forward_ad` (one dual level per Jacobian column)."""

from __future__ import annotations

import functools

from .. import ops
from .._core.tensor import Tensor
from ..autograd import forward_ad
from ..autograd.engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ._reverse import _argnums_tuple, _map_finish, _split_aux, jacrev, prepare
from ._tree import tree_flatten, tree_unflatten

__all__ = ["hessian", "jacfwd", "jvp"]


def _unpack_tangent(out):
    primal, tangent = forward_ad.unpack_dual(out)
    if tangent is None:
        tangent = ops.creation.zeros_like(primal)
    return primal, tangent


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)`` by forward mode (``(..., aux)`` with ``has_aux``).
    ``strict`` is accepted and, as in PyTorch's ``torch.func.jvp``, checks nothing more."""
    if not isinstance(primals, tuple):
        raise RuntimeError(  # noqa: TRY004 - PyTorch's type
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure. For example, if primals is a tuple of 3 "
                           "tensors, tangents also must be.")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        output, aux = _split_aux(func(*tree_unflatten(duals, p_spec)), has_aux, "jvp")
        out_leaves, out_spec = tree_flatten(output)
        pairs = [_unpack_tangent(o) for o in out_leaves]
    # An output keeps its graph to whatever required grad outside the transform (a module's
    # parameters): PyTorch hands it back as an alias of the inner result.
    primal_out = tree_unflatten([_outer_alias(p) for p, _ in pairs], out_spec)
    tangent_out = tree_unflatten([t for _, t in pairs], out_spec)
    if has_aux:
        outer = any(isinstance(p, Tensor) and p.requires_grad for p in p_leaves)
        return primal_out, tangent_out, _map_finish(aux, outer)
    return primal_out, tangent_out


def _outer_alias(primal):
    return ops.shape.alias(primal) if primal.requires_grad else primal


def _basis(x: Tensor, k: int) -> Tensor:
    e = ops.creation.zeros(x.numel(), dtype=x.dtype, device=x.device)
    e[k] = 1
    return e.reshape(x.shape)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian of ``func`` by forward mode, one column per input element (blocks shaped
    ``out.shape + input.shape``, nested like the outputs and ``argnums``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        if forward_ad._current is not None:  # inside an enclosing jacfwd/jvp/hessian
            columns, output, aux = _columns_inside_a_level(func, args, kwargs, nums, has_aux)
        else:
            columns, output, aux = _columns_by_dual_levels(func, args, kwargs, nums, has_aux)
        if output is None:  # nothing to differentiate (all inputs empty): evaluate once
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacfwd")
        out_leaves, out_spec = tree_flatten(output)
        per_output = []
        for o, out in enumerate(out_leaves):
            blocks, start = [], 0
            for a in nums:
                leaves, spec = tree_flatten(args[a])
                arg_blocks = []
                for n, x in enumerate(leaves):
                    cols = columns[start + n]
                    shape = (*out.shape, *x.shape)
                    arg_blocks.append(ops.shape.stack([c[o] for c in cols], -1).reshape(shape)
                                      if cols else ops.creation.zeros(shape, dtype=out.dtype,
                                                                        device=out.device))
                start += len(leaves)
                blocks.append(tree_unflatten(arg_blocks, spec))
            per_output.append(blocks[0] if isinstance(argnums, int) else tuple(blocks))
        jac = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jac, _map_finish(aux, False)
        return jac

    return wrapper


def _columns_by_dual_levels(func, args, kwargs, nums, has_aux):
    """The Jacobian's columns ``J e_k``, one dual level per input element; per (arg, leaf), a
    list over its elements of per-output tangents. Also the output and aux."""
    flat_inputs = [(a, i, x) for a in nums for i, x in enumerate(tree_flatten(args[a])[0])]
    columns = []
    output = aux = None
    for a, i, x in flat_inputs:
            cols = []
            for k in range(x.numel()):
                call_args = list(args)
                leaves, spec = tree_flatten(args[a])
                with forward_ad.dual_level():
                    leaves = list(leaves)
                    leaves[i] = forward_ad.make_dual(x, _basis(x, k))
                    call_args[a] = tree_unflatten(leaves, spec)
                    output, aux = _split_aux(func(*call_args, **kwargs), has_aux, "jacfwd")
                    out_leaves, _ = tree_flatten(output)
                    pairs = [_unpack_tangent(o) for o in out_leaves]
                cols.append([t for _, t in pairs])
            columns.append(cols)
    return columns, output, aux


def _columns_inside_a_level(func, args, kwargs, nums, has_aux):
    """The same columns when a dual level is already open (``jacfwd(jacfwd(f))``). gradnb's
    forward AD opens one level at a time, as PyTorch's ``forward_ad`` does, so each column
    ``J e_k`` comes from the double-vjp trick at the level of the whole function (the trick
    ``forward_ad`` applies op by op): ``J e_k = d<J^T u, e_k>/du``. Every op this records is
    seen by the open level, which carries its own tangents through them, so the enclosing
    transform differentiates this Jacobian."""
    with enable_grad():
        tracked_args, leaves_per_arg, _, _, _ = prepare(args, nums, "jacfwd")
        output, aux = _split_aux(func(*tracked_args, **kwargs), has_aux, "jacfwd")
        out_leaves, _ = tree_flatten(output)
        flat = [x for leaves in leaves_per_arg for x in leaves]
        live = [o for o in out_leaves if o.requires_grad]
        us = [ops.creation.zeros_like(o).requires_grad_() for o in live]
        vjps = (_autograd_grad(live, flat, us, create_graph=True, retain_graph=True,
                               allow_unused=True) if live else (None,) * len(flat))
        columns = []
        for x, g in zip(flat, vjps):
            cols = []
            for k in range(x.numel()):
                found = (_autograd_grad(g.reshape(-1)[k], us, create_graph=True,
                                        retain_graph=True, allow_unused=True)
                         if g is not None and g.requires_grad else (None,) * len(us))
                by_output = dict(zip(map(id, live), found))
                cols.append([by_output.get(id(o)) if by_output.get(id(o)) is not None
                             else ops.creation.zeros_like(o) for o in out_leaves])
            columns.append(cols)
    return columns, output, aux


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func))``, forward over reverse, as in
    PyTorch."""
    return jacfwd(jacrev(func, argnums), argnums)
