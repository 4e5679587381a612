"""The oracle path on classes of matroid bases: the swap-decomposition lower
bound of the exact GLR, the stop built on it, the oracle-randomized design and the GLR
team noise scale for correlated members."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_dist

from combex.environments import CrowdQuiz, FullBandit, GaussianArms, NoiseModel
from combex.exceptions import CombexError
from combex.identification import exchange_pairs, glr_team_sigma, is_matroid_base_class, swap_glr_lower_bound
from combex.oracles import PartitionMatroid, SpanningTrees, TopK
from combex.solvers import LinearFWSampling, LinearTopTwo, LinGame, RandomDesign
from combex.solvers.full_bandit import team_sigma
from combex.testing._solver import _loop


def _exact_min(dc, x_hat, theta, M, eps):
    best = math.inf
    for m in dc.enumerate():
        m = np.asarray(m, dtype=bool)
        if (m == x_hat).all():
            continue
        y = x_hat.astype(float) - m
        best = min(best, max(float(y @ theta) + eps, 0.0) ** 2 / (2.0 * float(y @ M @ y)))
    return best


def _classes():
    g = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)])
    return [TopK(6, 3), TopK(7, 2), PartitionMatroid([0, 0, 0, 1, 1, 1, 1], [2, 2], base=True), SpanningTrees(g)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), which=st.integers(0, 3), eps=st.sampled_from([0.0, 0.05, 0.5, 2.0]),
       diag=st.booleans())
def test_swap_bound_never_exceeds_the_exact_min_glr(seed, which, eps, diag):
    """Brute force over every member: the bound is <= min_S Z_S (valid for any PSD M), and
    equal to it for epsilon = 0 (the best single swap is a member)."""
    rng = np.random.default_rng(seed)
    dc = _classes()[which]
    n = dc.n
    theta = rng.normal(size=n)
    if diag:
        M = np.diag(rng.uniform(0.1, 2.0, size=n)) + rng.uniform(0, 1) * np.ones((n, n))
    else:
        B = rng.normal(size=(n, n))
        M = B @ B.T + 0.05 * np.eye(n)
    x_hat = np.asarray(dc.argmax(theta), dtype=bool)
    sb = swap_glr_lower_bound(x_hat, theta, M, exchange_pairs(dc, x_hat), sigma=1.0, epsilon=eps)
    exact = _exact_min(dc, x_hat, theta, M, eps)
    assert sb.value <= exact * (1 + 1e-9) + 1e-12
    if eps == 0.0:
        assert sb.value == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_additive_bound_is_tight_for_the_uniform_design():
    """``A = a I + b 11^T`` (uniform design over k-sets): ``P M P`` is diagonal, the additive
    bound reaches the exact min GLR with epsilon > 0 where the triangle bound does not."""
    n, k = 7, 3
    dc = TopK(n, k)
    A = 5.0 * np.eye(n) + 2.0 * np.ones((n, n))
    M = np.linalg.inv(A)
    theta = np.array([1.0, 0.95, 0.9, 0.85, 0.8, 0.2, 0.0])
    x_hat = np.asarray(dc.argmax(theta), dtype=bool)
    sb = swap_glr_lower_bound(x_hat, theta, M, exchange_pairs(dc, x_hat), epsilon=0.5)
    exact = _exact_min(dc, x_hat, theta, M, 0.5)
    assert sb.info["kind"] == "additive"
    assert sb.value == pytest.approx(exact, rel=1e-6)
    assert sb.info["triangle"] < 0.9 * exact


def test_matroid_recognition_and_exchange_pairs():
    assert is_matroid_base_class(TopK(5, 2))
    assert is_matroid_base_class(PartitionMatroid([0, 0, 1, 1], [1, 1], base=True))
    assert not is_matroid_base_class(PartitionMatroid([0, 0, 1, 1], [1, 1]))
    dc = PartitionMatroid([0, 0, 1, 1], [1, 1], base=True)
    x = np.array([True, False, True, False])
    I, J, E = exchange_pairs(dc, x)
    # only same-group exchanges keep a base
    assert I.tolist() == [0, 2] and J.tolist() == [1, 3]
    assert E.tolist() == [[True, False], [False, True]]


def test_glr_team_sigma_for_correlated_members():
    """k sigma (Hoelder) for dependent members: 5 for CrowdQuiz at k = 10, half of ICB's k R."""
    noise = CrowdQuiz.synthetic(n_workers=12, k=10).noise
    assert glr_team_sigma(noise, 10) == pytest.approx(5.0)
    assert team_sigma(noise, 10) == pytest.approx(10.0)  # ICB / SAQM keep the paper's constant
    assert glr_team_sigma(NoiseModel("gaussian", sigma=2.0), 4) == pytest.approx(4.0)
    # the bound is attained: k perfectly correlated +-1/2 members sum to +-k/2
    rng = np.random.default_rng(0)
    s = 0.5 * rng.choice([-1.0, 1.0], size=200_000) * 10
    lam = 0.3
    assert np.mean(np.exp(lam * s)) <= math.exp(lam**2 * 5.0**2 / 2) * 1.01


