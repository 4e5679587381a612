"""The characteristic time T* and its certified yardsticks, against brute force: linear
models (T*(theta), the interior-point and Frank-Wolfe certificates), unknown variances (the
T* bracket), teams (the moment-matrix and LP bounds), and the yardstick a run reports
(``Query``)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from combex.allocations import xy_value as _design_value
from combex.environments import FullBandit, GaussianArms, kuroki_synthetic_means
from combex.exceptions import InvalidParameterError
from combex.identification import (
    bandit_characteristic_time,
    characteristic_time,
    check_features,
    exchange_pairs,
    linear_lower_bound,
    swap_T_star_lower_bound,
    swap_T_star_moment_bound,
    team_T_star_lower_bound,
    uv_characteristic_time,
    uv_lower_bound_info,
)
from combex.identification._unknown_variance import _Alternatives, _h
from combex.oracles import ExplicitFamily, TopK


@pytest.mark.parametrize("gap", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_two_arms_closed_form(gap, sigma):
    # x1 = e1, x2 = e2: ||e1 - e2||^2_{A(p)^{-1}} = 1/p1 + 1/p2, minimal (4) at p = 1/2.
    lb = characteristic_time(np.eye(2), [gap, 0.0], sigma=sigma)
    assert lb.T_star == pytest.approx(8.0 * sigma**2 / gap**2, rel=1e-5)
    np.testing.assert_allclose(lb.allocation, [0.5, 0.5], atol=1e-4)
    assert lb.best == 0


@pytest.mark.parametrize("method", ["cvxpy", "frank-wolfe"])
@pytest.mark.parametrize("d", [3, 5, 8])
def test_canonical_closed_form(d, method):
    # Gaussian MAB with equal gaps: T* = 2 (1 + sqrt(d - 1))^2 / gap^2.
    gap = 0.5
    x = np.eye(d)
    theta = np.r_[gap, np.zeros(d - 1)]
    want = 2.0 * (1.0 + np.sqrt(d - 1)) ** 2 / gap**2
    if method == "cvxpy":
        lb = characteristic_time(x, theta, method="cvxpy")
        assert lb.T_star == pytest.approx(want, rel=1e-5)
        p1 = np.sqrt(d - 1) / (np.sqrt(d - 1) + d - 1)
        assert lb.allocation[0] == pytest.approx(p1, abs=1e-3)
    else:
        lb = characteristic_time(x, theta, method="frank-wolfe")
        assert want <= lb.T_star * (1 + 1e-9)
        assert lb.T_star == pytest.approx(want, rel=2e-2)


def test_minimax_property_against_random_allocations():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 3))
    theta = rng.normal(size=3)
    lb = characteristic_time(x, theta)
    mu = x @ theta
    b = int(np.argmax(mu))
    others = [i for i in range(7) if i != b]
    y = (x[b] - x[others]) / (mu[b] - mu[others])[:, None]
    for _ in range(300):
        p = rng.dirichlet(np.ones(7))
        assert 2.0 * _design_value(x, y, p) >= lb.T_star * (1 - 1e-6)
    assert 2.0 * _design_value(x, y, lb.allocation) == pytest.approx(lb.T_star, rel=1e-9)


def test_scaling_in_theta_and_soare_value():
    x = np.r_[np.eye(5), [[np.cos(0.01), np.sin(0.01), 0, 0, 0]]]
    lb1 = characteristic_time(x, [2.0, 0, 0, 0, 0])
    lb2 = characteristic_time(x, [4.0, 0, 0, 0, 0])
    assert lb1.T_star == pytest.approx(4.0 * lb2.T_star, rel=1e-4)
    # direction x1 - x6 is nearly e2 / 100 scaled by 1/gap: T* about 2e4
    assert 1.9e4 < lb1.T_star < 2.1e4
    assert lb1.allocation[1] > 0.99


def test_linear_lower_bound_dict():
    out = linear_lower_bound(np.eye(2), [1.0, 0.0], 0.05)
    assert out["T_star"] == pytest.approx(8.0, rel=1e-5)
    assert out["lower_bound_samples"] == pytest.approx(8.0 * np.log(20.0), rel=1e-5)
    tied = linear_lower_bound(np.eye(2), [1.0, 1.0], 0.05)
    assert tied["T_star"] == float("inf")


def test_bad_inputs():
    with pytest.raises(InvalidParameterError, match="unique best arm"):
        characteristic_time(np.eye(3), [1.0, 1.0, 0.0])
    with pytest.raises(InvalidParameterError, match="must span R"):
        characteristic_time([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]], [1.0, 0.0])
    with pytest.raises(InvalidParameterError, match="theta"):
        characteristic_time(np.eye(3), [1.0, 0.0])
    with pytest.raises(InvalidParameterError, match="2-d"):
        characteristic_time([1.0, 2.0], [1.0])
    with pytest.raises(InvalidParameterError, match="sigma"):
        characteristic_time(np.eye(2), [1.0, 0.0], sigma=0.0)
    with pytest.raises(InvalidParameterError, match="method"):
        characteristic_time(np.eye(2), [1.0, 0.0], method="newton")
    with pytest.raises(InvalidParameterError, match="no features"):
        check_features(None, owner="LinGapE")
    with pytest.raises(InvalidParameterError, match="at least two rows"):
        check_features([[1.0]], owner="LinGapE")
    with pytest.raises(InvalidParameterError, match="delta"):
        linear_lower_bound(np.eye(2), [1.0, 0.0], 1.5)


def test_copies_of_a_feature_row_are_one_answer():
    """Duplicate feature rows (the same arm twice) are one answer: no TieWarning, a finite T*
    (the copies of the best row are not its alternatives), a finite lower_bound_ratio."""
    import warnings

    from combex.environments import LinearBandit
    from combex.solvers import get_solver
    from combex.identification import characteristic_time

    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    single = characteristic_time(X[1:], [1.0, 0.0]).T_star
    assert math.isfinite(characteristic_time(X, [1.0, 0.0]).T_star)
    assert characteristic_time(X, [1.0, 0.0]).T_star == pytest.approx(single, rel=1e-3)
    assert characteristic_time(X, [1.0, 0.0], epsilon=0.1).T_star <= single
    env = LinearBandit(X, theta=[1.0, 0.0], rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = get_solver("lingame")(delta=0.05).run(env, rng=0)
    assert r.answer in (0, 1) and math.isfinite(r.info["lower_bound_ratio"])


# ---------------------------------------------------------------- the yardstick of a run
def test_solvers_leave_the_yardstick_to_run_and_their_query():
    """``Solver.run`` attaches ``lower_bound_ratio`` once, from the solver's query: no solver
    overrides ``run`` to compute its own (the fixed-budget base overrides it for its budget)."""
    from combex.solvers import SOLVERS, Solver
    from combex.solvers._registry import _load_builtin_solvers

    _load_builtin_solvers()
    reasons = {"FixedBudgetSolver": "a run is exactly a budget of samples"}
    for name, cls in SOLVERS.items():
        if not issubclass(cls, Solver):
            continue
        owners = {k.__name__ for k in cls.__mro__ if "run" in vars(k) and k is not Solver}
        assert owners <= set(reasons), (name, owners)


@pytest.mark.parametrize("case", ["top-two", "lucb", "top-two-best-k", "lingame", "lingape", "icb", "top-two-teams"])
def test_the_yardstick_of_a_run_is_its_querys(case):
    from combex.environments import BestKGaussianArms, GaussianArms, kuroki_synthetic, soare
    from combex.solvers import get_solver

    env = {
        "top-two": lambda: GaussianArms([0.5, 0.3, 0.1], sigma=1.0, rng=1),
        "lucb": lambda: BestKGaussianArms([0.9, 0.5, 0.2], K=1, rng=1),
        "top-two-best-k": lambda: BestKGaussianArms([0.9, 0.7, 0.2, 0.1], K=2, rng=1),
        "lingame": lambda: soare(2, rng=1),
        "lingape": lambda: soare(2, rng=1),
        "icb": lambda: kuroki_synthetic(n=5, k=2, gap=0.8, sigma=0.3, rng=1),
        "top-two-teams": lambda: kuroki_synthetic(n=5, k=2, gap=0.8, sigma=0.3, rng=1),
    }[case]()
    solver = get_solver(case.split("-best")[0].replace("-teams", ""))(delta=0.1)
    result = solver.run(env, rng=0, budget=200_000)
    q = solver.query(env)
    assert q.kind == {"lingame": "linear", "lingape": "linear", "icb": "teams", "top-two-teams": "linear"}.get(case, "arms")
    fresh = q.lower_bound_info(env, result.samples, result.info)
    assert fresh["lower_bound_ratio"] == result.info["lower_bound_ratio"] > 0
    assert result.info["T_star"] == fresh["T_star"]


def test_a_query_of_an_unknown_kind_is_refused():
    from combex.identification import Query

    with pytest.raises(InvalidParameterError, match="'kind' parameter of Query.*'arms'.*Got 'bestarm'"):
        Query("bestarm", delta=0.1)


# ------------------------------------------------------------------ the fast yardstick
def _directions(x, theta):
    mu = x @ theta
    b = int(np.argmax(mu))
    others = [i for i in range(x.shape[0]) if i != b]
    return (x[b] - x[others]) / (mu[b] - mu[others])[:, None]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), extra=st.integers(1, 5), d=st.integers(2, 4))
def test_interior_point_brackets_cvxpy_and_every_allocation(seed, extra, d):
    """``method="auto"`` (interior point) against cvxpy on small random instances: its
    certified bracket T_lo <= T* <= T_hi holds cvxpy's value, is at most the 1e-6 asked
    for, and T_lo is below the value of every allocation (each one an upper bound of T*)."""
    rng = np.random.default_rng(seed)
    K = d + extra
    x = rng.normal(size=(K, d))
    theta = rng.normal(size=d)
    lb = characteristic_time(x, theta)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ref = characteristic_time(x, theta, method="cvxpy").T_star
    assume(not caught)  # an inaccurate conic solve is no reference
    assert lb.exact and lb.T_star == lb.T_hi and lb.gap <= 1e-6
    assert lb.T_lo <= ref * (1 + 1e-6) and ref <= lb.T_hi * (1 + 1e-5)
    y = _directions(x, theta)
    assert 2.0 * _design_value(x, y, lb.allocation) == pytest.approx(lb.T_hi, rel=1e-9)
    for p in rng.dirichlet(np.ones(K), size=50):
        assert lb.T_lo <= 2.0 * _design_value(x, y, p) * (1 + 1e-9)


@pytest.mark.parametrize("d", [3, 6])
def test_interior_point_brackets_the_closed_form_even_stopped_early(d):
    gap = 0.5
    x, theta = np.eye(d), np.r_[gap, np.zeros(d - 1)]
    want = 2.0 * (1.0 + np.sqrt(d - 1)) ** 2 / gap**2
    for tol in (1e-6, 0.3):
        lb = characteristic_time(x, theta, method="interior-point", tol=tol)
        assert lb.T_lo <= want * (1 + 1e-9) and want <= lb.T_hi * (1 + 1e-9)
        assert lb.gap <= tol and lb.exact


def test_frank_wolfe_bracket_and_cvxpy_without_certificate():
    rng = np.random.default_rng(3)
    x, theta = rng.normal(size=(6, 3)), rng.normal(size=3)
    ref = characteristic_time(x, theta, method="interior-point")
    fw = characteristic_time(x, theta, method="frank-wolfe")
    assert fw.T_lo <= ref.T_hi * (1 + 1e-9) and ref.T_lo <= fw.T_hi * (1 + 1e-9)
    cv = characteristic_time(x, theta, method="cvxpy")
    assert math.isnan(cv.T_lo) and math.isnan(cv.gap) and cv.T_hi == cv.T_star


def test_epsilon_bracket_is_the_minimum_over_answers():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.3], [0.2, 0.2]])
    lb = characteristic_time(x, [1.0, 0.9], epsilon=0.15)
    assert lb.exact and lb.T_lo <= lb.T_star == lb.T_hi <= lb.T_lo * (1 + 1e-6)
    cv = characteristic_time(x, [1.0, 0.9], epsilon=0.15, method="cvxpy").T_star
    assert lb.T_lo <= cv * (1 + 1e-6) and cv <= lb.T_hi * (1 + 1e-5)


def test_cache_returns_equal_values_and_copies():
    import combex.identification._linear as lbm

    rng = np.random.default_rng(11)
    x, theta = rng.normal(size=(9, 4)), rng.normal(size=4)
    first = characteristic_time(x, theta, sigma=1.5)
    key_count = len(lbm._CACHE)
    first.allocation[:] = -1.0  # the caller's copy only
    first.gaps[:] = -1.0
    again = characteristic_time(x.copy(), list(theta), sigma=1.5)
    assert len(lbm._CACHE) == key_count  # a hit, not a new entry
    assert again.T_star == first.T_star and again.T_lo == first.T_lo and again.best == first.best
    assert np.all(again.allocation >= 0) and again.allocation.sum() == pytest.approx(1.0)
    assert np.all(again.gaps >= 0) and again.allocation is not first.allocation
    # another sigma, epsilon or method is another entry
    assert characteristic_time(x, theta, sigma=3.0).T_star == pytest.approx(4.0 * first.T_star, rel=1e-9)
    assert len(lbm._CACHE) == min(key_count + 1, lbm.CACHE_SIZE)


def test_cache_is_bounded(monkeypatch):
    from collections import OrderedDict

    import combex.identification._linear as lbm

    monkeypatch.setattr(lbm, "_CACHE", OrderedDict())
    monkeypatch.setattr(lbm, "CACHE_SIZE", 3)
    for g in (1.0, 2.0, 3.0, 4.0, 5.0):
        characteristic_time(np.eye(2), [g, 0.0])
    assert len(lbm._CACHE) == 3


# ==================== The unknown-variance T* bracket (combex.identification._unknown_variance) against brute force
def _inner_brute(w, var, c, starts=12):
    """min sum w h(u), u >= 0, sum u = c: every corner, a fine grid (d = 2, 3) and SLSQP from
    many starts: an upper approximation of the true minimum, tight to ~1e-9 here."""
    d = w.size
    best = min(float(w[j] * _h(c, var[j])) for j in range(d))
    if d <= 3:
        g = np.linspace(0.0, 1.0, 401)
        pts = np.array([(a, 1 - a) for a in g]) if d == 2 else np.array(
            [(a, b, 1 - a - b) for a in g[::2] for b in g[::2] if a + b <= 1])
        best = min(best, float(np.min((w * _h(pts * c, var)).sum(axis=1))))
    rng = np.random.default_rng(0)
    for _ in range(starts):
        x0 = rng.dirichlet(np.ones(d)) * c
        r = minimize(lambda u: float(np.sum(w * _h(u, var))), x0, method="SLSQP", bounds=[(0, c)] * d,
                     constraints=[{"type": "eq", "fun": lambda u: u.sum() - c}], options={"ftol": 1e-13})
        if r.success and abs(r.x.sum() - c) < 1e-8 and np.all(r.x >= -1e-12):
            best = min(best, float(np.sum(w * _h(np.clip(r.x, 0, None), var))))
    return best


@settings(max_examples=40, deadline=None)
@given(d=st.integers(2, 5), seed=st.integers(0, 10**6), c=st.floats(0.05, 8.0), wmin=st.sampled_from([1e-6, 0.05]))
def test_inner_bounds_bracket_the_brute_force_minimum(d, seed, c, wmin):
    """Per alternative: the Lagrangian (split) lower bound <= the true minimum <= the cost
    of the returned move, and the move is feasible and within 1% of the minimum."""
    rng = np.random.default_rng(seed)
    var = rng.uniform(0.01, 5.0, d)
    w = np.maximum(rng.dirichlet(np.ones(d) * 0.7), wmin)
    w /= w.sum()
    alts = _Alternatives(var, np.arange(d)[None], np.array([c]), d)
    brute = _inner_brute(w, var, c)
    low = float(alts.lower(w, refine_below=math.inf)[0])
    u = alts.refined_moves(w, np.array([0]))[0]
    up = float(np.sum(w * _h(u, var)))
    assert np.all(u >= 0) and u.sum() == pytest.approx(c, rel=1e-9)
    assert low <= brute * (1 + 1e-9) + 1e-15
    assert up >= low - 1e-15 and up <= brute * 1.01 + 1e-12


def _T_brute(mu, var, members, S, eps, ws):
    """``1 / max_w min_m F_m(w)`` over the given weights, with brute-force inner minima: at
    least T* (every w gives a lower bound of 1 / T*)."""
    alts = [(np.flatnonzero(S ^ m), float(mu[S].sum() - mu[m].sum() + eps)) for m in members if (m != S).any()]
    best = max(min(_inner_brute(w[D], var[D], c, starts=3) for D, c in alts) for w in ws)
    return 1.0 / best


@pytest.mark.parametrize("eps", [0.0, 0.4])
def test_bracket_contains_a_brute_force_T_star_on_a_small_class(eps):
    """Four arms, members of sizes 1-3 (two- and four-arm alternatives): the brute-force
    value at any weights is a lower bound of 1 / T*, so T_lo <= T* <= T_brute over a grid and
    around the returned weights, and T_brute <= T_hi there (T_hi's certificate at w)."""
    members = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 0], [0, 1, 1, 1]], dtype=bool)
    mu = np.array([0.9, 0.3, 0.5, 0.2])
    var = np.array([0.3, 1.5, 0.6, 2.0])
    S = members[int(np.argmax(members @ mu))]
    D = np.full((len(members) - 1, 4), -1)
    c = []
    for r, m in enumerate(x for x in members if (x != S).any()):
        idx = np.flatnonzero(S ^ m)
        D[r, : idx.size] = idx
        c.append(mu[S].sum() - mu[m].sum() + eps)
    b = uv_characteristic_time(mu, var, D, np.array(c))
    rng = np.random.default_rng(1)
    grid = [np.array(k + (8 - sum(k),)) / 8 for k in itertools.product(range(1, 8), repeat=3) if sum(k) < 8]
    near = [b.w * np.exp(rng.normal(0, 0.1, 4)) for _ in range(30)]
    ws = [w / w.sum() for w in grid + near + [b.w]]
    brute = _T_brute(mu, var, members, S, eps, ws)
    # T_lo <= T* <= brute; and at b.w itself the certificate of T_hi holds: brute <= T_hi
    assert b.exact and b.T_lo <= brute * (1 + 1e-9) and brute <= b.T_hi * (1 + 1e-9)
    env = GaussianArms(mu, sigma=np.sqrt(var), rng=0)
    info = uv_lower_bound_info(env, 0.05, 1000, 1, ExplicitFamily(members), eps)
    assert info["T_star"] == pytest.approx(b.T_lo, rel=1e-9)


