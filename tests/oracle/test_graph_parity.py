"""Graph parity with PyTorch: one test per op_db entry that supports autograd.

For every sample, gradnb must build PyTorch's graph: the same nodes breadth-first (names,
``next_functions`` in order), the same ``_saved_*`` names and values, the same tensors packed
through ``saved_tensors_hooks`` in the same order (``graph_parity.compare_graphs``). Entries in
``graph_known_gaps.GRAPH_GAPS`` are expected to differ, each with its reason, until they are
fixed and removed from there. Figures: ``python -m tests.oracle.graph_parity``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's testing internals import it

from .graph_known_gaps import GRAPH_GAPS
from .graph_parity import run_graph_entry
from .opinfo_harness import entry_id, op_db

pytestmark = pytest.mark.torch

OPS = op_db()


@pytest.mark.parametrize("op", OPS, ids=entry_id)
def test_graph_parity(op):
    result = run_graph_entry(op)
    gap = GRAPH_GAPS.get(result.entry)
    if gap is not None:
        if result.status == "pass":
            pytest.fail(f"{result.entry} matches torch's graph now: remove it from "
                        "graph_known_gaps.GRAPH_GAPS")
        pytest.xfail(gap)
    assert result.status == "pass", (
        f"{result.passed}/{result.samples} samples build torch's graph: {result.reason}")


def test_graph_gaps_name_real_entries():
    assert not set(GRAPH_GAPS) - {entry_id(op) for op in OPS}, "stale names in GRAPH_GAPS"
