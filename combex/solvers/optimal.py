"""Asymptotically optimal pure exploration: Track-and-Stop, Top-Two, Frank-Wolfe sampling, CombGame.

Best arm (index arms), Best-K (semi-bandit, ``K >= 2``) and any decision class with an
``argmax_excluding`` oracle (matroids, paths, matchings, CP-SAT classes), one name per
algorithm; the structure comes from the problem (its ``decision_class``) or the ``K`` /
``decision_class`` settings:

=====================  ==================  ==================================================
solver (CLI name)      class               sampling rule
=====================  ==================  ==================================================
``track-and-stop``     TrackAndStop        Garivier & Kaufmann (2016): C- or D-tracking of
                                           w*(mu_hat) (Theorem 5 root-finding for the best
                                           arm, barrier method on Gaussian swap pairs;
                                           recomputed lazily), forced exploration sqrt(t)
``top-two``            TopTwo              EB-TCI (Jourdan, Degenne, Baudry, de Heide &
                                           Kaufmann 2022; epsilon-version EB-TCeps of
                                           Jourdan, Degenne & Kaufmann 2023); leader side
                                           by information-directed selection
                                           (You, Qin, Wang & Yang 2023)
``fw-sampling``        FWSampling          Frank-Wolfe sampling (Wang, Tzeng & Proutiere
                                           2021), r-subdifferential game, forced exploration
``comb-game``          CombGame            Jourdan, Mutny, Kirschner & Krause (ALT 2021):
                                           AdaHedge learner against the oracle's closest
                                           alternative, optimistic gains, tracking
=====================  ==================  ==================================================

Every rule is a subclass of :class:`combex.solvers.glr.GLRExploration`, the shared loop:
its module docstring describes the stopping rule and thresholds, the closest alternative of
each structure, the reward models (``divergence``), batches, save / resume, the simulated
fast path (Top-Two's compiled loop included) and the lower bound attached by ``run``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, param_error
from ..allocations import AdaHedge, simplex_maxmin
from ..estimation._glr import kl_bernoulli
from ..estimation._glr_unknown_variance import kl_gaussian_unknown_variance
from ..exceptions import InvalidParameterError
from ..identification import bandit_characteristic_time, true_noise_scale
from ..identification._bandit import _maxmin_weights, bai_optimal_weights, pair_maxmin_weights
from ..identification._pairs_kernel import complete_pairs_kernel
from . import _glr_kernel
from ._base import Exploration
from ._registry import register_solver
from .glr import LINEAR_DISPATCH, GLRExploration, GLRSolver, _simplex_floor

__all__ = ["GLRSolver", "GLRExploration", "TrackAndStop", "TopTwo", "FWSampling", "CombGame", "OracleTracking",
           "LINEAR_DISPATCH"]


class _CompiledLoop(GLRExploration):
    """A sampling rule the compiled GLR loop repeats (:mod:`combex.solvers._glr_kernel`:
    Top-Two with IDS or a fixed beta, Track-and-Stop's D-tracking with its w* solves,
    Frank-Wolfe sampling, which hands a step back to ``next_arm`` whenever two or more
    alternatives are active, CombGame's game with its AdaHedge learner), on best arm and Best-K pairs
    with known variance: ``run()``'s samples and one told reward at a time go through it
    where it applies (bit-identical), else through the Python rule."""

    def _advance(self, env: Any, budget: int | None) -> bool:
        return _glr_kernel.advance(self, env, budget)

    def _update_one(self, a: int, c: int, r: float) -> None:
        """The compiled one-sample update and check where they apply
        (:func:`~combex.solvers._glr_kernel.tell_one`, the same values), else Python's."""
        if c != 1 or not _glr_kernel.tell_one(self, a, r):
            super()._update_one(a, c, r)


class _CompiledStep(_CompiledLoop):
    """A rule whose one-sample selection is the loop's own step (Frank-Wolfe sampling,
    CombGame: :func:`~combex.solvers._glr_kernel.rule_one`, the same arm), else Python's."""

    def _select_one(self) -> int:
        a = _glr_kernel.rule_one(self)
        return a if a >= 0 else super()._select_one()


# ============================================================================ Track-and-Stop
class _TrackAndStopExploration(_CompiledLoop):
    """Garivier & Kaufmann (2016): w*(mu_hat) by Theorem 5 (best arm), exactly by
    :func:`~combex.identification.pair_maxmin_weights` (Gaussian Best-K and
    matroid bases: bipartite pairs), or by subgradient ascent (other classes, Bernoulli and
    unknown-variance sets; 60 warm-started steps), recomputed lazily: when the empirical
    answer changes (and t grew by 1% since the last solve), else when t has grown by 5%
    (best arm), 3% (Best-K, matroid bases) or 10% (other decision classes) since the last
    solve. The theory allows it: D- and C-tracking only need the tracked allocation to
    converge to w*(mu) (Garivier & Kaufmann 2016, Proposition 9 / Lemma 7: tracking a
    sequence ``w(t) -> w*``); the solves happen at times ``t_k -> inf`` with
    ``mu_hat(t_k) -> mu`` and ``w*`` continuous at mu (unique answer), so the stale
    ``w*(mu_hat(t_k))`` converges as well. D-tracking
    ``argmax_a t w*_a - N_a`` or C-tracking ``argmax_a sum_s w^{eps_s}(s)_a - N_a`` with
    ``eps_s = (K^2 + s)^{-1/2} / 2``; forced exploration when some ``N_a < sqrt(t) - K/2``."""

    def init_rule(self) -> None:
        self.w = np.full(self.N, 1.0 / self.N)
        self.cum = np.zeros(self.N)
        self._t_solved = -1.0
        self._solved_for = np.zeros(self.N)  # the answer (one-hot / mask) of the last solve

    _saved_arrays = ("w", "cum", "_solved_for")

    def _extra_scalars(self) -> dict[str, float]:
        return {"_t_solved": float(self._t_solved)}

    #: Lazy allocation: w*(mu_hat) is recomputed when the empirical answer changes or when t
    #: has grown by this factor since the last solve (bai: every 5% of t, the root-finding;
    #: Best-K and matroid bases: every 3%, exact by pair_maxmin_weights; other classes: every
    #: 10%, subgradient ascent). w*(mu_hat) piles weight on the few outsiders whose estimates
    #: are highest, and only a fresh solve moves it on once their pulls bring the estimates
    #: down: on jiang-1sparse N = 50, K = 2 (10 runs, D-tracking; the oracle sampler needs
    #: 4,251) the 60-step subgradient ascent every 10% needed 7,488 samples, every 3% 3,156;
    #: the exact solve every 10% 2,651, every 3% 2,376, at every sample 2,352. The best-arm
    #: root-finding stays at 5% (1% needed 3,223 against 2,549 on the Gaussian MAB of the
    #: benchmark).
    _GROWTH = {"bai": 1.05, "sets": 1.03, "class": 1.10}
    #: Subgradient steps of a warm-started solve (sets).
    _WARM_ITERS = 60
    #: Relative duality gap of a warm-started exact solve (Gaussian Best-K, matroid bases).
    _WARM_TOL = 1e-3

    def _solve(self) -> None:
        t = float(self.T.sum())
        ans = self._answer
        if self.structure == "bai":
            key = np.zeros(self.N)
            key[int(ans)] = 1.0
        else:
            key = np.asarray(ans, dtype=np.float64)
        growth = self._GROWTH[self.structure if self.structure in ("bai", "class") else "sets"]
        if self._t_solved > 0 and t < growth * self._t_solved and (
                t < 1.01 * self._t_solved or np.array_equal(key, self._solved_for)):
            return  # same answer and t grew by less than the factor, or a new answer within 1% of t
        self._t_solved = t
        self._solved_for = key
        if self.structure == "bai" and not self._uv:
            div = self.divergence
            if div == "bernoulli" and self.eps > 0:
                div = "gaussian"
            w, inv = bai_optimal_weights(self.mu, answer=ans, epsilon=self.eps, divergence=div, sigma=self.sigma)
            self.w = w if inv > 0 else np.full(self.N, 1.0 / self.N)
            return
        if self.structure in ("topk", "swaps") and self.divergence == "gaussian":
            I, J = self._pairs(ans)
            # Gaussian pairs: Z_ij(w) = c_ij / (1/w_i + 1/w_j) with c_ij = (gap_ij)_+^2 / (2 sigma^2)
            # fixed during the solve; its gradient is c_ij (w_j, w_i)^2 / (w_i + w_j)^2 (the
            # envelope gradients d(mu_i, x), d(mu_j, x + eps) of pair_gradients, in closed form)
            gap = self.mu[I] - self.mu[J] + self.eps
            cij = np.where(gap > 0, gap * gap / (2.0 * self.sigma * self.sigma), 0.0)
            N = self.N
            if np.all(cij > 0) and not np.intersect1d(I, J).size:
                # the exact w*(mu_hat) on the bipartite pairs, warm-started from the last solve;
                # the barrier method: the centre of the optimal face when w* is not unique
                # (see pair_maxmin_weights); the subgradient ascent below stays the fallback.
                # Warm solves stop at a duality gap of _WARM_TOL (w within ~1e-4 of w*, all
                # tracking uses), one centring round instead of five
                # (a class sharing this solve without the attribute keeps 1e-6)
                warm_tol = getattr(self, "_WARM_TOL", 1e-6)
                tol = 1e-6 if self._t_solved <= N + 1 else warm_tol
                kernel = complete_pairs_kernel() if self.structure == "topk" else None
                val = -1.0
                if kernel is not None:  # the complete pairs of Best-K: compiled, as the compiled loop solves
                    w_exact = np.empty(N)
                    val = kernel(np.flatnonzero(ans), np.flatnonzero(~ans), cij, N, tol,
                                 np.ascontiguousarray(self.w, dtype=np.float64), w_exact)
                if val < 0:
                    w_exact, val = pair_maxmin_weights(I, J, cij, N, tol=tol, w0=self.w, method="barrier")
                if val > 0:
                    self.w = w_exact
                    return

            def costs(w: NDArray[np.float64]) -> tuple[Any, Any]:
                inv = 1.0 / w
                z = cij / (inv[I] + inv[J])
                a = int(np.argmin(z))
                i, j = int(I[a]), int(J[a])
                wi, wj = float(w[i]), float(w[j])
                c = float(cij[a]) / (wi + wj) ** 2
                g = np.zeros(N)
                g[i] = c * wj * wj
                g[j] = c * wi * wi
                return z, g
        elif self.structure in ("bai", "topk", "swaps"):
            I, J = self._pairs(ans)

            def costs(w: NDArray[np.float64]) -> tuple[Any, Any]:
                # only the active alternative's gradient row is used (_maxmin_weights)
                z, x, _, _ = self.pair_costs(w, ans, I, J)
                a = int(np.argmin(z))
                gi, gj = self.pair_gradients(x[a:a + 1], I[a:a + 1], J[a:a + 1])
                g = np.zeros(self.N)
                g[I[a]], g[J[a]] = gi[0], gj[0]
                return z, g
        else:
            alts = self._class_alternatives(ans, self.T.astype(float), self._beta_t)

            def costs(w: NDArray[np.float64]) -> tuple[Any, Any]:
                F, D, V = self.class_costs(w, ans, alts)
                a = int(np.argmin(F))
                return F, self.class_gradient(w, F, D, V, a)
        self.w = _maxmin_weights(costs, self.N, w0=self.w, iters=150 if self._t_solved <= self.N + 1 else self._WARM_ITERS)

    def prepare_batch(self) -> None:
        self._solve()

    def _select_one(self) -> int:
        """The compiled one-sample D-tracking where it applies
        (:func:`~combex.solvers._glr_kernel.track_one`, the same arm), else the Python rule."""
        a = _glr_kernel.track_one(self)
        return a if a >= 0 else super()._select_one()

    def next_arm(self, cv: NDArray[np.float64]) -> int:
        f = self._forced(cv)
        t = float(cv.sum())
        if self.solver.tracking == "C":
            self.cum += _simplex_floor(self.w, 0.5 / math.sqrt(self.N ** 2 + t))
            if f is not None:
                return f
            return int(np.argmax(self.cum - cv))
        if f is not None:
            return f
        return int(np.argmax(t * self.w - cv))

    def _info(self) -> dict[str, Any]:
        out = super()._info()
        out["tracking"] = self.solver.tracking
        out["weights"] = self.w.copy()
        return out


@register_solver
class TrackAndStop(GLRSolver):
    """Track-and-Stop of Garivier & Kaufmann (2016), with the GLR stopping rule.

    Sample every arm once; then, at each step, pull an under-sampled arm
    (``N_a < sqrt(t) - K/2``, forced exploration) if any, else track the optimal proportions
    ``w*(mu_hat)`` of the characteristic time (Theorem 5: ``w*_j = x_j(y*) w*_1`` with
    ``y*`` the root of ``sum_j d(mu_1, m_j)/d(mu_j, m_j) = 1``) by D-tracking
    (``argmax_a t w*_a - N_a``) or C-tracking (cumulative sums of ``w*`` projected on
    ``{w >= eps_t}``, ``eps_t = (K^2 + t)^{-1/2} / 2``). For Gaussian Best-K and classes of
    matroid bases w* is solved exactly on the swap pairs (a barrier method); otherwise
    it is approximated by exponentiated subgradient ascent on the pairs (or on the oracle's
    alternatives found so far). Stop when the GLR exceeds the threshold (module docstring).

    Parameters
    ----------
    K : int, default 1
        1: best arm (answer: an index); K >= 2: the K best arms (answer: a bool mask).
        Ignored when a decision class is given or the problem has one.
    delta : float in (0, 1), default 0.05
    epsilon : float >= 0, default 0
        The answer is epsilon-good (sum of means for sets).
    threshold : {"valid", "valid-kk", "heuristic"}
        ``"valid"``: the normal-mixture thresholds (``valid:pairs-mixture``,
        ``valid:all-arms-mixture``; Bernoulli KL: ``valid:pairs-kl``); ``"valid-kk"``: the
        Kaufmann & Koolen (2021) forms (``valid:pairs``, ``valid:all-arms-gaussian``);
        ``"heuristic"``: ``log((1 + log t) / delta)``. See the module docstring.
    divergence : {"auto", "gaussian", "bernoulli", "unknown-variance"}
        See the module docstring ("Reward models").
    sigma : float > 0, optional
        Noise scale (default: the problem's; 1/2 for Bernoulli; unused with
        ``"unknown-variance"``).
    decision_class : DecisionClass, optional
        Any class with ``argmax`` and ``argmax_excluding``.
    batch_size : int >= 1, default 1
    tracking : {"D", "C"}, default "D"

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> env = GaussianArms([1.0, 0.5, 0.0], rng=0)
    >>> res = TrackAndStop(delta=0.05).run(env, rng=1)
    >>> res.status, res.answer, res.info["threshold"]
    ('identified', 0, 'valid:pairs-mixture')
    """

    name = "track-and-stop"
    families: ClassVar[tuple[str, ...]] = ("semi-bandit",)
    exploration_class = _TrackAndStopExploration

    def __init__(self, K: int = 1, *, delta: float = 0.05, epsilon: float = 0.0, threshold: str = "valid",
                 divergence: str = "auto", sigma: float | None = None, decision_class: Any = None,
                 batch_size: int = 1, tracking: str = "D") -> None:
        super().__init__(K, delta=delta, epsilon=epsilon, threshold=threshold, divergence=divergence, sigma=sigma,
                         decision_class=decision_class, batch_size=batch_size)
        self.tracking = check_choice(tracking, "tracking", ("C", "D"), owner="TrackAndStop")


# ============================================================================ Top-Two
class _TopTwoExploration(_CompiledLoop):
    """EB-TCI: leader = the empirical answer; challenger = the alternative minimizing
    ``W(leader, j) + log N_j`` (transportation cost plus the "I" penalization); pull the
    leader's arm with probability beta = 1/2, else the challenger's. Best-K: the pair
    (i in the answer, j outside) minimizing ``W_ij + log(N_i + N_j)``. Decision classes: the
    closest alternative S' found by the oracle (``W + log(1/V)``); pull the least sampled arm
    of ``S \\ S'`` (leader side, probability ``2 beta |S \\ S'| / |S xor S'|``) or of
    ``S' \\ S`` (challenger side).

    ``beta="ids"`` (the default; best arm, Best-K, matroid bases): information-directed
    selection of You, Qin, Wang & Yang (COLT 2023, "Information-directed selection for
    top-two algorithms"): the pair (i, j) is chosen as above (TCI), then i with probability
    ``h_i / (h_i + h_j)``, ``h_a = N_a d(mu_hat_a, lambda_a)`` (:meth:`_ids_leader`; the form
    of the rule was checked against a public port of the authors' code, the paper's text was
    not available here). By their abstract, top-two with IDS is asymptotically optimal for
    Gaussian best-arm identification, and for Best-K (k > 1) no fixed beta is optimal
    even when tuned with knowledge of the instance.

    ``beta="optimal"`` (best arm, Best-K, matroid bases): the leader's probability is the
    answer's share of the optimal allocation, ``beta_t = sum_{i in S} w*_i(mu_hat)``
    (``w*`` as Track-and-Stop computes it, lazily). A Top-Two rule with a fixed beta is only
    beta-optimal (its allocation is optimal among those giving the leader side the share
    beta; Russo 2016, Jourdan et al. 2022); the answer's side of ``w*`` is the beta that
    makes the constraint inactive. It matters for Best-K: on jiang-1sparse K = 2 the two
    answer arms hold 1/4 of ``w*`` (1/8 each against 1/24 for each of the other arms), so
    beta = 1/2 spends twice the optimal share on them."""

    def init_rule(self) -> None:
        self.w = np.full(self.N, 1.0 / self.N)
        self._t_solved = -1.0
        self._solved_for = np.zeros(self.N)

    _saved_arrays = ("w", "_solved_for")
    _GROWTH = {"bai": 1.10, "sets": 1.10, "class": 1.10}
    _WARM_ITERS = 30  # only the answer's share of w* is used

    def _extra_scalars(self) -> dict[str, float]:
        return {"_t_solved": float(self._t_solved)}

    def _adaptive(self) -> bool:
        return self.solver.beta == "optimal" and self.structure != "class"

    def _fixed_half(self) -> bool:
        """1/2 where the adaptive choices do not apply (decision classes)."""
        return isinstance(self.solver.beta, str)

    def prepare_batch(self) -> None:
        if self.structure == "class":
            self._alts = self._class_alternatives(self._answer, self.T.astype(float), self._beta_t)
        elif self._adaptive():
            _TrackAndStopExploration._solve(self)  # type: ignore[arg-type]

    def _select_one(self) -> int:
        """The compiled one-sample selection where it applies
        (:func:`~combex.solvers._glr_kernel.select_one`, the same arm), else the
        Python rule."""
        a = _glr_kernel.select_one(self)
        return a if a >= 0 else super()._select_one()

    def _leader_probability(self) -> float:
        if not self._adaptive():
            return 0.5 if self._fixed_half() else float(self.solver.beta)
        ans = self._answer
        if self.structure == "bai":
            return float(self.w[int(ans)])
        return float(self.w[ans].sum())

    def _ids_leader(self, u: float, cv: NDArray[np.float64], k: int, x: Any, I: Any, J: Any) -> bool:
        """Information-directed selection (You, Qin, Wang & Yang 2023): pull the leader side
        ``I`` of the pair with probability ``h_I / (h_I + h_J)``, ``h_a = N_a d(mu_hat_a,
        lambda_a)``, arm a's part of the pair's GLR ``N_I d(mu_I, lambda_I) + N_J d(mu_J,
        lambda_J)`` at its closest alternative lambda (the cost is homogeneous of degree one
        in the counts, so ``h_a = N_a dZ/dN_a`` and ``h_I + h_J = Z``). Gaussian: ``N_J / (N_I
        + N_J)``."""
        i, j = int(I[k]), int(J[k])
        xi = float(x[k]) if np.ndim(x) else float(x)
        xj = xi + self.eps
        if self.divergence == "bernoulli":
            hi, hj = float(kl_bernoulli(self.mu[i], xi)), float(kl_bernoulli(self.mu[j], xj))
        elif self._uv:
            hi = float(kl_gaussian_unknown_variance(self.mu[i], xi, self.var[i]))
            hj = float(kl_gaussian_unknown_variance(self.mu[j], xj, self.var[j]))
        else:
            hi, hj = (self.mu[i] - xi) ** 2, (self.mu[j] - xj) ** 2
        hi, hj = float(cv[i]) * hi, float(cv[j]) * hj
        tot = hi + hj
        return u < (hi / tot if tot > 0 else 0.5)

    def next_arm(self, cv: NDArray[np.float64]) -> int:
        ans = self._answer
        u = self.rng.random()
        if self.solver.beta == "ids" and self.structure in ("bai", "topk", "swaps"):
            z, x, I, J = self.pair_costs_now(cv, ans)
            pen = np.log(cv[J]) if self.structure == "bai" else np.log(cv[I] + cv[J])
            k = int(np.argmin(z + pen))
            return int(I[k]) if self._ids_leader(u, cv, k, x, I, J) else int(J[k])
        beta = self._leader_probability()
        lead = u < beta
        if self.structure == "bai":
            if lead:
                return int(ans)
            z, _, I, J = self.pair_costs_now(cv, ans)
            return int(J[int(np.argmin(z + np.log(cv[J])))])
        if self.structure in ("topk", "swaps"):
            z, _, I, J = self.pair_costs_now(cv, ans)
            k = int(np.argmin(z + np.log(cv[I] + cv[J])))
            return int(I[k]) if lead else int(J[k])
        F, D, V = self.class_costs(cv, ans, self._alts)
        a = int(np.argmin(F + np.log(V ** -1)))
        # leader side with probability 2 beta |S minus S'| / |S xor S'| (1/2 for a swap): with
        # beta = 1/2 every arm of the difference is drawn equally often, the optimal
        # allocation against a single Gaussian alternative
        d = D[a]
        lead = u < min(1.0, 2.0 * beta * float((ans & d).sum()) / max(float(d.sum()), 1.0))
        side = ans & d if lead else (~ans) & d
        if not side.any():
            side = D[a]
        return int(np.argmin(np.where(side, cv, np.inf)))


@register_solver
class TopTwo(GLRSolver):
    """Top-Two sampling EB-TCI (Jourdan, Degenne, Baudry, de Heide & Kaufmann 2022); with
    ``epsilon > 0`` the transportation costs are the epsilon-shifted ones of EB-TCeps
    (Jourdan, Degenne & Kaufmann 2023). GLR stopping (module docstring).

    Leader: the empirical best answer (EB). Challenger: ``argmin_{j != B} W(B, j) + log N_j``
    with ``W`` the pair GLR (TCI). Best-K and decision classes: see
    :class:`_TopTwoExploration`. Parameters as :class:`TrackAndStop`, plus ``beta``: the
    leader's probability, a float in (0, 1) (the papers' 1/2); ``"ids"`` (default):
    information-directed selection (You, Qin, Wang & Yang 2023), no tuning parameter: pull
    the leader side of the chosen pair (i, j) with probability ``h_i / (h_i + h_j)``,
    ``h_a = N_a d(mu_hat_a, lambda_a)`` at the pair's closest alternative (Gaussian: ``N_j /
    (N_i + N_j)``); or ``"optimal"``: the answer's share of the optimal allocation
    ``w*(mu_hat)``. ``"ids"`` and ``"optimal"`` apply to the best arm, Best-K and
    matroid bases; other decision classes use 1/2. Measured (100 runs, delta = 0.01, valid
    thresholds, the seeds of benchmarks/optimal.py), ids / optimal / 1/2: jiang-1sparse
    N = 20, K = 2: 855 / 1,066 / 1,068 (the median of ``"optimal"`` is 866: it had two
    runs of 5,075 and 15,705 samples; ``w*(mu_hat)`` of misordered early means can starve
    an answer arm); N = 10: 445 / 432 / 487; jiang-exponential N = 20: 531 / 554 / 629;
    Gaussian MAB (1, .8, .6, .4, .2): 2,768 / 2,868 / 2,886. ``"ids"`` needs no ``w*``
    solve (about half the time per sample).

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> res = TopTwo(delta=0.05).run(GaussianArms([1.0, 0.5, 0.0], rng=0), rng=1)
    >>> res.status, res.answer
    ('identified', 0)
    """

    name = "top-two"
    #: linear and full-bandit problems go to the linear solver (:data:`LINEAR_DISPATCH`)
    families: ClassVar[tuple[str, ...]] = ("semi-bandit", "linear", "full-bandit")
    exploration_class = _TopTwoExploration

    def __init__(self, K: int = 1, *, delta: float = 0.05, epsilon: float = 0.0, threshold: str = "valid",
                 divergence: str = "auto", sigma: float | None = None, decision_class: Any = None,
                 batch_size: int = 1, beta: float | str = "ids") -> None:
        super().__init__(K, delta=delta, epsilon=epsilon, threshold=threshold, divergence=divergence, sigma=sigma,
                         decision_class=decision_class, batch_size=batch_size)
        if isinstance(beta, str):
            self.beta: float | str = check_choice(beta, "beta", ("optimal", "ids"), owner="TopTwo")
        else:
            self.beta = check_float(beta, "beta", owner="TopTwo", low=0.0, high=1.0, closed="neither")


# ============================================================================ FW sampling
class _FWExploration(_CompiledStep):
    """Frank-Wolfe sampling (Wang, Tzeng & Proutiere 2021, Algorithm 1): with proportions
    ``x_t = N / t`` and the r-active alternatives ``H = {a : F_a(x_t) <= min F + r_t}``
    (``r_t = t^{-0.9} / N`` relative to min F), the direction ``z_t = argmax_{z in simplex}
    min_{a in H} <grad F_a(x_t), z - x_t>`` (a vertex when |H| = 1, a small LP otherwise);
    (:func:`combex.allocations.simplex_maxmin`, shared with the linear sampler);
    the target ``c_{t+1} = c_t + z_t`` is tracked (``argmax c - N``); forced exploration
    (uniform) when some ``N_a < sqrt(t) - N/2``."""

    def init_rule(self) -> None:
        self.cum = np.zeros(self.N)

    _saved_arrays = ("cum",)

    def prepare_batch(self) -> None:
        if self.structure == "class":
            self._alts = self._class_alternatives(self._answer, self.T.astype(float), self._beta_t)

    def _values_grads(self, x: NDArray[np.float64]) -> tuple[Any, Any]:
        ans = self._answer
        if self.structure == "class":
            F, D, V = self.class_costs(x, ans, self._alts)
            return F, self.class_gradient(x, F, D, V)
        z, xx, I, J = self.pair_costs(x, ans)
        gi, gj = self.pair_gradients(xx, I, J)
        G = np.zeros((z.shape[0], self.N))
        r = np.arange(z.shape[0])
        G[r, I] = gi
        G[r, J] = gj
        return z, G

    def next_arm(self, cv: NDArray[np.float64]) -> int:
        f = self._forced(cv)
        if f is not None:
            return f
        t = float(cv.sum())
        x = cv / t
        if self.structure == "class":
            F, G = self._values_grads(x)
        else:  # pairs: the gradient rows are built only when needed (same values)
            F, xx, I, J = self.pair_costs(x, self._answer)
            G = None
        fmin = float(F.min())
        r = t ** -0.9 / self.N
        H = np.flatnonzero(F <= fmin + r * max(fmin, 1e-12))
        if G is None and H.size == 1:
            h = int(H[0])
            gi, gj = self.pair_gradients(xx[h:h + 1], I[h:h + 1], J[h:h + 1])
            row = np.zeros(self.N)
            row[I[h]] = gi[0]
            row[J[h]] = gj[0]
            G = row[None, :]
            H = np.zeros(1, dtype=np.intp)
        elif G is None:
            G = self._values_grads(x)[1]
        z = simplex_maxmin(G[H], x)
        self.cum += z
        return int(np.argmax(self.cum - cv + 1.0 - 1e-9 * cv))


@register_solver
class FWSampling(GLRSolver):
    """Frank-Wolfe sampling of Wang, Tzeng & Proutiere (2021) with GLR stopping.

    Best arm, Best-K (pairs) and decision classes (the alternatives found by the oracle). See
    :class:`_FWExploration`; parameters as :class:`TrackAndStop`.

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> res = FWSampling(delta=0.05).run(GaussianArms([1.0, 0.5, 0.0], rng=0), rng=1)
    >>> res.status, res.answer
    ('identified', 0)
    """

    name = "fw-sampling"
    #: linear and full-bandit problems go to the linear solver (:data:`LINEAR_DISPATCH`)
    families: ClassVar[tuple[str, ...]] = ("semi-bandit", "linear", "full-bandit")
    exploration_class = _FWExploration


# ============================================================================ CombGame
class _CombGameExploration(_CompiledStep):
    """The game of Jourdan, Mutny, Kirschner & Krause (ALT 2021): the learner plays
    ``w_t`` (AdaHedge over the arms); nature best-responds with the closest alternative
    ``lambda_t`` to ``mu_hat`` under ``w_t`` (pairs, or the oracle: ``argmax_excluding``);
    the learner gains the optimistic ``U_i = max_{xi in CI_i} d(xi, lambda_i)`` with
    ``CI_i = [mu_i -+ sqrt(2 sigma^2 log(t) / N_i)]``; arms are pulled by tracking the
    cumulative ``w`` (``argmax sum_s w_s - N``)."""

    def init_rule(self) -> None:
        self.learner = AdaHedge(self.N)  # cumulative losses L (negative gains), mixability gap Delta
        self.cum = np.zeros(self.N)

    _saved_arrays = ("L", "cum")

    @property
    def L(self) -> NDArray[np.float64]:  # noqa: N802 - the learner's cumulative losses (saved state)
        return self.learner.L

    @L.setter
    def L(self, v: NDArray[np.float64]) -> None:  # noqa: N802
        self.learner.L = v

    @property
    def Delta(self) -> float:  # noqa: N802 - the learner's cumulative mixability gap (saved state)
        return self.learner.Delta

    @Delta.setter
    def Delta(self, v: float) -> None:  # noqa: N802
        self.learner.Delta = float(v)

    def _extra_scalars(self) -> dict[str, float]:
        return {"Delta": float(self.Delta)}

    def prepare_batch(self) -> None:
        if self.structure == "class":
            self._alts = self._class_alternatives(self._answer, self.T.astype(float), self._beta_t)

    def next_arm(self, cv: NDArray[np.float64]) -> int:
        w = self.learner.weights()
        t = float(cv.sum())
        ans = self._answer
        wf = np.maximum(w, 1e-12)
        lam = self.mu.copy()
        if self.structure == "class":
            F, D, V = self.class_costs(wf, ans, self._alts)
            a = int(np.argmin(F))
            g = float(self.mu[ans].sum() - self.mu[self._alts[a]].sum()) + self.eps
            if g > 0:
                sign = np.where(ans, -1.0, 1.0)
                lam = self.mu + D[a] * sign * g * ((self._svar if self._uv else 1.0) / wf) / V[a]
        else:
            z, x, I, J = self.pair_costs(wf, ans)
            k = int(np.argmin(z))
            if z[k] > 0:
                lam[I[k]], lam[J[k]] = x[k], x[k] + self.eps
        if self._uv:  # optimistic unknown-variance costs, empirical variances plugged in (classes: UCBs)
            sv = self._svar if self.structure == "class" else self.var
            rad = np.sqrt(2.0 * sv * math.log(max(t, 2.0)) / cv)
            gains = kl_gaussian_unknown_variance(np.abs(self.mu - lam) + rad, 0.0, sv)
        elif self.divergence == "gaussian":
            rad = np.sqrt(2.0 * self.sigma ** 2 * math.log(max(t, 2.0)) / cv)
            gains = (np.abs(self.mu - lam) + rad) ** 2 / (2.0 * self.sigma ** 2)
        else:
            rad = np.sqrt(2.0 * self.sigma ** 2 * math.log(max(t, 2.0)) / cv)
            lo = np.clip(self.mu - rad, 0.0, 1.0)
            hi = np.clip(self.mu + rad, 0.0, 1.0)
            gains = np.maximum(kl_bernoulli(lo, lam), kl_bernoulli(hi, lam))
        self.learner.update(-gains)
        self.cum += w
        return int(np.argmax(self.cum - cv))


@register_solver
class CombGame(GLRSolver):
    """The oracle-efficient game of Jourdan, Mutny, Kirschner & Krause (ALT 2021, CombGame)
    with GLR stopping: works for every decision class with ``argmax_excluding`` (matroids,
    paths, matchings, CP-SAT classes), Best-K and the best arm. See
    :class:`_CombGameExploration`; parameters as :class:`TrackAndStop`.

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> res = CombGame(delta=0.05).run(GaussianArms([1.0, 0.5, 0.0], rng=0), rng=1)
    >>> res.status, res.answer
    ('identified', 0)
    """

    name = "comb-game"
    families: ClassVar[tuple[str, ...]] = ("semi-bandit",)
    exploration_class = _CombGameExploration



# ============================================================================ oracle sampler
class _OracleExploration(GLRExploration):
    """D-tracking of fixed proportions (the true w*), no forced exploration."""

    def init_rule(self) -> None:
        w = np.asarray(self.solver.weights, dtype=np.float64)
        if w.shape != (self.N,) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
            raise param_error("weights", "OracleTracking", f"{self.N} nonnegative proportions (one per arm)",
                              self.solver.weights)
        self.w = w / w.sum()

    def next_arm(self, cv: NDArray[np.float64]) -> int:
        return int(np.argmax(float(cv.sum()) * self.w - cv))


@register_solver
class OracleTracking(GLRSolver):
    """The *oracle sampler* of the benchmarks: tracks given proportions (by default the
    optimal allocation w*(mu) of the environment's true means,
    :func:`~combex.identification.bandit_characteristic_time`) and stops with the same GLR
    rule as the other solvers. ``samples(algorithm) / samples(oracle)`` with the same
    threshold isolates the cost of the sampling rule.

    Parameters
    ----------
    weights : array of shape (n_arms,), optional
        The proportions to track. None: ``run`` takes w*(mu) of the simulated
        environment's truth (of the Gaussian model at the true noise scale, or of the
        Bernoulli model for Bernoulli arms), through :meth:`with_truth`; ``start`` on a
        problem needs them given.
    Other parameters as :class:`TrackAndStop`.
    """

    name = "oracle-tracking"
    exploration_class = _OracleExploration
    families: ClassVar[tuple[str, ...]] = ("semi-bandit",)

    def __init__(self, weights: Any = None, K: int = 1, *, delta: float = 0.05, epsilon: float = 0.0,
                 threshold: str = "valid", divergence: str = "auto", sigma: float | None = None,
                 decision_class: Any = None, batch_size: int = 1) -> None:
        super().__init__(K, delta=delta, epsilon=epsilon, threshold=threshold, divergence=divergence, sigma=sigma,
                         decision_class=decision_class, batch_size=batch_size)
        if weights is None:
            self.weights = None
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.ndim != 1 or w.size < 2 or not np.isfinite(w).all() or np.any(w < 0) or w.sum() <= 0:
                raise param_error("weights", "OracleTracking", "nonnegative proportions with a positive sum, or None",
                                  weights)
            self.weights = w

    def with_truth(self, env: Any) -> "OracleTracking":
        """See :meth:`Solver.with_truth`: a copy tracking w*(mu) of ``env``'s truth when
        ``weights`` is None."""
        if self.weights is not None:
            return self
        means = getattr(env, "means", None)
        if not callable(means):
            raise InvalidParameterError("OracleTracking needs the proportions: give weights=... or a simulated "
                                        "environment (with means()).")

        dc = self.decision_class if self.decision_class is not None else getattr(env, "decision_class", None)
        k = self.K if dc is None else 1
        noise = getattr(env, "noise", None)
        bern = getattr(noise, "kind", "gaussian") == "bernoulli"
        lb = bandit_characteristic_time(np.asarray(means(), dtype=np.float64), K=int(k), decision_class=dc,
                                        epsilon=float(self.epsilon), divergence="bernoulli" if bern else "gaussian",
                                        sigma=1.0 if bern else (true_noise_scale(env, 1, largest=True) or 1.0))
        params = self.get_params()
        params["weights"] = lb.allocation
        return type(self)(**params)

    def start(self, problem: Any, *, rng: Any = None) -> Exploration:
        if self.weights is None:
            raise InvalidParameterError("OracleTracking.start needs weights=... (the proportions to track); run() on "
                                        "a simulated environment takes w* of its truth.")
        return super().start(problem, rng=rng)
