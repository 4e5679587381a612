"""GLR stopping with unknown variances (Gaussian arms, each with its own unknown variance).

Jourdan, Degenne & Kaufmann (ALT 2023), "Dealing with unknown variances in best-arm
identification", give two ways to stop without the variances: plug the empirical variance
into the known-variance statistic ("EV-GLR"), or use the *GLR of the Gaussian model with
unknown variance* ("GLR"). combex implements the second (``divergence="unknown-variance"``):
the profile likelihood of arm ``a`` at mean ``lambda`` maximizes over the variance, which
gives the transportation cost

    d_a(mu_hat_a, lambda) = 1/2 log(1 + (mu_hat_a - lambda)^2 / sigma_hat_a^2)

(``sigma_hat_a^2`` the maximum-likelihood, i.e. biased, empirical variance; it is also
``inf_{s^2} KL(N(mu, sigma^2), N(lambda, s^2))`` at the empirical values, the cost of the
unknown-variance lower bound), and the two-arm statistic of "arm ``i`` is epsilon-good
against arm ``j``"

    Z_ij = inf_{l_j >= l_i + eps} N_i d_i(mu_hat_i, l_i) + N_j d_j(mu_hat_j, l_j)

(:func:`pair_glr_unknown_variance`, an exact minimization: the stationarity condition is a
cubic). The same costs, with the empirical variances plugged in, drive the sampling rules.

**Threshold** (:class:`UnknownVarianceThreshold`). The paper calibrates its GLR with new
time-uniform concentration inequalities for the mean and for the variance. The text was not
available when this module was written (only a third-party port of the authors' code, which
uses a union over the ``K - 1`` pairs and a *per-arm* sum, whose leading term is
``2 log(1/delta)``), so the threshold here is derived from scratch, with the same two
ingredients, and proved in full below. Per arm ``a`` write ``x_a = N_a (mu_hat_a - mu_a)^2 /
sigma_a^2`` and ``S_a = N_a sigma_hat_a^2``, so that
``N_a d_a(mu_hat_a, mu_a) = N_a / 2 log(1 + x_a / (S_a / sigma_a^2))``.

* Means (probability ``delta / 2``), ``means="mixture"`` (default): for every pair ``(i,
  j)`` of the ``m`` two-arm alternatives and every time, ``r_i x_i + r_j x_j <= A_ij = 2
  [log(2 m / delta) + log(1 + N_i / rho) / 2 + log(1 + N_j / rho) / 2]`` with ``r_a = N_a /
  (N_a + rho)``, ``rho = 1``: Robbins' normal mixture on each arm normalized by its own,
  unknown, sigma (``r_a x_a / 2 = S_a^2 / (2 sigma_a^2 (N_a + rho))``), Ville's inequality
  on the product over the pair (the bound does not need sigma's value), union over the ``m``
  pairs; the proof is that of ``"pairs-mixture"`` in :mod:`combex.estimation._glr`.
  ``means="kk"``: ``x_i + x_j <= A_ij = 2 [2 C_G(log(2 m / delta) / 2) + 2 log(4 + log N_i) +
  2 log(4 + log N_j)]``, Theorem 9 of Kaufmann & Koolen (2021) (Gaussian mixtures, ``|S| =
  2``), union over the ``m`` pairs; this is ``r_a = 1`` in what follows.
* Variances (probability ``delta / 2``): for every arm and every ``N_a >= 2``,
  ``S_a / sigma_a^2 >= b(N_a)``. ``S_n`` is non-decreasing in ``n`` (a new sample adds
  ``n / (n + 1) (X_{n+1} - mu_hat_n)^2``), so on a geometric grid ``n_0 = 2``,
  ``n_{k+1} = max(n_k + 1, floor((1 + eta) n_k))`` it suffices that
  ``S_{n_k} / sigma^2 >= q_k`` with ``q_k`` the ``delta_k`` quantile of the chi-square law
  with ``n_k - 1`` degrees of freedom (the exact law of ``S_n / sigma^2``),
  ``delta_k = delta / (2 N zeta(2) (k + 1)^2)`` (union over the N arms and the slices);
  then ``b(n) = q_k`` for ``n_k <= n < n_{k+1}``. ``eta = 0.03``.

On both events, if the answer is wrong the true means lie in the half-space of some pair
``(i, j)``, so ``Z_ij <= sum_{a in {i, j}} N_a / 2 log(1 + x_a / b(N_a))`` with
``r_i x_i + r_j x_j <= A_ij``. With ``y_a = r_a x_a`` and ``b'_a = r_a b(N_a)`` the right side
is ``sum_a N_a / 2 log(1 + y_a / b'_a)``, at most its maximum over ``y_i + y_j = A_ij``, a
concave problem in one variable solved in closed form (``y_i = (N_i (b'_j + A) - N_j b'_i) /
(N_i + N_j)`` clipped to ``[0, A]``). Stopping when every pair's ``Z_ij`` reaches that
maximum ``beta_ij`` is therefore delta-correct. As ``N -> inf``, ``b(N) / N -> 1 / (1 + eta)``
at worst, so ``beta_ij ~ (1 + eta) A_ij / 2``: the leading term is ``log(1/delta)``, not
``2 log(1/delta)``. At the counts of typical runs the mixture's ``A_ij`` is about 0.65x the
Kaufmann & Koolen one (it grows like ``log N`` instead of ``log log N``; see
:mod:`combex.estimation._glr`).

**Decision classes (and Best-K with epsilon > 0)**: :class:`ClassUnknownVarianceThreshold`.
Paths, matchings, CP-SAT classes have exponentially many alternatives, reached only through
the linear-maximization oracle, so the pair construction above (a union over the
alternatives and an exact two-arm minimization) does not apply. Instead: *variance upper
confidence bounds* plugged into the known-variance all-arms statistic. Proof of validity.

* Variances (probability ``delta / 2``): the event above, ``S_a / sigma_a^2 >= b(N_a)`` for
  every arm and every ``N_a >= 2`` (the same grid, quantiles and union over the N arms), so
  ``sigma_a^2 <= U_a = S_a / b(N_a)`` (the floored empirical variance only makes ``S_a``
  larger, hence ``U_a`` too).
* Means (probability ``delta / 2``): the all-arms normal mixture of :mod:`combex.estimation._glr`
  (``"all-arms-mixture"`` at ``delta / 2``) with each arm normalized by its *own* unknown
  sigma_a: ``S'_a(n) = sum_{s <= n} (X_{a,s} - mu_a) / sigma_a`` is a sum of independent
  standard normals whatever sigma_a is, so the product of the per-arm mixtures is again a
  nonnegative supermartingale with initial value 1 and, by Ville's inequality, at every time
  ``sum_a N'_a (mu_hat_a - mu_a)^2 / (2 sigma_a^2) < log(2 / delta) + sum_a log(1 + N_a /
  rho) / 2 =: beta`` with ``N'_a = N_a^2 / (N_a + rho)``. The value of sigma_a is never used
  by the bound, only by the statistic (``valid-kk``: Kaufmann & Koolen's Theorem 9 with
  ``|S| = N`` at ``delta / 2``, counts ``N_a``, ``"all-arms-gaussian"``).

On both events, if the answer S is wrong the true means mu lie in ``Alt_eps(S)``, so the
known-variance class GLR with per-arm variances ``U_a`` and counts ``N'_a``,
``inf_{lambda in Alt} sum_a N'_a (mu_hat_a - lambda_a)^2 / (2 U_a)``, is at most its value at
``lambda = mu``, which is at most ``sum_a N'_a (mu_hat_a - mu_a)^2 / (2 sigma_a^2) < beta``
(``U_a >= sigma_a^2``). Stopping when that GLR reaches ``beta`` errs with probability at most
``delta / 2 + delta / 2``. The GLR is tested through
:func:`~combex.estimation._glr.class_glr_lower_bound` with ``variances=U`` (a certified lower
bound of it, so the stop is still valid). Price: ``U_a / sigma_a^2 -> 1 + eta`` at worst and
the ``log 2`` of the split; with N = 5 arms and delta = 0.01, ``U_a / sigma_hat_a^2`` is 28 at 10
samples, 2.4 at 100, 1.32 at 1,000 and 1.11 at 10,000 (the chi-square quantile at
``delta_k``).

Needs at least two samples of every arm (forced initial pulls) and the individual rewards
(their squares), not only sums of batches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaincinv

from .._validation import check_choice, check_int, check_probability
from ._glr import MIXTURE_RHO, GLRThreshold, kk_C_gauss

__all__ = ["kl_gaussian_unknown_variance", "pair_glr_unknown_variance", "UnknownVarianceThreshold",
           "ClassUnknownVarianceThreshold", "variance_floor"]

#: Variances are floored at the square of this multiple of (1 + |mean|): the resolution of
#: the rewards themselves, so a run of identical rewards (probability 0 under a Gaussian model)
#: gives a large, finite statistic, while a small variance of large rewards (1e-4 around a mean
#: of 1e6) is kept.
_VAR_REL_FLOOR = 1e-9


def variance_floor(mean: Any) -> Any:
    """The floor of an empirical variance given the arm's mean: ``(1e-9 (1 + |mean|))^2``."""
    return (_VAR_REL_FLOOR * (1.0 + np.abs(mean))) ** 2