@pytest.mark.parametrize("cls", [LinearTopTwo, LinearFWSampling, LinGame])
def test_oracle_path_uses_the_swap_stop_and_answers_right(cls):
    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    res = cls(max_enumerate=5, epsilon=0.1).run(env, rng=0, budget=5_000_000)
    assert res.status == "identified"
    assert res.info["oracle_path"] is True and res.info["stop_bound"] == "swap"
    assert res.certificate["Z_lower"] > res.certificate["beta"]
    assert env.is_correct(res.answer, 0.1)
    assert res.pulls.sum() == 3 * res.samples


@pytest.mark.slow
def test_swap_stop_beats_the_quadratic_stop():
    """Top-3 of 8 forced onto the oracle path: the swap stop needs far fewer samples than the
    old quadratic-oracle stop (reached by hiding the matroid structure)."""
    means = [1.0, 0.9, 0.8, 0.5, 0.4, 0.2, 0.1, 0.0]

    class Hidden(TopK):  # same members, not recognised as a matroid
        pass

    import combex.identification._swaps as sbm
    import combex.identification._teams as teams
    import combex.solvers.optimal_linear as ol

    env = FullBandit(means, k=3, rng=1)
    fast = LinearTopTwo(max_enumerate=5).run(env, rng=1, budget=20_000_000)
    mods = (sbm, teams, ol)  # every module that reads the structure test
    orig = [m.is_matroid_base_class for m in mods]
    try:
        for m in mods:
            m.is_matroid_base_class = lambda dc: False
        slow = LinearTopTwo(max_enumerate=5).run(FullBandit(means, k=3, rng=1), rng=1, budget=20_000_000)
    finally:
        for m, f in zip(mods, orig):
            m.is_matroid_base_class = f
    assert fast.info["stop_bound"] == "swap" and slow.info["stop_bound"] == "quadratic"
    assert fast.status == slow.status == "identified"
    assert fast.samples * 3 < slow.samples


def test_spanning_trees_on_the_oracle_path():
    g = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    dc = SpanningTrees(g)
    w = np.array([1.0, 0.8, 0.6, 0.1, 0.0])
    env = FullBandit(w, decision_class=dc, rng=0)
    res = LinearTopTwo(max_enumerate=2).run(env, rng=0, budget=5_000_000)
    assert res.info["stop_bound"] == "swap"
    assert env.is_correct(res.answer, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [LinearTopTwo, LinearFWSampling])
def test_swap_stop_error_rate(cls):
    """100 seeded runs with a near-tie on the oracle path (top-2 of 6, max_enumerate=5):
    the error rate is not above delta (its Clopper-Pearson 95% lower bound is <= delta)."""
    delta = 0.1
    errors = 0
    runs = 100
    for s in range(runs):
        env = FullBandit([1.0, 0.8, 0.75, 0.3, 0.2, 0.0], k=2, rng=1000 + s)
        r = cls(delta=delta, max_enumerate=5, growth=0.05).run(env, rng=s, budget=5_000_000)
        errors += not env.is_correct(r.answer, 0.0)
    lower = 0.0 if errors == 0 else float(beta_dist.ppf(0.05, errors, runs - errors + 1))
    assert lower <= delta, (errors, runs)


