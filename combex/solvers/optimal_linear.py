"""Asymptotically optimal linear (and full-bandit) pure exploration with GLR stopping.

Arms are the rows ``x_1, ..., x_K`` of ``problem.features`` (shape (K, d), spanning R^d),
or -- full-bandit team selection -- the indicator vectors of the members of
``problem.decision_class`` (enumerated; ``max_enumerate`` members at most), whose pulls
return the sum of the members' rewards. Every solver here returns an answer that is
epsilon-good with probability >= 1 - delta under the default (``threshold="valid"``)
stopping rule: the mixture threshold of :mod:`combex.identification._linear_thresholds`, or, on the
oracle-randomized design of matroid-base classes too large to enumerate, the fixed-design
threshold (:meth:`LinearGLRExploration._fixed_design_stop`).

* :class:`LinGame` (``lingame``) -- Degenne, Menard, Shang & Valko (ICML 2020), Algorithm 2:
  one AdaHedge learner over the arms per candidate answer, a best-response sampler (the
  closest alternative, eq. (2)), optimistic gains, cumulative tracking.
* :class:`LinearTopTwo` -- a Top-Two rule (leader = empirical best, challenger = the
  alternative of smallest transportation cost ``Z_x``, "TC", Jourdan et al. 2022) whose
  sample is the arm that most increases the challenger's cost (the gradient of
  ``w -> Z_c(w)``), with forced exploration.
* :class:`LinearFWSampling` -- Frank-Wolfe sampling (Wang, Tzeng & Proutiere, NeurIPS 2021,
  Algorithm 1): the r-subdifferential of ``F(w) = min_x f_x(w)`` over the near-active
  alternatives, a small matrix game solved by LP, forced exploration.
* :class:`OracleSampler` -- tracks a *given* allocation (the true optimal one p* in the
  benchmark) with the same GLR stopping: the yardstick that isolates the sampling rule.
* :class:`RAGE` (``rage``) -- Fiez, Jain, Jamieson & Ratliff (NeurIPS 2019), Algorithm 1:
  elimination in rounds on the XY-optimal design of the active set, rounded to integer pulls
  by efficient apportionment (:func:`combex.allocations.apportion`).

Sampling is batched: an exploration updates its sampling rule and checks the GLR after
``m_t`` samples, ``m_t = batch_size`` when given, else ``max(1, floor(growth t))``
(``growth=0`` is the one-sample-per-step algorithm of the papers). The threshold is valid
at every t, so checking on a coarser schedule keeps the guarantee; the check comes at
most a factor ``1 + growth`` late, and the sampling rule is updated less often. Measured
(LinGame, 3-d instance of the tests, T* = 57, 20 seeds, delta = 0.05): 525 samples with
``growth=0``, 488 with 0.01, 747 with 0.1, 876 with ``batch_size=50``, 963 with 200.

Every :meth:`run` on a simulated environment reports ``info["lower_bound_ratio"]`` =
``samples / (T*(theta) log(1/delta))`` for the solvers' ``"linear"``
:class:`~combex.identification.Query` (T* from :func:`combex.identification.characteristic_time`,
exact where the class is enumerated).

Why one file of more than 1,000 lines: one exploration (the least-squares state, the
linear GLR against the closest alternative, the oracle path and its fixed-design stop for
classes too large to enumerate) serves LinGame, the linear Top-Two, Frank-Wolfe and the
oracle sampler, each a short subclass; RAGE closes the file. The theory (T*, the
thresholds, the GLR) is in :mod:`combex.identification`.
"""

from __future__ import annotations

import copy
import math
import warnings
from abc import abstractmethod
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, check_choice, check_float, check_int, check_probability, check_rng, param_error
from ..allocations import AdaHedge, apportion, simplex_maxmin, support_from_decision_class
from ..estimation._variance import MIN_TESTED_DOF, ResidualVariance
from ..exceptions import InvalidParameterError, NoiseScaleWarning, StateError
from ..identification import characteristic_time, true_noise_scale
from ..identification._linear import _design
from ..identification._linear_thresholds import (
    THRESHOLDS,
    LinearGLR,
    heuristic_threshold,
    linear_glr,
    mixture_beta0,
    oracle_glr_lower_bound,
)
from ..identification import Query
from ..identification._swaps import (
    bases_at_distance,
    exchange_pairs,
    is_matroid_base_class,
    swap_glr_lower_bound,
    swap_glr_lower_bound_of_size,
    topk_min_glr_of_size,
)
from ..identification._teams import _declared_scale, _team_arms, _TooLarge
from ..oracles import TopK
from ._base import Batch, Exploration, Solver
from ._bisect import ProgressTrace, samples_left, stopping_level
from ._registry import register_solver
from .linear import _PseudoInverse

__all__ = ["LinGame", "LinearTopTwo", "LinearFWSampling", "RandomDesign", "OracleSampler", "RAGE"]


# ====================================================================== helpers
#: The fixed-design stop's first checkpoint, ``c_1 = FIXED_DESIGN_FIRST n`` samples for ``n``
#: base arms (workers).
FIXED_DESIGN_FIRST = 10


def fixed_design_checkpoint(first: float, m: int) -> float:
    """The fixed-design stop's ``m``-th checkpoint ``c_m = c_1 (1 + eta)^(m - 1)``
    (``c_1 = 10 n``; ``eta`` = :data:`FIXED_DESIGN_SPACING`)."""
    return first * (1.0 + FIXED_DESIGN_SPACING) ** (m - 1)


def fixed_design_checks(first: float, upto: int) -> list[int]:
    """The sample counts at which the fixed-design stop checks, up to ``upto``: the first
    count at or past each checkpoint :func:`fixed_design_checkpoint` (a study's budget falls
    best on one of them: the evaluations after the last check before it cannot certify)."""
    out: list[int] = []
    m = 1
    while True:
        c = int(math.ceil(fixed_design_checkpoint(first, m) - 1e-9))
        if c > upto:
            return out
        out.append(c)
        m += 1


def _basis(X: NDArray[np.float64]) -> NDArray[np.intp]:
    """Indices of d linearly independent rows (greedy Gram-Schmidt, largest residual first)."""
    k, d = X.shape
    R = X.astype(np.float64).copy()
    chosen: list[int] = []
    for _ in range(d):
        n = np.einsum("ij,ij->i", R, R)
        n[chosen] = -1.0
        i = int(np.argmax(n))
        if n[i] <= 1e-12 * max(1.0, float(np.max(np.einsum("ij,ij->i", X, X)))):
            break
        chosen.append(i)
        q = R[i] / math.sqrt(n[i])
        R = R - np.outer(R @ q, q)
    return np.asarray(sorted(chosen), dtype=np.intp)


#: Stopping thresholds of the GLR solvers: ``"valid"`` (default) picks the best valid one for
#: the run's sampling rule -- ``"fixed-design"`` when the design is oblivious (the
#: oracle-randomized design of :meth:`LinearGLRExploration._design_batch`), ``"mixture"``
#: otherwise; ``"mixture"`` and ``"fixed-design"`` force one; ``"heuristic"`` is the papers'
#: (not valid). Results say which one ran (``info["threshold"]``).
SOLVER_THRESHOLDS = ("valid", "mixture", "fixed-design", *[t for t in THRESHOLDS if t != "mixture"])

#: With unknown variance, rounds are asked one sample per entry until this many observations
#: (the variance bound's degrees of freedom), in sums afterwards.
SINGLE_ENTRIES_UNTIL = 2000

#: Ratio ``1 + eta`` between the fixed-design threshold's checkpoints ``c_m = 10 n (1 + eta)^(m-1)``.
FIXED_DESIGN_SPACING = 0.2


#: Reward models of the GLR solvers: ``"gaussian"`` (a known noise scale), ``"unknown-variance"``
#: (one shared noise level estimated from the residuals); ``"auto"`` picks the first when the
#: scale is declared (the solver's ``sigma`` or the problem's noise model), else the second.
DIVERGENCES = ("auto", "gaussian", "unknown-variance")


def _common(self: Any, owner: str, delta: Any, epsilon: Any, threshold: Any, ridge: Any, growth: Any,
            batch_size: Any, max_enumerate: Any, n_ridges: Any = 6, divergence: Any = "auto",
            sigma: Any = None) -> None:
    self.divergence = check_choice(divergence, "divergence", DIVERGENCES, owner=owner)
    self.sigma = None if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
    self.delta = check_probability(delta, "delta", owner=owner)
    self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)
    self.threshold = check_choice(threshold, "threshold", SOLVER_THRESHOLDS, owner=owner)
    self.ridge = check_float(ridge, "ridge", owner=owner, low=0.0, closed="neither")
    self.growth = check_float(growth, "growth", owner=owner, low=0.0)
    self.batch_size = None if batch_size is None else check_int(batch_size, "batch_size", owner=owner, low=1)
    self.max_enumerate = check_int(max_enumerate, "max_enumerate", owner=owner, low=2)
    self.n_ridges = check_int(n_ridges, "n_ridges", owner=owner, low=1)


class _LinearTruthRun:
    """Mixin: the query of the linear GLR solvers (the best arm of a linear model, or the
    best team as a linear model of its members), whose yardstick :meth:`Solver.run` attaches
    from the environment's truth (never seen by the exploration)."""

    delta: float
    max_enumerate: int

    @property
    def tolerance(self) -> float:
        return float(self.epsilon)  # type: ignore[attr-defined]

    def query(self, problem: Any) -> Query:
        return Query("linear", self.delta, float(self.epsilon), max_enumerate=int(self.max_enumerate))  # type: ignore[attr-defined]


# ====================================================================== GLR explorations
class LinearGLRSolver(_LinearTruthRun, Solver):
    """Settings shared by the GLR-stopped linear and full-bandit samplers (see the module
    docstring; parameters those of :class:`LinGame`); a subclass names its sampling rule,
    a :class:`LinearGLRExploration` subclass, in ``exploration_class``."""

    arm_type: ClassVar[str] = "index"
    families: ClassVar[tuple[str, ...]] = ("linear", "full-bandit")
    eager_tells: ClassVar[bool] = True
    forced_exploration: ClassVar[bool] = False
    #: Decision classes past ``max_enumerate`` go through the oracles (see
    #: :meth:`LinearGLRExploration._oracle_setup`).
    oracle_path: ClassVar[bool] = True

    def __init__(self, delta: float = 0.05, epsilon: float = 0.0, *, threshold: str = "valid",
                 ridge: float = 1.0, n_ridges: int = 6, growth: float = 0.01, batch_size: int | None = None,
                 max_enumerate: int = 5000, divergence: str = "auto", sigma: float | None = None) -> None:
        self._init_common(delta, epsilon, threshold, ridge, growth, batch_size, max_enumerate, n_ridges,
                          divergence, sigma)

    def _init_common(self, delta: Any, epsilon: Any, threshold: Any, ridge: Any, growth: Any, batch_size: Any,
                     max_enumerate: Any, n_ridges: Any = 6, divergence: Any = "auto", sigma: Any = None) -> None:
        _common(self, type(self).__name__, delta, epsilon, threshold, ridge, growth, batch_size, max_enumerate,
                n_ridges, divergence, sigma)

    def start(self, problem: Any, *, rng: Any = None) -> "LinearGLRExploration":
        return self.exploration_class(self, problem, rng)

    exploration_class: ClassVar[type]


