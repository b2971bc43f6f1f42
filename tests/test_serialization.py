"""gradnb.save / gradnb.load: state dicts in npz files without pickle; whole models pickled
beside their arrays and loaded under PyTorch's ``weights_only`` rules."""

from __future__ import annotations

import io
import pickle

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


def test_other_objects_are_pickled_and_foreign_files_refused(tmp_path):
    save({"x": object(), (1, 2): "tuple key"}, tmp_path / "pickled")
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed"):
        load(tmp_path / "pickled")
    back = load(tmp_path / "pickled", weights_only=False)
    assert type(back["x"]) is object and back[(1, 2)] == "tuple key"
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


# -- whole modules: pickled as PyTorch pickles them, refused by weights_only loads -----------------
def _trained_model():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                          nn.LazyLinear(3))
    model(gradnb.randn(4, 1, 5, 5)).sum().backward()
    return model


def test_a_whole_model_round_trips_with_weights_only_false(tmp_path):
    model = _trained_model()
    save(model, tmp_path / "model.pt")
    back = load(tmp_path / "model.pt", weights_only=False)
    assert repr(back) == repr(model) and type(back[4]) is nn.Linear
    x = gradnb.randn(2, 1, 5, 5)
    model.eval()
    back.eval()
    np.testing.assert_array_equal(back(x).detach().numpy(), model(x).detach().numpy())
    assert all(type(p) is nn.Parameter and p.requires_grad and p.grad is None
               for p in back.parameters())
    assert back[1].num_batches_tracked.item() == 1
    opt = optim.SGD(back.parameters(), lr=0.1)  # the loaded model trains
    back.train()
    back(x).sum().backward()
    opt.step()


def test_tied_weights_stay_tied_and_devices_follow_map_location():
    shared = nn.Linear(2, 2)
    buf = io.BytesIO()
    save({"model": nn.Sequential(shared, shared), "step": 3}, buf)
    buf.seek(0)
    back = load(buf, map_location="cpu", weights_only=False)
    assert back["model"][0].weight is back["model"][1].weight and back["step"] == 3


@pytest.mark.torch
def test_weights_only_refuses_a_pickled_module_as_torch(torch, tmp_path):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "theirs.pt")
    save(nn.Linear(2, 2), tmp_path / "ours.pt")
    with pytest.raises(Exception) as theirs:
        torch.load(tmp_path / "theirs.pt")
    with pytest.raises(Exception) as ours:
        load(tmp_path / "ours.pt")
    assert type(ours.value) is type(theirs.value) is pickle.UnpicklingError
    first = str(theirs.value).split(".")[0]
    assert first == "Weights only load failed" and str(ours.value).startswith(first + ".")
    assert "Unsupported global: GLOBAL gradnb.nn.modules.linear.Linear was not an allowed " \
        "global by default" in str(ours.value)
    assert type(torch.load(tmp_path / "theirs.pt", weights_only=False)).__name__ == \
        type(load(tmp_path / "ours.pt", weights_only=False)).__name__ == "Linear"


def test_safe_globals_let_weights_only_rebuild_trusted_classes(tmp_path):
    save(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), tmp_path / "m.pt")
    with gradnb.serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
        assert type(load(tmp_path / "m.pt")) is nn.Sequential
    with pytest.raises(pickle.UnpicklingError):
        load(tmp_path / "m.pt")
    gradnb.serialization.add_safe_globals([nn.Sequential, nn.Linear, nn.ReLU])
    try:
        assert nn.Linear in gradnb.serialization.get_safe_globals()
        assert type(load(tmp_path / "m.pt")) is nn.Sequential
    finally:
        gradnb.serialization.clear_safe_globals()
    assert gradnb.serialization.get_safe_globals() == []


class _Calls:
    def __reduce__(self):
        return (len, ([1, 2],))  # a harmless stand-in for os.system


def test_weights_only_never_calls_what_a_pickle_names(tmp_path):
    save({"payload": _Calls()}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL builtins.len was not an allowed"):
        load(tmp_path / "evil.pt")
    assert load(tmp_path / "evil.pt", weights_only=False) == {"payload": 2}


def test_plain_values_pickled_beside_a_module_load_by_default(tmp_path):
    save({"ids": {1, 2}, "dtype": gradnb.float64, "shape": gradnb.Size([2, 3]),
          "w": gradnb.ones(2)}, tmp_path / "v.pt")
    back = load(tmp_path / "v.pt")
    assert back["ids"] == {1, 2} and back["dtype"] is gradnb.float64
    assert back["shape"] == gradnb.Size([2, 3]) and back["w"].tolist() == [1.0, 1.0]


@pytest.mark.torch
def test_a_parametrized_module_is_refused_as_torch(torch, tmp_path):
    def parametrized(lib):
        return lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 2))

    with pytest.raises(RuntimeError) as theirs:
        torch.save(parametrized(torch), tmp_path / "theirs.pt")
    with pytest.raises(RuntimeError) as ours:
        save(parametrized(gradnb), tmp_path / "ours.pt")
    assert str(ours.value) == str(theirs.value)
