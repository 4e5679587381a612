"""The stopping rules of the GLR loop (:class:`~combex.solvers.glr.GLRExploration`).

Every one is the same rule, "the GLR of the empirical answer against its closest alternative
is at least that alternative's threshold" (Garivier & Kaufmann 2016, eq. (11); Kaufmann &
Koolen 2021, Section 3); they differ in how the closest alternative is found and which
threshold each alternative is held to:

* :class:`PairStop`: best arm, Best-K, matroid bases (the pairs of the query) with a
  known scale: the GLR of every pair, against one valid threshold per pair from its two
  arms' counts (``valid:pairs-mixture``, ``valid:pairs``, ``valid:pairs-kl``) or against
  the scalar heuristic threshold;
* :class:`PairStopUnknownVariance`: the same pairs, unknown variances (the threshold of each
  pair from its two counts and the time);
* :class:`MemberStop`: a decision class that lists its members: the exact minimum over the
  other members, each against its own threshold (``valid:sets-mixture``) or a scalar one;
* :class:`CertificateStop`: a class too large to list: the Lagrangian certificate of
  :func:`~combex.identification.class_glr_lower_bound` through the class's oracle.

A rule is built for an exploration and a level by :func:`glr_stopping_rule` (the one place
the threshold is chosen) and owns its threshold (:attr:`GLRStoppingRule.threshold`). It
reads the exploration's statistics (counts ``T``, means ``mu``, variances, the per-arm
threshold terms ``_h``) and never changes them: :meth:`~GLRStoppingRule.check` writes only
the record of the check (``_stat``, ``_beta_t``, ``_closest``), and
:meth:`~GLRStoppingRule.margin` nothing, so the rule at another level (``would_stop``,
``delta_achieved``) is simply another rule object on the same data.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..identification import (ClassUnknownVarianceThreshold, GLRThreshold, UnknownVarianceThreshold,
                              class_glr_lower_bound)
from ._bisect import LOG_LEVEL_FLOOR, monotone_boundary

__all__ = ["GLRStoppingRule", "PairStop", "PairStopUnknownVariance", "MemberStop", "CertificateStop",
           "glr_stopping_rule"]

_UV = "unknown-variance"


class GLRStoppingRule(ABC):
    """Stop when the GLR of the answer against its closest alternative reaches that
    alternative's threshold.

    ``threshold`` is the threshold object (:class:`~combex.identification.GLRThreshold` or
    an unknown-variance form), ``n_alternatives`` the size of the union it pays for.
    Subclasses give :meth:`check` and :meth:`margin`."""

    #: How the binding alternative is found (``"pairs"``, ``"pairs-unknown-variance"``,
    #: ``"members"``, ``"certificate"``).
    route: ClassVar[str] = ""

    def __init__(self, threshold: Any, n_alternatives: int) -> None:
        self.threshold = threshold
        self.n_alternatives = int(n_alternatives)

    @abstractmethod
    def check(self, exp: Any, ans: Any, t: int) -> tuple[float, bool] | None:
        """The check after ``t`` samples with answer ``ans``: records the binding
        alternative's statistic, threshold and identity on ``exp`` (``_stat``, ``_beta_t``,
        ``_closest``) and returns ``(threshold, stop)``; None when a cheap necessary
        condition already fails (the record then holds what it found)."""

    @abstractmethod
    def margin(self, exp: Any, ans: Any, t: int) -> float:
        """``statistic - threshold`` of the binding alternative (>= 0: the rule holds), with
        no side effect on ``exp``."""

    def level(self, exp: Any, ans: Any) -> float | None:
        """The smallest level at which the rule holds, in closed form where the rule has one
        (None: the caller bisects on :meth:`margin` of the rule at other levels)."""
        return None

    def statistic(self, exp: Any) -> tuple[float, float]:
        """The statistic and the threshold of the last check as reported."""
        return (float(exp._stat), float(exp._beta_t))


class PairStop(GLRStoppingRule):
    """Pair queries with a known scale. ``valid`` thresholds: one per pair,
    ``c + h(N_i) + h(N_j)`` (:meth:`pair_thresholds`); the heuristic: the scalar
    ``beta(t)``. ``mixture`` / ``kl`` name the per-pair form (normal mixture, Bernoulli KL)."""

    route = "pairs"

    def __init__(self, threshold: Any, n_alternatives: int, *, per_pair: bool, mixture: bool, kl: bool) -> None:
        super().__init__(threshold, n_alternatives)
        #: the constant of the union over the pairs (None: the scalar heuristic threshold)
        self.const: float | None = threshold.constant if per_pair else None
        self.mixture = bool(mixture)
        self.kl = bool(kl)

    def pair_thresholds(self, exp: Any, I: NDArray[np.intp], J: NDArray[np.intp]) -> NDArray[np.float64]:
        """Valid threshold of each pair (i, j): ``c + h(N_i) + h(N_j)``.

        Kaufmann & Koolen (2021), Theorem 9 (Gaussian) / Theorem 7 (exponential families)
        applied to the two arms {i, j}: with probability ``1 - delta / m``, at every time,
        ``N_i d(mu_hat_i, mu_i) + N_j d(mu_hat_j, mu_j) <= 2 C_G(log(m / delta) / 2) +
        2 log(4 + log N_i) + 2 log(4 + log N_j)`` (Gaussian; KL:
        ``2 T(log(m / delta) / 2) + 3 log(1 + log N_i) + 3 log(1 + log N_j)``; the default
        normal mixture: :meth:`GLRThreshold.pairs_from_terms
        <combex.identification.GLRThreshold.pairs_from_terms>`). The GLR of the pair is
        at most that deviation when the truth is in the pair's alternative, so the union over
        the ``m`` pairs keeps the guarantee. The scalar threshold (``4 log(4 + log(t / 2))``)
        bounds this one from above (``n -> log(4 + log n)`` is concave and ``N_i + N_j <=
        t``): the per-pair form stops earlier with the same guarantee (it gains most on arms
        sampled little, e.g. the N - K bad arms of Best-K). ``h`` is the exploration's
        ``_h`` (kept per arm as the counts change)."""
        return self.threshold.pairs_from_terms(exp._h[I], exp._h[J], exp.T[I], exp.T[J])

    def _binding(self, exp: Any, ans: Any, t: int) -> tuple[Any, NDArray[np.float64], Any, Any, Any]:
        z, x, I, J = exp.pair_costs(exp.T.astype(float), ans)
        if self.const is None:
            b = np.full(z.shape, self.threshold(t, exp.T))
        else:
            b = self.pair_thresholds(exp, I, J)
        return z, b, x, I, J

    def check(self, exp: Any, ans: Any, t: int) -> tuple[float, bool]:
        z, x, I, J = exp.pair_costs(exp.T.astype(float), ans)
        exp._zc = (z, x, I, J)  # the sampling rules reuse the check's pair costs
        if self.const is None:
            beta = self.threshold(t, exp.T)
            k = int(np.argmin(z))
        else:  # valid thresholds: one per pair, from the two arms' counts only
            bij = self.pair_thresholds(exp, I, J)
            k = int(np.argmin(z - bij))
            beta = float(bij[k])
        exp._beta_t = beta
        exp._stat = float(z[k])
        exp._closest = (int(I[k]), int(J[k]))
        return beta, exp._stat >= beta

    def margin(self, exp: Any, ans: Any, t: int) -> float:
        z, b, _, _, _ = self._binding(exp, ans, t)
        return float(np.min(z - b))

    def level(self, exp: Any, ans: Any) -> float | None:
        """The normal mixture with a known scale (``valid:pairs-mixture``): the rule at level
        ``x`` is ``Z_ij >= r_ij (log(m / x) + h_i + h_j)`` for every pair, where only
        ``log(m / x)`` depends on ``x``, so the smallest level is ``max_ij m exp(h_i + h_j -
        Z_ij / r_ij)`` (capped at 1; a relative 1e-9 above it, so the rule holds there in
        floating point too)."""
        if not (self.mixture and self.const is not None):
            return None
        z, _, I, J = exp.pair_costs(exp.T.astype(float), ans)
        r = self.threshold.pair_ratio(exp.T[I], exp.T[J])
        lx = float(np.max(math.log(self.n_alternatives) + exp._h[I] + exp._h[J] - z / r))
        return min(1.0, math.exp(max(lx, LOG_LEVEL_FLOOR)) * (1.0 + 1e-9))


class PairStopUnknownVariance(GLRStoppingRule):
    """Pair queries, unknown variances: pair-dependent thresholds ``beta_ij(N_i, N_j, t)``."""

    route = "pairs-unknown-variance"

    def check(self, exp: Any, ans: Any, t: int) -> tuple[float, bool]:
        z, _, I, J = exp.pair_costs(exp.T.astype(float), ans)
        b = self.threshold.pairs(exp.T[I], exp.T[J], t)
        k = int(np.argmin(z - b))
        exp._stat = float(z[k])
        exp._beta_t = beta = float(b[k])
        exp._closest = (int(I[k]), int(J[k]))
        return beta, exp._stat >= beta

    def margin(self, exp: Any, ans: Any, t: int) -> float:
        z, _, I, J = exp.pair_costs(exp.T.astype(float), ans)
        return float(np.min(z - self.threshold.pairs(exp.T[I], exp.T[J], t)))


class _ClassStop(GLRStoppingRule):
    """Decision classes: the class GLR (Gaussian) at the counts of the threshold's
    statistic (:meth:`counts`)."""

    def __init__(self, threshold: Any, n_alternatives: int, *, mixture: bool, unknown_variance: bool) -> None:
        super().__init__(threshold, n_alternatives)
        self.mixture = bool(mixture)
        self.unknown_variance = bool(unknown_variance)

    def counts(self, exp: Any) -> tuple[NDArray[np.float64], Any]:
        """The counts and variance bounds the class GLR is taken at: the effective counts
        ``N^2 / (N + rho)`` of the all-arms normal mixture, the counts of the variance
        bounds ``U_a`` with unknown variances (then ``U_a``, else None)."""
        if self.unknown_variance:
            return self.threshold.effective_counts(exp.T), self.threshold.variance_upper(exp.T, exp.var)
        if self.mixture:
            return self.threshold.effective_counts(exp.T), None
        return exp.T.astype(float), None


class MemberStop(_ClassStop):
    """A listed class: the exact minimum over the other members, each against its own
    threshold (``sets``: ``valid:sets-mixture``) or the scalar one."""

    route = "members"

    def __init__(self, threshold: Any, n_alternatives: int, *, mixture: bool, unknown_variance: bool,
                 sets: bool) -> None:
        super().__init__(threshold, n_alternatives, mixture=mixture, unknown_variance=unknown_variance)
        self.sets = bool(sets)

    def _costs(self, exp: Any, ans: Any) -> tuple[Any, Any, Any]:
        counts, ucb = self.counts(exp)
        alts = exp.query.other_members(ans)
        if not len(alts):
            return None, None, alts
        F, D, _ = exp.class_costs(counts, ans, alts, ucb)
        return F, D, alts

    def check(self, exp: Any, ans: Any, t: int) -> tuple[float, bool]:
        beta = self.threshold(t, exp.T)
        exp._beta_t = beta
        F, D, alts = self._costs(exp, ans)
        if F is None:
            exp._stat, exp._closest = math.inf, None
            return beta, True
        if self.sets:  # one threshold per alternative
            b = self.threshold.sets(D, exp.T)
            k = int(np.argmin(F - b))
            exp._beta_t = beta = float(b[k])
        else:
            k = int(np.argmin(F))
        exp._stat, exp._closest = float(F[k]), alts[k]
        return beta, exp._stat >= beta

    def margin(self, exp: Any, ans: Any, t: int) -> float:
        F, D, _ = self._costs(exp, ans)
        if F is None:
            return math.inf
        if self.sets:
            return float(np.min(F - self.threshold.sets(D, exp.T)))
        return float(F.min()) - float(self.threshold(t, exp.T))


class CertificateStop(_ClassStop):
    """A class too large to list: the Lagrangian certificate of
    :func:`~combex.identification.class_glr_lower_bound` (at the all-arms mixture's effective
    counts ``N^2 / (N + rho)``; unknown variances: the variance upper bounds ``U_a``), after a
    cheap necessary condition on the pool of members found so far (the exploration's
    ``_pool``). ``product``: one threshold per member (``valid:sets-product-mixture``), the
    statistic then the GLR less the terms of the member's difference against the constant
    ``log(1 / delta)``."""

    route = "certificate"

    def __init__(self, threshold: Any, n_alternatives: int, *, mixture: bool, unknown_variance: bool,
                 product: bool) -> None:
        super().__init__(threshold, n_alternatives, mixture=mixture, unknown_variance=unknown_variance)
        self.product = bool(product)
        self._cert: tuple[int, float] | None = None

    def member_terms(self, exp: Any) -> NDArray[np.float64] | None:
        """Per arm, what it adds to the threshold of a member whose difference with the answer
        holds it (the certificate's ``arm_terms``); None without per-member terms."""
        return self.threshold.set_terms(exp.T) if self.product else None

    def _beta(self, exp: Any, t: int) -> float:
        return self.threshold.constant if self.product else self.threshold(t, exp.T)

    def _certificate(self, exp: Any, ans: Any, beta: float, parts: Any = None) -> dict[str, Any]:
        """The certificate at ``beta``; ``parts`` = ``(counts, ucb, terms)`` when the caller
        tests several ``beta`` on the same data."""
        counts, ucb, terms = parts if parts is not None else (*self.counts(exp), self.member_terms(exp))
        return class_glr_lower_bound(exp.dc, ans, exp.mu, counts, epsilon=exp.eps, sigma=exp.sigma, beta=beta,
                                     variances=ucb, arm_terms=terms)

    def check(self, exp: Any, ans: Any, t: int) -> tuple[float, bool] | None:
        beta = self._beta(exp, t)
        exp._beta_t = beta
        known = [m for m in exp._pool if not np.array_equal(m, ans)]
        if known:
            # necessary condition first (cheap): every known alternative's exact GLR >= its threshold
            counts, ucb = self.counts(exp)
            F, D, _ = exp.class_costs(counts, ans, known, ucb)
            terms = self.member_terms(exp)
            if terms is not None:
                F = F - D @ terms
            if float(F.min()) < beta:
                exp._stat = float(F.min())
                if exp.record_trace:
                    exp.record(glr=exp._stat, threshold=beta)
                return None
        res = self._certificate(exp, ans, beta)
        exp._closest = res["closest"]
        exp._stat = float(res["slack"])
        exp._margin = float(res["lower"])
        for m in res["candidates"]:
            if not any(np.array_equal(m, p) for p in exp._pool):
                exp._pool.append(m)
        exp._pool = exp._pool[-40:]
        return beta, bool(res["stop"])

    def margin(self, exp: Any, ans: Any, t: int) -> float:
        # the certificate at this threshold: its lower bound of min f is >= 0 iff it holds
        return float(self._certificate(exp, ans, self._beta(exp, t))["lower"])

    def statistic(self, exp: Any) -> tuple[float, float]:
        """The GLR the certificate guarantees (:meth:`certified`) and the threshold."""
        if exp._answer is None:
            return super().statistic(exp)
        return (self.certified(exp), float(exp._beta_t))

    def certified(self, exp: Any) -> float:
        """The largest ``b`` the certificate certifies (``GLR >= b``) at the current data:
        the class statistic compared with the threshold (bisection on ``b``; the certificate
        is monotone in ``b``). Cached per sample count."""
        if self._cert is not None and self._cert[0] == exp.samples:
            return self._cert[1]
        ans = exp._answer
        parts = (*self.counts(exp), self.member_terms(exp))  # the same data at every b

        def holds(b: float) -> bool:
            return bool(self._certificate(exp, ans, b, parts)["stop"])

        hi = float(self._certificate(exp, ans, 0.0, parts)["slack"])
        lo = 0.0
        bt = float(exp._beta_t)
        if math.isfinite(bt) and 0.0 < bt < hi:  # the rule's own side of its threshold, exactly
            if holds(bt):
                lo = bt
            else:
                hi = bt
        if not math.isfinite(hi) or hi <= 0.0 or holds(hi):  # nothing above 0 to certify, or all of it
            val = hi
        else:
            val, _ = monotone_boundary(holds, lo, hi, rtol=1e-3)
        self._cert = (exp.samples, val)
        return val


def glr_stopping_rule(exp: Any, delta: float) -> GLRStoppingRule:
    """The stopping rule of ``exp`` (its query's structure, its reward model, its solver's
    ``threshold`` setting) at error probability ``delta``: the one place the threshold is
    chosen. Reads ``exp.structure``, ``exp.query``, ``exp.divergence``, ``exp.N``, the listed
    members ``exp._members`` and ``exp.solver.threshold``; changes nothing."""
    s = exp.solver
    uv = exp.divergence == _UV
    kk = s.threshold == "valid-kk"  # the Kaufmann & Koolen forms instead of the normal mixtures
    kind = "heuristic" if s.threshold == "heuristic" else "valid"
    members = exp._members
    if exp.structure != "class":  # a union over the query's pairs
        m, st = exp.query.n_alternatives, "pairs" if kk else "pairs-mixture"
    elif members is not None and not kk and not uv and kind == "valid":
        # listed members: one mixture per alternative, on the arms of its difference
        m, st = max(len(members) - 1, 1), "sets-mixture"
    elif kk or uv or kind != "valid":  # the (sub-)Gaussian statistic: all-arms forms
        m, st = 1, "all-arms-gaussian" if kk else "all-arms-mixture"
    else:  # a class too large to list: one threshold per member, the union weighted by its difference
        m, st = 1, "sets-product-mixture"
    if st in ("pairs", "pairs-mixture") and exp.divergence == "bernoulli":
        st = "pairs-kl"  # the KL statistic: Theorem 7 (the normal mixture needs the Gaussian statistic)
    if exp.structure != "class":
        if uv:
            return PairStopUnknownVariance(
                UnknownVarianceThreshold(delta, kind, n_alternatives=m, n_arms=exp.N, means="kk" if kk else "mixture"),
                m)
        return PairStop(GLRThreshold(delta, kind, structure=st, n_alternatives=m, n_arms=exp.N), m,
                        per_pair=kind == "valid", mixture=st == "pairs-mixture", kl=st == "pairs-kl")
    if uv:  # variance UCBs in the all-arms statistic
        thr: Any = ClassUnknownVarianceThreshold(delta, kind, n_arms=exp.N, structure=st)
    else:
        thr = GLRThreshold(delta, kind, structure=st, n_alternatives=m, n_arms=exp.N)
    mixture = st in ("all-arms-mixture", "sets-mixture", "sets-product-mixture") and kind == "valid" and not uv
    if members is not None:
        return MemberStop(thr, m, mixture=mixture, unknown_variance=uv, sets=st == "sets-mixture")
    return CertificateStop(thr, m, mixture=mixture, unknown_variance=uv, product=st == "sets-product-mixture")