def test_readme_demo_block_matches_the_demo_rows():
    """The README's demo output names the demo's four solvers, top-two >= 10x below ICB."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = text[text.index("`make demo` prints"):]
    block = block[block.index("```text"):block.index("```", block.index("```text") + 7)]
    lines = [line.split() for line in block.splitlines() if re.match(r"^(ICB|SAQM|SA-FOA|top-two) ", line)]
    rows = {f[0]: int(f[1].replace(",", "")) for f in lines}
    assert set(rows) == {"ICB", "SAQM", "SA-FOA", "top-two"}
    assert rows["ICB"] >= 10 * rows["top-two"]
    # the ratio to the lower bound: "<=" (a certified lower bound of T*_eps), samples / ratio the same bound
    assert all(f[2] == "<=" for f in lines)
    bound = {f[0]: rows[f[0]] / float(f[3].replace(",", "")) for f in lines}
    assert max(bound.values()) <= min(bound.values()) * 1.003  # (one decimal printed)
    src = (Path(__file__).resolve().parents[1] / "combex" / "experiments" / "_demo.py").read_text()
    assert all(f'("{name}", ' in src for name in rows)


@pytest.mark.parametrize("n,k,seed", [(8, 3, 0), (7, 2, 1), (9, 4, 2), (6, 3, 3)])
def test_swap_T_star_lower_bound_is_below_the_exact_T_star(n, k, seed):
    from combex.environments import kuroki_synthetic_means
    from combex.identification import characteristic_time, swap_T_star_lower_bound

    theta = kuroki_synthetic_means(n, k, 0.3, rng=seed)
    dc = TopK(n, k)
    X = np.array(list(dc.enumerate()), dtype=float)
    exact = characteristic_time(X, theta, sigma=1.5).T_star
    x_star = np.asarray(dc.argmax(theta), dtype=bool)
    lb = swap_T_star_lower_bound(theta, x_star, exchange_pairs(dc, x_star), k, sigma=1.5)
    assert lb <= exact * (1 + 1e-6)
    assert lb >= exact / 2  # and not vacuous on these instances (measured 1.09-1.46x below)


def test_oracle_path_reports_a_certified_upper_bound_of_the_ratio():
    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    res = LinearTopTwo(max_enumerate=5).run(env, rng=0, budget=5_000_000)
    assert res.info["stop_bound"] == "swap"
    assert "certified upper bound of the ratio" in res.info["lower_bound_ratio_kind"]
    enum = LinearTopTwo().run(FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0), rng=0)
    exact_T = enum.info["T_star"]
    assert res.info["T_star_lower"] <= exact_T * (1 + 1e-6)
    assert res.info["lower_bound_ratio"] >= res.samples / (exact_T * math.log(1 / 0.05)) * (1 - 1e-9)


def test_a_budget_cut_batch_of_teams_is_accepted():
    """The runner cuts the last batch at the budget and tells it back: masks on a
    full-bandit problem are valid arms (they were refused as index arms)."""
    env = FullBandit([1.0, 0.8, 0.75, 0.3, 0.2, 0.0], k=2, rng=0)
    res = LinGame(max_enumerate=5).run(env, rng=0, budget=3000)
    assert res.status == "budget_exhausted" and res.samples == 3000


@pytest.mark.parametrize("cls", [LinearTopTwo, LinGame])
def test_save_and_resume_on_the_swap_path(cls, tmp_path):
    """The design path's free pulls and the oracle path's state survive save / load."""
    def make_env():
        return FullBandit([1.0, 0.9, 0.3, 0.2, 0.1, 0.0], k=2, rng=7)

    solver = cls(max_enumerate=5)
    ref = drive_loop(solver.start(make_env(), rng=3), make_env()).result()
    env = make_env()
    exp = drive_loop(solver.start(env, rng=3), env, steps=30)
    assert not exp.done
    exp.ask()
    path = exp.save(tmp_path / "state")
    resumed = drive_loop(solver.load(path, env), env).result()
    assert resumed.info["stop_bound"] == "swap"
    assert resumed.samples == ref.samples
    assert np.array_equal(np.asarray(resumed.answer), np.asarray(ref.answer))
    assert np.array_equal(resumed.pulls, ref.pulls)


def test_top_two_by_name_reaches_the_linear_solver_on_full_bandit_problems():
    """``top-two`` / ``fw-sampling`` (the registry names) delegate full-bandit team problems to
    the linear solvers (team scores are linear in the member indicators); before, ``start``
    refused them as "needs semi-bandit feedback". Track-and-Stop has no linear counterpart:
    it is still refused, and the message names the solvers that do handle full bandits."""
    from combex.exceptions import InvalidParameterError
    from combex.solvers import get_solver

    env = CrowdQuiz("ITMANAGE", k=10)
    res = get_solver("top-two")(epsilon=0.5, delta=0.05).run(env.spawn(np.random.default_rng(3)), rng=3)
    assert res.status == "identified"
    mu = env.means()
    assert mu[env.best()].sum() - mu[np.asarray(res.answer, dtype=bool)].sum() <= 0.5 + 1e-12
    assert res.info.get("stop_bound") == "swap"
    with pytest.raises(InvalidParameterError, match="top-two"):
        get_solver("track-and-stop")(epsilon=0.5).start(env)


def drive_loop(exp, env, steps=None):
    """The ask / tell loop of check_solver, stopped after ``steps`` tells when given."""
    return _loop(exp, env, budget=10**12, stop_at=steps)


# ---------------------------------------------------------------------- fixed-design threshold
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), which=st.integers(0, 3), eps=st.sampled_from([0.0, 0.3, 2.0]),
       size=st.integers(1, 3))
def test_size_bound_never_exceeds_the_exact_min_over_that_distance(seed, which, eps, size):
    """Brute force: the bound for the bases at swap distance exactly ``size`` is <= their
    exact min GLR (any PSD M), exact at distance 1, inf past the largest possible distance."""
    from combex.identification import swap_glr_lower_bound_of_size

    rng = np.random.default_rng(seed)
    dc = _classes()[which]
    theta = rng.normal(size=dc.n)
    B = rng.normal(size=(dc.n, dc.n))
    M = B @ B.T + 0.05 * np.eye(dc.n)
    x_hat = np.asarray(dc.argmax(theta), dtype=bool)
    exact = math.inf
    for m in dc.enumerate():
        m = np.asarray(m, dtype=bool)
        if int((x_hat & ~m).sum()) == size:
            y = x_hat.astype(float) - m
            exact = min(exact, max(float(y @ theta) + eps, 0.0) ** 2 / (2.0 * float(y @ M @ y)))
    bound = swap_glr_lower_bound_of_size(x_hat, theta, M, exchange_pairs(dc, x_hat), size, epsilon=eps)
    if size > min(int(x_hat.sum()), dc.n - int(x_hat.sum())):
        assert math.isinf(bound)
    if not math.isinf(exact):
        assert bound <= exact * (1 + 1e-9) + 1e-12
        if size == 1:
            assert bound == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_fixed_design_threshold_is_the_default_on_the_oblivious_design_and_needs_fewer_teams():
    """kuroki-synthetic n = 36, k = 10 (the crowd benchmark's instance): the default ``"valid"``
    threshold resolves to ``"fixed-design"`` on the oracle-randomized design and stops with
    fewer team evaluations than the d-dimensional mixture threshold (measured 5,565 against
    9,765 on these seeds); both answers are epsilon-good."""
    from combex.experiments import make_instance

    fixed, mixture = [], []
    for s in range(2):
        env = make_instance("kuroki-synthetic", rng=100 + s, n=36, k=10)
        r = LinearTopTwo(0.05, epsilon=0.5).run(env, rng=s, budget=10_000_000)
        assert r.info["threshold"] == "fixed-design" and r.certificate["threshold"] == "fixed-design"
        assert r.certificate["Z_lower"] > r.certificate["beta"] and r.certificate["checked"]
        assert env.is_correct(r.answer, 0.5)
        fixed.append(r.samples)
        env = make_instance("kuroki-synthetic", rng=100 + s, n=36, k=10)
        r = LinearTopTwo(0.05, epsilon=0.5, threshold="mixture").run(env, rng=s, budget=10_000_000)
        assert r.info["threshold"] == "mixture" and env.is_correct(r.answer, 0.5)
        mixture.append(r.samples)
    assert 1.4 * sum(fixed) < sum(mixture)


def test_fixed_design_threshold_is_refused_where_the_design_adapts():
    from combex.exceptions import InvalidParameterError

    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    with pytest.raises(InvalidParameterError, match="'threshold'.*fixed-design"):
        LinGame(max_enumerate=5, threshold="fixed-design").start(env.problem, rng=0)  # adaptive sampler
    with pytest.raises(InvalidParameterError, match="'threshold'.*fixed-design"):
        LinearTopTwo(threshold="fixed-design").start(env.problem, rng=0)  # enumerated: tracking
    res = LinGame(max_enumerate=5).run(env, rng=0, budget=5_000_000)
    assert res.info["threshold"] == "mixture"  # "valid" resolves to the mixture threshold there


def test_fixed_design_stops_only_at_checkpoints_with_the_union_thresholds():
    """The GLR is checked once per checkpoint c_m = 10 n 1.2^(m-1) (a function of the sample
    count), and beta(m, s) = log(1/p) for sub-Gaussian (bounded) noise, the Gaussian
    quantile's z^2 / 2 (smaller) for Gaussian members."""
    from combex.solvers.optimal_linear import FIXED_DESIGN_SPACING

    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    exp = LinearTopTwo(max_enumerate=5, delta=0.05).start(env.problem, rng=0)
    checks = []
    while not exp.done:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        if getattr(exp, "_fd_m", 0) and (not checks or checks[-1][0] != exp._fd_m):
            checks.append((exp._fd_m, exp.samples))
    ms = [m for m, _ in checks]
    assert ms == sorted(set(ms))  # each checkpoint index used once
    for m, t in checks:  # checked at the first round end past c_m
        assert t >= 70 * (1 + FIXED_DESIGN_SPACING) ** (m - 1)
    p = 0.05 * 6 / math.pi**2 / (3 * 4) / 12  # m = 3, s = 1: N_1 = 3 * 4
    gauss = exp._fixed_design_beta(3, 1, 7, 3)
    from scipy.stats import norm

    assert gauss == pytest.approx(norm.isf(p) ** 2 / 2) and gauss < math.log(1 / p)
    bounded = LinearTopTwo(max_enumerate=5).start(CrowdQuiz.synthetic(n_workers=12, k=3).problem, rng=0)
    assert bounded._fixed_design_beta(3, 1, 7, 3) == pytest.approx(math.log(1 / p))


@pytest.mark.slow
@pytest.mark.parametrize("noise,sigma,scale", [("gaussian", 1.0, 1.0), ("rademacher", 4.0, 10.0),
                                               ("gaussian", 3.0, 3.0)])
def test_fixed_design_error_rate_on_adversarial_instances(noise, sigma, scale):
    """80 seeded runs per case on the oracle path (top-3 of 8, max_enumerate=5, the default
    fixed-design threshold, delta = 0.2), arms in a random order: odd seeds a near-tie at the
    boundary (gap 0.2 sigma against member noise sigma, exact identification), even seeds an
    exact tie at the boundary with epsilon = 0.1 scale; bounded (Rademacher) noise with large
    ||theta|| (scale 10), a non-default noise scale. Error rate <= delta (Clopper-Pearson)."""
    delta, runs = 0.2, 80
    errors = 0
    for s in range(runs):
        rng = np.random.default_rng(5000 + s)
        tie = s % 2 == 0
        third = 0.6 if tie else 0.6 + 0.2 * sigma / scale
        means = scale * np.array([1.2, 1.0, third, 0.6, 0.2, 0.1, 0.0, -0.2])
        eps = 0.1 * scale if tie else 0.0
        env = FullBandit(means[rng.permutation(8)], k=3, noise=noise, sigma=sigma, rng=rng)
        r = LinearTopTwo(delta=delta, epsilon=eps, max_enumerate=5).run(env, rng=s, budget=3_000_000)
        assert r.info["threshold"] == "fixed-design" and r.status == "identified"
        errors += not env.is_correct(r.answer, eps)
    lower = 0.0 if errors == 0 else float(beta_dist.ppf(0.05, errors, runs - errors + 1))
    assert lower <= delta, (errors, runs)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), eps=st.sampled_from([0.05, 0.2, 0.6]), tie=st.booleans())
