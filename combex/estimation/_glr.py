"""Generalized likelihood ratio (GLR) statistics and anytime-valid thresholds.

The stopping rule of the asymptotically optimal solvers (:mod:`combex.solvers.optimal`):
stop at the first check where the GLR of the empirical answer against its closest
alternative exceeds a threshold ``beta(t, delta)``,

    Z(t) = inf_{lambda in Alt_eps(answer)} sum_i N_i(t) d(mu_hat_i(t), lambda_i) >= beta(t, delta),

with ``d`` the divergence of the reward model (Gaussian ``(x - y)^2 / (2 sigma^2)``, or the
Bernoulli KL). ``Alt_eps(S)`` is the set of mean vectors under which ``S`` is *not*
epsilon-good, so ties end when ``epsilon > 0``.

Pairs (best arm, and Best-K with ``epsilon = 0``): ``Alt`` is a union of half-spaces
``{lambda_j >= lambda_i + eps}`` over pairs (i in the answer, j outside) and the GLR of one
pair has a closed form (Gaussian) or a one-dimensional convex minimization (KL):
:func:`pair_glr`.

Thresholds (``beta``), all from Kaufmann & Koolen (2021), "Mixture martingales revisited
with applications to sequential tests and confidence intervals", JMLR 22(246):

* ``"pairs"`` (Gaussian / sub-Gaussian, a union of ``m`` two-arm alternatives):
  ``beta(t) = 2 C_G(log(m / delta) / 2) + 4 log(4 + log(t / 2))`` with
  ``C_G(x) = min_{l in (1/2, 1]} (g_G(l) + x) / l``,
  ``g_G(l) = 2 l - 2 l log(4 l) + log zeta(2 l) - log(1 - l) / 2`` (their Theorem 9, the
  Gaussian mixture; in this two-arm form it is the threshold of Jourdan, Degenne, Baudry,
  de Heide & Kaufmann 2022, "Top two algorithms revisited"). ``m = K - 1`` for the best
  arm, ``m = K (N - K)`` for Best-K: an error means the true means lie in the half-space of
  one of these pairs, and the GLR against it is at most the two arms' deviation
  ``N_i d(mu_hat_i, mu_i) + N_j d(mu_hat_j, mu_j)``.
* ``"pairs-kl"`` (any one-parameter exponential family, used for Bernoulli KL):
  ``beta(t) = 2 T(log(m / delta) / 2) + 6 log(1 + log(t / 2))`` from their Theorem 7 with
  two arms, ``3 log(1 + log N_i) + 3 log(1 + log N_j) <= 6 log(1 + log(t / 2))`` (the map
  ``n -> log(1 + log n)`` is concave and ``N_i + N_j <= t``), and
  ``T(x) = 2 h~_{3/2}((h^{-1}(1 + x) + log(2 zeta(2))) / 2)``,
  ``h(u) = u - log u``, ``h~_z(x) = exp(1/h^{-1}(x)) h^{-1}(x)`` if
  ``x >= h^{-1}(1 / log z)``, else ``z (x - log log z)``; :func:`kk_T`
  (``T(x) ~ x + 4 log(1 + x + sqrt(2 x))``).
* ``"all-arms"`` (any decision class): ``beta = N T(log(1/delta) / N) + 3 sum_i
  log(1 + log N_i)``, Theorem 7 with the set of all N arms: the GLR against *any*
  alternative containing the truth is at most ``sum_i N_i d(mu_hat_i, mu_i)``, so no union
  over the (possibly exponentially many) answers is needed.
* ``"all-arms-gaussian"`` (any decision class, Gaussian / sub-Gaussian statistic):
  ``beta = N C_G(log(1/delta) / N) + 2 sum_i log(4 + log N_i)``, the Gaussian Theorem 9
  with the set of all N arms (the same theorem as ``"pairs"``, with ``|S| = N`` instead of
  2). About half of ``"all-arms"`` at moderate counts: with N = 8 arms sampled 125 times each
  and delta = 0.01, ``8 C_G(0.58) + 16 log(4 + log 125) = 52`` against ``8 T(0.58) + 24
  log(1 + log 125) = 101``. Used by the solvers for decision classes (Gaussian statistic).
* ``"pairs-mixture"`` (Gaussian / sub-Gaussian, the same union over ``m`` pairs; the default
  of the solvers): Robbins' normal mixture on each arm instead of Kaufmann & Koolen's
  stitched one, see below. For the pair (i, j):
  ``beta_ij = r_ij (log(m / delta) + log(1 + N_i / rho) / 2 + log(1 + N_j / rho) / 2)`` with
  ``r_ij = (q_i + q_j) / (1/N_i + 1/N_j)``, ``q_a = 1/N_a + rho / N_a^2``, ``rho = 1``.
  It grows like ``log N`` instead of ``log log N`` but has no stitching constant: with
  ``m = 36``, ``delta = 0.01`` and counts (170, 58) it is 13.0 against 20.2 for ``"pairs"``;
  at (10^6, 10^6) 22.0 against 23.1.
* ``"all-arms-mixture"`` (any decision class, Gaussian / sub-Gaussian statistic): the same
  per-arm normal mixtures multiplied over all N arms, ``beta = log(1 / delta) + sum_i
  log(1 + N_i / rho) / 2``, to be compared with the GLR computed at the *effective counts*
  ``N_i^2 / (N_i + rho)`` (:meth:`GLRThreshold.effective_counts`). With N = 8 arms sampled
  125 times each and delta = 0.01 it is 24 against 52 for ``"all-arms-gaussian"``.
* ``"sets-mixture"`` (a decision class that lists its ``m + 1`` members, Gaussian /
  sub-Gaussian statistic): the same normal mixtures on the arms of one alternative's
  difference only, ``beta_{S'} = log(m / delta) + sum_{a in S xor S'} log(1 + N_a / rho) / 2``
  against the GLR of S' at the effective counts, one per alternative
  (:meth:`GLRThreshold.sets`). It pays ``log m`` for the union instead of the arms outside
  the difference: with 8 members and N = 6 arms sampled 3,000 times each, delta = 0.1 and a
  two-arm closest alternative, 12.3 against 26.3 for ``"all-arms-mixture"``.
* ``"sets-product-mixture"`` (a decision class too large to list, Gaussian / sub-Gaussian
  statistic): the ``"sets-mixture"`` form without the count of members, ``beta_{S'} =
  log(1 / delta) + sum_{a in S xor S'} (log(1 + N_a / rho) / 2 + log(1 / p))`` with ``p =
  2^(1/N) - 1`` (about ``N / log 2``: ``log(1/p)`` is 3.57 at N = 25, 5.89 at N = 250): the
  union weighs each possible difference D by ``p^|D|``, and the weights of all the nonempty
  subsets of the N arms sum to ``(1 + p)^N - 1 = 1``. The certificate of
  :func:`class_glr_lower_bound` tests it member by member through the oracle. On the 120
  perfect matchings of K(5, 5) (25 arms, delta 0.1, the listing turned off) top-two stopped
  at 27,203 samples with it and had not stopped after 14 minutes of CPU (some 280,000
  samples) with ``"all-arms-mixture"`` (docs/optimal.md).
* ``"heuristic"``: ``log((1 + log t) / delta)``, the threshold of the papers' experiments
  (Garivier & Kaufmann 2016, Jourdan et al.). No guarantee.

**Provenance of the constants.** The paper's text could not be read while these were
checked (the search corpora hold only its bibliographic record), so the theorem
numbers above are as recalled from the papers that use them, not re-read against the
text: the two-arm Gaussian form ``2 C_G(log((K - 1)/delta)/2) + 4 log(4 + log(t/2))`` with the
same ``g_G`` is the stopping threshold of Jourdan et al. (2022), and ``T(x) ~ x + 4 log(1 +
x + sqrt(2 x))`` is the paper's own asymptotic form (``kk_T`` is within 5% of it for x >= 10;
``tests/test_optimal.py``). The thresholds are checked by Monte Carlo under the null
(``tests/test_glr_thresholds.py``): the deviation sum ``sum_i N_i d(mu_hat_i, mu_i)`` (the
event the theorems bound) never crossed the ``"pairs"`` or ``"all-arms-gaussian"``
thresholds in 1,000 paths of 500 samples per arm even at ``delta = 0.5`` or ``0.9``
(frequency 0): they are valid and, at these horizons, very conservative.

**The normal-mixture thresholds** (``"pairs-mixture"``, ``"all-arms-mixture"``; Robbins 1970,
"Statistical methods related to the law of the iterated logarithm"; the same construction
as the self-normalized bound of Abbasi-Yadkori, Pal & Szepesvari 2011, Theorem 1, with
regularization ``rho = 1``). Proof of validity. For arm a let ``S_a(n) = sum_{s <= n}
(X_{a,s} - mu_a) / sigma`` (sigma-sub-Gaussian noise). For every real ``l``,
``exp(l S_a(n) - n l^2 / 2)`` is a nonnegative supermartingale (a martingale for Gaussian
noise), and so is it at the random count ``N_a(t)`` in the global time t, since the arm
pulled at t is chosen from the past. Mixing ``l ~ N(0, 1/rho)``:
``M_a(t) = sqrt(rho / (N_a + rho)) exp(S_a^2 / (2 (N_a + rho)))``. A product of such
processes over a fixed set of arms (independent noise, one arm observed per step) is a
nonnegative supermartingale with initial value 1, so by Ville's inequality, with
probability at least ``1 - delta'``, for every t,
``sum_a S_a^2 / (2 (N_a + rho)) < log(1 / delta') + sum_a log(1 + N_a / rho) / 2``.
Now ``S_a^2 / (2 (N_a + rho)) = N'_a (mu_hat_a - mu_a)^2 / (2 sigma^2)`` with the effective
count ``N'_a = N_a^2 / (N_a + rho)``, and when the truth mu lies in an alternative set,
the Gaussian GLR against that set computed with the counts ``N'`` is at most this sum (mu
is a feasible point). Hence:

* decision classes (all N arms, ``delta' = delta``): an error requires the truth in the
  alternative of the answer, so "GLR at counts N' >= log(1/delta) + sum_a log(1 + N_a /
  rho) / 2" errs with probability at most delta;
* listed members (``"sets-mixture"``; the arms of ``D = S* xor S`` for each member S other
  than the true answer S*, ``delta' = delta / m``, union over those m sets): an error
  recommends some member S that S* beats (by more than ``eps``), so the truth lies in the
  half-space "S* beats S", whose constraint involves only the arms of D; the GLR of S' = S*
  at counts N' is at most the sum over D alone (the arms outside D are left at their
  empirical means), which exceeds ``log(m / delta) + sum_{a in D} log(1 + N_a / rho) / 2``
  with probability at most ``delta / m``;
* members not listed (``"sets-product-mixture"``; the same sets ``D = S* xor S``,
  ``delta' = delta p^|D|`` for each possible nonempty D, whichever members exist): the same
  event has probability at most ``delta p^|D|``, and the union over all nonempty subsets D
  of the N arms is at most ``delta ((1 + p)^N - 1) = delta`` for ``p = 2^(1/N) - 1``;
  ``log(1 / delta') = log(1 / delta) + |D| log(1 / p)``, the threshold of the member whose
  difference with the answer is D;
* pairs (arms {i, j}, ``delta' = delta / m``, union over the m pairs (i outside the true
  answer, j in it), which an error requires, exactly as for ``"pairs"``): the Gaussian pair
  GLR is ``(mu_hat_i - mu_hat_j + eps)_+^2 / (2 sigma^2 V)`` with ``V = 1/N_i + 1/N_j``, so
  the pair GLR at counts N' is the GLR at counts N times ``(1/N_i + 1/N_j) / (1/N'_i +
  1/N'_j) = 1 / r_ij``; comparing the ordinary GLR with ``r_ij`` times the bound is the
  same test.

``rho = 1`` (one pseudo-observation, the textbook regularization) is fixed before any data;
it is not fitted to an instance (the best fixed ``rho`` for a count N is about ``N / (2
log(m / delta))``, which no rule knows in advance). Against ``"pairs"``: at equal counts
10^4 it is 0.74-0.83 of it (m from 1 to 400, delta from 0.1 to 1e-4); it grows like ``log N``
instead of ``log log N``, so ``"pairs"`` is smaller again for very large counts (equal counts
beyond about 3 x 10^6 per arm with m = 1 or 4) and for pairs where one arm has only a few
samples (``r_ij`` up to ``1 + rho / min(N_i, N_j)``). ``threshold="valid-kk"`` of the solvers
keeps the Kaufmann & Koolen forms.

For rewards in ``[a, b]`` (crowd scores, Bernoulli) the Gaussian statistic with
``sigma = (b - a) / 2`` is used with the Gaussian thresholds: every exponential process of
the mixtures, ``exp(eta S_n - n sigma^2 eta^2 / 2)``, is a nonnegative supermartingale
under sigma-sub-Gaussian noise (Hoeffding's lemma), which is all the proofs use.

Decision classes (:func:`class_glr_lower_bound`): the Gaussian GLR against a member S' is
``(mu(S) - mu(S') + eps)_+^2 / (2 sigma^2 V(S'))`` with ``V(S') = sum_{S xor S'} 1/N_i``;
the minimum over S' is found through the linear-maximization oracle by a Lagrangian
relaxation that is a certified *lower* bound of the exact GLR (see the function).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray
from scipy.special import zeta

from .._validation import check_choice, check_float, check_int, check_probability
from ..exceptions import InvalidParameterError

__all__ = [
    "kl_gaussian",
    "kl_bernoulli",
    "pair_glr",
    "class_glr_lower_bound",
    "kk_C_gauss",
    "kk_T",
    "GLRThreshold",
    "THRESHOLDS",
]

#: Threshold kinds accepted by :class:`GLRThreshold`.
THRESHOLDS = ("valid", "heuristic")
#: Valid threshold structures of :class:`GLRThreshold`.
STRUCTURES = ("pairs", "pairs-kl", "all-arms", "all-arms-gaussian", "pairs-mixture", "all-arms-mixture",
              "sets-product-mixture",
              "sets-mixture")
#: Prior precision (in samples) of the normal mixtures of ``"pairs-mixture"`` / ``"all-arms-mixture"``.
MIXTURE_RHO = 1.0

_EPS_P = 1e-12


# ----------------------------------------------------------------------------- divergences
def kl_gaussian(x: Any, y: Any, sigma: float = 1.0) -> Any:
    """``(x - y)^2 / (2 sigma^2)``, the KL divergence of two Gaussians of variance sigma^2."""
    return (np.asarray(x) - np.asarray(y)) ** 2 / (2.0 * sigma * sigma)


def kl_bernoulli(x: Any, y: Any) -> Any:
    """``x log(x/y) + (1-x) log((1-x)/(1-y))`` (means clipped to ``[1e-12, 1 - 1e-12]``
    inside the logarithms only)."""
    x = np.clip(np.asarray(x, dtype=np.float64), _EPS_P, 1.0 - _EPS_P)
    y = np.clip(np.asarray(y, dtype=np.float64), _EPS_P, 1.0 - _EPS_P)
    return x * np.log(x / y) + (1.0 - x) * np.log((1.0 - x) / (1.0 - y))


# ----------------------------------------------------------------------------- pair GLR
def pair_glr(
    mu_i: Any,
    mu_j: Any,
    n_i: Any,
    n_j: Any,
    *,
    epsilon: float = 0.0,
    divergence: str = "gaussian",
    sigma: float = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """GLR of "arm i is epsilon-good against arm j" and the closest alternative.

    ``Z = inf_{l_j >= l_i + eps} n_i d(mu_i, l_i) + n_j d(mu_j, l_j)`` (0 when already
    ``mu_j >= mu_i + eps``). Vectorized over arrays of pairs.

    Returns
    -------
    Z : array
        The statistic.
    x : array
        The alternative's ``l_i`` (then ``l_j = x + eps``).

    Notes
    -----
    Gaussian: ``Z = (mu_i - mu_j + eps)_+^2 / (2 sigma^2 (1/n_i + 1/n_j))`` at
    ``x = (n_i mu_i + n_j (mu_j - eps)) / (n_i + n_j)``. Bernoulli: ``x`` solves
    ``n_i (x - mu_i) / (x (1 - x)) + n_j (x + eps - mu_j) / ((x + eps)(1 - x - eps)) = 0``
    (the derivative of a convex function), found by 60 bisection steps.
    """
    mi = np.asarray(mu_i, dtype=np.float64)
    mj = np.asarray(mu_j, dtype=np.float64)
    ni = np.asarray(n_i, dtype=np.float64)
    nj = np.asarray(n_j, dtype=np.float64)
    gap = mi - mj + epsilon
    if divergence == "gaussian":
        x = (ni * mi + nj * (mj - epsilon)) / (ni + nj)
        z = np.where(gap > 0, gap * gap / (2.0 * sigma * sigma * (1.0 / ni + 1.0 / nj)), 0.0)
        return z, x
    if divergence != "bernoulli":
        raise InvalidParameterError(
            f"The 'divergence' parameter of pair_glr must be 'gaussian' or 'bernoulli'. Got {divergence!r} instead."
        )
    lo = np.broadcast_to(np.clip(mj - epsilon, 0.0, 1.0 - epsilon), gap.shape).copy()
    hi = np.broadcast_to(np.clip(mi, 0.0, 1.0 - epsilon), gap.shape).copy()
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    for _ in range(60):
        x = 0.5 * (lo + hi)
        xc = np.clip(x, _EPS_P, 1.0 - _EPS_P)
        yc = np.clip(x + epsilon, _EPS_P, 1.0 - _EPS_P)
        g = ni * (xc - mi) / (xc * (1.0 - xc)) + nj * (yc - mj) / (yc * (1.0 - yc))
        pos = g > 0
        hi = np.where(pos, x, hi)
        lo = np.where(pos, lo, x)
    x = 0.5 * (lo + hi)
    z = ni * kl_bernoulli(mi, x) + nj * kl_bernoulli(mj, x + epsilon)
    return np.where(gap > 0, z, 0.0), x


# ----------------------------------------------------------------------------- classes
def class_glr_lower_bound(
    decision_class: Any,
    answer: NDArray[np.bool_],
    mu: NDArray[np.float64],
    counts: NDArray[np.float64],
    *,
    epsilon: float = 0.0,
    sigma: float = 1.0,
    beta: float,
    grid: int = 12,
    variances: Any = None,
    arm_terms: Any = None,
) -> dict[str, Any]:
    """Certified test "GLR(answer) >= beta" for a decision class, through its oracle.

    With ``arm_terms`` (``g``, one per arm, >= 0) the threshold is one per member,
    ``beta + sum_{i in S xor S'} g_i`` (``"sets-product-mixture"``,
    :meth:`GLRThreshold.sets`); see the end of this docstring.

    With ``variances`` (one per arm, ``sigma`` is then ignored) the GLR is that of
    independent Gaussian arms of variances ``sigma_i^2``: against S' it is
    ``(mu(S) - mu(S') + eps)_+^2 / (2 V(S'))`` with ``V(S') = sum_{i in S xor S'} sigma_i^2 /
    N_i``, and everything below holds with ``1/N_i`` replaced by ``sigma_i^2 / N_i`` and
    ``sigma = 1`` (``V`` stays linear in the indicator of S').

    The exact condition is ``f(S') = Delta(S') + eps - c sqrt(V(S')) >= 0`` for every member
    ``S' != S`` with ``Delta(S') = mu(S) - mu(S')``, ``V(S') = sum_{i in S xor S'} 1/N_i`` and
    ``c = sqrt(2 sigma^2 beta)`` (it is ``GLR_{S'} >= beta``). Since
    ``sqrt(V) = min_{l > 0} V / (2 l) + l / 2``,
    ``min_{S'} f(S') = min_{S'} max_l g(S', l) >= max_l min_{S'} g(S', l)`` with
    ``g(S', l) = Delta(S') + eps - c V(S') / (2 l) - c l / 2`` *linear* in the indicator of
    S': ``min_{S'} g`` is one call ``argmax_excluding(w, S)`` with
    ``w_i = mu_i + (c / (2 l)) (1/N_i if i not in S else -1/N_i)``. The maximum over a grid
    of ``l`` (around ``sqrt(V)`` of the candidates found) is therefore a valid lower bound
    ``L`` of ``min f``: ``L >= 0`` certifies the stop. The exact ``f`` at the candidates
    found is an upper bound ``U`` (``L <= min f <= U``); both are returned.

    Per-member thresholds ``B(S') = beta + sum_{i in S xor S'} g_i`` (``arm_terms``): the
    condition is ``f(S') = Delta(S') + eps - sqrt(2 sigma^2 V(S') B(S')) >= 0``, and
    ``sqrt(2 sigma^2 V B) = min_{l > 0} sigma^2 V / l + l B / 2``, so with
    ``g(S', l) = Delta(S') + eps - sigma^2 V(S') / l - l B(S') / 2`` -- linear in the
    indicator of S' since V and B are -- ``min f >= max_l min_{S'} g(S', l)``, one
    ``argmax_excluding(w, S)`` per ``l`` with ``w_i = mu_i + s_i (sigma^2 / (l N_i) + l g_i /
    2)`` (``s_i = 1`` outside S, ``-1`` in it). ``min_{S'} g`` is concave in ``l`` (a minimum
    of concave functions): the grid's best ``l`` is refined by a golden-section search on
    ``log l``.

    Returns
    -------
    dict with ``lower`` (L), ``upper`` (U), ``stop`` (L >= 0), ``closest`` (the candidate
    S' of smallest exact GLR), ``glr`` (its exact GLR, an upper bound of the class GLR),
    ``slack`` (the smallest ``GLR(S') - sum_{S xor S'} g`` over the candidates: an upper
    bound of the class's; the GLR itself without ``arm_terms``) and ``candidates`` (list of
    masks).
    """
    if arm_terms is not None:
        return _class_sets_lower_bound(decision_class, answer, mu, counts, epsilon=epsilon, sigma=sigma,
                                       beta=beta, grid=grid, variances=variances, arm_terms=arm_terms)
    S = np.asarray(answer, dtype=bool)
    inv = 1.0 / np.asarray(counts, dtype=np.float64)
    if variances is not None:  # per-arm variances: weights N_i / sigma_i^2, unit sigma
        inv = inv * np.broadcast_to(np.asarray(variances, dtype=np.float64), inv.shape)
        sigma = 1.0
    c = math.sqrt(2.0 * sigma * sigma * max(beta, 0.0))
    sign = np.where(S, -1.0, 1.0)
    muS = float(mu[S].sum())

    def exact(m: NDArray[np.bool_]) -> tuple[float, float, float]:
        d = S ^ m
        v = float(inv[d].sum())
        delta = muS - float(mu[m].sum()) + epsilon
        glr = delta * delta / (2.0 * sigma * sigma * v) if delta > 0 else 0.0
        return delta - c * math.sqrt(v), glr, v

    # scale of sqrt(V): from the nearest one-swap neighbourhood (1/N of the answer's arms)
    base = math.sqrt(2.0 * float(np.min(inv)) + 1e-300)
    top = math.sqrt(float(inv.sum()))
    ls = np.geomspace(base, max(top, base * 1.0001), grid)
    lower = -math.inf
    upper = math.inf
    best_glr = math.inf
    closest = None
    cands: list[NDArray[np.bool_]] = []
    seen: set[bytes] = set()
    if c == 0.0:
        ls = np.array([1.0])
    for l in ls:
        w = mu + (c / (2.0 * l)) * sign * inv
        m = decision_class.argmax_excluding(w, S)
        if m is None:  # the answer is the only member
            return {"lower": math.inf, "upper": math.inf, "stop": True, "closest": None, "glr": math.inf,
                    "candidates": []}
        m = np.asarray(m, dtype=bool)
        d = S ^ m
        g = muS - float(mu[m].sum()) + epsilon - c * float(inv[d].sum()) / (2.0 * l) - c * l / 2.0
        lower = max(lower, g)
        key = m.tobytes()
        if key not in seen:
            seen.add(key)
            cands.append(m)
            f, glr, _ = exact(m)
            upper = min(upper, f)
            if glr < best_glr:
                best_glr, closest = glr, m
    return {"lower": lower, "upper": upper, "stop": lower >= 0.0, "closest": closest, "glr": best_glr,
            "slack": best_glr, "candidates": cands}


def _class_sets_lower_bound(decision_class: Any, answer: Any, mu: Any, counts: Any, *, epsilon: float,
                            sigma: float, beta: float, grid: int, variances: Any, arm_terms: Any) -> dict[str, Any]:
    """:func:`class_glr_lower_bound` with one threshold per member (``arm_terms``)."""
    S = np.asarray(answer, dtype=bool)
    mu = np.asarray(mu, dtype=np.float64)
    inv = 1.0 / np.asarray(counts, dtype=np.float64)
    if variances is not None:
        inv = inv * np.broadcast_to(np.asarray(variances, dtype=np.float64), inv.shape)
        sigma = 1.0
    g = np.asarray(arm_terms, dtype=np.float64)
    s2 = sigma * sigma
    b0 = max(float(beta), 0.0)
    sign = np.where(S, -1.0, 1.0)
    muS = float(mu[S].sum())
    cands: list[NDArray[np.bool_]] = []
    seen: set[bytes] = set()
    state = {"upper": math.inf, "glr": math.inf, "slack": math.inf, "closest": None}

    def visit(m: NDArray[np.bool_]) -> None:
        key = m.tobytes()
        if key in seen:
            return
        seen.add(key)
        cands.append(m)
        d = S ^ m
        v, b = float(inv[d].sum()), b0 + float(g[d].sum())
        delta = muS - float(mu[m].sum()) + epsilon
        glr = delta * delta / (2.0 * s2 * v) if delta > 0 else 0.0
        state["upper"] = min(state["upper"], delta - math.sqrt(2.0 * s2 * v * b))
        state["slack"] = min(state["slack"], glr - float(g[d].sum()))
        if glr < state["glr"]:
            state["glr"], state["closest"] = glr, m

    def bound(log_l: float) -> float | None:  # min over the members other than S of g(S', l)
        l = math.exp(log_l)
        coef = s2 * inv / l + 0.5 * l * g
        m = decision_class.argmax_excluding(mu + sign * coef, S)
        if m is None:
            return None
        m = np.asarray(m, dtype=bool)
        visit(m)
        d = S ^ m
        return muS - float(mu[m].sum()) + epsilon - float(coef[d].sum()) - 0.5 * l * b0

    # l* = sqrt(2 sigma^2 V / B) of the members: between its values for the smallest V over
    # the largest B and the largest V over the smallest B
    lo = 0.5 * math.log(2.0 * s2 * float(np.min(inv)) / (b0 + float(g.sum()) + 1e-300) + 1e-300)
    hi = 0.5 * math.log(2.0 * s2 * float(inv.sum()) / max(b0 + float(np.min(g)), 1e-12))
    xs = np.linspace(lo, max(hi, lo + 1e-6), grid)
    vals = []
    for x in xs:
        v = bound(float(x))
        if v is None:  # the answer is the only member
            return {"lower": math.inf, "upper": math.inf, "stop": True, "closest": None, "glr": math.inf,
                    "slack": math.inf, "candidates": []}
        vals.append(v)
    k = int(np.argmax(vals))
    lower = float(vals[k])
    a, c = float(xs[max(k - 1, 0)]), float(xs[min(k + 1, grid - 1)])
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(8):  # golden section on the concave min over the members
        if c - a < 1e-4:
            break
        x1, x2 = c - ratio * (c - a), a + ratio * (c - a)
        v1, v2 = bound(x1), bound(x2)
        lower = max(lower, v1, v2)
        if v1 >= v2:
            c = x2
        else:
            a = x1
    return {"lower": lower, "upper": state["upper"], "stop": lower >= 0.0, "closest": state["closest"],
            "glr": state["glr"], "slack": state["slack"], "candidates": cands}


# ----------------------------------------------------------------------------- thresholds
def _zeta(s: float) -> float:
    return float(zeta(s, 1))


@lru_cache(maxsize=4096)
def kk_C_gauss(x: float) -> float:
    """``C_G(x) = min_{l in (1/2, 1]} (g_G(l) + x) / l`` of Kaufmann & Koolen (2021),
    Theorem 9, with ``g_G(l) = 2 l - 2 l log(4 l) + log zeta(2 l) - log(1 - l) / 2``.
    ``C_G(x) ~ x + log x`` for large x."""
    from scipy.optimize import minimize_scalar  # scipy.optimize adds ~0.4 s: import combex.estimation stays light

    x = float(x)

    def f(l: float) -> float:
        return (2 * l - 2 * l * math.log(4 * l) + math.log(_zeta(2 * l)) - 0.5 * math.log(1 - l) + x) / l

    res = minimize_scalar(f, bounds=(0.5 + 1e-9, 1.0 - 1e-12), method="bounded", options={"xatol": 1e-10})
    return float(res.fun)


def _h_inv(y: float) -> float:
    """Inverse of h(u) = u - log u on [1, inf) (y >= 1)."""
    if y <= 1.0:
        return 1.0
    u = y + math.log(y) + 1.0
    for _ in range(100):  # Newton on u - log u - y (convex, increasing for u > 1)
        nu = u - (u - math.log(u) - y) / (1.0 - 1.0 / u)
        if abs(nu - u) < 1e-13 * u:
            u = nu
            break
        u = max(nu, 1.0 + 1e-15)
    return u


def _h_tilde(x: float, z: float = 1.5) -> float:
    if x >= _h_inv(1.0 / math.log(z)):
        u = _h_inv(x)
        return math.exp(1.0 / u) * u
    return z * (x - math.log(math.log(z)))


@lru_cache(maxsize=4096)
def kk_T(x: float) -> float:
    """``T(x) = 2 h~_{3/2}((h^{-1}(1 + x) + log(2 zeta(2))) / 2)`` of Kaufmann & Koolen
    (2021), Theorem 7 (``T(x) ~ x + 4 log(1 + x + sqrt(2 x))``)."""
    return 2.0 * _h_tilde((_h_inv(1.0 + float(x)) + math.log(2.0 * _zeta(2.0))) / 2.0, 1.5)


class GLRThreshold:
    """``beta(t, delta)`` of the GLR stopping rule (see the module docstring).

    Parameters
    ----------
    delta : float in (0, 1)
    kind : {"valid", "heuristic"}
        ``"valid"``: the Kaufmann & Koolen threshold matching ``structure``;
        ``"heuristic"``: ``log((1 + log t) / delta)``.
    structure : {"pairs", "pairs-kl", "all-arms", "all-arms-gaussian", "pairs-mixture", "all-arms-mixture", \
"sets-mixture", "sets-product-mixture"}
        Which valid threshold (ignored by ``"heuristic"``).
    n_alternatives : int
        ``m``, the number of alternatives in the union (``"pairs"``, ``"pairs-kl"``,
        ``"pairs-mixture"``: two-arm alternatives; ``"sets-mixture"``: the members other
        than the answer).
    n_arms : int
        N (``"all-arms"``).
    rho : float > 0
        Prior precision of the normal mixtures (``"pairs-mixture"``, ``"all-arms-mixture"``).
    """

    def __init__(self, delta: float, kind: str = "valid", *, structure: str = "pairs", n_alternatives: int = 1,
                 n_arms: int = 2, rho: float = MIXTURE_RHO) -> None:
        self.delta = check_probability(delta, "delta", owner="GLRThreshold")
        self.kind = check_choice(kind, "threshold", THRESHOLDS, owner="GLRThreshold")
        self.structure = check_choice(structure, "structure", STRUCTURES, owner="GLRThreshold")
        self.m = check_int(n_alternatives, "n_alternatives", owner="GLRThreshold", low=1)
        self.n = check_int(n_arms, "n_arms", owner="GLRThreshold", low=1)
        self.rho = check_float(rho, "rho", owner="GLRThreshold", low=0.0, closed="neither")
        x = math.log(self.m / self.delta)
        if self.structure in ("pairs-mixture", "sets-mixture"):
            self._const = x
        elif self.structure in ("all-arms-mixture", "sets-product-mixture"):
            self._const = math.log(1.0 / self.delta)
        elif self.structure == "pairs":
            self._const = 2.0 * kk_C_gauss(x / 2.0)
        elif self.structure == "pairs-kl":
            self._const = 2.0 * kk_T(x / 2.0)
        elif self.structure == "all-arms":
            self._const = self.n * kk_T(math.log(1.0 / self.delta) / self.n)
        else:
            self._const = self.n * kk_C_gauss(math.log(1.0 / self.delta) / self.n)

    @property
    def name(self) -> str:
        """``"heuristic"`` or ``"valid:<structure>"`` (reported in results)."""
        return "heuristic" if self.kind == "heuristic" else f"valid:{self.structure}"

    def __call__(self, t: float, counts: Any = None) -> float:
        """The threshold after ``t`` samples (``counts``: per-arm counts, ``"all-arms"``)."""
        t = max(float(t), 1.0)
        if self.kind == "heuristic":
            return math.log((1.0 + math.log(t)) / self.delta)
        if self.structure == "pairs":
            return self._const + 4.0 * math.log(4.0 + math.log(max(t / 2.0, 1.0)))
        if self.structure == "pairs-kl":
            return self._const + 6.0 * math.log(1.0 + math.log(max(t / 2.0, 1.0)))
        if self.structure == "pairs-mixture":  # an upper bound of every pair's threshold
            if counts is None:
                return (1.0 + self.rho) * (self._const + math.log1p(t / (2.0 * self.rho)))
            c = np.sort(np.maximum(np.asarray(counts, dtype=np.float64), 1.0))
            top = c[-2:] if c.size >= 2 else np.repeat(c, 2)
            return (1.0 + self.rho / float(c[0])) * (self._const + 0.5 * float(np.log1p(top / self.rho).sum()))
        n = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
        if self.structure in ("all-arms-mixture", "sets-mixture"):  # sets: an upper bound of every set's
            return self._const + 0.5 * float(np.log1p(n / self.rho).sum())
        if self.structure == "sets-product-mixture":  # an upper bound of every set's (all N arms)
            return self._const + float(self.set_terms(n).sum())
        if self.structure == "all-arms-gaussian":
            return self._const + 2.0 * float(np.log(4.0 + np.log(n)).sum())
        return self._const + 3.0 * float(np.log1p(np.log(n)).sum())


    @property
    def constant(self) -> float:
        """The part of the threshold that does not depend on the counts: ``log(m/delta)``
        (``"pairs-mixture"``, ``"sets-mixture"``), ``2 C_G(log(m/delta)/2)`` (``"pairs"``),
        ``2 T(log(m/delta)/2)`` (``"pairs-kl"``), ``log(1/delta)`` (``"all-arms-mixture"``),
        ``N C_G(log(1/delta)/N)`` / ``N T(log(1/delta)/N)`` (``"all-arms-gaussian"`` /
        ``"all-arms"``)."""
        return self._const

    def arm_term(self, n: int) -> float:
        """The term one arm with ``n`` samples adds to the threshold of an alternative it is
        part of: ``log(1 + n/rho)/2`` (the normal mixtures), ``2 log(4 + log n)`` (``"pairs"``,
        ``"all-arms-gaussian"``: Theorem 9), ``3 log(1 + log n)`` (``"pairs-kl"``,
        ``"all-arms"``: Theorem 7); ``n`` below 1 counts as 1. Scalar (the C library's
        ``log`` / ``log1p``): the solvers keep one term per arm and update it with the arm's
        count."""
        n = max(n, 1)
        if self.structure in ("pairs-mixture", "sets-mixture", "all-arms-mixture", "sets-product-mixture"):
            return 0.5 * math.log1p(n / self.rho)
        lg = math.log(n)
        return 3.0 * math.log1p(lg) if self.structure in ("pairs-kl", "all-arms") else 2.0 * math.log(4.0 + lg)

    def pair_ratio(self, n_i: Any, n_j: Any) -> Any:
        """``r_ij = (q_i + q_j) / (1/N_i + 1/N_j)`` with ``q_a = 1/N_a + rho/N_a^2``
        (``"pairs-mixture"``: the ordinary pair GLR over the one at the effective counts
        ``N^2/(N + rho)``, module docstring); 1 for the other structures."""
        if self.structure != "pairs-mixture":
            return np.ones(np.broadcast(np.asarray(n_i), np.asarray(n_j)).shape)
        rho = self.rho
        ii = 1.0 / np.asarray(n_i, dtype=np.float64)
        ij = 1.0 / np.asarray(n_j, dtype=np.float64)
        return (ii + ij + rho * (ii * ii + ij * ij)) / (ii + ij)

    def pairs_from_terms(self, h_i: Any, h_j: Any, n_i: Any, n_j: Any) -> NDArray[np.float64]:
        """:meth:`pairs` from the arms' terms ``h = arm_term(N)`` kept by a solver:
        ``r_ij (constant + h_i + h_j)`` (``"pairs-mixture"``) or ``constant + h_i + h_j``."""
        if self.structure == "pairs-mixture":
            return self.pair_ratio(n_i, n_j) * (self._const + h_i + h_j)
        return self._const + h_i + h_j

    def pairs(self, n_i: Any, n_j: Any, t: float | None = None) -> NDArray[np.float64]:
        """Valid threshold of each pair (i, j) from the two arms' counts, on the scale of the
        ordinary pair GLR (:func:`pair_glr` at counts N; vectorized):
        ``r_ij (constant + arm_term(N_i) + arm_term(N_j))`` (:meth:`pair_ratio`,
        :meth:`arm_term`).

        ``"pairs-mixture"``: ``r_ij (log(m/delta) + log(1 + N_i/rho)/2 + log(1 + N_j/rho)/2)``
        (module docstring); ``"pairs"``: ``2 C_G(log(m/delta)/2) + 2 log(4 + log N_i) + 2 log(4
        + log N_j)`` (Theorem 9 on the two arms); ``"pairs-kl"``: ``2 T(log(m/delta)/2) + 3
        log(1 + log N_i) + 3 log(1 + log N_j)``. ``"heuristic"``: ``log((1 + log t)/delta)``.
        """
        ni = np.maximum(np.asarray(n_i, dtype=np.float64), 1.0)
        nj = np.maximum(np.asarray(n_j, dtype=np.float64), 1.0)
        if self.kind == "heuristic":
            tt = float(t) if t is not None else float(np.max(ni + nj))
            return np.full(np.broadcast(ni, nj).shape, self(tt))
        if self.structure not in ("pairs", "pairs-kl", "pairs-mixture"):
            raise InvalidParameterError(
                f"GLRThreshold.pairs needs a pair structure ('pairs', 'pairs-kl', 'pairs-mixture'). "
                f"Got structure={self.structure!r} instead."
            )
        ni, nj = np.broadcast_arrays(ni, nj)
        counts, inv = np.unique(np.concatenate([ni.ravel(), nj.ravel()]), return_inverse=True)
        h = np.array([self.arm_term(float(c)) for c in counts])[inv]
        hi, hj = h[:ni.size].reshape(ni.shape), h[ni.size:].reshape(nj.shape)
        return np.asarray(self.pairs_from_terms(hi, hj, ni, nj), dtype=np.float64)

    def sets(self, differences: Any, counts: Any, t: float | None = None) -> NDArray[np.float64]:
        """Valid threshold of each alternative from the arms of its difference with the
        answer (``differences``: an ``(m, N)`` bool array, one row ``S xor S'`` per
        alternative), on the scale of the GLR at the effective counts
        (:meth:`effective_counts`): ``log(m / delta) + sum_{a in S xor S'} log(1 + N_a /
        rho) / 2`` (``"sets-mixture"``, module docstring). ``"heuristic"``: ``log((1 + log
        t) / delta)``."""
        D = np.asarray(differences, dtype=bool)
        n = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
        if self.kind == "heuristic":
            return np.full(D.shape[0], self(float(t) if t is not None else float(n.sum())))
        if self.structure not in ("sets-mixture", "sets-product-mixture"):
            raise InvalidParameterError(
                f"GLRThreshold.sets needs structure='sets-mixture' or 'sets-product-mixture'. Got "
                f"structure={self.structure!r} instead."
            )
        return self._const + D @ self.set_terms(n)

    @property
    def set_weight(self) -> float:
        """``log(1 / p)`` with ``p = 2^(1/N) - 1``: what each arm of a difference adds to its
        threshold for the union over every possible difference (``"sets-product-mixture"``;
        0 otherwise, where ``log m`` in the constant pays for the union)."""
        if self.structure != "sets-product-mixture":
            return 0.0
        return -math.log(math.expm1(math.log(2.0) / self.n))

    def set_terms(self, counts: Any) -> NDArray[np.float64]:
        """Per arm, what it adds to the threshold of an alternative whose difference holds it
        (:meth:`sets`): ``log(1 + N_a / rho) / 2`` (``"sets-mixture"``), plus
        :attr:`set_weight` (``"sets-product-mixture"``)."""
        n = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
        return 0.5 * np.log1p(n / self.rho) + self.set_weight

    def effective_counts(self, counts: Any) -> NDArray[np.float64]:
        """``N^2 / (N + rho)``: the counts at which the GLR is compared with the
        ``"all-arms-mixture"``, ``"sets-mixture"`` and ``"sets-product-mixture"`` thresholds
        (module docstring)."""
        n = np.asarray(counts, dtype=np.float64)
        return n * n / (n + self.rho)


def check_epsilon(epsilon: Any, owner: str) -> float:
    """epsilon >= 0 (finite)."""
    return check_float(epsilon, "epsilon", owner=owner, low=0.0)


_Callable = Callable[..., Any]