def test_small_gaps_meet_the_known_variance_T_star():
    """``1/2 log(1 + x^2) ~ x^2 / 2``: with gaps 100x below sigma the unknown-variance T* is
    the known-variance one (cvxpy, combex.identification._bandit) to 0.1%, for Best-K
    with epsilon > 0 (two- and four-arm alternatives); with large gaps it is larger."""
    mu = np.array([1.0, 0.8, 0.5, 0.45, 0.1])
    for scale, close in ((0.01, True), (1.0, False)):
        m = mu * scale
        known = bandit_characteristic_time(m, K=2, epsilon=0.1 * scale, sigma=1.0).T_star
        info = uv_lower_bound_info(GaussianArms(m, sigma=1.0, rng=0), 0.05, 1000, 2, None, 0.1 * scale)
        lo, hi = info["T_star"], 1000 / (info["lower_bound_ratio_range"][0] * math.log(20.0))
        assert lo <= hi and info["lower_bound_exact"]
        assert hi >= known * (1 - 1e-3)  # the unknown-variance costs are the smaller ones
        if close:
            assert lo == pytest.approx(known, rel=1e-3)
        else:
            assert lo > 1.01 * known


def test_large_classes_give_a_certified_upper_bound_of_the_ratio():
    """Past ``max_members`` (here 100 of the C(12, 6) = 924 teams) at epsilon > 0 the
    one-change alternatives give a lower bound of T* (a subset of the alternatives), so the
    ratio is an upper bound and the range's low end is 0; the kind says so. With every team
    the T* is at least as large."""
    rng = np.random.default_rng(3)
    mu, sig = rng.uniform(0, 1, 12), rng.uniform(0.3, 2, 12)
    env = GaussianArms(mu, sigma=sig, rng=0)
    info = uv_lower_bound_info(env, 0.05, 1000, 6, None, 0.3, max_members=100)
    assert info["lower_bound_exact"] is False and info["lower_bound_ratio_range"][0] == 0.0
    assert "certified upper bound" in info["lower_bound_ratio_kind"] and "one-change" in info["lower_bound_ratio_kind"]
    full = uv_lower_bound_info(env, 0.05, 1000, 6, None, 0.3)
    assert full["lower_bound_ratio_range"][0] > 0
    assert full["T_star"] >= info["T_star"] * (1 - 1e-9)


