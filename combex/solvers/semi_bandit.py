"""Best-K identification and combinatorial pure exploration with semi-bandit feedback.

Algorithms of Jiang, Li & Qiao, "Practical algorithms for best-K identification in
multi-armed bandits" (2017) and the baselines they compare with:

========================  ===============  ==============================================
solver (CLI name)         class            rule
========================  ===============  ==============================================
``lil-randlucb``          LilRandLUCB      Algorithm 1 (asymmetric LIL radii, randomized
                                           choice between h_t and l_t)
``lil-clucb``             LilCLUCB         Algorithms 2 (top-K) and 3 (any decision class
                                           through its maximization oracle)
``lucb``                  LUCB             LUCB1 of Kalyanakrishnan et al. (2012)
``lil-lucb``              LilLUCB          lil'LUCB of Jamieson & Nowak (2014), any K
``lucb++``                LUCBPlusPlus     LUCB++ of Simchowitz, Jamieson & Recht (2017)
``lil-ucb``               LilUCB           lil'UCB of Jamieson et al. (2014), K = 1
========================  ===============  ==============================================

Every solver takes ``delta``, the guaranteed error probability (the paper's nu; default
0.05, as every PAC solver of combex). The LIL solvers' radii have a confidence constant of
their own, Lemma 2.1's delta, here ``lil_delta`` (the paper writes it delta); the parameter
modes (Section 5 of the paper) say how ``lil_delta`` follows from ``delta``:

* ``mode="faithful"``: Lemma 2.1's ``epsilon`` defaults to 0.01 (the value of the
  experiments of Jamieson et al. 2014, near the minimizer of the radius for an error
  probability of 0.01) and ``lil_delta`` is chosen so that the error probability
  guaranteed by the algorithm's theorem equals ``delta``:

  - lil'RandLUCB, LUCB++ (Theorem 3.1; union bound over K radii with lil_delta/(2K) and
    N-K with lil_delta/(2(N-K))): ``c_eps * lil_delta <= delta``, so
    ``lil_delta = delta / c_eps``;
  - lil'CLUCB, lil'LUCB (Theorem 4.1; N radii with lil_delta/N):
    ``c_eps * lil_delta^(1+eps) / N^eps <= delta``, so
    ``lil_delta = (delta N^eps / c_eps)^(1/(1+eps))``;
  - lil'UCB (Theorem 2 of Jamieson et al. 2014):
    ``4 sqrt(c_eps lil_delta) + 4 c_eps lil_delta <= delta``, so
    ``lil_delta = (sqrt(1 + delta) - 1)^2 / (4 c_eps)``, with ``beta = 1`` and
    ``lambda = ((2 + beta)/beta)^2 = 9`` (the "theoretically motivated" setting of that paper);
  - LUCB: no Lemma 2.1 constant; its radius uses ``delta`` itself (its guarantee).

  Every confidence argument ``omega`` given to U must lie in Lemma 2.1's range
  ``(0, log(1 + eps)/e)`` and ``eps`` in (0, 1); otherwise a clear error is raised. A
  ``lil_delta`` given explicitly must keep the guaranteed error at most ``delta``.
* ``mode="heuristic"``: ``epsilon = 0`` and ``lil_delta = delta`` ("similar to previous
  experiments by Jamieson et al.", Section 5.1); for lil'UCB the heuristic of Jamieson et
  al. (2014): ``epsilon = 0, beta = 1/2, lambda = 1 + 10/N, lil_delta = delta/5``. No
  guarantee; the error rates are measured, not assumed. LUCB has no heuristic version in
  the paper: both modes coincide.

``nu`` is a deprecated alias of ``delta`` (same meaning; a :class:`DeprecationWarning`).

The LIL radius is U(t, omega) of Lemma 2.1 with the ``+2`` of Section 5
(:class:`combex.estimation._lil.LILRadius`), with sigma the sub-Gaussian scale of one reward
(``sigma=None``: the problem's ``noise.sigma``; 0.5 for the paper's Gaussian rewards of
variance 1/4).

Answers are bool masks over the N arms (the chosen K-set, or the chosen member of the
decision class; for K = 1 a mask with one entry). Every solver asks for the N arms once
first (one batch), then for one or two arms per round; one round is one stopping check
(``Result.rounds``). Per-round work is a constant number of numpy passes over the N arms
(no Python loop over arms): the top-K set is maintained incrementally (only pulled arms can
change it), and radii are updated only for pulled arms.

Why one file of more than 1,000 lines: the six solvers share one exploration (arm
statistics, the incremental top-K set, the LIL radii, the High/Low split) and differ in a
hook or two each (which arm of the pair to pull, which radius); the table above is the
whole map, and splitting it would put one paper's algorithms in several files.
"""

from __future__ import annotations

import inspect
import math
import sys
import warnings
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._validation import (
    check_choice,
    check_float,
    check_int,
    check_probability,
    param_error,
)
from ..estimation import LILRadius, check_lil_lemma, lil_c_epsilon
from ..exceptions import InvalidParameterError, OracleError, StateError
from ..identification import Query
from ._base import Batch, Exploration, Solver
from ._registry import register_solver

__all__ = ["LilRandLUCB", "LilCLUCB", "LUCB", "LilLUCB", "LUCBPlusPlus", "LilUCB", "FAITHFUL_EPSILON", "DEFAULT_DELTA"]

_MODES = ("faithful", "heuristic")

#: Lemma 2.1's epsilon in faithful mode when none is given.
FAITHFUL_EPSILON = 0.01

#: The guaranteed error probability when none is given (every PAC solver's default).
DEFAULT_DELTA = 0.05

#: k1 of LUCB1's radius (Kalyanakrishnan et al. 2012).
LUCB_K1 = 1.25

_REL_TOL = 1e-12


# ============================================================================ helpers
def _top_k_mask(values: NDArray[np.float64], k: int) -> NDArray[np.bool_]:
    """Bool mask of k entries with the largest values (ties arbitrary, deterministic)."""
    m = np.zeros(values.shape[0], dtype=bool)
    m[np.argpartition(-values, k - 1)[:k]] = True
    return m


def _problem_sigma(solver_sigma: float | None, problem: Any) -> float:
    if solver_sigma is not None:
        return float(solver_sigma)
    noise = getattr(problem, "noise", None)
    sigma = getattr(noise, "sigma", None)
    if sigma is None:
        raise InvalidParameterError(
            "The problem has no noise model with a sigma; give the solver's 'sigma' parameter."
        )
    return float(sigma)


