"""Live studies: storage contract, ask / tell rules, replay, errors, concurrency, faults."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import combex
import combex.studies as cs
from combex.environments import FullBandit
from combex.testing import check_storage

sys.path.insert(0, str(Path(__file__).parent))
from _studies_helpers import PgCluster  # noqa: E402
from _study_worker import MEANS, reward  # noqa: E402

#: ICB with a geometric check schedule (a handful of batches of many tickets each)
ICB = {"delta": 0.1, "growth": 0.5}
MAX = cs.MAX_ASK
WORKER = str(Path(__file__).parent / "_study_worker.py")
pytest.importorskip("sqlalchemy")


@pytest.fixture(scope="module")
def pg():
    cluster = PgCluster()
    yield cluster
    cluster.stop()


def full_problem():
    return FullBandit(MEANS, k=2, rng=0).problem


def semi_problem():
    return cs.problem_spec(4, noise="bernoulli", labels=["ann", "bob", "cy", "dee"])


def run_to_end(study, order_rng=None, window=1, max_evals=200_000):
    """Ask / tell until the study stops; with ``window`` > 1, up to ``window`` tickets are
    out at once and told in random order."""
    out = []
    n = 0
    while n < max_evals:
        try:
            new = study.ask(n=window - len(out)) if len(out) < window else []
        except cs.StudyFinishedError:
            return n
        out += new
        if not out:
            raise AssertionError("no ticket to work on")
        i = 0 if order_rng is None else int(order_rng.integers(len(out)))
        t = out.pop(i)
        try:
            study.tell(t, reward(t, MEANS))
        except cs.StudyFinishedError:
            return n
        n += 1
    raise AssertionError("the study did not stop")


def sequential_reference(solver_name, params, problem, seed):
    """The exploration driven directly, batch by batch, with the same reward function."""
    exp = combex.solvers.get_solver(solver_name)(**params).start(problem, rng=np.random.default_rng(seed))
    b = 0
    while not exp.done:
        batch = exp.ask()
        sums = []
        for i, (arm, count) in enumerate(batch):
            arm = np.flatnonzero(arm).tolist() if np.ndim(arm) else int(arm)
            sums.append(reward(cs.Ticket(0, arm, count, 0.0, b, i), MEANS))
        exp.tell_batch(batch, sums)
        b += 1
    return exp


# ----------------------------------------------------------------------------- storage contract
def test_conformance_memory():
    check_storage(cs.InMemoryStorage)


def test_conformance_sqlite(tmp_path):
    paths = iter(tmp_path / f"s{i}.db" for i in range(100))
    check_storage(lambda: cs.SQLStorage(next(paths)))


def test_conformance_postgresql(pg):
    check_storage(lambda: cs.SQLStorage(pg.new_database()))


def test_check_storage_catches_a_broken_backend():
    class Forgetful(cs.InMemoryStorage):
        def list_studies(self):
            return super().list_studies()[:1]

    with pytest.raises(AssertionError, match="list_studies"):
        check_storage(Forgetful)


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "s.db"
    cs.SQLStorage(path).close()
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("UPDATE combex_schema SET version = 99")
    con.commit()
    con.close()
    with pytest.raises(cs.SchemaVersionError, match="version 99, newer"):
        cs.SQLStorage(path)


def test_unreachable_storage_is_a_clear_error():
    t0 = time.time()
    with pytest.raises(cs.StorageError, match="Cannot reach the storage"):
        cs.create_study(storage=cs.SQLStorage("postgresql+psycopg://nobody@127.0.0.1:1/x", connect_timeout=2),
                        name="s", problem=semi_problem(), solver="lucb")
    assert time.time() - t0 < 30
    with pytest.raises(cs.StorageError, match="Cannot"):
        cs.SQLStorage("nosuchdialect://x/y")


# ----------------------------------------------------------------------------- studies
@pytest.mark.parametrize("where", ["memory", "sqlite"])
def test_eager_study_identifies_and_stores_the_result(where, tmp_path):
    storage = None if where == "memory" else str(tmp_path / "s.db")
    study = cs.create_study(storage=storage, name="s", problem=semi_problem(), solver="lucb",
                            solver_params={"K": 1, "delta": 0.1}, seed=3, snapshot_every=50)
    st = study.storage
    n = run_to_end(study)
    rec = st.get_study("s")
    assert rec.status == "identified" and rec.result["answer"] == [0] and rec.result["answer_labels"] == ["ann"]
    assert rec.n_told == n == rec.result["evaluations"]
    with pytest.raises(cs.StudyFinishedError, match=rf"^Study 's' is identified \(answer ann after {n} evaluations\)"):
        study.ask()  # the answer by its names, as the lab says it
    assert study.best()["answer"] == [0]
    df = study.trials_dataframe()
    assert (df.state == "told").sum() == n and df.told_seq.dropna().astype(int).tolist() == list(range(1, n + 1))
    # the cached live state, a fresh replay of the log and a snapshot resume agree exactly
    live = study._replay.exp.state_dict()
    fresh = cs.load_study(storage=st, name="s")
    with st.transaction("s") as tx:
        rp_log = cs._study._Replay(tx.study, fresh.problem, fresh.solver)
        rp_log.fold(tx.told_since(0))
        snap_seq, payload = tx.latest_snapshot()
        rp_snap = cs._study._Replay.from_snapshot(tx.study, fresh.problem, fresh.solver, payload)
        rp_snap.fold(tx.told_since(snap_seq))
    assert snap_seq == (n // 50) * 50
    for other in (rp_log.exp.state_dict(), rp_snap.exp.state_dict()):
        _assert_same_state(live, other)


def _assert_same_state(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same_state(a[k], b[k])
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_state(x, y)
    else:
        assert a == b


def test_batch_study_out_of_order_equals_sequential_run():
    """Batch policy: results arriving in any order give exactly the sequential run."""
    params = ICB
    ref = sequential_reference("icb", params, full_problem(), seed=5)
    for window, order in [(1, None), (7, np.random.default_rng(0))]:
        study = cs.create_study(name=f"w{window}", problem=full_problem(), solver="icb", solver_params=params,
                                seed=5, snapshot_every=7)
        run_to_end(study, order, window)
        res = study.storage.get_study(study.name).result
        assert res["answer"] == np.flatnonzero(ref.answer).tolist() == [0, 1]
        assert res["samples"] == ref.samples and res["rounds"] == ref.rounds
        assert res["certificate"]["statistic"] == pytest.approx(ref.certificate["statistic"], rel=0, abs=0)


def test_batch_policy_waits_when_the_batch_is_out():
    study = cs.create_study(name="s", problem=full_problem(), solver="icb", solver_params=ICB)
    first = study.ask(n=MAX)
    assert len(first) == len({t.entry for t in first}) and study.ask() is None and study.ask(n=3) == []
    study.tell_many([(t, reward(t)) for t in first])
    assert study.ask() is not None


def test_tell_errors_write_nothing():
    clock = [1000.0]
    study = cs.create_study(name="s", problem=semi_problem(), solver="lucb", solver_params={"K": 1},
                            lease_seconds=10)
    study.clock = lambda: clock[0]
    t1, t2 = study.ask(n=2)
    st = study.storage
    before = st.tickets("s")
    with pytest.raises(cs.TicketError, match="no ticket 999"):
        study.tell(999, 1.0)
    with pytest.raises(cs.TicketError, match=r"in \[0, 1\].*Got 2.0"):
        study.tell(t1, 2.0)
    with pytest.raises(cs.TicketError, match="finite"):
        study.tell(t1, float("nan"))
    with pytest.raises(cs.TicketError, match="must be a real number"):
        study.tell(t1, "x")
    with pytest.raises(cs.TicketError, match="already told"):  # all or nothing, duplicate in one call
        study.tell_many([(t1, 1.0), (t1, 1.0)])
    assert st.tickets("s") == before and st.get_study("s").n_told == 0
    assert study.tell(t1, 1.0) == "running"
    with pytest.raises(cs.TicketError, match="already told"):
        study.tell(t1, 1.0)
    clock[0] += 11  # t2's lease ran out: the next ask marks it expired (eager: not handed out again)
    again = study.ask()
    rows = {r.id: r for r in st.tickets("s")}
    assert rows[t2.id].state == "expired" and again.id != t2.id
    assert study.tell(t2, 0.0) == "running"  # a late score is accepted: the evaluation was made
    assert st.get_study("s").n_told == 2 and {r.id: r for r in st.tickets("s")}[t2.id].state == "told"
    study.tell(again, 0.0)


def test_a_held_or_late_batch_slot_is_handed_out_again_and_both_scores_are_kept():
    """Batch policy: a ticket past its lease, or held while the rest of its batch was told
    (overdue), is handed out again (same slot, reissue_of); whichever score comes first
    fills the slot, the other is kept in the log as an extra evaluation the solver does not
    see, so the run equals the sequential one."""
    clock = [1000.0]
    study = cs.create_study(name="s", problem=full_problem(), solver="icb", solver_params=ICB, seed=5,
                            lease_seconds=10)
    study.clock = lambda: clock[0]
    first = study.ask(n=MAX)
    assert study.ask() is None  # everything is out, nothing told, nothing overdue
    clock[0] += 11  # every lease ran out: the whole batch is handed out again
    again = study.ask(n=MAX)
    assert [(t.batch, t.entry, t.arm) for t in again] == [(t.batch, t.entry, t.arm) for t in first]
    rows = {r.id: r for r in study.storage.tickets("s")}
    assert all(rows[t.id].state == "expired" for t in first)
    assert [rows[t.id].reissue_of for t in again] == [t.id for t in first]
    study.tell_many([(t, reward(t)) for t in first[1:]])  # late scores are accepted and fill their slots
    held = again[0]
    dup = study.ask()  # held: every other slot of the batch was told since it was handed out
    assert (dup.batch, dup.entry, dup.arm) == (held.batch, held.entry, held.arm) and dup.id != held.id
    assert {r.id: r for r in study.storage.tickets("s")}[dup.id].reissue_of == held.id
    assert study.ask() is None  # the duplicate is fresh: nothing more
    study.tell(dup, reward(dup))  # fills the slot: the batch is folded
    study.tell(held, reward(held))  # an extra evaluation of the same slot: kept, not folded
    study.tell_many([(t, reward(t)) for t in again[1:]])  # extras too
    assert study.storage.get_study("s").n_told == 2 * len(first)
    run_to_end(study)
    ref = sequential_reference("icb", ICB, full_problem(), seed=5)
    res = study.storage.get_study("s").result
    assert res["answer"] == [0, 1] and res["samples"] == ref.samples and res["rounds"] == ref.rounds


def test_create_study_name_clash_and_bad_input(tmp_path):
    path = str(tmp_path / "s.db")
    cs.create_study(storage=path, name="s", problem=semi_problem(), solver="lucb", solver_params={"K": 1})
    with pytest.raises(cs.DuplicatedStudyError, match="load_if_exists"):
        cs.create_study(storage=path, name="s", problem=semi_problem(), solver="lucb", solver_params={"K": 1})
    with pytest.raises(cs.DuplicatedStudyError, match="other settings.*solver_params"):
        cs.create_study(storage=path, name="s", problem=semi_problem(), solver="lucb", solver_params={"K": 2},
                        load_if_exists=True)
    again = cs.create_study(storage=path, name="s", problem=semi_problem(), solver="lucb",
                            solver_params={"K": 1}, load_if_exists=True)
    assert again.name == "s" and cs.get_all_study_names(path) == ["s"]
    with pytest.raises(combex.InvalidParameterError, match="solver"):
        cs.create_study(storage=path, name="t", problem=semi_problem(), solver="sub-ts")
    with pytest.raises(combex.InvalidParameterError, match="Unknown solver"):
        cs.create_study(storage=path, name="t", problem=semi_problem(), solver="nope")
    with pytest.raises(combex.InvalidParameterError, match="labels"):
        cs.problem_spec(3, labels=["a"])
    with pytest.raises(cs.StudyNotFoundError, match="No study named 'zz'"):
        cs.load_study(storage=path, name="zz")
    assert cs.get_all_study_names(path) == ["s"]
    cs.delete_study(storage=path, name="s")
    assert cs.get_all_study_names(path) == []


def test_user_decision_class_is_stored_by_name(tmp_path):
    from combex.testing._example_plugin import ConflictFreeTeams  # registered through its entry point

    dc = ConflictFreeTeams(n=6, k=2, conflicts=[(0, 1)]) if "conflicts" in ConflictFreeTeams.__init__.__code__.co_varnames \
        else ConflictFreeTeams()
    spec = cs.problem_spec(dc.n, noise="bernoulli", arm_type="mask", decision_class=dc)
    assert spec["decision_class"]["name"] == type(dc).name
    path = str(tmp_path / "s.db")
    cs.create_study(storage=path, name="s", problem=spec, solver="icb", solver_params=ICB)
    import sqlite3

    text = sqlite3.connect(path).execute("select problem from combex_studies").fetchone()[0]
    assert type(dc).name in text and "pickle" not in text
    assert type(cs.load_study(storage=path, name="s").problem.decision_class) is type(dc)


@pytest.mark.slow
def test_error_rate_under_heavy_concurrency():
    """Eager policy with 16 tickets out and results told in random order: the error rate
    stays within delta (LUCB, delta = 0.1; a one-sided binomial bound over 30 studies)."""
    errors = 0
    runs = 30
    problem = cs.problem_spec(4, noise="bernoulli")
    means = np.array([0.8, 0.5, 0.4, 0.3])
    for r in range(runs):
        study = cs.create_study(name=f"r{r}", problem=problem, solver="lucb", solver_params={"K": 1, "delta": 0.1},
                                seed=r)
        rng = np.random.default_rng(1000 + r)
        out = []
        while True:
            try:
                out += study.ask(n=16 - len(out))
            except cs.StudyFinishedError:
                break
            t = out.pop(int(rng.integers(len(out))))
            try:
                study.tell(t, float(rng.binomial(t.count, means[t.arm])))
            except cs.StudyFinishedError:
                break
        errors += study.best()["answer"] != [0]
    # P(Binomial(30, 0.1) >= 8) < 0.01
    assert errors <= 7, errors


# ----------------------------------------------------------------------------- processes
ROOT = str(Path(__file__).resolve().parents[1])


def _spawn(*args):
    """A worker process importing this checkout's combex."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.Popen([sys.executable, WORKER, *map(str, args)], stdout=subprocess.PIPE, text=True, env=env)


