"""Full-bandit solvers (Kuroki et al.): SAQM, SA-FOA, ICB, Exhaustive."""

from __future__ import annotations

import math

import numpy as np
import pytest

from combex.environments import FullBandit, NoiseModel, Problem
from combex.environments import kuroki_synthetic, kuroki_synthetic_means
from combex.exceptions import InvalidParameterError, StateError
from combex.oracles import PartitionMatroid, TopK
from combex.solvers import get_solver
from combex.solvers.full_bandit import ICB, SAFOA, SAQM, Exhaustive, team_sigma

ALL = [SAQM, SAFOA, ICB, Exhaustive]


def easy_env(seed=0, n=6, k=3, gap=0.5, sigma=1.0):
    env = kuroki_synthetic(n=n, k=k, gap=gap, sigma=sigma, rng=seed)
    return env.reset(seed + 100)


# ----------------------------------------------------------------------------- instance
def test_kuroki_instance_has_the_stated_gap():
    for seed in range(20):
        mu = kuroki_synthetic_means(10, 5, 0.3, rng=seed)
        s = np.sort(mu)[::-1]
        assert s[4] - s[5] == pytest.approx(0.3)
        assert np.all(s[:5] <= 1) and np.all(s[:5] >= 0) and np.all(s[6:] >= -1)


def test_registry_names():
    assert get_solver("saqm") is SAQM and get_solver("sa-foa") is SAFOA
    assert get_solver("icb") is ICB and get_solver("exhaustive") is Exhaustive
    with pytest.raises(InvalidParameterError, match="Did you mean 'saqm'"):
        get_solver("saqn")


# ----------------------------------------------------------------------------- correctness
@pytest.mark.parametrize("cls", ALL)
def test_finds_the_best_team_on_an_easy_instance(cls):
    for seed in range(3):
        env = easy_env(seed, sigma=0.5)
        res = cls(delta=0.05).run(env, rng=seed)
        assert res.status == "identified"
        assert np.array_equal(res.answer, env.best()), (cls.name, seed)
        assert res.samples == res.info["support_pulls"].sum()
        assert res.pulls.shape == (6,)


@pytest.mark.parametrize("cls", ALL)
def test_same_seed_same_result_and_budget(cls):
    a = cls(delta=0.1).run(easy_env(3, sigma=0.5), rng=5)
    b = cls(delta=0.1).run(easy_env(3, sigma=0.5), rng=5)
    assert a.samples == b.samples and np.array_equal(a.answer, b.answer)
    c = cls(delta=0.1).run(easy_env(3), rng=5, budget=50)
    assert c.status == "budget_exhausted" and c.samples == 50


@pytest.mark.parametrize("cls", [SAQM, ICB, Exhaustive])
def test_batched_with_zero_growth_equals_per_round(cls):
    for seed in range(2):
        r1 = cls(delta=0.1, batch_size=1).run(easy_env(seed, n=5, k=2, gap=0.8, sigma=0.2), rng=seed)
        r0 = cls(delta=0.1, growth=0.0).run(easy_env(seed, n=5, k=2, gap=0.8, sigma=0.2), rng=seed)
        assert r1.samples == r0.samples and r1.rounds == r0.rounds
        assert np.array_equal(r1.answer, r0.answer)


def test_geometric_schedule_overshoot_is_bounded():
    env = easy_env(1, n=5, k=2, gap=0.8, sigma=0.3)
    per_round = ICB(delta=0.1, batch_size=1).run(env.spawn(7), rng=1)
    batched = ICB(delta=0.1, growth=0.05).run(env.spawn(7), rng=1)
    assert batched.rounds < per_round.rounds
    assert 1.0 < batched.info["max_check_ratio"] <= 1.05 + 1.0 / 10


