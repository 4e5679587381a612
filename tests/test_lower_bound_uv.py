"""The unknown-variance T* bracket (combex.identification._unknown_variance) against brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from combex.environments import GaussianArms
from combex.identification import bandit_characteristic_time, uv_characteristic_time, uv_lower_bound_info
from combex.identification._unknown_variance import _Alternatives, _h
from combex.oracles import ExplicitFamily, TopK


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