def _check_log(storage, name):
    rows = storage.tickets(name)
    told = sorted(r.told_seq for r in rows if r.state == "told")
    assert told == list(range(1, len(told) + 1)), "told sequence numbers must have no gap or repeat"
    assert storage.get_study(name).n_told == len(told)
    reissued = [r.reissue_of for r in rows if r.reissue_of is not None]
    assert len(reissued) == len(set(reissued)), "an expired ticket is handed out again once"
    return rows


def _concurrent(url, workers):
    study = cs.create_study(storage=url, name="c", problem=full_problem(), solver="icb",
                            solver_params=ICB, seed=2, snapshot_every=20)
    procs = [_spawn(url, "c", "work", i) for i in range(workers)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    done = sum(int(o.split()[-1]) for o in outs)
    st = study.storage
    rows = _check_log(st, "c")
    res = st.get_study("c").result
    ref = sequential_reference("icb", ICB, full_problem(), seed=2)
    assert res["answer"] == [0, 1] and res["samples"] == ref.samples
    assert done == st.get_study("c").n_told == len([r for r in rows if r.state == "told"])


def test_concurrent_workers_sqlite(tmp_path):
    _concurrent(str(tmp_path / "c.db"), 4)


@pytest.mark.slow
def test_concurrent_workers_postgresql(pg):
    _concurrent(pg.new_database(), 4)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
@pytest.mark.parametrize("mode", ["hang-tell", "hang-ask"])
def test_kill_9_mid_transaction(backend, mode, tmp_path, request):
    """kill -9 of a worker inside its tell transaction, or of the process inside an ask
    transaction: nothing of it is written, the lock is released, and the study finishes
    with the answer (and samples) of an uninterrupted run."""
    url = str(tmp_path / "k.db") if backend == "sqlite" else request.getfixturevalue("pg").new_database()
    study = cs.create_study(storage=url, name="k", problem=full_problem(), solver="icb",
                            solver_params=ICB, seed=4, lease_seconds=3.0)
    # (a 1 s lease let a ticket of run_to_end's window expire under a loaded CI: 3 s)
    # some progress first
    for t in study.ask(n=5):
        study.tell(t, reward(t))
    before = study.storage.tickets("k")
    p = _spawn(url, "k", mode)
    assert p.stdout.readline().strip() == "READY"
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    st = study.storage
    after = _check_log(st, "k")
    if mode == "hang-ask":
        assert after == before, "a killed ask transaction must write nothing"
    else:  # its ask committed (one pending ticket more); its tell did not
        assert [r.state for r in after[len(before):]] == ["pending"] and st.get_study("k").n_told == 5
    time.sleep(3.1)  # the killed worker's ticket expires and is handed out again
    run_to_end(study)
    _check_log(st, "k")
    res = st.get_study("k").result
    ref = sequential_reference("icb", ICB, full_problem(), seed=4)
    assert res["answer"] == [0, 1] and res["samples"] == ref.samples and res["rounds"] == ref.rounds


# ----------------------------------------------------------------------------- budget
def test_budget_stops_an_eager_study_with_the_recommendation(tmp_path):
    """A study of two equal arms never identifies; its budget stops it: status
    budget_exhausted, the leader, what progress() reports, and no ticket past the budget."""
    problem = cs.problem_spec(2, noise="bernoulli", labels=["ann", "bob"])
    study = cs.create_study(storage=str(tmp_path / "b.db"), name="b", problem=problem, solver="lucb",
                            solver_params={"K": 1, "delta": 0.1}, budget=25)
    rng = np.random.default_rng(0)
    out = study.ask(n=30)
    assert len(out) == 25  # no ticket beyond the budget
    assert study.ask(n=5) == []
    for t in out[:-1]:
        assert study.tell(t, float(rng.integers(0, 2))) == "running"
    assert study.tell(out[-1], 1.0) == "budget_exhausted"
    rec = study.storage.get_study("b")
    assert rec.status == "budget_exhausted" and rec.n_told == 25 and rec.budget == 25
    res = rec.result
    assert res["status"] == "budget_exhausted" and res["evaluations"] == 25 and res["samples"] == 25
    assert res["answer"] in ([0], [1]) and res["answer_labels"] == [["ann", "bob"][res["answer"][0]]]
    for key in ("statistic", "threshold", "stops_when", "delta_achieved", "evaluations_left", "noise_check"):
        assert key in res, key  # progress() merged into the stored result
    with pytest.raises(cs.StudyFinishedError, match="budget_exhausted"):
        study.ask()
    best = study.best()
    assert best["status"] == "budget_exhausted" and best["budget"] == 25 and best["leader"]["arm"] == res["answer"]
    assert "budget of 25 evaluations ran out" in best["certificate_text"]
    # a replay of the log stops at the same place
    again = cs.load_study(storage=str(tmp_path / "b.db"), name="b").exploration_state()
    assert again.exp.status == "budget_exhausted" and again.exp.samples == 25


def test_budget_stops_a_batch_study_mid_batch():
    """Batch policy: at the budget the solver has seen the complete batches; the told
    entries of the unfinished one stay in the log (and the member estimates)."""
    study = cs.create_study(name="b", problem=full_problem(), solver="icb", solver_params=ICB, budget=20)
    first = study.ask(n=MAX)
    assert len(first) == 15  # ICB's first batch: every team of 2 among 6
    study.tell_many([(t, reward(t)) for t in first])
    more = study.ask(n=MAX)
    assert len(more) == 5  # the budget leaves 5
    assert study.tell_many([(t, reward(t)) for t in more]) == "budget_exhausted"
    res = study.storage.get_study("b").result
    assert res["evaluations"] == 20 and res["samples"] == 15 and res["status"] == "budget_exhausted"
    assert sum(e["n"] for e in study.member_estimates()) == 2 * 20


def test_budget_of_the_lab_case_from_the_cli(tmp_path, capsys):
    from combex.cli import main

    db = str(tmp_path / "lab.db")
    workers = "Ana,Ben,Cleo,Dev,Eli,Fay,Gus,Hana,Ivo,Jun,Kai,Lea"
    assert main(["study", "create", db, "--name", "lab", "--workers", workers, "--team-size", "4", "--score-range",
                 "0,100", "--noise-scale", "10", "--solver", "top-two", "--param", "delta=0.1", "--param",
                 "epsilon=5", "--budget", "14"]) == 0
    assert json.loads(capsys.readouterr().out)["budget"] == 14
    rng = np.random.default_rng(1)
    q = np.array([14.0, 9.0, 20.0, 12.0, 17.0, 8.0, 19.0, 11.0, 15.0, 10.0, 18.0, 13.0])
    while True:
        assert main(["study", "ask", db, "--name", "lab"]) == 0
        doc = json.loads(capsys.readouterr().out)
        if doc["status"] != "running":
            break
        for t in doc["tickets"]:
            score = float(np.clip(q[t["arm"]].sum() + rng.normal(0, 10), 0, 100))
            assert main(["study", "tell", db, "--name", "lab", "--result", f"{t['id']}={score}"]) == 0
            capsys.readouterr()
    assert doc["status"] == "budget_exhausted" and doc["best"]["evaluations"] == 14
    assert len(doc["best"]["leader"]["names"]) == 4
    for bad in ("0", "-3", "x"):
        code = None
        try:
            code = main(["study", "create", db, "--name", "z", "--n-arms", "3", "--solver", "lucb", "--budget", bad])
        except SystemExit as exc:  # argparse refuses a non-int
            code = exc.code
        assert code == 2
    capsys.readouterr()


@pytest.mark.parametrize("where", ["memory", "sqlite"])
def test_the_owner_changes_the_budget_or_stops_now(where, tmp_path):
    """set_budget raises or lowers the budget of a running study (recorded in its history;
    never below the evaluations told); equal to them it stops now with the leader, its
    delta_achieved and the pending tickets cancelled; stop() is that, recorded as the owner's
    stop; a replay of the log stops at the same place; create_study(load_if_exists=True)
    with the first budget loads it; a larger budget continues the stopped study (and a
    replay of its log runs on), an identified study is final."""
    storage = None if where == "memory" else str(tmp_path / "b.db")
    problem = cs.problem_spec(2, noise="bernoulli", labels=["ann", "bob"])
    kw = dict(name="b", problem=problem, solver="top-two", solver_params={"delta": 0.1}, budget=10)
    study = cs.create_study(storage=storage, **kw)
    with pytest.raises(combex.exceptions.StateError, match="no evaluation told"):
        study.stop()
    out = study.ask(n=10)
    assert len(out) == 10
    assert study.set_budget(30) == "running" and study.summary()["budget"] == 30
    for t in out:
        study.tell(t, float(t.arm == 0))
    with pytest.raises(combex.InvalidParameterError, match="'budget'.*9"):
        study.set_budget(9)  # below the 10 told
    held = study.ask(n=2)
    assert study.set_budget(12) == "running"
    assert study.ask(n=2) == []  # the two held fill the budget
    assert study.stop() == "budget_exhausted"
    best = study.best()
    assert best["status"] == "budget_exhausted" and best["evaluations"] == 10 and best["budget"] == 10
    assert best["leader"]["names"] == "ann" and 0 < best["delta_achieved"] <= 1
    assert best["certificate_text"].startswith("The owner stopped the study after 10 evaluations, before the "
                                               "stopping rule held")
    assert best["certificate_text"].endswith(f"A larger budget continues the study (how much larger: combex study "
                                             f"forecast ... --name {study.name}, or Forecast now on the study page).")
    assert best["delta_achieved"] == 1 and ("nothing is certified" in best["certificate_text"]) and (
        "What speaks for the leader then is the plan's error at a fixed budget: how often, in studies simulated "
        "under your assumptions, the leader after 10 evaluations was not the best (combex plan ... --budget 10)."
        in best["certificate_text"])
    assert {t.id for t in held} <= {t["id"] for t in study.trials_dataframe().to_dict("records")
                                    if t["state"] == "cancelled"}
    with pytest.raises(cs.StudyFinishedError, match="unless the owner sets a larger budget"):
        study.tell(held[0], 1.0)
    with pytest.raises(cs.StudyFinishedError, match="unless the owner sets a larger budget"):
        study.stop()
    with pytest.raises(combex.InvalidParameterError, match="a budget above 10 continues it. Got 10"):
        study.set_budget(10)
    events = [h for h in study.storage.get_study("b").history if "to" in h]
    assert [(e["event"], e["from"], e["to"]) for e in events] == [
        ("budget", 10, 30), ("budget", 30, 12), ("stopped_by_owner", 12, 10)]
    again = cs.Study(study.storage, study.storage.get_study("b"))
    again._replay = None
    rp = again.exploration_state()
    assert rp.exp.status == "budget_exhausted" and rp.exp.samples == 10
    if storage is not None:
        assert cs.create_study(storage=storage, load_if_exists=True, **kw).status == "budget_exhausted"
    assert study.set_budget(5000) == "running" and study.best()["evaluations"] == 10
    hist = study.storage.get_study("b").history
    assert hist[-1]["event"] == "budget" and hist[-1]["reopened"] and hist[-1]["previous_answer"] is not None
    coins = np.random.default_rng(0)
    while study.status == "running":
        t = study.ask()
        study.tell(t, float(coins.random() < (0.9 if t.arm == 0 else 0.1)))
    assert study.status == "identified" and study.best()["leader"]["names"] == "ann"
    again = cs.Study(study.storage, study.storage.get_study("b"))
    again._replay = None
    assert again.exploration_state().exp.status == "identified"
    with pytest.raises(cs.StudyFinishedError, match="is identified"):
        study.set_budget(9000)  # an identified study is final
    # the history in words (the study page and `combex study status --text` list it)
    n = study.best()["evaluations"]
    assert [e["text"] for e in study.events()] == [
        "The owner changed the budget from 10 to 30 evaluations after 0 evaluations.",
        "The owner changed the budget from 30 to 12 evaluations after 10 evaluations.",
        "The owner stopped the study after 10 evaluations; answer (not certified): ann. The 2 tickets still out "
        "(#11, #12) were cancelled.",
        "The owner continued the stopped study with a budget of 5000 evaluations after 10 evaluations (its "
        "answer then: ann).",
        f"The stopping rule held after {n} evaluations: the study identified ann."]


def test_a_study_continued_by_another_handle_runs_on_in_this_one(tmp_path):
    """Two handles on one stored study (a notebook's, the web app's): the first runs to the
    budget, the second continues the study with a larger one; the first's next ask and tell
    run on (its cached state had stopped at the old budget, and must not stop the study
    again or cancel the tickets others hold)."""
    db = str(tmp_path / "s.db")
    problem = cs.problem_spec(workers=[f"w{i}" for i in range(6)], team_size=2, score_range=(0, 100))
    a = cs.create_study(storage=db, name="s", budget=20, solver="top-two", solver_params={"delta": 0.1}, problem=problem)
    while a.status == "running":
        t = a.ask()
        a.tell(t.id, 50.0)
    b = cs.load_study(storage=db, name="s")
    assert b.set_budget(100) == "running"
    held = b.ask(assistant=None)
    t = a.ask()
    a.tell(t.id, 50.0)
    assert a.status == "running" and a.best()["evaluations"] == 21
    assert [h["event"] for h in a.summary()["history"]] == ["stopped", "budget"]
    assert {p.id for p in b.pending()} == {held.id}


def test_set_budget_and_stop_from_the_cli(tmp_path, capsys):
    from combex.cli import main

    db = str(tmp_path / "b.db")
    assert main(["study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb", "--param", "K=1",
                 "--labels", "a,b,c"]) == 0
    assert main(["study", "set-budget", db, "--name", "q", "--budget", "40"]) == 0
    capsys.readouterr()
    assert cs.load_study(storage=db, name="q").summary()["budget"] == 40
    assert main(["study", "stop", db, "--name", "q"]) == 2  # nothing told yet
    assert "no evaluation told" in capsys.readouterr().err
    assert main(["study", "ask", db, "--name", "q", "--n", "3"]) == 0
    tickets = json.loads(capsys.readouterr().out)["tickets"]
    assert main(["study", "tell", db, "--name", "q", *sum((["--result", f"{t['id']}=1"] for t in tickets), [])]) == 0
    capsys.readouterr()
    assert main(["study", "stop", db, "--name", "q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "budget_exhausted" and doc["best"]["evaluations"] == 3 and doc["best"]["budget"] == 3


@pytest.mark.parametrize("budget", [0, -1, "10", 2.5, True])
def test_a_bad_budget_is_refused(budget):
    with pytest.raises(combex.InvalidParameterError, match="'budget'"):
        cs.create_study(name="b", problem=semi_problem(), solver="lucb", solver_params={"K": 1}, budget=budget)


# ----------------------------------------------------------------------------- many assistants
BERNOULLI4 = np.array([0.9, 0.4, 0.3, 0.2])


def _bernoulli4_score(t, rng):
    return float(rng.binomial(t.count, BERNOULLI4[t.arm]))


def test_a_held_ticket_neither_blocks_nor_stalls_an_eager_study():
    """One ticket taken and never told: the study stops within 1.5x the evaluations of the
    same study without it (the held arm still gets tickets when LUCB needs it)."""
    from combex.studies.testing import simulate_assistants

    with_held, without = [], []
    for seed in range(3):
        for hold, out in ((0, without), (1, with_held)):
            study = cs.create_study(name="s", problem=cs.problem_spec(4), solver="lucb",
                                    solver_params={"K": 1, "delta": 0.1}, seed=seed)
            r = simulate_assistants(study, _bernoulli4_score, assistants=1, hold=hold, rng=seed,
                                    max_evaluations=5000)
            assert r["status"] == "identified" and r["answer"] == [0] and r["empty_asks"] == 0
            out.append(r["evaluations"])
    assert sum(with_held) <= 1.5 * sum(without), (with_held, without)


@pytest.mark.parametrize("solver", ["top-two", "random-design"])
def test_an_opening_ticket_held_for_long_does_not_hold_the_team_design_back(solver):
    """The lab case with one of the opening teams asked for and never told: the others' next
    tickets complete the opening design with a team that spans what it misses (not repeats of
    the told opening teams: 11 distinct teams in 60 sessions), the rule moves on to its own
    choices, and the study certifies the best team."""
    workers = [f"w{i}" for i in range(12)]
    quality = np.array([20, 19, 18, 17, 15, 14, 13, 12, 11, 10, 9, 8], dtype=float)
    study = cs.create_study(name="lab", problem=cs.problem_spec(workers=workers, team_size=4, score_range=(0, 100)),
                            solver=solver, solver_params={"delta": 0.1, "epsilon": 5}, seed=1)
    rng = np.random.default_rng(1)
    teams = []

    def session(t):
        teams.append(tuple(t.arm))
        study.tell(t, float(np.clip(quality[t.arm].sum() + rng.normal(0, 10), 0, 100)))

    first, held = study.ask(), study.ask()  # the second opening team is asked for and kept
    session(first)
    while study.status == "running" and len(teams) < 3000:
        session(study.ask())
    assert held.id in {t.id for t in study.pending()} or study.status != "running"
    assert len(set(teams[:60])) >= 40, len(set(teams[:60]))
    assert tuple(held.arm) not in teams[:12]  # the held team is not asked for again while it is out
    assert study.status == "identified" and study.best()["leader"]["names"] == ["w0", "w1", "w2", "w3"]


def test_eager_assistants_get_distinct_useful_tickets_and_never_an_empty_ask():
    from combex.studies.testing import simulate_assistants

    study = cs.create_study(name="s", problem=cs.problem_spec(4), solver="lucb", solver_params={"K": 1, "delta": 0.1})
    pair = set(np.asarray(study.exploration_state().batch().arms).tolist())
    tickets = study.ask(n=6)
    assert len({t.id for t in tickets}) == 6 and {t.arm for t in tickets} == pair  # the arms LUCB asks for
    assert [t.arm for t in tickets[:2]] != [tickets[0].arm] * 2  # spread over them, least pending first
    study2 = cs.create_study(name="s2", problem=cs.problem_spec(4), solver="lucb", solver_params={"K": 1, "delta": 0.1})
    r = simulate_assistants(study2, _bernoulli4_score, assistants=8, rng=0, max_evaluations=5000)
    assert r["status"] == "identified" and r["empty_asks"] == 0


def test_assistants_holding_tickets_at_once_get_different_teams():
    """A team cannot run two sessions at once: the lab case (12 workers, teams of 4, top-two)
    with three assistants who each ask before anyone tells gets three different teams, at the
    start and later in the study (when the rule's next choice is the held leader, the ask
    takes the rule's following choices)."""
    workers = [f"w{i}" for i in range(12)]
    quality = np.array([14, 9, 20, 12, 17, 8, 19, 11, 15, 10, 18, 13], dtype=float)
    study = cs.create_study(name="lab", problem=cs.problem_spec(workers=workers, team_size=4, score_range=(0, 100)),
                            solver="top-two", solver_params={"delta": 0.1, "epsilon": 5}, seed=3)
    for name in ("a", "b", "c"):
        study.add_assistant(name)
    rng = np.random.default_rng(0)
    clashes = rounds = 0
    for _ in range(40):
        held = [study.ask(assistant=name) for name in ("a", "b", "c")]
        teams = [tuple(t.arm) for t in held]
        clashes += len(set(teams)) < 3
        rounds += 1
        for t in held:
            score = float(np.clip(quality[list(t.arm)].sum() + rng.normal(0, 10), 0, 100))
            study.tell(t.id, round(score))
    assert rounds == 40 and clashes == 0


def test_the_tickets_a_stop_cancels_are_in_its_history():
    """A budget set to the sessions told stops the study now (the owner's tool; the web page
    asks for Stop instead): the tickets still out are cancelled, and the history says whose."""
    study = cs.create_study(name="s", problem=cs.problem_spec(4, labels=["ann", "bo", "cy", "di"]), solver="lucb",
                            solver_params={"K": 1})
    for who in ("Ravi", "Sol"):
        study.add_assistant(who)
    for _ in range(6):
        t = study.ask()
        study.tell(t, 1.0 if t.arm == 0 else 0.0)
    a, b = study.ask(assistant="Ravi"), study.ask(assistant="Sol")
    assert study.set_budget(6) == "budget_exhausted" and study.pending() == []
    stop = study.summary()["history"][-1]
    assert stop["event"] == "stopped" and stop["cancelled"] == [{"ticket": a.id, "asked_by": "Ravi"},
                                                                {"ticket": b.id, "asked_by": "Sol"}]
    assert study.events()[-1]["text"].endswith(
        f"The 2 tickets still out (#{a.id} of Ravi, #{b.id} of Sol) were cancelled.")


def test_a_budget_between_two_checks_of_a_study_checking_at_set_points_is_said(tmp_path):
    """random-design checks after 120, 144, ..., 744, 892 sessions of 12 workers: a budget of
    800 leaves sessions 745-800 unable to certify, and best() (its certificate text too)
    names the last check before it and the next; a budget on a check, or a solver that
    checks after every score, has no such note. A voided session moves the checks by one."""
    from combex.solvers.optimal_linear import fixed_design_checks

    assert fixed_design_checks(120.0, 900) == [120, 144, 173, 208, 249, 299, 359, 430, 516, 620, 744, 892]
    workers = [f"w{i}" for i in range(12)]
    spec = cs.problem_spec(workers=workers, team_size=4, score_range=(0, 100))
    study = cs.create_study(storage=str(tmp_path / "lab.db"), name="lab", problem=spec, solver="random-design",
                            solver_params={"delta": 0.1, "epsilon": 5}, seed=3, budget=800)
    b = study.best()
    assert (b["budget_checks"]["last"], b["budget_checks"]["next"]) == (744, 892)
    assert b["budget_checks"]["note"] == (
        "This solver checks its stopping rule at set points: the last before the budget of 800 is after 744 "
        "evaluations, the next after 892; evaluations 745 to 800 cannot certify the answer, so a budget of 744 or "
        "892 spends none in vain.")
    assert b["budget_checks"]["note"] in b["certificate_text"]
    study.set_budget(744)
    assert study.best()["budget_checks"] is None
    study.set_budget(100)
    assert study.best()["budget_checks"]["note"].startswith(
        "This solver checks its stopping rule at set points, the first after 120 evaluations: a budget of 100 ends "
        "the study before any check")
    study.set_budget(744)
    t = study.ask()
    study.tell(t.id, 60)
    study.correct(t.id, None, reason="the session was interrupted")
    assert study.best()["budget_checks"]["last"] == 621  # 620 samples and the voided one
    top = cs.create_study(storage=str(tmp_path / "lab.db"), name="top", problem=spec, solver="top-two",
                          solver_params={"delta": 0.1, "epsilon": 5}, seed=3, budget=800)
    assert top.best()["budget_checks"] is None
    # stopped at a budget of 130 (checks at 120 and 144): a certified answer needs the check at 144 at least
    short = cs.create_study(storage=str(tmp_path / "lab.db"), name="short", problem=spec, solver="random-design",
                            solver_params={"delta": 0.1, "epsilon": 5}, seed=3, budget=130)
    rng = np.random.default_rng(1)
    quality = np.array([20, 19, 18, 17, 15, 14, 13, 12, 11, 10, 9, 8], dtype=float)
    while short.status == "running":
        t = short.ask()
        short.tell(t.id, round(float(np.clip(quality[list(t.arm)].sum() + rng.normal(0, 10), 0, 100))))
    b = short.best()
    assert short.status == "budget_exhausted" and b["checked_at"] == 120 and b["evaluations_left"] >= 144 - 130
    exp = short.exploration_state().exp  # a statistic a hair under its threshold still waits for the check
    exp._last = {**exp._last, "binding": 0.999 * exp._last["threshold"]}
    assert exp.evaluations_left() == 144 - 130


def test_a_random_design_study_keeps_its_fixed_design_threshold_with_three_assistants(tmp_path):
    """``random-design`` in a study: three assistants hold tickets at once and tell them in
    the reverse order; every ticket is a draw of the design, so the fixed-design threshold
    stays (also after the study is opened again from its storage) and the study identifies
    the best team, with different teams out at once and no statistic before the first
    checkpoint (10 n = 120 sessions); between checkpoints the statistic its certificate
    names is the last checkpoint's, said so."""
    workers = [f"w{i}" for i in range(12)]
    quality = np.array([20, 19, 18, 17, 15, 14, 13, 12, 11, 10, 9, 8], dtype=float)
    url = str(tmp_path / "lab.db")
    study = cs.create_study(storage=url, name="lab", problem=cs.problem_spec(workers=workers, team_size=4,
                                                                          score_range=(0, 100)),
                            solver="random-design", solver_params={"delta": 0.1, "epsilon": 5}, seed=3)
    for name in ("a", "b", "c"):
        study.add_assistant(name)
    rng = np.random.default_rng(0)
    clashes, voided = 0, None
    while study.status == "running":
        held = [study.ask(assistant=name) for name in ("a", "b", "c")]
        held = [t for t in held if t is not None]
        clashes += len({tuple(t.arm) for t in held}) < len(held)
        for t in held[::-1]:
            if study.status != "running":
                break
            score = float(np.clip(quality[list(t.arm)].sum() + rng.normal(0, 10), 0, 100))
            study.tell(t.id, round(score, 1))
        b = study.best()
        assert b["oblivious_design"]
        if b["evaluations"] < 120:
            assert b["statistic"] is None and b["first_check_pending"] and b["next_check_at"] == 120
            assert "rule has not checked yet: its first check comes after 120 evaluations; from then on the study " \
                "has a leader" in b["certificate_text"]
        elif 120 < b["evaluations"] < 144 and b["status"] == "running":  # between the first two checkpoints
            between = b
            if voided is None:  # a voided score: told, not a sample; the certificate still names its check
                voided = study.trials_dataframe().query("told_seq == 1")["id"].item()
                study.correct(voided, None, reason="the session did not happen as asked")
                b = study.best()
                assert isinstance(b["checked_at"], int) and "At the rule's last check, after " in b["certificate_text"]
    assert voided is not None and between["checked_at"] == 120 and between["next_check_at"] == 144 and (
        "At the rule's last check, after 120 evaluations (it checks at set points, not after every score), the "
        "stopping statistic was ") in between["certificate_text"]
    best = cs.load_study(storage=url, name="lab").best()
    assert best["status"] == "identified" and best["leader"]["names"] == ["w0", "w1", "w2", "w3"]
    assert clashes == 0 and best["delta_achieved"] <= 0.1
    assert cs.load_study(storage=url, name="lab").exploration_state().exp.threshold == "fixed-design"


def test_tickets_held_for_long_do_not_walk_the_next_tickets_through_the_teams_in_order():
    """Five tickets asked at session 80 and kept out (their teams among the ones forced
    exploration asks for): the tickets that follow keep to the rule's choices, not the next
    team in the listed order of the 495 (the tracking's ties would give 56-68 such tickets
    in 400 on the lab case; a few may happen by chance)."""
    import itertools

    workers = [f"w{i:02d}" for i in range(12)]
    quality = dict(zip(workers, [20, 19, 18, 17, 15, 14, 13, 12, 11, 10, 9, 8]))
    order = {c: i for i, c in enumerate(itertools.combinations(workers, 4))}
    study = cs.create_study(name="lab", problem=cs.problem_spec(workers=workers, team_size=4, score_range=(0, 100)),
                            solver="top-two", solver_params={"delta": 0.1, "epsilon": 5}, seed=2)
    rng = np.random.default_rng(2)
    held, prev, walks = [], None, 0
    for n in range(1, 301):
        while len(held) < 3:
            held.append(study.ask())
        t = held.pop(0)
        study.tell(t.id, float(np.clip(round(sum(quality[w] for w in t.names) + rng.normal(0, 10), 1), 0, 100)))
        if n == 80:
            kept = [study.ask() for _ in range(5)]
        i = order[tuple(t.names)]
        walks += n > 80 and prev is not None and i == prev + 1
        prev = i
    assert len(kept) == 5 and walks <= 3, walks


def test_an_overdue_tickets_team_is_not_handed_to_the_next_assistant():
    """Scores typed in quickly (a backlog entered in a minute) make the recent time-to-tell
    tiny, so a ticket held for a few seconds is overdue; its team may still be in session,
    so the next assistants get other teams all the same."""
    workers = [f"w{i}" for i in range(12)]
    quality = np.array([14, 9, 20, 12, 17, 8, 19, 11, 15, 10, 18, 13], dtype=float)
    study = cs.create_study(name="lab", problem=cs.problem_spec(workers=workers, team_size=4, score_range=(0, 100)),
                            solver="top-two", solver_params={"delta": 0.1, "epsilon": 5}, seed=3)
    clock = [1000.0]
    study.clock = lambda: clock[0]
    rng = np.random.default_rng(0)

    def score(t):
        return round(float(np.clip(quality[list(t.arm)].sum() + rng.normal(0, 10), 0, 100)))

    clashes = 0
    for _ in range(10):
        for _ in range(40):  # a backlog typed in: each score told 10 ms after its ask
            t = study.ask()
            clock[0] += 0.01
            study.tell(t.id, score(t))
        held = []
        for _ in range(3):
            held.append(study.ask())
            clock[0] += 5.0  # five seconds between the assistants: the earlier tickets are overdue
        assert [t.overdue for t in study.pending() if t.id == held[0].id] == [True]
        clashes += len({tuple(t.arm) for t in held}) < 3
        for t in held:
            study.tell(t.id, score(t))
    assert clashes == 0


def test_an_overdue_ticket_still_counts_against_the_budget():
    """Near the budget, tickets out fill what is left of it even when they are overdue (an
    overdue session may still be told): no ticket beyond the budget is handed out, to be
    cancelled at the stop with its session lost; releasing the ticket frees its place."""
    study = cs.create_study(name="b", problem=cs.problem_spec(4), solver="lucb",
                            solver_params={"K": 1, "delta": 0.1}, budget=20)
    clock = [1000.0]
    study.clock = lambda: clock[0]
    for _ in range(18):
        t = study.ask()
        clock[0] += 0.01
        study.tell(t.id, 1.0 if t.arm == 0 else 0.0)
    out = [study.ask(), study.ask()]
    clock[0] += 600.0
    assert all(t.overdue for t in study.pending()) and len(study.pending()) == 2
    assert study.ask() is None and study.ask(n=3) == []
    study.release(out[0])
    t = study.ask()
    assert t is not None and {p.id for p in study.pending()} == {out[1].id, t.id}


def test_a_batch_study_does_not_wait_for_a_held_ticket_until_its_lease_ends():
    """Batch policy: once a held ticket is overdue (3x the median time-to-tell), the next
    idle assistant gets its evaluation again; the study ends well within the one-day lease
    of the held ticket, with the answer of the sequential run."""
    from combex.studies.testing import simulate_assistants

    study = cs.create_study(name="s", problem=full_problem(), solver="icb", solver_params=ICB, seed=5)
    held = study.ask()  # taken by someone who never comes back

    def score(t, rng):
        return reward(t)

    r = simulate_assistants(study, score, assistants=3, rng=0, mean_minutes=30)
    assert r["status"] == "identified" and r["answer"] == [0, 1]
    rows = study.storage.tickets("s")
    dup = [x for x in rows if x.reissue_of == held.id]
    assert dup and dup[0].issued_at - held.issued_at < 6 * 3600 < study.storage.get_study("s").lease_seconds
    ref = sequential_reference("icb", ICB, full_problem(), seed=5)
    assert study.storage.get_study("s").result["samples"] == ref.samples


def test_ask_is_capped():
    study = cs.create_study(name="s", problem=full_problem(), solver="icb", solver_params=ICB)
    for n in (cs.MAX_ASK + 1, 20000, 0, -1, "3", 2.5, True):
        with pytest.raises(combex.InvalidParameterError, match="'n' parameter of Study.ask"):
            study.ask(n=n)
    assert study.storage.tickets("s") == []
    assert len(study.ask(n=cs.MAX_ASK)) == 15


def test_default_propose_is_least_pending_and_changes_nothing():
    problem = cs._problem.build_problem(cs.problem_spec(4))
    exp = combex.solvers.get_solver("lucb")(K=1).start(problem, rng=1)
    batch = exp.ask()
    entries = [int(a) for a in batch.arms]
    before = exp.state_dict()
    rng = np.random.default_rng(0)
    assert exp.propose(0) == []
    got = exp.propose(2 * len(entries), [], rng)
    assert sorted(got) == sorted(entries * 2) and sorted(got[:len(entries)]) == sorted(entries)  # once, then twice
    got = exp.propose(len(entries) - 1, [entries[0]], rng)
    assert sorted(got) == sorted(entries[1:])  # the entries with fewer pending first
    _assert_same_state(before, exp.state_dict())  # neither the state nor the exploration's rng moved
    assert exp.ask() is batch
    with pytest.raises(combex.InvalidParameterError, match="'n'"):
        exp.propose(-1)


# ----------------------------------------------------------------------------- no hang
def test_a_frozen_worker_does_not_hang_the_others_on_postgresql(pg):
    """A worker frozen (SIGSTOP) inside its tell transaction holds the study's lock: the
    others get a clear StorageError naming the lock within the lock timeout, then proceed
    once the server ended the frozen session; after SIGCONT the frozen worker's transaction
    fails (nothing of it written) and the study finishes like an uninterrupted run."""
    url = pg.new_database()
    study = cs.create_study(storage=url, name="k", problem=full_problem(), solver="icb", solver_params=ICB, seed=4)
    for t in study.ask(n=5):
        study.tell(t, reward(t))
    p = subprocess.Popen([sys.executable, WORKER, url, "k", "hang-tell", "45"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get(
                             "PYTHONPATH")]))))
    try:
        assert p.stdout.readline().strip() == "READY"
        os.kill(p.pid, signal.SIGSTOP)
        other = cs.load_study(storage=url, name="k")
        t0 = time.time()
        with pytest.raises(cs.StorageError, match="locked by another process.*lock_timeout"):
            other.ask(n=3)
        waited = time.time() - t0
        assert waited < 30, waited
        assert other.storage.get_study("k").n_told == 5  # reads never waited
        deadline = time.time() + 60
        while True:  # the server ends the frozen session after idle_in_transaction_timeout
            try:
                tickets = other.ask(n=3)
                break
            except cs.StorageError:
                assert time.time() < deadline
        recovered = time.time() - t0
        assert tickets and recovered < 60, recovered
    finally:
        os.kill(p.pid, signal.SIGCONT)
    out, err = p.communicate(timeout=120)  # it wakes; its transaction is gone: a clear error, no commit
    assert p.returncode != 0 and "COMMITTED" not in out
    assert "StorageError" in err and "ended this process's transaction" in err
    st = other.storage
    rows = _check_log(st, "k")
    assert st.get_study("k").n_told == 5 and sum(r.state == "told" for r in rows) == 5
    for t in tickets:
        other.tell(t, reward(t))
    run_to_end(other)
    res = st.get_study("k").result
    ref = sequential_reference("icb", ICB, full_problem(), seed=4)
    assert res["answer"] == [0, 1] and res["samples"] == ref.samples
    print(f"frozen worker: StorageError after {waited:.1f} s, others proceeding after {recovered:.1f} s")