def test_ties_have_no_ratio():
    """An exact tie at epsilon = 0 (T* infinite): no ratio is reported."""
    env = GaussianArms([1.0, 1.0, 0.0], sigma=1.0, rng=0)
    assert uv_lower_bound_info(env, 0.05, 100, 1, None, 0.0) == {}


# ----------------------------------------------------------------------------- Bernoulli (KL)
def test_kl_bracket_meets_garivier_kaufmann_theorem_5():
    """Best arm, Bernoulli, epsilon = 0: the bracket contains the exact T* of Theorem 5 and
    is exact to 0.1%."""
    from combex.identification import kl_characteristic_time

    for mu in ([0.9, 0.7, 0.5, 0.3], [0.5, 0.45, 0.1], [0.02, 0.01, 0.005]):
        mu = np.array(mu)
        exact = bandit_characteristic_time(mu, divergence="bernoulli").T_star
        S = np.zeros(mu.size, dtype=bool)
        S[0] = True
        D = np.stack([np.zeros(mu.size - 1, dtype=int), np.arange(1, mu.size)], axis=1)
        b = kl_characteristic_time(mu, S, D, mu[0] - mu[1:])
        assert b.exact and b.T_lo <= exact * (1 + 1e-9) <= b.T_hi * (1 + 2e-9)


