"""Print how much of PyTorch's module database gradnb covers.

    python tests/nn/module_db_report.py [-v]

For each ``torch.nn`` class in ``common_modules.module_db``: present in ``gradnb.nn`` or not,
and, where present, whether every compared sample matches torch in training and eval mode
(see ``module_db_oracle.py``). The last lines weigh the classes by how often real code
constructs them (``module_usage.py``). ``-v`` prints each failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import module_db_oracle as oracle
from module_usage import CALLS


def main(verbose: bool) -> None:
    import torch

    torch.set_num_threads(1)
    db = oracle.load_module_db()
    status: dict[str, str] = {}
    for info in db:
        name = info.module_cls.__name__
        if oracle.gradnb_class(info) is None:
            status[name] = "missing"
            continue
        failures = oracle.check_module(info, True) + oracle.check_module(info, False)
        status[name] = "pass" if not failures else "partial"
        print(f"{name:32s} {status[name]}")
        if verbose:
            for line in failures[:6]:
                print("    " + line)
    present = [n for n, s in status.items() if s != "missing"]
    passing = [n for n, s in status.items() if s == "pass"]
    total_calls = sum(CALLS.get(n, 0) for n in status)
    passing_calls = sum(CALLS.get(n, 0) for n in passing)
    print(f"\nmodule_db classes: {len(status)}; present {len(present)}; "
          f"passing every compared sample {len(passing)}")
    print(f"weighted by real-code nn.X( calls: present "
          f"{100 * sum(CALLS.get(n, 0) for n in present) / total_calls:.1f}%, passing "
          f"{100 * passing_calls / total_calls:.1f}%")
    missing = sorted((n for n, s in status.items() if s == "missing"),
                     key=lambda n: -CALLS.get(n, 0))
    print("missing, most used first:", ", ".join(missing) or "none")


if __name__ == "__main__":
    main("-v" in sys.argv[1:])