def _resolve_delta(delta: Any, nu: Any, owner: str) -> float:
    """The guaranteed error probability from ``delta`` and its deprecated alias ``nu``."""
    if nu is not None:

        level, frame = 1, sys._getframe(0)
        while frame is not None and frame.f_globals.get("__name__") == __name__:  # the caller's line
            level, frame = level + 1, frame.f_back
        warnings.warn(
            f"The 'nu' parameter of {owner} is deprecated; use 'delta' (the same guaranteed error probability).",
            DeprecationWarning,
            stacklevel=level,
        )
        if delta is not None:
            raise InvalidParameterError(
                f"The 'nu' parameter of {owner} is a deprecated alias of 'delta'; give only 'delta'. Got "
                f"delta={delta!r} and nu={nu!r} instead."
            )
        return check_probability(nu, "nu", owner=owner)
    return check_probability(DEFAULT_DELTA if delta is None else delta, "delta", owner=owner)


# ============================================================================ solvers
def _const(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


# Count arrays of the one- and two-arm batches (read-only, shared: a Batch never changes).
_ONE = _const(np.ones(1, dtype=np.int64))
_TWO = _const(np.ones(2, dtype=np.int64))
#: Most one- and two-arm batches an exploration keeps for reuse.
_BATCH_CACHE = 4096


class _SemiBanditSolver(Solver):
    """Common settings and validation (see the module docstring for the modes)."""

    arm_type: ClassVar[str] = "index"
    exploration_class: ClassVar[type[Exploration]]
    families: ClassVar[tuple[str, ...]] = ("semi-bandit", "mips")
    #: The confidence bounds hold for any sampling adapted to the told history: a live
    #: study folds each told evaluation at once (the eager policy of combex.studies).
    eager_tells: ClassVar[bool] = True

    def __init__(
        self,
        K: int = 1,
        *,
        delta: float | None = None,
        mode: str = "faithful",
        epsilon: float | None = None,
        lil_delta: float | None = None,
        sigma: float | None = None,
        nu: float | None = None,
    ) -> None:
        owner = type(self).__name__
        self.K = check_int(K, "K", owner=owner, low=1)
        self.delta = _resolve_delta(delta, nu, owner)
        self.mode = check_choice(mode, "mode", _MODES, owner=owner)
        if epsilon is not None:
            if self.mode == "faithful":
                epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, high=1.0, closed="neither")
            else:
                epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, high=1.0, closed="left")
        self.epsilon = epsilon
        self.lil_delta = None if lil_delta is None else check_probability(lil_delta, "lil_delta", owner=owner)
        self.sigma = None if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")

    def get_params(self) -> dict[str, Any]:
        """:meth:`Solver.get_params` without the deprecated alias ``nu`` (its value is
        ``delta``)."""

        sig = inspect.signature(type(self).__init__).parameters
        return {p: getattr(self, p) for p, v in sig.items()
                if p not in ("self", "nu") and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)}

    # ------------------------------------------------------------------ parameters
    def _check_k(self, n_arms: int) -> int:
        n = check_int(n_arms, "n_arms", owner=type(self).__name__, low=2)
        return check_int(self.K, "K", owner=type(self).__name__, low=1, high=n - 1)

    def _omegas(self, n: int, k: int, lil_delta: float) -> dict[str, float]:
        """Subclass hook (the Lemma 2.1 solvers); LUCB defines its own confidence_parameters."""
        raise TypeError(f"{type(self).__name__} has no _omegas")

    def _error_bound(self, n: int, k: int, eps: float, lil_delta: float) -> float:
        """Subclass hook (the Lemma 2.1 solvers); LUCB defines its own confidence_parameters."""
        raise TypeError(f"{type(self).__name__} has no _error_bound")

    def _faithful_lil_delta(self, n: int, k: int, eps: float) -> float:
        """Subclass hook (the Lemma 2.1 solvers); LUCB defines its own confidence_parameters."""
        raise TypeError(f"{type(self).__name__} has no _faithful_lil_delta")

    def confidence_parameters(self, n_arms: int) -> dict[str, Any]:
        """Lemma 2.1's epsilon and delta (``lil_delta``), the confidence arguments omega and
        the guaranteed error bound used on a problem with ``n_arms`` arms (validating K
        against N and, in faithful mode, the range of Lemma 2.1).

        Returns
        -------
        dict with keys ``mode, delta, epsilon, lil_delta, omegas, error_bound``
        (``delta`` is the solver's guaranteed error probability; ``error_bound``, the
        error probability the theorem guarantees with these constants, is at most
        ``delta`` in faithful mode and None in heuristic mode).
        """
        owner = type(self).__name__
        n = int(n_arms)
        k = self._check_k(n)
        if self.mode == "faithful":
            eps = FAITHFUL_EPSILON if self.epsilon is None else float(self.epsilon)
            lil = self._faithful_lil_delta(n, k, eps) if self.lil_delta is None else float(self.lil_delta)
            bound = self._error_bound(n, k, eps, lil)
            if bound > self.delta * (1.0 + _REL_TOL):
                raise InvalidParameterError(
                    f"The 'lil_delta' parameter of {owner} gives a guaranteed error probability of "
                    f"{bound!r} > delta={self.delta!r} in faithful mode (epsilon={eps!r}, N={n}). Got "
                    f"{lil!r} instead; leave lil_delta=None to derive it from delta."
                )
            omegas = self._omegas(n, k, lil)
            for name, w in omegas.items():
                check_lil_lemma(eps, w, name=f"omega_{name}", owner=owner)
        else:
            eps = 0.0 if self.epsilon is None else float(self.epsilon)
            lil = self.delta if self.lil_delta is None else float(self.lil_delta)
            bound = None
            omegas = self._omegas(n, k, lil)
        return {"mode": self.mode, "delta": self.delta, "epsilon": eps, "lil_delta": lil, "omegas": omegas,
                "error_bound": bound}

    def start(self, problem: Any, *, rng: Any = None) -> Exploration:
        return self.exploration_class(self, problem, rng)

    def query(self, problem: Any) -> Query:
        """The ``K`` best arms (or the best member of the decision class): T*(mu) of the
        Gaussian model (:func:`combex.identification.bandit_characteristic_time`)."""
        dc = getattr(self, "decision_class", None)
        return Query("arms", self.delta, float(self.tolerance), K=self.K if dc is None else 1, decision_class=dc,
                     divergence="gaussian")


