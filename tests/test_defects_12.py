"""Issue 12, "Defects found": one regression test (or more) per defect."""

from __future__ import annotations

import numpy as np
import pytest

from combex.environments import FullBandit, LinearBandit
from combex.exceptions import CombexError
from combex.solvers import get_solver


# ----------------------------------------------------------------- 1. no unsound default S
def test_lingape_refuses_without_norm_bound_and_is_right_with_one():
    env = LinearBandit(np.eye(2), [50.0, 50.8], rng=0)
    LinGapE = get_solver("lingape")
    with pytest.raises(CombexError, match="'S' parameter.*required"):
        LinGapE(delta=0.1).run(env, rng=0)
    wrong = 0
    for seed in range(5):  # a small ridge keeps lambda^{1/2} S (about 0.7) from dominating C_t
        res = LinGapE(delta=0.1, ridge=1e-4, S=float(np.hypot(50.0, 50.8))).run(env.spawn(seed), rng=seed)
        wrong += res.answer != 1
    assert wrong == 0


def test_lingape_derives_S_from_a_known_reward_range():
    from combex.environments import Problem

    env = LinearBandit(np.eye(2), [0.2, 0.7], rng=0)
    p = env.problem
    prob = Problem(n_arms=p.n_arms, noise=p.noise, features=p.features, info={"reward_range": (-1.0, 1.0)})
    exp = get_solver("lingape")().start(prob, rng=0)
    assert exp.S == pytest.approx(np.sqrt(2.0))  # m sqrt(K) / s_min(X) with X = I


def test_lingape_oracle_needs_S_on_gaussian_full_bandit_and_derives_it_otherwise():
    Oracle = get_solver("lingape-oracle")
    env = FullBandit([50.0, 50.8, 0.0], k=1, rng=0)
    with pytest.raises(CombexError, match="'S' parameter"):
        Oracle(delta=0.1).start(env.problem, rng=0)
    bern = FullBandit([0.2, 0.9, 0.5, 0.1], k=2, noise="bernoulli", rng=0)
    assert Oracle().start(bern.problem, rng=0).S == pytest.approx(2.0)  # sqrt(n), means in [0, 1]
    from combex.environments import kuroki_synthetic, topk_gaussian

    assert Oracle().start(kuroki_synthetic(6, 2, rng=0).problem, rng=0).S == pytest.approx(np.sqrt(6))
    assert Oracle().start(topk_gaussian((3, 4, 0), k=1).problem, rng=0).S == pytest.approx(5.0)


# ----------------------------------------------------------------- 3. rng seeds the noise too
@pytest.mark.parametrize("build", ["kuroki", "topk", "crowd"])
def test_instance_rng_seeds_the_noise(build):
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


# ----------------------------------------------------------------- 2. lingape-oracle stops on n >= 6
def test_lingape_oracle_stops_on_easy_top2_of_6_within_budget():
    from combex.environments import topk_gaussian

    Oracle = get_solver("lingape-oracle")
    for seed in range(2):
        env = topk_gaussian((3, 2.5, 0, 0, 0, 0), k=2, rng=seed)
        res = Oracle(ridge=0.1, S=4.0).run(env, rng=seed, budget=2000)
        # measured 271-408 samples over seeds 0-4 (main: no stop after 2e5 rounds)
        assert res.status == "identified", res.info
        assert res.samples <= 1000
        np.testing.assert_array_equal(res.answer, env.best())


# ----------------------------------------------------------------- 4. SAQM theorem1 on a subspace
def test_saqm_theorem1_refuses_a_subspace_class_at_start_and_certified_runs():
    from combex.oracles import PartitionMatroid

    SAQM = get_solver("saqm")
    groups = np.array([0, 0, 1, 1, 2, 2])
    dc = PartitionMatroid(groups, [1, 1, 1], base=True)
    env = FullBandit([1.0, 0.0, 0.0, 1.0, 1.0, 0.0], decision_class=dc, sigma=0.3, rng=0)
    with pytest.raises(CombexError, match="'alpha' parameter.*subspace"):
        SAQM(alpha="theorem1").start(env.problem, rng=0)
    res = SAQM(alpha="certified", delta=0.1).run(env, rng=0, budget=10**6)
    assert res.status == "identified"
    np.testing.assert_array_equal(res.answer, env.best())