def test_epsilon_T_star_bound_with_several_good_teams_is_below_the_exact_one(seed, eps, tie):
    """Top-3 of 7 (enumerable): the certified lower bound of T*_eps used when several teams
    are epsilon-good is <= the exact T*_eps (min over the epsilon-good teams of one XY design
    each, :func:`characteristic_time` with epsilon)."""
    from combex.identification import characteristic_time
    from combex.identification._teams import _common_swaps_T_lower

    rng = np.random.default_rng(seed)
    theta = np.round(rng.uniform(0, 1, size=7), 2)
    if tie:
        order = np.argsort(-theta)
        theta[order[3]] = theta[order[2]]  # the 3rd and 4th tie: at least two best teams
    dc = TopK(7, 3)
    X = np.array(list(dc.enumerate()), dtype=float)
    try:
        exact = characteristic_time(X, theta, sigma=1.5, epsilon=eps).T_star
    except Exception:  # more epsilon-good teams than the exact computation takes
        return
    x_star = np.asarray(dc.argmax(theta), dtype=bool)
    lb, kind = _common_swaps_T_lower(dc, theta, x_star, 3, 1.5, eps)
    assert "certified" in kind
    assert lb <= exact * (1 + 1e-6)


@pytest.mark.parametrize("threshold,expected", [("valid", "fixed-design"), ("heuristic", "heuristic")])
def test_top_two_by_name_passes_a_valid_threshold_to_the_linear_solver(threshold, expected):
    """``top-two`` on a full-bandit team problem delegates to LinearTopTwo; the valid threshold
    of the bandit solver stays valid there, ``heuristic`` stays heuristic."""
    from combex.solvers import get_solver

    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    exp = get_solver("top-two")(epsilon=0.1, threshold=threshold)
    lin = exp._linear_delegate(env.problem)
    lin.max_enumerate = 5  # the oracle path (the design): "valid" resolves to fixed-design there
    res = lin.run(env, rng=0, budget=10**7)
    assert res.info["threshold"] == expected


