"""Live studies as people use them: names and ISO times, assistants and their tokens,
release, corrections, pending tickets (Python API and ``combex study ...``)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import combex
import combex.studies as cs
from combex.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from _studies_helpers import PgCluster  # noqa: E402

pytest.importorskip("sqlalchemy")

WORKERS = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
QUALITIES = np.array([14.0, 9.0, 20.0, 12.0, 17.0, 8.0, 19.0, 11.0, 15.0, 10.0, 18.0, 13.0])
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
TOP_TWO = {"delta": 0.1, "epsilon": 5}


def lab_spec(**kw):
    return cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100), noise_scale=10.0, **kw)


def score(t, rng):
    return float(np.clip(QUALITIES[t.arm].sum() + rng.normal(0, 10), 0, 100))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip() else None), err


@pytest.fixture(scope="module")
def pg():
    cluster = PgCluster()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def storage(request, tmp_path):
    if request.param == "memory":
        return cs.InMemoryStorage()
    if request.param == "sqlite":
        return cs.SQLStorage(tmp_path / "s.db")
    return cs.SQLStorage(request.getfixturevalue("pg").new_database())


# ----------------------------------------------------------------------------- names and times
def test_tickets_best_and_exports_speak_names_and_iso_times(tmp_path):
    db = str(tmp_path / "lab.db")
    study = cs.create_study(storage=db, name="lab", problem=lab_spec(), solver="top-two", solver_params=TOP_TWO)
    t = study.ask()
    d = t.to_dict()
    assert d["names"] == [WORKERS[i] for i in t.arm] and d["arm"] == t.arm
    assert ISO.match(d["issued_at"]) and ISO.match(d["lease_deadline"])
    assert d["lease_deadline_unix"] == t.lease_deadline
    assert cs.iso_time(0.0) == "1970-01-01T00:00:00Z" and cs.iso_time(1795803114.7) == "2026-11-27T18:11:54Z"
    rng = np.random.default_rng(0)
    study.tell(t, score(t, rng))
    best = study.best()
    assert best["leader"]["names"] == [WORKERS[i] for i in best["leader"]["arm"]] == best["labels"]
    summary = study.summary()
    assert ISO.match(summary["created_at"]) and summary["labels"] == WORKERS
    df = study.trials_dataframe()
    row = df[df.id == t.id].iloc[0]
    assert row["names"] == d["names"] and ISO.match(row["told_at"]) and ISO.match(row["issued_at"])
    assert row["told_at_unix"] > 1e9
    out = tmp_path / "t.csv"
    assert main(["study", "export", db, "--name", "lab", "--out", str(out)]) == 0
    text = out.read_text()
    assert "Ana" in text or "Ben" in text or "Cleo" in text
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text)


def test_cli_speaks_names_and_times(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    run(capsys, "study", "create", db, "--name", "lab", "--workers", ",".join(WORKERS), "--team-size", "4",
        "--score-range", "0,100", "--noise-scale", "10", "--solver", "top-two", "--param", "delta=0.1")
    code, doc, _ = run(capsys, "study", "ask", db, "--name", "lab", "--n", "2")
    t = doc["tickets"][0]
    assert t["names"] == [WORKERS[i] for i in t["arm"]] and ISO.match(t["lease_deadline"])
    code, doc, _ = run(capsys, "study", "pending", db, "--name", "lab")
    assert [p["id"] for p in doc][:1] == [t["id"]] and ISO.match(doc[0]["issued_at"]) and doc[0]["age_seconds"] >= 0
    code, doc, _ = run(capsys, "study", "status", db, "--name", "lab")
    assert len(doc["best"]["leader"]["names"]) == 4 and ISO.match(doc["created_at"])
