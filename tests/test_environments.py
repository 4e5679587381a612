"""Tests of the simulated environments and of the data location helpers.

The statistical tests use fixed seeds, so they are deterministic; tolerances are 5
standard errors (CLT) and KS p-values > 0.001.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import combex.oracles
from combex.environments import (
    BernoulliArms,
    Environment,
    FullBandit,
    GaussianArms,
    LinearBandit,
    NoiseModel,
)
from combex.datasets import data_dir, dataset_path
from combex.exceptions import DataNotFoundError, InvalidParameterError
from combex.oracles import DecisionClass


# --------------------------------------------------------------------------- TopK stand-in
class _StandInTopK(DecisionClass):
    """Local stand-in for combex.oracles.TopK (used only if the real one is absent)."""

    name = "topk"

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k

    def argmax(self, weights):
        m = np.zeros(self.n, dtype=bool)
        m[np.argsort(-np.asarray(weights, dtype=float), kind="stable")[: self.k]] = True
        return m

    def params(self):
        return {"n": self.n, "k": self.k}


@pytest.fixture(autouse=True)
def _topk_available(monkeypatch):
    if not hasattr(combex.oracles, "TopK"):
        monkeypatch.setattr(combex.oracles, "TopK", _StandInTopK, raising=False)


# --------------------------------------------------------------------------- helpers
def _mask(n, members):
    m = np.zeros(n, dtype=bool)
    m[list(members)] = True
    return m


def _repeat_arm(env, arm, n):
    if env.arm_type == "index":
        return np.full(n, arm, dtype=np.int64)
    return np.repeat(np.asarray(arm, dtype=bool)[None, :], n, axis=0)


def _ks_p(a, b):
    """KS p-value, rounding away float round-off so equal atoms of discrete laws tie."""
    return stats.ks_2samp(np.round(a, 9), np.round(b, 9)).pvalue


def _check_moments(sample, mean, var, label=""):
    """Sample mean and variance within 5 standard errors of the theory."""
    n = len(sample)
    m = sample.mean()
    assert abs(m - mean) <= 5 * np.sqrt(var / n) + 1e-9 * max(1.0, abs(mean)), (label, m, mean)
    s2 = sample.var(ddof=1)
    m4 = np.mean((sample - m) ** 4)
    se_var = np.sqrt(max(m4 - s2**2, 0.0) / n) + 1e-12
    assert abs(s2 - var) <= 5 * se_var, (label, s2, var, se_var)


# Each case: (name, factory(rng), arm, count, theoretical mean of one reward, variance of one reward)
def _cases():
    mu = np.array([0.3, -1.2, 2.0])
    sig = np.array([0.5, 2.0, 1.0])
    p = np.array([0.1, 0.5, 0.97, 0.0])
    theta = np.array([0.5, -0.3, 0.8, 0.1, 0.0])
    M = _mask(5, [0, 2, 3])
    pb = np.array([0.2, 0.9, 0.5, 0.05, 0.7])
    X = np.array([[0.6, 0.2], [-0.5, 0.4], [0.1, 0.1]])
    th = np.array([0.9, 0.5])
    xm = X @ th
    return [
        ("gauss-scalar", lambda r: GaussianArms(mu, sigma=1.5, rng=r), 1, 7, mu[1], 1.5**2),
        ("gauss-perarm", lambda r: GaussianArms(mu, sigma=sig, rng=r), 1, 7, mu[1], sig[1] ** 2),
        ("bern-0.1", lambda r: BernoulliArms(p, rng=r), 0, 13, p[0], p[0] * (1 - p[0])),
        ("bern-0.97", lambda r: BernoulliArms(p, rng=r), 2, 4, p[2], p[2] * (1 - p[2])),
        ("full-gauss", lambda r: FullBandit(theta, k=3, sigma=0.7, rng=r), M, 6, theta[M].sum(), 3 * 0.49),
        ("full-rade", lambda r: FullBandit(theta, k=3, noise="rademacher", sigma=0.5, rng=r), M, 3,
         theta[M].sum(), 3 * 0.25),
        ("full-bern", lambda r: FullBandit(pb, k=2, noise="bernoulli", rng=r), _mask(5, [0, 1, 4]), 5,
         pb[[0, 1, 4]].sum(), float((pb * (1 - pb))[[0, 1, 4]].sum())),
        ("lin-gauss", lambda r: LinearBandit(X, th, sigma=0.3, rng=r), 1, 9, xm[1], 0.09),
        ("lin-pm1", lambda r: LinearBandit(X, th, noise="pm1", rng=r), 0, 5, xm[0], 1 - xm[0] ** 2),
    ]


CASES = _cases()
IDS = [c[0] for c in CASES]


# --------------------------------------------------------------------------- the law of batched sums
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_batched_sum_moments(case):
    _, make, arm, c, mu1, var1 = case
    env = make(123)
    n = 4000
    sums = env.pull_many(_repeat_arm(env, arm, n), np.full(n, c))
    _check_moments(sums, c * mu1, c * var1, case[0])
    # the same law through pull() one call at a time
    env2 = make(321)
    sums2 = np.array([env2.pull(arm, c)[0] for _ in range(600)])
    _check_moments(sums2, c * mu1, c * var1, case[0] + "/pull")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_batched_sum_matches_sum_of_single_pulls_ks(case):
    _, make, arm, c, _, _ = case
    env = make(7)
    n = 2000
    batched = env.pull_many(_repeat_arm(env, arm, n), np.full(n, c))
    singles = env.pull_many(_repeat_arm(env, arm, n * c), np.ones(n * c, dtype=np.int64))
    summed = singles.reshape(n, c).sum(axis=1)
    assert _ks_p(batched, summed) > 0.001


@pytest.mark.parametrize("case", CASES[:1] + CASES[4:7] + CASES[-1:], ids=IDS[:1] + IDS[4:7] + IDS[-1:])
def test_batched_sum_matches_one_at_a_time_pull_calls(case):
    """Reference = sums of genuinely separate pull(arm, 1) calls."""
    _, make, arm, c, _, _ = case
    env = make(11)
    ref = np.array([sum(env.pull(arm, 1)[0] for _ in range(c)) for _ in range(500)])
    batched = np.array([env.pull(arm, c)[0] for _ in range(500)])
    assert _ks_p(batched, ref) > 0.001


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pull_many_equals_independent_pulls(case):
    """pull_many over a mix of arms and counts has, per entry, the law of pull()."""
    _, make, arm, c, mu1, var1 = case
    env = make(5)
    other = 0 if env.arm_type == "index" else np.ones(env.n_arms, dtype=bool)
    n = 1500
    arms = [arm, other] * n
    arms = np.array(arms) if env.arm_type == "index" else np.array(arms, dtype=bool)
    counts = np.tile([c, 2], n)
    out = env.pull_many(arms, counts)
    first = out[0::2]
    ref = np.array([env.pull(arm, c)[0] for _ in range(n)])
    assert _ks_p(first, ref) > 0.001
    second = out[1::2]
    ref2 = np.array([env.pull(other, 2)[0] for _ in range(n)])
    assert _ks_p(second, ref2) > 0.001
    # entries are independent of each other
    assert abs(np.corrcoef(first, second)[0, 1]) < 5 / np.sqrt(n)


def test_gaussian_full_bandit_variance_scales_with_team_size():
    """Var = c |M| sigma^2 (not c sigma^2, not c^2 ...): two masks of different sizes."""
    theta = np.zeros(8)
    env = FullBandit(theta, k=2, sigma=2.0, rng=3)
    for size, c in [(1, 3), (8, 5)]:
        s = env.pull_many(_repeat_arm(env, _mask(8, range(size)), 5000), np.full(5000, c))
        _check_moments(s, 0.0, c * size * 4.0)


# --------------------------------------------------------------------------- large and zero counts
@pytest.mark.parametrize(
    "make, arm",
    [
        (lambda: GaussianArms([0.25, 1.0], rng=0), 0),
        (lambda: BernoulliArms([0.25, 1.0], rng=0), 0),
        (lambda: FullBandit([0.25, 0.5, 0.25], k=1, rng=0), _mask(3, [0, 2])),
        (lambda: FullBandit([0.25, 0.5, 0.25], k=1, noise="rademacher", rng=0), _mask(3, [0, 2])),
        (lambda: FullBandit([0.25, 0.5, 0.25], k=1, noise="bernoulli", rng=0), _mask(3, [0, 2])),
        (lambda: LinearBandit([[0.5]], [0.5], noise="pm1", rng=0), 0),
        (lambda: LinearBandit([[0.5]], [0.5], rng=0), 0),
    ],
)
def test_huge_and_zero_counts(make, arm):
    env = make()
    mean = env.value(arm)
    for c in [10**9, np.int64(10**12), 2**40]:
        s, cnt = env.pull(arm, c)
        assert cnt == int(c)
        # the average is within a few 1/sqrt(c) of the mean (sd of one reward <= 1 here)
        assert abs(s / int(c) - mean) < 10 / np.sqrt(int(c)) * 2
    assert env.pull(arm, 0) == (0.0, 0)
    out = env.pull_many(_repeat_arm(env, arm, 3), np.array([0, 10**9, 0], dtype=np.int64))
    assert out[0] == 0 and out[2] == 0


def test_bernoulli_huge_count_is_an_exact_integer():
    env = BernoulliArms([0.3], rng=1)
    s, _ = env.pull(0, 10**12)
    assert s == int(s) and 0 <= s <= 10**12


def test_rademacher_overflow_is_an_error():
    env = FullBandit(np.zeros(4), k=2, noise="rademacher", rng=0)
    with pytest.raises(InvalidParameterError, match="int64"):
        env.pull(np.ones(4, dtype=bool), 2**62)


@settings(max_examples=40, deadline=None)
@given(
    members=st.lists(st.booleans(), min_size=6, max_size=6),
    count=st.integers(0, 10**6),
    seed=st.integers(0, 2**32 - 1),
)
def test_support_of_discrete_full_bandit_sums(members, count, seed):
    pb = np.array([0.2, 0.9, 0.5, 0.05, 0.7, 1.0])
    m = np.array(members, dtype=bool)
    size = int(m.sum())
    s, _ = FullBandit(pb, k=2, noise="bernoulli", rng=seed).pull(m, count)
    assert s == int(s) and 0 <= s <= count * size
    if m[5]:  # an arm with p = 1 always pays
        assert s >= count
    theta = np.array([0.5, -0.25, 0.75, 0.0, 1.0, 2.0])
    r, _ = FullBandit(theta, k=2, noise="rademacher", sigma=0.5, rng=seed).pull(m, count)
    signs = (r - count * theta[m].sum()) / 0.5  # (#plus - #minus) among count*|M| signs
    assert abs(signs - round(signs)) < 1e-6 * max(1, count)
    k = round(signs)
    assert abs(k) <= count * size and (k - count * size) % 2 == 0


# --------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_seed_same_draws_and_reset(case):
    _, make, arm, c, _, _ = case
    arms = _repeat_arm(make(0), arm, 50)
    counts = np.arange(50)
    a = make(42).pull_many(arms, counts)
    b = make(42).pull_many(arms, counts)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, make(43).pull_many(arms, counts))
    env = make(42)
    env.pull_many(arms, counts)
    assert env.reset(42) is env
    np.testing.assert_array_equal(env.pull_many(arms, counts), a)
    child = env.spawn(42)
    np.testing.assert_array_equal(child.pull_many(arms, counts), a)
    np.testing.assert_array_equal(child.means(), env.means())


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_params_json_and_repr(case):
    env = case[1](0)
    text = json.dumps(env.params())
    assert json.loads(text) == env.params()
    assert repr(env).startswith(type(env).__name__ + "(")


def test_means_are_copies():
    env = GaussianArms([1.0, 2.0])
    env.means()[0] = 99
    assert env.means()[0] == 1.0


# --------------------------------------------------------------------------- noise models and problems
def test_noise_models():
    assert GaussianArms([0, 1], sigma=[0.5, 2.0]).noise == NoiseModel("gaussian", 2.0, None)
    assert BernoulliArms([0.2]).noise == NoiseModel("bernoulli", 0.5, 1.0)
    assert FullBandit([0, 1], k=1).noise == NoiseModel("gaussian", 1.0, None)
    assert FullBandit([0, 1], k=1, noise="rademacher", sigma=0.3).noise == NoiseModel("rademacher", 0.3, 0.3)
    assert FullBandit([0, 1], k=1, noise="bernoulli").noise == NoiseModel("bernoulli", 0.5, 1.0)
    assert LinearBandit([[1.0]], [0.5]).noise == NoiseModel("gaussian", 1.0, None)
    assert LinearBandit([[1.0]], [0.5], noise="pm1").noise == NoiseModel("pm1", 1.0, 2.0)
    assert all(env.noise.independent for env in [GaussianArms([0]), FullBandit([0, 1], k=1)])


def test_full_bandit_problem_best_and_gap():
    theta = np.array([0.1, 0.9, 0.5, 0.7, -0.2])
    env = FullBandit(theta, k=2, rng=0)
    prob = env.problem
    assert prob.arm_type == "mask" and prob.n_arms == 5 and prob.features is None
    assert prob.decision_class is env.decision_class and prob.decision_class.n == 5
    np.testing.assert_array_equal(env.best(), _mask(5, [1, 3]))
    assert env.value(_mask(5, [0, 2])) == pytest.approx(0.6)
    assert env.gap(_mask(5, [1, 2])) == pytest.approx(0.2)
    assert env.is_correct(_mask(5, [1, 3])) and not env.is_correct(_mask(5, [1, 2]))
    assert env.is_correct(_mask(5, [1, 2]), epsilon=0.25)
    # any decision class may be plugged in
    dc = _StandInTopK(5, 3)
    env2 = FullBandit(theta, decision_class=dc)
    assert env2.decision_class is dc
    np.testing.assert_array_equal(env2.best(), _mask(5, [1, 2, 3]))
    assert json.dumps(env2.params())
    # no decision class: best() refuses
    with pytest.raises(InvalidParameterError, match="decision class"):
        FullBandit(theta).best()


def test_linear_bandit_features_and_means():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])
    env = LinearBandit(X, [0.2, 0.5], rng=0)
    np.testing.assert_allclose(env.means(), [0.2, 0.5, 0.42])
    np.testing.assert_array_equal(env.problem.features, X)
    assert env.problem.arm_type == "index" and env.problem.n_arms == 3
    assert env.best() == 1 and env.gap(0) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        env.features[0, 0] = 5.0  # read-only
    X[0, 0] = 7.0  # the environment holds its own copy
    assert env.features[0, 0] == 1.0
    np.testing.assert_array_equal(env.theta, [0.2, 0.5])


def test_linear_pm1_rewards_are_plus_minus_one():
    env = LinearBandit([[1.0], [-1.0], [0.0]], [1.0], noise="pm1", rng=0)
    out = env.pull_many(np.array([0, 1, 2, 2, 2]), np.array([5, 5, 1, 1, 1]))
    assert out[0] == 5 and out[1] == -5  # P(+1) = 1 and 0
    assert set(out[2:]).issubset({-1.0, 1.0})


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: GaussianArms([]), "'means' parameter of GaussianArms"),
        (lambda: GaussianArms([[1.0, 2.0]]), "1-d array"),
        (lambda: GaussianArms([1.0, np.nan]), "finite"),
        (lambda: GaussianArms(["a"]), "'means'"),
        (lambda: GaussianArms([1.0], sigma=0.0), "'sigma' parameter of GaussianArms"),
        (lambda: GaussianArms([1.0, 2.0], sigma=[1.0]), r"shape \(2,\)"),
        (lambda: GaussianArms([1.0, 2.0], sigma=[1.0, -1.0]), "sigma"),
        (lambda: BernoulliArms([0.5, 1.2]), r"range \[0, 1\]. Got 1.2 at index 1"),
        (lambda: FullBandit([0.5, 0.2], noise="laplace"), "'noise' parameter of FullBandit"),
        (lambda: FullBandit([0.5, 0.2], noise="bernoulli", sigma=1.0), "sigma"),
        (lambda: FullBandit([0.5, 2.0], noise="bernoulli"), r"\[0, 1\]"),
        (lambda: FullBandit([0.5, 0.2], sigma=-1.0), "sigma"),
        (lambda: FullBandit([0.5, 0.2], k=3), r"'k' parameter of FullBandit must be an int in the range \[1, 2\]"),
        (lambda: FullBandit([0.5, 0.2], k=1, decision_class=_StandInTopK(2, 1)), "not both"),
        (lambda: FullBandit([0.5, 0.2], decision_class=_StandInTopK(3, 1)), "decision_class"),
        (lambda: FullBandit([0.5, 0.2], decision_class="topk"), "decision_class"),
        (lambda: LinearBandit([1.0, 2.0], [1.0]), "2-d"),
        (lambda: LinearBandit([[1.0, 2.0]], [1.0]), r"'theta' parameter of LinearBandit must be a real array of shape \(2,\)"),
        (lambda: LinearBandit(np.zeros((0, 2)), [1.0, 1.0]), "at least one row"),
        (lambda: LinearBandit([[1.0, 1.0]], [0.6, 0.6], noise="pm1"), r"\|x\^T theta\| <= 1.*arm 0"),
        (lambda: LinearBandit([[1.0]], [0.6], noise="pm1", sigma=2.0), "sigma"),
        (lambda: LinearBandit([[1.0]], [0.6], noise="bern"), "noise"),
        (lambda: GaussianArms([1.0], rng="seed"), "rng"),
    ],
)
def test_constructor_errors(make, match):
    with pytest.raises(InvalidParameterError, match=match):
        make()


def test_index_arm_errors():
    env = GaussianArms([0.0, 1.0, 2.0], rng=0)
    with pytest.raises(InvalidParameterError, match=r"'arm' parameter of GaussianArms must be an int in the range \[0, 2\]"):
        env.pull(3)
    with pytest.raises(InvalidParameterError, match="'arm'"):
        env.pull(-1)
    with pytest.raises(InvalidParameterError, match="'arm'"):
        env.pull_many([0, 5], [1, 1])
    with pytest.raises(InvalidParameterError, match="'arms'"):
        env.pull_many([0.5, 1.0], [1, 1])
    with pytest.raises(InvalidParameterError, match="'count'"):
        env.pull(0, -1)
    with pytest.raises(InvalidParameterError, match="'count'"):
        env.pull(0, 1.5)
    with pytest.raises(InvalidParameterError, match="'counts'"):
        env.pull_many([0, 1], [1])
    with pytest.raises(InvalidParameterError, match="'counts'"):
        env.pull_many([0, 1], [1, -2])
    with pytest.raises(InvalidParameterError, match="'counts'"):
        env.pull_many([0, 1], [1.0, 2.0])


def test_mask_arm_errors():
    env = FullBandit([0.0, 1.0, 2.0], k=1, rng=0)
    with pytest.raises(InvalidParameterError, match=r"shape \(m, 3\)"):
        env.pull(np.ones(4, dtype=bool))
    with pytest.raises(InvalidParameterError, match=r"shape \(m, 3\)"):
        env.pull_many(np.ones(3, dtype=bool), [1])
    with pytest.raises(InvalidParameterError, match="0/1"):
        env.pull([0, 2, 1])
    assert env.pull([1, 0, 1], 1)[1] == 1  # 0/1 ints accepted
    with pytest.raises(InvalidParameterError, match=r"shape \(m, 3\)"):
        env.pull(1)  # an index is not a mask
    with pytest.raises(InvalidParameterError, match="'counts'"):
        env.pull_many(np.ones((2, 3), dtype=bool), [1, 1, 1])


def test_empty_pull_many():
    assert GaussianArms([0.0]).pull_many(np.zeros(0, dtype=int), np.zeros(0, dtype=int)).shape == (0,)
    for noise in ["gaussian", "rademacher", "bernoulli"]:
        env = FullBandit([0.5, 0.5], k=1, noise=noise)
        assert env.pull_many(np.zeros((0, 2), dtype=bool), np.zeros(0, dtype=int)).shape == (0,)
    # the empty super-arm pays 0
    assert FullBandit([0.5, 0.5], k=1).pull(np.zeros(2, dtype=bool), 10) == (0.0, 10)


# --------------------------------------------------------------------------- data location
def test_data_dir_explicit_and_env(tmp_path, monkeypatch):
    assert data_dir(tmp_path) == tmp_path.resolve()
    monkeypatch.setenv("COMBEX_DATA", str(tmp_path))
    assert data_dir() == tmp_path.resolve()
    (tmp_path / "thing").mkdir()
    assert dataset_path("thing") == (tmp_path / "thing").resolve()


def test_data_not_found_when_combex_data_is_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("COMBEX_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="COMBEX_DATA") as info:
        dataset_path("crowd-li2017-quiz")
    assert str(tmp_path / "crowd-li2017-quiz") in str(info.value)
    assert isinstance(info.value, FileNotFoundError)


def test_data_not_found_messages(tmp_path, monkeypatch):
    missing = tmp_path / "nope"
    with pytest.raises(DataNotFoundError, match="COMBEX_DATA") as info:
        data_dir(missing)
    assert str(missing) in str(info.value)
    monkeypatch.setenv("COMBEX_DATA", str(missing))
    with pytest.raises(DataNotFoundError, match="environment variable"):
        data_dir()
    # no default location: an unset COMBEX_DATA is named as such
    monkeypatch.delenv("COMBEX_DATA")
    with pytest.raises(DataNotFoundError, match="COMBEX_DATA environment variable, which is not set"):
        data_dir()
    with pytest.raises(DataNotFoundError, match="crowd-li2017-quiz"):
        dataset_path("crowd-li2017-quiz")


# --------------------------------------------------------------------------- performance
def test_full_bandit_pull_many_is_fast():
    rng = np.random.default_rng(0)
    n = 111
    env = FullBandit(rng.uniform(-1, 1, n), k=10, rng=1)
    masks = rng.random((1000, n)) < 0.1
    counts = rng.integers(10**6, 2 * 10**6, 1000)
    best = np.inf
    for _ in range(5):
        t = time.perf_counter()
        env.pull_many(masks, counts)
        best = min(best, time.perf_counter() - t)
    assert best < 0.02


def test_environment_is_abstract():
    with pytest.raises(TypeError):
        Environment()  # type: ignore[abstract]


@pytest.mark.parametrize("build", ["kuroki", "topk", "crowd"])
def test_instance_rng_seeds_the_noise(build):
    # Regression test: a named instance's rng seeds its noise too (same seed, same draws).
    from combex.environments import crowd, kuroki_synthetic, topk_gaussian

    make = {
        "kuroki": lambda s: kuroki_synthetic(6, 2, 0.5, rng=s),
        "topk": lambda s: topk_gaussian((1.0, 0.8, 0.6, 0.4, 0.2, 0.0), k=2, rng=s),
        "crowd": lambda s: crowd(k=3, rng=s),
    }[build]
    a, b, c = make(7), make(7), make(8)
    mask = np.zeros(a.n_arms, dtype=bool)
    mask[:3 if build == "crowd" else 2] = True
    draws = [[e.pull(mask, 1)[0] for _ in range(20)] for e in (a, b, c)]
    assert draws[0] == draws[1]
    assert draws[0] != draws[2]
