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


def batch_lab_study(storage=None, name="lab", seed=0):
    """A batch-policy study of the lab's kind: 6 workers, teams of 2, ICB (its first batch:
    the 15 teams once each)."""
    spec = cs.problem_spec(workers=WORKERS[:6], team_size=2, score_range=(0, 100), noise_scale=10.0)
    return cs.create_study(storage=storage, name=name, problem=spec, solver="icb", solver_params={"delta": 0.1},
                           seed=seed)


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
    best = study.best()  # before the rule's first check there is no leader (the solver's start is not data)
    assert best["first_check_pending"] and best["leader"] == {"arm": None, "names": None} and best["labels"] is None
    while best["statistic"] is None:
        nxt = study.ask()
        study.tell(nxt, score(nxt, rng))
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
    assert ", ".join(d["names"]) in text and "['" not in text  # a team as plain text, not a Python list
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
    assert doc["best"]["leader"]["names"] is None and doc["best"]["first_check_pending"]  # no check yet
    assert ISO.match(doc["created_at"])


# ----------------------------------------------------------------------------- assistants
def test_assistants_tokens_and_who_asked_and_told(storage):
    study = cs.create_study(storage=storage, name="lab", problem=lab_spec(), solver="top-two", solver_params=TOP_TWO)
    other = cs.create_study(storage=storage, name="other", problem=lab_spec(), solver="top-two",
                            solver_params=TOP_TWO)
    ann = study.add_assistant("Ann")
    bob = study.add_assistant("Bob Smith")
    assert ann.startswith("cbx_") and ann != bob and len(ann) > 40
    assert [a["name"] for a in study.assistants()] == ["Ann", "Bob Smith"]
    a0 = study.assistants()[0]
    assert ISO.match(a0["created_at"]) and a0["last_seen"] is None and a0["n_told"] == 0
    assert set(a0) == {"name", "created_at", "last_seen", "n_told"}  # never the token or its hash
    assert study.assistant_for_token(ann) == "Ann" and study.assistant_for_token(bob) == "Bob Smith"
    for bad in (ann[:-1] + ("x" if ann[-1] != "x" else "y"), "cbx_zzz_abc", "", None, 42, "x" * 500, bob + "a"):
        assert study.assistant_for_token(bad) is None
    assert other.assistant_for_token(ann) is None  # a token belongs to its study
    with pytest.raises(cs.DuplicatedStudyError, match="already has an assistant named 'Ann'"):
        study.add_assistant("Ann")
    for bad in ("", " Ann", "a" * 256, 7, "tab\there"):
        with pytest.raises(combex.InvalidParameterError, match="'name'"):
            study.add_assistant(bad)
    rng = np.random.default_rng(0)
    t = study.ask(assistant="Ann")
    assert t.assistant == "Ann"
    study.tell(t, score(t, rng), assistant="Bob Smith")
    row = {r.id: r for r in study.storage.tickets("lab")}[t.id]
    assert (row.asked_by, row.told_by) == ("Ann", "Bob Smith")
    by = {a["name"]: a for a in study.assistants()}
    assert by["Bob Smith"]["n_told"] == 1 and by["Ann"]["n_told"] == 0 and ISO.match(by["Ann"]["last_seen"])
    t2 = study.ask()
    assert t2.assistant is None  # the owner at a terminal
    before = study.storage.tickets("lab")
    with pytest.raises(combex.InvalidParameterError, match="'assistant'.*Got 'Zed' instead"):
        study.ask(assistant="Zed")
    with pytest.raises(combex.InvalidParameterError, match="'assistant'"):
        study.tell(t2, 50.0, assistant="Zed")
    assert study.storage.tickets("lab") == before  # nothing written
    study.remove_assistant("Ann")
    assert study.assistant_for_token(ann) is None and [a["name"] for a in study.assistants()] == ["Bob Smith"]
    with pytest.raises(combex.InvalidParameterError, match="'name'"):
        study.remove_assistant("Ann")
    assert {r.id: r for r in study.storage.tickets("lab")}[t.id].asked_by == "Ann"  # the log keeps the name


def test_only_a_salted_hash_of_a_token_is_stored(tmp_path):
    db = tmp_path / "s.db"
    study = cs.create_study(storage=str(db), name="lab", problem=lab_spec(), solver="top-two", solver_params=TOP_TWO)
    token = study.add_assistant("Ann")
    study.add_assistant("Bob")
    secret = token.split("_", 2)[2]
    raw = db.read_bytes() + (Path(str(db) + "-wal").read_bytes() if Path(str(db) + "-wal").exists() else b"")
    assert secret.encode() not in raw and token.encode() not in raw
    import sqlite3

    rows = sqlite3.connect(db).execute("select name, salt, secret_hash from combex_assistants").fetchall()
    assert len(rows) == 2 and rows[0][1] != rows[1][1] and len(rows[0][2]) == 32  # salted: salts differ


