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
