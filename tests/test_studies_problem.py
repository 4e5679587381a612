"""Problem specs of live studies: the lab's vocabulary (workers, team size, score range,
noise scale), Gaussian and unknown-noise studies, from Python and from ``combex study create``."""

from __future__ import annotations

import json

import pytest

import combex
import combex.studies as cs
from combex.cli import main
from combex.studies._problem import reward_bounds

pytest.importorskip("sqlalchemy")

WORKERS = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
TOP_TWO = {"delta": 0.1, "epsilon": 5}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip() else None), err


def test_team_study_spec():
    spec = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100))
    assert spec["n_arms"] == 12 and spec["arm_type"] == "mask" and spec["labels"] == WORKERS
    assert spec["decision_class"] == {"name": "topk", "params": {"n": 12, "k": 4}}
    assert spec["noise"] == {"kind": "gaussian", "sigma": None, "bound": None, "independent": True,
                             "level": "observation"}
    assert spec["score_range"] == [0.0, 100.0] and spec["reward_range"] == [0.0, 25.0]
    known = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100), noise_scale=10.0)
    assert known["noise"]["sigma"] == 10.0 and known["noise"]["level"] == "observation"
    problem = cs._problem.build_problem(spec)
    assert problem.noise.sigma is None and problem.noise.level == "observation"
    assert problem.decision_class.k == 4 and problem.info["labels"] == WORKERS


def test_old_positional_form_is_unchanged():
    assert cs.problem_spec(3, noise="bernoulli") == {
        "n_arms": 3, "arm_type": "index",
        "noise": {"kind": "bernoulli", "sigma": 0.5, "bound": 0.5, "independent": True, "level": "arm"},
        "reward_range": [0.0, 1.0], "decision_class": None, "labels": None}
    assert cs.problem_spec(3) == cs.problem_spec(3, noise="bernoulli")


def test_a_tell_of_count_c_lies_in_c_times_the_score_range():
    spec = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100))
    assert reward_bounds(spec, [0, 1, 2, 3], 1) == (0.0, 100.0)
    assert reward_bounds(spec, [0, 1, 2, 3], 3) == (0.0, 300.0)
    study = cs.create_study(name="lab", problem=cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100),
                                                                noise_scale=10.0),
                            solver="top-two", solver_params=TOP_TWO)
    t = study.ask()
    assert len(t.arm) == 4 and t.count == 1
    with pytest.raises(cs.TicketError, match=r"in \[0, 100\].*score range.*Got 100.5 instead"):
        study.tell(t, 100.5)
    with pytest.raises(cs.TicketError, match="Got -0.5 instead"):
        study.tell(t, -0.5)
    assert study.tell(t, 100.0) == "running"


def test_gaussian_studies_are_created_from_the_api():
    """The spec problem_spec writes for a Gaussian study ([None, None] reward range) is
    accepted by create_study."""
    for noise in ("gaussian", {"kind": "gaussian", "sigma": 2.0}):
        spec = cs.problem_spec(3, noise=noise, noise_scale=2.0 if noise == "gaussian" else None)
        assert spec["reward_range"] == [None, None] and spec["noise"]["sigma"] == 2.0
        study = cs.create_study(name="g", problem=spec, solver="lucb", solver_params={"K": 1})
        t = study.ask()
        assert study.tell(t, -123.25) == "running"  # any finite reward


def test_unknown_noise_studies_are_created():
    spec = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100))
    # a solver told the scale runs on the unknown-noise problem; the spec keeps it unknown
    study = cs.create_study(name="u", problem=spec, solver="icb", solver_params={"delta": 0.1, "sigma": 10.0})
    assert study.storage.get_study("u").problem["noise"]["sigma"] is None
    assert len(study.ask().arm) == 4
    # the GLR solvers estimate the scale: the lab's study as it is meant to run
    lab = cs.create_study(name="t", problem=spec, solver="top-two", solver_params=TOP_TWO)
    t = lab.ask()
    assert len(t.arm) == 4 and lab.tell(t, 61.5) == "running"
    # a solver that needs a known scale refuses the problem for that reason, never the spec
    with pytest.raises(combex.InvalidParameterError, match="noise scale|sigma") as info:
        cs.create_study(name="w", problem=spec, solver="icb", solver_params={"delta": 0.1})
    assert "reward_range" not in str(info.value)
    spec3 = cs.problem_spec(3, noise="gaussian")
    assert spec3["noise"]["sigma"] is None
    cs.create_study(name="v", problem=spec3, solver="lucb", solver_params={"K": 1, "sigma": 1.0})


