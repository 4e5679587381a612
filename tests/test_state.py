"""combex._state: JSON + npz saves, no pickle, torn saves detected."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from combex._state import load_state, save_state
from combex.exceptions import StateError


def test_round_trip_nested_arrays(tmp_path):
    st = {"a": np.arange(3), "b": [1, {"c": np.eye(2)}], "s": "x", "rng": {"state": 2**100}}
    p = save_state(st, tmp_path / "s.json")
    back = load_state(p)
    assert np.array_equal(back["a"], st["a"]) and np.array_equal(back["b"][1]["c"], np.eye(2))
    assert back["rng"]["state"] == 2**100 and back["s"] == "x"


def test_torn_save_is_detected(tmp_path):
    import json

    p = save_state({"a": np.arange(3)}, tmp_path / "s.json")
    old = tmp_path / "old.npz"
    shutil.copy(p.with_name(json.loads(p.read_text())["arrays"]), old)
    save_state({"a": np.arange(4)}, p)
    shutil.copy(old, p.with_name(json.loads(p.read_text())["arrays"]))  # arrays of another save
    with pytest.raises(StateError, match="do not match the hash"):
        load_state(p)


def test_not_a_state_and_missing(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(StateError, match="not a combex state"):
        load_state(tmp_path / "x.json")
    with pytest.raises(StateError, match="No saved state"):
        load_state(tmp_path / "nothing.json")
