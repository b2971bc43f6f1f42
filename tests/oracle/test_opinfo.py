"""PyTorch's OpInfo database as gradnb's oracle: one test per op_db entry that supports autograd.

Each entry's samples (``opinfo_harness.samples_of``) must match torch in forward values, dtypes,
first-order and, where the OpInfo supports it, second-order gradients; its ``error_inputs`` must
raise torch's exception type with a matching message. Entries in ``opinfo_known_gaps`` are
expected to fail (with their reason) until they are fixed and removed from there.
Coverage figures: ``python -m tests.oracle.opinfo_coverage``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's testing internals import it

from .opinfo_harness import entry_id, op_db, resolve_entry, run_entry, run_error_inputs
from .opinfo_known_gaps import ERROR_GAPS, KNOWN_GAPS

pytestmark = pytest.mark.torch

OPS = op_db()


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    torch.set_num_threads(1)


@pytest.mark.parametrize("op", OPS, ids=entry_id)
def test_opinfo(op):
    result = run_entry(op)
    passes = result.status == "pass" and result.gradgrad in (None, "pass")
    gap = KNOWN_GAPS.get(result.entry)
    if gap is not None:
        if passes:
            pytest.fail(f"{result.entry} passes now: remove it from opinfo_known_gaps.KNOWN_GAPS")
        pytest.xfail(gap)
    assert result.status == "pass", (
        f"{result.status} ({result.passed}/{result.samples} samples): {result.first_failure}")
    assert result.gradgrad in (None, "pass"), f"second order: {result.gradgrad}"


@pytest.mark.parametrize("op", [op for op in OPS if op.error_inputs_func is not None],
                         ids=entry_id)
def test_opinfo_error_inputs(op):
    result = run_error_inputs(op)
    if result is None:
        pytest.skip(f"gradnb has no {op.name}" if resolve_entry(op) is None else
                    f"op_db yields no error_inputs for {op.name} on the CPU")
    matches = result.message_match == result.total
    gap = ERROR_GAPS.get(result.entry)
    if gap is not None:
        if matches:
            pytest.fail(f"{result.entry} passes now: remove it from opinfo_known_gaps.ERROR_GAPS")
        pytest.xfail(gap)
    assert matches, (f"{result.same_type}/{result.total} same type, {result.message_match} "
                     f"matching: {result.first_failure}")


def test_known_gaps_name_real_entries():
    entries = {entry_id(op) for op in OPS}
    assert not set(KNOWN_GAPS) - entries, "stale names in KNOWN_GAPS"
    assert not set(ERROR_GAPS) - entries, "stale names in ERROR_GAPS"