@pytest.mark.parametrize("setting", [{"threshold": "valid-kk"}, {"divergence": "bernoulli"}, {"beta": 0.5},
                                     {"K": 2}])
def test_top_two_refuses_settings_it_cannot_honour_on_team_problems(setting):
    """A setting of the bandit ``top-two`` that the linear rule of team problems cannot honour
    is refused with an error naming it, never dropped."""
    from combex.exceptions import InvalidParameterError
    from combex.solvers import get_solver

    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    name = next(iter(setting))
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        get_solver("top-two")(epsilon=0.1, **setting).run(env, rng=0, budget=100)


def test_top_two_hands_unknown_variance_and_sigma_to_team_problems():
    """``divergence`` and ``sigma`` reach the linear rule of a team problem: a declared sigma
    is the scale of one team score; ``unknown-variance`` estimates it."""
    from combex.solvers import get_solver

    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    r = get_solver("top-two")(delta=0.1, epsilon=0.2, divergence="unknown-variance").run(env, rng=0)
    assert r.info["divergence"] == "unknown-variance" and r.info["sigma"] is None
    r = get_solver("top-two")(delta=0.1, epsilon=0.2, sigma=3.0).run(env, rng=0, budget=50)
    assert r.info["divergence"] == "gaussian" and r.info["sigma"] == 3.0