def test_a_frozen_worker_wakes_to_a_clear_error(pg):
    """The frozen worker itself: when it wakes, its commit fails with a StorageError."""
    url = pg.new_database()
    st = cs.SQLStorage(url, idle_in_transaction_timeout=1.0)
    cs.create_study(storage=st, name="k", problem=semi_problem(), solver="lucb", solver_params={"K": 1})
    study = cs.load_study(storage=st, name="k")
    t = study.ask()
    with pytest.raises(cs.StorageError, match="ended this process's transaction|Cannot reach"):
        with st.transaction("k") as tx:
            tx.tell(t.id, 1.0, time.time())
            time.sleep(3)  # frozen longer than the idle timeout
    assert st.get_study("k").n_told == 0
    assert study.tell(t, 1.0) == "running"


@pytest.mark.parametrize("kwargs, name", [({"lock_timeout": 0}, "lock_timeout"),
                                          ({"statement_timeout": -1}, "statement_timeout"),
                                          ({"idle_in_transaction_timeout": "5"}, "idle_in_transaction_timeout")])
def test_bad_timeouts_are_refused(kwargs, name, tmp_path):
    with pytest.raises(combex.InvalidParameterError, match=f"'{name}'"):
        cs.SQLStorage(tmp_path / "s.db", **kwargs)


