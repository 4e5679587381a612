"""Tests of T*(theta), the characteristic time of linear best-arm identification."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from combex.exceptions import InvalidParameterError
from combex.allocations import xy_value as _design_value
from combex.identification import characteristic_time, check_features, linear_lower_bound


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