# ----------------------------------------------------------------- 5. ICB Lemma 1 constant
def test_icb_lemma1_union_bound_sums_to_delta_from_t1():
    import math

    from combex.estimation import independent_radius

    delta, sigma, n = 0.05, 1.3, 7
    t = np.arange(1, 2 * 10**6 + 1, dtype=float)
    C = independent_radius(t, delta, sigma=sigma, n_arms=n)
    # two-sided sub-Gaussian tail per arm and round: 2 exp(-C_t^2 / (2 sigma^2))
    per_round = n * 2.0 * np.exp(-(C**2) / (2 * sigma**2))
    total = per_round.sum() + per_round[-1] * t[-1]  # tail sum_{s > T} T^2/s^2 <= T
    assert total <= delta * (1 + 1e-9)
    assert total >= 0.999 * delta  # the corrected constant is the smallest one (no slack)
    # the printed constant c' = 6/pi^2 sums to 2 pi^4 / 36 = 5.41 delta
    old = sigma * np.sqrt(2 * np.log(6 / math.pi**2 * t**2 * n / delta))
    old_total = (n * 2.0 * np.exp(-(old**2) / (2 * sigma**2))).sum()
    assert old_total / delta == pytest.approx(2 * math.pi**4 / 36, rel=1e-5)
    assert 5.40 < 2 * math.pi**4 / 36 < 5.42


# ----------------------------------------------------------------- 6. the check schedule's true bound
def test_geometric_schedule_ratio_is_measured_and_can_exceed_one_plus_growth():
    from combex.solvers import get_solver

    ICB = get_solver("icb")
    g = 0.01
    env = FullBandit([1.0, 0.9, 0.2, 0.1, 0.0], k=2, sigma=0.5, rng=3)
    res = ICB(delta=0.1, growth=g).run(env, rng=1, trace=True)
    t = np.asarray(res.trace["t"], dtype=float)
    assert t.size >= 3
    # the true statement: t_{j+1} <= max(t_j + 1, (1 + g) t_j)
    assert np.all(t[1:] <= np.maximum(t[:-1] + 1, np.floor((1 + g) * t[:-1])))
    ratios = t[1:] / t[:-1]
    assert res.info["max_check_ratio"] == pytest.approx(ratios.max())
    # early checks are one sample apart: the ratio is 1 + 1/t > 1 + g ("at most 1 + g" is false)
    assert res.info["max_check_ratio"] > 1 + g
    assert "overshoot_factor" not in res.info


def test_xy_static_reports_its_measured_check_ratio():
    from combex.environments import canonical

    res = get_solver("xy-static")(growth=0.05).run(canonical(4, 0.5, rng=0), rng=0)
    assert res.info["max_check_ratio"] > 1.05  # from the "n + 1" steps while n < 20


# ----------------------------------------------------------------- 8. family compatibility at start
@pytest.mark.parametrize("solver,instance,params", [
    ("lil-randlucb", "soare", {}),
    ("saqm", "jiang-1sparse", {}),
    ("lingape", "jiang-1sparse", {}),
    ("icb", "soare", {}),
    ("lingape-oracle", "jiang-1sparse", {}),
])
def test_wrong_family_is_refused_at_start(solver, instance, params):
    from combex.experiments import make_instance

    env = make_instance(instance, rng=0, **params)
    cls = get_solver(solver)
    with pytest.raises(CombexError, match="'problem' parameter.*instance families"):
        cls().start(env.problem, rng=0)


def test_cli_list_shows_solver_families(capsys):
    from combex.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    line = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ")}
    assert "[semi-bandit, mips]" in line["lil-randlucb"]
    assert "[full-bandit]" in line["saqm"] and "[linear]" in line["lingape"]


def test_cli_list_prints_whole_first_sentences(capsys):
    """Each summary is the docstring's first sentence, not its first line (which stopped
    mid-sentence: "... Kaufmann 2022); with", "... the independent"), and "et al." or
    "eq." do not end it."""
    from combex.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    line = {ln.split()[0]: ln.rstrip() for ln in out.splitlines() if ln.startswith("  ")}
    assert line["top-two"].endswith("EB-TCeps (Jourdan, Degenne & Kaufmann 2023).")
    assert line["graphic-matroid"].endswith("the independent sets its forests.")
    assert line["xy-oracle"].endswith("eq. (18) of Xu et al. (2018).")
    assert "``" not in out


