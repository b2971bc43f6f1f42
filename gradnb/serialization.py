"""``gradnb.save`` / ``gradnb.load``: state dicts in a NumPy ``.npz`` file, without pickle.

Tensors become arrays in the archive; the structure around them (nested dicts with string or
integer keys, lists, tuples, numbers, strings, None) is stored as JSON in one more entry. Loading
uses ``allow_pickle=False``, so a file can never run code, and reads every array's header before
its data, as PyTorch's ``weights_only`` loader is careful to: an array is read once (a file that
names one array many times is refused), only gradnb's dtypes load (big-endian ones are converted;
text, structured, datetime and object arrays are refused), and arrays that inflate to more than
``MAX_INFLATION`` times the file's compressed size (beyond ``INFLATION_FLOOR`` bytes) are refused
before anything is decompressed.

For the same reason tensors, parameters, modules and optimizers refuse ``pickle`` (a pickle runs
code when it is loaded). For a copy in memory -- keeping the best model of a training loop --
use ``copy.deepcopy(model)`` (and ``copy.deepcopy((model, optimizer))`` to copy both together),
which works without pickling; to keep weights on disk, ``gradnb.save(model.state_dict(), path)``.

>>> import io, gradnb
>>> buf = io.BytesIO()
>>> gradnb.serialization.save({"w": gradnb.ones(2)}, buf)
>>> _ = buf.seek(0)
>>> gradnb.serialization.load(buf)
{'w': tensor([1., 1.])}
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO

import numpy as np

from ._core import dtype as _dtype
from ._core.backend import device as Device
from ._core.backend import to_device
from ._core.tensor import Tensor

__all__ = ["load", "save"]

_STRUCTURE = "__gradnb_structure__"
_FORMAT = 1

# A zip bomb's arrays inflate thousands of times; real weights barely compress.
MAX_INFLATION = 100
INFLATION_FLOOR = 64 * 2**20


def _array_header(archive, name: str):
    """``(shape, dtype)`` of archive member ``name``, read from its header only."""
    try:
        member = archive.zip.open(f"{name}.npy")
    except KeyError:
        raise RuntimeError(f"gradnb.load: the file has no array {name!r}") from None
    with member:
        version = np.lib.format.read_magic(member)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(member)
    return shape, dtype


def _tensor_names(node, names: list) -> list:
    """Every array name the structure refers to, in order (repeats included)."""
    if isinstance(node, dict):
        if "tensor" in node:
            names.append(node["tensor"])
        for value in node.values():
            _tensor_names(value, names)
    elif isinstance(node, list):
        for value in node:
            _tensor_names(value, names)
    return names


def _check_arrays(archive, structure) -> None:
    """Refuse, before reading any data, what ``load`` must not read (see the module doc)."""
    names = _tensor_names(structure["root"], [])
    seen = set()
    total = 0
    for name in names:
        if name in seen:
            raise RuntimeError(f"gradnb.load: the file refers to array {name!r} more than once; "
                               "gradnb.save writes each tensor once, so the file was not written "
                               "by it")
        seen.add(name)
        shape, dtype = _array_header(archive, name)
        if dtype.newbyteorder("=") not in _dtype._BY_NP:
            raise RuntimeError(f"gradnb.load: array {name!r} has dtype {dtype.str!r}, which no "
                               "gradnb tensor holds (text, structured, datetime and object "
                               "arrays are refused)")
        total += int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    compressed = sum(info.compress_size for info in archive.zip.infolist())
    if total > max(INFLATION_FLOOR, MAX_INFLATION * compressed):
        raise RuntimeError(f"gradnb.load: the arrays would take {total} bytes, more than "
                           f"{MAX_INFLATION} times the file's {compressed} compressed bytes; "
                           "refusing a file that inflates this much")


def _encode(obj: Any, arrays: dict) -> Any:
    """A JSON-able description of ``obj``; tensors go to ``arrays`` and are referenced by name."""
    if isinstance(obj, Tensor):
        name = f"tensor_{len(arrays)}"
        data = obj._data
        arrays[name] = data if type(data) is np.ndarray else data.get()
        return {"tensor": name, "requires_grad": obj.requires_grad,
                "parameter": bool(obj._is_param)}
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"gradnb.save: dict keys must be str or int, got {key!r}")
            items.append([key, _encode(value, arrays)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        return {"tuple" if isinstance(obj, tuple) else "list":
                [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    if isinstance(obj, np.generic):
        return {"value": obj.item()}
    raise TypeError(f"gradnb.save cannot store objects of type {type(obj).__name__} (state dicts "
                    "hold tensors, numbers, strings, lists and dicts)")


def _decode(node: dict, archive, device) -> Any:
    if "tensor" in node:
        data = np.array(archive[node["tensor"]])
        if not data.dtype.isnative:
            data = data.astype(data.dtype.newbyteorder("="))
        if device is not None and Device(device).type != "cpu":
            data = to_device(data, Device(device))
        t = Tensor._make(data)
        if node.get("parameter"):
            from .nn.parameter import Parameter  # gradnb.nn loads on first use (import time)

            return Parameter(t, requires_grad=node["requires_grad"])
        if node.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if "dict" in node:
        return {key: _decode(value, archive, device) for key, value in node["dict"]}
    if "list" in node:
        return [_decode(v, archive, device) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, archive, device) for v in node["tuple"])
    return node["value"]


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write ``obj`` (a ``state_dict()`` of a module or optimizer, or any nesting of dicts,
    lists, tensors and plain values) to ``f``, a path (used as given) or a binary file."""
    arrays: dict = {}
    structure = {"format": _FORMAT, "root": _encode(obj, arrays)}
    arrays[_STRUCTURE] = np.frombuffer(json.dumps(structure).encode("utf-8"), dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # np.savez would append ".npz" to a path
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def load(f: str | os.PathLike | BinaryIO, map_location=None, weights_only: bool = True) -> Any:
    """Read what ``save`` wrote; ``map_location='cuda'`` puts the tensors on the GPU."""
    with np.load(f, allow_pickle=False) as archive:
        if _STRUCTURE not in archive.files:
            raise RuntimeError("gradnb.load: not a file written by gradnb.save")
        structure = json.loads(archive[_STRUCTURE].tobytes().decode("utf-8"))
        if structure.get("format") != _FORMAT:
            raise RuntimeError(f"gradnb.load: unknown format {structure.get('format')}")
        _check_arrays(archive, structure)
        return _decode(structure["root"], archive, map_location)
