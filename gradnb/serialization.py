"""``gradnb.save`` / ``gradnb.load``: checkpoints in a NumPy ``.npz`` file, loaded as
PyTorch's ``weights_only`` rules allow.

State dicts and other nests of dicts (string or integer keys), lists, tuples, tensors, numbers,
strings and None are written without pickle: tensors become arrays in the archive and the
structure around them is JSON in one more entry. Anything else -- a whole module
(``gradnb.save(model, path)``), an object of the user's class -- is pickled, as PyTorch pickles
it, with the tensors still stored as arrays beside the pickle.

Loading follows PyTorch 2.6+: ``weights_only=True`` (the default) reads the JSON structure, and a
pickle only through an unpickler that refuses every global not allowed by default or through
:func:`add_safe_globals` / :func:`safe_globals`, raising ``pickle.UnpicklingError`` ("Weights only
load failed...") for a pickled module; ``weights_only=False`` unpickles anything, which can run
code: do it only for files from a trusted source. Arrays are read with ``allow_pickle=False``
and every array's header is read before its data, as PyTorch's ``weights_only`` loader is
careful to: an array is read once (a file that names one array many times is refused), only
gradnb's dtypes load (big-endian ones are converted; text, structured, datetime and object arrays
are refused), and arrays that inflate to more than ``MAX_INFLATION`` times the file's compressed
size (beyond ``INFLATION_FLOOR`` bytes) are refused before anything is decompressed.

Outside ``gradnb.save`` tensors, parameters, modules and optimizers refuse ``pickle``. For a copy
in memory -- keeping the best model of a training loop -- use ``copy.deepcopy(model)``.

>>> import io, gradnb
>>> buf = io.BytesIO()
>>> gradnb.serialization.save({"w": gradnb.ones(2)}, buf)
>>> _ = buf.seek(0)
>>> gradnb.serialization.load(buf)
{'w': tensor([1., 1.])}
"""

from __future__ import annotations

import _compat_pickle
import builtins
import collections
import contextlib
import io
import json
import os
import pickle
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from ._core import dtype as _dtype
from ._core.backend import device as Device
from ._core.backend import to_device
from ._core.tensor import Size, Tensor

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals",
           "save"]

_STRUCTURE = "__gradnb_structure__"
_PICKLE = "__gradnb_pickle__"
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


class _NeedsPickle(Exception):
    """``obj`` holds something the JSON structure cannot describe."""