def test_icb_on_a_partition_matroid_and_exhaustive_agree():
    # 8 workers in 4 skills, at most one per skill, bases of rank 4.
    groups = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    dc = PartitionMatroid(groups, [1, 1, 1, 1], base=True)
    means = np.array([1.0, 0.0, 0.2, 1.2, 1.5, 0.3, 0.1, 0.9])
    env = FullBandit(means, decision_class=dc, noise="gaussian", sigma=0.5, rng=4)
    r_icb = ICB(delta=0.05).run(env, rng=1)
    r_ex = Exhaustive(delta=0.05).run(env.spawn(5), rng=1)
    best = dc.argmax(means)
    assert np.array_equal(r_icb.answer, best) and np.array_equal(r_ex.answer, best)
    with pytest.raises(InvalidParameterError, match="one size k"):
        SAQM().start(FullBandit(means, decision_class=PartitionMatroid(groups, [1, 1, 1, 1]), rng=0))


# ----------------------------------------------------------------------------- ask / tell
@pytest.mark.parametrize("cls", [SAQM, ICB, SAFOA])
def test_save_and_resume_gives_the_same_run(cls, tmp_path):
    solver = cls(delta=0.1)
    full = solver.run(easy_env(2), rng=9)
    env = easy_env(2)
    study = solver.start(env, rng=9)
    for _ in range(4):
        b = study.ask()
        study.tell_batch(b, env.pull_many(b.arms, b.counts))
    path = study.save(tmp_path / "study.json")
    resumed = cls(delta=0.1).load(path, env)
    while not resumed.done:
        b = resumed.ask()
        resumed.tell_batch(b, env.pull_many(b.arms, b.counts))
    r = resumed.result()
    assert r.samples == full.samples and np.array_equal(r.answer, full.answer)
    with pytest.raises(StateError):
        ICB(delta=0.2).load(path, env) if cls is ICB else SAQM(delta=0.3).load(path, env)


def test_ask_is_idempotent_and_tell_checks_arms():
    env = easy_env(0)
    study = ICB().start(env, rng=0)
    b1, b2 = study.ask(), study.ask()
    assert b1 is b2 and b1.total == len(b1)
    with pytest.raises(InvalidParameterError, match="reward_sums"):
        study.tell_batch(b1, [1.0])
    with pytest.raises(InvalidParameterError, match="finite"):
        study.tell_batch(b1, np.full(len(b1), np.nan))


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("cls", ALL)
def test_bad_settings(cls):
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        cls(delta=1.5)
    with pytest.raises(InvalidParameterError, match="'delta' parameter"):
        cls(delta=0.0)
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter"):
        cls(epsilon=-0.1)
    with pytest.raises(InvalidParameterError, match="'allocation' parameter"):
        cls(allocation="xy")


def test_noise_without_bound_is_refused():
    noise = NoiseModel("data", sigma=0.5, bound=None, independent=False)
    pb = Problem(n_arms=5, noise=noise, arm_type="mask", decision_class=TopK(5, 2))
    with pytest.raises(InvalidParameterError, match="no bound"):
        ICB().start(pb)
    ICB(sigma=2.0).start(pb)  # explicit sigma is accepted
    assert team_sigma(NoiseModel("bounded", sigma=1.0, bound=0.5), 4) == 2.0
    assert team_sigma(NoiseModel("gaussian", sigma=1.0), 4) == 2.0


def test_missing_decision_class_and_singular_support():
    pb = Problem(n_arms=4, noise=NoiseModel("gaussian", 1.0), arm_type="mask")
    with pytest.raises(InvalidParameterError, match="decision class"):
        ICB().start(pb)
    pb = Problem(n_arms=4, noise=NoiseModel("gaussian", 1.0), arm_type="mask", decision_class=TopK(4, 2))
    with pytest.raises(InvalidParameterError, match="span"):
        ICB(support=[[1, 1, 0, 0], [0, 0, 1, 1]]).start(pb)


def test_k_must_be_smaller_than_n():
    with pytest.raises(InvalidParameterError, match="'k' parameter"):
        kuroki_synthetic(n=5, k=5, gap=0.5)


