"""Importing the engine stays light: no notebook or GPU stack."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("IPython", "ipywidgets", "matplotlib", "cupy", "torch")


def test_import_gradnb_imports_no_notebook_or_gpu_modules():
    code = (
        "import sys, gradnb, gradnb.nn, gradnb.optim, gradnb.autograd\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
