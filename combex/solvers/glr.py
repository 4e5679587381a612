"""The GLR loop of the asymptotically optimal index-arm solvers: one exploration whose
stopping rule is "the GLR of the empirical answer against its closest alternative exceeds a
valid threshold", whose recommendation is the query's answer, and whose sampling rule is a
small subclass.

:class:`GLRSolver` holds the settings shared by every rule (``K``, ``delta``, ``epsilon``,
``threshold``, ``divergence``, ``sigma``, ``decision_class``, ``batch_size``);
:class:`GLRExploration` holds the data (counts ``T``, means ``mu``, variances), the query
(``self.query``, from :func:`combex.identification.arm_query`: the answer of best arm,
Best-K, matroid bases or any decision class, and the pairs of its alternatives), the reward
model (``self.model``, from :func:`combex.identification.make_divergence`: the divergence and
the pair GLR), the stopping rule (``self.stopping_rule``, an object of
:mod:`combex.solvers.stopping` built for the structure and the reward model), ask / tell,
batches, save / resume and the simulated fast path. A sampling rule gives :meth:`GLRExploration.next_arm` (and optionally
:meth:`~GLRExploration.prepare_batch`, :meth:`~GLRExploration.init_rule`); the built-in
rules (Track-and-Stop, Top-Two, Frank-Wolfe sampling, CombGame, oracle tracking) are in
:mod:`combex.solvers.optimal`, and the plug-ins guide shows a new rule in a dozen lines.

**Stopping (all):** the GLR of the empirical answer against its closest alternative exceeds
``beta(t, delta)`` (:mod:`combex.estimation._glr`): ``threshold="valid"`` (default:
Robbins' normal mixture on each arm with Ville's inequality, a union over the ``K - 1``
(best arm) or ``K (N - K)`` (Best-K) pair alternatives, each pair's threshold from its two
arms' counts (:meth:`PairStop.pair_thresholds
<combex.solvers.stopping.PairStop.pair_thresholds>`); the product over all arms for
decision classes, the GLR then taken at the effective counts ``N^2 / (N + 1)``), or
``threshold="valid-kk"`` (the Kaufmann & Koolen 2021 stitched mixtures on the same unions,
about 1.5x larger at the counts of typical runs, smaller only beyond millions of samples per
arm), or ``threshold="heuristic"`` (``log((1 + log t) / delta)``, the papers' experiments, no
guarantee). ``Result.info["threshold"]`` says which. ``epsilon >= 0``: the answer is
epsilon-good (ties end); for sets the gap is on the sum of means.

**Closest alternative:** best arm and Best-K with ``epsilon = 0``: the pairs (i in the
answer, j outside; exact); matroid bases: the exchange pairs (exact). Decision classes (and
Best-K with ``epsilon > 0``) of at most 4,096 members: listed once
(:func:`combex.identification.class_members`), the exact minimum over the members, each
alternative against its own threshold (``valid:sets-mixture``). Larger classes: the
Lagrangian relaxation of :func:`combex.estimation._glr.class_glr_lower_bound` through
``argmax_excluding``, a certified test that every member clears its own threshold
(``valid:sets-product-mixture``; the certificate's ``statistic`` is the smallest GLR less
the terms of its member's difference that it guarantees), so the stopping rule keeps its
guarantee with any oracle.

**Reward models:** ``divergence="gaussian"`` (known variance ``sigma^2``; for bounded
rewards ``sigma`` is the sub-Gaussian scale, e.g. 1/2 on [0, 1]) or ``"bernoulli"`` (KL; best
arm and Best-K pairs). Default: Bernoulli KL when the problem's noise kind is
``"bernoulli"`` and the structure is pairs, Gaussian otherwise. ``"unknown-variance"``
(Gaussian arms, each with its own unknown variance; Jourdan, Degenne & Kaufmann 2023): the
GLR of the unknown-variance Gaussian model, costs ``1/2 log(1 + (mu - lambda)^2 /
sigma_hat^2)`` with the empirical variances plugged into the sampling rules, and the
threshold of :mod:`combex.estimation._glr_unknown_variance` (best arm, Best-K and matroid
bases: pairs). Decision classes and Best-K with ``epsilon > 0``: per-arm variance upper
confidence bounds in the known-variance class GLR, against the all-arms normal mixture at
``delta / 2`` (``valid:all-arms-mixture-unknown-variance``, proved in that module); the
sampling rules use the Gaussian class costs with those variance bounds (the plug-in
variances starve arms whose first rewards happen to be close). Every arm is pulled twice first, and batches
ask single samples (an entry per reward: the variance needs the squares), so ``tell`` with
``count > 1`` is refused.

**Batches:** ``batch_size = b`` asks for ``b`` samples at once: the sampling rule is applied
``b`` times on the counts the batch will produce (the means are those of the last check),
and the stopping rule is checked once per batch.

**Save / resume:** ``Exploration.save`` / ``Solver.load`` keep the counts, sums, tracking
sums, AdaHedge state, Track-and-Stop's cached weights and the oracle's alternative pool; a
resumed run is bit-identical to the uninterrupted one.

**Fast path:** :meth:`run` on a simulated :class:`~combex.environments.GaussianArms`
(batch size 1, no callback) skips the per-sample objects of the ask / tell loop; it pulls
through the environment's public ``pull_many`` only (one call per sample, as ask / tell):
the same trajectory, result and final generator state as ask / tell (tested bit-identical).
Per-sample work: one-arm statistics update in scalars, the check's pair costs reused by
Top-Two, Track-and-Stop's allocation recomputed only when the answer changes or ``t`` grew
by 5% (best arm) / 3% (Best-K, matroid bases) / 10% (other classes). Top-Two on best arm
and Best-K with known Gaussian noise runs a compiled loop (numba, the ``mips`` extra:
:mod:`combex.solvers._glr_kernel`): it draws the rewards itself from the environment's
generator exactly as :meth:`GaussianArms.pull_many <combex.environments.GaussianArms.pull_many>`
would (used only when the environment's pull is that method), so the trajectory, the result
and both generators' final states stay those of ask / tell (tested bit-identical); about
0.4-1.4 us a sample at 20-100 arms (``python benchmarks/optimal.py --sections timing-top-two``).

**Lower bound:** :meth:`run` adds ``info["lower_bound_ratio"]`` = samples /
(T*(mu) log(1/delta)) from the environment's truth, for the solver's
:meth:`~GLRSolver.query` (:class:`combex.identification.Query`).

Linear problems (``problem.features`` set): ``top-two`` and ``fw-sampling`` dispatch to the
linear implementations (:data:`LINEAR_DISPATCH`, in :mod:`combex.solvers.optimal_linear`);
where one is missing a :class:`~combex.exceptions.InvalidParameterError` says so.

Why one file of about 1,000 lines: one exploration (counts, statistics, the unknown-variance
switch, save / resume, the fast path) that every sampling rule shares; splitting it by
structure would put the same update and check sequence in several places. The stopping
rule's four ways of finding the binding alternative are objects of their own
(:mod:`combex.solvers.stopping`). The theory it uses (the queries, the
reward models, T*, w*, thresholds) is in :mod:`combex.identification` and
:mod:`combex.estimation`.
"""

