"""The public namespace is exactly the public API: PyTorch's names plus gradnb's own few.

``import gradnb as torch`` promises that what ``gradnb`` offers is what ``torch`` offers, so a
helper that leaks out of its module (``gradnb.sum_all``) is a bug this file catches. Every
module, the engine's and the notebook toolkit's, declares ``__all__``: what it offers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradnb

PACKAGE = Path(gradnb.__file__).resolve().parent

# gradnb's own public names, documented in the README: the notebook toolkit (a subpackage, an
# attribute once imported) and the IPython extension entry points.
GRADNB_OWN = {"load_ipython_extension", "notebook", "unload_ipython_extension"}

# Helpers that once leaked into ``gradnb``: they must never come back.
FORMER_LEAKS = ("sum_all", "write_key", "scatter_into_zeros", "scalar_type_name", "getitem",
                "view", "expand", "repeat", "contiguous", "rpow", "set_detect_anomaly")


def _public(module) -> set[str]:
    return {name for name in dir(module) if not name.startswith("_")}


@pytest.mark.parametrize("name", FORMER_LEAKS)
def test_internal_helpers_are_not_in_the_namespace(name):
    assert not hasattr(gradnb, name)


@pytest.mark.torch
def test_gradnb_offers_only_torchs_names_and_its_own(torch):
    extra = _public(gradnb) - _public(torch) - GRADNB_OWN
    assert not extra, f"names torch does not have leak into gradnb: {sorted(extra)}"


def _declares_all(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
        isinstance(t, ast.Name) and t.id == "__all__"
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
        for node in tree.body)


def test_every_module_declares_all():
    """Every module, the engine's and the notebook toolkit's (all but the package roots that
    only re-export), says what it offers."""
    missing = [str(p.relative_to(PACKAGE.parent)) for p in sorted(PACKAGE.rglob("*.py"))
               if p.name != "__init__.py" and not _declares_all(p)]
    assert not missing, f"modules without __all__: {missing}"
