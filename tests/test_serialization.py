"""gradnb.save / gradnb.load: npz files without pickle."""

from __future__ import annotations

import io

import numpy as np
import pytest

import gradnb
from gradnb import nn, optim
from gradnb.serialization import load, save


def test_nested_structures_round_trip(tmp_path):
    obj = {"w": gradnb.randn(2, 3), 3: [1, 2.5, None, "x", True],
           "betas": (0.9, 0.99), "ids": gradnb.tensor([1, 2]), "nested": {"a": gradnb.ones(0)}}
    path = tmp_path / "state.pt"
    save(obj, path)
    assert path.exists()  # used as given: no ".npz" appended
    back = load(path)
    assert list(back) == ["w", 3, "betas", "ids", "nested"]
    np.testing.assert_array_equal(back["w"].numpy(), obj["w"].numpy())
    assert back["ids"].dtype == gradnb.int64
    assert back[3] == [1, 2.5, None, "x", True]
    assert back["betas"] == (0.9, 0.99)
    assert back["nested"]["a"].shape == (0,)


def test_files_hold_no_pickles():
    buf = io.BytesIO()
    save(nn.Linear(2, 2).state_dict(), buf)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as archive:
        assert all(archive[name].dtype != object for name in archive.files)


def test_module_and_optimizer_state(tmp_path):
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(gradnb.randn(4, 3)).sum().backward()
    opt.step()
    save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ckpt")
    ckpt = load(tmp_path / "ckpt")
    fresh = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    fresh.load_state_dict(ckpt["model"])
    fresh_opt = optim.SGD(fresh.parameters(), lr=1.0)
    fresh_opt.load_state_dict(ckpt["opt"])
    assert fresh_opt.param_groups[0]["momentum"] == 0.9
    assert fresh[1].num_batches_tracked.item() == 1


def test_unsupported_objects_and_foreign_files(tmp_path):
    with pytest.raises(TypeError, match="cannot store objects of type object"):
        save({"x": object()}, tmp_path / "bad")
    np.savez(tmp_path / "plain.npz", a=np.ones(2))
    with pytest.raises(RuntimeError, match="not a file written by gradnb.save"):
        load(tmp_path / "plain.npz")


# -- files gradnb.save did not write: checked before any data is read ---------------------------
def _crafted(arrays: dict, root, compress=True) -> io.BytesIO:
    """An archive in gradnb's layout holding ``arrays`` (name -> array, or name -> (shape, dtype)
    for a header that promises data it does not hold) under the structure ``root``."""
    import json
    import zipfile

    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, value in arrays.items():
            member = io.BytesIO()
            if isinstance(value, tuple):
                shape, dtype = value
                np.lib.format.write_array_header_2_0(
                    member, {"descr": np.dtype(dtype).str, "fortran_order": False,
                             "shape": shape})
            else:
                np.lib.format.write_array(member, value, allow_pickle=False)
            zf.writestr(f"{name}.npy", member.getvalue())
        structure = np.frombuffer(json.dumps({"format": 1, "root": root}).encode(), np.uint8)
        member = io.BytesIO()
        np.lib.format.write_array(member, structure)
        zf.writestr("__gradnb_structure__.npy", member.getvalue())
    buf.seek(0)
    return buf


def test_load_refuses_an_array_that_inflates_far_beyond_the_file():
    # a header promising 1 GiB of float64 in a file of a few hundred bytes
    f = _crafted({"tensor_0": ((2**27,), "<f8")}, {"tensor": "tensor_0"})
    with pytest.raises(RuntimeError, match="inflates this much"):
        load(f)


def test_load_refuses_one_array_named_many_times():
    refs = {"list": [{"tensor": "tensor_0"} for _ in range(40)]}
    f = _crafted({"tensor_0": np.zeros(4)}, refs)
    with pytest.raises(RuntimeError, match="more than once"):
        load(f)


@pytest.mark.parametrize("array", [
    np.array(["a", "bc"]),
    np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]),
    np.array(["2024-01-01"], dtype="datetime64[D]"),
], ids=["unicode", "structured", "datetime"])
def test_load_refuses_dtypes_no_tensor_holds(array):
    f = _crafted({"tensor_0": array}, {"tensor": "tensor_0"})
    with pytest.raises(RuntimeError, match="no gradnb tensor holds"):
        load(f)


def test_load_converts_big_endian_arrays():
    f = _crafted({"tensor_0": np.arange(3, dtype=">f4")}, {"tensor": "tensor_0"})
    t = load(f)
    assert t.dtype == gradnb.float32
    assert repr(t) == "tensor([0., 1., 2.])"
