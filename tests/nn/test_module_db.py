"""PyTorch's module database as the oracle for ``gradnb.nn`` (skipped without torch).

Every ModuleInfo of ``torch.testing._internal.common_modules.module_db`` whose class gradnb
has is compared sample by sample in training and eval mode (``module_db_oracle.py``): repr,
state_dict keys, forward outputs, input and parameter gradients, buffers after the forward.
``python tests/nn/module_db_report.py`` prints the coverage.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The suite runs under ``--import-mode=importlib``: its helper module is found beside it.
sys.path.insert(0, str(Path(__file__).parent))
import module_db_oracle as oracle

torch = pytest.importorskip("torch")

# Classes gradnb has whose samples do not all match yet, with the reason. This list only
# shrinks: an entry that starts passing fails the suite (strict xfail) until it is removed.
KNOWN_GAPS: dict[str, str] = {}


def _cases():
    cases = []
    for info in oracle.load_module_db():
        if oracle.gradnb_class(info) is None:
            continue
        name = info.module_cls.__name__
        marks = []
        if name in KNOWN_GAPS:
            marks.append(pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True))
        for training in (True, False):
            mode = "train" if training else "eval"
            cases.append(pytest.param(info, training, id=f"{name}-{mode}", marks=marks))
    return cases


@pytest.mark.torch
@pytest.mark.parametrize(("module_info", "training"), _cases())
def test_module_matches_torch(module_info, training):
    torch.set_num_threads(1)
    failures = oracle.check_module(module_info, training)
    assert not failures, "\n".join(failures)