from __future__ import annotations

from abc import abstractmethod

import copy
import importlib
import math
import time
import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_probability, check_rng, param_error
from ..environments import GaussianArms
from ..estimation._glr import class_glr_lower_bound
from ..estimation._glr_unknown_variance import variance_floor
from ..estimation._variance import MIN_TESTED_DOF, scale_check_dict
from ..exceptions import InvalidParameterError, NoiseScaleWarning, StateError
from ..identification import Query, UnknownVarianceDivergence, arm_query, make_divergence
from ._base import Batch, Exploration, Result, Solver
from ._bisect import ProgressTrace, samples_left, stopping_level
from .stopping import GLRStoppingRule, glr_stopping_rule
from ._checks import warn_if_tied

__all__ = ["GLRSolver", "GLRExploration", "LINEAR_DISPATCH"]

#: Linear problems: registry name -> "module:Class" of the linear exploration.
LINEAR_DISPATCH = {"top-two": "combex.solvers.optimal_linear:LinearTopTwo",
                   "fw-sampling": "combex.solvers.optimal_linear:LinearFWSampling"}

_DIVERGENCES = ("auto", "gaussian", "bernoulli", "unknown-variance")

_UV = "unknown-variance"


# ============================================================================ settings
class GLRSolver(Solver):
    """Settings shared by the GLR solvers of index arms (see the module docstring); a
    subclass names its sampling rule, a :class:`GLRExploration` subclass, in
    ``exploration_class``, and its registry ``name``."""

    arm_type: ClassVar[str] = "index"
    exploration_class: ClassVar[type[Exploration]]
    eager_tells: ClassVar[bool] = True

    def __init__(
        self,
        K: int = 1,
        *,
        delta: float = 0.05,
        epsilon: float = 0.0,
        threshold: str = "valid",
        divergence: str = "auto",
        sigma: float | None = None,
        decision_class: Any = None,
        batch_size: int = 1,
    ) -> None:
        owner = type(self).__name__
        self.K = check_int(K, "K", owner=owner, low=1)
        self.delta = check_probability(delta, "delta", owner=owner)
        self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)
        self.threshold = check_choice(threshold, "threshold", ("valid", "valid-kk", "heuristic"), owner=owner)
        self.divergence = check_choice(divergence, "divergence", _DIVERGENCES, owner=owner)
        self.sigma = None if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
        if decision_class is not None and not callable(getattr(decision_class, "argmax", None)):
            raise param_error("decision_class", owner, "a decision class with an argmax(weights) oracle", decision_class)
        self.decision_class = decision_class
        self.batch_size = check_int(batch_size, "batch_size", owner=owner, low=1)

    @property
    def tolerance(self) -> float:
        return float(self.epsilon)

    def _linear_delegate(self, problem: Any) -> Solver | None:
        """The linear solver this one stands for on a linear problem (one with features, or a
        full-bandit problem whose team scores are linear in the member indicators) without a
        decision class of its own, or None. Same delta, epsilon and batch size; the valid threshold
        maps to the linear mixture threshold."""
        prob = getattr(problem, "problem", problem)
        if self.decision_class is not None:
            return None
        full_bandit = getattr(prob, "arm_type", "index") == "mask"  # team scores: linear in the indicators
        if getattr(prob, "features", None) is None and not full_bandit:
            return None
        target = LINEAR_DISPATCH.get(self.name)
        if target is None and full_bandit:
            return None  # start() refuses it with the full-bandit advice
        if target is None:
            raise InvalidParameterError(
                f"{type(self).__name__} ({self.name!r}) handles best-arm, Best-K and decision-class "
                f"problems with semi-bandit feedback; this is a linear problem (it has features): use "
                f"'lingame', 'rage', 'top-two', 'fw-sampling' or 'lingape'."
            )

        if self.divergence == "bernoulli":
            raise InvalidParameterError(
                f"The 'divergence' parameter of {type(self).__name__} must be 'auto', 'gaussian' or "
                f"'unknown-variance' on a {'full-bandit' if full_bandit else 'linear'} problem (its GLR is the "
                "Gaussian one of the linear model: a team's or an arm's score is a sum, not a coin). Got 'bernoulli'."
            )
        if self.threshold == "valid-kk":
            raise InvalidParameterError(
                f"The 'threshold' parameter of {type(self).__name__} must be 'valid' or 'heuristic' on a "
                f"{'full-bandit' if full_bandit else 'linear'} problem (the Kaufmann & Koolen forms are per-arm; the "
                "linear GLR uses the d-dimensional mixture). Got 'valid-kk'."
            )
        if getattr(self, "beta", "ids") != "ids":
            raise InvalidParameterError(
                f"The 'beta' parameter of {type(self).__name__} applies to best-arm, Best-K and decision-class "
                f"problems; on a {'full-bandit' if full_bandit else 'linear'} problem the linear Top-Two rule samples "
                f"the arm that most increases the challenger's cost (no leader coin). Leave beta='ids'. Got "
                f"{self.beta!r}."
            )
        if self.K != 1:
            raise InvalidParameterError(
                f"The 'K' parameter of {type(self).__name__} must be 1 on a {'full-bandit' if full_bandit else 'linear'} "
                f"problem (the answer's structure is the problem's: "
                f"{'its decision class' if full_bandit else 'the best feature row'}). Got {self.K} instead."
            )
        mod, cls = target.split(":")
        linear_cls = getattr(importlib.import_module(mod), cls)
        return linear_cls(
            delta=self.delta,
            epsilon=self.epsilon,
            threshold="heuristic" if self.threshold == "heuristic" else "valid",  # valid-kk: no linear form
            batch_size=None if self.batch_size == 1 else self.batch_size,
            divergence=self.divergence,
            sigma=self.sigma,
        )

    def resume(self, state: Any, problem: Any) -> Exploration:
        lin = self._linear_delegate(problem)
        return lin.resume(state, problem) if lin is not None else super().resume(state, problem)

    def start(self, problem: Any, *, rng: Any = None) -> Exploration:
        prob = getattr(problem, "problem", problem)
        lin = self._linear_delegate(problem)
        if lin is not None:
            return lin.start(problem, rng=rng)
        if getattr(prob, "arm_type", "index") != "index":
            raise InvalidParameterError(
                f"{type(self).__name__} needs semi-bandit feedback (index arms); the problem has "
                f"arm_type={prob.arm_type!r} (full-bandit problems: use 'top-two', 'fw-sampling', 'icb' or 'saqm')."
            )
        return self.exploration_class(self, problem, rng)

    def query(self, problem: Any) -> Query:
        """The ``K`` best arms or the best member of the decision class (the linear
        solver's query on a linear or team problem)."""
        lin = self._linear_delegate(problem)
        if lin is not None:
            return lin.query(problem)
        dc = self.decision_class if self.decision_class is not None else getattr(problem, "decision_class", None)
        return Query("arms", self.delta, float(self.epsilon), K=int(self.K) if dc is None else 1, decision_class=dc)

    def _simulate(self, env: Any, *, rng: Any, budget: int | None, trace: bool, callback: Any = None) -> Result:
        lin = self._linear_delegate(env)
        if lin is not None:
            return lin._simulate(env, rng=rng, budget=budget, trace=trace, callback=callback)
        if callback is None and self.batch_size == 1 and self.divergence != _UV and _fast_simulator(env):
            return self._fast_run(env, rng=rng, budget=budget, trace=trace)
        return Solver._simulate(self, env, rng=rng, budget=budget, trace=trace, callback=callback)

    def _fast_run(self, env: Any, *, rng: Any, budget: int | None, trace: bool) -> Result:
        """The ask / tell loop of :meth:`Solver.run` without its per-sample objects, on a
        simulated :class:`~combex.environments.GaussianArms` with batch size 1: the same
        pulls (one public ``pull_many`` call per sample, as ask / tell makes), so the same
        rewards, stop, result and final generator state as ask / tell
        (:meth:`GLRExploration._simulate`; tested bit-identical)."""
        warn_if_tied(self, env)
        t0 = time.perf_counter()
        exp = self.start(env, rng=rng)
        exp.record_trace = trace
        exp._simulate(env, budget)
        return exp.result(wall_seconds=time.perf_counter() - t0)


