"""default_collate / default_convert against PyTorch's on the same samples."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import gradnb
from gradnb.utils.data import default_collate, default_convert

Point = collections.namedtuple("Point", ["x", "y"])


def _samples(lib):
    """Batches of every kind default_collate handles, built with ``lib``'s tensors."""
    return {
        "tensors": [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
        "ints": [1, 2, 3],
        "floats": [1.5, 2.5],
        "bools": [True, False],
        "strings": ["a", "b"],
        "numpy_arrays": [np.arange(3, dtype=np.float32), np.ones(3, dtype=np.float32)],
        "numpy_scalars": [np.float32(1.0), np.float32(2.0)],
        "numpy_ints": [np.int32(1), np.int32(2)],
        "tuples": [(lib.tensor(1.0), 0), (lib.tensor(2.0), 1)],
        "lists": [[1, 2.0], [3, 4.0]],
        "dicts": [{"a": 1, "b": lib.tensor([1])}, {"a": 2, "b": lib.tensor([2])}],
        "namedtuples": [Point(1.0, np.zeros(2)), Point(2.0, np.ones(2))],
        "nested": [{"x": (1, [2.0, "s"])}, {"x": (3, [4.0, "t"])}],
    }


def _structure(obj):
    """The batch as nested plain Python: type names, dtypes and values (library-neutral)."""
    if hasattr(obj, "dtype") and hasattr(obj, "tolist") and not isinstance(obj, np.ndarray):
        return ("tensor", str(obj.dtype).split(".")[-1], obj.tolist())
    if isinstance(obj, dict):
        return ("dict", {k: _structure(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_structure(v) for v in obj])
    return (type(obj).__name__, obj)


@pytest.mark.parametrize("kind", list(_samples(gradnb)))
def test_default_collate_matches_torch(torch, kind):
    from torch.utils.data import default_collate as torch_collate

    ours = default_collate(_samples(gradnb)[kind])
    theirs = torch_collate(_samples(torch)[kind])
    assert _structure(ours) == _structure(theirs)


@pytest.mark.parametrize("kind", list(_samples(gradnb)))
def test_default_convert_matches_torch(torch, kind):
    from torch.utils.data import default_convert as torch_convert

    ours = default_convert(_samples(gradnb)[kind][0])
    theirs = torch_convert(_samples(torch)[kind][0])
    assert _structure(ours) == _structure(theirs)


def test_collate_errors_as_torch(torch):
    from torch.utils.data import default_collate as torch_collate

    for batch in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as theirs:
            torch_collate(batch)
        with pytest.raises(TypeError) as ours:
            default_collate(batch)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