def test_random_design_draws_teams_at_every_class_size_and_answers_with_its_last_checkpoint():
    """``random-design`` takes the oracle-randomized design and the fixed-design stop on a
    class small enough to enumerate (35 teams). Before the first checkpoint it reports no
    statistic; between checkpoints the answer, statistic and threshold are the last
    checkpoint's (so a budget stop there answers with the team the statistic is about), and
    the estimate of the evaluations left counts down from the last checkpoint's."""
    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    exp = RandomDesign(delta=0.05).start(env.problem, rng=0)
    assert exp.oblivious_design and exp.threshold == "fixed-design"
    seen = {}
    while not exp.done:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        stat, beta = exp.stopping_statistic()
        m = getattr(exp, "_fd_m", 0)
        if m == 0:
            assert math.isnan(stat) and exp.delta_achieved() is None
            continue
        ans = tuple(np.flatnonzero(exp.answer))
        left = exp.evaluations_left()
        end = None if not left or exp.done else round(left + exp.samples, 6)  # where the estimate ends
        if m in seen:  # between checkpoints: the same numbers, and an estimate that counts down
            assert seen[m][:3] == (ans, stat, beta) and (end is None or seen[m][3] is None or end == seen[m][3])
        seen[m] = (ans, stat, beta, end)
    res = exp.result()
    assert res.status == "identified" and res.info["threshold"] == "fixed-design"
    assert env.is_correct(res.answer, 0.0) and len(seen) >= 2
    with pytest.raises(CombexError, match="semi-bandit|full-bandit"):
        RandomDesign().start(GaussianArms([1.0, 0.5, 0.0], rng=0).problem, rng=0)