# ----------------------------------------------------------------------------- statistics
@pytest.mark.slow
@pytest.mark.parametrize("cls", ALL)
def test_error_rate_at_most_delta_over_200_runs(cls):
    """Kuroki et al. instance (n=10, k=5, gap=0.5), delta = 0.05, G-allocation."""
    delta, runs, errors = 0.05, 200, 0
    solver = cls(delta=delta, growth=0.1)  # checks every +10% samples: same rule, fewer checks
    root = np.random.SeedSequence(2024)
    for child in root.spawn(runs):
        inst, noise, alg = (np.random.default_rng(s) for s in child.spawn(3))
        env = kuroki_synthetic(n=10, k=5, gap=0.5, rng=inst).reset(noise)
        res = solver.run(env, rng=alg)
        errors += not np.array_equal(res.answer, env.best())
    assert errors / runs <= delta


def test_batched_peeling_equals_one_call_per_graph():
    from combex.oracles._dks import GreedyPeeling
    from combex.oracles.quadratic import QuadraticMaximization

    rng = np.random.default_rng(3)
    n, k = 9, 4
    B = rng.standard_normal((n, n))
    A_inv = np.linalg.inv(B @ B.T + np.eye(n))
    theta = rng.standard_normal(n)
    chi = np.zeros(n, bool)
    chi[:k] = True
    G = A_inv - 2.0 * np.diag(A_inv @ chi)
    gammas = np.array([0.1, 0.5, 2.0, 7.0])
    got = SAFOA()._maximize_family(G, theta, gammas, k)
    qm = QuadraticMaximization("peeling", certify=False)
    want = np.array([qm.maximize(g * G + np.diag(theta), k)[0] for g in gammas])
    assert np.array_equal(got, want)
    Wts = np.abs(rng.standard_normal((5, n, n)))
    Wts = Wts + Wts.transpose(0, 2, 1)
    many = GreedyPeeling().solve_many(Wts, k)
    assert np.array_equal(many, np.array([GreedyPeeling().solve(W, k)[0] for W in Wts]))


@pytest.mark.parametrize("alpha,n,k,gap,seed", [
    ("certified", 8, 4, 1.0, 0), ("certified", 6, 3, 1.0, 1), ("certified", 8, 4, 0.5, 2),
    ("theorem1", 4, 2, 1.0, 0), ("theorem1", 6, 3, 1.0, 1),
])
def test_saqm_skipped_certificates_change_no_decision(alpha, n, k, gap, seed):
    """A check whose condition (4) already fails against the lower bound
    C_t ||chi_M_hat||_{A^-1} skips the quadratic maximization. Paired check by check with
    full_certificate=True: the same stopping time, answer and rounds, each skipped check's rhs
    below the full one, and the stopping check carries the full certificate."""
    runs = []
    for full in (False, True):
        env = kuroki_synthetic(n, k, gap, rng=seed)
        env.reset(seed + 1)
        exp = SAQM(growth=0.05, alpha=alpha, full_certificate=full).start(env, rng=seed + 2)
        certs = []
        while not exp.done and exp.samples < 10**7:
            b = exp.ask()
            exp.tell_batch(b, env.pull_many(b.arms, b.counts))
            certs.append(dict(exp.certificate))
        runs.append((exp, certs))
    (lazy, cl), (full, cf) = runs
    assert lazy.done and full.done
    assert lazy.samples == full.samples and lazy.rounds == full.rounds
    assert np.array_equal(lazy.answer, full.answer)
    skipped = 0
    for a, b in zip(cl, cf):
        assert a["lhs"] == b["lhs"] and not b["rhs_is_lower_bound"]
        if a["rhs_is_lower_bound"]:
            skipped += 1
            assert a["rhs"] <= b["rhs"] and a["lhs"] < a["rhs"] and math.isnan(a["Z_t"])
        else:
            assert a == b
    assert skipped > 0.5 * len(cl)
    assert not cl[-1]["rhs_is_lower_bound"] and cl[-1]["lhs"] >= cl[-1]["rhs"]