def test_kl_bracket_with_epsilon_against_brute_force():
    """Two Bernoulli arms with epsilon = 0.1: T* by brute force over w and the alternative's
    common point (``lambda_2 = lambda_1 + eps``), against the bracket; the 1/2-sub-Gaussian
    T* is 12% larger here."""
    from scipy.special import rel_entr

    def kl(p, q):
        return rel_entr(p, q) + rel_entr(1 - p, 1 - q)

    mu, eps = np.array([0.8, 0.5]), 0.1
    x = np.linspace(1e-6, 0.9 - 1e-6, 20001)
    best = max(float(np.min(w * kl(mu[0], x) + (1 - w) * kl(mu[1], x + eps))) for w in np.linspace(0.001, 0.999, 999))
    from combex.identification import kl_lower_bound_info

    res = kl_lower_bound_info(mu, 0.05, 1000, 1, None, eps)
    assert res["lower_bound_exact"]
    assert res["T_star"] <= 1.0 / best * (1 + 1e-6) and res["T_star"] >= 1.0 / best * (1 - 2e-3)
    gauss = bandit_characteristic_time(mu, epsilon=eps, sigma=0.5).T_star
    assert gauss > 1.1 * res["T_star"]


def test_bernoulli_runs_report_the_kl_T_star_on_every_structure():
    """A Bernoulli instance is measured against its own (KL) T*, whatever the structure: a
    class (top-2 of 4), epsilon > 0; before, the class got no ratio and epsilon > 0 the
    1/2-sub-Gaussian T* labelled exact."""
    from combex.environments import BernoulliArms
    from combex.solvers import CombGame, TopTwo

    env = BernoulliArms([0.9, 0.7, 0.5, 0.3], rng=0)
    res = CombGame(delta=0.05, decision_class=TopK(4, 2)).run(env, rng=1)
    assert "Bernoulli" in res.info["lower_bound_ratio_kind"] and res.info["lower_bound_exact"]
    assert res.info["T_star"] < bandit_characteristic_time(env.means(), K=2, sigma=0.5).T_star
    assert res.info["lower_bound_ratio"] == pytest.approx(res.samples / (res.info["T_star"] * math.log(20.0)))
    eps = TopTwo(delta=0.05, epsilon=0.1).run(env, rng=1)
    assert "Bernoulli" in eps.info["lower_bound_ratio_kind"]
    assert eps.info["T_star"] < 0.7 * bandit_characteristic_time(env.means(), epsilon=0.1, sigma=0.5).T_star


