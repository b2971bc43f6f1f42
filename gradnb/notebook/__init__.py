"""The notebook toolkit: ``%load_ext gradnb`` and the views behind its magics.

Views (usable without magics, in any IPython display):

- :class:`GraphView`: a computation graph (from a ``graph_trace()``, tensors, or a Graph) as SVG,
  DOT and text;
- :class:`GradTable`: ``.grad`` of named tensors;
- :class:`MemoryMeter`: freed/released/retained bytes of each backward, with a plot;
- :class:`GradFlow`: per-parameter gradient statistics across a model's layers;
- :class:`TraceDiff` (``diff(before, after)``): what changed between two traced runs;
- :func:`why`: why a tensor's ``.grad`` is None, zero, NaN or accumulated, with the line.

``graph_trace()`` here records a graph and watches it (source lines, cut edges); ``watching()`` watches
without recording a graph, so ``why`` can say where things happened.

The views and magics take PyTorch tensors and modules as well when torch is installed
(:mod:`gradnb.notebook.torch_adapter`, loaded only once a torch object is met).

Importing this package does not import IPython, ipywidgets or torch; the magics module imports
IPython, and is loaded only by ``%load_ext gradnb``.
"""

from __future__ import annotations

from gradnb.autograd.trace import Trace
from gradnb.notebook import extension
from gradnb.notebook.explain import WatchedTrace, watching, why
from gradnb.notebook.grad_flow import GradFlow
from gradnb.notebook.grad_table import GradTable
from gradnb.notebook.graph_view import GraphView
from gradnb.notebook.memory_meter import MemoryMeter
from gradnb.notebook.trace_diff import TraceDiff, diff

__all__ = [
    "GradFlow",
    "GradTable",
    "GraphView",
    "MemoryMeter",
    "Trace",
    "TraceDiff",
    "diff",
    "graph_trace",
    "load_ipython_extension",
    "unload_ipython_extension",
    "watching",
    "why",
]


def graph_trace() -> WatchedTrace:
    """Record the graph of every op run in the block, with each op's source line and the places
    where values left the graph (``with gradnb.notebook.graph_trace() as t: ...``): the
    engine's :func:`gradnb.autograd.graph_trace` plus watching."""
    return WatchedTrace()


def load_ipython_extension(ipython) -> None:
    """Called by ``%load_ext gradnb``: register magics, tensor HTML and the memory log."""
    extension.load(ipython)


def unload_ipython_extension(ipython) -> None:
    """Called by ``%unload_ext gradnb``: remove what loading registered."""
    extension.unload(ipython)
