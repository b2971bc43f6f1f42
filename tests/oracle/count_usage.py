"""Count how often code calls each op_db op, to weight the OpInfo coverage by real use.

    python -m tests.oracle.count_usage DIR [DIR ...] > tests/oracle/opinfo_usage.py

For an op_db name ``X`` it counts ``torch.X(`` and the method form ``.X(`` (``.X`` alone for
attributes such as ``mT``); for ``nn.functional.X`` it counts ``F.X(`` and ``functional.X(``;
for ``linalg.X``/``special.X``/``fft.X`` it counts ``linalg.X(`` etc. Dunder entries
(``__radd__``) count nothing (see ``_OPERATORS``). Counts are per name; variants share them.
"""

from __future__ import annotations

import pathlib
import re
import sys

from .opinfo_harness import op_db

# Indexing counts every subscript of a name (lists and dicts too: an overcount). Reflected
# operators (``2 - x``) cannot be told from ordinary ones in text, so they count nothing.
_OPERATORS = {"__getitem__": r"\w\[", "__radd__": None, "__rsub__": None, "__rmul__": None,
              "__rdiv__": None, "__rpow__": None, "__rmod__": None, "__rmatmul__": None}


def patterns(name: str) -> list[str]:
    """Regexes whose matches count as a call of op_db's ``name``."""
    if name in _OPERATORS:
        return [_OPERATORS[name]] if _OPERATORS[name] else []
    if name.startswith("nn.functional."):
        short = name.removeprefix("nn.functional.")
        return [rf"\bF\.{short}\(", rf"\bfunctional\.{short}\("]
    if "." in name:
        return [rf"\b{re.escape(name)}\("]
    return [rf"\btorch\.{name}\(", rf"\.{name}\b(?!\s*=)"]


def count(paths: list[pathlib.Path]) -> dict[str, int]:
    text = "\n".join(p.read_text(errors="ignore") for root in paths
                     for p in sorted(root.rglob("*.py")))
    names = sorted({op.name for op in op_db()})
    return {n: sum(len(re.findall(pat, text)) for pat in patterns(n)) for n in names}


def main() -> None:
    roots = [pathlib.Path(a) for a in sys.argv[1:]]
    counts = count(roots)
    print('"""How often code calls each op_db op (weights for ``opinfo_coverage``).')
    print()
    print("Counted by ``python -m tests.oracle.count_usage`` (see there for the patterns) over")
    print("PyTorch 2.13's own model-level Python code: ``torch/nn``, ``torch/distributions`` and")
    print('``torch/optim`` (modules, functional, losses, distributions, optimizers, docstrings).')
    print('"""')
    print()
    print("USAGE = {")
    for name, n in counts.items():
        print(f"    {name!r}: {n},")
    print("}")


if __name__ == "__main__":
    main()