@settings(max_examples=40, deadline=None)
@given(d=st.integers(2, 5), seed=st.integers(0, 10**6), frac=st.floats(0.05, 0.95))
def test_kl_moves_bracket_the_brute_force_minimum(d, seed, frac):
    """Per alternative (Bernoulli): the dual value <= the minimum <= the move's cost, the
    move feasible (inside the means' range, summing to c) and within 1e-6 of the minimum."""
    from combex.identification._unknown_variance import _KLAlternatives, _kl_move

    rng = np.random.default_rng(seed)
    mu = rng.uniform(0.0, 1.0, d)
    S = rng.random(d) < 0.5
    m = np.where(S, mu, 1 - mu)
    c = frac * m.sum()
    w = np.maximum(rng.dirichlet(np.ones(d)), 1e-4)
    alts = _KLAlternatives(mu, S, np.arange(d)[None], np.array([c]), d)
    u, dual = alts._solve(w)
    u = u[0]
    cost = float(np.sum(w * _kl_move(m, u)))
    assert np.all(u >= 0) and np.all(u < m + 1e-15) and u.sum() == pytest.approx(c, rel=1e-9)
    brute = cost
    for _ in range(12):
        x0 = rng.dirichlet(np.ones(d)) * c
        r = minimize(lambda v: float(np.sum(w * _kl_move(m, np.clip(v, 0, m * (1 - 1e-12))))), x0, method="SLSQP",
                     bounds=[(0, mj * (1 - 1e-9)) for mj in m],
                     constraints=[{"type": "eq", "fun": lambda v: v.sum() - c}], options={"ftol": 1e-14})
        if r.success and abs(r.x.sum() - c) < 1e-9:
            brute = min(brute, float(np.sum(w * _kl_move(m, np.clip(r.x, 0, None)))))
    assert dual[0] <= brute * (1 + 1e-9) + 1e-15
    assert cost <= brute * (1 + 1e-6) + 1e-15