# ----------------------------------------------------------------------------- durability
def test_sqlite_commits_are_durable_by_default(tmp_path):
    """Every write connection syncs the write-ahead log at each commit (synchronous=FULL:
    a tell that returned survives a power loss) unless durability="normal" is asked."""
    for durability, level in ((None, 2), ("full", 2), ("normal", 1)):
        kw = {} if durability is None else {"durability": durability}
        st = cs.SQLStorage(tmp_path / f"d{level}{durability}.db", **kw)
        cs.create_study(storage=st, name="s", problem=semi_problem(), solver="lucb", solver_params={"K": 1})
        with st.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == level
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        st.close()
    with pytest.raises(combex.InvalidParameterError, match="'durability'.*Got 'fast'"):
        cs.SQLStorage(tmp_path / "x.db", durability="fast")


def test_postgresql_commits_are_durable_by_default(pg):
    url = pg.new_database()
    for durability, setting in ((None, "on"), ("normal", "off")):
        st = cs.SQLStorage(url, **({} if durability is None else {"durability": durability}))
        with st.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == setting
            assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == "10s"
            assert conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar() == "20s"
        st.close()


# ----------------------------------------------------------------------------- damage
def _lucb_study(url, n=30, snapshot_every=10):
    study = cs.create_study(storage=url, name="s", problem=semi_problem(), solver="lucb",
                            solver_params={"K": 1, "delta": 0.01}, snapshot_every=snapshot_every, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(n):
        t = study.ask()
        study.tell(t, float(rng.integers(0, 2)))
    return study


def _raw(url, sql, *params):
    eng = sa.create_engine(url if "://" in url else "sqlite:///" + url)
    with eng.begin() as conn:
        conn.exec_driver_sql(sql, params) if params else conn.exec_driver_sql(sql)
    eng.dispose()


sa = pytest.importorskip("sqlalchemy")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "d.db")
    return request.getfixturevalue("pg").new_database()


