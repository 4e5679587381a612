"""Designs (G, XY, L1), supports for combinatorial classes, and their error paths."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from combex.allocations import (
    Design,
    g_optimal_design,
    g_value,
    l1_design,
    max_g_value_topk,
    pairwise_differences,
    support_from_decision_class,
    topk_support,
    uniform_design,
    uniform_topk_g_value,
    uniform_topk_information,
    xy_optimal_design,
    xy_value,
)
from combex.allocations import _cvx
from combex.exceptions import AllocationError, ConvergenceWarning, InvalidParameterError

try:
    from combex.oracles import TopK
except ImportError:  # pragma: no cover - stand-in while combex.oracles is being written
    from combex.oracles import DecisionClass

    class TopK(DecisionClass):  # type: ignore[no-redef]
        def __init__(self, n, k):
            self.n, self.k = n, k

        def argmax(self, weights):
            m = np.zeros(self.n, dtype=bool)
            m[np.argsort(-np.asarray(weights), kind="stable")[: self.k]] = True
            return m


def random_X(m, d, seed):
    return np.random.default_rng(seed).normal(size=(m, d))


def simplex_corners(d):
    """Vertices of a regular simplex in R^d centred away from the origin: e_1..e_d, which
    are pairwise equidistant, plus the point c 1 with the same distance to each e_i."""
    c = (1 + math.sqrt(d + 1)) / d
    return np.vstack([np.eye(d), c * np.ones((1, d))])


# ------------------------------------------------------------------ known answers
@pytest.mark.parametrize("method", ["cvxpy", "frank-wolfe"])
def test_g_standard_basis_uniform(method):
    d = g_optimal_design(np.eye(5), method=method)
    np.testing.assert_allclose(d.weights, 0.2, atol=1e-4)
    assert abs(d.value - 5) < 1e-3 and abs(d.kw_gap) < 1e-3
    assert d.criterion == "G" and d.method == method
    assert (d.solver is None) == (method == "frank-wolfe")


@pytest.mark.parametrize("method", ["cvxpy", "frank-wolfe"])
def test_g_regular_simplex_uniform(method):
    # regular simplex with d + 1 corners in R^d, centroid at the origin
    d = 4
    V = simplex_corners(d)
    V = V - V.mean(axis=0)
    assert np.allclose(np.linalg.norm(V[:, None] - V[None], axis=2)[~np.eye(d + 1, dtype=bool)], math.sqrt(2))
    des = g_optimal_design(V, method=method)
    np.testing.assert_allclose(des.weights, 1 / (d + 1), atol=1e-4)
    assert abs(des.value - d) < 1e-3


@pytest.mark.parametrize("seed, m, d", [(0, 12, 3), (1, 30, 5), (2, 40, 8)])
def test_g_cvxpy_and_fw_agree_and_kw(seed, m, d):
    X = random_X(m, d, seed)
    a = g_optimal_design(X, method="cvxpy")
    b = g_optimal_design(X, method="frank-wolfe", tol=1e-7)
    # Kiefer-Wolfowitz: the G-value equals d at the optimum
    assert abs(a.kw_gap) < 1e-3 * d and abs(b.kw_gap) < 1e-5 * d
    assert abs(a.value - b.value) < 1e-3
    assert b.value == pytest.approx(g_value(X, b.weights))
    # the D-optimal information matrix is unique
    np.testing.assert_allclose(a.information(X), b.information(X), atol=1e-3)
    assert np.isclose(b.weights.sum(), 1) and np.all(b.weights >= 0)
    assert np.all(b.weights[b.support] > 0) and b.support_weights.sum() == pytest.approx(1)
    # the optimal design beats the uniform one
    assert b.value <= uniform_design(m, X=X).value + 1e-9


def test_g_fw_without_away_steps_still_converges():
    X = random_X(50, 4, 3)
    d = g_optimal_design(X, method="frank-wolfe", away_steps=False, tol=1e-4)
    assert d.converged and d.kw_gap <= 4e-4 + 1e-12


def test_g_fw_max_iter_warns():
    X = random_X(200, 6, 4)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        d = g_optimal_design(X, method="frank-wolfe", max_iter=2)
    assert not d.converged and d.kw_gap > 0


def test_design_is_frozen():
    d = g_optimal_design(np.eye(2))
    with pytest.raises(ValueError):
        d.weights[0] = 1.0
    with pytest.raises(Exception):
        d.value = 3.0  # type: ignore[misc]
    assert "criterion='G'" in repr(d)


# ------------------------------------------------------------------ XY
@pytest.mark.parametrize("seed, m, d", [(0, 8, 2), (1, 10, 3)])
def test_xy_cvxpy_and_fw_agree(seed, m, d):
    X = random_X(m, d, seed)
    a = xy_optimal_design(X, method="cvxpy")
    b = xy_optimal_design(X, method="frank-wolfe", tol=1e-3)
    Y = pairwise_differences(X)
    assert a.value == pytest.approx(xy_value(X, Y, a.weights))
    assert abs(a.value - b.value) <= 1e-3 * a.value
    # certificate: FW value minus its gap is a lower bound on the optimum
    assert b.value - b.gap <= a.value * (1 + 1e-6)
    assert b.criterion == "XY" and b.kw_gap is None


@pytest.mark.parametrize("seed, m, d", [(0, 8, 2), (1, 10, 3), (2, 12, 4)])
def test_xy_interior_point_certificate_brackets_cvxpy(seed, m, d):
    """The interior-point design's certified bracket [value - gap, value] holds the optimum
    (cvxpy's value, accurate to ~1e-7) and is as narrow as asked."""
    X = random_X(m, d, seed)
    a = xy_optimal_design(X, method="cvxpy")
    b = xy_optimal_design(X, method="interior-point", tol=1e-6)
    assert b.method == "interior-point" and b.converged and b.gap <= 1e-6 * b.value
    assert b.value - b.gap <= a.value * (1 + 1e-6) and a.value <= b.value * (1 + 1e-5)
    assert b.value == pytest.approx(xy_value(X, pairwise_differences(X), b.weights))


def test_xy_interior_point_stopped_early_stays_certified():
    X = random_X(10, 3, 4)
    exact = xy_optimal_design(X, method="cvxpy").value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = xy_optimal_design(X, method="interior-point", tol=1e-9, max_iter=3)
    assert not b.converged and b.value - b.gap <= exact * (1 + 1e-6) <= b.value * (1 + 1e-5)


def near_duplicate(d, eps):
    """e_1..e_d plus x_{d+1} = cos(eps) e_1 + sin(eps) e_2 (the LinGapE/Soare example)."""
    X = np.vstack([np.eye(d), np.r_[np.cos(eps), np.sin(eps), np.zeros(d - 2)]])
    return X


@pytest.mark.parametrize("method", ["cvxpy", "frank-wolfe", "interior-point"])
def test_xy_near_duplicate_informative_direction(method):
    d = 3
    X = near_duplicate(d, 0.1)
    Y = (X[0] - X[d])[None, :]  # the hard direction x_1 - x_{d+1}, close to e_2
    des = xy_optimal_design(X, Y, method=method, tol=1e-4)
    # the informative arm is e_2; the L1 design agrees: y = (1 - cos) e_1 - sin e_2
    assert des.weights[1] > 0.8
    l1 = l1_design(X, Y[0])
    assert np.argmax(l1.p) == 1
    assert des.value == pytest.approx(l1.variance_bound, rel=1e-3)


def test_xy_active_directions_reuse_problem():
    X = random_X(8, 3, 5)
    Y = pairwise_differences(X)
    active = np.zeros(len(Y), dtype=bool)
    active[:5] = True
    full = xy_optimal_design(X, Y, method="cvxpy")
    prob = _cvx.get_xy_problem(8, 3, len(Y))
    part = xy_optimal_design(X, Y, method="cvxpy", active=active)
    assert _cvx.get_xy_problem(8, 3, len(Y)) is prob  # built once, re-solved (DPP)
    assert prob.problem.is_dpp()
    assert part.value == pytest.approx(xy_value(X, Y[active], part.weights))
    assert part.value <= full.value + 1e-6
    fw = xy_optimal_design(X, Y, method="frank-wolfe", active=active)
    assert abs(fw.value - part.value) <= 1e-3 * part.value


# ------------------------------------------------------------------ L1 design
def test_l1_canonical_basis():
    r = l1_design(np.eye(4), [0.0, 1.0, -1.0, 0.0])
    np.testing.assert_allclose(r.p, [0, 0.5, 0.5, 0])
    assert r.rho == pytest.approx(2.0) and r.variance_bound == pytest.approx(4.0)  # paper: rho = 4
    np.testing.assert_allclose(r.w, [0, 1, -1, 0])


def test_l1_lingape_example_and_brute_force():
    # Section 5.2: x1 = (-10, 10), x2 = (-9, 10), x3 = (-1, 0); y = x1 - x2 = x3
    X = np.array([[-10.0, 10.0], [-9.0, 10.0], [-1.0, 0.0]])
    r = l1_design(X, X[0] - X[1])
    np.testing.assert_allclose(r.p, [0, 0, 1], atol=1e-9)
    assert r.rho == pytest.approx(1.0)
    # brute force over pairs (basic solutions of the LP) on a random instance
    Xr = random_X(6, 2, 7)
    y = Xr[0] - Xr[3]
    best = min(
        np.abs(np.linalg.solve(Xr[list(c)].T, y)).sum()
        for c in itertools.combinations(range(6), 2)
        if abs(np.linalg.det(Xr[list(c)])) > 1e-12
    )
    r2 = l1_design(Xr, y)
    assert r2.rho == pytest.approx(best, rel=1e-8)
    np.testing.assert_allclose(Xr.T @ r2.w, y, atol=1e-9)
    # Appendix B: rho^2 = sum w^2 / p  and y^T A(p*)^{-1} y <= rho^2 on the span
    s = r2.support
    assert (r2.w[s] ** 2 / r2.p[s]).sum() == pytest.approx(r2.variance_bound)


def test_l1_errors():
    with pytest.raises(AllocationError, match="not in the span"):
        l1_design(np.array([[1.0, 0.0], [2.0, 0.0]]), [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="nonzero"):
        l1_design(np.eye(2), [0.0, 0.0])
    with pytest.raises(InvalidParameterError, match="shape"):
        l1_design(np.eye(2), [1.0, 0.0, 0.0])


# ------------------------------------------------------------------ supports
@pytest.mark.parametrize("n, k", [(5, 2), (6, 2), (8, 4), (9, 3), (7, 1), (7, 6)])
def test_topk_support_spans_and_g_value(n, k):
    S = topk_support(n, k)
    assert S.dtype == bool and np.all(S.sum(axis=1) == k)
    assert np.linalg.matrix_rank(S.astype(float)) == n
    assert len({r.tobytes() for r in S}) == len(S)
    des = g_optimal_design(S.astype(float))
    assert abs(des.kw_gap) < 1e-4 * n
    # over the whole class the support design is no better than the uniform one over
    # all k-subsets, whose G-value is n (closed form, checked by enumeration)
    A_unif = uniform_topk_information(n, k)
    assert uniform_topk_g_value(n, k) == pytest.approx(n)
    assert max_g_value_topk(A_unif, k) == pytest.approx(n)
    assert max_g_value_topk(des.information(S.astype(float)), k) >= n - 1e-6


def test_uniform_topk_information_matches_enumeration():
    n, k = 6, 3
    chis = np.array([np.isin(np.arange(n), c) for c in itertools.combinations(range(n), k)], dtype=float)
    np.testing.assert_allclose(uniform_topk_information(n, k), chis.T @ chis / len(chis))
    assert uniform_topk_information(1, 1).tolist() == [[1.0]]
    assert uniform_topk_g_value(1, 1) == 1.0


def test_topk_support_errors():
    with pytest.raises(AllocationError, match="rank 1 < n"):
        topk_support(4, 4)
    assert topk_support(1, 1).tolist() == [[True]]
    with pytest.raises(InvalidParameterError, match="'k' parameter of topk_support"):
        topk_support(4, 5)
    with pytest.raises(AllocationError, match="singular"):
        uniform_topk_g_value(3, 3)
    with pytest.raises(InvalidParameterError, match="limit"):
        max_g_value_topk(np.eye(30), 15)


@pytest.mark.parametrize("n, k", [(6, 2), (10, 5), (12, 1)])
def test_support_from_decision_class(n, k):
    S = support_from_decision_class(TopK(n, k), rng=0)
    assert np.linalg.matrix_rank(S.astype(float)) == n
    assert np.all(S.sum(axis=1) == k)
    assert len({r.tobytes() for r in S}) == len(S)
    S2 = support_from_decision_class(TopK(n, k), rng=0)
    assert np.array_equal(S, S2)  # deterministic given rng
    des = g_optimal_design(S.astype(float))
    assert abs(des.kw_gap) < 1e-4 * n


def test_support_from_decision_class_rank_deficient():
    with pytest.raises(AllocationError, match="rank 1 < n = 3"):
        support_from_decision_class(TopK(3, 3), n_random=5, rng=0)

    class Bad:
        n = 3

        def argmax(self, weights):
            return np.ones(2, dtype=bool)

    with pytest.raises(InvalidParameterError, match="shape"):
        support_from_decision_class(Bad())


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("fn", [g_optimal_design, xy_optimal_design])
def test_bad_candidates(fn):
    with pytest.raises(InvalidParameterError, match="rank 1"):
        fn(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]))
    with pytest.raises(InvalidParameterError, match="non-empty"):
        fn(np.zeros((0, 3)))
    with pytest.raises(InvalidParameterError, match="finite"):
        fn(np.array([[1.0, np.inf], [0.0, 1.0]]))
    with pytest.raises(InvalidParameterError, match="'method' parameter"):
        fn(np.eye(2), method="newton")
    with pytest.raises(InvalidParameterError, match="'tol' parameter"):
        fn(np.eye(2), tol=0.0)
    with pytest.raises(InvalidParameterError, match="'solver' parameter"):
        fn(np.eye(2), method="cvxpy", solver="NOPE")


