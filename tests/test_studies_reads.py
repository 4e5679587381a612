"""Reads of live studies: no write lock, a bounded part of the storage, answers for people
(best() with its certificate in words, history(), member_estimates())."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import combex
import combex.studies as cs

sys.path.insert(0, str(Path(__file__).parent))
from _studies_helpers import PgCluster  # noqa: E402

sa = pytest.importorskip("sqlalchemy")

WORKERS = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
QUALITIES = np.array([14.0, 9.0, 20.0, 12.0, 17.0, 8.0, 19.0, 11.0, 15.0, 10.0, 18.0, 13.0])
TOP_TWO = {"delta": 0.1, "epsilon": 5}


@pytest.fixture(scope="module")
def pg():
    cluster = PgCluster()
    yield cluster
    cluster.stop()


def lab_study(storage, name="lab", noise_scale=10.0, **kw):
    spec = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100), noise_scale=noise_scale)
    return cs.create_study(storage=storage, name=name, problem=spec, solver="top-two", solver_params=TOP_TWO, **kw)


def play(study, n, rng):
    for _ in range(n):
        t = study.ask()
        if t is None:
            return
        study.tell(t, float(np.clip(QUALITIES[t.arm].sum() + rng.normal(0, 10), 0, 100)))


def _reads(study):
    return {"status": study.status, "summary": study.summary(), "best": study.best(), "pending": study.pending(),
            "history": study.history(), "estimates": study.member_estimates(), "assistants": study.assistants()}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_reads_do_not_wait_for_the_write_lock(backend, tmp_path, request):
    """Another process holds the study's write lock (inside a transaction); every read of
    the study answers at once, with the committed state."""
    url = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("pg").new_database()
    study = lab_study(url)
    study.add_assistant("Ann")
    play(study, 14, np.random.default_rng(0))
    expected = _reads(study)
    held = threading.Event()
    release = threading.Event()
    holder = cs.SQLStorage(url)

    def hold_lock():
        with holder.transaction("lab"):  # BEGIN IMMEDIATE / SELECT ... FOR UPDATE
            held.set()
            release.wait(60)

    th = threading.Thread(target=hold_lock)
    th.start()
    try:
        assert held.wait(30)
        reader = cs.load_study(storage=url, name="lab")
        t0 = time.perf_counter()
        got = _reads(reader)
        elapsed = time.perf_counter() - t0
        assert elapsed < 5.0, elapsed
        assert got["summary"] == expected["summary"] and got["best"] == expected["best"]
        assert [t.id for t in got["pending"]] == [t.id for t in expected["pending"]]
        assert got["history"] == expected["history"] and got["estimates"] == expected["estimates"]
        if backend == "sqlite":  # the lock is real: a writer would wait
            con = sqlite3.connect(url, timeout=0.1)
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                con.execute("BEGIN IMMEDIATE")
            con.close()
    finally:
        release.set()
        th.join(30)
        holder.close()


def test_reads_read_a_bounded_part_of_the_log(tmp_path):
    """best(), summary(), pending(), status and member_estimates() read no told row;
    history() reads about max_points of them (the told rows a read converts are counted)."""
    url = str(tmp_path / "s.db")
    study = lab_study(url, snapshot_every=50)
    rng = np.random.default_rng(1)
    play(study, 120, rng)
    study.ask(n=2)
    reader = cs.load_study(storage=url, name="lab")
    fetched = []
    orig = reader.storage._ticket

    def spy(r, name):
        fetched.append(r)
        return orig(r, name)

    reader.storage._ticket = spy
    for read in (lambda: reader.status, reader.summary, reader.best, reader.member_estimates, reader.assistants):
        fetched.clear()
        read()
        assert fetched == [], read
    fetched.clear()
    reader.pending()
    assert len(fetched) <= 2 + 32  # the pending tickets and the recent tells that time them
    fetched.clear()
    assert len(reader.history(max_points=20)) <= 20 and len(fetched) <= 20


def test_evaluations_left_says_when_the_budget_will_not_reach_a_certified_answer():
    """The note beside the estimate: none while the statistic is under 5% of its threshold
    (too early: it says so); over the budget left -> says so and how to raise it; a study
    stopped at its budget keeps the estimate of what a certified answer would need."""
    study = cs.create_study(name="s", problem=cs.problem_spec(workers=[f"w{i}" for i in range(6)], team_size=2,
                                                              score_range=(0, 100)),
                            solver="top-two", solver_params={"delta": 0.1}, budget=150, seed=1)
    rng = np.random.default_rng(0)
    quality = np.array([30.0, 28, 20, 15, 10, 5])
    notes, early = [], []
    while study.best()["status"] == "running":
        t = study.ask()
        if t is None:
            break
        study.tell(t, round(float(np.clip(quality[list(t.arm)].sum() + rng.normal(0, 15), 0, 100))))
        b = study.best()
        if isinstance(b["evaluations_left"], (int, float)) and b["status"] == "running":
            notes.append((b["evaluations_left"], 150 - b["evaluations"], b["evaluations_left_note"]))
        elif b["status"] == "running" and b["threshold"] is not None and b["statistic"] < 0.05 * b["threshold"]:
            early.append(b["evaluations_left_note"])
    assert len(early) > 20 and all(n.startswith("too early to estimate: the stopping statistic is under 5%")
                                   for n in early)
    over = [n for left, room, n in notes if left > room]
    assert over and all("more than the" in n and "budget leaves" in n and "set-budget" in n
                        and "combex study forecast" in n for n in over)
    b = study.best()
    assert b["status"] == "budget_exhausted" and b["evaluations_left"] > 0
    assert "would still need" in b["evaluations_left_note"] and "more evaluations may be needed" in b["certificate_text"]


# ----------------------------------------------------------------------------- best()
def test_best_says_where_the_study_stands():
    study = cs.create_study(name="s", problem=cs.problem_spec(3, labels=["ann", "bob", "cy"]), solver="lucb",
                            solver_params={"K": 1, "delta": 0.1}, budget=500)
    b = study.best()
    keys = {"status", "leader", "challenger", "statistic", "threshold", "stops_when", "delta_achieved",
            "evaluations_left", "evaluations_left_note", "evaluations", "budget", "noise_check", "certificate",
            "certificate_text", "answer", "labels", "first_check_pending", "checked_at", "oblivious_design",
            "next_check_at", "budget_checks"}
    assert set(b) == keys and b["status"] == "running" and b["evaluations"] == 0 and b["budget"] == 500
    assert "estimate" in b["evaluations_left_note"]
    rng = np.random.default_rng(0)
    for _ in range(20):
        t = study.ask()
        study.tell(t, float(rng.binomial(1, [0.9, 0.2, 0.1][t.arm])))
    b = study.best()
    assert b["leader"] == {"arm": b["answer"], "names": b["labels"]} and b["labels"][0] in ("ann", "bob", "cy")
    assert isinstance(b["statistic"], float) and b["stops_when"] == "statistic < threshold"  # LUCB: strict
    assert b["certificate_text"].startswith("After 20 evaluations the leader is the team ")
    assert "statistic < threshold" in b["certificate_text"] and "budget is 500" in b["certificate_text"]
    while True:
        try:
            t = study.ask()
        except cs.StudyFinishedError:
            break
        if study.tell(t, float(rng.binomial(1, [0.9, 0.2, 0.1][t.arm]))) != "running":
            break
    b = study.best()
    assert b["status"] == "identified" and b["leader"]["names"] == ["ann"] and b["certificate"]
    assert b["certificate_text"].startswith(f"After {b['evaluations']} evaluations the study identified the team ann")
    assert "probability at least 90%" in b["certificate_text"]


# ----------------------------------------------------------------------------- history()
def _reference_checks(study):
    """Told seqs at which a replay of the log runs a stopping check."""
    rec = study.storage.get_study(study.name)
    with study.storage.read(study.name) as rx:
        rp = cs._study._Replay(rec, study.problem, study.solver, rx.corrections())
        out = []
        for r in rx.told_since(0):
            rp.fold([r], cs._study._Batches(rx))
            if rp.checks:
                out.append(r.told_seq)
            rp.checks.clear()
    return out


@pytest.mark.parametrize("solver, params", [("icb", {"delta": 0.1, "growth": 0.5}), ("lucb", {"K": 1})])
def test_history_holds_a_statistic_only_where_the_replay_checks(solver, params):
    from combex.environments import FullBandit

    problem = FullBandit([0.9, 0.7, 0.5, 0.3, 0.1, 0.0], k=2, rng=0).problem if solver == "icb" else \
        cs.problem_spec(4)
    study = cs.create_study(name="s", problem=problem, solver=solver, solver_params=params, seed=3)
    rng = np.random.default_rng(0)
    out = []
    means = np.array([0.9, 0.7, 0.5, 0.3, 0.1, 0.0])
    for _ in range(600):
        try:
            out += study.ask(n=7 - len(out)) if len(out) < 7 else []
        except cs.StudyFinishedError:
            break
        if not out:
            break
        t = out.pop(int(rng.integers(len(out))))
        try:
            study.tell(t, float(np.sum(rng.binomial(t.count, means[t.arm]))))
        except cs.StudyFinishedError:
            break
    hist = study.history(max_points=100_000)
    checks = _reference_checks(study)
    assert [h["evaluation"] for h in hist] == checks and len(checks) >= 3
    if solver == "icb":
        assert len(checks) < study.storage.get_study("s").n_told  # most rows of a batch study hold none
        assert all("statistic" in h or "B" in h or len(h) > 2 for h in hist)
    else:
        assert all(isinstance(h["statistic"], float) and h["threshold"] == 0.0 for h in hist)
    # a correction rewrites the statistics from the corrected row on
    t_rows = [r for r in study.storage.tickets("s") if r.state == "told"]
    study_running = study.status == "running"
    if study_running:
        r = t_rows[len(t_rows) // 2]
        study.correct(r.id, 0.0 if solver == "lucb" else 0.0, reason="entered against the wrong team")
        assert [h["evaluation"] for h in study.history(max_points=100_000)] == _reference_checks(study)


def test_history_is_sampled():
    study = cs.create_study(name="s", problem=cs.problem_spec(4), solver="lucb", solver_params={"K": 1, "delta": 0.01})
    rng = np.random.default_rng(0)
    for _ in range(300):
        t = study.ask()
        study.tell(t, float(rng.integers(0, 2)))
    h = study.history(max_points=50)
    assert 40 <= len(h) <= 50 and h[0]["evaluation"] <= 10 and h[-1]["evaluation"] == 300
    assert all(ISO_RE.match(x["told_at"]) for x in h)
    with pytest.raises(combex.InvalidParameterError, match="max_points"):
        study.history(max_points=1)


ISO_RE = __import__("re").compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


# ----------------------------------------------------------------------------- member_estimates()
def _lstsq_reference(study):
    """Least squares on the corrected told log, by hand."""
    with study.storage.read(study.name) as rx:
        fixed = {c.told_seq: c.reward_sum for c in rx.corrections()}
        rows = rx.told_since(0)
    X, y = [], []
    for r in rows:
        v = fixed.get(r.told_seq, r.reward_sum)
        if v is None:
            continue
        x = np.zeros(12)
        x[r.arm] = 1.0
        X.append(x)
        y.append(v)
    return np.linalg.lstsq(np.array(X), np.array(y), rcond=None)[0]


def test_member_estimates_are_the_least_squares_fit_with_corrections():
    study = lab_study(None, budget=60)
    rng = np.random.default_rng(3)
    play(study, 40, rng)
    est = study.member_estimates()
    assert [e["name"] for e in est] == WORKERS
    np.testing.assert_allclose([e["estimate"] for e in est], _lstsq_reference(study), atol=1e-8)
    rows = [r for r in study.storage.tickets("lab") if r.state == "told"]
    study.correct(rows[3].id, 99.0, reason="x")
    study.correct(rows[5].id, None, reason="y")
    est = study.member_estimates()
    np.testing.assert_allclose([e["estimate"] for e in est], _lstsq_reference(study), atol=1e-8)
    assert all(e["low"] < e["estimate"] < e["high"] and e["estimable"] for e in est)
    assert sum(e["n"] for e in est) == 4 * 39  # one voided team of 4


def test_the_noise_level_is_the_residual_sd_of_the_fit_or_the_declared_one():
    study = lab_study(None, noise_scale=None)
    assert study.noise_level() == {"sd": None, "dof": None, "declared": False}
    play(study, 40, np.random.default_rng(4))
    study.correct([r for r in study.storage.tickets("lab") if r.state == "told"][2].id, None, reason="void")
    theta = _lstsq_reference(study)
    with study.storage.read(study.name) as rx:
        fixed = {c.told_seq: c.reward_sum for c in rx.corrections()}
        rows = [r for r in rx.told_since(0) if fixed.get(r.told_seq, r.reward_sum) is not None]
    resid = [r.reward_sum - theta[r.arm].sum() for r in rows]
    dof = len(rows) - 12
    nl = study.noise_level()
    assert nl["dof"] == dof == 39 - 12 and not nl["declared"]
    assert nl["sd"] == pytest.approx(np.sqrt(np.sum(np.square(resid)) / dof), rel=1e-9)
    assert lab_study(None, name="known").noise_level() == {"sd": 10.0, "dof": None, "declared": True}


def test_member_estimates_before_the_design_identifies_everyone():
    study = lab_study(None)
    assert all(e["estimate"] is None and e["low"] is None and e["n"] == 0 for e in study.member_estimates())
    play(study, 2, np.random.default_rng(0))
    est = study.member_estimates()
    assert all(e["low"] is None and e["high"] is None for e in est)  # two teams identify no one
    assert not any(e["estimable"] for e in est)
    assert sum(e["estimate"] is not None for e in est) == len({i for r in study.storage.tickets("lab")
                                                              if r.state == "told" for i in r.arm})


def test_member_estimates_of_index_arms_are_per_arm_means():
    study = cs.create_study(name="s", problem=cs.problem_spec(3, labels=["a", "b", "c"]), solver="lucb",
                            solver_params={"K": 1})
    rng = np.random.default_rng(0)
    for _ in range(30):
        t = study.ask()
        study.tell(t, float(rng.integers(0, 2)))
    rows = [r for r in study.storage.tickets("s") if r.state == "told"]
    for e in study.member_estimates():
        mine = [r.reward_sum for r in rows if r.arm == e["arm"]]
        assert e["n"] == len(mine) and e["estimate"] == pytest.approx(np.mean(mine))
        assert e["high"] - e["low"] == pytest.approx(2 * 1.959964 * 0.5 / np.sqrt(len(mine)), rel=1e-5)


@pytest.mark.parametrize("known", [True, False])
def test_member_estimate_intervals_cover_about_95_percent(known):
    """The lab case: over 12 studies x 12 workers, the "95%" intervals of the members'
    contributions miss the truth about 5% of the time (at most 12 of 144; the display that
    credited each member the team's score / 4 missed 91 of 120)."""
    misses = 0
    total = 0
    for seed in range(12):
        if known:  # top-two's adaptive teams, the declared session sd
            study = lab_study(None, name=f"k{seed}", seed=seed, budget=150)
        else:  # a fixed design (ICB's first batch: every team once), the residual variance
            spec = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100))
            study = cs.create_study(name=f"u{seed}", problem=spec, solver="icb",
                                    solver_params={"delta": 0.1, "sigma": 10.0}, seed=seed, budget=495)
        rng = np.random.default_rng(100 + seed)
        while True:
            ts = study.ask(n=500)
            if not ts:
                break
            status = study.tell_many([(t, float(QUALITIES[t.arm].sum() + rng.normal(0, 10))) for t in ts])
            if status != "running":
                break
        for e in study.member_estimates():
            total += 1
            misses += not (e["low"] <= QUALITIES[e["arm"]] <= e["high"])
    assert total == 144 and misses <= 12, misses
