"""Crash-safe saves: a process killed with SIGKILL at random instants while it
saves a study over and over always leaves a save that loads and resumes exactly; temporary
files are created with O_EXCL and never followed through a symlink."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from combex._state import load_state, save_state
from combex.exceptions import StateError
from combex.experiments import build_solver, load_study, make_instance, run_generators, run_study

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(signal, "SIGKILL"),
                                reason="needs fork and SIGKILL")


def _env():
    i, e, a = run_generators(11, 0)
    env = make_instance("jiang-1sparse", rng=i, N=5, K=1)
    env.reset(e)
    return env, a


def _finish(exp, env):
    """The ask / tell loop of run_study, without saving (fast)."""
    while not exp.done:
        batch = exp.ask()
        exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
    return exp.result()


def kill_loop(tmp_path: Path, kills: int, seed: int) -> dict[str, int]:
    """Fork a process that runs (resumes) a study saving after every batch (about 2 ms a
    save: the process spends most of its time saving), SIGKILL it after a random delay,
    then check that the save on disk loads and resumes to the reference result."""
    solver = build_solver("lil-randlucb")
    env, a = _env()
    reference = solver.run(env, rng=a)
    path = tmp_path / "study.json"
    rs = np.random.default_rng(seed)
    counts = {"kills": 0, "recovered": 0, "mid_save": 0, "restarts": 0, "no_save": 0}
    for _ in range(kills):
        if path.exists() and load_state(path)["status"] != "running":
            shutil.rmtree(tmp_path / "s", ignore_errors=True)
            for f in tmp_path.iterdir():
                if f.is_file():
                    f.unlink()
            counts["restarts"] += 1
        for f in tmp_path.glob(".*.tmp"):  # left by the previous kill: count only this one's
            f.unlink()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                env_c, a_c = _env()
                run_study(solver, env_c, path, rng=a_c)
            finally:
                os._exit(0)
        time.sleep(float(rs.uniform(0.0, 0.04)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        counts["kills"] += 1
        if any(f.name.endswith(".tmp") for f in tmp_path.iterdir()):
            counts["mid_save"] += 1  # the kill landed inside a save
        if not path.exists():  # killed before the first save
            counts["no_save"] += 1
            continue
        fresh, _ = _env()
        fresh.reset(999)  # resuming restores the saved noise stream
        exp = load_study(path, solver, fresh)
        res = _finish(exp, fresh)
        assert res.samples == reference.samples and res.rounds == reference.rounds
        assert np.array_equal(np.asarray(res.answer), np.asarray(reference.answer))
        assert np.array_equal(res.pulls, reference.pulls)
        counts["recovered"] += 1
    return counts


def test_sigkill_at_random_instants_leaves_a_resumable_save(tmp_path):
    counts = kill_loop(tmp_path, 100, seed=1)
    # every kill that left a save recovered exactly; on a loaded machine more kills land
    # before the first save, so only a floor on the number of recoveries
    assert counts["kills"] == 100 and counts["recovered"] == 100 - counts["no_save"], counts
    assert counts["recovered"] >= 50, counts
    assert counts["mid_save"] >= 5, counts  # the kills did land inside saves


@pytest.mark.slow
def test_sigkill_many_instants(tmp_path):
    counts = kill_loop(tmp_path, 500, seed=2)
    assert counts["recovered"] == 500 - counts["no_save"] and counts["recovered"] >= 250 and counts["mid_save"] >= 50, counts


def test_temporary_names_are_not_followed_through_symlinks(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    p = tmp_path / "study.json"
    # fixed temporary names (what a naive save would write to), planted as symlinks to another file
    for name in ("study.json.tmp", "study.json.tmp.npz", "study.json.npz"):
        (tmp_path / name).symlink_to(victim)
    save_state({"a": np.arange(3)}, p)
    assert victim.read_text() == "precious"
    assert np.array_equal(load_state(p)["a"], np.arange(3))
    assert not p.is_symlink()


def test_one_commit_point_previous_save_survives_until_the_rename(tmp_path):
    p = save_state({"a": np.arange(3)}, tmp_path / "s.json")
    first = json.loads(p.read_text())
    save_state({"a": np.arange(4)}, p)
    files = sorted(f.name for f in tmp_path.iterdir())
    assert files == sorted(["s.json", json.loads(p.read_text())["arrays"]])  # old arrays cleaned up
    assert first["arrays"] != json.loads(p.read_text())["arrays"]


def test_old_format_still_loads(tmp_path):
    p = tmp_path / "old.json"
    nonce = "00112233"
    p.write_text(json.dumps({"format": "combex-state", "version": 1, "nonce": nonce,
                             "state": {"a": {"__array__": "a0"}, "b": 2}}))
    with open(tmp_path / "old.json.npz", "wb") as fh:
        np.savez(fh, a0=np.arange(5), __nonce__=np.array(nonce))
    st = load_state(p)
    assert np.array_equal(st["a"], np.arange(5)) and st["b"] == 2


# ---------------------------------------------------------------------- damaged / foreign saves
def _saved_study(tmp_path):
    solver = build_solver("lil-randlucb")
    env, a = _env()
    path = tmp_path / "study.json"
    run_study(solver, env, path, rng=a, budget=60)
    return solver, path


def _tamper(path, fn):
    doc = json.loads(path.read_text())
    fn(doc["state"])
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("where", ["exploration", "environment"])
def test_bit_generator_name_comes_from_an_allow_list(tmp_path, where):
    solver, path = _saved_study(tmp_path)

    def evil(st):
        (st if where == "exploration" else st["environment"])["rng_type"] = "seed"

    _tamper(path, evil)
    np.random.seed(5)
    expected = np.random.random()
    np.random.seed(5)
    env, _ = _env()
    with pytest.raises(StateError, match=r"study\.json.*rng_type.*'seed'"):
        load_study(path, solver, env)
    assert np.random.random() == expected  # the global generator was not reseeded


@pytest.mark.parametrize("damage, field", [
    (lambda st: st.pop("samples"), "samples"),
    (lambda st: st.__setitem__("samples", -5), "samples"),
    (lambda st: st.__setitem__("rng", {"state": "x"}), "rng"),
    (lambda st: st.__setitem__("status", 3), "status"),
    (lambda st: st.__setitem__("extra", None), "malformed"),
    (lambda st: st.__setitem__("n_arms", "five"), "arms"),
    (lambda st: st["environment"].__setitem__("positions", [-1]), "positions"),
])
def test_corrupt_study_fields_raise_state_error_naming_file_and_field(tmp_path, damage, field):
    solver, path = _saved_study(tmp_path)
    _tamper(path, damage)
    env, _ = _env()
    with pytest.raises(StateError, match=rf"study\.json.*{field}"):
        load_study(path, solver, env)


def test_negative_counts_and_nan_inverse_are_refused(tmp_path):
    i, e, a = run_generators(3, 0)
    env = make_instance("kuroki-synthetic", rng=i, n=6, k=3, gap=1.0)
    env.reset(e)
    solver = build_solver("icb")
    exp = solver.start(env, rng=1)
    for _ in range(5):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    st = exp.state_dict()

    bad = dict(st, extra=dict(st["extra"], T=-np.abs(st["extra"]["T"]) - 1))
    with pytest.raises(StateError, match="negative"):
        solver.resume(bad, env)
    ls = dict(st["extra"]["ls"])
    ls["A_inv"] = np.full_like(ls["A_inv"], np.nan)
    bad = dict(st, extra=dict(st["extra"], ls=ls))
    with pytest.raises(StateError, match="A_inv"):
        solver.resume(bad, env)


@pytest.mark.parametrize("damage", ["zip", "missing", "json"])
def test_corrupt_files_raise_state_error(tmp_path, damage):
    solver, path = _saved_study(tmp_path)
    npz = path.with_name(json.loads(path.read_text())["arrays"])
    if damage == "zip":
        npz.write_bytes(b"PK\x03\x04garbage")
        match = "do not match the hash"
    elif damage == "missing":
        npz.unlink()
        match = "missing"
    else:
        path.write_text('{"format": "combex-state", "arrays": "../../etc/passwd", "state": {}}')
        match = "arrays"
    env, _ = _env()
    with pytest.raises(StateError, match=match):
        load_study(path, solver, env)
    # a foreign JSON structure in the exploration (Exploration.save / Solver.load path)
    save_state({"solver": "lil-randlucb", "params": solver.json_params(), "n_arms": 5, "rng": 3,
                "rng_type": "PCG64"}, tmp_path / "foreign.json")
    with pytest.raises(StateError, match=r"foreign\.json.*rng"):
        solver.load(tmp_path / "foreign.json", env)