def test_xy_bad_directions():
    with pytest.raises(InvalidParameterError, match="'Y' parameter"):
        xy_optimal_design(np.eye(2), np.ones((3, 3)))
    with pytest.raises(InvalidParameterError, match="at least one direction"):
        xy_optimal_design(np.eye(2), np.zeros((0, 2)))
    with pytest.raises(InvalidParameterError, match="nonzero"):
        xy_optimal_design(np.eye(2), np.zeros((2, 2)))
    with pytest.raises(InvalidParameterError, match="'active' parameter"):
        xy_optimal_design(np.eye(2), np.ones((2, 2)), active=[False, False])
    with pytest.raises(InvalidParameterError, match="at least 2 rows"):
        xy_optimal_design(np.array([[1.0]]))


@pytest.mark.parametrize("status", ["infeasible", "solver_error", "unbounded"])
def test_cvxpy_failure_raises_allocation_error(monkeypatch, status):
    import cvxpy as cp

    def fake_solve(self, *args, **kwargs):
        if status == "solver_error":
            raise cp.error.SolverError("boom")
        self._status = status
        return None

    monkeypatch.setattr(cp.Problem, "solve", fake_solve)
    monkeypatch.setattr(cp.Problem, "status", property(lambda self: getattr(self, "_status", None)))
    with pytest.raises(AllocationError, match=r"CLARABEL.*(status 'infeasible'|failed|status 'unbounded').*(solver='SCS'|frank-wolfe)"):
        g_optimal_design(np.eye(3), method="cvxpy", solver="CLARABEL")
    with pytest.raises(AllocationError, match="SCS"):
        xy_optimal_design(np.eye(2), method="cvxpy", solver="SCS")