# ---------------------------------------------------------------------- subspaces, check schedules, ties, callbacks
def test_saqm_theorem1_refuses_a_subspace_class_at_start_and_certified_runs():
    # Regression test: alpha="theorem1" (Theorem 1's ratio needs a full-rank class) is
    # refused at start on a class confined to a subspace; the certified ratio runs there.
    from combex.exceptions import CombexError

    groups = np.array([0, 0, 1, 1, 2, 2])
    dc = PartitionMatroid(groups, [1, 1, 1], base=True)
    env = FullBandit([1.0, 0.0, 0.0, 1.0, 1.0, 0.0], decision_class=dc, sigma=0.3, rng=0)
    with pytest.raises(CombexError, match="'alpha' parameter.*subspace"):
        SAQM(alpha="theorem1").start(env.problem, rng=0)
    res = SAQM(alpha="certified", delta=0.1).run(env, rng=0, budget=10**6)
    assert res.status == "identified"
    np.testing.assert_array_equal(res.answer, env.best())


def test_geometric_schedule_ratio_is_measured_and_can_exceed_one_plus_growth():
    # Regression test: the check schedule's true bound is t_{j+1} <= max(t_j + 1,
    # (1 + g) t_j); "at most a factor 1 + g" does not hold while checks are one sample
    # apart, so the run reports the measured ratio.
    g = 0.01
    env = FullBandit([1.0, 0.9, 0.2, 0.1, 0.0], k=2, sigma=0.5, rng=3)
    res = ICB(delta=0.1, growth=g).run(env, rng=1, trace=True)
    t = np.asarray(res.trace["t"], dtype=float)
    assert t.size >= 3
    assert np.all(t[1:] <= np.maximum(t[:-1] + 1, np.floor((1 + g) * t[:-1])))
    ratios = t[1:] / t[:-1]
    assert res.info["max_check_ratio"] == pytest.approx(ratios.max())
    # early checks are one sample apart: the ratio is 1 + 1/t > 1 + g
    assert res.info["max_check_ratio"] > 1 + g
    assert "overshoot_factor" not in res.info


def test_epsilon0_on_tied_crowd_warns_reports_progress_and_indistinguishable():
    # Regression test: epsilon = 0 on tied workers cannot stop; the run warns
    # (TieWarning), reports its progress, and lists the teams the data cannot rule out.
    import warnings

    from combex.environments import crowd
    from combex.exceptions import TieWarning

    env = crowd(k=10, rng=0)
    m = np.sort(env.means())[::-1]
    assert m[9] == m[10]  # the 10th and 11th workers tie
    seen = []
    with pytest.warns(TieWarning, match="epsilon = 0"):
        res = ICB(epsilon=0.0).run(env, rng=0, budget=50_000, callback=lambda e: seen.append(e.progress()))
    assert res.status == "budget_exhausted" and res.samples == 50_000
    assert seen and {"samples", "statistic", "threshold", "leader"} <= set(seen[-1])
    assert seen[-1]["statistic"] > seen[-1]["threshold"] == 0.0 and len(seen[-1]["leader"]) == 10
    ind = res.info["indistinguishable"]
    assert ind and all(len(team) == 10 for team in ind)
    # every tied swap of the leader is among the candidates the data cannot rule out
    lead = set(np.flatnonzero(res.answer).tolist())
    means = env.means()
    tied = [sorted(lead - {i} | {j}) for i in lead for j in set(range(env.n_arms)) - lead
            if means[i] == means[j]]
    assert tied and all(t in ind for t in tied)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TieWarning)
        ICB(epsilon=0.5).run(crowd(k=10, rng=0), rng=0, budget=5_000)  # no warning


def test_callback_can_end_a_run_and_bad_callback_is_refused():
    # Regression test: Solver.run's callback sees the exploration after each tell and can
    # end the run; a callback that is not callable is refused.
    from combex.environments import crowd
    from combex.exceptions import CombexError, TieWarning

    def stop_early(exp):
        if exp.samples >= 1000:
            exp.stop("budget_exhausted", "stopped by the callback")

    with pytest.warns(TieWarning):
        res = SAQM(epsilon=0.0).run(crowd(k=3, rng=0), rng=0, callback=stop_early)
    assert res.status == "budget_exhausted" and 1000 <= res.samples < 2000
    with pytest.raises(CombexError, match="'callback' parameter"):
        ICB().run(crowd(k=3, rng=0), rng=0, callback=42)
