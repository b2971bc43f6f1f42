"""PyTorch support for the notebook toolkit: the same views for torch tensors and modules.

Nothing in this package's ``__init__`` imports torch. The toolkit asks :func:`is_torch_tensor`
and :func:`is_torch_module` about the objects it meets; both answer False without importing
anything while torch is not loaded (no torch object can exist then). Only when one of them says
yes does the toolkit import the submodules that use torch:

- :mod:`.saved`: the tensors a torch backward node saved, and their storages' bytes;
- :mod:`.records`: torch's ``grad_fn`` graph as the toolkit's trace records (:class:`TorchTrace`);
- :mod:`.live`: ``%%trace`` on torch code, recording through a ``TorchFunctionMode``;
- :mod:`.backward`: ``%backward`` on a torch tensor (gradients, steps and the bytes released);
- :mod:`.graph`: the records drawn as a :class:`~gradnb.notebook.graphmodel.Graph`, with
  module grouping and devices.
"""

from __future__ import annotations

import sys


def torch_loaded() -> bool:
    """Whether the user's program has imported torch (so torch objects may exist)."""
    return "torch" in sys.modules


def is_torch_tensor(value: object) -> bool:
    """Whether ``value`` is a ``torch.Tensor`` (never imports torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(type(value), torch.Tensor)


def is_torch_module(value: object) -> bool:
    """Whether ``value`` is a ``torch.nn.Module`` (never imports torch)."""
    torch = sys.modules.get("torch")
    nn = getattr(torch, "nn", None)
    return nn is not None and isinstance(value, nn.Module)


def to_numpy(tensor):
    """A torch tensor's values as a NumPy array on the host (bfloat16 read as float32)."""
    data = tensor.detach()
    if data.dtype == sys.modules["torch"].bfloat16:
        data = data.float()
    return data.cpu().resolve_conj().resolve_neg().numpy()


def build_graph_for(trace, names, **options):
    """Lay out ``trace`` with the shared builder, through the torch adapter when it is a torch
    trace (module groups, devices); ``options`` go to the builder."""
    if torch_loaded():
        from gradnb.notebook.torch_adapter.records import TorchTrace

        if isinstance(trace, TorchTrace):
            from gradnb.notebook.torch_adapter.graph import build_torch_graph

            return build_torch_graph(trace, names, **options)
    from gradnb.notebook.build import build_graph

    return build_graph(trace, names, **options)


def snapshot_of(tensors: list):
    """A trace of the graph behind ``tensors`` (all gradnb's or all torch's)."""
    if tensors and all(is_torch_tensor(t) for t in tensors):
        from gradnb.notebook.torch_adapter.records import snapshot

        return snapshot(tensors)
    from gradnb.autograd.trace import snapshot

    return snapshot(tensors)


def live_traces() -> list:
    """The recorders ``%%trace`` adds for torch code: one while torch is loaded, else none."""
    if not torch_loaded():
        return []
    from gradnb.notebook.torch_adapter.live import LiveTorchTrace

    return [LiveTorchTrace()]
