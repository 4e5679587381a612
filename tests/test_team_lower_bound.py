"""The yardstick of team problems: the moment-matrix bound (combex.identification._moments)
and team_T_star_lower_bound are certified (never above the exact T*, brute force over all
k-sets, whatever design guides the certificate), never below the LP bound, and valid for
every epsilon-good team by the exchange argument; the seed full-bandit solvers and
`combex run` report the same ratio."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combex.environments import FullBandit, kuroki_synthetic_means
from combex.exceptions import InvalidParameterError
from combex.identification import (
    characteristic_time,
    exchange_pairs,
    swap_T_star_lower_bound,
    swap_T_star_moment_bound,
    team_T_star_lower_bound,
)
from combex.oracles import TopK


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
