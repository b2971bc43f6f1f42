"""``autograd.graph.register_multi_grad_hook``: one hook over the gradients of several tensors.

Mode ``"all"``: once per backward pass, after the gradient of every tensor that the pass reaches
has been computed, ``fn(grads)`` with one entry per tensor (None for tensors the pass does not
reach). Mode ``"any"``: ``fn(grad)`` once per pass, with the first of those gradients computed.
The hook only observes; it does not change gradients.

>>> import gradnb
>>> from gradnb.autograd.graph import register_multi_grad_hook
>>> a, b = gradnb.ones(2, requires_grad=True), gradnb.ones(2, requires_grad=True)
>>> handle = register_multi_grad_hook((a, b), lambda gs: print([g.tolist() for g in gs]))
>>> (2 * a + 3 * b).sum().backward()
[[2.0, 2.0], [3.0, 3.0]]
>>> handle.remove()
"""

from __future__ import annotations

from .._core.graph import accumulator
from . import engine

__all__ = ["register_multi_grad_hook"]


class _MultiHandle:
    """Removes the per-tensor hooks together (PyTorch's ``RemovableHandle`` interface)."""

    def __init__(self, handles) -> None:
        self._handles = handles

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _will_execute(run, node) -> bool:
    """Whether the running backward pass ``run`` executes ``node``."""
    return node in run.deps and (run.needed is None or node in run.needed)


def _node_of(t):
    return t.grad_fn if t.grad_fn is not None else accumulator(t)


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` with the gradients of ``tensors`` once per backward pass (see the module
    docstring for the two modes). Returns a handle with ``remove()``."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    # Per running pass: the gradients so far and how many are still to come ("all"), or
    # whether fn already ran ("any"). Entries go when their pass has been answered.
    pending: dict = {}

    def make_hook(i):
        def hook(grad):
            current = engine.running[-1]
            if mode == "any":
                if current not in pending:
                    pending.clear()  # earlier passes are over
                    pending[current] = True
                    fn(grad)
                return
            state = pending.get(current)
            if state is None:
                pending.clear()
                expected = sum(1 for t in tensors if _will_execute(current, _node_of(t)))
                state = pending[current] = [[None] * len(tensors), expected]
            state[0][i] = grad
            state[1] -= 1
            if state[1] == 0:
                del pending[current]
                fn(tuple(state[0]))

        return hook

    return _MultiHandle([t.register_hook(make_hook(i)) for i, t in enumerate(tensors)])
