"""``combex study ...`` (JSON); the web app's tests (``combex dashboard``) are in tests/test_web.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import combex.studies as cs
from combex.cli import main

pytest.importorskip("sqlalchemy")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip() else None), err


def test_study_commands_end_to_end(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    code, doc, _ = run(capsys, "study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb",
                       "--param", "K=1", "--param", "delta=0.1", "--labels", "a,b,c", "--seed", "1")
    assert code == 0 and doc["name"] == "q" and doc["status"] == "running" and doc["policy"] == "eager"
    code, doc, err = run(capsys, "study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb",
                         "--param", "K=2")
    assert code == 2 and "already exists" in err
    code, doc, _ = run(capsys, "study", "list", db)
    assert [d["name"] for d in doc] == ["q"]
    means = [0.95, 0.1, 0.05]
    import numpy as np

    rng = np.random.default_rng(0)
    told = 0
    while True:
        code, doc, _ = run(capsys, "study", "ask", db, "--name", "q", "--n", "2")
        assert code == 0
        if doc["status"] != "running":
            assert doc["best"]["answer"] == [0] and doc["best"]["labels"] == ["a"]
            break
        results = [f"{t['id']}={rng.binomial(t['count'], means[t['arm']])}" for t in doc["tickets"]]
        code, doc, _ = run(capsys, "study", "tell", db, "--name", "q", *sum((["--result", r] for r in results), []))
        assert code == 0, doc
        told += len(results)
        if doc["status"] != "running":
            break
    code, doc, _ = run(capsys, "study", "status", db, "--name", "q")
    assert doc["status"] == "identified" and doc["best"]["answer"] == [0] and doc["evaluations"] == told
    # the stopped study's result names its answer beside the indices, as best does
    assert (doc["result"]["leader"], doc["result"]["leader_names"]) == ([0], ["a"]) == tuple(
        doc["best"]["leader"].values())
    assert (doc["result"]["answer"], doc["result"]["answer_labels"]) == ([0], ["a"])
    assert main(["study", "status", db, "--name", "q", "--text"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == f"q: identified, {told} evaluations told, 0 tickets out (lucb)."
    assert text[2] == "Noise of one evaluation: sd 0.5, declared."  # Bernoulli answers: at most 1/2
    assert text[-3].startswith(f"After {told} evaluations the study identified")
    assert text[-2:] == ["History:", f"  {doc['result']['stopped_at'][:16].replace('T', ' ')} UTC  The stopping rule "
                                     f"held after {told} evaluations: the study identified a."]
    code, doc, err = run(capsys, "study", "tell", db, "--name", "q", "--ticket", "1", "--reward-sum", "1")
    assert code == 2 and "identified" in err
    code, doc, _ = run(capsys, "study", "export", db, "--name", "q", "--out", str(tmp_path / "t.csv"))
    assert doc["rows"] >= told and (tmp_path / "t.csv").exists()
    import pandas as pd

    csv = pd.read_csv(tmp_path / "t.csv")
    told_rows = csv[csv["state"] == "told"]
    assert sorted(told_rows["told_seq"].astype(int)) == list(range(1, told + 1))  # integers, not 1.0
    assert told_rows["arm"].astype(str).str.fullmatch(r"\d+").all()  # index arms: the arm itself
    code, doc, _ = run(capsys, "study", "correct", db, "--name", "q", "--ticket", "1", "--void", "--reason",
                       "the quiz was not given as asked")
    assert code == 0 and cs.load_study(storage=db, name="q").summary()["voided"] == 1
    df = cs.load_study(storage=db, name="q").trials_dataframe()
    assert df.loc[df["id"] == 1, "voided"].item() and df["voided"].sum() == 1
    assert main(["study", "status", db, "--name", "q", "--text"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(
        f"q: {doc['best']['status'].replace('_', ' ')}, {told} evaluations told (1 voided: counted against the budget, "
        f"not in the statistics), 0 tickets out")
    code, doc, err = run(capsys, "study", "status", db, "--name", "nope")
    assert code == 2 and "No study named 'nope'" in err
    code, doc, _ = run(capsys, "study", "delete", db, "--name", "q")
    assert cs.get_all_study_names(db) == []


def test_a_backup_copies_a_running_study_with_its_newest_scores(tmp_path, capsys):
    """`combex study backup` copies an SQLite storage while its study runs (the writes in its
    write-ahead log included): the copy opens with every told score and ticket out; an
    existing output file is refused, not overwritten."""
    db = str(tmp_path / "lab.db")
    problem = cs.problem_spec(workers=[f"w{i}" for i in range(8)], team_size=3, score_range=(0, 100))
    study = cs.create_study(storage=db, name="lab", problem=problem, solver="top-two",
                            solver_params={"delta": 0.1}, budget=200)
    for k in range(30):
        t = study.ask()
        study.tell(t.id, float(40 + k % 7))
    held = study.ask()
    code, doc, _ = run(capsys, "study", "backup", db, "--out", str(tmp_path / "copy.db"))
    assert code == 0 and doc == {"backup": str(tmp_path / "copy.db"), "studies": ["lab"]}
    copy = cs.load_study(storage=str(tmp_path / "copy.db"), name="lab")
    assert copy.summary()["evaluations"] == 30 and [t.id for t in copy.pending()] == [held.id]
    scores = [st.trials_dataframe()["reward_sum"].dropna().tolist() for st in (copy, study)]
    assert scores[0] == scores[1]
    code, doc, err = run(capsys, "study", "backup", db, "--out", str(tmp_path / "copy.db"))
    assert code == 2 and "must be a new file" in err and "copy.db exists" in err


def test_tell_errors_from_the_cli(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    run(capsys, "study", "create", db, "--name", "q", "--n-arms", "3", "--solver", "lucb", "--param", "K=1")
    code, doc, _ = run(capsys, "study", "ask", db, "--name", "q")
    tid = doc["tickets"][0]["id"]
    code, _, err = run(capsys, "study", "tell", db, "--name", "q", "--ticket", str(tid), "--reward-sum", "5")
    assert code == 2 and "reward_sum" in err
    code, _, err = run(capsys, "study", "tell", db, "--name", "q", "--ticket", "77", "--reward-sum", "1")
    assert code == 2 and "no ticket 77" in err
    assert cs.load_study(storage=db, name="q").summary()["evaluations"] == 0


@pytest.mark.slow
def test_lab_study_example(tmp_path):
    """examples/lab_study.py: workers killed with SIGKILL midway, restarted, identified team."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "lab_study.py"
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "lab.db")], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    assert "killed 4 workers" in out.stdout and "identified after" in out.stdout
    lines = out.stdout.splitlines()
    team = [l for l in lines if l.startswith("identified team:")][0].split(":", 1)[1]
    top = [l for l in lines if l.startswith("top-5 accuracy")][0].split(":", 1)[1].split("accuracies")[0]
    assert team.strip() == top.strip()
