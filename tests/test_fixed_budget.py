"""Fixed-budget solvers (combex.solvers.fixed_budget): the contract, the papers' schedules,
known answers, error rates against the proven bounds, CSAR against brute force, save /
resume."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from combex.environments import BernoulliArms, BestKGaussianArms, FullBandit, GaussianArms, Problem, NoiseModel
from combex.exceptions import InvalidParameterError, TieWarning
from combex.experiments import make_instance, run_generators, run_many
from combex.oracles import ExplicitFamily, PartitionMatroid, TopK
from combex.solvers import CONTRACTS, SOLVERS, get_solver
from combex.solvers.fixed_budget import (
    CSAR,
    FullBanditCSAR,
    ODLinBAI,
    SequentialHalving,
    SuccessiveAcceptsRejects,
    SuccessiveRejects,
    UniformAllocation,
    caratheodory_reduce,
    chen_gaps,
    csar_step,
    hardness_h2,
    harmonic_number,
    log_bar,
)
from combex.testing import clopper_pearson

NAMES = ["successive-rejects", "successive-accepts-rejects", "sequential-halving", "csar", "uniform-allocation",
         "od-linbai", "csar-full-bandit"]
PM = PartitionMatroid([0, 0, 0, 1, 1, 2, 2], [1, 1, 1], base=True)


def _case(name, seed=0):
    """(solver without budget, environment, a budget) for each solver."""
    if name == "successive-rejects":
        return SuccessiveRejects(), GaussianArms([1.0, 0.6, 0.5, 0.1, 0.0], sigma=0.5, rng=seed), 157
    if name == "successive-accepts-rejects":
        return SuccessiveAcceptsRejects(2), BestKGaussianArms([1.0, 0.9, 0.3, 0.2, 0.0], 2, sigma=0.5, rng=seed), 211
    if name == "sequential-halving":
        return SequentialHalving(), GaussianArms([0.2, 1.0, 0.0, 0.1, 0.3], sigma=0.5, rng=seed), 143
    if name == "csar":
        return CSAR(decision_class=PM), GaussianArms([0.9, 0.1, 0.0, 0.2, 0.8, 0.7, 0.0], sigma=0.5, rng=seed), 301
    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0], k=3, sigma=0.5, rng=seed)
    budget = {"uniform-allocation": 97, "od-linbai": 131, "csar-full-bandit": 149}[name]
    return get_solver(name)(), env, budget


def _correct(name, env, answer):
    if name == "csar":
        return np.array_equal(answer, PM.argmax(env.means()))
    return env.is_correct(answer)


def _drive(exp, env, *, stop_after=None, single=False):
    """The ask / tell loop (tells pull by pull when ``single``); stop after ``stop_after`` tells."""
    tells = 0
    while not exp.done and (stop_after is None or tells < stop_after):
        batch = exp.ask()
        if single:
            arm, _ = next(iter(batch))
            s, c = env.pull(arm, 1)
            exp.tell(arm, s, c)
        else:
            exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
        tells += 1
    return exp


# ---------------------------------------------------------------------- the contract
def test_registered_under_the_fixed_budget_contract():
    assert "fixed-budget" in CONTRACTS
    for name in NAMES:
        cls = get_solver(name)
        assert cls.contract == "fixed-budget" and SOLVERS[name] is cls


def test_a_budget_is_required_and_must_agree():
    solver, env, _ = _case("successive-rejects")
    with pytest.raises(InvalidParameterError, match="budget"):
        solver.run(env)
    with pytest.raises(InvalidParameterError, match="budget"):
        solver.start(env)
    with pytest.raises(InvalidParameterError, match=r"'budget' parameter of SuccessiveRejects.run .*Got 90"):
        SuccessiveRejects(budget=80).run(env, budget=90)
    with pytest.raises(InvalidParameterError, match="'budget' parameter of SuccessiveRejects"):
        SuccessiveRejects(budget=0)
    a = SuccessiveRejects(budget=80).run(env.spawn(1), rng=2)
    b = SuccessiveRejects().run(env.spawn(1), rng=2, budget=80)
    assert a.answer == b.answer and a.samples == b.samples == 80 and np.array_equal(a.pulls, b.pulls)
    assert solver.budget is None  # run(budget=...) left the settings alone


@pytest.mark.parametrize("name, budget, low", [
    ("successive-rejects", 5, 6), ("successive-accepts-rejects", 5, 6), ("sequential-halving", 14, 15),
    ("csar", 7, 8), ("uniform-allocation", 5, 6), ("od-linbai", 25, 26), ("csar-full-bandit", 6, 7)])
def test_a_budget_too_small_is_refused_naming_the_bound(name, budget, low):
    solver, env, _ = _case(name)
    with pytest.raises(InvalidParameterError, match=rf"'budget' parameter of \w+ must be an int in the range "
                                                   rf"\[{low}, inf\).*Got {budget} instead"):
        solver.run(env, budget=budget)
    assert solver.run(env, budget=low).samples == low  # the smallest budget accepted runs


def test_bad_settings_and_problems_are_refused():
    with pytest.raises(InvalidParameterError, match="'K' parameter of SuccessiveAcceptsRejects"):
        SuccessiveAcceptsRejects(5).run(GaussianArms([1.0, 0.0, 0.5, 0.2, 0.1]), budget=100)
    with pytest.raises(InvalidParameterError, match="'decision_class' parameter of CSAR"):
        CSAR(decision_class=object())
    with pytest.raises(InvalidParameterError, match="needs a decision class"):
        CSAR().run(GaussianArms([1.0, 0.0]), budget=50)
    with pytest.raises(InvalidParameterError, match="'design' parameter of UniformAllocation"):
        UniformAllocation(design="random")
    with pytest.raises(InvalidParameterError, match="'problem' parameter of SuccessiveRejects.start"):
        SuccessiveRejects().run(FullBandit([1.0, 0.0, 0.5], k=1), budget=50)
    with pytest.raises(InvalidParameterError, match="'problem' parameter of UniformAllocation.start"):
        UniformAllocation().run(GaussianArms([1.0, 0.0]), budget=50)
    with pytest.raises(InvalidParameterError, match="max_enumerate=10"):
        ODLinBAI(max_enumerate=10).run(FullBandit(np.arange(8.0), k=3), budget=500)


@pytest.mark.parametrize("name", NAMES)
def test_sample_count_equals_the_budget_for_every_budget(name):
    solver, env, budget = _case(name)
    for b in (budget, budget + 1, budget + 7, 3 * budget + 2):
        res = solver.run(env.spawn(b), rng=b, budget=b)
        assert res.samples == b and res.status == "budget_exhausted"
        assert res.info["budget"] == b and "error_bound_source" in res.info
        if solver.arm_type == "index" and name != "od-linbai":
            assert res.pulls.sum() == b


@pytest.mark.parametrize("name", NAMES)
def test_known_answer_instances(name):
    solver, env, budget = _case(name)
    for seed in range(5):
        res = solver.run(env.spawn(seed), rng=seed, budget=4 * budget)
        assert _correct(name, env, res.answer)


@pytest.mark.parametrize("name", NAMES)
def test_run_is_the_ask_tell_loop_and_tells_pull_by_pull_agree(name):
    solver, env, budget = _case(name)
    res = solver.run(env.spawn(3), rng=5, budget=budget)
    exp = _drive(solver.start(env.spawn(3), rng=5, budget=budget), env.spawn(3))
    got = exp.result()
    assert np.array_equal(got.answer, res.answer) and got.samples == res.samples and got.rounds == res.rounds
    assert np.array_equal(got.pulls, res.pulls)
    one = _drive(solver.start(env.spawn(4), rng=5, budget=budget), env.spawn(4), single=True)
    assert one.done and one.samples == budget  # telling single pulls walks the same phases


@pytest.mark.parametrize("name", NAMES)
def test_save_resume_is_bit_identical(name, tmp_path):
    solver, env, budget = _case(name)
    ref_env = env.spawn(11)
    ref = _drive(solver.start(ref_env, rng=7, budget=budget), ref_env)
    for stop_after in (1, 2, 3):
        part_env = env.spawn(11)
        part = _drive(solver.start(part_env, rng=7, budget=budget), part_env, stop_after=stop_after)
        path = tmp_path / f"{name}-{stop_after}.json"
        part.save(path)
        fresh = type(solver)(**solver.get_params())  # no budget setting: the saved one is used
        back = _drive(fresh.load(path, part_env.problem), part_env)
        a, b = back.result(), ref.result()
        assert np.array_equal(a.answer, b.answer) and a.samples == b.samples == budget
        assert np.array_equal(a.pulls, b.pulls) and a.rounds == b.rounds
        assert part_env.rng.bit_generator.state == ref_env.rng.bit_generator.state


def test_progress_reports_the_evaluations_left():
    solver, env, budget = _case("csar-full-bandit")
    exp = solver.start(env, rng=0, budget=budget)
    exp.tell_batch(exp.ask(), env.pull_many(exp.ask().arms, exp.ask().counts))
    p = exp.progress()
    assert p["evaluations_left"] == budget - exp.samples > 0 and p["stops_when"] == "samples >= budget"
    assert math.isnan(p["statistic"]) and p["delta_achieved"] is None


def test_no_tie_warning_on_a_tied_truth():
    env = GaussianArms([1.0, 1.0, 0.0], sigma=0.5, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TieWarning)
        assert SuccessiveRejects().run(env, budget=30).samples == 30


def test_the_runner_dispatches_the_contract():
    doc = run_many("successive-accepts-rejects", "jiang-1sparse", {"N": 6, "K": 2}, runs=3, seed=1, budget=120,
                   solver_params={"K": 2})
    assert [r["samples"] for r in doc["runs"]] == [120, 120, 120]
    assert doc["summary"]["error_rate"] is not None


# ---------------------------------------------------------------------- the papers' schedules
def test_successive_rejects_phase_lengths_and_counts():
    """Audibert & Bubeck (2010), SR: K = 5, n = 157: log_bar(5) = 1/2 + 1/2 + 1/3 + 1/4 + 1/5
    = 1.7833; n_k = ceil(152 / (1.7833 (6 - k))) = 18, 22, 29, 43; 18 + 22 + 29 + 43 + 43 = 155,
    so the last two arms share 2 more samples."""
    assert log_bar(5) == pytest.approx(0.5 + 0.5 + 1 / 3 + 0.25 + 0.2)
    solver, env, budget = _case("successive-rejects")
    res = solver.run(env, rng=0, budget=budget)
    assert res.info["phase_lengths"] == [18, 22, 29, 43]
    assert sorted(res.pulls.tolist()) == [18, 22, 29, 44, 44]


def test_sequential_halving_round_lengths():
    """Karnin et al. (2013), Algorithm 1: N = 5, T = 143, ceil(log2 5) = 3 rounds over 5, 3, 2 arms;
    t_r = floor(143 / (|S_r| 3)) = 9, 15, 23: 45 + 45 + 46 = 136, 7 left for the last round."""
    solver, env, budget = _case("sequential-halving")
    res = solver.run(env, rng=0, budget=budget)
    assert res.info["round_lengths"] == [9, 15, 23]
    assert sorted(res.pulls.tolist()) == [9, 9, 9 + 15, 9 + 15 + 23 + 3, 9 + 15 + 23 + 4]


def test_csar_phase_lengths():
    """Chen et al. (2014), Algorithm 2: n = 7, T = 301, log~(7) = 2.5929; n~_t = ceil(294 / (2.5929 (8 - t)))
    = ceil(16.2, 18.9, 22.7, 28.3, 37.8, 56.7, 113.4) = 17, 19, 23, 29, 38, 57, 114 (sum 297 <= 301); the
    last arm gets the 4 left over."""
    assert harmonic_number(7) == pytest.approx(sum(1 / i for i in range(1, 8)))
    solver, env, budget = _case("csar")
    res = solver.run(env, rng=0, budget=budget)
    assert res.info["phase_lengths"] == [17, 19, 23, 29, 38, 57, 114]
    assert sorted(res.pulls.tolist()) == [17, 19, 23, 29, 38, 57, 118]


def test_od_linbai_phases_on_the_lab_case():
    """Yang & Tan (2022), Algorithm 1 on the 495 teams of 4 of 12 workers: d = 12, 4 phases,
    m = (T - min(495, 78) - (6 + 3 + 2)) / 4; the first design keeps at most 78 teams."""
    env = make_instance("lab-teams", rng=0)
    exp = ODLinBAI().start(env, rng=0, budget=150)
    assert exp.m == pytest.approx((150 - 78 - 11) / 4) and exp.n_phases == 4 and exp.keeps == [6, 3, 2, 1]
    assert exp.ask().arms.shape[0] <= 78 and exp.ask().total <= math.ceil(exp.m) * 78
    res = ODLinBAI().run(env, rng=0, budget=150)
    assert res.samples == 150 and res.info["d"] == 12 and res.info["n_candidates"] == 495


def test_caratheodory_keeps_the_information_matrix_of_a_g_optimal_design():
    from combex.allocations import g_optimal_design

    X = np.array(list(TopK(8, 3).enumerate()), dtype=float)  # 56 teams, d = 8, L = 36
    w = g_optimal_design(X).weights
    p = caratheodory_reduce(X, w)
    assert (p > 0).sum() <= 36 and p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(X.T @ (p[:, None] * X), X.T @ (w[:, None] * X), atol=1e-9)


# ---------------------------------------------------------------------- error bounds
def test_successive_rejects_error_bound_by_hand():
    """Theorem 2 on means (1, 0.6, 0.5, 0.1, 0), sigma = 0.5 (4 sigma^2 = 1): gaps sorted 0.4, 0.4, 0.5,
    0.9, 1.0; H_2 = max(1/0.16, 2/0.16, 3/0.25, 4/0.81, 5/1) = 12.5; bound = 10 exp(-152 / (1.7833 12.5))."""
    solver, env, budget = _case("successive-rejects")
    res = solver.run(env, rng=0, budget=budget)
    assert res.info["hardness"] == pytest.approx(12.5)
    assert res.info["error_bound"] == pytest.approx(10 * math.exp(-152 / (log_bar(5) * 12.5)))
    assert "Theorem 2" in res.info["error_bound_source"]
    assert hardness_h2([0.0, 1.0]) == math.inf


def test_sequential_halving_error_bound_by_hand():
    """Theorem 4.1 on means (1, 0.3, 0.2, 0) (sorted), sigma = 0.5: H_2 = max_{i >= 2} i / Delta_i^2 =
    max(2/0.49, 3/0.64, 4/1) = 4.6875; bound = 3 log2(4) exp(-T / (8 H_2 log2 4))."""
    env = GaussianArms([0.3, 1.0, 0.0, 0.2], sigma=0.5, rng=0)
    res = SequentialHalving().run(env, rng=0, budget=200)
    assert res.info["hardness"] == pytest.approx(4.6875)
    assert res.info["error_bound"] == pytest.approx(6 * math.exp(-200 / (8 * 4.6875 * 2)))


def test_error_bound_is_none_without_truth():
    solver, _, _ = _case("successive-rejects")
    exp = solver.start(Problem(n_arms=3, noise=NoiseModel("gaussian", 1.0)), rng=0, budget=30)
    assert exp.result().info["budget"] == 30
    assert solver.with_budget(30).error_bound_info(object())["error_bound"] is None


def _error_rate(solver, make_env, correct, budget, runs):
    errors = 0
    bound = None
    for i in range(runs):
        _, g_env, g_alg = run_generators(2024, i)
        env = make_env(g_env)
        res = solver.run(env, rng=g_alg, budget=budget)
        bound = res.info["error_bound"]
        errors += not correct(env, res.answer)
    return errors, bound


BOUND_CASES = {
    # name: (solver, env factory, correct, budget); budgets where the proven bound is below 1
    "sr-gaussian": (SuccessiveRejects(), lambda g: GaussianArms([1.0, 0.4, 0.3, 0.0], sigma=0.5, rng=g), None, 160),
    "sr-bernoulli": (SuccessiveRejects(), lambda g: BernoulliArms([0.9, 0.4, 0.3, 0.2], rng=g), None, 200),
    "sar": (SuccessiveAcceptsRejects(2), lambda g: BestKGaussianArms([1.0, 0.9, 0.0, -0.1], 2, sigma=0.25, rng=g),
            None, 2000),
    "sh": (SequentialHalving(), lambda g: GaussianArms([1.0, 0.3, 0.2, 0.0], sigma=0.5, rng=g), None, 500),
    "csar": (CSAR(decision_class=PartitionMatroid([0, 0, 1, 1], [1, 1], base=True)),
             lambda g: GaussianArms([1.0, 0.0, 0.0, 1.0], sigma=0.2, rng=g),
             lambda env, a: a.tolist() == [True, False, False, True], 1500),
    "od-linbai": (ODLinBAI(), lambda g: FullBandit([1.0, 0.0, 0.0], k=1, sigma=0.2, rng=g), None, 60),
}


@pytest.mark.parametrize("case", sorted(BOUND_CASES))
def test_error_rate_within_the_proven_bound(case):
    solver, make_env, correct, budget = BOUND_CASES[case]
    errors, bound = _error_rate(solver, make_env, correct or (lambda env, a: env.is_correct(a)), budget, 40)
    assert bound is not None and bound < 1.0  # a bound that can be contradicted
    lower, _ = clopper_pearson(errors, 40)
    assert lower <= bound, f"{case}: {errors}/40 errors, proven bound {bound:.3g}"


def _near_tie(g):
    return GaussianArms([1.0, 0.9, 0.9, 0.9, 0.9, 0.9], sigma=0.5, rng=g)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["successive-rejects", "sequential-halving"])
def test_error_rate_many_runs_on_an_adversarial_instance(name):
    """One best arm, five tied challengers 0.1 below (every gap at its smallest, so H_2 = 600
    at sigma = 1/2): at a budget where the bound is about 0.5 (SR: 15 exp(-4494 / (1.95 600));
    SH: 7.75 exp(-36000 / (8 600 2.585))), the measured rate must not exceed it."""
    solver = get_solver(name)()
    budget = {"successive-rejects": 4500, "sequential-halving": 36000}[name]
    errors, bound = _error_rate(solver, _near_tie, lambda env, a: env.is_correct(a), budget, 400)
    assert bound < 1.0
    lower, _ = clopper_pearson(errors, 400)
    assert lower <= bound, f"{name}: {errors}/400 errors, proven bound {bound:.3g}"


def test_answers_do_not_move_with_an_offset():
    """Adding 1000 to every mean (same noise) changes no decision of the index-arm solvers."""
    for name in ("successive-rejects", "successive-accepts-rejects", "sequential-halving", "csar"):
        solver, env, budget = _case(name)
        mu = env.means()
        far = (BestKGaussianArms(mu + 1000.0, 2, sigma=0.5, rng=0) if name == "successive-accepts-rejects"
               else GaussianArms(mu + 1000.0, sigma=0.5, rng=0))
        a = solver.run(env.spawn(9), rng=1, budget=budget)
        b = solver.run(far.spawn(9), rng=1, budget=budget)
        assert np.array_equal(a.answer, b.answer) and np.array_equal(a.pulls, b.pulls)


def test_uniform_allocation_designs_and_bound():
    env = make_instance("lab-teams", rng=0)
    small = UniformAllocation().run(env, rng=0, budget=100)
    assert small.info["design"] == "balanced cyclic top-k support"
    big = UniformAllocation().run(env, rng=0, budget=1000)
    assert big.info["design"] == "all members, round-robin" and big.info["design_size"] == 495
    assert big.info["error_bound"] < small.info["error_bound"]
    crowd = UniformAllocation().run(make_instance("crowd", dataset="ITMANAGE", k=10, rng=0), rng=0, budget=300)
    assert crowd.info["error_bound"] is None and crowd.samples == 300
    with pytest.raises(InvalidParameterError, match="'design' parameter of UniformAllocation is 'all'"):
        UniformAllocation(design="all", max_enumerate=100).run(env, budget=200)


def test_od_linbai_on_a_linear_problem():
    env = make_instance("soare", d=3, rng=0)
    res = ODLinBAI().run(env, rng=0, budget=400)
    assert isinstance(res.answer, int) and res.samples == 400 and res.info["error_bound"] is not None


# ---------------------------------------------------------------------- CSAR against brute force
def _brute_step(dc, w, accepted, rejected, undecided):
    members = [m for m in dc.enumerate() if np.all(m[accepted]) and not np.any(m[rejected])]
    val = lambda m: float(w[m].sum())  # noqa: E731
    M = max(members, key=val)
    gaps = {}
    for e in undecided:
        flips = [m for m in members if m[e] != M[e]]
        gaps[e] = math.inf if not flips else val(M) - max(val(m) for m in flips)
    return M, gaps


@st.composite
def _class_and_weights(draw):
    n = draw(st.integers(3, 7))
    kind = draw(st.sampled_from(["family", "topk", "partition"]))
    if kind == "topk":
        dc = TopK(n, draw(st.integers(1, n - 1)))
    elif kind == "partition":
        groups = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        used = sorted(set(groups))
        groups = [used.index(g) for g in groups]
        caps = [draw(st.integers(1, groups.count(g))) for g in range(len(used))]
        dc = PartitionMatroid(groups, caps, base=True)
    else:
        subsets = draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n).filter(any), min_size=1, max_size=8,
                                unique_by=tuple))
        dc = ExplicitFamily([np.flatnonzero(s).tolist() for s in subsets], n=n)
    # a grid of 0.01: two members' values are tied or at least 0.01 apart
    w = np.round(np.array(draw(st.lists(st.integers(-5, 5).map(float) | st.floats(-3, 3), min_size=n, max_size=n))), 2)
    return dc, w


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_class_and_weights(), st.integers(0, 2**31 - 1))
def test_csar_step_matches_brute_force(case, seed):
    dc, w = case
    n = dc.n
    best = dc.argmax(w)
    # a consistent partial decision: some arms of a member accepted, some others rejected
    g = np.random.default_rng(seed)
    accepted = best & (g.random(n) < 0.3)
    rejected = ~best & (g.random(n) < 0.3)
    undecided = np.flatnonzero(~accepted & ~rejected)
    if undecided.size == 0:
        return
    arm, accept = csar_step(dc, w, accepted, rejected, undecided)
    M, gaps = _brute_step(dc, w, accepted, rejected, undecided)
    top = max(gaps.values())
    assert gaps[arm] == top or (math.isfinite(top) and gaps[arm] == pytest.approx(top, abs=1e-9))
    if math.isfinite(gaps[arm]) and gaps[arm] > 1e-9:  # no tie between members: M is unique
        assert accept == bool(M[arm])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_class_and_weights(), st.integers(0, 2**31 - 1))
def test_nearly_noise_free_csar_returns_the_brute_force_optimum(case, seed):
    dc, w = case
    optimum = max(float(w[m].sum()) for m in dc.enumerate())
    for solver, env in ((CSAR(decision_class=dc), GaussianArms(w, sigma=1e-4, rng=seed)),
                        (FullBanditCSAR(), FullBandit(w, decision_class=dc, sigma=1e-4, rng=seed))):
        res = solver.run(env, rng=seed, budget=20 * dc.n)
        assert float(w[res.answer].sum()) == pytest.approx(optimum, abs=1e-6)


def test_chen_gaps_on_a_partition_matroid():
    """Chen et al. (2014), their gaps: with groups {0,1}, {2,3} (one each) and w = (1, 0.2, 0.5, 0.4),
    M* = {0, 2}; Delta_0 = Delta_1 = 0.8 (swap in group 0), Delta_2 = Delta_3 = 0.1."""
    pm = PartitionMatroid([0, 0, 1, 1], [1, 1], base=True)
    np.testing.assert_allclose(chen_gaps(pm, np.array([1.0, 0.2, 0.5, 0.4])), [0.8, 0.8, 0.1, 0.1])


def test_full_bandit_csar_on_the_quiz_data():
    env = make_instance("crowd", dataset="ITMANAGE", k=10, rng=0)
    res = FullBanditCSAR().run(env, rng=0, budget=3000)
    assert res.samples == 3000 and res.answer.sum() == 10 and res.info["error_bound"] is None
    assert env.is_correct(res.answer, 0.5)


def test_public_names():
    import combex.solvers as solvers

    assert solvers.SuccessiveRejects is SuccessiveRejects and solvers.ODLinBAI is ODLinBAI
    assert {"SuccessiveRejects", "CSAR", "UniformAllocation", "FullBanditCSAR"} <= set(solvers.__all__)
