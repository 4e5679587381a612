"""Storage schema versions: an older schema is refused with the upgrade command named, and
``combex study upgrade STORAGE`` upgrades it explicitly (from schema 1, on SQLite and
PostgreSQL); a newer one is refused."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

import combex.studies as cs
from combex.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from _studies_helpers import PgCluster, make_v1_storage  # noqa: E402
from _study_worker import MEANS, reward  # noqa: E402

pytest.importorskip("sqlalchemy")
ICB = {"delta": 0.1, "growth": 0.5}


@pytest.fixture(scope="module")
def pg():
    cluster = PgCluster()
    yield cluster
    cluster.stop()


def _full_problem():
    from combex.environments import FullBandit

    return FullBandit(MEANS, k=2, rng=0).problem


def _v1_studies():
    """Two studies in progress, as schema 1 held them: an eager LUCB study and a batch
    ICB study inside its second batch, with tickets out."""
    eager = cs.create_study(name="eager", problem=cs.problem_spec(4, labels=["a", "b", "c", "d"]), solver="lucb",
                            solver_params={"K": 1, "delta": 0.1}, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):
        t = eager.ask()
        eager.tell(t, float(rng.binomial(1, [0.9, 0.4, 0.3, 0.2][t.arm])))
    eager.ask(n=2)
    batch = cs.create_study(name="batch", problem=_full_problem(), solver="icb", solver_params=ICB, seed=4)
    first = batch.ask(n=cs.MAX_ASK)
    batch.tell_many([(t, reward(t)) for t in first])
    second = batch.ask(n=cs.MAX_ASK)
    batch.tell_many([(t, reward(t)) for t in second[:5]])
    return [eager, batch]


def _sequential(seed):
    import combex

    exp = combex.solvers.get_solver("icb")(**ICB).start(_full_problem(), rng=np.random.default_rng(seed))
    b = 0
    while not exp.done:
        batch = exp.ask()
        sums = []
        for i, (arm, count) in enumerate(batch):
            sums.append(reward(cs.Ticket(0, np.flatnonzero(arm).tolist(), count, 0.0, b, i)))
        exp.tell_batch(batch, sums)
        b += 1
    return exp


def _check_upgraded(url, before):
    st = cs.SQLStorage(url)
    assert [r.name for r in st.list_studies()] == ["batch", "eager"]
    eager = cs.load_study(storage=st, name="eager")
    rows = [r for r in st.tickets("eager") if r.state == "told"]
    assert len(rows) == 40 and all(r.checksum for r in rows)
    ref = eager.solver.start(eager.problem, rng=np.random.default_rng(1))
    ref.ask()
    for r in sorted(rows, key=lambda r: r.told_seq):
        ref.tell(r.arm, r.reward_sum, r.count)
        ref.ask()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the old snapshots were dropped, not tried
        got = eager.exploration_state().exp
    assert np.array_equal(got.pulls, ref.pulls) and got.samples == ref.samples == 40
    est = eager.member_estimates()
    for e in est:
        mine = [r.reward_sum for r in rows if r.arm == e["arm"]]
        assert e["n"] == len(mine) and e["estimate"] == pytest.approx(np.mean(mine))
    assert eager.summary()["history"][0]["event"] == "upgraded"
    assert eager.best()["evaluations"] == 40 and [(p.arm, p.batch, p.entry) for p in eager.pending()] == before["eager"]
    rng = np.random.default_rng(5)
    while True:
        try:
            t = eager.ask()
        except cs.StudyFinishedError:
            break
        if eager.tell(t, float(rng.binomial(1, [0.9, 0.4, 0.3, 0.2][t.arm]))) != "running":
            break
    assert eager.status == "identified"
    batch = cs.load_study(storage=st, name="batch")
    out = [t for t in batch.pending()]
    assert [(t.arm, t.batch, t.entry) for t in out] == before["batch"] and len(out) == 2
    batch.tell_many([(t, reward(t)) for t in out])
    while True:
        try:
            ts = batch.ask(n=cs.MAX_ASK)
        except cs.StudyFinishedError:
            break
        if batch.tell_many([(t, reward(t)) for t in ts]) != "running":
            break
    res = st.get_study("batch").result
    ref = _sequential(4)
    assert res["answer"] == [0, 1] and res["samples"] == ref.samples and res["rounds"] == ref.rounds


def test_an_old_schema_is_refused_then_upgraded_from_the_cli(tmp_path, capsys):
    path = str(tmp_path / "old.db")
    studies = _v1_studies()
    before = {s.name: [(t.arm, t.batch, t.entry) for t in s.pending()] for s in studies}
    make_v1_storage(path, studies)
    raw = Path(path).read_bytes()
    with pytest.raises(cs.SchemaVersionError, match=f"version 1, older.*`combex study upgrade {path}`"):
        cs.SQLStorage(path)
    with pytest.raises(cs.SchemaVersionError, match="combex study upgrade"):
        cs.load_study(storage=path, name="eager")
    assert Path(path).read_bytes() == raw  # refused: not changed
    assert main(["study", "status", path, "--name", "eager"]) == 2
    assert "combex study upgrade" in capsys.readouterr().err
    assert main(["study", "upgrade", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"from": 1, "to": cs.SCHEMA_VERSION, "studies": ["batch", "eager"]}
    assert sqlite3.connect(path).execute("select version from combex_schema").fetchone() == (cs.SCHEMA_VERSION,)
    _check_upgraded(path, before)
    assert main(["study", "upgrade", path]) == 0  # a current storage: nothing to do
    assert json.loads(capsys.readouterr().out)["from"] == cs.SCHEMA_VERSION


def test_an_old_schema_is_upgraded_on_postgresql(pg):
    url = pg.new_database()
    studies = _v1_studies()
    before = {s.name: [(t.arm, t.batch, t.entry) for t in s.pending()] for s in studies}
    make_v1_storage(url, studies)
    with pytest.raises(cs.SchemaVersionError, match="combex study upgrade"):
        cs.SQLStorage(url)
    assert cs.upgrade_storage(url)["from"] == 1
    _check_upgraded(url, before)


def test_upgrade_errors(tmp_path, capsys):
    assert main(["study", "upgrade", str(tmp_path / "missing.db")]) == 2
    assert "no storage file" in capsys.readouterr().err
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x int)").connection.commit()
    with pytest.raises(cs.SchemaVersionError, match="no combex schema"):
        cs.upgrade_storage(str(other))
    newer = tmp_path / "new.db"
    cs.SQLStorage(newer).close()
    con = sqlite3.connect(newer)
    con.execute("UPDATE combex_schema SET version = 99")
    con.commit()
    con.close()
    with pytest.raises(cs.SchemaVersionError, match="newer"):
        cs.upgrade_storage(str(newer))
