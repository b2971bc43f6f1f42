"""PyTorch support for the notebook toolkit: the same views for torch tensors and modules.

Nothing in this package's ``__init__`` imports torch. The toolkit asks :func:`is_torch_tensor`
and :func:`is_torch_module` about the objects it meets; both answer False without importing
anything while torch is not loaded (no torch object can exist then). Only when one of them says
yes does the toolkit import the submodules that use torch:

- :mod:`.saved`: the tensors a torch backward node saved, and their storages' bytes;
- :mod:`.records`: torch's ``grad_fn`` graph as the toolkit's trace records (:class:`TorchTrace`);
- :mod:`.live`: ``%%trace`` on torch code, recording through a ``TorchFunctionMode``;
- :mod:`.backward`: ``%backward`` on a torch tensor (gradients, steps and the bytes released);
- :mod:`.watch`: source lines and cuts for torch code (``%why``), and the one mode that feeds
  ``%%trace``'s recording;
- :mod:`.graph`: the records drawn as a :class:`~gradnb.notebook.graphmodel.Graph`, with
  module grouping and devices.
"""

from __future__ import annotations

from gradnb.autograd.trace import snapshot
from gradnb.notebook.build import build_graph
from gradnb.notebook.explain.watcher import SESSION_FOLLOWERS, watcher
from gradnb.notebook.torch_objects import (
    is_torch_module,
    is_torch_tensor,
    to_numpy,
    torch_loaded,
)

__all__ = [
    "build_graph_for",
    "follow_watch_session",
    "is_torch_module",
    "is_torch_tensor",
    "live_traces",
    "snapshot_of",
    "to_numpy",
    "torch_loaded",
]


def build_graph_for(trace, names, **options):
    """Lay out ``trace`` with the shared builder, through the torch adapter when it is a torch
    trace (module groups, devices); ``options`` go to the builder."""
    if torch_loaded():
        # The submodules that use torch load only once torch is (import time).
        from gradnb.notebook.torch_adapter.records import TorchTrace

        if isinstance(trace, TorchTrace):
            from gradnb.notebook.torch_adapter.graph import build_torch_graph

            return build_torch_graph(trace, names, **options)
    return build_graph(trace, names, **options)


def snapshot_of(tensors: list):
    """A trace of the graph behind ``tensors`` (all gradnb's or all torch's)."""
    if tensors and all(is_torch_tensor(t) for t in tensors):
        # Uses torch: loaded only once a torch tensor is met (import time).
        from gradnb.notebook.torch_adapter.records import snapshot as torch_snapshot

        return torch_snapshot(tensors)
    return snapshot(tensors)


def follow_watch_session() -> None:
    """Watch torch code exactly while ``%watch on`` is in force (called when the session is
    switched and before each cell, since torch may be imported after ``%watch on``)."""
    if not torch_loaded():
        return
    from gradnb.notebook.torch_adapter.watch import torch_watcher  # uses torch (import time)

    on, watch = watcher().session, torch_watcher()
    if on and not watch.session:
        watch.session = True
        watch.start()
    elif not on and watch.session:
        watch.session = False
        watch.stop()


SESSION_FOLLOWERS.append(follow_watch_session)


def live_traces() -> list:
    """The recorders ``%%trace`` adds for torch code: one while torch is loaded, else none."""
    if not torch_loaded():
        return []
    from gradnb.notebook.torch_adapter.live import LiveTorchTrace  # uses torch (import time)

    return [LiveTorchTrace()]
