"""Hooks on saved tensors: ``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``.

Inside ``saved_tensors_hooks(pack, unpack)``, every tensor an op saves for backward goes
through ``pack`` and the graph keeps only what ``pack`` returned; backward calls ``unpack`` to
get a tensor back. recording (``gradnb._core.graph``) consults the innermost pair on
``graph.switches.saved_tensor_hooks``; this module manages that stack.

Two differences from a plain call of the user's hooks, both so that gradnb behaves like
PyTorch:

- The tensor that ``unpack`` returns is put back in its place in the graph (same ``grad_fn``,
  same leaf), so a double backward through saved values still reaches the original inputs even
  when ``pack`` copied them elsewhere.
- An output saved by its own op reaches ``pack`` detached. PyTorch passes the output itself;
  gradnb detaches it so that a ``pack`` returning its argument cannot make the output keep its
  own node alive (a reference cycle that only the garbage collector would free).

The hooks are process-wide, not per thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from .._core.graph import switches
from .._core.tensor import Tensor

__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]


class _DisabledState:
    message: str | None = None  # set while ``disable_saved_tensors_hooks`` is active


_disabled = _DisabledState()


class saved_tensors_hooks:
    """Context manager: pass tensors saved for backward through ``pack_hook`` and get them back
    with ``unpack_hook``.

    >>> import gradnb
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t.detach().numpy().copy()
    >>> def unpack(array):
    ...     return gradnb.from_numpy(array)
    >>> x = gradnb.tensor([1.0, 2.0], requires_grad=True)
    >>> with gradnb.autograd.graph.saved_tensors_hooks(pack, unpack):
    ...     y = x.pow(2)
    >>> packed
    [gradnb.Size([2])]
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _disabled.message is not None:
            raise RuntimeError(_disabled.message)
        switches.saved_tensor_hooks.append(
            (_guarded_pack(self.pack_hook), _restoring_unpack(self.unpack_hook)))

    def __exit__(self, *exc) -> None:
        switches.saved_tensor_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep tensors saved for backward in host memory and move them back to their device for
    backward: trades transfer time for accelerator memory. ``pin_memory`` is accepted for
    PyTorch compatibility and has no effect."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Forbid saved-tensor hooks inside the block: installing one raises
    ``RuntimeError(error_message)``, as does entering while hooks are active."""
    if switches.saved_tensor_hooks:
        raise RuntimeError(error_message)
    previous = _disabled.message
    _disabled.message = error_message
    try:
        yield
    finally:
        _disabled.message = previous


# -- what goes on the hooks stack ----------------------------------------------------------------
class _Packed:
    """What the graph keeps for one saved tensor: the user's packed value plus the tensor's
    place in the graph (its node, or its leaf's accumulator, held only as weakly as the graph
    already holds them)."""

    __slots__ = ("accumulator", "grad_fn", "output_nr", "requires_grad", "value")

    def __init__(self, value, t) -> None:
        self.value = value
        self.grad_fn = t.grad_fn
        self.output_nr = t._output_nr
        self.requires_grad = t._requires_grad
        self.accumulator = t._accumulator

    @property
    def _data(self):
        """The array the packed value holds, if any (read by the graph's memory accounting)."""
        value = self.value
        data = getattr(value, "_data", value)
        return data if hasattr(data, "nbytes") and hasattr(data, "base") else None


def _guarded_pack(pack_hook):
    def pack(t):
        version = t._version_counter[0]
        value = pack_hook(t)
        if t._version_counter[0] != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform in-place "
                "operations on the input to a pack hook."
            )
        return _Packed(value, t)

    return pack


def _restoring_unpack(unpack_hook):
    def unpack(packed: _Packed):
        t = unpack_hook(packed.value)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if not packed.requires_grad:
            return t
        restored = Tensor._make(t._data, True, packed.grad_fn, packed.output_nr)
        restored._accumulator = packed.accumulator  # a leaf's gradient still reaches the leaf
        return restored

    return unpack
