"""The characteristic time T*(theta) of linear best-arm identification.

For a linear bandit with features ``x_1, ..., x_K`` (spanning R^d), parameter ``theta``,
best arm ``a*`` and gaps ``Delta_i = (x* - x_i)^T theta``, every delta-correct algorithm
under Gaussian noise of variance ``sigma^2`` satisfies (Soare et al. 2014; Fiez et al.
2019; Degenne et al. 2020)::

    E[tau] >= T*(theta) log(1 / (2.4 delta)),

    T*(theta)^{-1} = max_{p in simplex} min_{i != a*} Delta_i^2 / (2 sigma^2 ||x* - x_i||^2_{A(p)^{-1}}),

with ``A(p) = sum_k p_k x_k x_k^T``. Equivalently ``T*(theta) = 2 sigma^2 min_p max_{i != a*}
||y_i||^2_{A(p)^{-1}}`` with the scaled directions ``y_i = (x* - x_i) / Delta_i``: the
value of the XY-oracle design of eq. (18) of Xu et al. (2018), times ``2 sigma^2``.

Every linear result of :mod:`combex.solvers.linear` reports
``samples / (T*(theta) log(1/delta))`` (``Result.info["lower_bound_ratio"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_matrix, check_probability, check_weights
from ..exceptions import AllocationError, InvalidParameterError

__all__ = ["LowerBound", "characteristic_time", "linear_lower_bound", "minimax_design", "check_features"]


def check_features(features: Any, *, owner: str | None = None, name: str = "features") -> NDArray[np.float64]:
    """Validate a feature matrix: finite, shape (K, d) with K >= 2, rows spanning R^d.

    Raises
    ------
    InvalidParameterError
        Features missing, not 2-d, with fewer than two rows, non-finite, or rank-deficient
        (the arms do not span R^d, so theta is not identifiable).
    """
    if features is None:
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be an array of shape "
            f"(n_arms, d); the problem has no features (is it a linear problem?)."
        )
    x = check_matrix(features, name, owner=owner)
    k, d = x.shape
    if k < 2 or d < 1:
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must have at least two rows "
            f"(arms) and one column. Got an array of shape {x.shape} instead."
        )
    rank = int(np.linalg.matrix_rank(x))
    if rank < d:
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must span R^{d} (rank {d}); "
            f"got a rank-deficient arm set of rank {rank}. Project the features onto their span "
            f"(e.g. with an SVD) first."
        )
    return x


@dataclass(frozen=True)
class MinimaxDesign:
    """Solution of ``min_p max_j ||y_j||^2_{A(p)^{-1}}`` over the simplex.

    Attributes
    ----------
    weights : array of shape (K,)
        The allocation p (non-negative, sums to one).
    value : float
        ``max_j ||y_j||^2_{A(p)^{-1}}`` at ``weights`` (recomputed exactly).
    method : str
    """

    weights: NDArray[np.float64]
    value: float
    method: str


def _design_value(x: NDArray[np.float64], y: NDArray[np.float64], p: NDArray[np.float64]) -> float:
    a = (x * p[:, None]).T @ x
    try:
        sol = np.linalg.solve(a, y.T)
    except np.linalg.LinAlgError:
        return float("inf")
    return float(np.max(np.einsum("ij,ji->i", y, sol)))


def _frank_wolfe(x: NDArray[np.float64], y: NDArray[np.float64], *, iters: int = 3000, temp: float = 60.0) -> NDArray[np.float64]:
    """Frank-Wolfe on a log-sum-exp smoothing of the max (weights start uniform)."""
    k = x.shape[0]
    p = np.full(k, 1.0 / k)
    best_p, best_v = p.copy(), _design_value(x, y, p)
    for it in range(iters):
        a = (x * p[:, None]).T @ x
        ainv = np.linalg.inv(a)
        v = y @ ainv  # (m, d)
        vals = np.einsum("ij,ij->i", v, y)
        s = vals.max()
        w = np.exp(temp * (vals / s - 1.0))
        w /= w.sum()
        # gradient of sum_j w_j y_j^T A^{-1} y_j w.r.t. p_k: -sum_j w_j (x_k^T A^{-1} y_j)^2
        g = -((x @ v.T) ** 2) @ w
        kk = int(np.argmin(g))
        gamma = 2.0 / (it + 3.0)
        p = (1.0 - gamma) * p
        p[kk] += gamma
        if it % 50 == 49:
            val = _design_value(x, y, p)
            if val < best_v:
                best_p, best_v = p.copy(), val
    return best_p


def minimax_design(X: Any, Y: Any, *, method: str = "auto") -> MinimaxDesign:
    """Solve ``min_{p in simplex} max_j ||y_j||^2_{A(p)^{-1}}``, ``A(p) = sum_k p_k x_k x_k^T``.

    Parameters
    ----------
    X : array of shape (K, d)
        Candidate arms (rows).
    Y : array of shape (m, d)
        Directions.
    method : {"auto", "cvxpy", "frank-wolfe"}
        ``"cvxpy"`` solves the semidefinite program ``min t`` s.t.
        ``matrix_frac(y_j, A(p)) <= t`` (CLARABEL, then SCS); ``"frank-wolfe"`` runs
        Frank-Wolfe on a log-sum-exp smoothing; ``"auto"`` uses cvxpy and falls back to
        Frank-Wolfe when the conic solve fails.

    Returns
    -------
    MinimaxDesign

    Raises
    ------
    AllocationError
        When no solver returns a design with a finite value.
    """
    x = check_matrix(X, "X", owner="minimax_design")
    y = check_matrix(Y, "Y", owner="minimax_design", shape=(None, x.shape[1]))
    method = check_choice(method, "method", ("auto", "cvxpy", "frank-wolfe"), owner="minimax_design")
    if method in ("auto", "cvxpy"):
        p = _cvx_design(x, y, strict=method == "cvxpy")
        if p is not None:
            return MinimaxDesign(p, _design_value(x, y, p), "cvxpy")
    p = _frank_wolfe(x, y)
    val = _design_value(x, y, p)
    if not np.isfinite(val):
        raise AllocationError("minimax_design: Frank-Wolfe did not reach a non-singular design.")
    return MinimaxDesign(p, val, "frank-wolfe")


def _cvx_design(x: NDArray[np.float64], y: NDArray[np.float64], *, strict: bool) -> NDArray[np.float64] | None:
    import cvxpy as cp

    k, d = x.shape
    # Scale for conditioning: the value scales as 1 / scale^2 in y, so normalize y.
    ys = float(np.max(np.linalg.norm(y, axis=1))) or 1.0
    yn = y / ys
    p = cp.Variable(k, nonneg=True)
    t = cp.Variable()
    a = sum(p[i] * np.outer(x[i], x[i]) for i in range(k))
    cons = [cp.sum(p) == 1]
    cons += [cp.matrix_frac(yn[j], a) <= t for j in range(y.shape[0])]
    prob = cp.Problem(cp.Minimize(t), cons)
    errors = []
    for solver in ("CLARABEL", "SCS"):
        if solver not in cp.installed_solvers():
            continue
        try:
            prob.solve(solver=solver)
        except (cp.error.SolverError, ArithmeticError, ValueError) as exc:  # pragma: no cover
            errors.append(f"{solver}: {exc}")
            continue
        if prob.status in ("optimal", "optimal_inaccurate") and p.value is not None:
            w = np.clip(np.asarray(p.value, dtype=float), 0.0, None)
            w[w < 1e-9 * w.max()] = 0.0
            w /= w.sum()
            if np.isfinite(_design_value(x, y, w)):
                return w
        errors.append(f"{solver}: status {prob.status}")
    if strict:
        raise AllocationError(
            "minimax_design: the conic solve failed (" + "; ".join(errors) + "); try method='frank-wolfe'."
        )
    return None


@dataclass(frozen=True)
class LowerBound:
    """T*(theta) and its optimal allocation.

    Attributes
    ----------
    T_star : float
        The characteristic time ``2 sigma^2 min_p max_i ||x* - x_i||^2_{A(p)^{-1}} / Delta_i^2``.
    allocation : array of shape (K,)
        The optimal proportions p* (the XY-oracle allocation, eq. (18)).
    best : int
        a*, the best arm.
    gaps : array of shape (K,)
        ``Delta_i`` (0 for the best arm).
    """

    T_star: float
    allocation: NDArray[np.float64]
    best: int
    gaps: NDArray[np.float64]

    def samples_bound(self, delta: float) -> float:
        """``T* log(1/delta)``: the normalizer of the reported ratio."""
        return self.T_star * float(np.log(1.0 / delta))


def characteristic_time(
    features: Any, theta: Any, *, sigma: float = 1.0, method: str = "auto"
) -> LowerBound:
    """The characteristic time T*(theta) of linear best-arm identification.

    Parameters
    ----------
    features : array of shape (K, d)
        Arm features spanning R^d.
    theta : array of shape (d,)
        The true parameter; the best arm must be unique.
    sigma : float, default 1.0
        Noise scale (Gaussian standard deviation); T* scales as sigma^2.
    method : {"auto", "cvxpy", "frank-wolfe"}
        Solver of the minimax design (see :func:`minimax_design`).

    Returns
    -------
    LowerBound

    Raises
    ------
    InvalidParameterError
        Bad shapes, rank-deficient features, or a best arm that is not unique (T* is then
        infinite; the error names the tied arms).

    Examples
    --------
    Two orthogonal arms with gap 1: ``T* = 2 * (1/p1 + 1/p2) = 8`` at ``p = (1/2, 1/2)``.

    >>> lb = characteristic_time([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0])
    >>> round(lb.T_star, 4)
    8.0
    """
    x = check_features(features, owner="characteristic_time")
    th = check_weights(theta, x.shape[1], "theta", owner="characteristic_time")
    sigma = check_float(sigma, "sigma", owner="characteristic_time", low=0.0, closed="neither")
    mu = x @ th
    best = int(np.argmax(mu))
    gaps = mu[best] - mu
    scale = max(1.0, float(np.max(np.abs(mu))))
    others = np.flatnonzero(np.arange(x.shape[0]) != best)
    tied = others[gaps[others] <= 1e-12 * scale]
    if tied.size:
        raise InvalidParameterError(
            f"characteristic_time needs a unique best arm; arms {[best] + tied.tolist()} tie "
            f"at mean {float(mu[best])!r} (T* is infinite)."
        )
    y = (x[best] - x[others]) / gaps[others, None]
    des = minimax_design(x, y, method=method)
    return LowerBound(
        T_star=2.0 * sigma**2 * des.value,
        allocation=des.weights,
        best=best,
        gaps=gaps,
    )


def linear_lower_bound(features: Any, theta: Any, delta: float, *, sigma: float = 1.0) -> dict[str, float]:
    """``{"T_star", "lower_bound_samples", "lower_bound_ratio_denominator"}`` for a result.

    ``lower_bound_samples = T* log(1/delta)``; a result's ``lower_bound_ratio`` is its
    sample count divided by it. Returns NaN entries when the best arm is not unique.
    """
    delta = check_probability(delta, "delta", owner="linear_lower_bound")
    try:
        lb = characteristic_time(features, theta, sigma=sigma)
    except InvalidParameterError as exc:
        if "unique best arm" in str(exc):
            return {"T_star": float("inf"), "lower_bound_samples": float("inf")}
        raise
    return {"T_star": lb.T_star, "lower_bound_samples": lb.samples_bound(delta)}