def test_random_design_keeps_its_threshold_when_blind_tells_come_in_any_order():
    """A caller handing out the design's proposals to several people and telling the
    scores in the order they come back (a study) sets ``blind_tells``: the fixed-design
    threshold stays; without it a batch the design did not ask for switches the run to the
    mixture threshold."""
    for blind in (True, False):
        env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=1)
        exp = RandomDesign(delta=0.05).start(env.problem, rng=0)
        exp.blind_tells = blind
        gen = np.random.default_rng(3)
        while not exp.done:
            exp.ask()
            arms = exp.propose(3, rng=gen)
            for a in arms[::-1]:
                if exp.done:
                    break
                exp.tell(a, float(env.pull_many(np.asarray([a]), np.array([1]))[0]))
        res = exp.result()
        assert res.status == "identified" and env.is_correct(res.answer, 0.0)
        assert res.info["threshold"] == ("fixed-design" if blind else "mixture")


@pytest.mark.slow
def test_random_design_error_rate_with_unknown_noise_on_lab_sized_near_ties():
    """100 seeded runs of ``random-design`` on 12 workers in teams of 4 with the noise level
    unknown (a study's default), delta = 0.2, workers in a random order: odd seeds a near
    tie (the best two teams 1 apart against a session noise of 10, epsilon 0), even seeds an
    exact tie with epsilon 2. Error rate <= delta (Clopper-Pearson)."""
    delta, runs = 0.2, 100
    errors = 0
    for s in range(runs):
        rng = np.random.default_rng(7000 + s)
        tie = s % 2 == 0
        q = np.array([20.0, 19.0, 18.0, 17.0 if tie else 16.0, 17.0, 12, 11, 10, 9, 8, 7, 6])
        eps = 2.0 if tie else 0.0
        env = FullBandit(q[rng.permutation(12)], k=4, noise="gaussian", sigma=10.0, noise_level="observation",
                         noise_known=False, rng=rng)
        r = RandomDesign(delta=delta, epsilon=eps).run(env, rng=s, budget=3_000_000)
        assert r.info["threshold"] == "fixed-design" and r.status == "identified"
        errors += not env.is_correct(r.answer, eps)
    lower = 0.0 if errors == 0 else float(beta_dist.ppf(0.05, errors, runs - errors + 1))
    assert lower <= delta, (errors, runs)


def test_a_told_batch_other_than_the_design_leaves_the_fixed_design_threshold(tmp_path):
    """The fixed-design threshold holds only while the told batches are the design's. A
    copy of the asked batch keeps it; a batch with other counts (a choice that may depend
    on the scores) switches the run to the mixture threshold at delta / (m_s + 1), m_s the
    last checkpoint checked, which survives save / load and is reported in the result."""
    from combex.solvers import Batch

    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    exp = LinearTopTwo(max_enumerate=5, delta=0.05).start(env.problem, rng=0)
    while getattr(exp, "_fd_m", 0) < 2:
        b = exp.ask()
        copy = Batch(np.array(b.arms, copy=True), np.array(b.counts, copy=True))
        exp.tell_batch(copy, env.pull_many(b.arms, b.counts))
        assert exp.threshold == "fixed-design" and not exp.done
    m_s = exp._fd_m
    b = exp.ask()
    cut = Batch(b.arms, np.maximum(b.counts - 1, 0))
    exp.tell_batch(cut, env.pull_many(cut.arms, cut.counts))
    assert exp.threshold == "mixture" and exp._glr_delta == pytest.approx(0.05 / (m_s + 1))
    exp.ask()
    resumed = LinearTopTwo(max_enumerate=5, delta=0.05).load(exp.save(tmp_path / "state"), env.problem)
    assert resumed.threshold == "mixture" and resumed._glr_delta == exp._glr_delta
    while not resumed.done:
        b = resumed.ask()
        resumed.tell_batch(b, env.pull_many(b.arms, b.counts))
    res = resumed.result()
    assert res.status == "identified" and env.is_correct(res.answer, 0.0)
    assert res.info["threshold"] == "mixture" and res.certificate["threshold"] == "mixture"
    assert f"after checkpoint {m_s}" in res.info["threshold_note"]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 8), eps=st.sampled_from([0.0, 0.3, 2.0]),
       size=st.integers(1, 4), sigma=st.sampled_from([1.0, 2.5]))
