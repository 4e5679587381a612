"""The forecast of a running study: its own exploration continued under truths drawn
around the told scores' estimates (``Study.forecast``, ``combex study forecast``)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import combex.studies as cs
from combex.exceptions import InvalidParameterError, StateError, StudyFinishedError

WORKERS = ["Ana", "Ben", "Cam", "Dev", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kim", "Lea"]
QUALITIES = np.array([20.0, 19, 18, 17, 15, 14, 13, 12, 11, 10, 9, 8])


def lab(storage=None, *, told=0, seed=0, budget=None, noise_scale=None, sd=10.0, qualities=QUALITIES, name="lab"):
    spec = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100), noise_scale=noise_scale)
    study = cs.create_study(storage=storage, name=name, problem=spec, solver="top-two",
                            solver_params={"delta": 0.1, "epsilon": 5.0}, budget=budget, seed=seed)
    play(study, told, np.random.default_rng([seed, 1]), sd=sd, qualities=qualities)
    return study


def play(study, n, gen, *, sd=10.0, qualities=QUALITIES):
    for _ in range(n):
        if study.status != "running":
            return
        t = study.ask()
        if t is None:
            return
        study.tell(t, float(np.clip(round(qualities[t.arm].sum() + gen.normal(0, sd), 1), 0, 100)))


def test_a_forecast_leaves_the_study_unchanged_and_repeats_with_its_seed():
    study = lab(told=120, budget=400)
    before = (study.summary(), study.best(), study.exploration_state().exp.state_dict()["samples"])
    f = study.forecast(runs=6, rng=3)
    assert (study.summary(), study.best(), study.exploration_state().exp.state_dict()["samples"]) == before
    assert f.to_dict() | {"seconds": 0} == study.forecast(runs=6, rng=3).to_dict() | {"seconds": 0}
    assert f.more != study.forecast(runs=6, rng=4).more
    assert (f.runs, f.evaluations, f.budget) == (6, 120, 400)
    assert f.leader == study.best()["leader"]["names"]
    assert f.noise["kind"] == "gaussian" and f.noise["dof"] == 120 - 12 and 7 < f.noise["s"] < 13


def test_a_forecast_continues_the_studys_own_exploration():
    """Near its stop, a study needs few more evaluations: a forecast that started the
    exploration afresh would need about as many as were told."""
    study = lab(told=0)
    gen = np.random.default_rng(5)
    while study.status == "running":
        play(study, 10, gen)
        b = study.best()
        if b["statistic"] and b["statistic"] > 0.8 * b["threshold"]:
            break
    assert study.status == "running"
    told = study.summary()["evaluations"]
    f = study.forecast(runs=10, rng=0)
    assert f.quantile(0.5) < told / 3, (f.more, told)


def test_the_forecast_in_words_says_what_it_counts():
    study = lab(told=150, budget=300)
    f = study.forecast(runs=8, rng=1)
    s = f.summary()
    text = str(f)
    assert text.startswith("Forecast for study 'lab' after 150 evaluations, budget 300: 8 simulated continuations")
    assert f"Certified within the budget (150 evaluations more): {s['certified_by_budget']} of 8" in text
    assert f"median {s['median_more']:,.0f}, 4 in 5 by {s['p80_more']:,.0f}" in text
    assert f"A budget of about {s['budget_for_80']:,} evaluations certifies in 4 of 5 continuations; a single " \
        "forecast can be off either way" in text
    assert "The leader now (" in text and f"in {s['leader_good']} of 8 draws" in text
    assert text.endswith("carries the study's error guarantee (delta 0.1).")
    assert s["budget_for_80"] == 150 + s["p80_more"]
    assert s["certified_by_budget"] == sum(m is not None and m <= 150 for m in f.more)
    more = sorted(m for m in f.more if m is not None)
    assert s["median_more"] == more[3] and s["p80_more"] == more[int(np.ceil(0.8 * 8)) - 1]


def test_a_forecast_needs_the_first_round_told_and_a_running_study():
    with pytest.raises(StateError, match="needs told scores: none is told yet"):
        lab(told=0, name="new").forecast()
    study = lab(told=2)
    with pytest.raises(StateError, match="determine every worker's contribution first"):
        study.forecast()
    easy = lab(told=0, qualities=np.array([40.0] * 4 + [5.0] * 8), sd=2.0, name="easy")
    play(easy, 400, np.random.default_rng(0), sd=2.0, qualities=np.array([40.0] * 4 + [5.0] * 8))
    assert easy.status == "identified"
    with pytest.raises(StudyFinishedError, match="nothing left to forecast"):
        easy.forecast()


@pytest.mark.parametrize("kwargs, name", [({"runs": 0}, "runs"), ({"runs": 2.5}, "runs"), ({"more": 0}, "more"),
                                          ({"rng": -1}, "rng"), ({"rng": "x"}, "rng"), ({"rng": True}, "rng")])
def test_bad_forecast_arguments_are_named(kwargs, name):
    study = lab(told=30)
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        study.forecast(**kwargs)


def test_a_study_stopped_at_its_budget_is_forecast_as_continued():
    study = lab(told=100, budget=100)
    assert study.status == "budget_exhausted"
    f = study.forecast(runs=4, more=3000)
    assert f.budget is None and f.summary()["certified_by_budget"] is None and f.horizon == 3000
    assert "Certified within the budget" not in str(f) and "once the budget is used" not in str(f)
    assert any(m is not None for m in f.more)
    assert "as if the budget were raised" in str(f)


def test_a_declared_noise_level_is_not_drawn():
    study = lab(told=60, noise_scale=10.0)
    f = study.forecast(runs=3)
    assert f.noise == {"kind": "gaussian", "sigma": 10.0}
    assert "noise sd 10, declared" in str(f)


def test_bernoulli_answers_are_forecast_and_other_kinds_are_refused():
    spec = cs.problem_spec(5, noise="bernoulli")
    study = cs.create_study(storage=None, name="quiz", problem=spec, solver="top-two",
                            solver_params={"delta": 0.1})
    p = np.array([0.8, 0.6, 0.5, 0.4, 0.3])
    gen = np.random.default_rng(2)
    for _ in range(80):
        t = study.ask()
        study.tell(t, float(gen.random() < p[t.arm]))
    f = study.forecast(runs=5)
    assert f.noise == {"kind": "bernoulli"} and "Bernoulli answers" in str(f) and f.leader == "0"
    rad = cs.create_study(storage=None, name="pm", problem=cs.problem_spec(3, noise="rademacher"),
                          solver="top-two", solver_params={"delta": 0.1})
    for _ in range(12):
        rad.tell(rad.ask(), 1.0)
    with pytest.raises(StateError, match="noise kind is 'rademacher'"):
        rad.forecast()


def test_the_forecast_command_prints_json_and_words(tmp_path):
    db = tmp_path / "lab.db"
    lab(str(db), told=80, budget=300)

    def run(*extra):
        res = subprocess.run([sys.executable, "-m", "combex", "study", "forecast", str(db), "--name", "lab",
                              "--runs", "4", *extra], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        return res.stdout

    doc = json.loads(run())
    assert doc["runs"] == 4 and doc["evaluations"] == 80 and len(doc["per_run"]["more"]) == 4
    assert doc["certified"] == sum(m is not None for m in doc["per_run"]["more"])
    assert doc["leader_good"] == sum(doc["per_run"]["leader_good"])
    assert doc == json.loads(run()) | {"seconds": doc["seconds"]}
    words = run("--text")
    assert words.startswith("Forecast for study 'lab' after 80 evaluations, budget 300: 4 simulated continuations")
    res = subprocess.run([sys.executable, "-m", "combex", "study", "forecast", str(db), "--name", "lab", "--runs", "0"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "'runs'" in res.stderr