def _encode(obj: Any, arrays: dict) -> Any:
    """A JSON-able description of ``obj``; tensors go to ``arrays`` and are referenced by name.
    Raises ``_NeedsPickle`` for anything else."""
    if isinstance(obj, Tensor):
        name = f"tensor_{len(arrays)}"
        data = obj._data
        arrays[name] = data if type(data) is np.ndarray else data.get()
        node = {"tensor": name, "requires_grad": obj.requires_grad,
                "parameter": bool(obj._is_param)}
        if data.dtype.kind == "V":  # bfloat16: .npy has no such type; its bits go as int16
            arrays[name] = arrays[name].view(np.int16)
            node["dtype"] = "bfloat16"
        return node
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise _NeedsPickle
            items.append([key, _encode(value, arrays)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        return {"tuple" if isinstance(obj, tuple) else "list":
                [_encode(v, arrays) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    if isinstance(obj, np.generic):
        return {"value": obj.item()}
    raise _NeedsPickle


def _decode(node: dict, archive, device) -> Any:
    if "tensor" in node:
        data = np.array(archive[node["tensor"]])
        if not data.dtype.isnative:
            data = data.astype(data.dtype.newbyteorder("="))
        if node.get("dtype") == "bfloat16" and data.dtype == np.int16:
            data = data.view(_dtype.bfloat16.np)
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


# -- pickled objects ------------------------------------------------------------------------------
class _Pickler(pickle.Pickler):
    """Pickles ``obj`` with its tensors stored as arrays (persistent ids into a tensor table) and
    modules pickled by their state, as PyTorch pickles them."""

    def __init__(self, file, protocol: int, arrays: dict) -> None:
        super().__init__(file, protocol)
        self.protocol = protocol
        self.arrays = arrays
        self.table: list = []  # the encoded tensors, in the order first met
        self._index: dict[int, int] = {}
        self._alive: list = []  # keeps each tensor's id() its own while pickling

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        index = self._index.get(id(obj))
        if index is None:  # a tensor met twice (tied weights) is stored once, and stays shared
            index = self._index[id(obj)] = len(self.table)
            self.table.append(_encode(obj, self.arrays))
            self._alive.append(obj)
        return ("tensor", index)

    def reducer_override(self, obj):
        from .nn.modules.module import Module  # gradnb.nn loads on first use (import time)

        if isinstance(obj, Module):  # refused by plain pickle, pickled here by its state
            return object.__reduce_ex__(obj, self.protocol)
        return NotImplemented


def _pickle(obj: Any, arrays: dict, protocol: int) -> dict:
    buf = io.BytesIO()
    pickler = _Pickler(buf, max(protocol, 2), arrays)
    pickler.dump(obj)
    arrays[_PICKLE] = np.frombuffer(buf.getvalue(), dtype=np.uint8)
    return {"format": _FORMAT, "root": {"list": pickler.table}, "pickled": True}


_safe_globals: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Let ``load(..., weights_only=True)`` rebuild these classes and functions (do it only
    for ones you trust: they run while the file loads)."""
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list:
    """The globals added by :func:`add_safe_globals`."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global added by :func:`add_safe_globals`."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Allow ``safe_globals`` for ``weights_only`` loads inside the ``with`` block only."""
    before = list(_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe_globals[:] = before


def _name_of(obj) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj)}"


# What a weights_only load may rebuild without being told (no module is imported to check).
_ALLOWED_BY_DEFAULT = {_name_of(g): g for g in (
    collections.OrderedDict, collections.Counter, builtins.set, builtins.frozenset,
    builtins.slice, builtins.complex, builtins.bytearray, Size, Device, _dtype.as_dtype)}


class _Unpickler(pickle.Unpickler):
    """Rebuilds what ``_Pickler`` wrote; its tensors come from the archive's table."""

    def __init__(self, file, tensors: list) -> None:
        super().__init__(file)
        self.tensors = tensors

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor"
                and isinstance(pid[1], int) and 0 <= pid[1] < len(self.tensors)):
            raise pickle.UnpicklingError(f"gradnb.load: unknown persistent id {pid!r}")
        return self.tensors[pid[1]]


class _WeightsUnpickler(_Unpickler):
    """``weights_only``: only the globals allowed by default or by ``add_safe_globals``."""

    def find_class(self, module: str, name: str):
        # Protocols 0-2 (PyTorch's default is 2) name builtins as Python 2 did: ``__builtin__``.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        key = f"{module}.{name}"
        allowed = {**_ALLOWED_BY_DEFAULT, **{_name_of(g): g for g in _safe_globals}}
        if key in allowed:
            return allowed[key]
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {key} was not an allowed global by default. Please use "
            f"`gradnb.serialization.add_safe_globals([{key}])` or the "
            f"`gradnb.serialization.safe_globals([{key}])` context manager to allowlist this "
            "global if you trust this class/function.")


def _weights_only_failure(error: Exception) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "do those steps only if you trust the source of the checkpoint. \n\t(1) Re-running "
        "`gradnb.load` with `weights_only` set to `False` will likely succeed, but it can "
        "result in arbitrary code execution. Do it only if you got the file from a trusted "
        "source.\n\t(2) Alternatively, to load with `weights_only=True` please check the "
        "recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"{error}\n\nCheck the documentation of gradnb.load to learn more about types accepted "
        "by default with weights_only.")


def save(obj: Any, f: str | os.PathLike | BinaryIO, pickle_module: Any = None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` to ``f``, a path (used as given) or a binary file: a ``state_dict()`` (or
    any nest of dicts, lists, tensors and plain values) as JSON and arrays, anything else --
    a whole model -- pickled as PyTorch pickles it (see the module doc for loading it)."""
    arrays: dict = {}
    try:
        structure = {"format": _FORMAT, "root": _encode(obj, arrays)}
    except _NeedsPickle:
        structure = None
    if structure is None:
        arrays = {}
        structure = _pickle(obj, arrays, pickle_protocol)
    arrays[_STRUCTURE] = np.frombuffer(json.dumps(structure).encode("utf-8"), dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # np.savez would append ".npz" to a path
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def load(f: str | os.PathLike | BinaryIO, map_location=None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read what ``save`` wrote; ``map_location='cuda'`` puts the tensors on the GPU.
    ``weights_only`` (True unless False is given, as in PyTorch) refuses pickled objects whose
    classes are not allowed (see the module doc)."""
    if weights_only is None:
        weights_only = True
    with np.load(f, allow_pickle=False) as archive:
        if _STRUCTURE not in archive.files:
            raise RuntimeError("gradnb.load: not a file written by gradnb.save")
        structure = json.loads(archive[_STRUCTURE].tobytes().decode("utf-8"))
        if structure.get("format") != _FORMAT:
            raise RuntimeError(f"gradnb.load: unknown format {structure.get('format')}")
        _check_arrays(archive, structure)
        root = _decode(structure["root"], archive, map_location)
        if not structure.get("pickled"):
            return root
        if _PICKLE not in archive.files:
            raise RuntimeError("gradnb.load: the file lacks its pickle")
        payload = io.BytesIO(archive[_PICKLE].tobytes())
    if not weights_only:
        return _Unpickler(payload, root).load()
    try:
        return _WeightsUnpickler(payload, root).load()
    except pickle.UnpicklingError as error:
        raise _weights_only_failure(error) from None