def kl_gaussian_unknown_variance(x: Any, y: Any, var: Any) -> Any:
    """``1/2 log(1 + (x - y)^2 / var)``: the unknown-variance transportation cost (the KL
    from ``N(x, var)`` to the closest Gaussian of mean ``y`` and any variance)."""
    return 0.5 * np.log1p((np.asarray(x) - np.asarray(y)) ** 2 / np.asarray(var))


def pair_glr_unknown_variance(
    mu_i: Any, mu_j: Any, n_i: Any, n_j: Any, var_i: Any, var_j: Any, *, epsilon: float = 0.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unknown-variance GLR of "arm i is epsilon-good against arm j" (vectorized over pairs).

    ``Z = inf_{l_j >= l_i + eps} n_i/2 log(1 + (mu_i - l_i)^2 / var_i) + n_j/2 log(1 + (mu_j -
    l_j)^2 / var_j)`` (0 when ``mu_j >= mu_i + eps``), exactly: with ``q = mu_j - eps``,
    ``D = mu_i - q > 0`` and ``l_i = q + D s``, the minimum is at ``s`` in ``[0, 1]`` where
    the derivative vanishes, ``(a + b) s^3 - (a + 2 b) s^2 + (a v + b u + b) s - a v = 0``
    (``a = n_i``, ``b = n_j``, ``u = var_i / D^2``, ``v = var_j / D^2``; negative at 0,
    positive at 1), or at an end: the function is evaluated at every real root in [0, 1] and
    at both ends (it is not convex, so no bisection).

    Returns
    -------
    Z : array
    x : array
        The alternative's ``l_i`` (``l_j = x + eps``).
    """
    mi = np.atleast_1d(np.asarray(mu_i, dtype=np.float64))
    mj = np.atleast_1d(np.asarray(mu_j, dtype=np.float64))
    a = np.atleast_1d(np.asarray(n_i, dtype=np.float64))
    b = np.atleast_1d(np.asarray(n_j, dtype=np.float64))
    vi = np.atleast_1d(np.asarray(var_i, dtype=np.float64))
    vj = np.atleast_1d(np.asarray(var_j, dtype=np.float64))
    mi, mj, a, b, vi, vj = np.broadcast_arrays(mi, mj, a, b, vi, vj)
    if mi.size <= 24:  # a few pairs: scalar arithmetic is faster than numpy's per-call overhead
        rows = [_pair_scalar(*r, epsilon) for r in zip(mi.tolist(), mj.tolist(), a.tolist(), b.tolist(),
                                                      vi.tolist(), vj.tolist())]
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    q = mj - epsilon
    D = mi - q
    z = np.zeros(D.shape)
    x = 0.5 * (mi + q)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        tiny = (D > 0) & (np.minimum(vi, vj) > _SMALL_GAP * D * D)
    if tiny.any():
        z[tiny], x[tiny] = _small_gap(D[tiny], q[tiny], a[tiny], b[tiny], vi[tiny], vj[tiny])
    pos = (D > 0) & ~tiny
    if not pos.any():
        return z, x
    Dp, ap, bp, qp = D[pos], a[pos], b[pos], q[pos]
    u, v = vi[pos] / (Dp * Dp), vj[pos] / (Dp * Dp)
    c3 = ap + bp
    # monic cubic s^3 + p2 s^2 + p1 s + p0
    p2, p1, p0 = -(ap + 2.0 * bp) / c3, (ap * v + bp * u + bp) / c3, -(ap * v) / c3
    roots = _cubic_real_roots(p2, p1, p0)
    cand = np.concatenate([np.clip(roots, 0.0, 1.0), np.zeros((Dp.shape[0], 1)), np.ones((Dp.shape[0], 1))], axis=1)
    f = 0.5 * ap[:, None] * np.log1p((1.0 - cand) ** 2 / u[:, None]) + 0.5 * bp[:, None] * np.log1p(cand ** 2 / v[:, None])
    k = np.argmin(f, axis=1)
    r = np.arange(Dp.shape[0])
    z[pos] = f[r, k]
    x[pos] = qp + Dp * cand[r, k]
    return z, x


#: Gaps with ``D^2 < var / _SMALL_GAP`` (both arms) take :func:`_small_gap`.
_SMALL_GAP = 1e12


def _small_gap(D: Any, q: Any, a: Any, b: Any, vi: Any, vj: Any) -> tuple[Any, Any]:
    """The pair GLR when the gap is tiny against both standard deviations (``y = D^2 / var
    < 1e-12``): ``log(1 + y) = y`` to a relative ``y / 2``, so the cost is the Gaussian pair's
    with variances ``vi``, ``vj``: ``Z = D^2 w_i w_j / (2 (w_i + w_j))``, ``w = n / var``, at
    ``s = w_i / (w_i + w_j)``. (The cubic's coefficients grow like ``var / D^2`` and its
    discriminant like their cube, which overflows for gaps near 1e-100.)"""
    wi, wj = a / vi, b / vj
    return 0.5 * D * D * wi * wj / (wi + wj), q + D * (wi / (wi + wj))


def _pair_scalar(mi: float, mj: float, a: float, b: float, vi: float, vj: float, eps: float) -> tuple[float, float]:
    """One pair of :func:`pair_glr_unknown_variance` in plain float arithmetic."""
    q = mj - eps
    D = mi - q
    if not D > 0:
        return 0.0, 0.5 * (mi + q)
    if min(vi, vj) > _SMALL_GAP * D * D:
        return _small_gap(D, q, a, b, vi, vj)
    u, v = vi / (D * D), vj / (D * D)
    c3 = a + b
    p2, p1, p0 = -(a + 2.0 * b) / c3, (a * v + b * u + b) / c3, -(a * v) / c3
    sh = p2 / 3.0
    p = p1 - p2 * p2 / 3.0
    qq = 2.0 * p2 ** 3 / 27.0 - p2 * p1 / 3.0 + p0
    disc = (qq / 2.0) ** 2 + (p / 3.0) ** 3
    if disc > 0:
        sd = math.sqrt(disc)
        roots = [_cbrt(-qq / 2.0 + sd) + _cbrt(-qq / 2.0 - sd) - sh]
    else:
        m = math.sqrt(max(-p / 3.0, 0.0))
        arg = max(-1.0, min(1.0, -qq / (2.0 * m ** 3))) if m > 0 else 0.0
        th = math.acos(arg) / 3.0
        roots = [2.0 * m * math.cos(th - 2.0 * math.pi * k / 3.0) - sh for k in range(3)]
    best, bx = math.inf, 0.0
    for r in roots:
        for _ in range(2):  # Newton polish
            d = (3.0 * r + 2.0 * p2) * r + p1
            if abs(d) > 1e-14:
                r -= (((r + p2) * r + p1) * r + p0) / d
        if r == r:  # not NaN
            c = min(1.0, max(0.0, r))
            f = 0.5 * a * math.log1p((1.0 - c) ** 2 / u) + 0.5 * b * math.log1p(c * c / v)
            if f < best:
                best, bx = f, c
    for c in (0.0, 1.0):
        f = 0.5 * a * math.log1p((1.0 - c) ** 2 / u) + 0.5 * b * math.log1p(c * c / v)
        if f < best:
            best, bx = f, c
    return best, q + D * bx


def _cbrt(x: float) -> float:
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


def _cubic_real_roots(p2: Any, p1: Any, p0: Any) -> NDArray[np.float64]:
    """Real roots of ``s^3 + p2 s^2 + p1 s + p0`` (vectorized; shape (m, 3), a single real
    root repeated), by the trigonometric / Cardano formulas, each polished by two Newton
    steps; rows where the formulas fail (not finite) fall back to the companion matrix."""
    sh = p2 / 3.0
    p = p1 - p2 * p2 / 3.0
    q = 2.0 * p2 ** 3 / 27.0 - p2 * p1 / 3.0 + p0
    disc = (q / 2.0) ** 2 + (p / 3.0) ** 3
    out = np.empty(p2.shape + (3,))
    one = disc > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.where(one, disc, 0.0))
        r1 = np.cbrt(-q / 2.0 + sd) + np.cbrt(-q / 2.0 - sd)
        m = np.sqrt(np.maximum(-p / 3.0, 0.0))
        arg = np.where(m > 0, np.clip(-q / (2.0 * np.maximum(m, 1e-300) ** 3), -1.0, 1.0), 0.0)
        th = np.arccos(arg) / 3.0
        for k in range(3):
            out[:, k] = np.where(one, r1, 2.0 * m * np.cos(th - 2.0 * math.pi * k / 3.0))
    out -= sh[:, None]
    for _ in range(2):  # Newton polish
        f = ((out + p2[:, None]) * out + p1[:, None]) * out + p0[:, None]
        d = (3.0 * out + 2.0 * p2[:, None]) * out + p1[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            step = np.where(np.abs(d) > 1e-14, f / d, 0.0)
        out = out - np.where(np.isfinite(step), step, 0.0)
    bad = ~np.isfinite(out).all(axis=1)
    if bad.any():
        comp = np.zeros((int(bad.sum()), 3, 3))
        comp[:, 0, :] = np.stack([-p2[bad], -p1[bad], -p0[bad]], axis=1)
        comp[:, 1, 0] = 1.0
        comp[:, 2, 1] = 1.0
        out[bad] = np.linalg.eigvals(comp).real
    return out


class UnknownVarianceThreshold:
    """Pair thresholds ``beta_ij(N_i, N_j)`` of the unknown-variance GLR (module docstring).

    Parameters
    ----------
    delta : float in (0, 1)
    kind : {"valid", "heuristic"}
        ``"heuristic"``: ``log((1 + log t) / delta)`` for every pair (no guarantee).
    n_alternatives : int
        ``m``, the number of two-arm alternatives in the union.
    n_arms : int
        N (union of the variance events).
    eta : float, default 0.03
        Ratio of the geometric grid of the variance bound.
    means : {"mixture", "kk"}, default "mixture"
        The time-uniform bound of the means (module docstring).
    """

    def __init__(self, delta: float, kind: str = "valid", *, n_alternatives: int = 1, n_arms: int = 2,
                 eta: float = 0.03, means: str = "mixture") -> None:
        self.delta = check_probability(delta, "delta", owner="UnknownVarianceThreshold")
        self.kind = check_choice(kind, "threshold", ("valid", "heuristic"), owner="UnknownVarianceThreshold")
        self.m = check_int(n_alternatives, "n_alternatives", owner="UnknownVarianceThreshold", low=1)
        self.n = check_int(n_arms, "n_arms", owner="UnknownVarianceThreshold", low=1)
        self.eta = float(eta)
        self.means = check_choice(means, "means", ("mixture", "kk"), owner="UnknownVarianceThreshold")
        self.rho = MIXTURE_RHO
        if self.means == "kk":
            self._mean_const = 4.0 * kk_C_gauss(math.log(2.0 * self.m / self.delta) / 2.0)
        else:
            self._mean_const = 2.0 * math.log(2.0 * self.m / self.delta)
        self._dk = self.delta / (2.0 * self.n * (math.pi ** 2 / 6.0))
        self._grid = np.array([2], dtype=np.int64)
        self._q = np.atleast_1d(self._quantile(2, 0))

    @property
    def name(self) -> str:
        return "heuristic" if self.kind == "heuristic" else "valid:pairs-unknown-variance"

    def _quantile(self, n_k: Any, k: Any) -> Any:
        """The chi-square quantile ``F^{-1}_{n_k - 1}(delta_k / (k + 1)^2)`` (scalar or
        arrays; ``2 gammaincinv(df / 2, q)``, the formula of ``scipy.stats.chi2.ppf`` without
        its per-call overhead: a threshold is built for every level ``delta_achieved`` tries)."""
        return 2.0 * gammaincinv((np.asarray(n_k, dtype=np.float64) - 1.0) / 2.0,
                                 self._dk / (np.asarray(k, dtype=np.float64) + 1.0) ** 2)

    def _extend(self, n_max: int) -> None:
        """Grow the grid past ``n_max`` (geometric by ``1 + eta``), the new quantiles in one
        vectorized call."""
        grid = list(self._grid)
        first = len(grid)
        while grid[-1] <= n_max:
            grid.append(max(grid[-1] + 1, int(math.floor((1.0 + self.eta) * grid[-1]))))
        self._grid = np.asarray(grid, dtype=np.int64)
        self._q = np.concatenate([self._q, self._quantile(self._grid[first:], np.arange(first, len(grid)))])

    def variance_lower(self, n: Any) -> NDArray[np.float64]:
        """``b(n)``: with probability ``1 - delta/2``, ``S_a / sigma_a^2 >= b(N_a)`` for every
        arm and every ``N_a >= 2`` (0 below 2 samples)."""
        n = np.asarray(n, dtype=np.int64)
        top = int(n.max()) if n.size else 2
        if top >= int(self._grid[-1]):
            self._extend(top)
        k = np.searchsorted(self._grid, n, side="right") - 1
        return np.where(n >= 2, self._q[np.maximum(k, 0)], 0.0)

    def mean_bound(self, n_i: Any, n_j: Any) -> NDArray[np.float64]:
        """``A_ij``: with probability ``1 - delta/2``, ``r_i x_i + r_j x_j <= A_ij`` for every
        pair (``r_a = N_a / (N_a + rho)`` with ``means="mixture"``, 1 with ``"kk"``)."""
        ni = np.maximum(np.asarray(n_i, dtype=np.float64), 1.0)
        nj = np.maximum(np.asarray(n_j, dtype=np.float64), 1.0)
        if self.means == "mixture":
            return self._mean_const + np.log1p(ni / self.rho) + np.log1p(nj / self.rho)
        return self._mean_const + 4.0 * (np.log(4.0 + np.log(ni)) + np.log(4.0 + np.log(nj)))

    def _shrink(self, n: Any) -> Any:
        """``r_a`` of the mean bound (module docstring)."""
        return n / (n + self.rho) if self.means == "mixture" else np.ones_like(n)

    def pairs(self, n_i: Any, n_j: Any, t: float | None = None) -> NDArray[np.float64]:
        """``beta_ij`` for arrays of pair counts (``t``: total samples, heuristic only)."""
        ni, nj = np.broadcast_arrays(np.atleast_1d(np.asarray(n_i, dtype=np.float64)),
                                     np.atleast_1d(np.asarray(n_j, dtype=np.float64)))
        if self.kind == "heuristic":
            tt = max(float(t if t is not None else (ni + nj).max()), 1.0)
            return np.full(ni.shape, math.log((1.0 + math.log(tt)) / self.delta))
        A = self.mean_bound(ni, nj)
        bi = self.variance_lower(ni.astype(np.int64)) * self._shrink(ni)
        bj = self.variance_lower(nj.astype(np.int64)) * self._shrink(nj)
        if np.any(bi <= 0) or np.any(bj <= 0):
            out = np.full(ni.shape, math.inf)
            ok = (bi > 0) & (bj > 0)
            if ok.any():
                out[ok] = self._pairs(ni[ok], nj[ok], A[ok], bi[ok], bj[ok])
            return out
        return self._pairs(ni, nj, A, bi, bj)

    @staticmethod
    def _pairs(ni: Any, nj: Any, A: Any, bi: Any, bj: Any) -> NDArray[np.float64]:
        xi = np.clip((ni * (bj + A) - nj * bi) / (ni + nj), 0.0, A)
        return 0.5 * ni * np.log1p(xi / bi) + 0.5 * nj * np.log1p((A - xi) / bj)

    def __call__(self, t: float, counts: Any = None) -> float:
        """The threshold of the pair of the two least sampled arms (a summary for traces)."""
        c = np.sort(np.asarray(counts, dtype=np.float64))
        return float(self.pairs(c[:1], c[1:2], t)[0]) if c.size >= 2 else math.inf


class ClassUnknownVarianceThreshold:
    """Threshold of the class GLR with unknown variances (module docstring, "Decision
    classes"): the known-variance all-arms threshold at ``delta / 2`` and per-arm variance
    upper bounds ``U_a = N_a sigma_hat_a^2 / b(N_a)`` valid together with probability
    ``1 - delta / 2``.

    Parameters
    ----------
    delta : float in (0, 1)
    kind : {"valid", "heuristic"}
        ``"heuristic"``: ``log((1 + log t) / delta)`` with the empirical variances plugged in
        (no guarantee).
    n_arms : int
    structure : {"all-arms-mixture", "all-arms-gaussian"}
        The bound of the means (``"all-arms-gaussian"``: Kaufmann & Koolen's Theorem 9).
    eta : float, default 0.03
        Ratio of the geometric grid of the variance bound.
    """

    def __init__(self, delta: float, kind: str = "valid", *, n_arms: int = 2,
                 structure: str = "all-arms-mixture", eta: float = 0.03) -> None:
        self.delta = check_probability(delta, "delta", owner="ClassUnknownVarianceThreshold")
        self.kind = check_choice(kind, "threshold", ("valid", "heuristic"), owner="ClassUnknownVarianceThreshold")
        self.structure = check_choice(structure, "structure", ("all-arms-mixture", "all-arms-gaussian"),
                                      owner="ClassUnknownVarianceThreshold")
        self.n = check_int(n_arms, "n_arms", owner="ClassUnknownVarianceThreshold", low=1)
        self.means = GLRThreshold(self.delta / 2.0, kind, structure=structure, n_arms=self.n)
        self.rho = self.means.rho
        self.variances = UnknownVarianceThreshold(self.delta, "valid", n_alternatives=1, n_arms=self.n, eta=eta)

    @property
    def name(self) -> str:
        return "heuristic" if self.kind == "heuristic" else f"valid:{self.structure}-unknown-variance"

    def __call__(self, t: float, counts: Any = None) -> float:
        """``beta`` of the means after ``t`` samples with per-arm ``counts``."""
        if self.kind == "heuristic":
            return math.log((1.0 + math.log(max(float(t), 1.0))) / self.delta)
        return self.means(t, counts)

    def effective_counts(self, counts: Any) -> NDArray[np.float64]:
        """The counts of the statistic: ``N^2 / (N + rho)`` (mixture), ``N`` otherwise."""
        n = np.asarray(counts, dtype=np.float64)
        if self.kind == "valid" and self.structure == "all-arms-mixture":
            return self.means.effective_counts(n)
        return n

    def variance_upper(self, counts: Any, var: Any) -> NDArray[np.float64]:
        """``U_a = N_a var_a / b(N_a)`` (``var``: the maximum-likelihood empirical variances);
        the plug-in ``var`` itself with ``kind="heuristic"``; inf below two samples."""
        n = np.asarray(counts, dtype=np.int64)
        v = np.asarray(var, dtype=np.float64)
        if self.kind == "heuristic":
            return v.copy()
        b = self.variances.variance_lower(n)
        with np.errstate(divide="ignore"):
            return np.where(b > 0, n * v / np.where(b > 0, b, 1.0), math.inf)
