"""``gradnb.utils.hooks``: hook handles and ``BackwardHook``, which runs a module's full
backward hooks (``Module.register_full_backward_hook`` and ``..._pre_hook``), as PyTorch's.

The module's tensor inputs and outputs pass through an identity ``autograd.Function``
(``BackwardHookFunctionBackward`` in the graph). When the gradient reaches the outputs' node,
the pre-hooks see ``grad_output`` and may replace it; when it reaches the inputs' node, the hooks
see ``grad_input`` and ``grad_output`` and may replace ``grad_input``. Positions that are not
tensors, or whose tensor needs no gradient, read None.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._core.grad_mode import state as _grad_state
from .._core.hooks import RemovableHandle
from .._core.tensor import Tensor
from ..autograd.function import Function
from ..ops.creation import zeros

__all__ = ["BackwardHook", "BackwardHookFunction", "RemovableHandle"]


class BackwardHookFunction(Function):
    """The identity on tensors, whose node is where a module's backward hooks run."""

    @staticmethod
    def forward(ctx, on_backward: Callable, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        # The output side reads a gradient that never arrived as None; the input side fills in
        # zeros itself (PyTorch's hooks see exactly this).
        ctx.set_materialize_grads(False)
        ctx.on_backward = on_backward
        return args

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_backward(grads))


class BackwardHook:
    """Connects one call of a module to its full backward hooks (see the module doc)."""

    def __init__(self, module, user_hooks: Sequence[Callable],
                 user_pre_hooks: Sequence[Callable]) -> None:
        self.user_hooks = list(user_hooks)
        self.user_pre_hooks = list(user_pre_hooks)
        self.module = module
        self.grad_outputs: tuple | None = None
        self.n_inputs = -1
        self.n_outputs = -1
        self.input_tensors_index: list[int] | None = None
        self._input_specs: list[tuple] = []  # (shape, dtype, device) of each tensor input
        self.output_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices, values, size: int) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values, strict=True):
            res[idx] = val
        return tuple(res)

    def _on_inputs(self, grad_input: tuple) -> tuple:
        if self.grad_outputs is None:  # the outputs took no part in this backward
            return grad_input
        grad_input = tuple(zeros(shape, dtype=dtype, device=device) if g is None else g
                           for g, (shape, dtype, device) in zip(grad_input, self._input_specs,
                                                                strict=True))
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def _on_outputs(self, grad_output: tuple) -> tuple:
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                 self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            replaced = pre_hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(replaced)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = replaced
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input needs a gradient: fire here
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, on_backward: Callable, args: tuple) -> tuple[Any, list | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and _grad_state.enabled):
            return args, None
        new = BackwardHookFunction.apply(on_backward, *tensors)
        out = list(args)
        for i, t in zip(index, new, strict=True):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple) -> tuple:
        """Route the module's positional inputs through the node that runs the hooks."""
        res, index = self._apply_on_tensors(self._on_inputs, args)
        self.n_inputs = len(args)
        self.input_tensors_index = index
        if index is not None:
            self._input_specs = [(args[i].shape, args[i].dtype, args[i].device) for i in index]
        return res

    def setup_output_hook(self, result):
        """Route the module's output (a tensor or a tuple) through the node that captures
        ``grad_output`` and runs the pre-hooks."""
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index = self._apply_on_tensors(self._on_outputs, args)
        self.n_outputs = len(args)
        self.output_tensors_index = index
        return res if is_tuple else res[0]