@pytest.mark.parametrize("noise", ["gausian", {"kind": "gausian", "sigma": 1.0}, "Gaussian"])
def test_an_unknown_noise_kind_is_an_error_naming_it(noise):
    bad = noise if isinstance(noise, str) else noise["kind"]
    with pytest.raises(combex.InvalidParameterError, match=f"'noise'.*noise kinds.*Got '{bad}' instead"):
        cs.problem_spec(3, noise=noise)


@pytest.mark.parametrize("kwargs, name", [
    ({"workers": WORKERS}, "team_size"),
    ({"workers": WORKERS, "team_size": 12}, "team_size"),
    ({"workers": WORKERS, "team_size": 4, "noise_scale": -1.0}, "noise_scale"),
    ({"workers": WORKERS[:3] + ["Ana"], "team_size": 2}, "workers"),
    ({"workers": WORKERS[:3] + ["Ana "], "team_size": 2}, "workers"),
    ({"workers": "Ana,Ben", "team_size": 1}, "workers"),
    ({"workers": WORKERS, "team_size": 4, "score_range": (100, 0)}, "score_range"),
    ({"workers": WORKERS, "team_size": 4, "score_range": ("a", "b")}, "score_range"),
    ({"n_arms": 3, "team_size": 2}, "team_size"),
    ({"n_arms": 3, "noise": "bernoulli", "noise_scale": 2.0}, "noise_scale"),
    ({"n_arms": 3, "labels": ["a", "b", " c"]}, "labels"),
    ({"n_arms": 3, "labels": ["a", "b", "c" * 256]}, "labels"),
    ({"n_arms": 3, "noise": "bounded"}, "noise"),
])
def test_bad_problem_specs(kwargs, name):
    with pytest.raises(combex.InvalidParameterError, match=f"'{name}'"):
        cs.problem_spec(**kwargs)


def test_team_study_from_the_cli(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    code, doc, err = run(capsys, "study", "create", db, "--name", "lab", "--workers", ",".join(WORKERS),
                         "--team-size", "4", "--score-range", "0,100", "--noise-scale", "10", "--solver", "top-two",
                         "--param", "delta=0.1", "--param", "epsilon=5")
    assert code == 0, err
    spec = cs.load_study(storage=db, name="lab").storage.get_study("lab").problem
    assert spec == cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100), noise_scale=10.0)
    code, doc, _ = run(capsys, "study", "ask", db, "--name", "lab")
    t = doc["tickets"][0]
    code, doc, err = run(capsys, "study", "tell", db, "--name", "lab", "--result", f"{t['id']}=101")
    assert code == 2 and "in [0, 100]" in err
    code, doc, err = run(capsys, "study", "tell", db, "--name", "lab", "--result", f"{t['id']}=64.5")
    assert code == 0 and doc["status"] == "running"


def test_gaussian_and_unknown_noise_studies_from_the_cli(tmp_path, capsys):
    db = str(tmp_path / "lab.db")
    code, _, err = run(capsys, "study", "create", db, "--name", "g", "--n-arms", "3", "--noise", "gaussian",
                       "--sigma", "2", "--solver", "lucb", "--param", "K=1")
    assert code == 0, err
    code, _, err = run(capsys, "study", "create", db, "--name", "u", "--workers", ",".join(WORKERS),
                       "--team-size", "4", "--score-range", "0,100", "--solver", "icb", "--param", "delta=0.1",
                       "--param", "sigma=10")
    assert code == 0, err
    assert cs.load_study(storage=db, name="u").storage.get_study("u").problem["noise"]["sigma"] is None
    code, _, err = run(capsys, "study", "create", db, "--name", "lab", "--workers", ",".join(WORKERS),
                       "--team-size", "4", "--score-range", "0,100", "--solver", "top-two", "--param", "delta=0.1",
                       "--param", "epsilon=5", "--budget", "140")
    assert code == 0, err
    code, _, err = run(capsys, "study", "create", db, "--name", "x", "--n-arms", "3", "--noise", "gausian",
                       "--solver", "lucb", "--param", "K=1")
    assert code == 2 and "'gausian'" in err and "noise kinds" in err
    code, _, err = run(capsys, "study", "create", db, "--name", "x", "--workers", "a,b,c", "--solver", "lucb")
    assert code == 2 and "--team-size" in err
    code, _, err = run(capsys, "study", "create", db, "--name", "x", "--workers", "a,b,c", "--team-size", "2",
                       "--score-range", "a,b", "--solver", "icb")
    assert code == 2 and "--score-range" in err
    assert cs.get_all_study_names(db) == ["g", "lab", "u"]
