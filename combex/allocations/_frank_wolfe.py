"""Solver-free design algorithms: Frank-Wolfe with away steps.

G-optimal designs are computed through the equivalent D-optimal problem
``max_p log det A(p)`` (Kiefer-Wolfowitz: the same ``p`` minimizes ``max_x x^T A^{-1} x``
and the minimum is ``d``) by the Fedorov-Wynn / Frank-Wolfe method with closed-form line
search and Wolfe-Atwood away (drop) steps (Todd and Yildirim 2007; Todd, *Minimum-Volume
Ellipsoids*, 2016). The Frank-Wolfe duality gap of ``log det`` at ``p`` is
``max_i g_i - d`` with ``g_i = x_i^T A(p)^{-1} x_i``: the iteration stops when
``max_i g_i <= (1 + tol) d``, i.e. when the G-value is within a factor ``1 + tol`` of the
optimum ``d``.

XY-optimal designs minimize the non-smooth ``f(p) = max_j y_j^T A(p)^{-1} y_j``. We run
away-step Frank-Wolfe on the log-sum-exp smoothing
``F_eta(p) = (s / eta) log sum_j exp(eta v_j(p) / s)`` (``f <= F_eta <= f + s log|Y| / eta``)
with exact line search along the segment (rank-one formulas make each evaluation O(|Y|)),
sharpening ``eta`` by phases. For any weights ``mu`` on ``Y`` the bound
``f* >= 2 sum_j mu_j v_j(p) - max_i x_i^T A^{-1} B_mu A^{-1} x_i`` (``B_mu = sum_j mu_j
y_j y_j^T``; convexity of ``sum_j mu_j v_j <= f``) certifies the optimality gap, which is
the stopping rule: ``f(p) - best lower bound <= tol * f(p)``.

Every iteration costs O(m d + d^2) for G and O((m + |Y|) d^2) for XY; ``A^{-1}`` is updated
by Sherman-Morrison and refactorized every 100 iterations.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog, minimize_scalar

from ..exceptions import AllocationError, ConvergenceWarning
from ._design import _inv_psd

__all__ = ["fw_g_optimal", "fw_xy_optimal"]

_REFRESH = 100
_GAM_MAX = 1.0 - 1e-9


def fw_g_optimal(
    X: NDArray[np.float64], *, tol: float, max_iter: int, away_steps: bool = True, p0: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], int, float, bool]:
    """D-optimal (hence G-optimal) design by Frank-Wolfe with closed-form line search.

    Returns ``(p, iterations, g_max, converged)``.

    Step on vertex ``i`` with ``g_i = x_i^T A^{-1} x_i``: ``p <- (1 - lam) p + lam e_i`` with
    the exact maximizer of ``log det`` along the line, ``lam = (g_i - d) / (d (g_i - 1))``
    (Fedorov). Toward step: ``i = argmax g``. Away step (Wolfe-Atwood): ``i = argmin`` of
    ``g`` over the support, ``lam < 0`` clipped at ``-p_i / (1 - p_i)`` (drop step). The
    step of the larger gap (``g_max - d`` vs ``d - g_min``) is taken.
    """
    m, d = X.shape
    p = np.full(m, 1.0 / m) if p0 is None else p0.copy()
    Ainv = _inv_psd((X.T * p) @ X, "g_optimal_design")
    g = np.einsum("ij,jk,ik->i", X, Ainv, X)
    it = 0
    converged = False
    while True:
        j = int(np.argmax(g))
        gmax = float(g[j])
        if gmax <= (1.0 + tol) * d:
            converged = True
            break
        if it >= max_iter:
            break
        it += 1
        i, lam = j, (gmax - d) / (d * (gmax - 1.0))
        if away_steps:
            supp = np.flatnonzero(p > 0)
            k = int(supp[np.argmin(g[supp])])
            gk = float(g[k])
            if d - gk > gmax - d and p[k] < 1.0:
                lam_min = -p[k] / (1.0 - p[k])
                lam_k = (gk - d) / (d * (gk - 1.0)) if gk > 1.0 else lam_min
                i, lam = k, max(lam_k, lam_min)
                drop = lam == lam_min
            else:
                drop = False
        else:
            drop = False
        x = X[i]
        u = Ainv @ x
        gi = float(g[i])
        c = lam / (1.0 - lam)
        denom = 1.0 + c * gi
        p *= 1.0 - lam
        p[i] += lam
        if drop:
            p[i] = 0.0
        if it % _REFRESH == 0:
            p = np.maximum(p, 0.0)
            p /= p.sum()
            Ainv = _inv_psd((X.T * p) @ X, "g_optimal_design")
            g = np.einsum("ij,jk,ik->i", X, Ainv, X)
        else:
            Ainv = (Ainv - (c / denom) * np.outer(u, u)) / (1.0 - lam)
            Xu = X @ u
            g = (g - (c / denom) * Xu * Xu) / (1.0 - lam)
    return p, it, gmax, converged


def _segment(Ainv_chol: NDArray[np.float64], Aq: NDArray[np.float64], Y: NDArray[np.float64]):
    """Prepare ``v_j(gam) = y_j^T ((1 - gam) A_p + gam A_q)^{-1} y_j`` along a segment.

    With ``A_p = L L^T`` and ``L^{-1} A_q L^{-T} = U diag(lam) U^T``,
    ``v_j(gam) = sum_k Z_jk^2 / ((1 - gam) + gam lam_k)`` where ``Z = Y L^{-T} U``.
    """
    Linv = Ainv_chol
    S = Linv @ Aq @ Linv.T
    lam, U = np.linalg.eigh((S + S.T) / 2)
    lam = np.maximum(lam, 0.0)
    Z2 = (Y @ Linv.T @ U) ** 2
    return Z2, lam


def fw_xy_optimal(
    X: NDArray[np.float64],
    Y: NDArray[np.float64],
    *,
    tol: float,
    max_iter: int,
    away_steps: bool = True,
    n_cuts: int | None = None,
) -> tuple[NDArray[np.float64], int, float, float, bool]:
    """XY-optimal design by the minimax Frank-Wolfe (linearization) method.

    ``f(p) = max_j v_j(p)`` with ``v_j(p) = y_j^T A(p)^{-1} y_j``. Each ``v_j`` is convex
    with gradient ``-H_ij = -(x_i^T A^{-1} y_j)^2``, and its linearization at ``p`` is
    ``l_j(q) = 2 v_j(p) - sum_i H_ij q_i``. The linear subproblem of Frank-Wolfe for a
    max of convex functions (Demyanov-Rubinov) is ``q* = argmin_{q in simplex} max_j
    l_j(q)``, a linear program (HiGHS through :func:`scipy.optimize.linprog`); its value
    is a lower bound on the optimum, so ``f(p) - value`` certifies the gap. The step is an
    exact line search of the convex ``f`` on the segment ``[p, q*]`` (generalized
    eigen-decomposition makes each evaluation O(|Y| d)). The LP uses the ``n_cuts``
    directions of largest ``v_j`` (default ``max(200, 4 d)``); the lower bound stays valid.
    Away steps: with the LP's dual weights ``mu``, the support point ``k`` minimizing
    ``h_k = sum_j mu_j H_kj`` is moved away from (exact line search of ``f``, rank-one
    formula, drop step allowed) when its gap ``sum_j mu_j v_j - h_k`` exceeds ``f - LB``.

    Returns ``(p, iterations, value, certified_gap, converged)``.
    """
    m, d = X.shape
    ny = Y.shape[0]
    K = min(ny, n_cuts if n_cuts is not None else max(200, 4 * d))
    p = np.full(m, 1.0 / m)
    best_lb = -np.inf
    it = 0
    converged = False
    f = np.inf
    # XY-optimal designs may be singular (e.g. one direction needs <= d arms): a ridge of
    # relative size 1e-10 keeps every iterate's A invertible (values change by ~1e-10 for
    # directions in the range of A) and lets the line search reach the segment's end.
    ridge = 1e-10 * float(np.trace(X.T @ X)) / (m * d) * np.eye(d)
    while True:
        A = (X.T * p) @ X + ridge
        L = np.linalg.cholesky(A)
        Linv = np.linalg.inv(L)
        Ainv = Linv.T @ Linv
        W = Y @ Ainv
        v = np.einsum("ij,ij->i", W, Y)
        f = float(v.max())
        sel = np.argpartition(-v, K - 1)[:K] if K < ny else np.arange(ny)
        H = (X @ W[sel].T) ** 2  # (m, K)
        # LP: minimize t  s.t.  2 v_j - H_j . q <= t,  sum q = 1,  q >= 0
        c = np.zeros(m + 1)
        c[-1] = 1.0
        A_ub = np.hstack([-H.T, -np.ones((sel.size, 1))])
        b_ub = -2.0 * v[sel]
        A_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0],
                      bounds=[(0, None)] * m + [(None, None)], method="highs")
        if res.status != 0:
            raise AllocationError(
                f"xy_optimal_design (frank-wolfe): the HiGHS linear subproblem failed with status "
                f"{res.status} ({res.message}); try method='cvxpy'."
            )
        best_lb = max(best_lb, float(res.fun))
        if f - best_lb <= tol * f:
            converged = True
            break
        if it >= max_iter:
            break
        it += 1
        # Away step (Wolfe): with the LP's dual weights mu on the directions, the
        # surrogate g_mu = sum_j mu_j v_j decreases along p - e_k at rate g_mu - h_k.
        mu = np.zeros(ny)
        mu[sel] = np.maximum(-np.asarray(res.ineqlin.marginals), 0.0)
        supp = np.flatnonzero(p > 0)
        if away_steps and mu.sum() > 0 and supp.size > 1:
            mu /= mu.sum()
            h = H @ mu[sel]
            k = int(supp[np.argmin(h[supp])])
            away_gap = float(mu @ v) - float(h[k])
        else:
            away_gap, k = -np.inf, -1
        if away_gap > f - best_lb and p[k] < 1.0:
            ax = Ainv @ X[k]
            gk = float(X[k] @ ax)
            u2 = (Y @ ax) ** 2
            lo = -p[k] / (1.0 - p[k])

            def Fa(lam: float) -> float:
                c = lam / (1.0 - lam)
                den = 1.0 + c * gk
                if den <= 0:
                    return np.inf
                return float(np.max((v - (c / den) * u2) / (1.0 - lam)))

            r = minimize_scalar(Fa, bounds=(lo, 0.0), method="bounded", options={"xatol": 1e-12})
            lam = float(r.x)
            if Fa(lo) <= r.fun:
                lam = lo
            if Fa(lam) < f:
                p = (1.0 - lam) * p
                p[k] += lam
                if lam == lo:
                    p[k] = 0.0
                p = np.where(p > 1e-14, p, 0.0)
                p /= p.sum()
                continue
        q = np.maximum(res.x[:m], 0.0)
        q /= q.sum()
        Z2, lam_q = _segment(Linv, (X.T * q) @ X + ridge, Y)

        def F(g: float) -> float:
            den = (1.0 - g) + g * lam_q
            if np.any(den <= 0):
                return np.inf
            return float(np.max(Z2 @ (1.0 / den)))

        r = minimize_scalar(F, bounds=(0.0, _GAM_MAX), method="bounded", options={"xatol": 1e-10})
        gam = float(r.x)
        if F(gam) >= f:
            break  # no descent possible at numerical precision
        p = (1.0 - gam) * p + gam * q
        p = np.where(p > 1e-14, p, 0.0)
        p /= p.sum()
    gap = f - best_lb
    if not converged:
        warnings.warn(
            f"xy_optimal_design (frank-wolfe) stopped after {it} iterations with a certified "
            f"relative gap {gap / f:.3g} > tol={tol:g}; increase max_iter or use method='cvxpy'.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return p, it, f, gap, converged