def test_known_variance_classes_past_enumeration_say_their_ratio_is_an_upper_bound():
    """The Gaussian T* of a class too large to enumerate uses the one-change alternatives: a
    subset, so a smaller T* (checked against the enumerated T* on C(12, 6) teams cut to 100),
    and the result says the ratio is an upper bound; an enumerated class says nothing."""
    from combex.identification import bandit_lower_bound_info

    rng = np.random.default_rng(0)
    mu = rng.uniform(0, 1, 12)
    full = bandit_characteristic_time(mu, decision_class=TopK(12, 6), epsilon=0.2)
    cut = bandit_characteristic_time(mu, decision_class=TopK(12, 6), epsilon=0.2, max_members=100)
    assert full.exact and not cut.exact and cut.T_star <= full.T_star * (1 + 1e-6)
    env = GaussianArms(mu, sigma=1.0, rng=0)
    assert "lower_bound_ratio_kind" not in bandit_lower_bound_info(env, 0.05, 1000, decision_class=TopK(12, 6),
                                                                   epsilon=0.2)
    big = GaussianArms(rng.uniform(0, 1, 16), sigma=1.0, rng=0)  # C(16, 8) = 12,870 teams
    info = bandit_lower_bound_info(big, 0.05, 1000, decision_class=TopK(16, 8), epsilon=0.2)
    assert info["lower_bound_exact"] is False and info["lower_bound_ratio_kind"].startswith("upper bound of the ratio")


