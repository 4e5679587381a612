"""Tests of the crowdsourcing environment (Li, Baba & Kashima 2017 quiz data).

Tests on the real data skip when the data are absent; the synthetic fallback and the
loader (on small hand-written files) are always tested.
"""

from __future__ import annotations

import csv
import json
import time

import numpy as np
import pytest
from scipy import stats

import combex.oracles
from combex.environments import CROWD_DATASETS, CrowdData, CrowdQuiz, NoiseModel, load_crowd_quiz
from combex.exceptions import CombexError, DataNotFoundError, InvalidParameterError
from combex.oracles import DecisionClass


class _StandInTopK(DecisionClass):
    """Local stand-in for combex.oracles.TopK (used only if the real one is absent)."""

    name = "topk"

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k

    def argmax(self, weights):
        m = np.zeros(self.n, dtype=bool)
        m[np.argsort(-np.asarray(weights, dtype=float), kind="stable")[: self.k]] = True
        return m


@pytest.fixture(autouse=True)
def _topk_available(monkeypatch):
    if not hasattr(combex.oracles, "TopK"):
        monkeypatch.setattr(combex.oracles, "TopK", _StandInTopK, raising=False)


def _packaged_quiz():
    from importlib import resources

    return resources.files("combex.datasets").joinpath("data", "li2017_quiz")


def needs_data(f):  # the quiz data are shipped in the package: always present
    return f