# ----------------------------------------------------------------- 7. ties with epsilon = 0
def test_epsilon0_on_tied_crowd_warns_reports_progress_and_indistinguishable():
    import warnings

    from combex.environments import crowd
    from combex.exceptions import TieWarning

    env = crowd(k=10, rng=0)
    m = np.sort(env.means())[::-1]
    assert m[9] == m[10]  # the 10th and 11th workers tie
    seen = []
    with pytest.warns(TieWarning, match="epsilon = 0"):
        res = get_solver("icb")(epsilon=0.0).run(env, rng=0, budget=50_000, callback=lambda e: seen.append(e.progress()))
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
        get_solver("icb")(epsilon=0.5).run(crowd(k=10, rng=0), rng=0, budget=5_000)  # no warning


def test_callback_can_end_a_run_and_bad_callback_is_refused():
    from combex.environments import crowd

    def stop_early(exp):
        if exp.samples >= 1000:
            exp.stop("budget_exhausted", "stopped by the callback")

    from combex.exceptions import TieWarning

    with pytest.warns(TieWarning):
        res = get_solver("saqm")(epsilon=0.0).run(crowd(k=3, rng=0), rng=0, callback=stop_early)
    assert res.status == "budget_exhausted" and 1000 <= res.samples < 2000
    with pytest.raises(CombexError, match="'callback' parameter"):
        get_solver("icb")().run(crowd(k=3, rng=0), rng=0, callback=42)


def test_cli_run_has_a_default_budget_and_prints_progress_lines(capsys):
    from combex.cli import DEFAULT_BUDGET, build_parser
    from combex.experiments import simulate
    from combex.environments import crowd

    args = build_parser().parse_args(["run", "icb", "--instance", "crowd"])
    assert args.budget == DEFAULT_BUDGET
    res = simulate(get_solver("icb")(epsilon=0.5), crowd(k=10, rng=0), rng=0, budget=20_000, progress=True, every=0.0)
    err = capsys.readouterr().err
    assert "[icb] samples=" in err and "statistic=" in err and "leader=" in err
    assert res.samples <= 20_000


def test_cli_run_is_replayed_exactly_from_python():
    from combex.environments import kuroki_synthetic
    from combex.experiments import run_generators, run_many

    doc = run_many("icb", "kuroki-synthetic", {"n": 6, "k": 2, "gap": 0.5}, runs=1, seed=5)
    inst, noise, alg = run_generators(5, 0)
    env = kuroki_synthetic(6, 2, 0.5, rng=inst)
    env.reset(noise)
    res = get_solver("icb")().run(env, rng=alg)
    assert doc["runs"][0]["samples"] == res.samples
    assert doc["runs"][0]["answer"] == np.flatnonzero(res.answer).tolist()


def test_lingape_budget_exhausted_lists_the_indistinguishable_arms():
    env = LinearBandit(np.eye(3), [1.0, 1.0, 0.0], rng=0)  # arms 0 and 1 tie
    from combex.exceptions import TieWarning

    with pytest.warns(TieWarning):
        res = get_solver("lingape")(S=2.0).run(env, rng=0, budget=3000)
    assert res.status == "budget_exhausted"
    assert res.info["indistinguishable"][0] == 1 - int(res.answer)  # the tied arm, least separated


def test_best_k_budget_exhausted_lists_the_arms_across_the_boundary():
    from combex.environments import GaussianArms
    from combex.exceptions import TieWarning

    env = GaussianArms([1.0, 0.5, 0.5, 0.0], rng=0)  # K = 2: arms 1 and 2 tie
    seen = []
    with pytest.warns(TieWarning):
        res = get_solver("lil-randlucb")(2).run(env, rng=0, budget=20_000, callback=lambda e: seen.append(e.progress()))
    assert res.status == "budget_exhausted"
    assert np.isfinite(seen[-1]["statistic"]) and seen[-1]["statistic"] > seen[-1]["threshold"] == 0.0
    ind = res.info["indistinguishable"]
    assert {1, 2} <= set(ind["in_answer"]) | set(ind["outside"])


def test_cli_time_limit_ends_a_tied_run_with_budget_exhausted(capsys):
    from combex.cli import main
    from combex.exceptions import TieWarning

    with pytest.warns(TieWarning):
        assert main(["run", "icb", "--instance", "crowd", "--set", "k=10", "--time-limit", "0.5", "--json",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    import json

    run = json.loads(out)["runs"][0]
    assert run["status"] == "budget_exhausted" and run["indistinguishable"]