def test_a_damaged_or_missing_snapshot_falls_back_to_the_log(url):
    study = _lucb_study(url)
    ref = study.exploration_state().exp.state_dict()
    # damage the newest snapshot's bytes: the older one is used, with a warning
    _raw(url, "UPDATE combex_snapshots SET payload = %s WHERE told_seq = 30" if "postgresql" in url else
         "UPDATE combex_snapshots SET payload = ? WHERE told_seq = 30", b"garbage")
    with pytest.warns(combex.exceptions.CombexWarning, match="after 30 tells is damaged.*checksum"):
        got = cs.load_study(storage=url, name="s").exploration_state()
    _assert_same_state(got.exp.state_dict(), ref)
    # a snapshot whose checksum matches but whose content is not a state: a warning too
    import hashlib

    good = b"PK\x03\x04 not an npz"
    ck = hashlib.sha256(good).hexdigest()
    _raw(url, ("UPDATE combex_snapshots SET payload = %s, checksum = %s" if "postgresql" in url else
               "UPDATE combex_snapshots SET payload = ?, checksum = ?"), good, ck)
    with pytest.warns(combex.exceptions.CombexWarning, match="is damaged"):
        got = cs.load_study(storage=url, name="s").exploration_state()
    _assert_same_state(got.exp.state_dict(), ref)
    # no snapshot at all: the log is replayed, silently
    _raw(url, "DELETE FROM combex_snapshots")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cs.load_study(storage=url, name="s").exploration_state()
    _assert_same_state(got.exp.state_dict(), ref)
    t = study.ask()  # and the study goes on
    assert study.tell(t, 1.0) == "running"