class LinearGLRExploration(Exploration):
    """The GLR loop of the linear and full-bandit solvers: basis pulls, then rounds of
    ``m_t`` samples allocated by cumulative tracking of the sampling rule's proportions
    (``argmin_k T_k - W_k``, ``W`` the sum of the proportions times the round sizes;
    C-tracking of Garivier & Kaufmann 2016 / eq. (3) of Degenne et al. 2020), a GLR check
    after each round, ask / tell, batches, save / resume, the noise check and the oracle
    path of classes too large to list.

    A *sampling rule* is a subclass that gives :meth:`proportions` ``(m)``: a point of the
    simplex over the arms (rows of ``X``) for the next ``m`` samples. It reads the query
    through :meth:`transportation_costs` (the per-sample GLR ``f_x`` of each alternative
    answer at the empirical proportions, and rows of its gradient), ``glr`` (the last
    check: ``best``, ``theta``), ``X``, ``T`` and ``samples``; state of its own is made in
    ``_setup()``. Pair it with a :class:`LinearGLRSolver` subclass naming it in
    ``exploration_class`` (the plug-ins guide shows one in a dozen lines). The stopping
    rule and its threshold are the loop's, whatever the rule samples.
    """

    _own_noise_check: ClassVar[bool] = True

    solver: LinearGLRSolver

    def __init__(self, solver: LinearGLRSolver, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._structure(solver)
        k, d = self.X.shape
        self.T = np.zeros(k, dtype=np.int64)
        self.sums = np.zeros(k)
        self.W = np.zeros(k)
        self.phase = "init"
        self.glr: Any = None
        self._A = np.zeros((d, d))
        self._b = np.zeros(d)

    def _structure(self, solver: LinearGLRSolver) -> None:
        """Arms, candidate answers, noise scale, basis (from the problem; never saved)."""
        owner = type(solver).__name__
        self.dc = None
        self.swap = False
        self.swap_dir = None
        if getattr(solver, "random_design", False):  # the oracle-randomized design at any size
            dc = getattr(self.problem, "decision_class", None)
            if getattr(self.problem, "arm_type", "index") != "mask" or dc is None or not is_matroid_base_class(dc):
                raise InvalidParameterError(
                    f"{owner} draws teams at random from a class of matroid bases (teams of k workers: a full-bandit "
                    f"problem with a TopK decision class); got a problem with decision class {dc!r}. Use 'top-two' "
                    "or 'lingame'."
                )
            self._oracle_setup(owner)
        else:
            try:
                self.X, self.masks, self.sigma = _team_arms(self.problem, solver.max_enumerate, owner)
            except _TooLarge:
                if not getattr(solver, "oracle_path", False):
                    raise
                self._oracle_setup(owner)
        self.threshold = self._resolve_threshold(solver.threshold, owner)
        self._resolve_noise(solver, owner)
        # candidate answers (rows of X when enumerated; a pool grown by the oracles otherwise)
        self.Xa = self.X
        self.answer_masks = self.masks
        self.basis = _basis(self.X)
        self._setup()

    def _resolve_noise(self, solver: LinearGLRSolver, owner: str) -> None:
        """The reward model (see :data:`DIVERGENCES`): ``self.declared`` (the declared scale of
        one observation, or None), ``self.uv`` (unknown variance) and the residual statistics
        (:class:`~combex.estimation._variance.ResidualVariance`); ``self.sigma`` becomes the
        sampling rules' scale (their proportions do not depend on it: every cost is
        proportional to ``1 / sigma^2``)."""
        declared = solver.sigma if solver.sigma is not None else self.sigma
        div = solver.divergence
        if div == "auto":
            div = "gaussian" if declared is not None else "unknown-variance"
        if div == "gaussian" and declared is None:
            raise InvalidParameterError(
                f"The 'divergence' parameter of {owner} is 'gaussian' (a known noise scale), but neither the solver's "
                "'sigma' nor the problem's noise model declares one. Give sigma=... or use "
                "divergence='unknown-variance' (the default 'auto' does)."
            )
        kind = getattr(getattr(self.problem, "noise", None), "kind", "gaussian")
        if div == "unknown-variance" and kind in ("bernoulli", "rademacher", "pm1"):
            raise InvalidParameterError(
                f"The 'divergence' parameter of {owner}: 'unknown-variance' estimates the variance of Gaussian "
                f"noise, and the problem's rewards are {kind!r} (two values); declare their scale (sigma) and use "
                "divergence='gaussian'. Got 'unknown-variance'."
            )
        self.declared = float(declared) if (declared is not None and div == "gaussian") else None
        self.uv = div == "unknown-variance"
        self.sigma = self.declared if self.declared is not None else 1.0
        self._rv = ResidualVariance(self.X.shape[1])
        self._progress_trace = ProgressTrace()  # statistic / threshold at the checks (evaluations_left)
        if self.uv:
            self._rv.start()
        self._sig = self.sigma if not self.uv else math.inf  # the stopping rule's scale, set at each check
        self._noise_record: dict[str, Any] | None = None
        self._noise_n = 0  # observations at the last test of the declared scale

    @property
    def _glr_delta(self) -> float:
        """The error budget of the GLR threshold: ``delta``, halved with unknown variance (the
        other half is the variance bound's: :meth:`_stop_scale`), divided by ``m_s + 1`` after
        :meth:`_break_design`. The one place where the threshold's delta is decided."""
        d = self.solver.delta / 2.0 if self.uv else self.solver.delta
        m_s = int(getattr(self, "_fd_broken", -1))
        return d if m_s < 0 else d / (m_s + 1)

    def _stop_scale(self, delta: float | None = None) -> float:
        """The noise scale of the stopping statistic: the declared one, or with unknown
        variance ``sqrt(U_t)``, the time-uniform upper confidence bound of the variance at
        ``delta / 2`` (:meth:`ResidualVariance.upper`; ``inf`` while the data cannot bound it).

        Why the rule stays delta-correct with unknown (Gaussian) noise: with probability at
        least ``1 - delta / 2`` every ``U_t >= sigma^2``; every GLR statistic here is
        ``||theta_hat - lam||^2_A / (2 s^2)``, decreasing in ``s``, so on that event the
        statistic at ``s^2 = U_t`` is at most the one at the true ``sigma^2``, which exceeds
        the threshold at ``delta / 2`` (:attr:`_glr_delta`) with probability at most
        ``delta / 2`` when the answer is wrong. The union is at most delta."""
        if not self.uv:
            return float(self.sigma)
        # the run's own level: recomputed when the observations grew by 1% (an earlier U is
        # still a valid bound now: the event holds at every time); another level (what
        # would_stop asks) from the same observations, so the rule at the run's delta is
        # the rule the run applies
        if delta is None:
            U = self._rv.upper(self.solver.delta / 2.0, reuse=0.01)
        else:
            U = self._rv.upper_as_reused(delta / 2.0)
        return math.sqrt(U) if math.isfinite(U) else math.inf

    def _observe(self, X: NDArray[np.float64], reward_sums: Any, counts: Any) -> None:
        """Fold observations into the residual statistics, then test a declared scale."""
        self._rv.add(X, reward_sums, counts)
        if self.declared is None or self._noise_record is not None and self._noise_record["rejected"]:
            return
        n = self._rv.n
        dof = n - self.X.shape[1]
        if dof < 1 or (n < 1.02 * self._noise_n and n - self._noise_n < 50 and dof > MIN_TESTED_DOF):
            return  # the test is valid at every time: checking on a geometric schedule keeps it so
        self._noise_n = n
        chk = self._rv.scale_check(self._A, self._b, self.declared)
        chk["at_sample"] = int(self.samples)
        self._noise_record = chk
        if chk["rejected"]:
            self._reject_declared_scale(chk)

    def _untested_scale(self) -> bool:
        """A declared scale not yet checked by the data (fewer than
        :data:`~combex.estimation._variance.MIN_TESTED_DOF` residual degrees of freedom): no stop
        yet, so a misdeclared scale is caught before it can end the run."""
        return self.declared is not None and not self.uv and self._rv.n - self.X.shape[1] < MIN_TESTED_DOF

    def _reject_declared_scale(self, chk: dict[str, Any]) -> None:
        """The data contradict the declared scale: warn, and stop from now on only by the
        unknown-variance rule (its recursion started at this time; :class:`ResidualVariance`).
        A stop before this time was not protected, which the result says."""

        warnings.warn(
            f"{type(self.solver).__name__}: the observations contradict the declared noise scale {chk['declared']:.4g} "
            f"(the noise scale is at least {chk['observed_at_least']:.4g} with confidence {1 - chk['alpha']:.2f}; "
            f"estimate {chk['estimate']:.4g}, after {chk['at_sample']} samples). The run continues with the "
            "unknown-variance stopping rule; declare the scale correctly or leave it unknown.",
            NoiseScaleWarning, stacklevel=4)
        self.uv = True
        self._rv.start(self._A, self._b)

    @property
    def _finite_sig(self) -> float:
        """The stopping scale, or the sampling scale while the variance is not yet bounded
        (the statistic is then set to 0: no stop)."""
        return self._sig if math.isfinite(self._sig) else float(self.sigma)

    @property
    def oblivious_design(self) -> bool:
        """Whether every sample after the basis comes from the oracle-randomized design
        (:meth:`_design_batch`), which never looks at the observations: a caller that keeps
        its own choices blind too may set :attr:`blind_tells`."""
        return self.dc is not None and self.swap and bool(getattr(self.solver, "swap_sampling", False))

    def _resolve_threshold(self, threshold: str, owner: str) -> str:
        if threshold == "valid":
            return "fixed-design" if self.oblivious_design else "mixture"
        if threshold == "fixed-design" and not self.oblivious_design:
            raise InvalidParameterError(
                f"The 'threshold' parameter of {owner} is 'fixed-design', which is valid only when the design "
                "does not depend on the observations (LinearTopTwo / LinearFWSampling on a class of matroid bases "
                "too large to enumerate: the oracle-randomized design); this run samples adaptively. Use "
                "threshold='valid' (the mixture threshold here) or 'mixture'."
            )
        return threshold

    #: Set by a caller that tells only arms this exploration asked for or proposed
    #: (:meth:`propose`), in an order and at times that do not depend on their scores (a live
    #: study handing out the design's teams to several assistants): its tells then keep the
    #: fixed-design threshold of an :attr:`oblivious_design`.
    blind_tells: bool = False

    def tell_batch(self, batch: Batch, reward_sums: Any) -> None:
        """As :meth:`Exploration.tell_batch`, with one guard for the fixed-design threshold:
        it is valid only while every told batch is the one the design asked for. A batch
        that differs (other teams, other or cut counts: a choice that may depend on the
        scores) makes the design adaptive, so the run switches to the mixture threshold
        for good (:meth:`_break_design`); the result says so in ``info["threshold_note"]``.
        Not so when the caller vouches that its tells are blind (:attr:`blind_tells`)."""
        if self.threshold == "fixed-design" and not self.done and not self.blind_tells:
            p = self._pending
            same = p is not None and (batch is p or (
                np.shape(batch.arms) == np.shape(p.arms) and np.array_equal(np.asarray(batch.arms), np.asarray(p.arms))
                and np.array_equal(np.asarray(batch.counts), np.asarray(p.counts))))
            if not same:
                self._break_design(int(getattr(self, "_fd_m", 0)))
        super().tell_batch(batch, reward_sums)

    def _break_design(self, m_s: int) -> None:
        """Leave the fixed-design threshold after its checkpoint ``m_s`` (0: none checked):
        from now on the mixture threshold at ``delta / (m_s + 1)``.

        Why the run stays delta-correct: the fixed-design stop gives checkpoint ``m`` the
        error budget ``delta / (m (m + 1))``; the checkpoints ``1..m_s`` already checked
        used data of an oblivious design and cost at most ``delta (1 - 1 / (m_s + 1))``
        together, the abandoned ones ``m > m_s`` free ``delta sum_{m > m_s} 1 / (m (m +
        1)) = delta / (m_s + 1)``, and the mixture threshold is valid for any adaptive
        design, at every time, at that level. The union is at most delta."""
        self._fd_broken = int(m_s)
        self.threshold = "mixture"

    @property
    def _glr_kind(self) -> str:
        """The :func:`linear_glr` threshold for the candidate pool (the fixed-design stop is
        taken by :meth:`_fixed_design_stop`; the pool's GLR only ranks candidates there)."""
        return "mixture" if self.threshold == "fixed-design" else self.threshold

    # ------------------------------------------------------------------ save / resume
    def _extra_state(self) -> dict[str, Any]:
        st: dict[str, Any] = {
            "T": self.T.copy(), "sums": self.sums.copy(), "W": self.W.copy(), "A": self._A.copy(),
            "b": self._b.copy(), "phase": self.phase,
            "best": None if self.glr is None else int(self.glr.best),
            "pool": None if self.dc is None else self.answer_masks.astype(np.int8),
            "arms": None if self.dc is None else self.masks.astype(np.int8),
            "swap_dir": None if self.swap_dir is None else np.asarray(self.swap_dir, dtype=np.float64).copy(),
            "free_pulls": None if getattr(self, "_free_pulls", None) is None else self._free_pulls.copy(),
            "checkpoint": int(getattr(self, "_fd_m", 0)),
            "design_broken": int(getattr(self, "_fd_broken", -1)),
            "noise": self._noise_state(),
            "progress_trace": self._progress_trace.state(),
            "last_check": None if getattr(self, "_last", None) is None else {
                k: (None if v is None else float(v)) for k, v in self._last.items()},
        }
        learners = getattr(self, "learners", None)
        if learners is not None:
            keys = list(learners)
            st["learners"] = {
                "keys": np.array([np.frombuffer(k, dtype=np.float64) for k in keys]) if keys else np.zeros((0, self.X.shape[1])),
                "L": np.array([learners[k].L for k in keys]) if keys else np.zeros((0, self.X.shape[0])),
                "Delta": np.array([learners[k].Delta for k in keys], dtype=np.float64),
            }
        return st

    def _load_extra_state(self, st: dict[str, Any]) -> None:
        self._structure(self.solver)
        self._progress_trace.load(st.get("progress_trace"))
        last = st.get("last_check")  # the statistic and threshold of the last check (states saved without: None)
        if last is not None:
            self._last = {k: (None if v is None else (int(v) if k == "challenger" else float(v))) for k, v in last.items()}
        if st.get("arms") is not None:
            self.masks = np.asarray(st["arms"]).astype(bool)
            self.X = self.masks.astype(np.float64)
            self.__dict__.pop("_mask_index_d", None)
        if st.get("swap_dir") is not None:
            self.swap_dir = np.asarray(st["swap_dir"], dtype=np.float64).copy()
        if st.get("free_pulls") is not None:
            self._free_pulls = np.asarray(st["free_pulls"], dtype=np.int64).copy()
        self._fd_m = int(st.get("checkpoint", 0))
        self._load_noise_state(st.get("noise"))
        if int(st.get("design_broken", -1)) >= 0:
            self._break_design(int(st["design_broken"]))
        self.T = np.asarray(st["T"], dtype=np.int64).copy()
        self.sums = np.asarray(st["sums"], dtype=np.float64).copy()
        self.W = np.asarray(st["W"], dtype=np.float64).copy()
        self._A = np.asarray(st["A"], dtype=np.float64).copy()
        self._b = np.asarray(st["b"], dtype=np.float64).copy()
        self.phase = st["phase"]
        if st.get("pool") is not None:
            self.answer_masks = np.asarray(st["pool"]).astype(bool)
            self.Xa = self.answer_masks.astype(np.float64)
        self.glr = None
        if st.get("best") is not None:
            s = self.solver
            self._sig = self._stop_scale()
            g = linear_glr(self.Xa, self._A, self._b, self.samples, self._glr_delta, sigma=self._sig,
                           epsilon=s.epsilon, threshold=self._glr_kind, ridge=s.ridge, n_ridges=s.n_ridges)
            if g.best != int(st["best"]):

                g = replace(g, best=int(st["best"]))
            self.glr = g
        if "learners" in st and hasattr(self, "learners"):
            lr = st["learners"]
            for key, L, D in zip(np.asarray(lr["keys"]), np.asarray(lr["L"]), np.asarray(lr["Delta"]).tolist()):
                h = AdaHedge(self.X.shape[0])
                h.L = np.asarray(L, dtype=np.float64).copy()
                h.Delta = float(D)
                self.learners[np.ascontiguousarray(key, dtype=np.float64).tobytes()] = h

    def _setup(self) -> None:
        pass

    def _noise_state(self) -> dict[str, Any]:
        rv = self._rv
        st: dict[str, Any] = {"uv": bool(self.uv), "zz": rv.zz, "n": rv.n, "active": rv.active,
                              "tested_at": int(self._noise_n), "ucb": None if rv.ucb is None else list(rv.ucb),
                              "check": None if self._noise_record is None else dict(self._noise_record)}
        if rv.active:
            st.update({"rss": rv.rss, "dof": rv.dof, "log_terms": rv.log_terms.copy(), "V_inv": rv.V_inv.copy(),
                       "theta": rv.theta.copy()})
        if rv.ucb_data is not None:
            st["ucb_data"] = [rv.ucb_data[0], rv.ucb_data[1].copy()]
        return st

    def _load_noise_state(self, st: dict[str, Any] | None) -> None:
        if st is None:
            return
        rv = self._rv
        self.uv = bool(st["uv"])
        rv.zz, rv.n, rv.active = float(st["zz"]), int(st["n"]), bool(st["active"])
        self._noise_n = int(st["tested_at"])
        self._noise_record = None if st["check"] is None else dict(st["check"])
        rv.ucb = None if st.get("ucb") is None else (float(st["ucb"][0]), int(st["ucb"][1]), float(st["ucb"][2]))
        u = st.get("ucb_data")  # states saved without it: the other levels from the current observations
        rv.ucb_data = None if u is None else (float(u[0]), np.asarray(u[1], dtype=np.float64).copy())
        if rv.active:
            rv.rss, rv.dof = float(st["rss"]), float(st["dof"])
            rv.log_terms = np.asarray(st["log_terms"], dtype=np.float64).copy()
            rv.V_inv = np.asarray(st["V_inv"], dtype=np.float64).copy()
            rv.theta = np.asarray(st["theta"], dtype=np.float64).copy()

    def _oracle_setup(self, owner: str) -> None:
        """Oracle path for a class too large to enumerate: the arms are a spanning set of
        members (:func:`combex.allocations.support_from_decision_class`), the candidate
        answers a pool grown with the oracle's ``argmax`` and ``argmax_excluding`` at the
        estimate. The stop uses a certified lower bound of the exact GLR, so it stays valid:
        for classes of matroid bases (:func:`~combex.identification.is_matroid_base_class`)
        the swap-decomposition bound of :mod:`combex.identification._swaps`, otherwise
        :func:`~combex.identification.oracle_glr_lower_bound` (quadratic oracle);
        ``info["stop_bound"]`` says which. On the swap path the samplers with
        ``swap_sampling`` (linear Top-Two, FW sampling) pull the oracle-randomized design
        (:meth:`_design_batch`)."""

        dc = self.problem.decision_class
        sizes = None
        M = support_from_decision_class(dc, rng=0)
        sizes = M.sum(axis=1)
        if sizes.min() != sizes.max():
            raise InvalidParameterError(
                f"{owner}: the oracle path (decision class larger than max_enumerate) needs members of "
                f"one size (the quadratic oracle's constraint sum(x) = k); got sizes {sorted(set(sizes.tolist()))}."
            )
        self.dc = dc
        self.masks = M
        self.X = M.astype(np.float64)
        self.sigma = _declared_scale(self.problem.noise, int(sizes.max()), owner)
        self.swap = bool(is_matroid_base_class(dc))
        self._exchange_cache: dict[bytes, Any] = {}
        self.swap_dir: NDArray[np.float64] | None = None

    def _random_members(self, r: int) -> NDArray[np.bool_]:
        """``r`` members drawn by the linear oracle at standard Gaussian weights (for
        :class:`~combex.oracles.TopK`: uniformly random k-sets, drawn in one vectorized
        partition)."""

        n = self.dc.n
        Wt = self.rng.standard_normal((r, n))
        if isinstance(self.dc, TopK):
            k = self.dc.k
            idx = np.argpartition(-Wt, k - 1, axis=1)[:, :k]
            out = np.zeros((r, n), dtype=bool)
            out[np.arange(r)[:, None], idx] = True
            return out
        return np.array([np.asarray(self.dc.argmax(w), dtype=bool) for w in Wt], dtype=bool)

    def _design_batch(self, m: int) -> Batch:
        """Sampling rule of the swap path (linear Top-Two / FW sampling on classes of matroid
        bases too large to enumerate): the *oracle-randomized design* -- each of the ``m``
        samples of a round goes to a member drawn by the linear oracle at random Gaussian
        weights (at most 4096 distinct members per round for top-k, 64 otherwise, the counts
        multinomial). For top-k this is the uniform design over all k-sets, whose ``A_t / t``
        tends to ``a I + b 11^T``: on the sum-zero directions ``x_hat - x_S`` of the GLR it
        is ``(p - q) I`` (``p = k / n``, ``q = k (k - 1) / (n (n - 1))``), the same for every
        swap, and the additive swap bound is then tight (``P M P`` nearly diagonal).

        Why not a Top-Two step toward the swap neighbours ``x_hat - i + j``: measured on
        ITMANAGE (k = 10, eps = 0.5), the Top-Two rule whose sample is the arm (spanning set
        plus the swap neighbours of the leaders) maximizing ``(x^T A^{-1} y)^2`` for the
        bound's challenger direction ``y`` needed 6.9e6 team evaluations (ICB: 4.4e6): a
        neighbour differs from ``x_hat`` in one member, so estimating ``theta_i - theta_j``
        from it costs a variance ``sigma^2 (1/w_0 + 1/w_ij)`` per swap, about
        ``(1 + sqrt(p))^2 sigma^2`` for p near-critical swaps, against ``2 sigma^2 / (p -
        q) = 9.7 sigma^2`` for random teams (every pull informs 10 coordinates at once: the
        multiplexing of full-bandit feedback)."""

        cap = 4096 if isinstance(self.dc, TopK) else 64
        r = min(m, cap)
        teams = self._random_members(r)
        counts = np.ones(r, dtype=np.int64) if r == m else self.rng.multinomial(m, np.full(r, 1.0 / r)).astype(np.int64)
        keep = counts > 0
        return Batch(teams[keep], counts[keep])

    # ------------------------------------------------------------------ contract
    @property
    def pulls(self) -> NDArray[np.int64]:
        if self.masks is None:
            return self.T.copy()
        out = (self.T[:, None] * self.masks).sum(axis=0).astype(np.int64)
        free = getattr(self, "_free_pulls", None)
        return out + free if free is not None else out

    @property
    def recommendation(self) -> Any:
        if self.glr is None:
            i = 0
        else:
            i = self.glr.best
        return self.answer_masks[i].copy() if self.answer_masks is not None else int(i)

    def _told_arm_type(self) -> str:
        """Super-arm masks on a full-bandit problem (the solver classes serve both arm
        types, e.g. a batch told back after a budget cut), index arms otherwise."""
        return "index" if self.masks is None else "mask"

    def _arms_out(self, idx: NDArray[np.intp]) -> NDArray[Any]:
        return self.masks[idx] if self.masks is not None else idx

    def _mask_index(self) -> dict[bytes, int]:
        """Each listed super-arm's index by the bytes of its bool mask (made at first use)."""
        index = self.__dict__.get("_mask_index_d")
        if index is None:
            index = self._mask_index_d = {m.tobytes(): i for i, m in enumerate(self.masks)}
        return index

    def _arms_in(self, arms: NDArray[Any]) -> NDArray[np.intp]:
        if self.masks is None:
            if arms.ndim != 1:
                raise StateError(f"{type(self.solver).__name__} pulls index arms; got super-arm masks.")
            return arms.astype(np.intp)
        if arms.ndim != 2:
            raise StateError(f"{type(self.solver).__name__} pulls super-arms (masks); got index arms.")
        index = self._mask_index()
        out = []
        for m in np.asarray(arms, dtype=bool):
            i = index.get(m.tobytes())
            if i is None:
                raise StateError("A pulled super-arm is not a member of the decision class.")
            out.append(i)
        return np.asarray(out, dtype=np.intp)

    def _round_size(self) -> int:
        s = self.solver
        if getattr(self, "_force_round", None) is not None:
            return int(self._force_round)
        if s.batch_size is not None:
            return s.batch_size
        return max(1, int(s.growth * self.samples))

    def _next_batch(self) -> Batch:
        b = self._next_batch_rule()
        if self.uv and b.counts.size and int(b.counts.max()) > 1 and self._rv.n < SINGLE_ENTRIES_UNTIL:
            # one entry per sample while the observations are few: each brings its own degree of
            # freedom to the variance bound (a sum of c rewards brings one); past that the
            # bound is tight anyway and the per-entry work is saved
            arms = np.repeat(np.asarray(b.arms), b.counts, axis=0)
            return Batch(arms, np.ones(arms.shape[0], dtype=np.int64))
        return b

    def _next_batch_rule(self) -> Batch:
        if self.phase == "init":
            idx = self.basis
            return Batch(self._arms_out(idx), np.ones(idx.shape[0], dtype=np.int64))
        m = self._round_size()
        t = max(self.samples, 1)
        if self.dc is not None and self.swap and getattr(self.solver, "swap_sampling", False):
            return self._design_batch(m)
        avoid = getattr(self, "_avoid", None)  # arms a proposal must not use (propose's avoid)
        if self.solver.forced_exploration:
            # forced exploration: every basis arm at least sqrt(t) - d/2 times
            # (Garivier & Kaufmann 2016, D-tracking; Jedra & Proutiere 2020 for linear)
            lag = self.basis[self.T[self.basis] < math.sqrt(t) - 0.5 * self.basis.shape[0]]
            if avoid is not None:
                lag = lag[~avoid[lag]]
            if lag.size:
                a = lag[np.argmin(self.T[lag])]
                c = min(m, max(1, int(math.ceil(math.sqrt(t + m))) - int(self.T[a])))
                return Batch(self._arms_out(np.array([a])), np.array([c], dtype=np.int64))
        z = self.proportions(m)
        self.W += m * z
        D = self.W - self.T
        if m == 1:
            # the arm furthest behind its target. A proposal avoiding held arms (propose's
            # avoid) where none is behind (the basis and forced pulls count in T, not in W)
            # takes the rule's own choice, as larger rounds do below: the first of the tied
            # arms would walk a study's tickets through the teams in their listed order
            a = int(np.argmax(D))
            if D[a] <= 0 and avoid is not None:
                a = int(np.argmax(z))
            return Batch(self._arms_out(np.array([a])), np.array([1], dtype=np.int64))
        Dp = np.maximum(D, 0.0)
        p = Dp / Dp.sum() if Dp.sum() > 0 else z
        counts = apportion(p, m)
        idx = np.flatnonzero(counts)
        return Batch(self._arms_out(idx), counts[idx].astype(np.int64))

    def _fold_free(self, arms: Any, reward_sums: NDArray[np.float64], counts: NDArray[np.int64]) -> None:
        """Fold told super-arms as linear observations without an arm index (the oracle
        path: any member of the class is one)."""
        Mk = np.asarray(arms).astype(np.float64)
        if Mk.ndim != 2 or Mk.shape[1] != self.dc.n:
            raise StateError(f"{type(self.solver).__name__} pulls super-arms (masks); got index arms.")
        c = counts.astype(np.float64)
        self._free_pulls = getattr(self, "_free_pulls", np.zeros(self.dc.n, dtype=np.int64)) + (
            Mk * c[:, None]).sum(axis=0).astype(np.int64)
        self._A += (Mk * c[:, None]).T @ Mk
        self._b += Mk.T @ reward_sums
        self._observe(Mk, reward_sums, c)

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        free = self.dc is not None and self.swap and getattr(self.solver, "swap_sampling", False)
        if free and self.phase == "run":
            # oracle path: any super-arm is a valid linear observation (no arm index needed)
            self._fold_free(batch.arms, reward_sums, batch.counts)
            self.rounds += 1
            self._sig = self._stop_scale()
            self._oracle_check()
            return
        if free and self.phase == "init" and np.ndim(batch.arms) == 2:
            # a member of the design told while the first round still misses a spanning member
            # (e.g. a study's told score of that round voided afterwards): an observation all the
            # same; the round ends when its spanning members are told
            index = self._mask_index()
            out = np.array([np.asarray(m, dtype=bool).tobytes() not in index for m in batch.arms])
            if out.any():
                self._fold_free(np.asarray(batch.arms)[out], reward_sums[out], batch.counts[out])
                if out.all():
                    return
                batch = Batch(np.asarray(batch.arms)[~out], batch.counts[~out])
                reward_sums = reward_sums[~out]
        idx = self._arms_in(np.asarray(batch.arms))
        c = batch.counts.astype(np.int64)
        np.add.at(self.T, idx, c)
        np.add.at(self.sums, idx, reward_sums)
        Xi = self.X[idx]
        self._A += (Xi * c[:, None].astype(np.float64)).T @ Xi
        self._b += Xi.T @ reward_sums
        self._observe(Xi, reward_sums, c)
        if self.phase == "init":
            # the opening round ends when its arms are told, or when the told arms span the arms'
            # space all the same (an arm that completes it, told while an opening ticket is out)
            if np.all(self.T[self.basis] > 0) or self._spans(self._A) is None:
                self.phase = "run"
            else:
                return
        self.rounds += 1
        s = self.solver
        self._sig = self._stop_scale()
        if self.dc is not None:
            self._oracle_check()
            return
        self.glr = g = linear_glr(self.Xa, self._A, self._b, self.samples, self._glr_delta, sigma=self._sig,
                                  epsilon=s.epsilon, threshold=self._glr_kind, ridge=s.ridge, n_ridges=s.n_ridges)
        zmin = float(np.min(np.where(np.isfinite(g.Z), g.Z, np.inf)))
        self._last = {"stat": zmin if g.Z.size > 1 else math.inf, "threshold": float(g.beta[g.challenger]),
                      "binding": float(g.Z[g.challenger]), "challenger": int(g.challenger), "sig": self._sig}
        self._progress_trace.record(self.samples, self._last["binding"], self._last["threshold"])
        if self.record_trace:
            self.record(t=self.samples, Z=zmin, margin=g.margin, best=g.best)
        if g.stop and not self._untested_scale():
            # Z and beta of the binding alternative (the smallest ratio Z_x / beta_x: the stop
            # needs Z_x > beta_x for every x), and the smallest Z over the alternatives
            self.certificate = {"Z": float(g.Z[g.challenger]), "margin": g.margin,
                                "beta": float(g.beta[g.challenger]), "Z_min": zmin,
                                "threshold": self.threshold, "epsilon": s.epsilon, "challenger": g.challenger}
            self.stop("identified", f"GLR: Z_x(t) > beta_x(t) for every alternative ({self.threshold} threshold)")

    def _oracle_check(self) -> None:

        s = self.solver
        if self.swap:
            x_hat, L, beta, info = self._swap_stop()
            if info.get("checked") is False:  # the fixed-design stop between its checkpoints
                if getattr(self, "_last", None) is None:  # none yet: the estimate's answer, no statistic
                    theta = np.linalg.solve(self._A, self._b)
                    self.answer_masks = x_hat[None, :].copy()
                    self.Xa = self.answer_masks.astype(np.float64)
                    self.glr = LinearGLR(best=0, theta=theta, Z=np.array([np.inf]), beta=np.array([beta]),
                                         stop=False, margin=0.0, challenger=0)
                # else the last checkpoint's answer, statistic and threshold stand: the answer
                # is the one its statistic (and delta_achieved) is about
                return
        else:
            x_hat, L, info = oracle_glr_lower_bound(self.dc, self._A, self._b, sigma=self._finite_sig, epsilon=s.epsilon,
                                                    ridge=s.ridge)
            if not math.isfinite(self._sig):
                L = 0.0
            beta = mixture_beta0(self._A, self._glr_delta, s.ridge) if self.threshold == "mixture" else heuristic_threshold(
                self.samples, self._glr_delta)
            info = {"stop_bound": "quadratic", **info}
        theta = np.linalg.solve(self._A, self._b)
        if self.swap and getattr(s, "swap_sampling", False):
            # the design needs no candidate pool: the answer is the oracle's argmax

            self.answer_masks = x_hat[None, :].copy()
            self.Xa = self.answer_masks.astype(np.float64)
            self.glr = LinearGLR(best=0, theta=theta, Z=np.array([np.inf]), beta=np.array([beta]),
                                 stop=bool(L > beta), margin=L / beta, challenger=0)
            best = 0
        else:
            best = self._pool_glr(x_hat, theta)
        self._stop_bound = info["stop_bound"]
        self._last = {"stat": float(L), "threshold": float(beta), "binding": float(L), "challenger": None,
                      "sig": self._sig, "t": float(self.samples)}
        self._progress_trace.record(self.samples, float(L), float(beta))
        if self.record_trace:
            self.record(t=self.samples, Z=L, margin=L / beta, best=best,
                        upper_margin=info.get("upper_margin", math.nan))
        if L > beta and not self._untested_scale():
            self.certificate = {"Z_lower": L, "margin": L / beta, "beta": beta, "threshold": self.threshold,
                                "epsilon": s.epsilon, **info}
            self.stop("identified", f"oracle GLR lower bound ({info['stop_bound']}) > beta ({self.threshold} threshold)")

    def _pool_glr(self, x_hat: NDArray[np.bool_], theta: NDArray[np.float64]) -> int:
        """Grow the candidate pool with the oracle's argmax and second best; the GLR over it
        (the samplers' alternatives); returns the index of ``x_hat`` in the pool."""
        s = self.solver
        other = np.asarray(self.dc.argmax_excluding(theta, x_hat), dtype=bool)
        pool = [] if self.answer_masks is self.masks else list(self.answer_masks)
        keys = {m.tobytes() for m in pool}
        for m in (x_hat, other):
            if m.tobytes() not in keys:
                pool.append(m.copy())
                keys.add(m.tobytes())
        pool = pool[-200:]
        self.answer_masks = np.array(pool, dtype=bool)
        self.Xa = self.answer_masks.astype(np.float64)
        self.glr = g = linear_glr(self.Xa, self._A, self._b, self.samples, self._glr_delta, sigma=self._sig,
                                  epsilon=s.epsilon, threshold=self._glr_kind, ridge=s.ridge, n_ridges=s.n_ridges)
        best = int(np.flatnonzero((self.answer_masks == x_hat).all(axis=1))[0])
        if g.best != best:  # the oracle's argmax is the reference answer

            self.glr = g = replace(g, best=best)
        return best

    def _swap_stop(self) -> tuple[NDArray[np.bool_], float, float, dict[str, Any]]:
        """The swap-decomposition stop (:mod:`combex.identification._swaps`) on the ridge grid.

        Mixture threshold: for each ``lam_j = ridge 10^j`` (j < n_ridges) the bound ``L_j``
        of ``min_S Z_S / kappa_S(lam_j)`` with ``M_j = A^{-1} + lam_j A^{-2}`` is compared
        with ``beta_0(lam_j)`` at ``delta / n_ridges``; on the event where all the grid's
        deviation bounds hold (probability >= 1 - delta) a wrong answer has ``Z_S <=
        beta_0(lam_j) kappa_S(lam_j)`` for every j, so stopping when *some* ``L_j > beta_j``
        is valid. Heuristic threshold: ``M = A^{-1}`` (no kappa) against ``log((1 + log t) /
        delta)``. The matchings are solved only for the grid points where the best single
        swap (a member, so an *upper* bound of ``min_S Z_S / kappa_S``) exceeds ``beta_j``:
        elsewhere no lower bound can (measured: most checks of a run stop there). Returns ``(x_hat, L, beta)`` of the grid point of largest ``L / beta`` and
        the info."""

        s = self.solver
        A_inv = np.linalg.inv(self._A)
        theta = A_inv @ self._b
        x_hat = np.asarray(self.dc.argmax(theta), dtype=bool)
        key = x_hat.tobytes()
        ex = self._exchange_cache.get(key)
        if ex is None:
            ex = self._exchange_cache[key] = exchange_pairs(self.dc, x_hat)
        if self.threshold == "fixed-design":
            return self._fixed_design_stop(A_inv, theta, x_hat, ex)
        if self.threshold == "mixture":
            J_ = s.n_ridges
            dlt = self._glr_delta
            grid = [(s.ridge * 10.0**j, mixture_beta0(self._A, dlt / J_, s.ridge * 10.0**j)) for j in range(J_)]
        else:
            grid = [(0.0, heuristic_threshold(self.samples, self._glr_delta))]
        best = None
        I, J, E = ex
        g = theta[I][:, None] - theta[J][None, :]
        upper_margin = 0.0
        for lam, beta in grid:
            M = A_inv + lam * (A_inv @ A_inv)
            # the best single swap is a member: its exact Z / kappa bounds min_S Z_S / kappa_S
            # from above, so no lower bound can pass beta when it does not (skip the matchings)
            dM = np.diag(M)
            w2 = dM[I][:, None] + dM[J][None, :] - 2.0 * M[np.ix_(I, J)]
            z1 = np.where(E, np.maximum(g + s.epsilon, 0.0) ** 2 / (2.0 * self._sig**2 * np.maximum(w2, 1e-300)),
                          np.inf)
            upper = float(z1.min()) if E.any() else math.inf
            upper_margin = max(upper_margin, upper / beta)
            if upper <= beta:
                continue
            sb = swap_glr_lower_bound(x_hat, theta, M, ex, sigma=self._sig, epsilon=s.epsilon)
            if best is None or sb.value / beta > best[0].value / best[1]:
                best = (sb, beta, lam)
        if best is None:  # no ridge can stop: report the single-swap upper bound's margin
            info = {"stop_bound": "swap", "upper_margin": upper_margin}
            return x_hat, 0.0, float(grid[0][1]), info
        sb, beta, lam = best
        self.swap_dir = sb.direction if sb.pairs else None
        info = {"stop_bound": "swap", "swap_kind": sb.info["kind"], "matching_size": len(sb.pairs),
                "ridge_used": lam, "triangle": sb.info["triangle"], "additive": sb.info["additive"],
                "upper_margin": upper_margin}
        return x_hat, float(sb.value), float(beta), info

    def _checkpoint(self) -> int:
        """Index ``m >= 1`` of the latest checkpoint ``c_m = c_0 (1 + eta)^(m - 1) <= t``
        (``c_0 = 10 n``, ``eta`` = :data:`FIXED_DESIGN_SPACING`); 0 before ``c_0``. A
        function of the sample count alone."""
        c0 = self._checkpoint_at(1)
        t = float(self.samples)
        if t < c0:
            return 0
        return int(math.floor(math.log(t / c0) / math.log1p(FIXED_DESIGN_SPACING) + 1e-9)) + 1

    def _checkpoint_at(self, m: int) -> float:
        """``c_m = 10 n (1 + eta)^(m - 1)``, the fixed-design stop's m-th checkpoint."""
        return fixed_design_checkpoint(float(FIXED_DESIGN_FIRST * self.dc.n), m)

    def _fixed_design_beta(self, m: int, size: int, n: int, k: int) -> float:
        """``beta(m, s)`` with ``exp(-beta) <= p = delta 6 / (pi^2 s^2) / (m (m + 1)) / N_s``,
        ``N_s = C(k, s) C(n - k, s)`` (:func:`~combex.identification.bases_at_distance`):
        ``log(1/p)`` (the sub-Gaussian tail ``exp(-x^2/2)``), or, when the team noise is
        exactly Gaussian (independent Gaussian members), ``z^2 / 2`` with ``z`` the Gaussian
        upper ``p``-quantile (``P(N(0, 1) > z) = p``; the Mills ratio makes it smaller by
        about ``log(z sqrt(2 pi))``, 2.7 at z = 6)."""

        logp = (math.log(self._glr_delta) - math.log(bases_at_distance(n, k, size))
                - math.log(math.pi**2 * size * size / 6.0) - math.log(m * (m + 1.0)))
        noise = getattr(self.problem, "noise", None)
        if noise is not None and noise.kind == "gaussian" and bool(getattr(noise, "independent", True)):
            from scipy.stats import norm  # scipy.stats is slow to import (~0.3 s): combex --help stays light

            return 0.5 * float(norm.isf(math.exp(logp))) ** 2
        return -logp

    def _fixed_design_stop(self, A_inv: NDArray[np.float64], theta: NDArray[np.float64], x_hat: NDArray[np.bool_],
                           ex: Any) -> tuple[NDArray[np.bool_], float, float, dict[str, Any]]:
        """The swap stop with the *fixed-design* threshold (``threshold="fixed-design"``, the
        default ``"valid"`` on the oracle-randomized design).

        Why it is valid. Every sample after the basis pulls is a member drawn by
        :meth:`_design_batch` from the exploration's generator, and the round sizes are
        functions of the sample count: the design ``x_1, x_2, ...`` does not depend on the
        observations. Given the design, the OLS error at a fixed time is ``A^{-1} sum_s x_s
        eta_s``, so for a fixed direction ``y`` the deviation ``(theta_hat - theta)^T y`` is
        Gaussian -- sub-Gaussian for bounded (correlated-member) team scores -- with variance
        (proxy) ``sigma^2 ||y||^2_{A^{-1}}`` and ``P((theta_hat - theta)^T y > sqrt(2 beta)
        sigma ||y||_{A^{-1}}) <= exp(-beta)``: no self-normalized (``d``-dimensional) bound is
        needed. The GLR is checked only at the first round end past each checkpoint ``c_m``
        (:meth:`_checkpoint`), a time fixed by the design. If the answer ``x_hat`` at check
        ``m`` is not epsilon-good, the best base ``S*`` has ``theta^T (x_S* - x_hat) >
        epsilon`` and, for the stop to pass, ``Z_S* > beta(m, s)`` with ``s = |x_hat \\ S*|``;
        together these need the deviation above along ``y = x_hat - x_S*``. For a fixed
        ``S*`` there are at most ``N_s = C(k, s) C(n - k, s)`` bases at distance ``s``, so
        the union over ``m``, ``s`` and those bases has probability at most ``sum_m sum_s
        N_s exp(-beta(m, s)) = delta sum_m 1/(m (m + 1)) sum_s 6/(pi^2 s^2) <= delta``
        (:meth:`_fixed_design_beta`). The statistic for each distance ``s`` is a certified
        lower bound of ``min Z_S`` over the bases at that distance (``M = A^{-1}``): exact for
        ``s = 1`` (single swaps are members),
        :func:`~combex.identification.swap_glr_lower_bound` (all sizes) and
        :func:`~combex.identification.swap_glr_lower_bound_of_size` otherwise; for top-k the
        exact minimum by enumeration
        (:func:`~combex.identification.topk_min_glr_of_size`) wherever there are at most
        :data:`~combex.identification._swaps.TOPK_EXACT_MAX` sets at that distance.

        Against the mixture threshold (``beta_0 = log(1/delta) + 1/2 log det(I + A/lam)``,
        about ``(n/2) log t`` = 140 at n = 36, t = 1e4, times ``kappa``), this one is
        ``log(1/delta) + log(k (n - k)) + O(log log t)`` for the single swaps (about 14 at
        n = 36, k = 10, delta = 0.05). It is not time-uniform: a stop is only possible at the
        checkpoints (spacing ``1 + eta``, :data:`FIXED_DESIGN_SPACING`), a delay of at most a
        factor ``1 + eta``.
        """

        s = self.solver
        I, J, E = ex
        k, n = int(I.size), int(I.size + J.size)
        m = self._checkpoint()
        last = int(getattr(self, "_fd_m", 0))
        if m <= last:  # no new checkpoint since the last check: no stop possible now
            beta = self._fixed_design_beta(last + 1, 1, n, k)
            return x_hat, 0.0, beta, {"stop_bound": "swap", "checkpoint": last, "checked": False}
        self._fd_m = m
        sizes = [q for q in range(1, min(k, n - k) + 1)]
        betas = {q: self._fixed_design_beta(m, q, n, k) for q in sizes}
        dM = np.diag(A_inv)
        g = theta[I][:, None] - theta[J][None, :]
        w2 = dM[I][:, None] + dM[J][None, :] - 2.0 * A_inv[np.ix_(I, J)]
        z1 = np.where(E, np.maximum(g + s.epsilon, 0.0) ** 2 / (2.0 * self._sig**2 * np.maximum(w2, 1e-300)), np.inf)
        vals = {1: float(z1.min()) if E.any() else math.inf}
        info: dict[str, Any] = {"stop_bound": "swap", "checkpoint": m, "checked": True}
        if vals[1] > betas[1] and len(sizes) > 1:
            sb = swap_glr_lower_bound(x_hat, theta, A_inv, ex, sigma=self._sig, epsilon=s.epsilon)
            info.update({"swap_kind": sb.info["kind"], "triangle": sb.info["triangle"],
                         "additive": sb.info["additive"]})
            topk = isinstance(self.dc, TopK)
            for q in sizes[1:]:
                v = sb.value
                if v <= betas[q]:
                    exact = topk_min_glr_of_size(x_hat, theta, A_inv, q, sigma=self._sig,
                                                 epsilon=s.epsilon) if topk else None
                    v = max(v, exact if exact is not None else swap_glr_lower_bound_of_size(
                        x_hat, theta, A_inv, ex, q, sigma=self._sig, epsilon=s.epsilon))
                vals[q] = v
                if v <= betas[q]:
                    break
        q = min(vals, key=lambda q: vals[q] / betas[q])
        info.update({"binding_distance": q, "upper_margin": vals[1] / betas[1]})
        return x_hat, float(vals[q]), float(betas[q]), info

    def _info(self) -> dict[str, Any]:
        out = {"threshold": self.threshold, "sigma": self.declared, "n_candidates": int(self.Xa.shape[0]),
               "divergence": "unknown-variance" if self.uv else "gaussian"}
        if self.uv:
            out["sigma_upper"] = self._stop_scale()
            est = self._rv.estimate(self._A, self._b)
            out["sigma_estimate"] = math.sqrt(est) if est == est else math.nan
        if self._noise_record is not None:
            out["noise_check"] = dict(self._noise_record)
        m_s = int(getattr(self, "_fd_broken", -1))
        if m_s >= 0:
            out["threshold_note"] = (
                f"the fixed-design threshold was left after checkpoint {m_s}: a told batch differed from the "
                "batch the design asked for (other teams, or counts changed or cut, e.g. at a budget), so the "
                f"design may depend on the scores; mixture threshold at delta / {m_s + 1} since")
        if self.dc is not None:
            out["oracle_path"] = True
            out["stop_bound"] = getattr(self, "_stop_bound", "swap" if self.swap else "quadratic")
            out["n_arms"] = int(self.X.shape[0])
        return out

    # ------------------------------------------------------------------ where the run stands
    def _arm_value(self, i: int) -> Any:
        """Arm ``i`` as the problem names it: a sorted member list, or the index."""
        if self.answer_masks is not None and i is not None:
            return np.flatnonzero(self.answer_masks[i]).tolist()
        return None if i is None else int(i)

    def would_stop(self, delta: float) -> bool:
        """Whether the valid rule at error probability ``delta`` would stop on the data so far
        (the statistic and the threshold of the last check, rescaled)."""
        x = float(delta)
        last = getattr(self, "_last", None)
        if last is None or self.threshold == "heuristic":
            return False
        d_used = self._glr_delta
        d_x = d_used * x / self.solver.delta
        sig_x = self._stop_scale(x)
        if not math.isfinite(sig_x):
            return False
        if self.dc is None:  # enumerated: the mixture threshold of every alternative at d_x
            s = self.solver
            g = linear_glr(self.Xa, self._A, self._b, self.samples, min(max(d_x, 1e-300), 1.0 - 1e-12), sigma=sig_x,
                           epsilon=s.epsilon, threshold="mixture", ridge=s.ridge, n_ridges=s.n_ridges)
            return bool(g.stop) and int(g.best) == int(self.glr.best)
        sig0 = last["sig"]
        if not math.isfinite(sig0):
            return False
        L = last["binding"] * (sig0 / sig_x) ** 2
        beta = last["threshold"]
        noise = getattr(self.problem, "noise", None)
        if self.threshold == "fixed-design" and noise is not None and noise.kind == "gaussian" and bool(
                getattr(noise, "independent", True)):
            from scipy.stats import norm  # scipy.stats is slow to import (~0.3 s): combex --help stays light

            p = float(norm.sf(math.sqrt(2.0 * beta))) * d_x / d_used
            beta_x = 0.5 * float(norm.isf(min(p, 0.5))) ** 2 if p < 0.5 else 0.0
        else:  # thresholds of the form log(1 / delta) + c
            beta_x = beta + math.log(d_used / d_x)
        return L > beta_x

    def delta_achieved(self) -> float | None:
        """The smallest error probability at which the solver's valid, time-uniform stopping
        rule would hold on the data so far: an anytime-valid p-value for "the leader is
        epsilon-good" (None with the heuristic threshold, which is not valid).

        Why it is valid at any data-dependent time: the rule at level ``x`` errs only on an
        event of probability at most ``x`` that covers every time at once (the thresholds are
        time-uniform: the proofs bound ``P(exists t: answer_t wrong and statistic_t >=
        threshold_t(x)) <= x``), and the rule at level ``x`` holds whenever it holds at a
        smaller level. So ``P(exists t: delta_achieved_t <= x and answer_t wrong) <= x`` for
        every ``x``, whenever one looks. Computed by bisection on ``log x`` (1 when even
        ``x = delta`` ... ``1`` does not stop)."""
        if self.threshold == "heuristic" or getattr(self, "_last", None) is None:
            return None
        return stopping_level(self.would_stop, atol=1e-3, max_iter=40)

    def evaluations_left(self) -> float | None:
        """An *estimate* of the samples still needed: ``t' - t`` with ``t'`` solving ``t' Z_t
        / t = beta(t')``, i.e. the binding statistic keeps growing linearly at its current rate
        (for these samplers that rate approaches ``1 / T*`` at the current estimates) and the
        threshold grows like the mixture's ``d/2 log t`` (:func:`~combex.solvers._bisect.samples_left`).
        None before the first check and while the statistic is under 5% of its threshold (too
        early to extrapolate); 0 once the rule has identified the answer (a run ended otherwise,
        e.g. by its budget, keeps the estimate of what a certified answer would still need). A
        rule checking at set points (the fixed-design stop) needs at least the samples to its
        next check."""
        last = getattr(self, "_last", None)
        if last is None or self.status == "identified":
            return None if last is None else 0.0
        # at the last check's own count (the fixed-design stop checks at its checkpoints only:
        # its statistic stands still between them while the samples grow), less the samples since
        t = float(max(last.get("t") or self.samples, 1))
        left = samples_left(float(last["binding"]), float(last["threshold"]), t, slope=0.5 * float(self.X.shape[1]),
                            since=self._progress_trace.at_half(t))
        if left is None:
            return None
        left = max(left - (float(self.samples) - t), 0.0)
        nxt = self._next_checkpoint()  # a rule checking at set points cannot certify before its next check
        return left if nxt is None else max(left, float(nxt - self.samples))

    stops_when = "statistic > threshold"

    def stopping_statistic(self) -> tuple[float, float]:
        """The GLR (or its certified lower bound on the oracle path) of the binding
        alternative and its threshold at the last check."""
        last = getattr(self, "_last", None)
        return (math.nan, math.nan) if last is None else (float(last["binding"]), float(last["threshold"]))

    def progress(self) -> dict[str, Any]:
        """See :meth:`Exploration.progress`: the GLR statistic of the binding alternative
        against its threshold, the leader and the closest alternative, ``delta_achieved``,
        the estimate of the samples left, the test of a declared noise scale."""
        last = getattr(self, "_last", None)
        lead = np.asarray(self.answer)
        leader = np.flatnonzero(lead).tolist() if lead.dtype == bool else int(lead)
        chal = None
        if last is not None and last["challenger"] is not None:
            chal = self._arm_value(last["challenger"])
        elif self.dc is not None and self.glr is not None:
            try:
                other = self.dc.argmax_excluding(self.glr.theta, np.asarray(self.answer, dtype=bool))
                chal = None if other is None else np.flatnonzero(np.asarray(other, dtype=bool)).tolist()
            except Exception:  # noqa: BLE001 - an oracle without argmax_excluding
                chal = None
        stat, threshold = self.stopping_statistic()
        return {"samples": int(self.samples), "statistic": stat, "threshold": threshold,
                "stops_when": self.stops_when, "leader": leader, "challenger": chal,
                "delta_achieved": self.delta_achieved(), "evaluations_left": self.evaluations_left(),
                "noise_check": None if self._noise_record is None else dict(self._noise_record),
                "divergence": "unknown-variance" if self.uv else "gaussian",
                # the samples at the check the statistic is from (checkpoints of a fixed
                # design fall between told samples), and whether the design ignores the rewards
                "checked_at": None if last is None or last.get("t") is None else int(last["t"]),
                "next_check_at": self._next_checkpoint(),
                # the checkpoints' schedule (fixed_design_checks): first c_1, then the ratio 1 + eta
                "check_schedule": None if self._next_checkpoint() is None else [
                    self._checkpoint_at(1), 1.0 + FIXED_DESIGN_SPACING],
                "oblivious_design": bool(self.oblivious_design)}

    def _next_checkpoint(self) -> int | None:
        """The sample count of the fixed-design stop's next check (the first sample count
        at or past the next checkpoint ``c_(m+1)``, :meth:`_checkpoint`), None on the other
        paths (they check after every round)."""
        if self.dc is None or not self.swap or self.threshold != "fixed-design":
            return None
        return int(math.ceil(self._checkpoint_at(self._checkpoint() + 1) - 1e-9))

    def stop(self, status: str, message: str = "") -> None:
        super().stop(status, message)
        p = self.progress()
        self.certificate = {**self.certificate, "statistic": p["statistic"], "threshold_value": p["threshold"],
                            "stops_when": p["stops_when"], "delta_achieved": p["delta_achieved"],
                            "divergence": p["divergence"]}
        if self._noise_record is not None:
            self.certificate["noise_check"] = dict(self._noise_record)
            if self._noise_record["rejected"]:
                self.certificate["guarantee"] = (
                    f"the declared noise scale was rejected after {self._noise_record['at_sample']} samples; the "
                    "stop came from the unknown-variance rule (valid for Gaussian noise) after it")

    # ------------------------------------------------------------------ live studies
    def propose(self, n: int, pending: Any = (), rng: Any = None, avoid: Any = ()) -> list[Any]:
        """See :meth:`Exploration.propose`: the sampling rule applied one sample at a time to
        the told counts plus the pending ones (a virtual copy: this exploration does not
        change), so concurrent tickets go where the rule would send the next samples. The
        arms of ``avoid`` are skipped by the forced exploration (which would otherwise ask for
        a held team again and again while its ticket is out); the rule's own choice may still
        be one of them (the caller then falls back on its leader and challenger)."""

        n = check_int(n, "n", owner=f"{type(self).__name__}.propose", low=0)
        if n == 0:
            return []
        sim = self._virtual_copy(rng)
        avoid = list(avoid)
        if avoid and not (self.dc is not None and self.oblivious_design):
            mask = np.zeros(self.X.shape[0], dtype=bool)
            mask[self._arms_in(np.asarray([np.asarray(a) for a in avoid]))] = True
            sim._avoid = mask
        arms = list(pending)
        if arms:
            idx = self._arms_in(np.asarray([np.asarray(a) for a in arms])) if self.dc is None or not self.oblivious_design else None
            if idx is not None:
                for i in idx:
                    sim._virtual_pull(int(i))
        out = []
        extra: list[int] = []  # the teams completing the opening design proposed by this call
        for _ in range(n):
            if sim.phase == "init" or self.glr is None:
                lag = sim.basis[np.argsort(sim.T[sim.basis], kind="stable")]
                i = int(lag[0])
                if sim.phase == "init" and sim.T[i] > 0:
                    # every opening arm is told or out: where the told ones do not span the arms'
                    # space yet, an arm that does (the largest part outside their span) instead of
                    # a repeat, so an opening ticket held for long does not hold the study back
                    j = self._completing_arm(extra, list(pending) + list(avoid))
                    if j is not None:
                        i = j
                        extra.append(j)
                arm = sim._arms_out(np.array([i]))[0]
            else:
                sim._force_round = 1
                b = sim._next_batch_rule()
                arm = np.asarray(b.arms)[0]
                i = None
                if not (self.dc is not None and self.oblivious_design):
                    i = int(sim._arms_in(np.asarray(b.arms)[:1])[0])
            if i is not None:
                sim._virtual_pull(i)
            a = np.asarray(arm)
            out.append(a.astype(bool).copy() if a.ndim else int(a))
        return out

    def _spans(self, A: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """The null directions of the design ``A`` (orthonormal columns: the eigenvectors of
        its null eigenvalues; the arms' part in them is what ``A`` leaves out), or None when
        ``A`` spans the arms' space (its rank is that of the arms, ``len(basis)``)."""
        vals, vecs = np.linalg.eigh(A)
        big = vals > 1e-9 * max(float(vals.max()), 1.0)
        return None if int(np.count_nonzero(big)) >= self.basis.shape[0] else vecs[:, ~big]

    def _completing_arm(self, extra: list[int], out: list[Any]) -> int | None:
        """An arm that completes the span of the told design (with the arms ``extra``): the
        largest part outside it, not one of the arms ``out`` (in session); None when the told
        design with ``extra`` spans the arms' space or no arm adds to it."""
        A = self._A.copy()
        for j in extra:
            A += np.outer(self.X[j], self.X[j])
        null = self._spans(A)
        if null is None:
            return None
        part = np.linalg.norm(self.X @ null, axis=1)
        if out:  # (the arms out, by index: the index of _arms_in, arms outside the list skipped)
            if self.masks is None:
                ids = [int(a) for a in out if np.ndim(a) == 0]
            else:
                index = self._mask_index()
                ids = [index.get(np.asarray(a, dtype=bool).tobytes()) for a in out if np.ndim(a) == 1]
            part[[i for i in ids if i is not None and 0 <= i < part.shape[0]]] = -1.0
        j = int(np.argmax(part))
        return j if part[j] > 1e-6 else None

    def _virtual_pull(self, i: int) -> None:
        """A pull of arm ``i`` whose reward is not known yet, on a virtual copy: its count, the
        design matrix and the sample count move (the rule's proportions and ``A(w)`` see it),
        the estimate does not."""
        self.T[i] += 1
        self._A += np.outer(self.X[i], self.X[i])
        self.samples += 1

    def _virtual_copy(self, rng: Any) -> "LinearGLRExploration":

        memo = {id(self.solver): self.solver, id(self.problem): self.problem}
        for k in ("dc", "X", "masks"):
            v = getattr(self, k, None)
            if v is not None:
                memo[id(v)] = v
        sim = copy.deepcopy(self, memo)
        sim.rng = check_rng(rng)
        sim._pending = None
        return sim

    # ------------------------------------------------------------------ sampling rule
    @abstractmethod
    def proportions(self, m: int) -> NDArray[np.float64]:
        """The sampling rule's proportions over the arms for the next ``m`` samples."""

    def _cost_terms(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """At the empirical proportions ``w = T / t``: ``(num, Y, AwiY, alt)`` with
        ``num_x = ((x_hat - x)^T theta_hat + eps)_+``, ``Y`` rows ``x_hat - x`` and
        ``AwiY`` rows ``A(w)^{-1} y_x`` (``A(w) = A_t / t``)."""
        g = self.glr
        t = float(self.samples)
        Aw_inv = np.linalg.inv(self._A / t)
        mu = self.Xa @ g.theta
        Y = self.Xa[g.best] - self.Xa
        num = np.maximum(mu[g.best] - mu + self.solver.epsilon, 0.0)
        alt = np.einsum("ij,ij->i", Y, Y) > 1e-24
        return num, Y, Y @ Aw_inv, alt

    def transportation_costs(self) -> tuple[NDArray[np.float64], Any, NDArray[np.bool_]]:
        """``f_x(w) = num_x^2 / (2 sigma^2 ||y_x||^2_{A(w)^{-1}})`` (per-sample transportation
        cost, ``Z_x(t) = t f_x(T/t)``) and a function giving rows of its gradient
        ``df_x/dw_k = num_x^2 (x_k^T A(w)^{-1} y_x)^2 / (2 sigma^2 ||y_x||^4_{A(w)^{-1}})``
        (``grad(rows)``, shape (len(rows), K)): the sampling rules need the rows of the active
        alternatives only (one for Top-Two), not the K x K matrix."""
        num, Y, AwiY, alt = self._cost_terms()
        nA = np.maximum(np.einsum("ij,ij->i", AwiY, Y), 1e-300)
        f = np.where(alt, num**2 / (2 * self.sigma**2 * nA), np.inf)
        nA2 = np.where(alt, nA, 1.0) ** 2
        coef = np.where(alt, num**2 / (2 * self.sigma**2 * nA2), 0.0)
        X = self.X

        def grad(rows: Any) -> NDArray[np.float64]:
            r = np.atleast_1d(np.asarray(rows, dtype=np.intp))
            return (AwiY[r] @ X.T) ** 2 * coef[r, None]

        return f, grad, alt


# ---------------------------------------------------------------------- LinGame
@register_solver
class LinGame(LinearGLRSolver):
    """LinGame (Degenne, Menard, Shang & Valko, ICML 2020, Algorithm 2).

    At each round: the candidate answer ``i_t = x_hat`` (empirical best); the learner of
    that answer (AdaHedge over the arms, one learner per answer as in the paper) plays
    ``w_t``; the sampler best-responds with the closest alternative
    ``lam_t = argmin_{lam in Alt(i_t)} ||theta_hat - lam||^2_{V(w_t)}`` (half-space
    projection, eq. (2)); the learner receives the optimistic gains
    ``U_k = 1/2 max_{xi in C_t} (x_k^T (xi - lam_t))^2 / sigma^2
    = 1/2 (|x_k^T (theta_hat - lam_t)| + sqrt(2 c_t) sigma ||x_k||_{A_t^{-1}})^2 / sigma^2``
    (the confidence ellipsoid C_t with ``c_t = log t``: the exploration bonus of the paper,
    whose ``f(t)`` is a log t term); arms are pulled by cumulative tracking of ``sum_s w_s``.

    The learner's weights are mixed with the uniform distribution at rate
    ``gamma_t = min(1/2, t^{-1/2})`` before the best response and the tracking (so that
    ``V(w)`` stays well conditioned: without it the best response picks alternatives in
    directions where ``w`` has no mass, whose gains are orders of magnitude above the value
    of the game, and AdaHedge's regret, proportional to the range of the gains, swamps the
    average -- measured 64x T* log(1/delta) on ``soare`` d = 5 against 9x with the mixing).

    ``optimism=False`` (default) feeds the plain gains ``U_k = 1/2 (x_k^T (theta_hat -
    lam_t))^2 / sigma^2`` and replaces optimism by forced exploration (every basis arm at
    least ``sqrt(t) - d/2`` pulls), the usual substitute (Degenne et al. 2019, Section 3).
    Measured reason: at practical horizons the bonus dominates the gains by orders of
    magnitude on instances with small gaps -- on ``soare`` d = 5 the per-sample gain of the
    useful arm e_2 is about 5e-5 while ``c_t ||x_k||^2_{A_t^{-1}}`` of a rarely pulled arm is
    about ``12 / n_k`` -- so the optimistic learner samples nearly uniformly: 16.7x
    T* log(1/delta) with optimism against 6-7x without (valid threshold, seed 1).

    Parameters
    ----------
    delta : float, default 0.05
    epsilon : float, default 0.0
        Answers epsilon-good (Alt is the set where the answer is not epsilon-good).
    threshold : {"valid", "mixture", "fixed-design", "heuristic"}, default "valid"
        The GLR threshold. ``"valid"``: the best valid one for the run's sampling rule
        (``"fixed-design"`` on the oracle-randomized design of matroid-base classes too
        large to enumerate, :meth:`LinearGLRExploration._fixed_design_stop`; ``"mixture"``
        otherwise). ``"mixture"``: the d-dimensional mixture martingale
        (:mod:`combex.identification._linear_thresholds`), valid at every time on every path.
        ``"fixed-design"``: refused where the design adapts to the data. ``"heuristic"``:
        the papers' ``log((1 + log t) / delta)`` (not valid). ``info["threshold"]`` names
        the one that ran.
    ridge : float, default 1.0
        Smallest prior precision lam of the mixture threshold.
    n_ridges : int, default 6
        The mixture threshold is taken over the grid ``lam_j = ridge 10^j``, ``j < n_ridges``,
        at ``delta / n_ridges`` each, every direction using its smallest threshold (valid by
        the union bound; :func:`~combex.identification.linear_glr`). Measured on
        ``soare`` d = 5 (LinGame, 4 seeds): a single ``lam`` = 1, 10, 100, 1000 gives 470k,
        343k, 135k, 26k samples (20 seeds at 1000: 104k, no error): the best ``lam`` depends
        on the scale of ``A_t`` at the stop, which the grid adapts to at a ``log n_ridges`` cost.
    growth : float, default 0.01
        Round sizes ``max(1, floor(growth t))`` between checks (0: one sample per round).
    batch_size : int, optional
        Fixed round size (a study sending many evaluations at once); overrides growth.
    max_enumerate : int, default 5000
        Largest decision class enumerated for full-bandit problems.
    optimism : bool, default False
        Optimistic gains (the paper) or plain gains with forced exploration (see above).

    Examples
    --------
    >>> from combex.environments import soare
    >>> res = LinGame().run(soare(3, rng=0), rng=0)
    >>> res.answer, res.status, res.info["threshold"]
    (0, 'identified', 'mixture')
    """

    name: ClassVar[str] = "lingame"

    def __init__(self, delta: float = 0.05, epsilon: float = 0.0, *, threshold: str = "valid",
                 ridge: float = 1.0, n_ridges: int = 6, growth: float = 0.01, batch_size: int | None = None,
                 max_enumerate: int = 5000, optimism: bool = False, divergence: str = "auto",
                 sigma: float | None = None) -> None:
        self._init_common(delta, epsilon, threshold, ridge, growth, batch_size, max_enumerate, n_ridges,
                          divergence, sigma)
        self.optimism = check_bool(optimism, "optimism", owner=type(self).__name__)

    @property
    def forced_exploration(self) -> bool:  # type: ignore[override]
        return not self.optimism

    @property
    def exploration_class(self) -> type[Exploration]:  # type: ignore[override]
        return LinGameExploration


class LinGameExploration(LinearGLRExploration):
    """State of one :class:`LinGame` run."""

    def _setup(self) -> None:
        self.learners: dict[bytes, AdaHedge] = {}

    def proportions(self, m: int) -> NDArray[np.float64]:
        g = self.glr
        i = g.best
        key = self.Xa[i].tobytes()
        L = self.learners.get(key)
        if L is None:
            L = self.learners[key] = AdaHedge(self.X.shape[0])
        t = max(float(self.samples), 2.0)
        gamma = min(0.5, 1.0 / math.sqrt(t))
        w = (1.0 - gamma) * L.weights() + gamma / self.X.shape[0]
        d = self.X.shape[1]
        Vw = (self.X * w[:, None]).T @ self.X
        Vw += 1e-10 * max(float(np.trace(Vw)), 1e-12) * np.eye(d)
        Vw_inv = np.linalg.inv(Vw)
        mu = self.Xa @ g.theta
        Y = self.Xa[i] - self.Xa
        num = np.maximum(mu[i] - mu + self.solver.epsilon, 0.0)
        VY = Y @ Vw_inv
        nV = np.einsum("ij,ij->i", VY, Y)
        alt = np.einsum("ij,ij->i", Y, Y) > 1e-24
        cost = np.where(alt, num**2 / np.maximum(nV, 1e-300), np.inf)
        j = int(np.argmin(cost))
        # theta_hat - lam = (num / ||y||^2_{V^{-1}}) V^{-1} y
        diff = (num[j] / max(nV[j], 1e-300)) * (self.X @ VY[j])
        if self.solver.optimism:
            A_inv = np.linalg.inv(self._A)
            bonus = math.sqrt(2.0 * math.log(t)) * self.sigma * np.sqrt(
                np.maximum(np.einsum("ij,jk,ik->i", self.X, A_inv, self.X), 0.0))
        else:
            bonus = 0.0
        gains = 0.5 * (np.abs(diff) + bonus) ** 2 / self.sigma**2
        L.update(-m * gains)
        return w


# ---------------------------------------------------------------------- Top-Two
class LinearTopTwo(LinearGLRSolver):
    """A linear Top-Two sampler: leader = empirical best (EB), challenger = transportation
    cost (TC: ``argmin_x Z_x(t)``, Jourdan, Degenne, Baudry, de Heide & Kaufmann 2022).

    In a linear bandit the leader/challenger pair is best discriminated by arms other
    than the two (soare: the arm e_2), so the usual beta-coin between leader and
    challenger is replaced by the pull that most increases the challenger's per-sample
    cost: ``argmax_k df_c/dw_k`` at the empirical proportions (``f_c`` as in
    :class:`LinearFWSampling`) -- a Frank-Wolfe step on the challenger's constraint only.
    Forced exploration keeps every basis arm above ``sqrt(t) - d/2`` pulls.

    Parameters are those of :class:`LinGame`. Reached through the ``top-two`` solver on
    linear problems (the MAB/Best-K ``top-two`` dispatches here).
    """

    name: ClassVar[str] = "linear-top-two"
    forced_exploration: ClassVar[bool] = True
    #: On the oracle path of matroid-base classes: swap-neighbour arms and the swap challenger
    #: (:meth:`LinearGLRExploration._swap_proportions`).
    swap_sampling: ClassVar[bool] = True

    @property
    def exploration_class(self) -> type[Exploration]:  # type: ignore[override]
        return LinearTopTwoExploration


class LinearTopTwoExploration(LinearGLRExploration):
    """State of one :class:`LinearTopTwo` run."""

    def proportions(self, m: int) -> NDArray[np.float64]:
        f, grad, alt = self.transportation_costs()
        c = int(np.argmin(f))
        z = np.zeros(self.X.shape[0])
        z[int(np.argmax(grad(c)[0]))] = 1.0
        return z


# ---------------------------------------------------------------------- FW sampling
class LinearFWSampling(LinearGLRSolver):
    """Frank-Wolfe sampling (Wang, Tzeng & Proutiere, NeurIPS 2021, Algorithm 1), linear case.

    ``F(w) = min_x f_x(w)``, ``f_x(w) = ((x_hat - x)^T theta_hat + eps)_+^2 / (2 sigma^2
    ||x_hat - x||^2_{A(w)^{-1}})`` at the empirical proportions ``w = T / t``. With the
    r-subdifferential (the alternatives with ``f_x <= F + r_t``, here ``r_t = F t^{-1/4}``,
    relative so that it does not depend on the scale of the gaps), the direction is
    ``z = argmax_{z in simplex} min_{x active} <z - w, grad f_x(w)>`` (a small LP; the
    vertex ``argmax_k grad f_x`` when one alternative is active), and the cumulative
    proportions move by ``z`` (tracking). Forced exploration as in :class:`LinearTopTwo`.

    Parameters are those of :class:`LinGame`. Reached through the ``fw-sampling`` solver on
    linear problems.
    """

    name: ClassVar[str] = "linear-fw-sampling"
    forced_exploration: ClassVar[bool] = True
    swap_sampling: ClassVar[bool] = True

    @property
    def exploration_class(self) -> type[Exploration]:  # type: ignore[override]
        return LinearFWExploration


class LinearFWExploration(LinearGLRExploration):
    """State of one :class:`LinearFWSampling` run."""

    def proportions(self, m: int) -> NDArray[np.float64]:
        f, grad, alt = self.transportation_costs()
        k = self.X.shape[0]
        F = float(np.min(f))
        t = max(float(self.samples), 1.0)
        act = np.flatnonzero(alt & (f <= F * (1.0 + t ** -0.25)))
        z = np.zeros(k)
        if act.size <= 1:
            z[int(np.argmax(grad(int(np.argmin(f)))[0]))] = 1.0
            return z
        return simplex_maxmin(grad(act), self.T / t)


# ---------------------------------------------------------------------- Random design
@register_solver
class RandomDesign(LinearGLRSolver):
    """Teams drawn at random, blind to the scores, stopped by the GLR of a fixed design.

    Every sample (after one team per member of a spanning set) goes to a member of the
    class drawn by the linear oracle at standard Gaussian weights -- for teams of ``k`` out
    of ``n`` (:class:`~combex.oracles.TopK`), a uniformly random team
    (:meth:`LinearGLRExploration._design_batch`). The design never looks at the scores, so
    the stop may use the *fixed-design* threshold (:meth:`LinearGLRExploration.
    _fixed_design_stop`): per direction ``log(1/delta) + log C(k, s) C(n - k, s) + O(log
    log t)`` at the checkpoints ``c_m = 10 n 1.2^(m - 1)``, instead of the ``d/2 log t`` of
    the mixture threshold that an adaptive rule needs. This is the path Top-Two and FW
    sampling take on classes too large to enumerate; ``random-design`` takes it at every
    size.

    When it pays: on team problems of a lab's size the threshold saves more than
    adaptivity gains. Measured (12 workers, teams of 4, noise sd 10 per session not declared,
    10 seeds, the same seeds for both): the guide's lab (four workers 5 points above the rest,
    epsilon 5, delta 0.1) 456 sessions on average against top-two's 557; qualities 20, 19, 18,
    17, 15, ..., 8 (epsilon 5) 525 against 702; the same at epsilon 0, delta 0.05, 5,766
    against 6,224; 8 workers, teams of 3, 344 against 391. Adaptivity wins where a few
    alternatives are close and the rest far (measured in the linear results page: near ties
    among 6-8 members, 1.3-1.7x fewer samples for the adaptive rule). ``combex plan`` with
    both solvers compares them on the lab's assumptions.

    A study keeps the threshold valid: its tickets are drawn by the same blind rule and the
    order in which scores come back does not depend on them. Anything that picks the teams
    from the scores (a batch told that the design did not ask for, outside a study) switches
    the run to the mixture threshold for good, at the error budget left
    (:meth:`LinearGLRExploration._break_design`).

    Parameters as :class:`LinGame` (``threshold="valid"`` is ``"fixed-design"`` here;
    ``max_enumerate`` and ``optimism`` do not apply).

    Examples
    --------
    >>> from combex.environments import FullBandit
    >>> env = FullBandit([3.0, 2.0, 1.0, 0.0, 0.0, 0.0], k=2, noise="gaussian", sigma=1.0, rng=0)
    >>> res = RandomDesign(delta=0.1).run(env, rng=0)
    >>> res.status, res.info["threshold"], sorted(res.answer.nonzero()[0].tolist())
    ('identified', 'fixed-design', [0, 1])
    """

    name: ClassVar[str] = "random-design"
    arm_type: ClassVar[str] = "mask"
    families: ClassVar[tuple[str, ...]] = ("full-bandit",)
    #: the oracle-randomized design (:meth:`LinearGLRExploration._design_batch`) at every class size
    random_design: ClassVar[bool] = True
    swap_sampling: ClassVar[bool] = True

    def __init__(self, delta: float = 0.05, epsilon: float = 0.0, *, threshold: str = "valid",
                 ridge: float = 1.0, n_ridges: int = 6, growth: float = 0.01, batch_size: int | None = None,
                 divergence: str = "auto", sigma: float | None = None) -> None:
        self._init_common(delta, epsilon, threshold, ridge, growth, batch_size, 2, n_ridges, divergence, sigma)

    @property
    def exploration_class(self) -> type[Exploration]:  # type: ignore[override]
        return RandomDesignExploration


class RandomDesignExploration(LinearGLRExploration):
    """State of one :class:`RandomDesign` run (the loop's oracle-randomized design)."""

    def proportions(self, m: int) -> NDArray[np.float64]:
        """Uniform over the listed arms (the spanning set of members): the design's own
        samples are drawn by :meth:`_design_batch` over the whole class, so the loop never
        tracks proportions on this path."""
        return np.full(self.X.shape[0], 1.0 / self.X.shape[0])


# ---------------------------------------------------------------------- Oracle sampler
@register_solver
class OracleSampler(LinearGLRSolver):
    """Tracks a fixed allocation ``allocation`` (by default the optimal p* of the simulated
    environment's truth) and stops by the GLR rule: the yardstick isolating the sampling
    rule from the stopping rule.

    Parameters
    ----------
    allocation : array of shape (K,), optional
        Proportions over the arms (or the enumerated super-arms). None: ``run`` takes the
        optimal allocation of :func:`~combex.identification.characteristic_time` at the
        environment's true ``theta`` (teams: the true member means) and noise scale,
        through :meth:`with_truth`; ``start`` on a problem needs it given.
    Other parameters as :class:`LinGame`.
    """

    name: ClassVar[str] = "oracle-sampler"
    oracle_path: ClassVar[bool] = False

    def __init__(self, allocation: Any = None, delta: float = 0.05, epsilon: float = 0.0, *, threshold: str = "valid",
                 ridge: float = 1.0, n_ridges: int = 6, growth: float = 0.01, batch_size: int | None = None,
                 max_enumerate: int = 5000, divergence: str = "auto", sigma: float | None = None) -> None:
        self._init_common(delta, epsilon, threshold, ridge, growth, batch_size, max_enumerate, n_ridges,
                          divergence, sigma)
        if allocation is None:
            self.allocation = None
            return
        p = np.asarray(allocation, dtype=np.float64).reshape(-1)
        if p.size < 2 or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
            raise param_error("allocation", "OracleSampler", "a nonnegative vector with a positive sum, or None",
                              allocation)
        self.allocation = p / p.sum()

    def with_truth(self, env: Any) -> "OracleSampler":
        """See :meth:`Solver.with_truth`: a copy tracking the optimal allocation of ``env``'s
        truth when ``allocation`` is None."""
        if self.allocation is not None:
            return self

        try:
            if getattr(env, "arm_type", "index") == "mask":
                X, _, _ = _team_arms(env.problem, self.max_enumerate, "OracleSampler")
                theta = np.asarray(env.means(), dtype=np.float64)
                sigma = true_noise_scale(env, int(X.sum(axis=1).max()))
            else:
                X, theta, sigma = env.features, env.theta, true_noise_scale(env, 1)
        except AttributeError:
            X = theta = sigma = None
        if X is None or theta is None or sigma is None:
            raise InvalidParameterError("OracleSampler needs the allocation: give allocation=... or a simulated linear "
                                        "or team environment whose truth (theta, noise scale) is known.")
        lb = characteristic_time(np.asarray(X, dtype=np.float64), np.asarray(theta, dtype=np.float64), sigma=sigma,
                                 epsilon=float(self.epsilon))
        params = self.get_params()
        params["allocation"] = lb.allocation
        return type(self)(**params)

    def start(self, problem: Any, *, rng: Any = None) -> "LinearGLRExploration":
        if self.allocation is None:
            raise InvalidParameterError("OracleSampler.start needs allocation=... (the proportions to track); run() "
                                        "on a simulated environment takes the optimal allocation of its truth.")
        return super().start(problem, rng=rng)

    @property
    def exploration_class(self) -> type[Exploration]:  # type: ignore[override]
        return OracleSamplerExploration


class OracleSamplerExploration(LinearGLRExploration):
    def _setup(self) -> None:
        if self.solver.allocation.shape[0] != self.X.shape[0]:
            raise InvalidParameterError(
                f"The 'allocation' parameter of OracleSampler must have {self.X.shape[0]} entries "
                f"(one per arm). Got {self.solver.allocation.shape[0]} instead."
            )

    def proportions(self, m: int) -> NDArray[np.float64]:
        return self.solver.allocation


# ====================================================================== RAGE
@register_solver
class RAGE(_LinearTruthRun, Solver):
    """RAGE (Fiez, Jain, Jamieson & Ratliff, NeurIPS 2019, Algorithm 1): randomized adaptive
    gap elimination.

    Round l = 1, 2, ... on the active set Z_l (all arms at first): the XY-optimal design
    ``lam_l = argmin_lam max_{z, z' in Z_l} ||z - z'||^2_{A(lam)^{-1}}`` of value
    ``rho_l`` (:func:`combex.allocations.xy_optimal_design`), the sample size
    ``N_l = ceil(2 sigma^2 4^{l+1} (1 + omega) rho_l log(l (l + 1) |Z_l|^2 / delta))``
    (the paper's ``2 (2^{l+1})^2 (1 + eps) rho log(l^2 |Z|^2 / delta)`` with our union bound
    ``sum_l delta / (l (l + 1)) = delta``, which keeps the total error <= delta where
    ``sum_l 1 / l^2 = 1.64`` does not), rounded to pulls by efficient apportionment (the
    paper's ROUND with ``omega``), the least-squares estimate from the round's samples only,
    and elimination of every z with ``(z' - z)^T theta_hat > r(z' - z)`` for some active
    z', ``r(y) = sigma sqrt(2 ||y||^2_{A_l^{-1}} log(l (l + 1) |Z_l|^2 / delta))`` computed
    with the *rounded* design (valid whatever the rounding's quality; about ``2^{-(l+1)}``).
    Stops when one arm is left, or (epsilon > 0) when ``r(z - z_hat) <= epsilon`` for every
    active z (then z_hat is epsilon-good on the same event).

    Parameters
    ----------
    delta : float, default 0.05
    epsilon : float, default 0.0
    omega : float, default 0.1
        Rounding slack of N_l (the paper's epsilon of ROUND).
    design_method : {"auto", "cvxpy", "frank-wolfe"}, default "auto"
    max_enumerate : int, default 5000

    Examples
    --------
    >>> from combex.environments import soare
    >>> res = RAGE().run(soare(3, rng=0), rng=0)
    >>> res.answer, res.status
    (0, 'identified')
    """

    name: ClassVar[str] = "rage"
    arm_type: ClassVar[str] = "index"
    families: ClassVar[tuple[str, ...]] = ("linear", "full-bandit")

    def __init__(self, delta: float = 0.05, epsilon: float = 0.0, *, omega: float = 0.1,
                 design_method: str = "auto", max_enumerate: int = 5000) -> None:
        owner = type(self).__name__
        self.delta = check_probability(delta, "delta", owner=owner)
        self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)
        self.omega = check_float(omega, "omega", owner=owner, low=0.0)
        self.design_method = check_choice(design_method, "design_method", ("auto", "cvxpy", "frank-wolfe"), owner=owner)
        self.max_enumerate = check_int(max_enumerate, "max_enumerate", owner=owner, low=2)

    def start(self, problem: Any, *, rng: Any = None) -> "RAGEExploration":
        return RAGEExploration(self, problem, rng)

    @property
    def exploration_class(self) -> type[Exploration]:
        return RAGEExploration


class RAGEExploration(Exploration):
    """State of one :class:`RAGE` run (one batch per round)."""

    stops_when = "one arm left, or every active arm within epsilon"

    solver: RAGE

    def __init__(self, solver: RAGE, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self.X, self.masks, self.sigma = _team_arms(self.problem, solver.max_enumerate, "RAGE")
        if self.sigma is None:
            raise InvalidParameterError(
                "RAGE needs a known noise scale (its rounds' sample sizes are proportional to sigma^2), but the "
                "problem's noise model declares none. Declare the scale, or use a GLR solver ('top-two', "
                "'fw-sampling', 'lingame'), which estimates it."
            )
        self._round: dict[str, Any] = {}
        self.active = np.arange(self.X.shape[0])
        self.level = 1
        self.T = np.zeros(self.X.shape[0], dtype=np.int64)
        self.best = 0
        self.history: list[dict[str, Any]] = []

    @property
    def pulls(self) -> NDArray[np.int64]:
        if self.masks is None:
            return self.T.copy()
        return (self.T[:, None] * self.masks).sum(axis=0).astype(np.int64)

    @property
    def recommendation(self) -> Any:
        return self.masks[self.best].copy() if self.masks is not None else int(self.best)

    def _log_term(self) -> float:
        l, n = self.level, self.active.shape[0]
        return math.log(l * (l + 1) * n * n / self.solver.delta)

    def _next_batch(self) -> Batch:

        Z = self.X[self.active]
        ia, ib = np.triu_indices(Z.shape[0], 1)
        Y = Z[ia] - Z[ib]
        ys = float(np.max(np.linalg.norm(Y, axis=1)))
        des = _design(self.X, Y / ys, self.solver.design_method)
        rho = float(des.value) * ys * ys
        N = int(math.ceil(2.0 * self.sigma**2 * 4.0 ** (self.level + 1) * (1.0 + self.solver.omega) * rho
                          * self._log_term()))
        N = max(N, int(np.count_nonzero(des.weights > 0)))
        counts = apportion(des.weights, N)
        idx = np.flatnonzero(counts)
        self._round = {"rho": rho, "N": N}
        # each arm's pulls told in up to 4 sums, so the declared noise scale can be tested
        # (a single sum per arm leaves no degree of freedom); the round's estimate is the same
        parts = np.minimum(counts[idx], 4)
        rep = np.repeat(idx, parts)
        split = np.concatenate([np.diff(np.linspace(0, c, p + 1).round().astype(np.int64))
                                for c, p in zip(counts[idx].tolist(), parts.tolist())])
        arms = self.masks[rep] if self.masks is not None else rep
        return Batch(arms, split.astype(np.int64))

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = np.asarray(batch.arms)
        if self.masks is None:
            idx = arms.astype(np.intp)
        else:
            lookup = {m.tobytes(): i for i, m in enumerate(self.masks)}
            idx = np.asarray([lookup[np.asarray(m, dtype=bool).tobytes()] for m in arms], dtype=np.intp)
        c = batch.counts.astype(np.float64)
        np.add.at(self.T, idx, batch.counts)
        Xi = self.X[idx]
        A = (Xi * c[:, None]).T @ Xi
        b = Xi.T @ reward_sums
        P = _PseudoInverse(A)
        theta = P.inv @ b
        Z = self.X[self.active]
        mu = Z @ theta
        log_term = self._log_term()
        # r(z' - z) for all active pairs; eliminate z if some z' beats it by more than r
        D = Z[:, None, :] - Z[None, :, :]  # D[a, b] = z_a - z_b
        n2 = P.norms_sq(D.reshape(-1, Z.shape[1])).reshape(Z.shape[0], Z.shape[0])
        r = self.sigma * np.sqrt(2.0 * n2 * log_term)
        beats = (mu[:, None] - mu[None, :]) > r  # beats[a, b]: z_a beats z_b
        np.fill_diagonal(beats, False)
        keep = ~beats.any(axis=0)
        if not keep.any():  # cannot happen (the argmax is never beaten); guard round-off
            keep[int(np.argmax(mu))] = True
        self.rounds += 1
        hb = int(np.argmax(mu))
        self.best = int(self.active[hb])
        self.history.append({"level": self.level, "active": int(self.active.shape[0]), **self._round,
                             "kept": int(keep.sum())})
        if self.record_trace:
            self.record(level=self.level, active=int(keep.sum()))
        eps = self.solver.epsilon
        eps_done = eps > 0 and bool(np.all(r[:, hb][keep] <= eps))
        self.active = self.active[keep]
        if self.best not in set(self.active.tolist()):
            self.best = int(self.active[int(np.argmax((self.X[self.active] @ theta)))])
        if self.active.shape[0] == 1 or eps_done:
            self.best = int(self.active[0]) if self.active.shape[0] == 1 else self.best
            self.certificate = {"level": self.level, "active": int(self.active.shape[0]), "epsilon": eps}
            self.stop("identified", "one arm left" if self.active.shape[0] == 1 else "every active arm within epsilon")
            return
        self.level += 1

    def _info(self) -> dict[str, Any]:
        return {"levels": self.level, "history": list(self.history), "sigma": self.sigma}

    def _extra_state(self) -> dict[str, Any]:
        return {"active": self.active.copy(), "level": self.level, "T": self.T.copy(), "best": self.best,
                "history": list(self.history), "round": dict(self._round)}

    def _load_extra_state(self, st: dict[str, Any]) -> None:
        self.X, self.masks, self.sigma = _team_arms(self.problem, self.solver.max_enumerate, "RAGE")
        self.active = np.asarray(st["active"], dtype=np.intp).copy()
        self.level = int(st["level"])
        self.T = np.asarray(st["T"], dtype=np.int64).copy()
        self.best = int(st["best"])
        self.history = list(st["history"])
        self._round = dict(st["round"])
