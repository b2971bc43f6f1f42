"""pytest configuration for the tutorials (run by nbval): kernels import this checkout's gradnb.

``python -m pytest`` puts the repository root on ``sys.path``, so the unit tests import the
gradnb of this checkout even where it is not installed. The kernels nbval starts for the
notebooks are separate processes whose working directory is ``notebooks/``; putting the root on
their ``PYTHONPATH`` makes them test the same code as the unit tests.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
os.environ["PYTHONPATH"] = os.pathsep.join(
    path for path in (ROOT, os.environ.get("PYTHONPATH")) if path)
