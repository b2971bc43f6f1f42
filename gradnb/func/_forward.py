"""Forward-mode transforms: ``jvp``, ``jacfwd``, and ``hessian`` (forward over reverse), built on
:mod:`gradnb.autograd.forward_ad` (one dual level per Jacobian column)."""

from __future__ import annotations

import functools

from .. import ops
from .._core.tensor import Tensor
from ..autograd import forward_ad
from ._reverse import _argnums_tuple, _map_finish, _split_aux, jacrev
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
    outer = any(isinstance(p, Tensor) and p.requires_grad for p in p_leaves)
    primal_out = _map_finish(tree_unflatten([p for p, _ in pairs], out_spec), outer)
    tangent_out = tree_unflatten([t for _, t in pairs], out_spec)
    if has_aux:
        return primal_out, tangent_out, _map_finish(aux, outer)
    return primal_out, tangent_out


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
        flat_inputs = [(a, i, x) for a in nums
                       for i, x in enumerate(tree_flatten(args[a])[0])]
        columns = []  # per (arg, leaf): list of per-output tangents, one per element
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
                    out_leaves, out_spec = tree_flatten(output)
                    pairs = [_unpack_tangent(o) for o in out_leaves]
                cols.append([t for _, t in pairs])
            columns.append(cols)
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


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func))``, forward over reverse, as in
    PyTorch."""
    return jacfwd(jacrev(func, argnums), argnums)