@pytest.mark.parametrize("damage, match", [
    ("UPDATE combex_tickets SET reward_sum = 0.5 WHERE told_seq = 7", "told row 7 .*damaged.*checksum"),
    ("UPDATE combex_tickets SET arm = '9' WHERE told_seq = 12", "told row 12 .*damaged.*checksum"),
    ("UPDATE combex_tickets SET told_seq = 99 WHERE told_seq = 5", "gap: expected told_seq 5"),
])
def test_a_damaged_told_row_is_an_error_naming_it(url, damage, match):
    study = _lucb_study(url, snapshot_every=1000)
    _raw(url, damage)
    with pytest.raises(cs.StorageError, match=match):
        cs.load_study(storage=url, name="s").exploration_state()
    with pytest.raises(cs.StorageError, match=match):
        cs.load_study(storage=url, name="s").ask()


def test_a_told_row_damaged_with_a_matching_checksum_is_still_caught(tmp_path):
    """Arm, count and reward are validated on replay too (a row rewritten with its
    checksum recomputed, or written by another program)."""
    from combex.studies._storage import row_checksum

    url = str(tmp_path / "d.db")
    _lucb_study(url, snapshot_every=1000)
    for col, val, match in (("arm", 7, "arm 7 / count 1 is not an evaluation"),
                            ("reward_sum", 3.0, "Got 3.0 instead")):
        import sqlite3

        con = sqlite3.connect(url)
        tid, arm, rs = con.execute("select id, arm, reward_sum from combex_tickets where told_seq = 4").fetchone()
        arm, rs = (val, rs) if col == "arm" else (int(arm), val)
        con.execute(f"update combex_tickets set {col} = ?, checksum = ? where id = ?",
                    (str(val) if col == "arm" else val, row_checksum(tid, arm, 1, -1, 0, 4, rs), tid))
        con.commit()
        con.close()
        with pytest.raises(cs.StorageError, match=f"told row 4 .*damaged.*{match}"):
            cs.load_study(storage=url, name="s").exploration_state()
        url2 = str(tmp_path / f"d{col}.db")
        _lucb_study(url2, snapshot_every=1000)
        url = url2
