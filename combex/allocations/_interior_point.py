"""XY-optimal designs by a log-barrier interior-point method, with a certified gap.

The XY-optimal design minimizes ``f(p) = max_j v_j(p)``, ``v_j(p) = y_j^T A(p)^{-1} y_j``,
``A(p) = sum_i p_i x_i x_i^T``, over the simplex. In epigraph form, ``min t`` subject to
``v_j(p) <= t`` and ``p >= 0``, ``sum p = 1``, the barrier problem

    min_{p, t}  s t - sum_j log(t - v_j(p)) - sum_i log p_i,   sum_i p_i = 1,

is smooth and convex; its minimizer tends to the optimum as ``s`` grows (the central
path). Each Newton step solves one dense (m + 2) x (m + 2) KKT system; with
``u_ij = x_i^T A^{-1} y_j`` and ``P = X A^{-1} X^T`` the derivatives are
``dv_j / dp_i = -u_ij^2`` and ``d^2 v_j / dp_i dp_k = 2 u_ij u_kj P_ik``. The step is
damped by a backtracking line search on the barrier (the iterate stays strictly
feasible: ``A(p)`` is positive definite all along, so no ridge is needed), and ``s`` is
multiplied by :data:`_S_GROWTH` whenever the Newton decrement says the point is centered.

**Certificate.** For any weights ``mu`` on the directions (a probability vector) and any
``p`` with ``A(p)`` invertible, convexity of ``q -> sum_j mu_j v_j(q)`` gives

    f* >= min_q sum_j mu_j v_j(q) >= 2 sum_j mu_j v_j(p) - max_i h_i,
    h_i = sum_j mu_j u_ij^2,

and ``f(p)`` itself is an upper bound of ``f*``. On the central path the barrier's dual
estimate ``mu_j proportional to 1 / (t - v_j)`` makes the bound tight (the two sides of
the saddle point); it is sharpened by solving ``h_i = const`` on the support of ``p`` for
``mu`` on the active directions (a small least-squares system, ``mu`` clipped to the
simplex), and where the Newton steps stop short of ``tol`` (double precision: ``A(p)``
nearly singular off the optimal support), by one linear program for the best ``mu`` at
the last ``p``. The lower bound is checked as computed, never assumed: every iterate gives a
certified bracket ``lower <= f* <= f(p_best)``, and the method stops when
``f(p_best) - lower <= tol * f(p_best)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.optimize import linprog

__all__ = ["ip_xy_optimal", "xy_lower_bound"]

#: Barrier parameter growth factor once the point is centered.
_S_GROWTH = 4.0
#: Newton decrement (squared) below which the point counts as centered, and the tighter
#: one near the end (the dual estimate ``1 / (t - v_j)`` is only as good as the centering).
_CENTERED = 0.1
_CENTERED_NEAR = 1e-3
#: Past ``s f(p) > _S_LIMIT`` the iterates are at the limit of double precision (A(p)
#: nearly singular off the optimal support): the method stops with its certified bracket.
_S_LIMIT = 1e13
#: The least-squares sharpening of the dual weights runs at centered points once the plain
#: bound's gap is within this factor of the tolerance.
_POLISH = 1e3


def _values(X: NDArray[np.float64], Y: NDArray[np.float64], p: NDArray[np.float64]):
    """``(Li, Z, v)``: the inverse ``Li = L^{-1}`` of the Cholesky factor of ``A(p)``,
    ``Z = Li Y^T`` and ``v_j = |Z_j|^2``; ``None`` when ``A(p)`` is not numerically positive
    definite. (One triangular inverse, then products: small LAPACK solves cost more than
    the matrix products they would save.)"""
    A = (X.T * p) @ X
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return None
    Li = solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)
    Z = Li @ Y.T
    v = np.einsum("ij,ij->j", Z, Z)
    if not np.all(np.isfinite(v)):
        return None
    return Li, Z, v


def _bound(U2: NDArray[np.float64], v: NDArray[np.float64], mu: NDArray[np.float64]) -> float:
    """``2 sum_j mu_j v_j - max_i sum_j mu_j u_ij^2``: a lower bound of ``f*`` (``mu`` in the simplex)."""
    return float(2.0 * (mu @ v) - np.max(U2 @ mu))


def _polished_bound(U2: NDArray[np.float64], v: NDArray[np.float64], p: NDArray[np.float64],
                    mu: NDArray[np.float64]) -> float:
    """The bound of :func:`_bound` at the ``mu`` that equalizes ``h_i`` over the support of
    ``p`` (least squares over the directions where ``mu`` is not negligible), or ``-inf``."""
    J = np.flatnonzero(mu > 1e-3 * mu.max())
    S = np.flatnonzero(p > 1e-3 * p.max())
    M = np.zeros((S.size + 1, J.size + 1))
    M[: S.size, : J.size] = U2[np.ix_(S, J)]
    M[: S.size, -1] = -1.0
    M[-1, : J.size] = 1.0
    rhs = np.zeros(S.size + 1)
    rhs[-1] = 1.0
    try:
        sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
    except np.linalg.LinAlgError:  # pragma: no cover - lstsq (SVD) rarely fails
        return -np.inf
    m2 = np.zeros_like(mu)
    m2[J] = np.maximum(sol[: J.size], 0.0)
    total = float(m2.sum())
    if not np.isfinite(total) or total <= 0:
        return -np.inf
    return _bound(U2, v, m2 / total)


def _lp_bound(U2: NDArray[np.float64], v: NDArray[np.float64], mu: NDArray[np.float64]) -> float:
    """The best bound of :func:`_bound` at this ``p`` over ``mu`` supported where the barrier's
    ``mu`` is not negligible: a linear program (HiGHS) in ``|J| + 1`` variables, recomputed
    by :func:`_bound` at the clipped solution; ``-inf`` when the LP fails."""
    J = np.flatnonzero(mu > 1e-6 * mu.max())
    c = np.r_[-2.0 * v[J], 1.0]
    A_ub = np.hstack([U2[:, J], -np.ones((U2.shape[0], 1))])
    A_eq = np.r_[np.ones(J.size), 0.0][None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(U2.shape[0]), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * J.size + [(None, None)], method="highs")
    if res.status != 0:
        return -np.inf
    m2 = np.zeros_like(mu)
    m2[J] = np.maximum(res.x[: J.size], 0.0)
    total = float(m2.sum())
    return _bound(U2, v, m2 / total) if total > 0 else -np.inf


def xy_lower_bound(X: NDArray[np.float64], Y: NDArray[np.float64], p: NDArray[np.float64],
                   mu: NDArray[np.float64]) -> float:
    """A certified lower bound of ``min_q max_j y_j^T A(q)^{-1} y_j`` from any design ``p``
    (``A(p)`` invertible) and any weights ``mu`` on the directions (see the module docstring)."""
    out = _values(X, Y, p)
    if out is None:
        return -np.inf
    Li, Z, v = out
    U = X @ (Li.T @ Z)
    mu = np.maximum(np.asarray(mu, dtype=np.float64), 0.0)
    return _bound(U * U, v, mu / mu.sum())


def ip_xy_optimal(
    X: NDArray[np.float64], Y: NDArray[np.float64], *, tol: float, max_iter: int
) -> tuple[NDArray[np.float64], int, float, float, bool]:
    """XY-optimal design by the barrier method of the module docstring.

    Returns ``(p, newton_steps, value, lower, converged)``: ``value = f(p)``, and ``lower``
    a certified lower bound of the optimum (``converged`` when ``value - lower <= tol *
    value``). Raises :class:`numpy.linalg.LinAlgError` when the uniform design is singular
    (the candidates do not span R^d).
    """
    m, d = X.shape
    p = np.full(m, 1.0 / m)
    first = _values(X, Y, p)
    if first is None:
        raise np.linalg.LinAlgError("the uniform design is singular")
    Li, Z, v = first
    f = float(v.max())
    t = 1.5 * f if f > 0 else 1.0
    s = float(np.sum(1.0 / (t - v)))
    best_p, best_f, lower = p.copy(), f, -np.inf
    steps = 0
    converged = False
    ones = np.ones(m)
    centered, stuck = True, False

    def barrier(p: NDArray[np.float64], t: float, v: NDArray[np.float64]) -> float:
        return float(s * t - np.log(t - v).sum() - np.log(p).sum())

    while True:
        W = Li.T @ Z  # A^{-1} y_j, columns
        U = X @ W  # u_ij
        U2 = U * U
        ir = 1.0 / (t - v)
        mu = ir / ir.sum()
        lower = max(lower, _bound(U2, v, mu))
        f = float(v.max())
        if f < best_f:
            best_f, best_p = f, p.copy()
        final = stuck or steps >= max_iter or s * best_f > _S_LIMIT
        if (centered or final) and best_f - lower <= _POLISH * tol * best_f:  # sharpen mu (least squares)
            lower = max(lower, _polished_bound(U2, v, p, mu))
        if final and best_f - lower > tol * best_f:  # one linear program for the best mu at this p
            lower = max(lower, _lp_bound(U2, v, mu))
        if best_f - lower <= tol * best_f:
            converged = True
            break
        if final:
            break
        steps += 1
        # Newton step on (p, t) with sum p = 1.
        LX = Li @ X.T
        P = LX.T @ LX  # X A^{-1} X^T
        Gr = U2 * ir  # -grad v_j / r_j, columns
        grad_p = -(U2 @ ir) - 1.0 / p
        grad_t = s - float(ir.sum())
        H = Gr @ Gr.T + 2.0 * P * ((U * ir) @ U.T)
        H[np.diag_indices(m)] += 1.0 / (p * p)
        h_pt = U2 @ (ir * ir)
        KKT = np.zeros((m + 2, m + 2))
        KKT[:m, :m] = H
        KKT[:m, m] = KKT[m, :m] = h_pt
        KKT[m, m] = float((ir * ir).sum())
        KKT[:m, m + 1] = KKT[m + 1, :m] = ones
        try:
            sol = np.linalg.solve(KKT, np.r_[-grad_p, -grad_t, 0.0])
        except np.linalg.LinAlgError:
            stuck = True
            continue
        dp, dt = sol[:m], float(sol[m])
        dec = -float(grad_p @ dp + grad_t * dt)
        if not np.isfinite(dec) or dec <= 0:
            stuck = True
            continue
        alpha = 1.0
        neg = dp < 0
        if neg.any():
            alpha = min(1.0, 0.99 * float(np.min(-p[neg] / dp[neg])))
        phi0 = barrier(p, t, v)
        while alpha > 1e-12:
            pn, tn = p + alpha * dp, t + alpha * dt
            out = _values(X, Y, pn)
            if out is not None and np.all(tn > out[2]) and barrier(pn, tn, out[2]) <= phi0 - 0.25 * alpha * dec:
                break
            alpha *= 0.5
        else:
            stuck = True  # no decrease at double precision: one last bound at this point
            continue
        p, t = pn, tn
        Li, Z, v = out
        centered = dec < (_CENTERED if best_f - lower > _POLISH * tol * best_f else _CENTERED_NEAR)
        if centered:
            s *= _S_GROWTH
    return best_p, steps, best_f, lower, converged