def test_topk_enumerated_min_glr_equals_brute_force(seed, n, eps, size, sigma):
    """Brute force over every k-set: the enumerated minimum at swap distance ``size`` is the
    exact min GLR over the k-sets at that distance (any PSD M, any answer x_hat, not only
    the argmax), inf past the largest distance, and None past TOPK_EXACT_MAX."""
    import itertools

    from combex.identification import _swaps, topk_min_glr_of_size

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, n))
    theta = rng.normal(size=n)
    B = rng.normal(size=(n, n))
    M = B @ B.T + 0.05 * np.eye(n)
    x_hat = np.zeros(n, dtype=bool)
    x_hat[rng.choice(n, size=k, replace=False)] = True
    exact = math.inf
    for S in itertools.combinations(range(n), k):
        m = np.zeros(n, dtype=bool)
        m[list(S)] = True
        if int((x_hat & ~m).sum()) == size:
            y = x_hat.astype(float) - m
            exact = min(exact, max(float(y @ theta) + eps, 0.0) ** 2 / (2.0 * sigma**2 * float(y @ M @ y)))
    got = topk_min_glr_of_size(x_hat, theta, M, size, sigma=sigma, epsilon=eps)
    if math.isinf(exact):
        assert got is not None and math.isinf(got)
    else:
        assert got == pytest.approx(exact, rel=1e-9, abs=1e-12)
    old = _swaps.TOPK_EXACT_MAX
    try:
        _swaps.TOPK_EXACT_MAX = 0
        assert topk_min_glr_of_size(x_hat, theta, M, size, sigma=sigma, epsilon=eps) is None or math.isinf(exact)
    finally:
        _swaps.TOPK_EXACT_MAX = old


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.sampled_from([0.0, 0.3]), iters=st.sampled_from([0, 1, 2]))
def test_swap_bound_stays_certified_when_dinkelbach_is_cut_short(seed, eps, iters):
    """Stopped after 0-2 Dinkelbach steps, the triangle bound is still below the exact
    minimum over every other base (brute force over the 3-sets of 7): the last step's gap
    certifies it (_certified_ratio), where the current ratio alone would not be a bound."""
    from itertools import combinations

    from combex.identification import swap_glr_lower_bound_of_size

    rng = np.random.default_rng(seed)
    n, k = 7, 3
    theta = rng.normal(size=n)
    G = rng.normal(size=(n, n))
    M = G @ G.T / n + 0.1 * np.eye(n)
    x_hat = np.zeros(n, dtype=bool)
    x_hat[np.argsort(-theta)[:k]] = True
    ex = exchange_pairs(TopK(n, k), x_hat)
    exact = math.inf
    by_size: dict[int, float] = {}
    for c in combinations(range(n), k):
        S = np.zeros(n, dtype=bool)
        S[list(c)] = True
        if np.array_equal(S, x_hat):
            continue
        y = x_hat.astype(float) - S.astype(float)
        z = max(float(y @ theta) + eps, 0.0) ** 2 / (2.0 * float(y @ M @ y))
        exact = min(exact, z)
        s = int((x_hat & ~S).sum())
        by_size[s] = min(by_size.get(s, math.inf), z)
    sb = swap_glr_lower_bound(x_hat, theta, M, ex, epsilon=eps, max_iter=iters)
    assert sb.value <= exact * (1 + 1e-9) + 1e-12
    for s, v in by_size.items():
        assert swap_glr_lower_bound_of_size(x_hat, theta, M, ex, s, epsilon=eps, max_iter=iters) <= v * (1 + 1e-9) + 1e-12
