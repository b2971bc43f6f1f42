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


def missing_requirements(path: Path) -> list[str]:
    """The modules a tutorial's metadata lists under ``gradnb.requires`` that are not installed
    (tutorial 9 needs torch; Binder and minimal installs have none)."""
    import json

    metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    required = metadata.get("gradnb", {}).get("requires", [])
    return [name for name in required if not _installed(name)]


def pytest_collection_modifyitems(config, items):
    """Skip, with the reason, every cell of a tutorial whose requirements are missing."""
    import pytest

    missing: dict[Path, list[str]] = {}
    for item in items:
        path = Path(str(item.path))
        if path.suffix != ".ipynb":
            continue
        if path not in missing:
            missing[path] = missing_requirements(path)
        if missing[path]:
            item.add_marker(pytest.mark.skip(
                reason=f"{path.name} needs {', '.join(missing[path])}, which is not installed"))


def _installed(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses the module
        return False