class _Theorem31Solver(_SemiBanditSolver):
    """Radii U(T, lil_delta/(2(N-K))) in High_t and U(T, lil_delta/(2K)) in Low_t;
    error <= c_eps lil_delta."""

    def _omegas(self, n: int, k: int, lil_delta: float) -> dict[str, float]:
        return {"high": lil_delta / (2.0 * (n - k)), "low": lil_delta / (2.0 * k)}

    def _error_bound(self, n: int, k: int, eps: float, lil_delta: float) -> float:
        return lil_c_epsilon(eps) * lil_delta

    def _faithful_lil_delta(self, n: int, k: int, eps: float) -> float:
        return self.delta / lil_c_epsilon(eps)


class _Theorem41Solver(_SemiBanditSolver):
    """Radius U(T, lil_delta/N) for every arm; error <= c_eps lil_delta^(1+eps) / N^eps."""

    def _omegas(self, n: int, k: int, lil_delta: float) -> dict[str, float]:
        w = lil_delta / n
        return {"high": w, "low": w}

    def _error_bound(self, n: int, k: int, eps: float, lil_delta: float) -> float:
        return lil_c_epsilon(eps) * lil_delta ** (1.0 + eps) / n**eps

    def _faithful_lil_delta(self, n: int, k: int, eps: float) -> float:
        # solve c_eps lil_delta^(1+eps) / N^eps = delta, shrunk by a hair against rounding
        return (self.delta * n**eps / lil_c_epsilon(eps)) ** (1.0 / (1.0 + eps)) * (1.0 - 1e-12)


