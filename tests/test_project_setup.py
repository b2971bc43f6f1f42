"""What a newcomer sees when running the tests: every skip says why, and the README lists
what each skip needs."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_pytest_reports_the_reason_of_every_skip():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "-rs" in shlex.split(options["ini_options"]["addopts"])


def test_the_readme_names_what_every_skip_needs():
    readme = (ROOT / "README.md").read_text()
    for needed in ("`torch`", "Chromium", "Graphviz", "NVIDIA GPU"):
        assert needed in readme, needed
    assert "jupyter trust" not in readme  # the quickstart needs no trust step