def test_cvxpy_inaccurate_warns(monkeypatch):
    import cvxpy as cp

    real = cp.Problem.solve

    def inaccurate(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        self._status = cp.OPTIMAL_INACCURATE
        return out

    monkeypatch.setattr(cp.Problem, "solve", inaccurate)
    monkeypatch.setattr(cp.Problem, "status", property(lambda self: getattr(self, "_status", None)))
    with pytest.warns(ConvergenceWarning, match="optimal_inaccurate"):
        d = g_optimal_design(np.eye(3), method="cvxpy")
    assert abs(d.value - 3) < 1e-3


def test_uniform_design_and_errors():
    d = uniform_design(3, X=np.eye(3))
    assert d.value == pytest.approx(3) and d.kw_gap == pytest.approx(0)
    assert np.isnan(uniform_design(2).value)
    with pytest.raises(InvalidParameterError, match="'n_candidates' parameter"):
        uniform_design(0)
    with pytest.raises(InvalidParameterError, match="3 rows"):
        uniform_design(3, X=np.eye(2))
    with pytest.raises(AllocationError, match="singular"):
        g_value(np.eye(2), [1.0, 0.0])
    assert isinstance(d, Design)


# ---------------------------------------------------------------- the Frank-Wolfe direction
def test_simplex_maxmin_reaches_the_value_of_the_lp():
    """``argmax_{z in simplex} min_h <G_h, z - x>``: a point of the simplex whose value is
    the LP optimum, for one row (a vertex), two rows (the closed form) and more (the LP on
    scaled rows), with gradients of very different scales."""
    from scipy.optimize import linprog

    from combex.allocations import simplex_maxmin

    rng = np.random.default_rng(0)
    for _ in range(150):
        m, k = int(rng.integers(1, 6)), int(rng.integers(2, 8))
        G = rng.normal(size=(m, k)) * 10.0 ** rng.integers(-6, 7)
        x = rng.dirichlet(np.ones(k))
        z = simplex_maxmin(G, x)
        assert z.min() >= 0 and z.sum() == pytest.approx(1.0)
        c = np.zeros(k + 1)
        c[-1] = -1
        r = linprog(c, A_ub=np.hstack([-G, np.ones((m, 1))]), b_ub=-(G @ x),
                    A_eq=np.hstack([np.ones((1, k)), np.zeros((1, 1))]), b_eq=[1],
                    bounds=[(0, None)] * k + [(None, None)], method="highs")
        got = float(np.min(G @ (z - x)))
        assert got == pytest.approx(-r.fun, rel=1e-6, abs=1e-7 * float(np.abs(G).max()))
        if m == 1:
            assert z[int(np.argmax(G[0]))] == 1.0