# ==================== The yardstick of team problems: the moment-matrix bound (combex.identification._moments)
def _both(theta, k, sigma, eps, **kw):
    dc = TopK(theta.size, k)
    xs = np.asarray(dc.argmax(theta), dtype=bool)
    lp = swap_T_star_lower_bound(theta, xs, exchange_pairs(dc, xs), k, sigma=sigma, epsilon=eps)
    mb, info = swap_T_star_moment_bound(theta, xs, exchange_pairs(dc, xs), k, sigma=sigma, epsilon=eps, **kw)
    return lp, mb, info


@pytest.mark.parametrize("n,k,seed,eps", [(8, 3, 0, 0.0), (7, 2, 1, 0.0), (9, 4, 2, 0.0), (8, 3, 4, 0.2),
                                          (10, 4, 5, 0.3)])
def test_moment_bound_is_certified_and_close_to_the_exact_T_star(n, k, seed, eps):
    """Measured: within 1-3.5% of the exact T* (the LP: 12-25% below)."""
    theta = kuroki_synthetic_means(n, k, 0.3, rng=seed)
    X = np.array(list(TopK(n, k).enumerate()), dtype=float)
    exact = characteristic_time(X, theta, sigma=1.5, epsilon=eps).T_star
    lp, mb, info = _both(theta, k, 1.5, eps)
    assert info["method"] == "moment"
    assert lp <= mb <= exact * (1 + 1e-6)
    assert mb >= 0.95 * exact and lp <= 0.9 * exact  # the moment bound closes most of the LP's gap


@settings(max_examples=25, deadline=None)
@given(n=st.integers(5, 8), k=st.integers(2, 4), eps=st.sampled_from([0.0, 0.05, 0.25]),
       sigma=st.sampled_from([0.5, 2.0]), seed=st.integers(0, 10**6), offset=st.sampled_from([0.0, 50.0]))
def test_moment_bound_is_never_above_the_exact_T_star(n, k, eps, sigma, seed, offset):
    """Random means (an offset, near-ties, noise scales), brute force over all k-sets."""
    k = min(k, n - 2)
    rng = np.random.default_rng(seed)
    theta = offset + rng.normal(size=n)
    X = np.array(list(TopK(n, k).enumerate()), dtype=float)
    ct = characteristic_time(X, theta, sigma=sigma, epsilon=eps)
    lp, mb, _ = _both(theta, k, sigma, eps)
    if not np.isfinite(ct.T_star):
        return
    # several epsilon-good teams: the exchange argument makes the best team's bound valid for T*_eps
    assert lp <= mb * (1 + 1e-9)
    assert mb <= ct.T_star * (1 + 1e-6)


def test_any_guide_design_still_gives_a_certified_bound(monkeypatch):
    """The SDP only guides the certificate: with a poor design (uniform over k-sets, or a
    random mixture of teams) the LP dual still bounds T* from below -- looser, never above."""
    import combex.identification._moments as mbm

    n, k = 8, 3
    theta = kuroki_synthetic_means(n, k, 0.3, rng=0)
    exact = characteristic_time(np.array(list(TopK(n, k).enumerate()), dtype=float), theta, sigma=1.5).T_star
    teams = np.array(list(TopK(n, k).enumerate()), dtype=float)
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(len(teams)) * 0.3)
    designs = [teams.T @ teams / len(teams), (teams.T * w) @ teams]
    for M0 in designs:
        monkeypatch.setattr(mbm, "_guide", lambda V, c2, k_, tol, rounds, add, M0=M0: (M0, float("nan"), 0))
        mbm._CACHE.clear()
        lp, mb, info = _both(theta, k, 1.5, 0.0)
        assert lp <= mb <= exact * (1 + 1e-6)
    mbm._CACHE.clear()


def test_exchange_argument_the_best_team_has_the_smallest_swap_bound():
    """For top-k, the single-swap bound of the best team is at most that of every
    epsilon-good team (the permutation argument of team_T_star_lower_bound), so it bounds
    T*_eps = min over them."""
    theta = np.array([1.0, 0.95, 0.9, 0.6, 0.55, 0.2, 0.1])
    k, eps = 3, 0.5
    dc = TopK(theta.size, k)
    best = np.asarray(dc.argmax(theta), dtype=bool)
    at_best = swap_T_star_lower_bound(theta, best, exchange_pairs(dc, best), k, sigma=1.0, epsilon=eps)
    good = 0
    for S in itertools.combinations(range(theta.size), k):
        x = np.zeros(theta.size, dtype=bool)
        x[list(S)] = True
        if theta[best].sum() - theta[x].sum() <= eps and not np.array_equal(x, best):
            good += 1
            assert at_best <= swap_T_star_lower_bound(theta, x, exchange_pairs(dc, x), k, sigma=1.0,
                                                      epsilon=eps) * (1 + 1e-9)
    assert good >= 3


