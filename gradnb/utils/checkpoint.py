"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the tensors its ops save for backward;
when backward needs them, it runs ``fn`` again (with the random state it had the first time,
so dropout masks repeat) and takes them from the rerun. Two variants, as in PyTorch:

- ``use_reentrant=False`` (recommended): the forward builds the usual graph, but every tensor
  saved inside the block is replaced by a placeholder (through ``saved_tensors_hooks``); the
  first placeholder unpacked in backward triggers the recomputation. Gradients reach every
  tensor the block uses, inputs and parameters alike, and ``autograd.grad`` works.
- ``use_reentrant=True``: the block becomes one ``CheckpointFunctionBackward`` node whose
  backward reruns the block and calls ``backward`` on it (a backward inside the backward).
  Gradients reach the block's parameters only if some input requires grad.

Without ``use_reentrant`` PyTorch 2.13 warns and picks the reentrant variant; so does gradnb.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

from .. import autograd
from .._core.grad_mode import enable_grad, no_grad
from .._core.grad_mode import state as _grad_state
from .._core.tensor import Tensor
from ..autograd.function import Function
from ..autograd.saved_hooks import saved_tensors_hooks
from ..ops.creation import default_generator

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)


class CheckpointError(RuntimeError):
    """The recomputation did not save the same tensors as the original forward pass."""


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs):
    """Run ``function(*args, **kwargs)`` without storing its intermediate activations; they
    are recomputed during backward.

    >>> import gradnb
    >>> from gradnb.utils.checkpoint import checkpoint
    >>> w = gradnb.tensor([2.0], requires_grad=True)
    >>> x = gradnb.tensor([3.0])
    >>> y = checkpoint(lambda t: (t * w).sin() * w, x, use_reentrant=False)
    >>> y.sum().backward()
    >>> w.grad
    tensor([5.4816])
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if not _grad_state.enabled:
        return function(*args, **kwargs)  # nothing is saved, so nothing to recompute
    frame = _Frame(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Split a sequence of modules/functions into ``segments`` and checkpoint each segment but
    the last (whose activations backward needs first anyway)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING.replace(
            "torch.utils.checkpoint:", "torch.utils.checkpoint.checkpoint_sequential:"),
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children"):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for fn in functions[start:end + 1]:
                x = fn(x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# -- non-reentrant: placeholders for saved tensors ---------------------------------------------------
class _Placeholder:
    """Stands in the graph for one tensor saved inside the block."""

    __slots__ = ("frame", "index")

    def __init__(self, frame: _Frame, index: int) -> None:
        self.frame = frame
        self.index = index


class _Frame:
    """One checkpointed call: how to rerun it, and what its ops saved (shape and dtype only)."""

    def __init__(self, function, args, kwargs, preserve_rng_state) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = default_generator.get_state() if preserve_rng_state else None
        self.saved_meta: list = []
        self.recomputed: dict = {}

    def pack(self, t) -> _Placeholder:
        self.saved_meta.append((tuple(t._data.shape), t._data.dtype))
        return _Placeholder(self, len(self.saved_meta) - 1)

    def unpack(self, placeholder: _Placeholder):
        if placeholder.index not in self.recomputed:
            self._recompute()
        # Each recomputed tensor is handed out once, so it is freed as soon as its node ran.
        return self.recomputed.pop(placeholder.index)

    def _recompute(self) -> None:
        captured: list = []

        def keep(t):
            captured.append(t.detach())
            return t

        with _restored_rng(self.rng_state), enable_grad(), saved_tensors_hooks(keep, _identity):
            self.function(*self.args, **self.kwargs)
        if len(captured) < len(self.saved_meta):
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save fewer tensors during recomputation than "
                f"during the original forward pass ({len(captured)} instead of "
                f"{len(self.saved_meta)})."
            )
        for index, (expected, t) in enumerate(zip(self.saved_meta, captured)):
            got = (tuple(t._data.shape), t._data.dtype)
            if got != expected:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\ntensor at position "
                    f"{index}:\nsaved metadata: {_describe(expected)}\nrecomputed metadata: "
                    f"{_describe(got)}\n"
                )
        self.recomputed = dict(enumerate(captured[:len(self.saved_meta)]))


def _identity(t):
    return t


def _describe(meta) -> str:
    shape, dtype = meta
    return f"{{'shape': {list(shape)}, 'dtype': {dtype}}}"


@contextlib.contextmanager
def _restored_rng(state) -> Iterator[None]:
    """Run with the generator at ``state`` (if given), then put it back where it was."""
    if state is None:
        yield
        return
    current = default_generator.get_state()
    default_generator.set_state(state)
    try:
        yield
    finally:
        default_generator.set_state(current)


# -- reentrant: one node that reruns the block in its backward -------------------------------------
class CheckpointFunction(Function):
    """PyTorch's reentrant checkpoint: a custom Function around the whole block."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(getattr(a, "requires_grad", False) for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=5)
        ctx.run_function = run_function
        ctx.rng_state = default_generator.get_state() if preserve_rng_state else None
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.inputs = [None if i in ctx.tensor_indices else a for i, a in enumerate(args)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t.detach().requires_grad_(t.requires_grad)
        with _restored_rng(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(t.grad if isinstance(t, Tensor) else None for t in inputs)
        return (None, None, *grads)


# Its node (``CheckpointFunctionBackward``) is gradnb's own, not a user's Function: it says what it
# does rather than the generic "your Function's backward" it would inherit.
CheckpointFunction._backward_cls.rule = "re-runs the forward, then backward through it"