def test_assistants_from_the_cli(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    run(capsys, "study", "create", db, "--name", "lab", "--workers", ",".join(WORKERS), "--team-size", "4",
        "--score-range", "0,100", "--noise-scale", "10", "--solver", "top-two", "--param", "delta=0.1")
    code, doc, _ = run(capsys, "study", "add-assistant", db, "--name", "lab", "--assistant", "Ann")
    assert code == 0 and doc["assistant"] == "Ann" and doc["token"].startswith("cbx_") and "once" in doc["note"]
    assert cs.load_study(storage=db, name="lab").assistant_for_token(doc["token"]) == "Ann"
    code, doc, _ = run(capsys, "study", "ask", db, "--name", "lab", "--assistant", "Ann")
    t = doc["tickets"][0]
    assert t["assistant"] == "Ann"
    code, doc, _ = run(capsys, "study", "tell", db, "--name", "lab", "--ticket", str(t["id"]), "--reward-sum", "61",
                       "--assistant", "Ann")
    assert code == 0
    code, doc, _ = run(capsys, "study", "assistants", db, "--name", "lab")
    assert doc[0]["name"] == "Ann" and doc[0]["n_told"] == 1 and "token" not in json.dumps(doc)
    code, _, err = run(capsys, "study", "ask", db, "--name", "lab", "--assistant", "Zed")
    assert code == 2 and "'Zed'" in err
    code, doc, _ = run(capsys, "study", "remove-assistant", db, "--name", "lab", "--assistant", "Ann")
    assert code == 0 and run(capsys, "study", "assistants", db, "--name", "lab")[1] == []


# ----------------------------------------------------------------------------- release, pending
def test_release_hands_a_batch_slot_out_again(storage):
    study = batch_lab_study(storage)
    study.add_assistant("Ann")
    first = study.ask(n=15, assistant="Ann")
    assert study.ask() is None  # the first batch (15 teams) is out
    assert study.release(first[3], assistant="Ann") == "running"
    again = study.ask()
    assert (again.batch, again.entry, again.arm) == (first[3].batch, first[3].entry, first[3].arm)
    rows = {r.id: r for r in study.storage.tickets("lab")}
    assert rows[first[3].id].state == "released"
    rng = np.random.default_rng(0)
    study.tell(first[0], score(first[0], rng))
    with pytest.raises(cs.TicketError, match="is told"):
        study.release(first[0])
    with pytest.raises(cs.TicketError, match="no ticket 9999"):
        study.release(9999)
    with pytest.raises(cs.TicketError, match="'ticket'"):
        study.release("3")
    pend = study.pending()
    assert [p.id for p in pend] == [t.id for t in first[1:] if t.id != first[3].id] + [again.id]
    p = pend[0]
    assert p.assistant == "Ann" and p.age_seconds >= 0 and p.overdue is False and p.names == first[1].names
    assert ISO.match(p.to_dict()["lease_deadline"]) and p.to_dict()["age_seconds"] >= 0


def test_release_under_the_eager_policy():
    study = cs.create_study(name="s", problem=cs.problem_spec(4), solver="lucb", solver_params={"K": 1})
    t1, t2 = study.ask(n=2)
    study.release(t1)
    assert [p.id for p in study.pending()] == [t2.id]
    assert study.tell(t1, 1.0) == "running"  # a released ticket's score is still accepted if it comes


def test_a_release_is_in_the_history_with_who_and_when():
    """Who handed a ticket back, whose it was and when: the study's history (the owner's
    release of another's ticket, an assistant's own)."""
    study = cs.create_study(name="s", problem=cs.problem_spec(4, labels=["ann", "bo", "cy", "di"]), solver="lucb",
                            solver_params={"K": 1})
    for who in ("Sol", "Mia"):
        study.add_assistant(who)
    t1 = study.ask(assistant="Sol")
    t2 = study.ask(assistant="Mia")
    study.release(t1)
    study.release(t2, assistant="Mia")
    rel = [h for h in study.summary()["history"] if h["event"] == "released"]
    assert [(h["ticket"], h["asked_by"], h["by"]) for h in rel] == [(t1.id, "Sol", None), (t2.id, "Mia", "Mia")]
    assert all(ISO.match(h["at"]) for h in rel)
    assert [e["text"] for e in study.events()] == [
        f"The owner released ticket #{t1.id} ({t1.names}), asked by Sol, without a score after 0 evaluations.",
        f"Mia handed back ticket #{t2.id} ({t2.names}) without a score after 0 evaluations."]


def test_release_from_the_cli(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    run(capsys, "study", "create", db, "--name", "s", "--n-arms", "3", "--solver", "lucb", "--param", "K=1")
    code, doc, _ = run(capsys, "study", "ask", db, "--name", "s")
    tid = doc["tickets"][0]["id"]
    code, doc, _ = run(capsys, "study", "release", db, "--name", "s", "--ticket", str(tid))
    assert code == 0 and doc == {"status": "running", "released": tid}
    code, _, err = run(capsys, "study", "release", db, "--name", "s", "--ticket", str(tid))
    assert code == 2 and "is released" in err


# ----------------------------------------------------------------------------- corrections
def same_state(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same_state(a[k], b[k])
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same_state(x, y)
    else:
        assert a == b


def eager_reference(study):
    """The exploration fed the told log with the corrections applied, by hand."""
    rec = study.storage.get_study(study.name)
    fixed = {}
    with study.storage.read(study.name) as rx:
        for c in rx.corrections():
            fixed[c.told_seq] = c.reward_sum
    exp = study.solver.start(study.problem, rng=np.random.default_rng(rec.seed))
    exp.ask()
    told = sorted((r for r in study.storage.tickets(study.name) if r.state == "told"), key=lambda r: r.told_seq)
    for r in told:
        v = fixed.get(r.told_seq, r.reward_sum)
        if v is not None and not exp.done:
            exp.tell(r.arm, v, r.count)
            if not exp.done:
                exp.ask()
    return exp


def test_a_correction_is_a_record_and_every_process_replays_it(storage):
    study = cs.create_study(storage=storage, name="s", problem=cs.problem_spec(4), solver="lucb",
                            solver_params={"K": 1, "delta": 0.01}, snapshot_every=5, seed=2)
    rng = np.random.default_rng(0)
    told = []
    for _ in range(12):
        t = study.ask()
        study.tell(t, float(rng.integers(0, 2)))
        told.append(t)
    watcher = cs.load_study(storage=storage, name="s")
    watcher.exploration_state()  # another process with a cached state (and snapshots at 5 and 10)
    target = told[2]
    row = {r.id: r for r in study.storage.tickets("s")}[target.id]
    new = 1.0 - row.reward_sum
    assert study.correct(target, new, reason="typed the wrong digit") == "running"
    after = {r.id: r for r in study.storage.tickets("s")}[target.id]
    assert after.reward_sum == row.reward_sum and after.checksum == row.checksum  # the told row is never edited
    with study.storage.read("s") as rx:
        (c,) = rx.corrections()
    assert (c.ticket_id, c.told_seq, c.reward_sum, c.reason, c.assistant) == \
        (target.id, row.told_seq, new, "typed the wrong digit", None)
    ref = eager_reference(study)
    with _no_warning():
        for s in (study, watcher, cs.load_study(storage=storage, name="s")):
            same_state(s.exploration_state().exp.state_dict(), ref.state_dict())
    # the void of another row: dropped under the eager policy
    study.correct(told[7], None, reason="the session was interrupted")
    same_state(watcher.exploration_state().exp.state_dict(), eager_reference(study).state_dict())
    assert watcher.exploration_state().exp.samples == 11
    df = study.trials_dataframe().set_index("id")
    assert df.loc[target.id, "corrected"] and df.loc[target.id, "reward_sum_corrected"] == new
    assert (df.loc[target.id, "correction_reason"], df.loc[target.id, "corrected_by"]) == ("typed the wrong digit", None)
    assert df.loc[target.id, "corrected_at"].endswith("Z")
    assert df.loc[told[0].id, "correction_reason"] is None or np.isnan(df.loc[told[0].id, "correction_reason"])
    assert df.loc[told[7].id, "reward_sum_corrected"] is None or np.isnan(df.loc[told[7].id, "reward_sum_corrected"])
    assert study.summary()["corrections"] == 2


class _no_warning:
    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("error", combex.exceptions.CombexWarning)  # no damaged-snapshot fallback

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_a_voided_batch_entry_is_handed_out_again():
    study = batch_lab_study(name="s", seed=4)
    rng = np.random.default_rng(1)
    first = study.ask(n=15)
    scores = {t.id: score(t, rng) for t in first}
    study.tell_many([(t, scores[t.id]) for t in first])
    nxt = study.ask()
    assert nxt.batch == 1
    study.correct(first[5], None, reason="wrong team sat the session")
    again = study.ask()  # the voided slot first
    assert (again.batch, again.entry, again.arm) == (0, 5, first[5].arm)
    rest = study.ask(n=cs.MAX_ASK)  # the rest of batch 1, then nothing: batch 0 waits for its slot
    assert all(t.batch == 1 for t in rest) and study.ask() is None
    redo = score(again, rng)
    study.tell(again, redo)
    # the state: batch 0 with the redone score, then batch 1 as handed out
    exp = study.solver.start(study.problem, rng=np.random.default_rng(4))
    b0 = exp.ask()
    sums = [scores[t.id] for t in first]
    sums[5] = redo
    exp.tell_batch(b0, sums)
    exp.ask()
    same_state(study.exploration_state().exp.state_dict(), exp.state_dict())
    assert study.exploration_state().exp.samples == 15


def _run_lucb_to_the_stop(study, rng):
    told = []
    while True:
        try:
            t = study.ask()
        except cs.StudyFinishedError:
            return told
        told.append(t)
        if study.tell(t, float(rng.binomial(1, [0.9, 0.2, 0.1][t.arm]))) != "running":
            return told


def test_a_correction_after_the_stop_keeps_it_when_it_still_holds(tmp_path):
    study = cs.create_study(storage=str(tmp_path / "s.db"), name="s", problem=cs.problem_spec(3), solver="lucb",
                            solver_params={"K": 1, "delta": 0.1})
    told = _run_lucb_to_the_stop(study, np.random.default_rng(0))
    rec = study.storage.get_study("s")
    assert rec.status == "identified"
    row = {r.id: r for r in study.storage.tickets("s")}[told[0].id]
    assert study.correct(told[0], row.reward_sum, reason="re-entered from the paper sheet") == "identified"
    res = study.storage.get_study("s").result
    (note,) = res["corrected_after_stop"]
    assert note["ticket"] == told[0].id and note["answer_before"] == note["answer_after"] == [0]
    assert note["reason"] == "re-entered from the paper sheet" and ISO.match(note["at"])
    assert res["stopped_at"] == rec.result["stopped_at"]
    assert [h["event"] for h in study.summary()["history"]] == ["stopped", "corrected_after_stop"]


def test_a_correction_after_the_stop_reopens_the_study_when_it_no_longer_holds(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    study = cs.create_study(storage=db, name="s", problem=cs.problem_spec(3), solver="lucb",
                            solver_params={"K": 1, "delta": 0.1})
    rng = np.random.default_rng(0)
    told = _run_lucb_to_the_stop(study, rng)
    n = len(told)
    # voiding the evaluation that completed the stop: the rule did not hold before it
    code, doc, _ = run(capsys, "study", "correct", db, "--name", "s", "--ticket", str(told[-1].id), "--void",
                       "--reason", "scored twice by mistake")
    assert code == 0 and doc["status"] == "running"
    rec = study.storage.get_study("s")
    assert rec.status == "running" and rec.result is None
    event = rec.history[-1]
    assert event["event"] == "reopened" and event["previous_status"] == "identified"
    assert event["previous_answer"] == [0] and event["reason"] == "scored twice by mistake"
    more = _run_lucb_to_the_stop(study, rng)  # the study goes on and stops again
    assert more and study.status == "identified" and study.storage.get_study("s").n_told == n + len(more)


def test_correction_errors_write_nothing(tmp_path, capsys):
    study = cs.create_study(name="s", problem=cs.problem_spec(3), solver="lucb", solver_params={"K": 1})
    t1, t2 = study.ask(n=2)
    study.tell(t1, 1.0)
    before = (study.storage.tickets("s"), study.storage.get_study("s"))
    with pytest.raises(cs.TicketError, match="pending, not told"):
        study.correct(t2, 1.0, reason="x")
    with pytest.raises(cs.TicketError, match="no ticket 999"):
        study.correct(999, 1.0, reason="x")
    with pytest.raises(cs.TicketError, match=r"in \[0, 1\]"):
        study.correct(t1, 2.0, reason="x")
    with pytest.raises(cs.TicketError, match="integer"):
        study.correct(t1, 0.5, reason="x")
    for reason in ("", "   ", None, 3):
        with pytest.raises(combex.InvalidParameterError, match="'reason'"):
            study.correct(t1, 0.0, reason=reason)
    assert (study.storage.tickets("s"), study.storage.get_study("s")) == before
    db = str(tmp_path / "c.db")
    run(capsys, "study", "create", db, "--name", "s", "--n-arms", "3", "--solver", "lucb", "--param", "K=1")
    code, _, err = run(capsys, "study", "correct", db, "--name", "s", "--ticket", "1", "--reason", "x")
    assert code == 2 and "--void" in err