@pytest.mark.parametrize("method", ["lp", "moment"])
def test_team_bound_with_several_epsilon_good_teams_is_below_T_star_eps(method):
    means = [1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1]
    env = FullBandit(means, k=3, rng=0)
    X = np.array(list(TopK(7, 3).enumerate()), dtype=float)
    sigma = float(np.sqrt(3))
    exact = characteristic_time(X, np.asarray(means), sigma=sigma, epsilon=0.65).T_star
    t, kind = team_T_star_lower_bound(env, epsilon=0.65, method=method)
    assert 0 < t <= exact * (1 + 1e-6)
    assert "several epsilon-good" in kind
    if method == "moment":  # (the LP at the best team ties with the one-alternative bound here)
        assert t >= team_T_star_lower_bound(env, epsilon=0.65)[0] * 1.05
        assert "exchange argument" in kind and "moment matrix" in kind


def test_team_bound_refuses_bad_arguments_and_says_when_it_falls_back():
    env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    with pytest.raises(InvalidParameterError, match="method"):
        team_T_star_lower_bound(env, method="sdp")
    with pytest.raises(InvalidParameterError, match="epsilon"):
        team_T_star_lower_bound(env, epsilon=-1.0)
    with pytest.raises(InvalidParameterError, match="sigma"):
        team_T_star_lower_bound(env, sigma=0.0)
    theta = np.asarray(env.means())
    lp, mb, info = _both(theta, 3, 1.0, 0.0, max_members=4)
    assert info["method"] == "lp" and "max_members" in info["fallback"] and mb == lp


@pytest.mark.parametrize("name", ["ICB", "SAQM"])
def test_seed_full_bandit_results_carry_the_same_yardstick_as_the_glr_solvers(name):
    """ICB and SAQM results report lower_bound_ratio: the exact T*_eps on small classes
    (the enumerated teams, the GLR solvers' noise scale), the certified LP bound beyond."""
    import math

    import combex.solvers as cs
    from combex.experiments import make_instance
    from combex.identification import glr_team_sigma

    env = make_instance("kuroki-synthetic", rng=3, n=8, k=3, gap=0.5)
    res = getattr(cs, name)(delta=0.05, epsilon=0.2).run(env, rng=0)
    X = np.array(list(TopK(8, 3).enumerate()), dtype=float)
    T = characteristic_time(X, np.asarray(env.means()), sigma=glr_team_sigma(env.problem.noise, 3), epsilon=0.2).T_star
    assert res.info["T_star"] == pytest.approx(T, rel=1e-6)
    assert res.info["lower_bound_ratio"] == pytest.approx(res.samples / (T * math.log(20)), rel=1e-6)
    big = make_instance("kuroki-synthetic", rng=3, n=14, k=7, gap=0.5)  # 3,432 teams: the LP bound
    res = getattr(cs, name)(delta=0.05, epsilon=0.2).run(big, rng=0)
    t_low, kind = team_T_star_lower_bound(big, epsilon=0.2)
    assert res.info["T_star_lower"] == t_low and res.info["lower_bound_ratio_kind"] == kind
    assert res.info["lower_bound_ratio"] == pytest.approx(res.samples / (t_low * math.log(20)))


def test_cli_run_prints_the_ratio_to_the_lower_bound_on_every_run(capsys, tmp_path):
    import csv

    from combex.cli import main

    assert main(["run", "icb", "--instance", "kuroki-synthetic", "--set", "n=14", "--set", "k=7", "--set", "gap=0.5",
                 "--runs", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    runs = [line for line in out.splitlines() if line.strip().startswith("run ")]
    assert len(runs) == 2 and all("samples/(T* log(1/delta)): <= " in line for line in runs)  # LP yardstick
    assert "mean samples/(T* log(1/delta)): <= " in out
    assert main(["run", "icb", "--instance", "kuroki-synthetic", "--set", "n=8", "--set", "k=3", "--set", "gap=0.5",
                 "--no-progress"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("run 0"))
    assert "samples/(T* log(1/delta)): " in line and "<=" not in line  # exact T* on 56 teams
    out = tmp_path / "r.csv"
    assert main(["run", "icb", "--instance", "kuroki-synthetic", "--set", "n=8", "--set", "k=3", "--set", "gap=0.5",
                 "--no-progress", "--out", str(out)]) == 0
    row = next(csv.DictReader(out.open()))
    assert float(row["lower_bound_ratio"]) == pytest.approx(float(line.split("delta)): ")[1].replace(",", "")), rel=1e-2)