def _fast_simulator(env: Any) -> bool:
    """Whether :meth:`GLRSolver._simulate` may run ``env``: a
    :class:`~combex.environments.GaussianArms` (finite rewards, pulled at once) with index
    arms and no features. Only its public ``pull_many`` is used."""
    return (isinstance(env, GaussianArms) and getattr(env, "arm_type", "index") == "index"
            and getattr(env, "features", None) is None)


# ============================================================================ exploration
class GLRExploration(Exploration):
    """The GLR loop of the index-arm solvers: counts ``T``, means ``mu``, the answer of the
    query (:attr:`~combex.solvers.Exploration.answer`), the stopping rule "GLR against the
    closest alternative >= threshold" for every structure and reward model, ask / tell,
    batches and save / resume. A *sampling rule* is a subclass that gives

    * :meth:`next_arm` ``(counts)``: the arm of the next sample, from the counts including
      the arms already chosen in the current batch (required);
    * :meth:`prepare_batch`: work done once before a batch's choices (optional);
    * :meth:`init_rule`: the rule's own state, made at the start and before a saved state
      is put back (optional; arrays listed in ``_saved_arrays`` are saved and restored).

    :meth:`alternative_costs` gives a rule the query in one form for every structure (the
    GLR of each alternative of the current answer at given counts, and the arms where it
    differs); :meth:`pair_costs` / :meth:`class_costs` are the structure-specific forms the
    built-in rules use. Pair it with a :class:`GLRSolver` subclass naming it in
    ``exploration_class`` (the plug-ins guide shows a rule in a dozen lines).

    The stopping rule (:attr:`stopping_rule`: :class:`~combex.solvers.stopping.PairStop`,
    :class:`~combex.solvers.stopping.PairStopUnknownVariance`,
    :class:`~combex.solvers.stopping.MemberStop` or
    :class:`~combex.solvers.stopping.CertificateStop`, from
    :func:`~combex.solvers.stopping.glr_stopping_rule`) owns its threshold object
    (:class:`~combex.identification.GLRThreshold` or its unknown-variance forms), also
    :attr:`stopping_threshold`; the rule at another level is another rule object on the same
    data (:meth:`would_stop`); ``self.solver`` holds the solver's settings (Top-Two's leader
    probability ``beta`` among them).
    """

    _own_noise_check: ClassVar[bool] = True

    def __init__(self, solver: GLRSolver, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._configure(solver)

    def _configure(self, s: GLRSolver) -> None:
        """Structure, threshold and empty statistics from the solver and the problem (also
        run on resume, before the saved statistics are put back)."""
        self.N = check_int(self.problem.n_arms, "n_arms", owner=type(s).__name__, low=2)
        dc = s.decision_class if s.decision_class is not None else getattr(self.problem, "decision_class", None)
        noise = getattr(self.problem, "noise", None)
        kind = getattr(noise, "kind", "gaussian")
        self.eps = float(s.epsilon)
        # the answers and their alternatives: best arm, Best-K, matroid bases by swaps, a class
        self.query = arm_query(self.N, K=s.K, decision_class=dc, epsilon=self.eps, owner=type(s).__name__)
        self.structure, self.K, self.dc = self.query.structure, self.query.K, self.query.decision_class
        div = s.divergence
        declared = s.sigma is not None or kind == "bernoulli" or getattr(noise, "sigma", 1.0) is not None
        if div == "auto":
            if not declared:  # nobody declared the noise level: estimate it
                div = _UV
            else:
                div = "bernoulli" if (kind == "bernoulli" and self.structure != "class") else "gaussian"
        if div == _UV and kind in ("bernoulli", "rademacher", "pm1"):
            raise InvalidParameterError(
                f"The 'divergence' parameter of {type(s).__name__}: 'unknown-variance' estimates the variance of "
                f"Gaussian rewards (its threshold bounds chi-square variance estimates), and the problem's rewards "
                f"are {kind!r} (two values: a run of equal rewards has variance 0 without being sure of anything). "
                f"Use divergence='bernoulli' or 'gaussian' with the known scale. Got 'unknown-variance'."
            )
        if div == "bernoulli" and self.structure == "class":
            raise InvalidParameterError(
                f"The 'divergence' parameter of {type(s).__name__} must be 'gaussian' for a decision class "
                f"(or Best-K with epsilon > 0): the class GLR uses the (sub-)Gaussian statistic. Got 'bernoulli'."
            )
        self.divergence = div
        self._uv = div == _UV
        self._min_pulls = 2 if self._uv else 1
        if self._uv:  # per-arm variances are estimated (sums of squares); sigma is unused
            self.sigma = math.nan
        elif s.sigma is not None:
            self.sigma = float(s.sigma)
        elif kind == "bernoulli":
            self.sigma = 0.5
        else:
            sig = getattr(noise, "sigma", None)
            if sig is None:
                raise InvalidParameterError(
                    f"The problem has no noise model with a sigma; give the 'sigma' parameter of {type(s).__name__}."
                )
            self.sigma = float(sig)
        # the reward model: the divergence of one arm and the GLR of one pair
        self.model = make_divergence(div, sigma=self.sigma if div == "gaussian" else None)
        # a small class lists its members: the class GLR is then an exact minimum over them
        self._members = self.query.members if self.structure == "class" else None
        #: the stopping rule (:mod:`combex.solvers.stopping`): the query's GLR against its threshold
        self.stopping_rule: GLRStoppingRule = glr_stopping_rule(self, s.delta)
        self.sq = np.zeros(self.N)  # sums of squared rewards (kept for saved states)
        # per-arm sums of squared deviations (Welford, centred: stable for large rewards) and the
        # number of told entries: the variances, and the test of a declared scale
        self.m2 = np.zeros(self.N)
        self._n_obs = 0
        self._single = True  # every told entry had count 1 (individual rewards)
        self._noise_record: dict[str, Any] | None = None
        self._noise_n = 0
        # variances of the class sampling rules (unknown variances): the upper confidence
        # bounds U_a of the stopping statistic. The plug-in variances starve arms: an arm
        # whose first two rewards are close gets a tiny variance, is never sampled again, and
        # its U_a (huge at N_a = 2) keeps the class GLR near 0 forever.
        self._svar = np.ones(self.N)
        self._uv_cache: Any = None
        self.var = np.ones(self.N)
        self.sums = np.zeros(self.N)
        self.T = np.zeros(self.N, dtype=np.int64)
        self.mu = np.zeros(self.N)
        self._h = np.zeros(self.N)  # per-arm terms of the pair thresholds (_arm_term of N_a)
        self._zc: Any = None  # the pair costs of the last check (reused by the sampling rules)
        self._ready = False
        self._stat = -math.inf
        self._beta_t = math.inf
        self._answer: Any = None
        self._closest: Any = None
        self._pool: list[NDArray[np.bool_]] = []
        self._progress_trace = ProgressTrace()  # statistic / threshold at the checks (evaluations_left)
        self.init_rule()

    @property
    def stopping_threshold(self) -> Any:
        """The threshold object of the stopping rule (:attr:`stopping_rule`'s)."""
        return self.stopping_rule.threshold

    @stopping_threshold.setter
    def stopping_threshold(self, value: Any) -> None:
        self.stopping_rule.threshold = value

    def init_rule(self) -> None:
        """The sampling rule's own state (subclass hook; also run on resume, before the saved
        state is put back)."""

    # ------------------------------------------------------------------ save / resume
    #: Per-subclass mutable arrays saved as they are (float64), besides the shared statistics.
    _saved_arrays: ClassVar[tuple[str, ...]] = ()

    def _extra_state(self) -> dict[str, Any]:
        def enc(a: Any) -> Any:  # an answer / alternative: None, an index or a bool mask
            if a is None or isinstance(a, (int, np.integer)):
                return None if a is None else int(a)
            if isinstance(a, tuple):
                return [int(v) for v in a]
            return np.asarray(a, dtype=np.int8)

        pk = getattr(self, "_pool_key", None)
        st: dict[str, Any] = {
            "T": self.T.copy(), "sums": self.sums.copy(), "sq": self.sq.copy(), "m2": self.m2.copy(),
            "noise": {"n_obs": int(self._n_obs), "single": bool(self._single), "tested_at": int(self._noise_n),
                      "uv": bool(self._uv), "check": None if self._noise_record is None else dict(self._noise_record)},
            "ready": bool(self._ready),
            "stat": float(self._stat), "beta_t": float(self._beta_t),
            "answer": enc(self._answer), "closest": enc(self._closest),
            "margin": float(getattr(self, "_margin", math.nan)),
            "pool": [np.asarray(m, dtype=np.int8) for m in self._pool],
            "pool_key": None if pk is None else np.frombuffer(pk, dtype=bool).astype(np.int8),
            "pool_round": int(getattr(self, "_pool_round", -10 ** 9)),
            "progress_trace": self._progress_trace.state(),
            "arrays": {k: np.asarray(getattr(self, k), dtype=np.float64).copy() for k in self._saved_arrays},
            "scalars": self._extra_scalars(),
        }
        return st

    def _extra_scalars(self) -> dict[str, float]:
        """Subclass hook: mutable float scalars."""
        return {}

    def _load_extra_state(self, st: dict[str, Any]) -> None:
        self._configure(self.solver)
        n = self.N

        def arr(v: Any, name: str, dtype: Any) -> Any:
            a = np.asarray(v, dtype=dtype)
            if a.shape != (n,):
                raise StateError(f"The field 'extra.{name}' of the saved state must have shape ({n},). "
                                 f"Got {a.shape} instead.")
            return a.copy()

        def dec(v: Any, name: str) -> Any:
            if v is None or isinstance(v, bool):
                return None
            if isinstance(v, int):
                return v
            if isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) for x in v):
                return (v[0], v[1])
            return arr(v, name, np.int8).astype(bool)

        self.T = arr(st["T"], "T", np.int64)
        self.sums = arr(st["sums"], "sums", np.float64)
        self.sq = arr(st.get("sq", np.zeros(n)), "sq", np.float64)
        self.m2 = arr(st.get("m2", np.zeros(n)), "m2", np.float64)
        ns = st.get("noise")
        if ns is not None:
            self._n_obs, self._single, self._noise_n = int(ns["n_obs"]), bool(ns["single"]), int(ns["tested_at"])
            self._noise_record = None if ns["check"] is None else dict(ns["check"])
            if bool(ns["uv"]) and not self._uv:
                self._switch_to_unknown_variance()
        self._refresh_terms(range(n))
        # the means exactly as _update computes them (same operations, so bit-identical)
        if np.any(self.T == 0):
            self.mu = np.where(self.T > 0, self.sums / np.maximum(self.T, 1), 0.0)
        else:
            self.mu = self.sums / self.T
        if self._uv:
            self._update_variances()
        self._ready = bool(st["ready"])
        self._stat = float(st["stat"])
        self._beta_t = float(st["beta_t"])
        self._answer = dec(st["answer"], "answer")
        self._closest = dec(st["closest"], "closest")
        if not math.isnan(float(st["margin"])):
            self._margin = float(st["margin"])
        self._pool = [arr(m, "pool", np.int8).astype(bool) for m in st["pool"]]
        if st["pool_key"] is not None:
            self._pool_key = arr(st["pool_key"], "pool_key", np.int8).astype(bool).tobytes()
        self._pool_round = int(st["pool_round"])
        self._progress_trace.load(st.get("progress_trace"))
        for k in self._saved_arrays:
            setattr(self, k, arr(st["arrays"][k], k, np.float64))
        for k, v in st["scalars"].items():
            if k not in self._extra_scalars():
                raise StateError(f"The field 'extra.scalars' of the saved state has an unknown entry {k!r}.")
            setattr(self, k, float(v))

    # ------------------------------------------------------------------ structure
    def _compute_answer(self) -> Any:
        return self.query.answer(self.mu)

    def _pairs(self, ans: Any) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """(I, J): i in the answer, j outside (flattened; cached for the last answer)."""
        key = ans if self.structure == "bai" else ans.tobytes()
        cached = getattr(self, "_pairs_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        I, J = self.query.pairs(ans)
        self._pairs_cache = (key, I, J)
        return I, J

    def pair_costs(self, w: NDArray[np.float64], ans: Any, I: Any = None, J: Any = None) -> tuple[Any, Any, Any, Any]:
        """Per-pair GLR ``Z`` with weights ``w`` (counts or proportions) and the alternative's x."""
        if I is None:
            I, J = self._pairs(ans)
        if self._uv:  # cached: the stopping check and the next selection often ask the same
            key = w.tobytes()
            c = self._uv_cache
            if c is not None and c[0] == key and c[1] is I:
                return c[2], c[3], I, J
            z, x = self.model.pair(self.mu[I], self.mu[J], w[I], w[J], self.eps, self.var[I], self.var[J])
            self._uv_cache = (key, I, z, x)
            return z, x, I, J
        z, x = self.model.pair_at(self.mu, w, I, J, self.eps)
        return z, x, I, J

    def alternative_costs(self, w: Any) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """The GLR of each alternative of the current answer at the counts (or proportions)
        ``w``, and the arms each one involves: ``(F, D)`` with ``F`` of shape ``(m,)`` and
        ``D`` an ``(m, N)`` bool array. Best arm, Best-K and matroid bases: the pairs (i in
        the answer, j out), ``D`` their two arms; decision classes: the members other than
        the answer (or the oracle's pool), ``D`` their difference with it. The closest
        alternative is ``argmin F``."""
        w = np.asarray(w, dtype=np.float64)
        ans = self._answer if self._answer is not None else self._compute_answer()
        if self.structure == "class":
            alts = self._class_alternatives(ans, self.T.astype(float), self._beta_t)
            F, D, _ = self.class_costs(w, ans, alts)
            return np.asarray(F, dtype=np.float64), np.asarray(D, dtype=bool)
        z, _, I, J = self.pair_costs(w, ans)
        D = np.zeros((len(I), self.N), dtype=bool)
        rows = np.arange(len(I))
        D[rows, I] = True
        D[rows, J] = True
        return np.asarray(z, dtype=np.float64), D

    def pair_gradients(self, x: Any, I: Any, J: Any) -> tuple[Any, Any]:
        """d Z / d w_i and d Z / d w_j (envelope theorem): d(mu_i, x), d(mu_j, x + eps)."""
        return self.model.gradients(self.mu[I], self.mu[J], x, self.eps, self.var[I], self.var[J])

    # class alternatives (Gaussian): the costs of ClassQuery, at the loop's reward model
    def class_costs(self, w: NDArray[np.float64], ans: NDArray[np.bool_], alts: Any,
                    var: Any = None) -> tuple[Any, Any, Any]:
        """:meth:`ClassQuery.costs <combex.identification.ClassQuery.costs>` at the empirical
        means: the Gaussian GLR against each alternative (a list of masks or an ``(m, n)``
        bool array) with the loop's sigma; unknown variances: per-arm variances ``var``
        (default the variance UCBs ``_svar``)."""
        if self._uv:
            return self.query.costs(self.mu, w, ans, alts, self.eps, variances=self._svar if var is None else var)
        return self.query.costs(self.mu, w, ans, alts, self.eps, sigma=self.sigma)

    def class_gradient(self, w: NDArray[np.float64], F: Any, D: Any, V: Any, a: int | None = None) -> NDArray[np.float64]:
        """:meth:`ClassQuery.cost_gradient <combex.identification.ClassQuery.cost_gradient>` of
        :meth:`class_costs`' output (row ``a``, or every row), with the same variances."""
        return self.query.cost_gradient(w, F, D, V, a, variances=self._svar if self._uv else None)

    def _class_alternatives(self, ans: NDArray[np.bool_], w: NDArray[np.float64], beta: float) -> list[NDArray[np.bool_]]:
        """The pool of alternatives (members found by the oracle), refreshed through the
        Lagrangian search when the answer changes or after max(8, rounds/20) checks; every
        other member when the class lists its members."""
        key = ans.tobytes()
        if self._members is not None:
            return self.query.other_members(ans)
        known = [m for m in self._pool if not np.array_equal(m, ans)]
        last = getattr(self, "_pool_round", -10 ** 9)
        if known and getattr(self, "_pool_key", None) == key and self.rounds - last < max(8, self.rounds // 20):
            return known
        self._pool_key = key
        self._pool_round = self.rounds
        res = class_glr_lower_bound(self.dc, ans, self.mu, w, epsilon=self.eps, sigma=self.sigma, beta=beta, grid=6,
                                    variances=self._svar if self._uv else None)
        pool = [m for m in self._pool if not np.array_equal(m, ans)]
        keys = {m.tobytes() for m in pool}
        for m in res["candidates"]:
            if m.tobytes() not in keys:
                pool.append(m)
                keys.add(m.tobytes())
        self._pool = pool[-40:]
        return [m for m in self._pool if not np.array_equal(m, ans)] or res["candidates"]

    # ------------------------------------------------------------------ stopping
    def _arm_term(self, n: int) -> float:
        """The threshold's term of an arm with ``n`` samples
        (:meth:`GLRThreshold.arm_term <combex.identification.GLRThreshold.arm_term>`; 0 for the
        unknown-variance thresholds, whose pair thresholds take the counts)."""
        term = getattr(self.stopping_threshold, "arm_term", None)
        return term(n) if term is not None else 0.0

    def _refresh_terms(self, arms: Any) -> None:
        for a in arms:
            self._h[a] = self._arm_term(int(self.T[a]))

    def _check_stop(self) -> None:
        """The stopping rule (:attr:`stopping_rule`): the GLR of the answer's closest
        alternative against its threshold."""
        ans = self._compute_answer()
        self._answer = ans
        binding = self.stopping_rule.check(self, ans, int(self.T.sum()))
        if binding is None:  # the certificate's cheap necessary condition failed
            return
        self._close_check(*binding)

    def _close_check(self, beta: float, stop: bool) -> None:
        """The end of a check whose binding alternative is set (``_stat``, ``_closest``):
        the progress trace, the run's trace, the stop."""
        self._progress_trace.record(self.samples, self._stat, beta)
        if self.record_trace:
            self.record(glr=self._stat, threshold=beta)
        if stop and not self._untested_scale():
            self.stop("identified", f"the GLR against the closest alternative exceeds the threshold ({self.stopping_threshold.name})")

    # ------------------------------------------------------------------ ask / tell
    def _next_batch(self) -> Batch:
        if not self._ready:
            if self._uv:  # two single samples of every arm (a variance needs two), missing ones only
                need = np.maximum(self._min_pulls - self.T, 0)
                arms = np.repeat(np.arange(self.N, dtype=np.intp), need)
                return Batch(arms, np.ones(arms.shape[0], dtype=np.int64))
            return Batch(np.arange(self.N, dtype=np.intp), np.ones(self.N, dtype=np.int64))
        b = self.solver.batch_size
        if b == 1:
            a = self._select_one()
            return Batch(np.array([a], dtype=np.intp), np.array([1], dtype=np.int64))
        cv = self.T.astype(np.float64)
        self.prepare_batch()
        add = np.zeros(self.N, dtype=np.int64)
        for k in range(b):
            self._fresh = k == 0
            a = int(self.next_arm(cv))
            self._fresh = False
            cv[a] += 1.0
            add[a] += 1
        arms = np.flatnonzero(add)
        if self._uv:  # one entry per sample: the squares of the single rewards are needed
            arms = np.repeat(arms, add[arms])
            return Batch(arms.astype(np.intp), np.ones(arms.shape[0], dtype=np.int64))
        return Batch(arms.astype(np.intp), add[arms])

    #: The kept values of a compiled sampling rule (None: made again at its next use);
    #: dropped whenever the statistics change outside it.
    _steps: Any = None

    #: True while ``next_arm`` is called on the counts of the last check (``cv == T``):
    #: the pair costs of that check may be reused (:meth:`pair_costs_now`).
    _fresh: bool = False

    def _select_one(self) -> int:
        """One arm from the current counts (batch size 1; ask / tell and the fast path)."""
        cv = self.T.astype(np.float64)
        self.prepare_batch()
        self._fresh = True
        try:
            return int(self.next_arm(cv))
        finally:
            self._fresh = False

    def _simulate(self, env: Any, budget: int | None) -> None:
        """Run to the end against a simulated GaussianArms (see
        :meth:`GLRSolver._simulate`): the first batch (every arm once) through
        ask / tell, then one arm per step, pulled through the environment's public
        ``pull_many`` with cached one-element arrays (the same call the ask / tell loop
        makes for a one-arm batch, so the same rewards), without the Batch objects."""
        single = [np.array([a], dtype=np.intp) for a in range(self.N)]
        one = np.ones(1, dtype=np.int64)
        pull = env.pull_many
        while not self.done:
            if self._ready and not self._uv and self._advance(env, budget):
                pass  # samples through a compiled loop
            elif self._ready and not self._uv:
                a = self._select_one()
                r = float(pull(single[a], one)[0])
                self.samples += 1
                self._update_one(a, 1, r)
            else:  # the first pulls, and the unknown-variance rule (after a rejected scale): ask / tell
                batch = self.ask()
                if budget is not None:
                    batch = batch.truncated(budget - self.samples)
                self.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
            if budget is not None and self.samples >= budget and not self.done:
                self.stop("budget_exhausted", f"budget of {budget} samples exhausted")

    def _advance(self, env: Any, budget: int | None) -> bool:
        """Samples of :meth:`_simulate` through a compiled loop, from a step boundary; False
        when none ran (subclass hook)."""
        return False

    def pair_costs_now(self, cv: NDArray[np.float64], ans: Any) -> tuple[Any, Any, Any, Any]:
        """:meth:`pair_costs` at the counts ``cv``, reusing the last check's values when
        ``cv`` are its counts (the same numbers: the same call on the same arrays)."""
        if self._fresh and self._zc is not None:
            return self._zc
        return self.pair_costs(cv, ans)

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = np.asarray(batch.arms, dtype=np.intp)
        c = np.asarray(batch.counts, dtype=np.int64)
        if arms.shape[0] == 1 and self._ready and not self._uv:
            self._update_one(int(arms[0]), int(c[0]), float(reward_sums[0]))
            return
        self._zc = None
        self._steps = None
        if self._uv:
            if np.any(c > 1):
                raise InvalidParameterError(
                    f"{type(self.solver).__name__} with divergence='unknown-variance' needs every reward on its own "
                    f"(count 1: the variance is estimated from the squares). Got counts {c.tolist()}."
                )
            np.add.at(self.sq, arms, np.where(c > 0, reward_sums, 0.0) ** 2)
        for a, ca, r in zip(arms.tolist(), c.tolist(), np.asarray(reward_sums, dtype=np.float64).tolist()):
            self._fold_deviation(a, ca, r)  # before the arm's sum and count change (entries in order)
            self.sums[a] += r
            self.T[a] += ca
        self._refresh_terms(arms.tolist())
        if np.any(self.T < self._min_pulls):
            self.mu = np.where(self.T > 0, self.sums / np.maximum(self.T, 1), 0.0)
            return
        self.mu = self.sums / self.T
        if self._uv:
            self._update_variances()
        self._ready = True
        self.rounds += 1
        if self._test_declared_scale():
            return
        self._check_stop()

    def _update_one(self, a: int, c: int, r: float) -> None:
        """``_update`` for one arm (the statistics of the other arms do not change): the
        same values as the vectorized update, in scalars."""
        self._zc = None
        self._steps = None
        self._fold_deviation(a, c, r)
        self.sums[a] += r
        self.T[a] += c
        self._h[a] = self._arm_term(int(self.T[a]))
        self.mu[a] = self.sums[a] / self.T[a]
        self.rounds += 1
        if self._test_declared_scale():
            return
        self._check_stop()

    def _untested_scale(self) -> bool:
        """A declared Gaussian scale not yet checked by the data (fewer than
        :data:`MIN_TESTED_DOF` degrees of freedom): no stop yet, so a misdeclared scale is
        caught before it can end the run."""
        return (self.divergence == "gaussian" and not self._uv
                and self._n_obs - int(np.count_nonzero(self.T)) < MIN_TESTED_DOF)

    def _fold_deviation(self, a: int, c: int, r: float) -> None:
        """Welford's update of arm ``a``'s sum of squared deviations (normalized observations
        ``S / sqrt(c)``: one entry of ``c`` rewards with sum ``r``), before its sum and count
        change: ``(r - c mu)^2 / c * N / (N + c)``, centred, so rewards near 1e6 keep small
        variances exact."""
        if c <= 0:
            return
        n = int(self.T[a])
        if n > 0:
            dev = r - c * (self.sums[a] / n)
            self.m2[a] += dev * dev / c * n / (n + c)
        self._n_obs += 1
        if c > 1:
            self._single = False

    def _test_declared_scale(self) -> bool:
        """The valid test of a declared Gaussian scale (:mod:`combex.estimation._variance`),
        on a geometric schedule of the told entries (the test holds at every time); on
        rejection: a :class:`~combex.exceptions.NoiseScaleWarning`, and the unknown-variance
        rule from then on when every told entry was a single reward (else the guarantee is
        reported void). True when the rule changed (the caller checks again next time)."""
        if self.divergence != "gaussian" or self._uv or (self._noise_record is not None and self._noise_record["rejected"]):
            return False
        n = self._n_obs
        dof = n - int(np.count_nonzero(self.T))
        if dof < 1 or (n < 1.02 * self._noise_n and n - self._noise_n < 50 and dof > MIN_TESTED_DOF):
            return False
        chk = self._record_scale_test(n, float(self.m2.sum()), int(self.samples))
        if not chk["rejected"]:
            return False

        switch = self._single
        warnings.warn(
            f"{type(self.solver).__name__}: the observations contradict the declared noise scale {chk['declared']:.4g} "
            f"(the noise scale is at least {chk['observed_at_least']:.4g} with confidence {1 - chk['alpha']:.2f}; "
            f"estimate {chk['estimate']:.4g}, after {chk['at_sample']} samples). "
            + ("The run continues with the unknown-variance stopping rule; declare the scale correctly or leave it "
               "unknown." if switch else "Its answer will not be (epsilon, delta)-correct: the rewards were told in "
               "sums, so the variance cannot be estimated; declare the scale correctly."),
            NoiseScaleWarning, stacklevel=5)
        if switch:
            self._switch_to_unknown_variance()
        return switch

    def _record_scale_test(self, n: int, rss: float, at: int, later: bool = False) -> dict[str, Any] | None:
        """The record of a test of the declared scale on ``n`` told entries with residual sum
        of squares ``rss``, after ``at`` samples; ``later``: made when first read (a test the
        compiled loop ran and that could not reject: about 11 us saved each time)."""
        self._noise_n = n
        if later:
            self._noise_record = None
            self.__dict__["_noise_later"] = (rss, n, self.sigma, at)
            return None
        self._noise_record = chk = _scale_record(rss, n, self.sigma, at, self.N)
        return chk

    @property
    def _noise_record(self) -> dict[str, Any] | None:
        """The record of the last test of the declared scale (None before the first)."""
        d = self.__dict__
        later = d.pop("_noise_later", None)
        if later is not None:
            d["_noise_rec"] = _scale_record(*later, self.N)
        return d.get("_noise_rec")

    @_noise_record.setter
    def _noise_record(self, value: dict[str, Any] | None) -> None:
        self.__dict__.pop("_noise_later", None)
        self.__dict__["_noise_rec"] = value

    def _switch_to_unknown_variance(self) -> None:
        """From now on: the unknown-variance model and its threshold (full delta: that rule is
        valid at every time by itself), every arm pulled at least twice."""
        self.divergence = _UV
        self._uv = True
        self._min_pulls = 2
        self.sigma = math.nan
        self.model = UnknownVarianceDivergence()
        self.stopping_rule = glr_stopping_rule(self, self.solver.delta)
        self._refresh_terms(range(self.N))
        self._update_variances()
        self._ready = bool(np.all(self.T >= 2))

    def _update_variances(self) -> None:
        """Maximum-likelihood (biased) empirical variances from the centred sums of squared
        deviations, floored (:func:`variance_floor`)."""
        self._uv_cache = None
        n = np.maximum(self.T, 1)
        self.var = np.maximum(self.m2 / n, variance_floor(self.mu))
        if self.structure == "class":  # the class sampling rules use the variance UCBs (see _svar)
            self._svar = self.stopping_threshold.variance_upper(self.T, self.var)

    def prepare_batch(self) -> None:
        """Once per batch (subclass hook)."""

    @abstractmethod
    def next_arm(self, cv: NDArray[np.float64]) -> int:
        """The arm of the next sample (the sampling rule), from the counts ``cv`` including
        the arms already chosen in the current batch."""

    def _forced(self, cv: NDArray[np.float64]) -> int | None:
        """Forced exploration of Garivier & Kaufmann (2016): an arm with N_a < sqrt(t) - K/2."""
        t = float(cv.sum())
        under = cv < math.sqrt(t) - self.N / 2.0
        if np.any(under):
            return int(np.argmin(np.where(under, cv, np.inf)))
        return None

    # ------------------------------------------------------------------ results
    @property
    def recommendation(self) -> Any:
        ans = self._compute_answer() if self._answer is None or not self.done else self._answer
        if isinstance(ans, np.ndarray):
            return ans.copy()
        return ans

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T

    def stop(self, status: str, message: str = "") -> None:
        super().stop(status, message)
        p = self.progress()
        self.certificate = {
            "glr": self._stat,
            "threshold_value": self._beta_t,
            "threshold": self.stopping_threshold.name,
            "delta": self.solver.delta,
            "epsilon": self.eps,
            "structure": self.structure,
            "statistic": p["statistic"],
            "stops_when": p["stops_when"],
            "delta_achieved": p["delta_achieved"],
            "divergence": self.divergence,
        }
        if self._noise_record is not None:
            self.certificate["noise_check"] = dict(self._noise_record)
            if self._noise_record["rejected"]:
                self.certificate["guarantee"] = (
                    f"the declared noise scale was rejected after {self._noise_record['at_sample']} samples; "
                    + ("the stop came from the unknown-variance rule after it" if self._uv else
                       "the rewards were told in sums, so the answer is not (epsilon, delta)-correct"))

    # ------------------------------------------------------------------ where the run stands
    def would_stop(self, delta: float) -> bool:
        """Whether the stopping rule at error probability ``delta`` holds on the data so far."""
        if not self._ready:
            return False
        rule = glr_stopping_rule(self, min(max(float(delta), 1e-300), 1.0 - 1e-12))
        return rule.margin(self, self._answer_now(), int(self.T.sum())) >= 0.0

    def _answer_now(self) -> Any:
        return self._answer if self._answer is not None else self._compute_answer()

    def delta_achieved(self) -> float | None:
        """The smallest error probability at which the valid, time-uniform stopping rule
        would hold on the data so far: an anytime-valid p-value for "the leader is
        epsilon-good" (None with the heuristic threshold, which is not valid). Valid at any
        data-dependent time: the rule at level ``x`` errs only on an event of probability at
        most ``x`` covering every time at once (the thresholds are time-uniform), and holds at
        ``x`` whenever it holds at a smaller level, so ``P(exists t: delta_achieved_t <= x and
        answer_t wrong) <= x``. Bisection on ``log x`` over the rule at other levels, or the
        rule's closed form (:meth:`GLRStoppingRule.level
        <combex.solvers.stopping.GLRStoppingRule.level>`: the default thresholds of pairs
        with a known Gaussian scale)."""
        if self.solver.threshold == "heuristic" or not self._ready:
            return None
        ans = self._answer_now()
        level = self.stopping_rule.level(self, ans)
        if level is not None:
            return level
        # thresholds grow like log(1 / delta): the level where the margin closes
        margin = self.stopping_rule.margin(self, ans, int(self.T.sum()))
        return stopping_level(self.would_stop, atol=5e-3, max_iter=30, guess=math.log(self.solver.delta) - margin)

    def evaluations_left(self) -> float | None:
        """An *estimate* of the samples still needed (:func:`~combex.solvers._bisect.samples_left`):
        the ratio of the binding statistic to its threshold keeps growing at its rate over the
        last half of the run (from the checks' :class:`~combex.solvers._bisect.ProgressTrace`);
        before that, ``t' - t`` with ``t' Z / t = beta + log(t' / t)`` (the statistic grows at
        its rate so far, for these samplers about ``1 / T*`` at the current means, and each
        pair threshold like ``log t``).
        None before the first check and while the statistic is under 5% of its threshold
        (too early to extrapolate); 0 once the rule has
        identified the answer (a run ended otherwise, e.g. by its budget, keeps the estimate
        of what a certified answer would still need)."""
        if self.status == "identified":
            return 0.0
        if not self._ready:
            return None
        t = float(max(self.samples, 1))
        return samples_left(float(self._stat), float(self._beta_t), t, since=self._progress_trace.at_half(t))

    def _challenger(self) -> Any:
        """The closest alternative answer of the last check (an index, or the member list)."""
        c, ans = self._closest, self._answer
        if c is None or ans is None:
            return None
        alt = self.query.alternative_answer(ans, c)
        return alt if isinstance(alt, int) else np.flatnonzero(alt).tolist()

    stops_when = "statistic >= threshold"

    def stopping_statistic(self) -> tuple[float, float]:
        """The GLR of the binding alternative and its threshold at the last check (a class
        that does not list its members: the GLR its certificate guarantees)."""
        if not self._ready:
            return (math.nan, math.nan)
        return self.stopping_rule.statistic(self)

    def progress(self) -> dict[str, Any]:
        """See :meth:`Exploration.progress`."""
        lead = self.answer
        a = np.asarray(lead)
        stat, threshold = self.stopping_statistic()
        return {"samples": int(self.samples), "statistic": stat, "threshold": threshold,
                "stops_when": self.stops_when,
                "leader": np.flatnonzero(a).tolist() if a.dtype == bool else int(a),
                "challenger": self._challenger(), "delta_achieved": self.delta_achieved(),
                "evaluations_left": self.evaluations_left(),
                "noise_check": None if self._noise_record is None else dict(self._noise_record),
                "divergence": self.divergence}

    # ------------------------------------------------------------------ live studies
    def propose(self, n: int, pending: Any = (), rng: Any = None, avoid: Any = ()) -> list[Any]:
        """See :meth:`Exploration.propose`: the sampling rule applied one sample at a time to
        the told counts plus the pending ones, on a virtual copy (this exploration does not
        change; ``rng`` draws the rule's coins). ``avoid`` is not used: the rules of index
        arms choose one arm by their own criteria (the caller skips arms it cannot use)."""
        n = check_int(n, "n", owner=f"{type(self).__name__}.propose", low=0)
        if n == 0:
            return []
        memo = {id(self.solver): self.solver, id(self.problem): self.problem}
        if self.dc is not None:
            memo[id(self.dc)] = self.dc
        sim = copy.deepcopy(self, memo)
        sim.rng = check_rng(rng)
        sim._pending = None
        sim._zc = None
        for a in pending:
            sim.T[int(a)] += 1
        out: list[int] = []
        for _ in range(n):
            if not self._ready:
                need = np.flatnonzero(sim.T < self._min_pulls)
                pool = need if need.size else np.arange(self.N)
                a = int(pool[np.argmin(sim.T[pool]) if need.size == 0 else 0])
            else:
                cv = sim.T.astype(np.float64)
                sim.prepare_batch()
                a = int(sim.next_arm(cv))
            out.append(a)
            sim.T[a] += 1
        return out

    def _info(self) -> dict[str, Any]:
        out = {"threshold": self.stopping_threshold.name, "structure": self.structure, "divergence": self.divergence,
               "sigma": None if self._uv else self.sigma, "batch_size": self.solver.batch_size}
        if self._noise_record is not None:
            out["noise_check"] = dict(self._noise_record)
        return out




def _scale_record(rss: float, n: int, sigma: float, at: int, n_arms: int) -> dict[str, Any]:
    """The record of a test of the declared scale (:func:`scale_check_dict` and the sample it
    was made after)."""
    chk = scale_check_dict(rss, n, sigma, rss / max(n - n_arms, 1) if n > n_arms else math.nan)
    chk["at_sample"] = at
    return chk


def _simplex_floor(w: NDArray[np.float64], eps: float) -> NDArray[np.float64]:
    """C-tracking's floor: ``max(w, eps)`` renormalized (instead of the L-infinity projection
    on ``{v >= eps}`` of Garivier & Kaufmann; both move w by at most K eps in sup norm, the
    property their C-tracking lemma uses)."""
    K = w.shape[0]
    if eps <= 0:
        return w
    if K * eps >= 1:
        return np.full(K, 1.0 / K)
    v = np.maximum(w, eps)
    return v / v.sum()