# ============================================================================ explorations
class _ArmStatsExploration(Exploration):
    """Per-arm counts T, reward sums S and means mu; the first batch asks every arm once.

    Subclasses implement ``_setup`` (constants from the solver and problem; also run on
    resume), ``_initialize`` (when every arm has a sample), ``_refresh(changed)`` (after a
    round, for the arms whose counts changed), ``_step`` (stopping check and next arms),
    and list their state arrays in ``_arrays``.
    """

    _arrays: ClassVar[tuple[str, ...]] = ("T", "S", "mu", "_next", "_next_counts")
    _scalars: ClassVar[tuple[str, ...]] = ("_ready",)

    def __init__(self, solver: Solver, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._setup()
        n = self.N
        self.T = np.zeros(n, dtype=np.int64)
        self.S = np.zeros(n, dtype=np.float64)
        self.mu = np.zeros(n, dtype=np.float64)
        self._next = np.arange(n, dtype=np.intp)
        self._next_counts = np.ones(n, dtype=np.int64)
        self._ready = False
        self._allocate()

    # ------------------------------------------------------------------ hooks
    def _setup(self) -> None:
        p = self.problem
        if getattr(p, "arm_type", "index") != "index":
            raise InvalidParameterError(
                f"{type(self.solver).__name__} needs a problem with index arms (semi-bandit "
                f"feedback). Got arm_type={p.arm_type!r} instead."
            )
        self.N = int(p.n_arms)
        # one immutable Batch per next arm (pair) of the per-round path, made once
        self._batches: dict[Any, Batch] = {}
        self._batch: Batch | None = None

    def _allocate(self) -> None:
        pass

    def _single(self, i: int) -> None:
        """Next: one pull of arm i."""
        b = self._batches.get(i)
        if b is None:
            b = Batch(_const(np.array([i], dtype=np.intp)), _ONE)
            if len(self._batches) < _BATCH_CACHE:
                self._batches[i] = b
        self._batch = b
        self._next, self._next_counts = b.arms, _ONE

    def _pair(self, h: int, l: int) -> None:
        """Next: one pull of arm h and one of arm l (one batch)."""
        b = self._batches.get((h, l))
        if b is None:
            b = Batch(_const(np.array([h, l], dtype=np.intp)), _TWO)
            if len(self._batches) < _BATCH_CACHE:
                self._batches[(h, l)] = b
        self._batch = b
        self._next, self._next_counts = b.arms, _TWO

    @abstractmethod
    def _initialize(self) -> None:
        """Subclass hook."""

    @abstractmethod
    def _refresh(self, changed: NDArray[np.intp]) -> None:
        """Subclass hook."""

    @abstractmethod
    def _step(self) -> None:
        """Subclass hook."""

    # ------------------------------------------------------------------ contract
    def _next_batch(self) -> Batch:
        b = self._batch
        if b is not None and b.arms is self._next:
            return b
        return Batch(self._next, self._next_counts)

    def _fold(self, batch: Batch, sums: NDArray[np.float64]) -> Any:
        """Add the batch to T and S; return the arms whose counts changed: a list of ints
        for a batch of one or two arms (the per-round fast path), else an index array."""
        arms = np.asarray(batch.arms)
        owner = type(self.solver).__name__
        trusted = self._told_pending  # the batch ask() made: its arms were checked then
        if not trusted and (arms.ndim != 1 or (arms.size and arms.dtype.kind not in "iu")):
            raise param_error("arm", owner, "an arm index (int)", arms)
        counts = np.asarray(batch.counts)
        n = self.N
        if arms.shape[0] <= 2:
            al, cl, sl = arms.tolist(), counts.tolist(), sums.tolist()
            if len(al) == 2 and al[0] == al[1]:
                al, cl, sl = al[:1], [cl[0] + cl[1]], [sl[0] + sl[1]]
            out = []
            for a, c, x in zip(al, cl, sl):
                if not trusted:
                    if not 0 <= a < n:
                        raise param_error("arm", owner, f"an int in the range [0, {n - 1}]", a)
                    if c < 0:
                        raise param_error("count", owner, "a non-negative int", c)
                if c:
                    self.T[a] += c
                    self.S[a] += x
                    out.append(a)
            return out
        if arms.min() < 0 or arms.max() >= n:
            bad = arms[(arms < 0) | (arms >= n)][0]
            raise param_error("arm", owner, f"an int in the range [0, {n - 1}]", int(bad))
        if counts.min() < 0:
            raise param_error("count", owner, "a non-negative int", int(counts.min()))
        np.add.at(self.T, arms, counts)
        np.add.at(self.S, arms, sums)
        return np.unique(arms[counts > 0]).astype(np.intp)

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        changed = self._fold(batch, reward_sums)
        if not self._ready:
            missing = np.flatnonzero(self.T == 0)
            if missing.size:
                self._next = missing.astype(np.intp)
                self._next_counts = np.ones(missing.size, dtype=np.int64)
                return
            np.divide(self.S, self.T, out=self.mu)
            self._initialize()
            self._ready = True
        elif len(changed):
            if isinstance(changed, list):
                for i in changed:
                    self.mu[i] = self.S[i] / self.T[i]
            else:
                self.mu[changed] = self.S[changed] / self.T[changed]
            self._refresh(changed)
        self.rounds += 1
        self._step()

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T

    # ------------------------------------------------------------------ save / resume
    def _extra_state(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: np.array(getattr(self, name), copy=True) for name in self._arrays}
        for name in self._scalars:
            v = getattr(self, name)
            out[name] = v.item() if isinstance(v, np.generic) else v
        return out

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._setup()
        self._allocate()
        for name in self._arrays:
            if name not in state:
                raise StateError(f"The saved state has no {name!r} entry.")
            setattr(self, name, np.array(state[name], copy=True))
        for name in self._scalars:
            setattr(self, name, state[name])
        self._ready = bool(self._ready)
        if self.T.shape != (self.N,):
            raise StateError(f"The saved state has counts for {self.T.shape[0]} arms, not {self.N}.")
        self._after_load()

    def _after_load(self) -> None:
        pass


class _BestKExploration(_ArmStatsExploration):
    """LUCB-style exploration over the top-K set High_t (= M_t).

    State: ``high`` (bool mask of High_t), ``hm`` (mu on High_t, +inf elsewhere), ``lm``
    (mu on Low_t, -inf elsewhere), radii ``r_high`` / ``r_low`` (the radius each arm gets
    when in High_t / Low_t). High_t is kept equal to the top-K set of mu: after a round only
    the pulled arms moved, so swapping the lowest High arm with the highest Low arm while
    they are out of order restores it (each swap raises the High total; at most two swaps
    per round).
    """

    _arrays = _ArmStatsExploration._arrays + ("high", "hm", "lm", "r_high", "r_low", "_lcb", "_ucb")
    _scalars = _ArmStatsExploration._scalars + ("_gap", "_h", "_l")

    def _setup(self) -> None:
        super()._setup()
        s = self.solver
        self.K = s._check_k(self.N)  # type: ignore[attr-defined]
        self.sigma = _problem_sigma(s.sigma, self.problem)  # type: ignore[attr-defined]
        self.params = s.confidence_parameters(self.N)  # type: ignore[attr-defined]
        self._make_radii()

    def _make_radii(self) -> None:
        eps = self.params["epsilon"]
        om = self.params["omegas"]
        self._U_high = LILRadius(om["high"], epsilon=eps, sigma=self.sigma)
        self._U_low = self._U_high if om["low"] == om["high"] else LILRadius(om["low"], epsilon=eps, sigma=self.sigma)

    def _allocate(self) -> None:
        n = self.N
        self.high = np.zeros(n, dtype=bool)
        self.hm = np.full(n, np.inf)
        self.lm = np.full(n, -np.inf)
        self.r_high = np.zeros(n)
        self.r_low = np.zeros(n)
        self._lcb = np.full(n, np.inf)
        self._ucb = np.full(n, -np.inf)
        self._gap = -math.inf
        self._h = -1
        self._l = -1

    # ------------------------------------------------------------------ High_t
    def _radii(self, idx: Any) -> None:
        """Radii of the arms ``idx`` (a list of ints: scalar fast path; else vectorized)."""
        if isinstance(idx, list):
            same = self._U_low is self._U_high
            for i in idx:
                t = int(self.T[i])
                r = self._U_high.scalar(t)
                self.r_high[i] = r
                self.r_low[i] = r if same else self._U_low.scalar(t)
            return
        t = self.T[idx]
        self.r_high[idx] = self._U_high(t)
        self.r_low[idx] = self._U_low(t) if self._U_low is not self._U_high else self.r_high[idx]

    def _keys(self, i: int) -> None:
        """Bounds of one arm: LCB if in High_t (UCB key -inf), else UCB (LCB key +inf)."""
        if self.high[i]:
            self._lcb[i] = self.mu[i] - self.r_high[i]
            self._ucb[i] = -np.inf
        else:
            self._lcb[i] = np.inf
            self._ucb[i] = self.mu[i] + self.r_low[i]

    def _initialize(self) -> None:
        """(Re)build High_t as the top-K set of mu, the radii and the bounds of all arms."""
        self.high[:] = _top_k_mask(self.mu, self.K)
        self.hm[:] = np.where(self.high, self.mu, np.inf)
        self.lm[:] = np.where(self.high, -np.inf, self.mu)
        self._radii(slice(None))
        np.copyto(self._lcb, np.where(self.high, self.mu - self.r_high, np.inf))
        np.copyto(self._ucb, np.where(self.high, -np.inf, self.mu + self.r_low))

    def _refresh(self, changed: Any) -> None:
        if not isinstance(changed, list):
            self._initialize()  # a large batch (a human study's tell): rebuild
            return
        self._radii(changed)
        for i in changed:
            self._move(i)

    def _move(self, i: int) -> None:
        """Restore "High_t = top-K of mu" after arm i's mean changed (one pass over N).

        Before the change the largest Low mean was <= the smallest High mean; only arm i
        moved, so the order can only break at i, and one swap repairs it (ties keep the
        current membership).
        """
        m = self.mu[i]
        if self.high[i]:
            self.hm[i] = m
            b = int(self.lm.argmax())
            if self.lm[b] > m:
                self._swap(i, b)
                return
        else:
            self.lm[i] = m
            a = int(self.hm.argmin())
            if m > self.hm[a]:
                self._swap(a, i)
                return
        self._keys(i)

    def _swap(self, a: int, b: int) -> None:
        """Arm a leaves High_t, arm b enters."""
        self.high[a] = False
        self.high[b] = True
        self.hm[a] = np.inf
        self.lm[a] = self.mu[a]
        self.hm[b] = self.mu[b]
        self.lm[b] = -np.inf
        self._keys(a)
        self._keys(b)

    # ------------------------------------------------------------------ bounds
    def _bounds(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Lower bounds on High_t (+inf on Low_t), upper bounds on Low_t (-inf on High_t)."""
        return self._lcb, self._ucb

    def _stops(self, gap: float) -> bool:
        return gap >= 0.0

    @abstractmethod
    def _choose(self, h: int, l: int) -> None:
        """Subclass hook."""

    def _step(self) -> None:
        lcb, ucb = self._bounds()
        h = int(lcb.argmin())
        l = int(ucb.argmax())
        gap = float(lcb[h] - ucb[l])
        self._gap, self._h, self._l = gap, h, l
        if self.record_trace:
            self.record(gap=gap, h=h, l=l)
        if self._stops(gap):
            self.stop("identified", "the confidence bounds separate High_t from Low_t")
            return
        self._choose(h, l)

    # ------------------------------------------------------------------ results
    @property
    def recommendation(self) -> NDArray[np.bool_]:
        if self._ready:
            return self.high.copy()
        return _top_k_mask(self.mu, self.K)

    def stop(self, status: str, message: str = "") -> None:
        super().stop(status, message)
        self.certificate = self._certificate()

    def _certificate(self) -> dict[str, Any]:
        p = self.params
        out = {
            "gap": self._gap,
            "h": self._h,
            "l": self._l,
            "mode": p["mode"],
            "epsilon": p["epsilon"],
            "delta": p["delta"],
            "error_bound": p["error_bound"],
            "sigma": self.sigma,
        }
        if "lil_delta" in p:
            out["lil_delta"] = p["lil_delta"]
        return out

    def stopping_statistic(self) -> tuple[float, float]:
        """``-gap = UCB_l - LCB_h`` against 0 (LUCB's: its epsilon)."""
        if not math.isfinite(self._gap):
            return math.nan, math.nan
        return -float(self._gap), float(self.params.get("pac_epsilon", 0.0) or 0.0)

    def _info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"K": self.K, "omegas": dict(self.params["omegas"])}
        if self.done and self.status != "identified" and self._ready:
            # Arms whose confidence bounds still cross the boundary between High_t and Low_t.
            lcb, ucb = self._bounds()
            lo, hi = float(np.min(lcb)), float(np.max(ucb))
            out["indistinguishable"] = {
                "in_answer": [int(i) for i in np.flatnonzero(self.high & (lcb <= hi))],
                "outside": [int(i) for i in np.flatnonzero(~self.high & (ucb >= lo))],
            }
        return out


class _LilRandLUCBExploration(_BestKExploration):
    """Algorithm 1: sample h_t with probability T_l / (T_h + T_l), else l_t."""

    def _choose(self, h: int, l: int) -> None:
        th, tl = float(self.T[h]), float(self.T[l])
        self._single(h if self.rng.random() < tl / (th + tl) else l)


class _BothExploration(_BestKExploration):
    """LUCB, lil'LUCB, LUCB++: sample both h_t and l_t (one batch of two arms)."""

    def _choose(self, h: int, l: int) -> None:
        self._pair(h, l)


class _LUCBExploration(_BothExploration):
    """LUCB1: time-dependent radius beta(u, t) = sqrt(2 sigma^2 log(k1 N t^4 / delta) / u)."""

    _arrays = _BothExploration._arrays + ("isq",)

    def _make_radii(self) -> None:
        self._log_k1n_delta = math.log(LUCB_K1 * self.N / self.params["delta"])

    def _allocate(self) -> None:
        super()._allocate()
        self.isq = np.zeros(self.N)

    def _keys(self, i: int) -> None:
        pass  # _bounds recomputes every bound from hm, lm and isq at each round

    def _radii(self, idx: Any) -> None:
        if isinstance(idx, list):
            for i in idx:
                self.isq[i] = 1.0 / math.sqrt(int(self.T[i]))
            return
        self.isq[idx] = 1.0 / np.sqrt(self.T[idx])

    def _bounds(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        t = self.rounds
        c = math.sqrt(2.0 * self.sigma**2 * (self._log_k1n_delta + 4.0 * math.log(t)))
        np.multiply(self.isq, c, out=self._ucb)
        np.subtract(self.hm, self._ucb, out=self._lcb)
        np.add(self.lm, self._ucb, out=self._ucb)
        return self._lcb, self._ucb

    stops_when = "statistic < threshold"

    def _stops(self, gap: float) -> bool:
        # stop when UCB_l - LCB_h < epsilon (strict, Kalyanakrishnan et al. 2012)
        return -gap < self.params["pac_epsilon"]


class _LilCLUCBExploration(_BestKExploration):
    """Algorithms 2 and 3 (lil'CLUCB, generalized).

    Top-K (no decision class): M_t = High_t (maintained incrementally), radius
    u_i = U(T_i, lil_delta/N), revised means mu~ = mu - u on M_t and mu + u off M_t. M~_t = M_t
    (ties resolved in favour of M_t) exactly when min over M_t of mu~ >= max off M_t of mu~:
    the stopping gap. Otherwise M~_t = top-K of mu~ and the arm of largest radius in the
    symmetric difference is sampled.

    Decision class: M_t = Oracle(mu), M~_t = Oracle(mu~); stop when M~_t = M_t, or when
    mu~(M_t) >= mu~(M~_t) (M_t is then also a maximizer of mu~: an oracle tie; the
    correctness argument of Lemma D.2 / Chen et al. 2014 needs only mu~(M_t) >=
    mu~(OPT)); the stopping gap is mu~(M_t) - mu~(M~_t).
    """

    _arrays = _BestKExploration._arrays + ("M",)

    def _setup(self) -> None:
        super()._setup()
        dc = self.solver.decision_class  # type: ignore[attr-defined]
        if dc is None:
            dc = getattr(self.problem, "decision_class", None)
        if dc is not None:
            n = getattr(dc, "n", None)
            if n != self.N:
                raise InvalidParameterError(
                    f"The decision class of LilCLUCB must have a ground set of the problem's "
                    f"{self.N} arms. Got a class over {n} elements instead."
                )
        self.dc = dc

    def _allocate(self) -> None:
        super()._allocate()
        self.M = np.zeros(self.N, dtype=bool)

    # generic decision class ------------------------------------------------
    def _initialize(self) -> None:
        if self.dc is None:
            super()._initialize()
            return
        self._radii(slice(None))

    def _refresh(self, changed: Any) -> None:
        if self.dc is None:
            super()._refresh(changed)
            return
        self._radii(changed)

    def _oracle(self, w: NDArray[np.float64]) -> NDArray[np.bool_]:
        m = np.asarray(self.dc.argmax(w))
        if m.shape != (self.N,):

            raise OracleError(
                f"{type(self.dc).__name__}.argmax returned an array of shape {m.shape}; expected ({self.N},)."
            )
        return m.astype(bool, copy=False)

    def _step(self) -> None:
        if self.dc is None:
            super()._step()
            return
        r = self.r_high
        M = self._oracle(self.mu)
        self.M = M
        mt = np.where(M, self.mu - r, self.mu + r)
        Mt = self._oracle(mt)
        gap = float(mt[M].sum() - mt[Mt].sum())
        self._gap = gap
        if self.record_trace:
            self.record(gap=gap)
        if np.array_equal(M, Mt) or gap >= 0.0:
            self.stop("identified", "M_t equals M~_t (Algorithm 3)")
            return
        diff = M ^ Mt
        self._single(int(np.where(diff, r, -np.inf).argmax()))

    def _choose(self, h: int, l: int) -> None:
        # top-K case, not stopping: M~_t = top-K of the revised means
        mt = np.where(self.high, self._lcb, self._ucb)
        diff = self.high ^ _top_k_mask(mt, self.K)
        self._single(int(np.where(diff, self.r_high, -np.inf).argmax()))

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        if self.dc is None:
            return super()._current_answer
        if self._ready:
            return self.M.copy()
        return self._oracle(self.mu)

    def _certificate(self) -> dict[str, Any]:
        out = super()._certificate()
        if self.dc is None:
            out["width"] = 2  # top-K is a (uniform) matroid: width 2 (Chen et al. 2014)
        else:
            out.pop("h")
            out.pop("l")
            w = getattr(self.dc, "width", None)
            out["width"] = None if w is None else int(w)
        return out


class _LilUCBExploration(_ArmStatsExploration):
    """lil'UCB: sample argmax of mu + (1 + beta) U(T, lil_delta); stop when some arm has
    T_i >= 1 + lambda * sum_{j != i} T_j; answer argmax_i T_i."""

    _arrays = _ArmStatsExploration._arrays + ("index",)
    _scalars = _ArmStatsExploration._scalars + ("total", "_stat")

    def _setup(self) -> None:
        super()._setup()
        s = self.solver
        s._check_k(self.N)  # type: ignore[attr-defined]
        self.sigma = _problem_sigma(s.sigma, self.problem)  # type: ignore[attr-defined]
        self.params = s.confidence_parameters(self.N)  # type: ignore[attr-defined]
        p = self.params
        self._U = LILRadius(p["lil_delta"], epsilon=p["epsilon"], sigma=self.sigma)
        self._scale = 1.0 + p["beta"]
        self._lam = p["lambda"]

    def _allocate(self) -> None:
        self.index = np.zeros(self.N)
        self.total = 0
        self._stat = -math.inf

    def _initialize(self) -> None:
        self.index[:] = self.mu + self._scale * self._U(self.T)
        self._check_stop(np.arange(self.N))

    def _refresh(self, changed: Any) -> None:
        if isinstance(changed, list):
            for i in changed:
                self.index[i] = self.mu[i] + self._scale * self._U.scalar(int(self.T[i]))
        else:
            self.index[changed] = self.mu[changed] + self._scale * self._U(self.T[changed])
        self._check_stop(changed)

    def _fold(self, batch: Batch, sums: NDArray[np.float64]) -> Any:
        changed = super()._fold(batch, sums)
        c = batch.counts
        self.total += int(c[0]) if c.shape[0] == 1 else int(np.asarray(c).sum())
        return changed

    stops_when = "statistic >= threshold"

    def stopping_statistic(self) -> tuple[float, float]:
        """``max_i T_i - 1 - lambda (total - T_i)`` against 0 (one arm holds a lambda
        fraction of the samples)."""
        return (float(self._stat), 0.0) if math.isfinite(self._stat) else (math.nan, math.nan)

    def _check_stop(self, idx: Any) -> None:
        # Only pulled arms can newly satisfy the rule (the others' right-hand sides grow).
        # T_i >= 1 + lambda (total - T_i)  <=>  stat_i = T_i - 1 - lambda (total - T_i) >= 0
        if isinstance(idx, list):  # one or two pulled arms: the same arithmetic in floats
            lam, total, T = self._lam, self.total, self.T
            self._stat = max(float(T[i]) - 1.0 - lam * (total - float(T[i])) for i in idx)
            return
        t = self.T[idx].astype(np.float64)
        stat = t - 1.0 - self._lam * (self.total - t)
        self._stat = float(stat.max())

    def _step(self) -> None:
        if self.record_trace:
            self.record(gap=self._stat)
        if self._stat >= 0.0:
            self.stop("identified", "one arm holds a lambda fraction of the samples")
            return
        self._single(int(self.index.argmax()))

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        m = np.zeros(self.N, dtype=bool)
        m[int(self.T.argmax()) if self._ready else int(self.mu.argmax())] = True
        return m

    def stop(self, status: str, message: str = "") -> None:
        super().stop(status, message)
        p = self.params
        self.certificate = {
            "statistic": self._stat,
            "mode": p["mode"],
            "epsilon": p["epsilon"],
            "delta": p["delta"],
            "lil_delta": p["lil_delta"],
            "beta": p["beta"],
            "lambda": p["lambda"],
            "error_bound": p["error_bound"],
            "sigma": self.sigma,
        }

    def _info(self) -> dict[str, Any]:
        return {"K": 1}


# ============================================================================ public solvers
@register_solver
class LilRandLUCB(_Theorem31Solver):
    """lil'RandLUCB, Algorithm 1 of Jiang, Li & Qiao (2017).

    Sample every arm once; then at each round t, High_t = the K arms with the highest
    empirical means, Low_t the rest; radius u_i = U(T_i, lil_delta/(2(N-K))) for i in High_t
    and U(T_i, lil_delta/(2K)) for i in Low_t (U of Lemma 2.1 with the +2 of Section 5);
    h_t = argmin_{High_t} mu_i - u_i, l_t = argmax_{Low_t} mu_i + u_i. Stop and return High_t
    when mu_h - u_h >= mu_l + u_l; otherwise sample h_t with probability
    T_l / (T_h + T_l), else l_t.

    Theorem 3.1: correct with probability at least 1 - c_eps lil_delta (the paper writes
    Lemma 2.1's constant delta).

    Parameters
    ----------
    K : int
        Number of arms to identify (1 <= K < N, checked at start).
    delta : float in (0, 1), default 0.05
        Guaranteed error probability (faithful mode; the paper's nu).
    mode : {"faithful", "heuristic"}
        See the module docstring: faithful lil_delta = delta / c_eps (epsilon 0.01 by
        default); heuristic epsilon = 0, lil_delta = delta (no guarantee).
    epsilon : float, optional
        Lemma 2.1's epsilon, in (0, 1) in faithful mode, [0, 1) in heuristic mode (not a
        tolerance on the answer: the answer is the exact top-K set).
    lil_delta : float in (0, 1), optional
        Lemma 2.1's delta, the confidence constant of the radii; default derived from
        ``delta`` (faithful mode: a given value must keep c_eps lil_delta <= delta).
    sigma : float > 0, optional
        Sub-Gaussian scale of one reward (default: the problem's ``noise.sigma``).
    nu : float in (0, 1), optional
        Deprecated alias of ``delta``.

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> env = GaussianArms([0.5, 0.5, 0.0, 0.0, 0.0], sigma=0.5, rng=1)
    >>> res = LilRandLUCB(2, mode="heuristic").run(env, rng=2)
    >>> res.status, res.answer.tolist()
    ('identified', [True, True, False, False, False])
    """

    name = "lil-randlucb"
    exploration_class = _LilRandLUCBExploration


@register_solver
class LUCBPlusPlus(_Theorem31Solver):
    """LUCB++ of Simchowitz, Jamieson & Recht (2017).

    The rule (as the best-K paper describes it, footnote 4, and as published): sample every
    arm once; each round, High_t = top-K empirical means; radius U(T_i, lil_delta/(2(N-K)))
    in High_t and U(T_i, lil_delta/(2K)) in Low_t (the LIL radius of Lemma 2.1 with the +2);
    h_t = argmin_{High_t} LCB, l_t = argmax_{Low_t} UCB; stop and return High_t when
    LCB_h >= UCB_l; otherwise sample **both** h_t and l_t. Error <= c_eps lil_delta (as
    Theorem 3.1). Parameters as :class:`LilRandLUCB`.
    """

    name = "lucb++"
    exploration_class = _BothExploration


@register_solver
class LilLUCB(_Theorem41Solver):
    """lil'LUCB of Jamieson & Nowak (2014), generalized to K arms.

    LUCB1's rule with the LIL radius: sample every arm once; each round, High_t = top-K
    empirical means, radius u_i = U(T_i, lil_delta/N) for every arm (Lemma 2.1 with the +2);
    h_t = argmin_{High_t} mu_i - u_i, l_t = argmax_{Low_t} mu_i + u_i; stop and return High_t
    when mu_h - u_h >= mu_l + u_l; otherwise sample both h_t and l_t. Error
    <= N c_eps (lil_delta/N)^(1+eps) = c_eps lil_delta^(1+eps) / N^eps, so faithful
    lil_delta = (delta N^eps / c_eps)^(1/(1+eps)). Parameters as :class:`LilRandLUCB`.
    """

    name = "lil-lucb"
    exploration_class = _BothExploration


@register_solver
class LilCLUCB(_Theorem41Solver):
    """lil'CLUCB, Algorithms 2 (top-K) and 3 (generalized) of Jiang, Li & Qiao (2017).

    Sample every arm once; each round, M_t = Oracle(mu) (the top-K set without a decision
    class), radius u_i = U(T_i, lil_delta/N); revised means mu~_i = mu_i - u_i for i in M_t
    and mu_i + u_i otherwise; M~_t = Oracle(mu~); if M~_t = M_t return M_t; otherwise sample
    the arm with the largest radius in the symmetric difference of M_t and M~_t.

    Theorems 4.1 / 4.2: correct with probability at least 1 - c_eps lil_delta^(1+eps) / N^eps;
    faithful lil_delta = (delta N^eps / c_eps)^(1/(1+eps)). The sample bound scales with
    width(M)^2, reported in the certificate (``None`` when the class does not know it).

    Parameters
    ----------
    K : int
        Size of the set for the top-K problem (ignored when a decision class is used).
    decision_class : DecisionClass, optional
        Any class with a maximization oracle ``argmax(weights) -> bool mask`` (top-k,
        matroids, paths, matchings, CP-SAT classes). Default: the problem's
        ``decision_class``, else top-K.
    delta, mode, epsilon, lil_delta, sigma, nu
        As :class:`LilRandLUCB`.

    Notes
    -----
    Ties: the stopping test is mu~(M_t) >= mu~(M~_t) (for top-K: min over M_t of mu~ >= max
    off M_t), which accepts M_t when the oracle breaks a tie of mu~ the other way; the
    correctness proof only needs mu~(M_t) >= mu~(OPT).
    """

    name = "lil-clucb"
    exploration_class = _LilCLUCBExploration

    def __init__(
        self,
        K: int = 1,
        *,
        decision_class: Any = None,
        delta: float | None = None,
        mode: str = "faithful",
        epsilon: float | None = None,
        lil_delta: float | None = None,
        sigma: float | None = None,
        nu: float | None = None,
    ) -> None:
        super().__init__(K, delta=delta, mode=mode, epsilon=epsilon, lil_delta=lil_delta, sigma=sigma, nu=nu)
        if decision_class is not None and not callable(getattr(decision_class, "argmax", None)):
            raise param_error(
                "decision_class", "LilCLUCB", "a decision class with an argmax(weights) oracle", decision_class
            )
        self.decision_class = decision_class

    def _check_k(self, n_arms: int) -> int:
        if self.decision_class is None:
            return super()._check_k(n_arms)
        check_int(n_arms, "n_arms", owner="LilCLUCB", low=2)
        return self.K  # unused: the decision class defines the answers


@register_solver
class LUCB(_SemiBanditSolver):
    """LUCB1 of Kalyanakrishnan, Tewari, Auer & Stone (2012).

    Sample every arm once; at round t = 1, 2, ... (one stopping check per round),
    High_t = top-K empirical means; radius
    beta(u, t) = sqrt(2 sigma^2 log(k1 N t^4 / delta) / u), k1 = 5/4 (with sigma = 1/2 this
    is the paper's sqrt(log(k1 N t^4/delta) / (2u)) for rewards in [0, 1]);
    h_t = argmin_{High_t} mu_i - beta(T_i, t), l_t = argmax_{Low_t} mu_i + beta(T_i, t);
    stop and return High_t when (mu_l + beta_l) - (mu_h - beta_h) < epsilon; otherwise
    sample both h_t and l_t. (epsilon, delta)-PAC in both modes (the best-K paper runs no
    heuristic LUCB).

    Parameters
    ----------
    K : int
    delta : float in (0, 1), default 0.05
        Guaranteed error probability (the radius' delta).
    epsilon : float >= 0, default 0.0
        The PAC tolerance of LUCB1 (0: exact top-K identification, the paper's setting).
    mode : {"faithful", "heuristic"}
        Accepted for a uniform interface; the two modes coincide.
    sigma : float > 0, optional
    nu : float in (0, 1), optional
        Deprecated alias of ``delta``.
    """

    name = "lucb"
    exploration_class = _LUCBExploration

    @property
    def tolerance(self) -> float:
        """LUCB's epsilon is a PAC tolerance (unlike the LIL solvers' Lemma 2.1 epsilon)."""
        return float(self.epsilon or 0.0)

    def __init__(
        self,
        K: int = 1,
        *,
        delta: float | None = None,
        epsilon: float = 0.0,
        mode: str = "faithful",
        sigma: float | None = None,
        nu: float | None = None,
    ) -> None:
        super().__init__(K, delta=delta, mode=mode, epsilon=None, sigma=sigma, nu=nu)
        self.epsilon = check_float(epsilon, "epsilon", owner="LUCB", low=0.0)

    def confidence_parameters(self, n_arms: int) -> dict[str, Any]:
        self._check_k(int(n_arms))
        return {
            "mode": self.mode,
            "delta": self.delta,
            "epsilon": 0.0,
            "pac_epsilon": self.epsilon,
            "k1": LUCB_K1,
            "omegas": {},
            "error_bound": self.delta,
        }


@register_solver
class LilUCB(_SemiBanditSolver):
    """lil'UCB of Jamieson, Malloy, Nowak & Bubeck (2014), best arm (K = 1).

    Sample every arm once; then sample I_t = argmax_i mu_i + (1 + beta) U(T_i, lil_delta),
    where (1 + beta) U(T, lil_delta) = (1 + beta)(1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps)
    log(log((1 + eps) T + 2) / lil_delta) / T) (with the +2 of Section 5 of the best-K
    paper); stop as soon as some arm has T_i >= 1 + lambda * sum_{j != i} T_j and return
    argmax_i T_i.

    Settings (Jamieson et al. 2014, Section 5; their delta is ``lil_delta`` here):

    * faithful: eps = 0.01, beta = 1, lambda = ((2 + beta)/beta)^2 = 9, and
      lil_delta = (sqrt(1 + delta) - 1)^2 / (4 c_eps), which makes the guaranteed error of
      their Theorem 2, 4 sqrt(c_eps lil_delta) + 4 c_eps lil_delta, equal to delta;
    * heuristic ("lil'UCB Heuristic"): eps = 0, beta = 1/2, lambda = 1 + 10/N,
      lil_delta = delta / 5.

    Parameters
    ----------
    K : int, default 1
        Must be 1 (best-arm identification).
    delta, mode, epsilon, lil_delta, sigma, nu
        As :class:`LilRandLUCB` (a given ``lil_delta`` must keep the bound <= delta in
        faithful mode).
    beta : float > 0, optional
        Override beta (faithful lambda follows as ((2 + beta)/beta)^2).
    lam : float > 0, optional
        Override lambda.
    """

    name = "lil-ucb"
    exploration_class = _LilUCBExploration

    def __init__(
        self,
        K: int = 1,
        *,
        delta: float | None = None,
        mode: str = "faithful",
        epsilon: float | None = None,
        lil_delta: float | None = None,
        beta: float | None = None,
        lam: float | None = None,
        sigma: float | None = None,
        nu: float | None = None,
    ) -> None:
        super().__init__(K, delta=delta, mode=mode, epsilon=epsilon, lil_delta=lil_delta, sigma=sigma, nu=nu)
        if self.K != 1:
            raise param_error("K", "LilUCB", "1 (lil'UCB identifies the best arm only)", K)
        self.beta = None if beta is None else check_float(beta, "beta", owner="LilUCB", low=0.0, closed="neither")
        self.lam = None if lam is None else check_float(lam, "lam", owner="LilUCB", low=0.0, closed="neither")

    def confidence_parameters(self, n_arms: int) -> dict[str, Any]:
        owner = "LilUCB"
        n = int(n_arms)
        self._check_k(n)
        if self.mode == "faithful":
            eps = FAITHFUL_EPSILON if self.epsilon is None else float(self.epsilon)
            beta = 1.0 if self.beta is None else self.beta
            lam = ((2.0 + beta) / beta) ** 2 if self.lam is None else self.lam
            c = lil_c_epsilon(eps)
            lil = (math.sqrt(1.0 + self.delta) - 1.0) ** 2 / (4.0 * c) if self.lil_delta is None else float(
                self.lil_delta)
            bound = 4.0 * math.sqrt(c * lil) + 4.0 * c * lil
            if bound > self.delta * (1.0 + 1e-9):
                raise InvalidParameterError(
                    f"The 'lil_delta' parameter of {owner} gives a guaranteed error probability of "
                    f"{bound!r} > delta={self.delta!r} in faithful mode. Got {lil!r} instead; leave "
                    f"lil_delta=None to derive it from delta."
                )
            check_lil_lemma(eps, lil, name="lil_delta", owner=owner)
        else:
            eps = 0.0 if self.epsilon is None else float(self.epsilon)
            beta = 0.5 if self.beta is None else self.beta
            lam = 1.0 + 10.0 / n if self.lam is None else self.lam
            lil = self.delta / 5.0 if self.lil_delta is None else float(self.lil_delta)
            bound = None
        return {
            "mode": self.mode,
            "delta": self.delta,
            "epsilon": eps,
            "lil_delta": lil,
            "beta": beta,
            "lambda": lam,
            "omegas": {"all": lil},
            "error_bound": bound,
        }
