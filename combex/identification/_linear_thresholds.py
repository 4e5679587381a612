"""GLR stopping for linear (and full-bandit) best-arm identification, valid at every time.

Model: pulling arm ``x`` (a row of the feature matrix, or a super-arm indicator vector)
returns ``x^T theta`` plus sigma-sub-Gaussian noise. After ``t`` samples, ``A_t = sum_s
x_s x_s^T`` (assumed invertible, which the explorations ensure by pulling a basis first),
``theta_hat = A_t^{-1} b_t`` (ordinary least squares), ``x_hat = argmax_x x^T theta_hat``.

GLR statistic (epsilon-good version, epsilon >= 0). For the answer ``x_hat`` the set of
parameters in which it is *not* epsilon-good is ``Alt = union_x {lam : (x - x_hat)^T lam
> epsilon}``; its GLR against the Gaussian model is::

    Z(t) = inf_{lam in Alt} ||theta_hat - lam||^2_{A_t} / (2 sigma^2)
         = min_{x != x_hat} ((x_hat - x)^T theta_hat + epsilon)_+^2 / (2 sigma^2 ||x_hat - x||^2_{A_t^{-1}})

(the closest point of a half-space in the ``A_t`` norm; eq. (2) of Degenne, Menard, Shang &
Valko 2020 "Gamification of pure exploration for linear bandits", with the epsilon shift of
Jourdan & Degenne 2022).

Thresholds
----------
``"mixture"`` (default, valid): Theorem 1 of Abbasi-Yadkori, Pal & Szepesvari (2011), the
Gaussian-prior (N(0, lam^{-1} I)) mixture martingale -- the d-dimensional form of the
mixture thresholds of Kaufmann & Koolen (2021) -- gives, with probability >= 1 - delta,
for *every* t simultaneously::

    ||S_t||^2_{V_t^{-1}} <= 2 sigma^2 beta_0(t),   beta_0(t) = log(1/delta) + 1/2 log det(I + A_t / lam),

with ``S_t = sum_s eta_s x_s`` the noise sum and ``V_t = A_t + lam I``. With OLS,
``theta_hat - theta = A_t^{-1} S_t``, so by Cauchy-Schwarz in the ``V_t`` geometry, for every
direction ``y``::

    |y^T (theta_hat - theta)| <= sqrt(2 sigma^2 beta_0(t)) ||A_t^{-1} y||_{V_t},
    ||A_t^{-1} y||^2_{V_t} = ||y||^2_{A_t^{-1}} + lam ||A_t^{-1} y||^2.

Hence the per-alternative threshold ``beta_x(t) = beta_0(t) kappa_x(t)``,
``kappa_x = 1 + lam ||A_t^{-1} y_x||^2 / ||y_x||^2_{A_t^{-1}}`` (``y_x = x_hat - x``;
``kappa -> 1`` as the direction is sampled), and the rule "stop when
``Z_x(t) > beta_x(t)`` for every ``x != x_hat``" returns an epsilon-good answer with
probability >= 1 - delta: if ``x_hat`` is not epsilon-good, some ``x`` has
``y_x^T theta < -epsilon``, so ``y_x^T theta_hat + epsilon < y_x^T (theta_hat - theta) <=
sqrt(2 sigma^2 beta_x) ||y_x||_{A_t^{-1}}``, i.e. ``Z_x <= beta_x``. No bound S on
``||theta||`` is needed (the bias term of the regularized estimate is avoided by using OLS).

The bound holds for every ``lam > 0`` fixed in advance, and the best ``lam`` depends on the
scale of ``A_t`` at the stop; with ``n_ridges = J`` the threshold of each direction is the
smallest over the grid ``lam_j = ridge 10^j`` (j < J), each at ``delta / J``. All J events
hold at once with probability >= 1 - delta (union bound), so the rule stays valid (the
solvers' default is J = 6).

``"heuristic"``: ``beta(t) = log((1 + log t) / delta)``, the threshold of the papers'
experiments (Degenne et al. 2020, Section 6). It is *not* a valid deviation bound in
dimension d > 1 (its calibration test shows the violation rate) and is offered only for
comparisons with published tables; every result says which threshold was used
(``info["threshold"]``).

Classes too large to enumerate
------------------------------
:func:`oracle_glr_lower_bound` lower-bounds ``min_x Z_x / kappa_x`` through the decision
class's oracles: the second-best value (``argmax_excluding``) and certified upper bounds
of 0-1 quadratic programs (:func:`combex.oracles.quadratic.upper_bound_qp`), by a ratio
bound and a Lagrangian bound (see its docstring). The ratio of a lower bound to an upper bound is a lower bound of
every term, so stopping on it is still valid (the same discipline as the SAQM
certificates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_probability
from ..exceptions import InvalidParameterError
from ..oracles.quadratic import upper_bound_qp

__all__ = ["THRESHOLDS", "LinearGLR", "linear_glr", "mixture_beta0", "heuristic_threshold",
           "oracle_glr_lower_bound"]

#: Stopping thresholds: ``"mixture"`` (valid at every time), ``"heuristic"`` (the papers').
THRESHOLDS = ("mixture", "heuristic")


def mixture_beta0(A: NDArray[np.float64], delta: float, ridge: float = 1.0) -> float:
    """``beta_0(t) = log(1/delta) + 1/2 log det(I + A_t / lam)`` (Abbasi-Yadkori et al. 2011,
    Theorem 1, with the prior precision ``lam = ridge``)."""
    ev = np.maximum(np.linalg.eigvalsh(A), 0.0)
    return math.log(1.0 / delta) + 0.5 * float(np.log1p(ev / ridge).sum())


def heuristic_threshold(t: float, delta: float) -> float:
    """``log((1 + log t) / delta)`` (not valid in general; see the module docstring)."""
    return math.log((1.0 + math.log(max(t, 1.0))) / delta)


@dataclass(frozen=True)
class LinearGLR:
    """The GLR stopping statistic at one time.

    Attributes
    ----------
    best : int
        ``x_hat`` (index of the empirical best row).
    theta : array (d,)
        OLS estimate.
    Z : array (K,)
        ``Z_x`` (``inf`` for ``x_hat`` itself and for rows equal to it).
    beta : array (K,)
        The threshold of each alternative (``beta_0 kappa_x`` or the heuristic).
    stop : bool
        ``Z_x > beta_x`` for every ``x != x_hat``.
    margin : float
        ``min_x Z_x / beta_x`` (> 1 at the stop).
    """

    best: int
    theta: NDArray[np.float64]
    Z: NDArray[np.float64]
    beta: NDArray[np.float64]
    stop: bool
    margin: float
    challenger: int


def linear_glr(
    X: NDArray[np.float64],
    A: NDArray[np.float64],
    b: NDArray[np.float64],
    t: float,
    delta: float,
    *,
    sigma: float = 1.0,
    epsilon: float = 0.0,
    threshold: str = "mixture",
    ridge: float = 1.0,
    n_ridges: int = 1,
) -> LinearGLR:
    """The GLR statistic ``Z_x(t)`` of every alternative row and the stopping decision.

    Parameters
    ----------
    X : array (K, d)
        Candidate answers (feature rows or super-arm indicators).
    A, b : arrays (d, d), (d,)
        ``sum_s x_s x_s^T`` and ``sum_s r_s x_s``; ``A`` must be invertible.
    t : float
        Number of samples so far.
    delta, sigma, epsilon, threshold, ridge
        See the module docstring.
    n_ridges : int, default 1
        Mixture threshold over the grid of prior precisions ``lam_j = ridge 10^j``,
        ``j < n_ridges``, each at confidence ``delta / n_ridges`` (union bound over the
        grid); every direction takes the smallest of its thresholds ``beta_0(lam_j)
        kappa_x(lam_j)`` (all the events hold at once with probability >= 1 - delta).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(2)
    >>> g = linear_glr(X, 100.0 * np.eye(2), np.array([100.0, 0.0]), 200, 0.05)
    >>> g.best, round(float(g.Z[1]), 3), g.stop
    (0, 25.0, True)
    """
    delta = check_probability(delta, "delta", owner="linear_glr")
    epsilon = check_float(epsilon, "epsilon", owner="linear_glr", low=0.0)
    threshold = check_choice(threshold, "threshold", THRESHOLDS, owner="linear_glr")
    try:
        A_inv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        raise InvalidParameterError("linear_glr needs an invertible design matrix A_t (pull a basis first).") from None
    theta = A_inv @ b
    mu = X @ theta
    best = int(np.argmax(mu))
    Y = X[best] - X
    AiY = Y @ A_inv  # rows A^{-1} y (A symmetric)
    nA = np.einsum("ij,ij->i", AiY, Y)
    num = np.maximum(mu[best] - mu + epsilon, 0.0)
    scale = np.einsum("ij,ij->i", Y, Y)
    alt = scale > 1e-24 * max(1.0, float(scale.max(initial=0.0)))
    Z = np.full(X.shape[0], np.inf)
    Z[alt] = num[alt] ** 2 / (2.0 * sigma**2 * np.maximum(nA[alt], 1e-300))
    if threshold == "mixture":
        q = np.einsum("ij,ij->i", AiY, AiY) / np.maximum(nA, 1e-300)
        beta = np.full(X.shape[0], np.inf)
        J = max(1, int(n_ridges))
        ev = np.maximum(np.linalg.eigvalsh(A), 0.0)  # one decomposition for every ridge of the grid
        for j in range(J):
            lam = ridge * 10.0**j
            bj = (math.log(J / delta) + 0.5 * float(np.log1p(ev / lam).sum())) * (1.0 + lam * q)
            beta = np.minimum(beta, bj)
        beta[~alt] = math.log(1.0 / delta) + 0.5 * float(np.log1p(ev / ridge).sum())
    else:
        beta = np.full(X.shape[0], heuristic_threshold(t, delta))
    ratio = np.where(alt, Z / beta, np.inf)
    j = int(np.argmin(ratio))
    margin = float(ratio[j])
    return LinearGLR(best=best, theta=theta, Z=Z, beta=beta, stop=bool(alt.any() and margin > 1.0) or not alt.any(),
                     margin=margin, challenger=j)


def oracle_glr_lower_bound(
    decision_class: Any,
    A: NDArray[np.float64],
    b: NDArray[np.float64],
    *,
    sigma: float = 1.0,
    epsilon: float = 0.0,
    ridge: float = 1.0,
    c_grid: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0),
) -> tuple[NDArray[np.bool_], float, dict[str, float]]:
    """A certified lower bound ``L <= min_{x != x_hat} Z_x / kappa_x`` for a class of size-k
    super-arms, through the oracles (``Z_x / kappa_x = num_x^2 / (2 sigma^2 n_x)`` with
    ``num_x = (x_hat - x)^T theta_hat + epsilon``, ``n_x = (x_hat - x)^T M (x_hat - x)``,
    ``M = A^{-1} + lam A^{-2}``; see the module docstring).

    ``x_hat = decision_class.argmax(theta_hat)`` and the second best ``x_2 =
    argmax_excluding(theta_hat, x_hat)`` come from the linear oracle. Two bounds, the larger
    is returned:

    * ratio: ``(gap_2 + eps)_+^2 / (2 sigma^2 U)``, ``gap_2 = (x_hat - x_2)^T theta_hat <=
      (x_hat - x)^T theta_hat`` for every ``x != x_hat`` (exact oracle) and ``U >= max_x n_x``;
    * Lagrangian: for every ``c > 0``, ``num^2 / n >= 2 c num - c^2 n`` (``(num - c n)^2 >= 0``),
      so ``min_{x != x_hat} num_x^2 / n_x >= 2 c (theta_hat(x_hat) + eps) - max_{x != x_hat}
      (2 c theta_hat^T x + c^2 n_x)``. A member ``x != x_hat`` of the same size misses some
      ``i`` in ``x_hat``, so the max is at most ``max_{i in x_hat}`` of the max over the
      k-subsets of the ground set without ``i`` of the quadratic form
      ``x^T (c^2 M + diag(2 c theta_hat - 2 c^2 M x_hat)) x + c^2 x_hat^T M x_hat`` (0-1
      vectors: ``x_i^2 = x_i``), bounded above by
      :func:`combex.oracles.quadratic.upper_bound_qp` (valid for every symmetric matrix and
      for every superset of the class). ``c`` ranges over ``c_grid`` times ``num_2 / n_2``
      (the best c for ``x_2``).

    Only classes whose members all have one size k are supported.
    """

    A_inv = np.linalg.inv(A)
    theta = A_inv @ b
    x_hat = np.asarray(decision_class.argmax(theta), dtype=bool)
    k = int(x_hat.sum())
    n = x_hat.shape[0]
    other = np.asarray(decision_class.argmax_excluding(theta, x_hat), dtype=bool)
    gap2 = float(theta[x_hat].sum() - theta[other].sum())
    M = A_inv + ridge * (A_inv @ A_inv)
    M = 0.5 * (M + M.T)
    xh = x_hat.astype(np.float64)
    Mx = M @ xh
    xMx = float(xh @ Mx)
    # ratio bound: U >= max_x (x_hat - x)^T M (x_hat - x) = max_x x^T (M - 2 diag(M x_hat)) x + xMx
    U = max(float(upper_bound_qp(M - 2.0 * np.diag(Mx), k)) + xMx, 1e-300)
    num2 = max(gap2 + epsilon, 0.0)
    L_ratio = num2**2 / U
    # Lagrangian bound
    d2 = xh - other.astype(np.float64)
    n2 = max(float(d2 @ M @ d2), 1e-300)
    L_lag = 0.0
    if num2 > 0:
        top = float(theta[x_hat].sum()) + epsilon
        members = np.flatnonzero(x_hat)
        for f in c_grid:
            c = f * num2 / n2
            W = c * c * M + np.diag(2.0 * c * theta - 2.0 * c * c * Mx)
            worst = -np.inf
            for i in members:
                keep = np.arange(n) != i
                worst = max(worst, float(upper_bound_qp(W[np.ix_(keep, keep)], k)))
            L_lag = max(L_lag, 2.0 * c * top - worst - c * c * xMx)
    L = max(L_ratio, L_lag) / (2.0 * sigma**2)
    return x_hat, L, {"gap_2": gap2, "U": U, "ratio_bound": L_ratio / (2.0 * sigma**2),
                      "lagrangian_bound": L_lag / (2.0 * sigma**2)}