def _csv_accuracies(name):
    """Independent recomputation: per-worker accuracy from answer.csv and truth.csv."""
    folder = _packaged_quiz() / name
    with (folder / "truth.csv").open(encoding="utf-8") as fh:
        truth = {r["question_id"]: r["truth"] for r in csv.DictReader(fh)}
    with (folder / "answer.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    workers = [w for w in rows[0] if w != "question_id"]
    acc = [sum(r[w] == truth[r["question_id"]] for r in rows) / len(rows) for w in workers]
    return len(rows), workers, np.array(acc)


def _mask(n, members):
    m = np.zeros(n, dtype=bool)
    m[list(members)] = True
    return m


# --------------------------------------------------------------------------- Table 1 of the paper
TABLE1 = [
    ("ITMANAGE", 25, 36, 0.54, 0.84),
    ("MEDICINE", 36, 45, 0.48, 0.92),
    ("CHINESE", 24, 50, 0.37, 0.79),
    ("POKEMON", 20, 55, 0.28, 1.00),
    ("ENGLISH", 30, 63, 0.26, 0.70),
    ("SCIENCE", 20, 111, 0.29, 0.85),
]


@needs_data
@pytest.mark.parametrize("name, n_tasks, n_workers, average, best", TABLE1)
def test_table1_of_the_full_bandit_paper(name, n_tasks, n_workers, average, best):
    data = load_crowd_quiz(name)
    assert data.correct.shape == (n_tasks, n_workers)
    assert data.n_questions == n_tasks and data.n_workers == n_workers
    assert round(float(data.accuracies.mean()), 2) == average
    assert round(float(data.accuracies.max()), 2) == best


@needs_data
@pytest.mark.parametrize("name", CROWD_DATASETS)
def test_means_equal_accuracies_recomputed_from_csv(name):
    q, workers, acc = _csv_accuracies(name)
    env = CrowdQuiz(name, rng=0)
    np.testing.assert_allclose(env.means(), acc, rtol=0, atol=1e-15)
    assert env.data.worker_ids == tuple(workers)
    assert env.n_arms == len(workers) and env.data.n_questions == q
    np.testing.assert_allclose(env.data.correct.mean(axis=0), acc)


@needs_data
@pytest.mark.parametrize("alias", ["IT", "it", " itmanage ", "ITMANAGE"])
def test_names_are_case_insensitive_with_alias(alias):
    assert load_crowd_quiz(alias).name == "ITMANAGE"
    assert CrowdQuiz("pokémon", k=3).dataset == "POKEMON"


def test_unknown_dataset_lists_valid_names():
    with pytest.raises(InvalidParameterError, match="'dataset' parameter of CrowdQuiz") as info:
        load_crowd_quiz("BIOLOGY")
    for name in CROWD_DATASETS:
        assert name in str(info.value)
    with pytest.raises(InvalidParameterError, match="dataset"):
        CrowdQuiz(3)


# --------------------------------------------------------------------------- the team reward law
@needs_data
def test_single_pull_law_is_the_team_score_of_a_uniform_question():
    env = CrowdQuiz("SCIENCE", k=10, rng=2024)
    team = env.best()
    assert team.sum() == 10
    scores = env.data.correct[:, team].sum(axis=1)  # score of the team on each question
    n = 20000
    out = env.pull_many(np.repeat(team[None, :], n, axis=0), np.ones(n, dtype=np.int64))
    assert np.all(out == np.round(out)) and out.min() >= 0 and out.max() <= 10
    # expectation: the sum of the members' accuracies
    mean = env.means()[team].sum()
    assert mean == pytest.approx(scores.mean())
    assert abs(out.mean() - mean) < 5 * scores.std() / np.sqrt(n)
    # exact law: chi-square of the observed values against the per-question scores
    values, expected = np.unique(scores, return_counts=True)
    observed = np.array([(out == v).sum() for v in values])
    assert observed.sum() == n  # no value outside the support
    assert stats.chisquare(observed, expected / expected.sum() * n).pvalue > 0.001


def _team_law(env, team):
    scores = env.data.correct[:, team].sum(axis=1).astype(float)
    return scores.mean(), scores.var()


@pytest.fixture(params=["data", "synthetic"])
def quiz(request):
    if request.param == "data":
        return lambda rng: CrowdQuiz("MEDICINE", k=5, rng=rng)
    return lambda rng: CrowdQuiz.synthetic(k=5, rng=rng)


def test_batched_sum_moments_and_ks(quiz):
    env = quiz(99)
    team = _mask(env.n_arms, [0, 3, 4, 10, 20])
    mu1, var1 = _team_law(env, team)
    c, n = 7, 3000
    batched = env.pull_many(np.repeat(team[None, :], n, axis=0), np.full(n, c))
    assert abs(batched.mean() - c * mu1) < 5 * np.sqrt(c * var1 / n)
    s2 = batched.var(ddof=1)
    se = np.sqrt(np.mean((batched - batched.mean()) ** 4) - s2**2) / np.sqrt(n)
    assert abs(s2 - c * var1) < 5 * se
    singles = env.pull_many(np.repeat(team[None, :], n * c, axis=0), np.ones(n * c, dtype=np.int64))
    assert stats.ks_2samp(batched, singles.reshape(n, c).sum(axis=1)).pvalue > 0.001
    ones = np.array([sum(env.pull(team, 1)[0] for _ in range(c)) for _ in range(400)])
    assert stats.ks_2samp(batched, ones).pvalue > 0.001


def test_teams_in_one_call_are_independent(quiz):
    """One multinomial per team: two copies of a team in one call are independent."""
    env = quiz(5)
    team = _mask(env.n_arms, range(5))
    n = 3000
    arms = np.repeat(team[None, :], 2 * n, axis=0)
    out = env.pull_many(arms, np.full(2 * n, 3)).reshape(n, 2)
    assert abs(np.corrcoef(out[:, 0], out[:, 1])[0, 1]) < 5 / np.sqrt(n)


def test_member_scores_are_correlated_on_data_like_tables():
    """Full-bandit feedback of a pair {a, b} has Var = Var_a + Var_b + 2 Cov_ab (same
    question), not the independent-noise variance."""
    correct = np.array([[1, 1], [1, 1], [0, 0], [0, 0]], dtype=bool)  # perfectly correlated
    env = CrowdQuiz(CrowdData.from_correct(correct), k=1, rng=0)
    out = env.pull_many(np.ones((4000, 2), dtype=bool), np.ones(4000, dtype=np.int64))
    assert set(np.unique(out)) == {0.0, 2.0}
    assert env.noise == NoiseModel("data", 0.5, 1.0, independent=False)


def test_huge_counts_and_zero():
    env = CrowdQuiz.synthetic(rng=1)
    team = env.best()
    mean = env.value(team)
    for c in [10**9, np.int64(10**12)]:
        s, cnt = env.pull(team, c)
        assert cnt == int(c) and s == int(s)
        assert abs(s / int(c) - mean) < 50 / np.sqrt(int(c))
    assert env.pull(team, 0) == (0.0, 0)
    assert env.pull_many(np.zeros((0, env.n_arms), dtype=bool), np.zeros(0, dtype=int)).shape == (0,)


# --------------------------------------------------------------------------- problem, best, reproducibility
@needs_data
def test_problem_and_best_team():
    env = CrowdQuiz("ITMANAGE", rng=0)
    assert env.k == 10 and env.decision_class.n == 36 and env.decision_class.k == 10
    prob = env.problem
    assert prob.arm_type == "mask" and prob.n_arms == 36 and not prob.noise.independent
    best = env.best()
    acc = env.means()
    assert best.sum() == 10 and acc[best].min() >= acc[~best].max()
    assert env.gap(best) == 0.0
    assert json.loads(json.dumps(env.params())) == {"dataset": "ITMANAGE", "k": 10}
    assert repr(env) == "CrowdQuiz(dataset='ITMANAGE', k=10)"


def test_reproducible_and_reset(quiz):
    team = np.zeros((30, quiz(0).n_arms), dtype=bool)
    team[:, :5] = True
    counts = np.arange(30)
    a = quiz(8).pull_many(team, counts)
    np.testing.assert_array_equal(a, quiz(8).pull_many(team, counts))
    assert not np.array_equal(a, quiz(9).pull_many(team, counts))
    env = quiz(8)
    env.pull_many(team, counts)
    np.testing.assert_array_equal(env.reset(8).pull_many(team, counts), a)
    np.testing.assert_array_equal(env.spawn(8).pull_many(team, counts), a)


def test_k_and_mask_errors():
    with pytest.raises(InvalidParameterError, match=r"'k' parameter of CrowdQuiz must be an int in the range \[1, 36\]"):
        CrowdQuiz.synthetic(k=37)
    env = CrowdQuiz.synthetic(k=3)
    with pytest.raises(InvalidParameterError, match=r"shape \(m, 36\)"):
        env.pull(np.ones(35, dtype=bool))
    with pytest.raises(InvalidParameterError, match="0/1"):
        env.pull(np.full(36, 2))
    with pytest.raises(InvalidParameterError, match="'n_workers'"):
        CrowdQuiz.synthetic(n_workers=0)
    with pytest.raises(InvalidParameterError, match="'seed'"):
        CrowdQuiz.synthetic(seed=-1)


# --------------------------------------------------------------------------- synthetic fallback
def test_synthetic_fallback():
    env = CrowdQuiz.synthetic(rng=0)
    assert env.data.correct.shape == (25, 36) and env.dataset == "synthetic"
    np.testing.assert_array_equal(env.means(), env.data.correct.mean(axis=0))
    # the table depends on seed only, not on the noise generator
    np.testing.assert_array_equal(CrowdQuiz.synthetic(rng=5).data.correct, env.data.correct)
    assert not np.array_equal(CrowdQuiz.synthetic(seed=1).data.correct, env.data.correct)
    assert 0.2 < env.means().mean() < 0.8 and env.means().std() > 0.05
    assert json.loads(json.dumps(env.params())) == {
        "dataset": "synthetic", "n_workers": 36, "n_questions": 25, "seed": 0, "k": 10
    }
    small = CrowdQuiz.synthetic(5, 4, k=2)
    assert small.data.correct.shape == (4, 5)


def test_crowd_data_from_correct():
    d = CrowdData.from_correct([[1, 0, 1], [1, 1, 0]], name="toy")
    np.testing.assert_allclose(d.accuracies, [1.0, 0.5, 0.5])
    assert d.worker_ids == ("worker1", "worker2", "worker3") and d.question_ids == ("1", "2")
    with pytest.raises(ValueError):
        d.correct[0, 0] = False
    with pytest.raises(InvalidParameterError, match="2-d"):
        CrowdData.from_correct([1, 0])
    with pytest.raises(InvalidParameterError, match="0/1"):
        CrowdData.from_correct([[1, 2]])
    with pytest.raises(InvalidParameterError, match="ids"):
        CrowdData.from_correct([[1, 0]], worker_ids=["a"])


# --------------------------------------------------------------------------- loader on hand-written files
def _write(root, name, answer, truth):
    folder = root / "crowd-li2017-quiz" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answer.csv").write_text(answer, encoding="utf-8")
    (folder / "truth.csv").write_text(truth, encoding="utf-8")


def test_loader_joins_on_question_id(tmp_path):
    _write(
        tmp_path,
        "ITMANAGE",
        "question_id,worker1,worker2,worker3\n1,A,B,A\n2,C,C,D\n7,B,B,B\n",
        "question_id,truth\n7,A\n1,A\n2,D\n",  # other order
    )
    d = load_crowd_quiz("it", data_dir=tmp_path)
    np.testing.assert_array_equal(d.correct, [[1, 0, 1], [0, 0, 1], [0, 0, 0]])
    assert d.question_ids == ("1", "2", "7") and d.worker_ids == ("worker1", "worker2", "worker3")
    np.testing.assert_allclose(d.accuracies, [1 / 3, 0, 2 / 3])
    env = CrowdQuiz("IT", k=1, data_dir=tmp_path, rng=0)
    np.testing.assert_array_equal(env.best(), [False, False, True])


@pytest.mark.parametrize(
    "answer, truth, match",
    [
        ("question_id,w1,w2\n1,A\n", "question_id,truth\n1,A\n", "cells"),
        ("question_id,w1,w2\n1,A,\n", "question_id,truth\n1,A\n", "blank"),
        ("question_id,w1,w2\n1,A,B\n2,A,B\n", "question_id,truth\n1,A\n", "no truth"),
        ("question_id,w1,w2\n1,A,B\n", "id,answer\n1,A\n", "header"),
        ("question_id,w1\n", "question_id,truth\n1,A\n", "header"),
    ],
)
def test_malformed_files(tmp_path, answer, truth, match):
    _write(tmp_path, "SCIENCE", answer, truth)
    with pytest.raises(CombexError, match=match):
        load_crowd_quiz("SCIENCE", data_dir=tmp_path)


def test_packaged_data_need_no_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("COMBEX_DATA", str(tmp_path / "absent"))  # a fresh machine
    assert CrowdQuiz("IT").data.correct.shape == (25, 36)


def test_missing_files_and_folders(tmp_path, monkeypatch):
    with pytest.raises(DataNotFoundError, match="crowd-li2017-quiz") as info:
        CrowdQuiz("IT", data_dir=tmp_path)  # a data root of one's own without the quiz
    assert str(tmp_path) in str(info.value)
    (tmp_path / "crowd-li2017-quiz" / "ENGLISH").mkdir(parents=True)
    with pytest.raises(DataNotFoundError, match="answer.csv"):
        load_crowd_quiz("english", data_dir=tmp_path)


# --------------------------------------------------------------------------- performance
@needs_data
def test_science_pull_many_over_100_teams_is_fast():
    env = CrowdQuiz("SCIENCE", rng=0)
    rng = np.random.default_rng(0)
    teams = np.zeros((100, env.n_arms), dtype=bool)
    rows = np.repeat(np.arange(100), 10)
    cols = np.argsort(rng.random((100, env.n_arms)), axis=1)[:, :10].ravel()
    teams[rows, cols] = True
    counts = np.full(100, 10**6)
    best = np.inf
    for _ in range(5):
        t = time.perf_counter()
        env.pull_many(teams, counts)
        best = min(best, time.perf_counter() - t)
    assert best < 0.01
