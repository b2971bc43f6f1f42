"""Print gradnb's coverage of PyTorch's OpInfo database (needs torch and expecttest).

    python -m tests.oracle.opinfo_coverage            # the figures
    python -m tests.oracle.opinfo_coverage --list     # plus every entry that does not pass

Figures: op_db entries that support autograd on CPU float64 (pass = every sample's forward and
first-order gradients match torch; partial = some samples do; error = none does; missing =
gradnb has no such op), the same weighted by real-code usage (``opinfo_usage.py``; a name's
count is shared by its variants, capped at ``WEIGHT_CAP`` so no single op dominates, plus one so
uncounted ops still weigh), second order where the OpInfo supports it, and error_inputs.
"""

from __future__ import annotations

import collections
import sys
import time

from .opinfo_harness import entry_id, op_db, run_entry, run_error_inputs
from .opinfo_usage import USAGE

WEIGHT_CAP = 200


def weights(ops) -> dict[str, float]:
    """Usage weight of each entry: its name's capped count, split among the name's variants."""
    variants = collections.Counter(op.name for op in ops)
    return {entry_id(op): (min(USAGE.get(op.name, 0), WEIGHT_CAP) + 1) / variants[op.name]
            for op in ops}


def _pct(part, whole) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def main(argv: list[str]) -> None:
    start = time.perf_counter()
    ops = op_db()
    results = [run_entry(op) for op in ops]
    errors = [e for e in (run_error_inputs(op) for op in ops) if e is not None]
    elapsed = time.perf_counter() - start

    status = collections.Counter(r.status for r in results)
    w = weights(ops)
    total_w = sum(w.values())
    pass_w = sum(w[r.entry] for r in results if r.status == "pass")
    existing = [r for r in results if r.status != "missing"]
    gg = [r for r in results if r.gradgrad is not None]
    gg_pass = sum(r.gradgrad == "pass" for r in gg)
    cases = sum(e.total for e in errors)

    print(f"op_db entries supporting autograd on CPU float64: {len(results)} "
          f"({len({op.name for op in ops})} names)")
    print(f"  pass {status['pass']}, partial {status['partial']}, error {status['error']}, "
          f"missing {status['missing']}: {_pct(status['pass'], len(results))} pass")
    print(f"  weighted by real-code usage: {_pct(pass_w, total_w)} pass")
    print(f"  where gradnb has the op: {_pct(status['pass'], len(existing))} pass "
          f"({status['pass']} of {len(existing)})")
    print(f"second order (supports_gradgrad, first order passing): {gg_pass} of {len(gg)} pass")
    print(f"error_inputs of the ops gradnb has: {len(errors)} entries, {cases} cases: same "
          f"exception type {_pct(sum(e.same_type for e in errors), cases)}, message matching "
          f"{_pct(sum(e.message_match for e in errors), cases)}")
    print(f"({elapsed:.0f} s)")
    if "--list" in argv:
        print()
        for r in results:
            if r.status != "pass":
                print(f"{r.entry}: {r.status} ({r.passed}/{r.samples}) {r.first_failure}")
            elif r.gradgrad not in (None, "pass"):
                print(f"{r.entry}: gradgrad {r.gradgrad}")
        for e in errors:
            if e.message_match < e.total:
                print(f"{e.entry} error_inputs: {e.message_match}/{e.total} {e.first_failure}")


if __name__ == "__main__":
    main(sys.argv[1:])
