"""Time-uniform confidence bounds on a noise variance, and a valid test of a declared scale.

Both are built from the *residuals* of the observations, and both hold at every time at once
(Ville's inequality on a mixture of nonnegative supermartingales), so a run may look at them
after every sample, stop at a data-dependent time, and still keep their guarantees.

**Observations.** Observation ``s`` is the sum ``S_s`` of ``c_s`` rewards of one arm with
features ``x_s`` (a feature row, a team's indicator vector, or the unit vector of an index
arm): ``S_s = c_s x_s^T theta + eta_s`` with ``eta_s`` of variance (proxy) ``c_s sigma^2``.
Normalized, ``z_s = S_s / sqrt(c_s)`` has features ``u_s = sqrt(c_s) x_s`` and noise of variance
``sigma^2``: one shared noise level whatever the arm (a session's score noise in a team study).

**Upper confidence bound on sigma^2 (Gaussian noise; :meth:`ResidualVariance.upper`).** Let
``theta_{s-1}`` be the ridge estimate (prior precision ``lam_0``) of the observations before
``s`` and ``V_{s-1} = lam_0 I + sum_{r < s} u_r u_r^T``. The innovation ``d_s = z_s -
u_s^T theta_{s-1} = eta_s / sqrt(c_s) + u_s^T (theta - theta_{s-1})`` is, given the past, Gaussian
with variance ``sigma^2`` and a mean ``m_s`` fixed by the past (the arm is chosen from the past,
whatever the sampling rule). For a Gaussian ``N(m, sigma^2)`` and ``l, w >= 0``,
``E exp(-l w d^2 / sigma^2) = (1 + 2 l w)^{-1/2} exp(-l w m^2 / (sigma^2 (1 + 2 l w))) <=
(1 + 2 l w)^{-1/2}``: the unknown mean only helps. With the predictable weights
``w_s = 1 / (1 + u_s^T V_{s-1}^{-1} u_s)``,

    M_t(l) = exp(-l R_t / sigma^2 + 1/2 sum_{s <= t} log(1 + 2 l w_s)),   R_t = sum_s w_s d_s^2,

is a nonnegative supermartingale with ``M_0 = 1``, and ``R_t`` is exactly the residual sum of
squares of the ridge fit (the recursive least-squares identity). A mixture ``sum_j p_j M_t(l_j)``
over a fixed grid (weights ``p_j`` summing to 1) is one too, so by Ville's inequality, with
probability ``1 - alpha``, at every time ``sum_j p_j M_t(l_j) < 1 / alpha``. The left side
increases with ``sigma^2``; the upper bound ``U_t(alpha)`` is the ``sigma^2`` where it reaches
``1 / alpha`` (a bisection), so ``P(exists t: sigma^2 > U_t) <= alpha``. One arm observed many
times (``x_s`` the same unit vector) gives ``w_s = (n - 1) / n`` (``lam_0 -> 0``): the within-arm
sum of squares. As ``t -> inf``, ``U_t / hat sigma^2 -> 1``; at ``n`` effective degrees of
freedom it is about ``1 + 2 sqrt(log(1/alpha) / n)`` (1.3 at n = 500, alpha = 0.01).

**Test of a declared scale sigma_0 (sub-Gaussian noise; :meth:`ResidualVariance.scale_check`).**
Under H0 "each ``eta_s / sqrt(c_s)`` is sigma_0-sub-Gaussian given the past" (a Gaussian of
standard deviation at most sigma_0, a reward bounded in a range of width 2 sigma_0, ...),
``E exp(l eta^2 / sigma_0^2) <= (1 - 2 l)^{-1/2}`` for ``0 <= l < 1/2`` (write
``exp(l eta^2) = E_g exp(sqrt(2 l) g eta)`` with ``g ~ N(0, 1)`` and use the sub-Gaussian
bound), so ``N_t(l) = exp(l Q_t / sigma_0^2 + t / 2 log(1 - 2 l))`` with ``Q_t = sum_s eta_s^2 /
c_s`` is a nonnegative supermartingale. The ordinary least-squares residual sum of squares is
at most ``Q_t`` (the truth is one of the fits it minimizes over), so rejecting H0 when the
mixture of ``N_t(l_j)`` evaluated at ``R^OLS_t`` reaches ``1 / alpha`` rejects a true H0 with
probability at most ``alpha``, over the whole run. The largest scale the test rejects is a
lower confidence bound of the noise scale (reported as ``observed_at_least``). A linear model
that does not hold (interactions between team members) inflates ``R^OLS``: the test then also
rejects, which is as well, since the guarantee assumed the model.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["ResidualVariance", "DeclaredScaleWatch", "variance_upper_bound", "declared_scale_rejected", "observed_scale_lower",
           "NOISE_CHECK_ALPHA", "MIN_TESTED_DOF"]

#: Error budget of the test of a declared noise scale: the probability that a true declaration
#: is ever flagged over a whole run.
NOISE_CHECK_ALPHA = 0.01

#: Residual degrees of freedom a declared scale must have been tested on before a run may stop
#: under it (the solvers defer a stop until then).
MIN_TESTED_DOF = 5

#: Mixture grids (uniform weights): ``l`` for the variance upper bound and for the test.
_L_LOW = np.geomspace(1e-3, 3.0, 24)
_L_UP = np.geomspace(1e-3, 0.49, 32)


def _logmeanexp(a: NDArray[np.float64]) -> float:
    m = float(np.max(a))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.mean(np.exp(a - m))))


def variance_upper_bound(rss: float, log_terms: NDArray[np.float64], alpha: float) -> float:
    """``U`` with ``log mean_j exp(-l_j rss / U + log_terms_j / 2) = log(1 / alpha)``: the
    time-uniform upper confidence bound of the noise variance (module docstring);
    ``log_terms_j = sum_s log(1 + 2 l_j w_s)`` over the grid :data:`_L_LOW`. ``inf`` while
    the data cannot bound it (too few degrees of freedom), 0 when ``rss`` is 0 and the
    degrees of freedom suffice. Relative precision 1e-6 (two vectorized refinements of a
    bracket; the result is rounded up, so the bound stays valid)."""
    target = math.log(1.0 / alpha)
    half = 0.5 * np.asarray(log_terms, dtype=np.float64)
    if _logmeanexp(half) <= target:  # even sigma^2 = inf is not rejected
        return math.inf
    if rss <= 0.0:
        return 0.0
    G = half.shape[0]
    # bracket: one grid point alone (mean <= max) and the union bound (mean >= max / G)
    with np.errstate(divide="ignore"):
        one = np.where(half > target, _L_LOW * rss / np.maximum(half - target, 1e-300), np.inf)
        uni = np.where(half > target + math.log(G), _L_LOW * rss / np.maximum(half - target - math.log(G), 1e-300),
                       np.inf)
    lo, hi = math.log(float(one.min())), math.log(float(uni.min()))
    if not math.isfinite(hi):
        hi = lo + 50.0
    lo -= 1e-9
    for _ in range(3):  # vectorized passes of 32 points: (hi - lo) / 32^3
        grid = np.linspace(lo, hi, 33)
        a = -_L_LOW[None, :] * rss * np.exp(-grid)[:, None] + half[None, :]
        m = a.max(axis=1)
        val = m + np.log(np.mean(np.exp(a - m[:, None]), axis=1)) - target
        k = int(np.searchsorted(val >= 0.0, True))  # val increases with the grid
        k = min(max(k, 1), 32)
        lo, hi = float(grid[k - 1]), float(grid[k])
        if hi - lo < 1e-7:
            break
    return math.exp(hi)


def _test_log_stat(rss: float, n: int, sigma2: float) -> float:
    """``log mean_j exp(l_j rss / sigma2 + n/2 log(1 - 2 l_j))`` (the test's mixture)."""
    return _logmeanexp(_L_UP * rss / sigma2 + 0.5 * n * np.log1p(-2.0 * _L_UP))


def declared_scale_rejected(rss: float, n: int, sigma0: float, alpha: float = NOISE_CHECK_ALPHA) -> bool:
    """Whether the test of the module docstring rejects the declared scale ``sigma0`` given
    the OLS residual sum of squares ``rss`` of ``n`` normalized observations."""
    if n <= 0 or rss <= 0.0:
        return False
    return _test_log_stat(rss, n, sigma0 * sigma0) >= math.log(1.0 / alpha)


def observed_scale_lower(rss: float, n: int, alpha: float = NOISE_CHECK_ALPHA) -> float:
    """The largest noise scale the test rejects (a lower confidence bound of the scale;
    0 when it rejects none)."""
    if n <= 0 or rss <= 0.0:
        return 0.0
    target = math.log(1.0 / alpha)
    # the statistic decreases with sigma2
    lo, hi = math.log(rss) - 60.0, math.log(rss / max(n, 1)) + 2.0
    if _test_log_stat(rss, n, math.exp(lo)) < target:
        return 0.0
    while _test_log_stat(rss, n, math.exp(hi)) >= target:
        hi += 4.0
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if _test_log_stat(rss, n, math.exp(mid)) >= target:
            lo = mid
        else:
            hi = mid
    return math.sqrt(math.exp(lo))


class ResidualVariance:
    """The residual statistics of a linear model with one shared noise level (module
    docstring): ``sum z_s^2`` and the count of normalized observations always (the test of a
    declared scale needs them with the fit's ``A`` and ``b``), and, once :meth:`start` is
    called, the recursive ridge residuals of :meth:`upper`.

    A run that starts the recursion late (when a declared scale is rejected) starts the
    supermartingale at that time: ``M_t / M_tau`` is again a nonnegative supermartingale with
    initial value 1 given the past, so the bound holds from then on.

    Parameters
    ----------
    d : int
        Dimension of the features.
    ridge : float, default 1e-6
        Prior precision ``lam_0`` of the recursive fit (any value keeps the bound valid;
        small values lose the least degrees of freedom).
    """

    def __init__(self, d: int, *, ridge: float = 1e-6) -> None:
        self.d = int(d)
        self.ridge = float(ridge)
        self.zz = 0.0  # sum z_s^2 = sum S_s^2 / c_s
        self.n = 0  # normalized observations
        self.active = False
        self.ucb: tuple[float, int, float] | None = None  # (alpha, n, U) of the last reusable bound
        # the residual statistics that bound was computed from: (rss, log_terms)
        self.ucb_data: tuple[float, NDArray[np.float64]] | None = None
        self.rss = 0.0  # recursive (ridge) residual sum of squares R_t since start()
        self.log_terms = np.zeros(_L_LOW.shape[0])
        self.dof = 0.0  # sum of the weights w_s since start()

    def start(self, A: NDArray[np.float64] | None = None, b: NDArray[np.float64] | None = None) -> None:
        """Start the recursion, from the fit of the past observations (``A = sum c x x^T``,
        ``b = sum S x``; none: from nothing)."""
        A = np.zeros((self.d, self.d)) if A is None else np.asarray(A, dtype=np.float64)
        b = np.zeros(self.d) if b is None else np.asarray(b, dtype=np.float64)
        self.V_inv = np.linalg.inv(self.ridge * np.eye(self.d) + A)
        self.theta = self.V_inv @ b
        self.rss = 0.0
        self.log_terms = np.zeros(_L_LOW.shape[0])
        self.dof = 0.0
        self.ucb = None
        self.ucb_data = None
        self.active = True

    def add(self, X: NDArray[np.float64], reward_sums: Any, counts: Any) -> None:
        """Fold observations: row ``i`` of ``X`` (features of the arm) was observed
        ``counts[i]`` times with reward sum ``reward_sums[i]`` (entries of count 0 skipped)."""
        c = np.asarray(counts, dtype=np.float64).reshape(-1)
        S = np.asarray(reward_sums, dtype=np.float64).reshape(-1)
        keep = c > 0
        if not keep.all():
            X, c, S = np.asarray(X)[keep], c[keep], S[keep]
        if c.size == 0:
            return
        self.zz += float(np.sum(S * S / c))
        self.n += int(c.size)
        if not self.active:
            return
        X = np.asarray(X, dtype=np.float64).reshape(c.size, self.d)
        for i in range(c.size):
            r = math.sqrt(c[i])
            u = X[i] * r
            z = S[i] / r
            Vu = self.V_inv @ u
            w = 1.0 / (1.0 + float(u @ Vu))
            dv = z - float(u @ self.theta)
            self.rss += w * dv * dv
            self.log_terms += np.log1p(2.0 * _L_LOW * w)
            self.dof += w
            self.V_inv -= np.outer(Vu, Vu) * w  # Sherman-Morrison
            self.theta = self.theta + Vu * (w * dv)

    def upper(self, alpha: float, *, reuse: float = 0.0) -> float:
        """Time-uniform upper confidence bound of the variance (Gaussian noise); ``inf``
        before :meth:`start` or while the data cannot bound it. ``reuse > 0``: the bound last
        computed at this ``alpha`` is returned until the observations grew by that fraction
        (still a valid bound: the event covers every time; it saves the work at every check)."""
        if not self.active:
            return math.inf
        c = self.ucb
        if reuse > 0 and c is not None and c[0] == alpha and self.n < (1.0 + reuse) * c[1]:
            return c[2]
        U = variance_upper_bound(self.rss, self.log_terms, alpha)
        if reuse > 0:
            self.ucb = (float(alpha), int(self.n), float(U))
            self.ucb_data = (float(self.rss), self.log_terms.copy())
        return U

    def upper_as_reused(self, alpha: float) -> float:
        """The bound at level ``alpha`` from the same observations as the reusable bound of
        :meth:`upper` in use (``upper(alpha', reuse=...)``; the current observations when
        there is none). A rule that reuses its bound at ``alpha'`` and asks at which other
        levels it would hold must ask this: at ``alpha = alpha'`` it is that bound exactly,
        and it decreases in ``alpha`` (valid for the same reason: the event covers every
        time, so a bound from earlier observations still holds)."""
        if not self.active:
            return math.inf
        if self.ucb_data is None:
            return variance_upper_bound(self.rss, self.log_terms, alpha)
        return variance_upper_bound(self.ucb_data[0], self.ucb_data[1], alpha)

    def ols_rss(self, A: NDArray[np.float64], b: NDArray[np.float64]) -> float:
        """The least-squares residual sum of squares ``min_theta sum (z - u^T theta)^2`` from
        ``A = sum c x x^T`` and ``b = sum S x`` (pseudo-inverse where ``A`` is singular)."""
        if self.n == 0:
            return 0.0
        theta, *_ = np.linalg.lstsq(A, b, rcond=None)
        return max(self.zz - float(b @ theta), 0.0)

    def estimate(self, A: NDArray[np.float64], b: NDArray[np.float64]) -> float:
        """Point estimate of the variance, ``R^OLS / (n - rank A)`` (nan without degrees of
        freedom)."""
        rank = int(np.linalg.matrix_rank(A)) if self.n else 0
        dof = self.n - rank
        return self.ols_rss(A, b) / dof if dof > 0 else math.nan

    def scale_check(self, A: NDArray[np.float64], b: NDArray[np.float64], sigma0: float,
                    alpha: float = NOISE_CHECK_ALPHA) -> dict[str, Any]:
        """The test of a declared scale ``sigma0`` (module docstring)."""
        return scale_check_dict(self.ols_rss(A, b), self.n, sigma0, self.estimate(A, b), alpha)


def scale_check_dict(rss: float, n: int, sigma0: float, variance_estimate: float,
                     alpha: float = NOISE_CHECK_ALPHA) -> dict[str, Any]:
    """The record a solver reports for the test of a declared noise scale."""
    rejected = declared_scale_rejected(rss, n, sigma0, alpha)
    return {"rejected": bool(rejected), "declared": float(sigma0),
            "estimate": math.sqrt(variance_estimate) if variance_estimate == variance_estimate else math.nan,
            "observed_at_least": observed_scale_lower(rss, n, alpha) if rejected else None,
            "observations": int(n), "alpha": float(alpha)}


class DeclaredScaleWatch:
    """The residual statistics a run needs for the test of its declared noise scale, folded
    from every told ``(arm, count, reward_sum)`` (module docstring: normalized observations
    ``S / sqrt(c)``, the least-squares residual sum of squares, the test at any time).

    Index and linear arms keep per-arm counts, means and the within-arm sum of squares
    (Welford's centred updates; O(1) per observation); the linear model's residual sum of
    squares adds the between-arm part ``sum_a T_a (m_a - x_a^T theta_hat)^2`` of the weighted
    fit of the arm means (the cross term of the decomposition vanishes). Super-arms (masks)
    keep ``A = sum c x x^T``, ``b = sum S x`` and ``sum S^2 / c``.

    Parameters
    ----------
    n_arms : int
    features : array of shape (n_arms, d), optional
        Linear arms (the fit is the linear model's); None: index arms (one mean per arm).
    masks : bool
        Super-arms given as bool masks over ``n_arms`` members (the fit is the members' sum).
    """

    def __init__(self, n_arms: int, features: Any = None, *, masks: bool = False) -> None:
        self.masks = bool(masks)
        self.features = None if features is None else np.asarray(features, dtype=np.float64)
        self.n = 0
        if self.masks:
            d = int(n_arms)
            self.A = np.zeros((d, d))
            self.b = np.zeros(d)
            self.zz = 0.0
        else:
            self.T = np.zeros(int(n_arms), dtype=np.float64)
            self.mean = np.zeros(int(n_arms))
            self.rss_ = 0.0

    def add(self, arms: Any, counts: Any, reward_sums: Any) -> None:
        """Fold a told batch: ``arms`` (indices, or bool masks of shape (m, n_arms)),
        ``counts`` and ``reward_sums`` of shape (m,); entries of count 0 are skipped."""
        c = np.asarray(counts, dtype=np.float64).reshape(-1)
        S = np.asarray(reward_sums, dtype=np.float64).reshape(-1)
        keep = c > 0
        arms = np.asarray(arms)
        if not keep.all():
            arms, c, S = arms[keep], c[keep], S[keep]
        if c.size == 0:
            return
        self.n += int(c.size)
        if self.masks:
            X = arms.astype(np.float64)
            self.A += (X * c[:, None]).T @ X
            self.b += X.T @ S
            self.zz += float(np.sum(S * S / c))
            return
        for a, ca, s in zip(arms.astype(np.intp).tolist(), c.tolist(), S.tolist()):
            n = self.T[a]
            if n > 0:
                dev = s - ca * self.mean[a]
                self.rss_ += dev * dev / ca * n / (n + ca)
            self.T[a] = n + ca
            self.mean[a] += (s - ca * self.mean[a]) / (n + ca)

    def add_rewards(self, arm: int, rewards: Any) -> None:
        """Fold single rewards of one index or linear arm (a block of successive pulls)."""
        r = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if r.size == 0:
            return
        if r.size == 1:
            self.add(np.array([arm]), np.ones(1), r)
            return
        nb, mb = float(r.size), float(r.mean())
        m2b = float(((r - mb) ** 2).sum())
        n = self.T[arm]
        self.rss_ += m2b + ((mb - self.mean[arm]) ** 2) * n * nb / (n + nb) if n > 0 else m2b
        self.T[arm] = n + nb
        self.mean[arm] += (mb - self.mean[arm]) * nb / (n + nb)
        self.n += int(r.size)

    def _rank(self) -> int:
        if self.masks:
            return int(np.linalg.matrix_rank(self.A)) if self.n else 0
        seen = self.T > 0
        if self.features is None:
            return int(np.count_nonzero(seen))
        return int(np.linalg.matrix_rank(self.features[seen])) if seen.any() else 0

    def rss(self) -> float:
        """The least-squares residual sum of squares of the normalized observations."""
        if self.n == 0:
            return 0.0
        if self.masks:
            theta, *_ = np.linalg.lstsq(self.A, self.b, rcond=None)
            return max(self.zz - float(self.b @ theta), 0.0)
        if self.features is None:
            return float(self.rss_)
        seen = self.T > 0
        X, T, m = self.features[seen], self.T[seen], self.mean[seen]
        theta, *_ = np.linalg.lstsq(X * np.sqrt(T)[:, None], m * np.sqrt(T), rcond=None)
        return float(self.rss_ + np.sum(T * (m - X @ theta) ** 2))

    def dof(self) -> int:
        """Residual degrees of freedom (observations beyond the fitted parameters)."""
        return self.n - self._rank()

    def check(self, sigma0: float, alpha: float = NOISE_CHECK_ALPHA) -> dict[str, Any]:
        """The test of the declared scale ``sigma0`` now."""
        rss, dof = self.rss(), self.dof()
        return scale_check_dict(rss, self.n, sigma0, rss / dof if dof > 0 else math.nan, alpha)

    def state(self) -> dict[str, Any]:
        if self.masks:
            return {"n": self.n, "A": self.A.copy(), "b": self.b.copy(), "zz": self.zz}
        return {"n": self.n, "T": self.T.copy(), "mean": self.mean.copy(), "rss": self.rss_}

    def load(self, st: dict[str, Any]) -> None:
        self.n = int(st["n"])
        if self.masks:
            self.A = np.asarray(st["A"], dtype=np.float64).copy()
            self.b = np.asarray(st["b"], dtype=np.float64).copy()
            self.zz = float(st["zz"])
        else:
            self.T = np.asarray(st["T"], dtype=np.float64).copy()
            self.mean = np.asarray(st["mean"], dtype=np.float64).copy()
            self.rss_ = float(st["rss"])
