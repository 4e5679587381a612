"""Fixed-budget pure exploration: spend exactly ``budget`` samples, then answer.

The ``"fixed-budget"`` contract (:data:`~combex.solvers.CONTRACTS`). A fixed-budget
algorithm plans its phases from the budget, so the budget is part of the run: give it as a
setting (``SuccessiveRejects(budget=1000)``) or to :meth:`FixedBudgetSolver.run` /
:meth:`FixedBudgetSolver.start` (``SuccessiveRejects().run(env, budget=1000)``); without one
the solver refuses to start. Every run takes exactly ``budget`` samples (the phase lengths of
the papers round up and leave a few samples over; they go to the last phase, whose arms are
the closest contenders, which only strengthens the last comparison) and ends with status
``"budget_exhausted"``. There is no stopping rule and no certificate: :meth:`run` on a
simulated environment reports instead ``info["error_bound"]``, the error probability the
algorithm's paper proves at this budget for the environment's true means and noise scale,
with the formula and theorem in ``info["error_bound_source"]`` (None when the environment
exposes no truth, when the theorem needs a quantity the class does not know, or for the
adaptation that has no proof). Values of 1 or more are vacuous, and are reported as
computed.

================================  ==========================  =================================
solver (CLI name)                 class                       paper, algorithm, bound
================================  ==========================  =================================
``successive-rejects``            SuccessiveRejects           Audibert & Bubeck (COLT 2010),
                                                              SR; Theorem 2
``successive-accepts-rejects``    SuccessiveAcceptsRejects    Bubeck, Wang & Viswanathan
                                                              (ICML 2013), SAR; its bound on
                                                              the error probability
``sequential-halving``            SequentialHalving           Karnin, Koren & Somekh (ICML
                                                              2013), Algorithm 1; Theorem 4.1
``csar``                          CSAR                        Chen, Lin, King, Lyu & Chen
                                                              (NeurIPS 2014), Algorithm 2
                                                              (CSAR); its fixed-budget bound
``uniform-allocation``            UniformAllocation           a fixed design spread evenly
                                                              over teams; least squares
``od-linbai``                     ODLinBAI                    Yang & Tan (NeurIPS 2022),
                                                              Algorithm 1 (OD-LinBAI); its
                                                              upper bound on the error
``csar-full-bandit``              FullBanditCSAR              combex's adaptation of CSAR to
                                                              full-bandit feedback (no bound)
================================  ==========================  =================================

**Noise scale in the bounds.** Audibert & Bubeck, Bubeck et al. and Karnin et al. state
their theorems for rewards in [0, 1], whose Hoeffding bound ``exp(-2 t eps^2)`` is the
sub-Gaussian bound ``exp(-t eps^2 / (2 sigma^2))`` at ``sigma = 1/2``; their proofs use
nothing else, so for sigma-sub-Gaussian rewards every gap ``Delta`` becomes
``Delta / (2 sigma)``, i.e. the hardness ``H_2`` is multiplied by ``4 sigma^2`` (the
identity at ``sigma = 1/2``). Chen et al. and Yang & Tan state theirs for R-sub-Gaussian
(resp. 1-sub-Gaussian) noise and are used with ``R = sigma`` (resp. ``Delta / sigma``).
``sigma`` is the environment's true scale of one observation (a team's score for
full-bandit problems: :meth:`~combex.environments.NoiseModel.scale`), also when the problem
hides it from the solver. The bounds are for identifying *the* best answer, hence also bound
the probability of an answer that is not epsilon-good.

**Top-k Sequential Halving.** Karnin et al. give Sequential Halving for the best arm only,
and the literature searched here gives no top-k version with a proven bound; the Best-K
reference is SAR (and CSAR on ``TopK``).

**Full-bandit feedback** (only a team's total is observed). :class:`UniformAllocation`
spreads the budget evenly over a fixed design -- every team of the class round-robin when
the class has at most ``budget`` members, else the balanced cyclic support of
:func:`~combex.allocations.balanced_topk_support` (top-k classes) or the spanning members of
:func:`~combex.allocations.support_from_decision_class` -- and recommends the class's argmax
of the least-squares estimate. :class:`ODLinBAI` runs Yang & Tan's algorithm over the
enumerated teams (their indicator vectors are the arms of a linear bandit). For classes too
large to enumerate, :class:`FullBanditCSAR` keeps CSAR's phases, budget split and
accept/reject rule (Chen et al., Algorithm 2) but estimates the members' qualities by least
squares from a balanced design over the teams that contain the accepted members and avoid
the rejected ones. The only fixed-budget-style CSAR for full-bandit feedback found in the
literature, Rejwan & Mansour (ALT 2020, "Top-k combinatorial bandits with full-bandit
feedback"), is a fixed-*confidence* algorithm (its guarantee is a sample complexity at
confidence delta) built on Hadamard designs; :class:`FullBanditCSAR` is combex's own
adaptation and carries no error bound.

**Ask / tell and save / resume** as every combex solver: ``ask()`` returns the rest of the
current phase (arms with their counts), ``tell_batch`` folds any reported pulls (a phase ends
when its planned pulls are all told), :meth:`~combex.solvers.Exploration.state_dict` /
``Solver.resume`` continue bit-identically. ``progress()["evaluations_left"]`` is exact:
``budget - samples``.

Why one file of more than 1,000 lines: the seven fixed-budget solvers share the phase loop
and the error-bound machinery (the hardness constants, the environment's truth) with one
base; the index solvers (SR, SAR, SH, CSAR) and the design solvers (uniform, OD-LinBAI,
CSAR-full-bandit) are grouped in that order.
"""

from __future__ import annotations

from abc import abstractmethod

import math
from dataclasses import replace
from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_int, param_error
from ..allocations import apportion, balanced_topk_support, g_optimal_design, support_from_decision_class
from ..estimation import LeastSquares
from ..exceptions import InvalidParameterError, OracleError, StateError
from ..identification import true_noise_scale
from ..oracles import TopK
from ._base import Batch, Exploration, Result, Solver
from ._registry import register_solver

__all__ = ["FixedBudgetSolver", "SuccessiveRejects", "SuccessiveAcceptsRejects", "SequentialHalving", "CSAR",
           "UniformAllocation", "ODLinBAI", "FullBanditCSAR", "log_bar", "harmonic_number", "hardness_h2",
           "caratheodory_reduce"]


# ============================================================================ helpers
def log_bar(K: int) -> float:
    """``log_bar(K) = 1/2 + sum_{i=2}^{K} 1/i`` (Audibert & Bubeck 2010, the SR algorithm; also SAR).

    Examples
    --------
    >>> round(log_bar(3), 6)
    1.333333
    """
    return 0.5 + sum(1.0 / i for i in range(2, int(K) + 1))


def harmonic_number(n: int) -> float:
    """``sum_{i=1}^{n} 1/i``: the ``log~(n)`` of CSAR (Chen et al. 2014, Algorithm 2), whose
    phase lengths ``ceil((T - n) / (log~(n) (n - t + 1)))`` then sum to at most ``T``.

    Examples
    --------
    >>> round(harmonic_number(3), 6)
    1.833333
    """
    return sum(1.0 / i for i in range(1, int(n) + 1))


def hardness_h2(gaps: Any) -> float:
    """``H_2 = max_i i / Delta_(i)^2`` over the gaps sorted increasingly (Audibert & Bubeck
    2010, eq. (1); the same form in SAR, Sequential Halving and CSAR); ``inf`` when a gap is 0.

    Examples
    --------
    >>> hardness_h2([0.5, 0.5, 1.0])
    8.0
    """
    g = np.sort(np.asarray(gaps, dtype=np.float64))
    if g.size == 0:
        return 0.0
    if g[0] <= 0.0:
        return math.inf
    return float(np.max(np.arange(1, g.size + 1) / g**2))


def _exp_bound(prefactor: float, numerator: float, hardness: float) -> float:
    """``prefactor * exp(-numerator / hardness)``: the prefactor itself for an infinite
    hardness (a tie), 0 for a zero hardness (no alternative answer)."""
    if hardness <= 0.0:
        return 0.0
    return float(prefactor * math.exp(-numerator / hardness))


def caratheodory_reduce(X: Any, weights: Any, *, max_support: int | None = None) -> NDArray[np.float64]:
    """A design with the same information matrix on at most ``d (d + 1) / 2`` points.

    Caratheodory's theorem on the points ``(vech(x_i x_i^T), 1)`` (dimension ``L + 1``,
    ``L = d (d + 1) / 2``): while the support has more than ``L`` points, take ``L + 1`` of
    them, move their weights along a null vector of those columns until one weight reaches
    0, and drop it. Down to ``L + 1`` points the information matrix
    ``sum_i p_i x_i x_i^T`` and the total weight are kept exactly (up to rounding); the last
    step, to ``L`` points, is exact when the total weight is a linear function of the
    information matrix -- for a G-optimal design (``sum p = tr(A^{-1} A) / d`` by the
    Kiefer-Wolfowitz theorem, so the columns are dependent) and for arms of equal norm such
    as teams of equal size (``tr(x x^T) = k``) -- and otherwise uses the direction of the
    smallest singular value. This is the support bound OD-LinBAI needs (Yang & Tan 2022,
    Algorithm 1: ``|Supp(pi_r)| <= d_r (d_r + 1) / 2``).

    Parameters
    ----------
    X : array of shape (m, d)
    weights : array of shape (m,)
        A design (nonnegative, summing to one).
    max_support : int, optional
        Reduce to at most this many points (default ``d (d + 1) / 2``; at least that).

    Returns
    -------
    weights : array of shape (m,)

    Examples
    --------
    >>> a = np.array([0.0, 0.5, 1.0, 2.0, 2.5])
    >>> X = np.stack([np.cos(a), np.sin(a)], axis=1)  # unit vectors: tr(x x^T) = 1
    >>> p = caratheodory_reduce(X, np.full(5, 0.2))
    >>> int((p > 0).sum()) <= 3, bool(np.allclose(X.T @ (p[:, None] * X), X.T @ (0.2 * X)))
    (True, True)
    """
    Xa = np.asarray(X, dtype=np.float64)
    p = np.asarray(weights, dtype=np.float64).copy()
    m, d = Xa.shape
    L = d * (d + 1) // 2
    cap = L if max_support is None else max(L, int(max_support))
    iu = np.triu_indices(d)
    idx = [int(i) for i in np.flatnonzero(p > 0)]
    if len(idx) <= cap:
        return p / p.sum()
    phi = np.hstack([Xa[:, iu[0]] * Xa[:, iu[1]], np.ones((m, 1))])  # rows (vech(x x^T), 1)
    while len(idx) > cap:
        sub = idx[: min(len(idx), L + 2)]  # L + 2 columns in dimension L + 1: a null vector exists
        cols = phi[sub].T
        v = np.linalg.svd(cols)[2][-1]
        if not np.any(v > 0):
            v = -v
        pos = v > 1e-12 * np.abs(v).max()
        ratios = np.full(v.size, np.inf)
        ratios[pos] = p[sub][pos] / v[pos]
        j = int(np.argmin(ratios))
        p[sub] = np.maximum(p[sub] - ratios[j] * v, 0.0)
        p[sub[j]] = 0.0
        idx = [i for i in idx if p[i] > 0]
    return p / p.sum()


def _env_means(env: Any) -> NDArray[np.float64] | None:
    try:
        return np.asarray(env.means(), dtype=np.float64)
    except Exception:  # noqa: BLE001 - real data, a user's environment: no truth
        return None


def _even_counts(size: int, total: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``total`` pulls spread as evenly as possible over ``size`` items: ``total // size``
    each and one more for ``total % size`` items drawn without replacement by ``rng``."""
    q, r = divmod(int(total), int(size))
    counts = np.full(size, q, dtype=np.int64)
    if r:
        counts[rng.permutation(size)[:r]] += 1
    return counts


def _ordered(values: NDArray[np.float64], rng: np.random.Generator, idx: NDArray[np.intp]) -> NDArray[np.intp]:
    """``idx`` sorted by decreasing ``values[idx]``, ties in a random order from ``rng``
    (the papers break ties arbitrarily); no random draw when there is no tie."""
    v = values[idx]
    if np.unique(v).size == v.size:
        return idx[np.argsort(-v, kind="stable")]
    return idx[np.lexsort((rng.permutation(idx.size), -v))]


def _ls_theta(ls: Any) -> NDArray[np.float64]:
    """The least-squares estimate; the minimum-norm one while the design is singular."""
    if ls.is_invertible:
        return np.asarray(ls.theta, dtype=np.float64)
    return np.linalg.lstsq(np.asarray(ls.A), np.asarray(ls.b), rcond=None)[0]


def csar_step(dc: Any, w: NDArray[np.float64], accepted: NDArray[np.bool_], rejected: NDArray[np.bool_],
              undecided: NDArray[np.intp]) -> tuple[int, bool]:
    """One decision of CSAR (Chen et al. 2014, Algorithm 2): the undecided arm
    to accept or reject, and whether it is accepted.

    ``M_t = COracle(w, A_t, B_t)``; for each undecided ``e``, ``M~_{t,e}`` is the best member
    that flips ``e`` (``COracle(w, A_t, B_t + {e})`` if ``e`` in ``M_t``, else
    ``COracle(w, A_t + {e}, B_t)``), with value ``-inf`` when none exists; the arm is
    ``p_t = argmax_e w(M_t) - w(M~_{t,e})`` (ties: the lowest index), accepted iff it is in
    ``M_t``. ``COracle`` is the decision class's ``argmax_constrained``.

    Raises
    ------
    OracleError
        When no member contains the accepted arms and avoids the rejected ones (the decisions
        keep one feasible, so the oracle broke its contract).
    """
    acc = np.flatnonzero(accepted)
    rej = np.flatnonzero(rejected)
    M = dc.argmax_constrained(w, include=acc, exclude=rej)
    if M is None:
        raise OracleError(
            f"{dc!r}.argmax_constrained found no member containing {acc.tolist()} and avoiding {rej.tolist()}, "
            "although CSAR's decisions keep one feasible."
        )
    M = np.asarray(M, dtype=bool)
    base = float(w[M].sum())
    best_gap, best = -math.inf, int(undecided[0])
    for e in undecided.tolist():
        if M[e]:
            alt = dc.argmax_constrained(w, include=acc, exclude=np.append(rej, e))
        else:
            alt = dc.argmax_constrained(w, include=np.append(acc, e), exclude=rej)
        gap = math.inf if alt is None else base - float(w[np.asarray(alt, dtype=bool)].sum())
        if gap > best_gap:
            best_gap, best = gap, e
    return best, bool(M[best])


def chen_gaps(dc: Any, means: NDArray[np.float64]) -> NDArray[np.float64]:
    """The gaps of Chen et al. (2014) (their problem setup): for ``e`` in the best member ``M*``,
    ``Delta_e = w(M*) - max_{M: e not in M} w(M)``; otherwise ``w(M*) - max_{M: e in M} w(M)``
    (``inf`` when no such member exists)."""
    best = np.asarray(dc.argmax(means), dtype=bool)
    top = float(means[best].sum())
    gaps = np.empty(means.size)
    for e in range(means.size):
        alt = dc.argmax_constrained(means, exclude=(e,)) if best[e] else dc.argmax_constrained(means, include=(e,))
        gaps[e] = math.inf if alt is None else top - float(means[np.asarray(alt, dtype=bool)].sum())
    return gaps


# ============================================================================ the contract
class FixedBudgetSolver(Solver):
    """Settings of a fixed-budget algorithm (the ``"fixed-budget"`` contract).

    A :class:`~combex.solvers.Solver` whose explorations spend exactly ``budget`` samples.
    The budget is a setting or an argument of :meth:`run` / :meth:`start` (one of them, or
    both equal); without one the solver refuses to start. Subclasses set ``name``,
    ``arm_type``, ``families``, ``exploration_class`` and implement :meth:`error_bound_info`.
    """

    contract: ClassVar[str] = "fixed-budget"
    exploration_class: ClassVar[type[Exploration]]

    def __init__(self, *, budget: int | None = None) -> None:
        self.budget = None if budget is None else check_int(budget, "budget", owner=type(self).__name__, low=1)

    def with_budget(self, budget: int | None, *, where: str = "run") -> "FixedBudgetSolver":
        """This solver if it already has ``budget`` (or ``budget`` is None and it has one),
        else a copy whose ``budget`` setting is ``budget``.

        Raises
        ------
        InvalidParameterError
            No budget anywhere, or a budget different from the setting.
        """
        owner = type(self).__name__
        if budget is None:
            if self.budget is None:
                raise InvalidParameterError(
                    f"{owner} is a fixed-budget algorithm: it plans its phases from the budget. Give it as a setting "
                    f"({owner}(budget=B)) or to {where}(..., budget=B). Got budget=None for both instead."
                )
            return self
        budget = check_int(budget, "budget", owner=f"{owner}.{where}", low=1)
        if self.budget is None:
            return type(self)(**{**self.get_params(), "budget": budget})
        if budget != self.budget:
            raise InvalidParameterError(
                f"The 'budget' parameter of {owner}.{where} must be None or the solver's budget setting "
                f"({self.budget}). Got {budget} instead."
            )
        return self

    def start(self, problem: Any, *, rng: Any = None, budget: int | None = None) -> Exploration:
        """Begin a run of exactly ``budget`` samples (default: the ``budget`` setting) on
        ``problem`` (a :class:`~combex.environments.Problem` or an environment)."""
        solver = self.with_budget(budget, where="start")
        return solver.exploration_class(solver, problem, rng)

    def run(self, env: Any, *, rng: Any = None, budget: int | None = None, trace: bool = False,
            callback: Any = None) -> Result:
        """Simulate one run of exactly ``budget`` samples (default: the ``budget`` setting);
        then ``info["error_bound"]`` and ``info["error_bound_source"]`` from the
        environment's truth (see the module docstring)."""
        solver = self.with_budget(budget, where="run")
        result = Solver.run(solver, env, rng=rng, budget=solver.budget, trace=trace, callback=callback)
        info = dict(result.info)
        info.update(solver.error_bound_info(env, result))
        return replace(result, info=info)

    def resume(self, state: Mapping[str, Any], problem: Any) -> Exploration:
        """:meth:`Solver.resume`; a solver without a ``budget`` setting takes the saved one."""
        params = state.get("params") if isinstance(state, Mapping) else None
        saved = params.get("budget") if isinstance(params, Mapping) else None
        if self.budget is None and isinstance(saved, int) and not isinstance(saved, bool) and saved >= 1:
            return Solver.resume(self.with_budget(saved, where="resume"), state, problem)
        return Solver.resume(self, state, problem)

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        """``{"error_bound": float or None, "error_bound_source": str}`` for this solver's
        budget on ``env``'s truth (subclasses; ``result`` is the run's, for bounds that
        depend on its design)."""
        return {"error_bound": None, "error_bound_source": "no bound"}

    def _budget_error(self, low: int, why: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"The 'budget' parameter of {type(self).__name__} must be an int in the range [{low}, inf) on this "
            f"problem ({why}). Got {self.budget} instead."
        )


class _FixedBudgetExploration(Exploration):
    """What every fixed-budget exploration shares: the phase loop (``_next_batch`` asks for
    the rest of the current phase; a phase ends when its planned pulls are all told, then
    :meth:`_end_phase` decides and plans the next one or stops), progress and result info."""

    stops_when = "samples >= budget"

    solver: FixedBudgetSolver

    def _finish(self) -> None:
        self.stop("budget_exhausted", f"fixed budget of {self.solver.budget} samples spent")

    @abstractmethod
    def _phase_complete(self) -> bool:
        """Hook of the concrete phase rule."""

    @abstractmethod
    def _end_phase(self) -> None:
        """Hook of the concrete phase rule."""

    def _advance(self) -> None:
        while not self.done and self._phase_complete():
            self.rounds += 1
            self._end_phase()

    def progress(self) -> dict[str, Any]:
        """:meth:`Exploration.progress` of a fixed-budget run: no statistic or threshold
        (``nan``); ``evaluations_left`` is exact (``budget - samples``)."""
        out = super().progress()
        out.update({"evaluations_left": max(0, int(self.solver.budget) - int(self.samples))})
        return out

    def _info(self) -> dict[str, Any]:
        return {"budget": int(self.solver.budget), "phases": int(self.rounds)}


# ============================================================================ index arms
class _IndexPhasedExploration(_FixedBudgetExploration):
    """Phases over index arms: per-arm counts ``T`` and sums ``S``; each phase pulls the
    undecided arms up to ``target`` (cumulative counts). Subclasses define ``_setup``
    (constants, budget check), ``_begin_phase`` and ``_end_phase``."""

    _arrays: ClassVar[tuple[str, ...]] = ("T", "S", "active", "accepted", "target")
    _ints: ClassVar[tuple[str, ...]] = ("phase",)

    def __init__(self, solver: FixedBudgetSolver, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._setup()
        n = self.N
        self.T = np.zeros(n, dtype=np.int64)
        self.S = np.zeros(n, dtype=np.float64)
        self.active = np.ones(n, dtype=bool)
        self.accepted = np.zeros(n, dtype=bool)
        self.target = np.zeros(n, dtype=np.int64)
        self.phase = 0
        self._init_extra()
        self._begin_phase()

    # ------------------------------------------------------------------ hooks
    def _setup(self) -> None:
        p = self.problem
        if getattr(p, "arm_type", "index") != "index":
            raise InvalidParameterError(
                f"{type(self.solver).__name__} needs a problem with index arms (semi-bandit feedback). "
                f"Got arm_type={p.arm_type!r} instead."
            )
        self.N = int(p.n_arms)
        if self.N < 2:
            raise param_error("problem", type(self.solver).__name__, "a problem with at least 2 arms", p.n_arms)

    def _init_extra(self) -> None:
        pass

    @abstractmethod
    def _begin_phase(self) -> None:
        """Hook of the concrete phase rule."""

    def _fold_extra(self, arms: NDArray[np.intp], counts: NDArray[np.int64], sums: NDArray[np.float64]) -> None:
        pass

    # ------------------------------------------------------------------ loop
    def _means(self) -> NDArray[np.float64]:
        """Empirical means (``-inf`` for an arm never pulled)."""
        out = np.full(self.N, -math.inf)
        np.divide(self.S, self.T, out=out, where=self.T > 0)
        return out

    def _phase_complete(self) -> bool:
        return bool(np.all(self.T[self.active] >= self.target[self.active]))

    def _next_batch(self) -> Batch:
        need = np.where(self.active, self.target - self.T, 0)
        idx = np.flatnonzero(need > 0).astype(np.intp)
        return Batch(idx, need[idx].astype(np.int64))

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = np.asarray(batch.arms)
        counts = np.asarray(batch.counts, dtype=np.int64)
        owner = type(self.solver).__name__
        if not self._told_pending:
            if arms.ndim != 1 or (arms.size and arms.dtype.kind not in "iu"):
                raise param_error("arm", owner, "an arm index (int)", arms)
        arms = arms.astype(np.intp)
        np.add.at(self.T, arms, counts)
        np.add.at(self.S, arms, reward_sums)
        self._fold_extra(arms, counts, reward_sums)
        self._advance()

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T

    def _undecided(self) -> NDArray[np.intp]:
        return np.flatnonzero(self.active).astype(np.intp)

    # ------------------------------------------------------------------ save / resume
    def _extra_state(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: np.array(getattr(self, k), copy=True) for k in self._arrays}
        out.update({k: int(getattr(self, k)) for k in self._ints})
        return out

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._setup()
        kinds = {"T": np.int64, "S": np.float64, "active": bool, "accepted": bool, "target": np.int64,
                 "RT": np.int64, "RS": np.float64}
        for k in self._arrays:
            a = np.array(state[k], dtype=kinds[k], copy=True)
            if a.shape != (self.N,):
                raise StateError(f"The field {k!r} of the saved state has shape {a.shape}, not ({self.N},).")
            setattr(self, k, a)
        for k in self._ints:
            v = state[k]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise StateError(f"The field {k!r} of the saved state must be a nonnegative integer. Got {v!r}.")
            setattr(self, k, v)


class _IndexSolver(FixedBudgetSolver):
    arm_type: ClassVar[str] = "index"
    families: ClassVar[tuple[str, ...]] = ("semi-bandit",)


# ---------------------------------------------------------------------- SR / SAR
class _SRSchedule(_IndexPhasedExploration):
    """The phase lengths of Audibert & Bubeck (2010), SR: ``n_0 = 0`` and
    ``n_k = ceil((n - K) / (log_bar(K) (K + 1 - k)))``, ``k = 1..K-1``; phase ``k`` pulls
    each of the ``K + 1 - k`` arms still in play up to ``n_k`` samples, so the run takes
    ``n_1 + ... + n_{K-1} + n_{K-1} <= n`` samples; the rest goes to the two arms of the
    last phase (half each, the extra one to the lower index)."""

    def _setup(self) -> None:
        super()._setup()
        K, B = self.N, int(self.solver.budget)
        if B <= K:
            raise self.solver._budget_error(K + 1, f"more samples than the {K} arms: n_k = ceil((n - K) / "
                                                   "(log_bar(K) (K + 1 - k))) needs n > K")
        lb = log_bar(K)
        self.n_k = [math.ceil((B - K) / (lb * (K + 1 - k))) for k in range(1, K)]
        used = sum(self.n_k) + self.n_k[-1]
        if used > B:  # the phase lengths sum to at most n (Audibert & Bubeck, SR)
            raise RuntimeError(f"phase lengths {self.n_k} exceed the budget {B}")
        self.left_over = B - used
        self.n_phases = K - 1

    def _begin_phase(self) -> None:
        self.target = np.where(self.active, self.n_k[self.phase], self.T).astype(np.int64)
        if self.phase == self.n_phases - 1 and self.left_over:
            idx = self._undecided()
            extra = np.full(idx.size, self.left_over // idx.size, dtype=np.int64)
            extra[: self.left_over % idx.size] += 1
            self.target[idx] += extra

    def _next_phase(self) -> None:
        self.phase += 1
        if self.phase >= self.n_phases:
            self._finish()
        else:
            self._begin_phase()


class _SRExploration(_SRSchedule):
    def _end_phase(self) -> None:
        idx = self._undecided()
        worst = int(_ordered(self._means(), self.rng, idx)[-1])  # argmin, ties at random
        self.active[worst] = False
        self._next_phase()

    @property
    def recommendation(self) -> int:
        idx = self._undecided()
        return int(idx[np.argmax(self._means()[idx])])

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "phase_lengths": list(self.n_k)}


@register_solver
class SuccessiveRejects(_IndexSolver):
    """Successive Rejects (SR) for the best arm with a fixed budget.

    Audibert & Bubeck, "Best arm identification in multi-armed bandits" (COLT 2010), the
    SR algorithm: with ``log_bar(K) = 1/2 + sum_{i=2}^K 1/i``, ``n_0 = 0`` and
    ``n_k = ceil((n - K) / (log_bar(K) (K + 1 - k)))``, phase ``k = 1..K-1`` pulls every arm
    still in play ``n_k - n_{k-1}`` times and rejects the one with the lowest empirical mean
    (ties at random); the last arm is the answer (an int). The ``n`` minus
    ``n_1 + ... + n_{K-1} + n_{K-1}`` samples the rounding leaves go to the last phase.

    Parameters
    ----------
    budget : int, optional
        The number of samples ``n`` (> number of arms); or give it to :meth:`run` / :meth:`start`.

    Notes
    -----
    ``info["error_bound"]``: Theorem 2, ``e_n <= K (K - 1) / 2 exp(-(n - K) / (log_bar(K)
    H_2))`` with ``H_2 = max_i i Delta_(i)^-2`` (rewards in [0, 1]), here with ``H_2``
    multiplied by ``4 sigma^2`` for sigma-sub-Gaussian rewards (module docstring). The gaps:
    ``Delta_i = mu* - mu_i`` and, for the best arm, the gap to the second best.

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> res = SuccessiveRejects().run(GaussianArms([1.0, 0.5, 0.0], sigma=0.5, rng=0), rng=0, budget=60)
    >>> res.answer, res.samples, res.status
    (0, 60, 'budget_exhausted')
    """

    name = "successive-rejects"
    exploration_class = _SRExploration

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        mu, sigma = _env_means(env), true_noise_scale(env, largest=True)
        if mu is None or sigma is None or mu.ndim != 1 or mu.size < 2:
            return {"error_bound": None, "error_bound_source": "no truth to compute Theorem 2's H_2"}
        K, n = mu.size, int(self.budget)  # type: ignore[arg-type]
        srt = np.sort(mu)[::-1]
        gaps = srt[0] - mu
        gaps[np.argmax(mu)] = srt[0] - srt[1]
        H2 = 4.0 * sigma**2 * hardness_h2(gaps)
        return {"error_bound": _exp_bound(K * (K - 1) / 2, n - K, log_bar(K) * H2), "hardness": H2,
                "error_bound_source": "Audibert & Bubeck (2010), Theorem 2: K(K-1)/2 exp(-(n - K)/(log_bar(K) H_2)), "
                                      "H_2 = max_i i/Delta_(i)^2 times 4 sigma^2"}


class _SARExploration(_SRSchedule):
    def _end_phase(self) -> None:
        idx = self._undecided()
        order = _ordered(self._means(), self.rng, idx)
        mu = self._means()
        ell = int(self.solver.K) - int(self.accepted.sum())  # arms still to accept, l(k)
        if ell <= 0:  # nothing left to accept: every phase rejects its worst arm
            accept = False
        elif ell >= order.size:  # everything left must be accepted
            accept = True
        else:
            gap_accept = mu[order[0]] - mu[order[ell]]  # the best arm's empirical gap
            gap_reject = mu[order[ell - 1]] - mu[order[-1]]  # the worst arm's empirical gap
            accept = bool(gap_accept > gap_reject)
        arm = int(order[0] if accept else order[-1])
        self.active[arm] = False
        self.accepted[arm] = accept
        self._next_phase()
        if self.done:  # the last arm: accepted iff one is still missing
            last = self._undecided()
            if last.size:
                self.accepted[last] = int(self.accepted.sum()) < int(self.solver.K)

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        out = self.accepted.copy()
        idx = self._undecided()
        ell = int(self.solver.K) - int(out.sum())
        if ell > 0 and idx.size:
            out[idx[np.argsort(-self._means()[idx], kind="stable")[:ell]]] = True
        return out

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "phase_lengths": list(self.n_k)}


@register_solver
class SuccessiveAcceptsRejects(_IndexSolver):
    """Successive Accepts and Rejects (SAR) for the best ``K`` arms with a fixed budget.

    Bubeck, Wang & Viswanathan, "Multiple identifications in multi-armed bandits" (ICML
    2013), the SAR algorithm: the phases and lengths of SR over the ``N`` arms; after
    phase ``k`` with ``l(k)`` arms still to accept, the empirical gaps are
    ``mu^_(1) - mu^_(l+1)`` for the best arm in play and ``mu^_(l) - mu^_(last)`` for the
    worst; the arm with the larger gap is decided (the best accepted, the worst rejected).
    Once ``l(k) = 0`` (or equals the arms in play) the answer is fixed and the remaining
    phases reject (accept) one arm each, so the budget is spent as planned. The answer is a
    bool mask of ``K`` arms.

    Parameters
    ----------
    K : int
        Number of arms to identify (``1 <= K < N``).
    budget : int, optional
        The number of samples ``n`` (> N).

    Notes
    -----
    ``info["error_bound"]``: the paper's bound for SAR, ``e_n <= 2 N^2 exp(-(n - N) / (8 log_bar(N) H_2))``
    with ``H_2 = max_i i Delta_(i)^-2`` and the Best-K gaps ``Delta_i = mu_i - mu_(K+1)``
    (``i`` among the best K), ``mu_(K) - mu_i`` (the others); ``H_2`` times ``4 sigma^2``.

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> res = SuccessiveAcceptsRejects(2, budget=200).run(GaussianArms([1.0, 0.8, 0.0, 0.1], sigma=0.5, rng=1), rng=0)
    >>> res.answer.tolist(), res.samples
    ([True, True, False, False], 200)
    """

    name = "successive-accepts-rejects"
    exploration_class = _SARExploration

    def __init__(self, K: int = 1, *, budget: int | None = None) -> None:
        super().__init__(budget=budget)
        self.K = check_int(K, "K", owner=type(self).__name__, low=1)

    def start(self, problem: Any, *, rng: Any = None, budget: int | None = None) -> Exploration:
        n = int(getattr(getattr(problem, "problem", problem), "n_arms", 0) or 0)
        if n and self.K >= n:
            raise param_error("K", type(self).__name__, f"an int in the range [1, {n - 1}] (fewer than the arms)", self.K)
        return super().start(problem, rng=rng, budget=budget)

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        mu, sigma = _env_means(env), true_noise_scale(env, largest=True)
        if mu is None or sigma is None or mu.ndim != 1 or mu.size <= self.K:
            return {"error_bound": None, "error_bound_source": "no truth to compute SAR's H_2"}
        N, n, K = mu.size, int(self.budget), self.K  # type: ignore[arg-type]
        srt = np.sort(mu)[::-1]
        top = mu >= srt[K - 1]
        gaps = np.where(top, mu - srt[K], srt[K - 1] - mu)
        H2 = 4.0 * sigma**2 * hardness_h2(gaps)
        return {"error_bound": _exp_bound(2.0 * N * N, n - N, 8.0 * log_bar(N) * H2), "hardness": H2,
                "error_bound_source": "Bubeck, Wang & Viswanathan (2013), SAR's bound: 2 N^2 exp(-(n - N)/(8 log_bar(N) "
                                      "H_2)), Best-K gaps, H_2 times 4 sigma^2"}


# ---------------------------------------------------------------------- Sequential Halving
class _SHExploration(_IndexPhasedExploration):
    """Rounds ``r = 0..R-1`` (``R = ceil(log2 N)``): each arm in play gets
    ``t_r = floor(n / (|S_r| R))`` fresh samples; the round's own means rank them."""

    _arrays = (*_IndexPhasedExploration._arrays, "RT", "RS")

    def _setup(self) -> None:
        super()._setup()
        N, B = self.N, int(self.solver.budget)
        self.n_phases = math.ceil(math.log2(N))
        if B < N * self.n_phases:
            raise self.solver._budget_error(N * self.n_phases, f"at least N ceil(log2 N) = {N * self.n_phases} samples: "
                                                        "t_r = floor(n / (|S_r| ceil(log2 N))) must be >= 1")
        sizes = [N]
        for _ in range(self.n_phases - 1):
            sizes.append(math.ceil(sizes[-1] / 2))
        self.sizes = sizes
        self.t_r = [B // (s * self.n_phases) for s in sizes]
        self.left_over = B - sum(t * s for t, s in zip(self.t_r, sizes))

    def _init_extra(self) -> None:
        self.RT = np.zeros(self.N, dtype=np.int64)
        self.RS = np.zeros(self.N, dtype=np.float64)

    def _fold_extra(self, arms: NDArray[np.intp], counts: NDArray[np.int64], sums: NDArray[np.float64]) -> None:
        np.add.at(self.RT, arms, counts)
        np.add.at(self.RS, arms, sums)

    def _begin_phase(self) -> None:
        self.RT[:] = 0
        self.RS[:] = 0.0
        t = np.full(self.N, self.t_r[self.phase], dtype=np.int64)
        if self.phase == self.n_phases - 1 and self.left_over:
            idx = self._undecided()
            extra = np.full(idx.size, self.left_over // idx.size, dtype=np.int64)
            extra[: self.left_over % idx.size] += 1
            t[idx] += extra
        self.target = np.where(self.active, self.T + t, self.T).astype(np.int64)

    def _round_means(self) -> NDArray[np.float64]:
        out = np.full(self.N, -math.inf)
        np.divide(self.RS, self.RT, out=out, where=self.RT > 0)
        return out

    def _end_phase(self) -> None:
        idx = self._undecided()
        keep = _ordered(self._round_means(), self.rng, idx)[: math.ceil(idx.size / 2)]
        self.active[:] = False
        self.active[keep] = True
        self.phase += 1
        if self.phase >= self.n_phases:
            self._finish()
        else:
            self._begin_phase()

    @property
    def recommendation(self) -> int:
        idx = self._undecided()
        rm = self._round_means()[idx]
        if not np.any(np.isfinite(rm)):  # a fresh round: the previous rounds' ranking
            rm = self._means()[idx]
        return int(idx[np.argmax(rm)])

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "round_lengths": list(self.t_r)}


@register_solver
class SequentialHalving(_IndexSolver):
    """Sequential Halving for the best arm with a fixed budget.

    Karnin, Koren & Somekh, "Almost optimal exploration in multi-armed bandits" (ICML 2013),
    Algorithm 1: ``S_0`` = all ``N`` arms; for ``r = 0..ceil(log2 N) - 1`` sample each arm of
    ``S_r`` ``t_r = floor(T / (|S_r| ceil(log2 N)))`` times, and keep in ``S_{r+1}`` the
    ``ceil(|S_r| / 2)`` arms with the largest averages *of round r's samples* (ties at
    random); the arm left is the answer (an int). The samples the floors leave go to the last
    round. Karnin et al. give no top-k version (module docstring).

    Parameters
    ----------
    budget : int, optional
        The number of samples ``T`` (>= N ceil(log2 N)).

    Notes
    -----
    ``info["error_bound"]``: Theorem 4.1, the best arm is missed with probability at most
    ``3 log2 N exp(-T / (8 H_2 log2 N))`` (rewards in [0, 1]; ``H_2`` times ``4 sigma^2``).

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> res = SequentialHalving(budget=120).run(GaussianArms([0.2, 1.0, 0.0, 0.1], sigma=0.5, rng=0), rng=0)
    >>> res.answer, res.samples
    (1, 120)
    """

    name = "sequential-halving"
    exploration_class = _SHExploration

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        mu, sigma = _env_means(env), true_noise_scale(env, largest=True)
        if mu is None or sigma is None or mu.ndim != 1 or mu.size < 2:
            return {"error_bound": None, "error_bound_source": "no truth to compute Theorem 4.1's H_2"}
        N, T = mu.size, int(self.budget)  # type: ignore[arg-type]
        srt = np.sort(mu)[::-1]
        # H_2 = max_{i >= 2} i / Delta_i^2 over the arms' ranks i: the gaps of ranks 2..N with the
        # second gap listed twice, so that position i in the sorted list is rank i
        gaps = np.concatenate([[srt[0] - srt[1]], srt[0] - srt[1:]])
        H2 = 4.0 * sigma**2 * hardness_h2(gaps)
        l2 = math.log2(N)
        return {"error_bound": _exp_bound(3.0 * l2, T, 8.0 * H2 * l2), "hardness": H2,
                "error_bound_source": "Karnin, Koren & Somekh (2013), Theorem 4.1: 3 log2(N) exp(-T/(8 H_2 log2 N)), "
                                      "H_2 times 4 sigma^2"}


# ---------------------------------------------------------------------- CSAR (semi-bandit)
class _CSARSchedule:
    """CSAR's phases (Chen et al. 2014, Algorithm 2): ``t = 1..n``,
    ``n~_t = ceil((T - n) / (log~(n) (n - t + 1)))`` with ``log~(n) = sum_{i=1}^n 1/i``; in
    phase ``t`` each of the ``n - t + 1`` undecided arms is pulled ``n~_t - n~_{t-1}`` times,
    so the run takes ``n~_1 + ... + n~_n <= T`` samples."""

    @staticmethod
    def lengths(T: int, n: int) -> list[int]:
        h = harmonic_number(n)
        return [math.ceil((T - n) / (h * (n - t + 1))) for t in range(1, n + 1)]


def _decision_class_of(solver: Any, problem: Any, owner: str) -> Any:
    dc = getattr(solver, "decision_class", None)
    if dc is None:
        dc = getattr(problem, "decision_class", None)
    if dc is None:
        raise InvalidParameterError(
            f"{owner} needs a decision class: give {owner}(decision_class=...) or a problem that carries one."
        )
    if getattr(dc, "n", None) != int(problem.n_arms):
        raise InvalidParameterError(
            f"The decision class of {owner} must have a ground set of the problem's {problem.n_arms} arms. "
            f"Got a class over {getattr(dc, 'n', None)} elements instead."
        )
    if not callable(getattr(dc, "argmax_constrained", None)):
        raise param_error("decision_class", owner, "a decision class with argmax_constrained", dc)
    return dc


class _CSARExploration(_IndexPhasedExploration):
    def _setup(self) -> None:
        super()._setup()
        self.dc = _decision_class_of(self.solver, self.problem, type(self.solver).__name__)
        n, T = self.N, int(self.solver.budget)
        if T <= n:
            raise self.solver._budget_error(n + 1, f"more samples than the {n} arms: n~_t = ceil((T - n) / "
                                                   "(log~(n) (n - t + 1))) needs T > n")
        self.n_t = _CSARSchedule.lengths(T, n)
        self.left_over = T - sum(self.n_t)
        if self.left_over < 0:
            raise RuntimeError(f"phase lengths {self.n_t} exceed the budget {T}")
        self.n_phases = n

    def _begin_phase(self) -> None:
        self.target = np.where(self.active, self.n_t[self.phase], self.T).astype(np.int64)
        if self.phase == self.n_phases - 1:
            self.target[self.active] += self.left_over

    def _weights(self) -> NDArray[np.float64]:
        return np.divide(self.S, self.T, out=np.zeros(self.N), where=self.T > 0)

    def _end_phase(self) -> None:
        arm, accept = csar_step(self.dc, self._weights(), self.accepted, ~self.active & ~self.accepted,
                                self._undecided())
        self.active[arm] = False
        self.accepted[arm] = accept
        self.phase += 1
        if self.phase >= self.n_phases:
            self._finish()
        else:
            self._begin_phase()

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        if not self.active.any():
            return self.accepted.copy()
        m = self.dc.argmax_constrained(self._weights(), include=np.flatnonzero(self.accepted),
                                       exclude=np.flatnonzero(~self.active & ~self.accepted))
        return np.asarray(m, dtype=bool) if m is not None else self.accepted.copy()

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "phase_lengths": list(self.n_t)}


@register_solver
class CSAR(_IndexSolver):
    """Combinatorial Successive Accept Reject (CSAR) with a fixed budget, semi-bandit feedback.

    Chen, Lin, King, Lyu & Chen, "Combinatorial pure exploration of multi-armed bandits"
    (NeurIPS 2014), Algorithm 2: phases ``t = 1..n`` of lengths
    ``n~_t = ceil((T - n) / (log~(n) (n - t + 1)))``, ``log~(n) = sum_{i=1}^n 1/i``; after
    each phase one undecided arm is accepted or rejected through the constrained oracle
    (:func:`csar_step`: the arm whose flip costs the most under the empirical means); the
    accepted set is the answer (a bool mask, a member of the class). Works on every decision
    class with ``argmax_constrained`` (matroids, paths, matchings, top-k, CP-SAT classes).
    The samples the ceilings leave go to the last undecided arm.

    Parameters
    ----------
    decision_class : DecisionClass, optional
        Default: the problem's.
    budget : int, optional
        The number of samples ``T`` (> n).

    Notes
    -----
    ``info["error_bound"]``: the paper's fixed-budget bound for R-sub-Gaussian rewards
    (``R = sigma``), in the form its proof gives: on the event that every undecided arm's mean is within
    ``Delta_(n-t+1) / (3 width)`` after phase ``t`` CSAR is correct; the sub-Gaussian tail
    ``2 exp(-n~_t eps^2 / (2 R^2))`` with ``eps = Delta / (3 width)``, ``n~_t >= (T - n) /
    (log~(n) (n - t + 1))`` and ``(n - t + 1) / Delta_(n-t+1)^2 <= H_2``, summed over the
    ``n (n + 1) / 2`` (phase, arm) pairs, give ``n (n + 1) exp(-(T - n) / (18 R^2 log~(n)
    width^2 H_2))``, with Chen et al.'s gaps (:func:`chen_gaps`) and ``width`` the class's
    (None when the class does not know it).

    Examples
    --------
    >>> from combex.environments import GaussianArms
    >>> from combex.oracles import PartitionMatroid
    >>> pm = PartitionMatroid([0, 0, 1, 1], [1, 1], base=True)
    >>> res = CSAR(decision_class=pm, budget=200).run(GaussianArms([0.9, 0.1, 0.0, 0.8], sigma=0.5, rng=0), rng=0)
    >>> res.answer.tolist(), res.samples
    ([True, False, False, True], 200)
    """

    name = "csar"
    exploration_class = _CSARExploration

    def __init__(self, *, decision_class: Any = None, budget: int | None = None) -> None:
        super().__init__(budget=budget)
        if decision_class is not None and not callable(getattr(decision_class, "argmax_constrained", None)):
            raise param_error("decision_class", type(self).__name__, "a decision class with argmax_constrained",
                              decision_class)
        self.decision_class = decision_class

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        mu, sigma = _env_means(env), true_noise_scale(env, largest=True)
        dc = self.decision_class if self.decision_class is not None else getattr(env, "decision_class", None)
        if mu is None or sigma is None or dc is None:
            return {"error_bound": None, "error_bound_source": "no truth to compute CSAR's H_2"}
        width = getattr(dc, "width", None)
        if not isinstance(width, (int, np.integer)):
            return {"error_bound": None, "error_bound_source": "CSAR's bound needs width(M); the class does not know it"}
        n, T = mu.size, int(self.budget)  # type: ignore[arg-type]
        H2 = hardness_h2(chen_gaps(dc, mu))
        return {"error_bound": _exp_bound(n * (n + 1.0), T - n, 18.0 * sigma**2 * harmonic_number(n) * width**2 * H2),
                "hardness": H2, "width": int(width),
                "error_bound_source": "Chen et al. (2014), CSAR's bound (constant of its proof): n(n+1) exp(-(T - n)/"
                                      "(18 R^2 log~(n) width^2 H_2)), R = sigma"}


# ============================================================================ full bandit
def _problem_arms(problem: Any, owner: str) -> tuple[Any, int]:
    """``(decision class, n)`` of a full-bandit problem."""
    dc = getattr(problem, "decision_class", None)
    if dc is None:
        raise InvalidParameterError(f"{owner} needs a decision class for a full-bandit (mask) problem.")
    return dc, int(problem.n_arms)


def _class_size(dc: Any) -> int | None:
    size = getattr(dc, "size", None)
    size = size() if callable(size) else size
    return int(size) if isinstance(size, (int, np.integer)) else None


def _enumerate(dc: Any, limit: int) -> NDArray[np.bool_] | None:
    """The members of ``dc`` as a bool array when it has at most ``limit`` of them, else None."""
    size = _class_size(dc)
    if size is not None and size > limit:
        return None
    try:
        out = []
        for m in dc.enumerate():
            out.append(np.asarray(m, dtype=bool))
            if len(out) > limit:
                return None
    except InvalidParameterError:  # a class that refuses to enumerate
        return None
    return np.array(out, dtype=bool).reshape(-1, int(dc.n))


def _team_noise(env: Any, dc: Any) -> float | None:
    k = int(np.asarray(dc.argmax(np.zeros(dc.n)), dtype=bool).sum())
    return true_noise_scale(env, max(k, 1), largest=True)


class _DesignExploration(_FixedBudgetExploration):
    """Phases of pulls of listed arms (masks or row indices) with planned counts; every told
    pull is folded by :meth:`_fold` (least squares); a phase ends when each listed arm has
    its planned count. State: the phase's arms, planned and told counts, per-base-arm
    ``T``, and the subclass's ``_extra``."""

    def __init__(self, solver: FixedBudgetSolver, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._setup()
        self.T = np.zeros(self.n, dtype=np.int64)
        self.phase = 0
        self._init_extra()
        self._begin_phase()

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _setup(self) -> None:
        """Hook of the concrete phase rule."""

    def _init_extra(self) -> None:
        pass

    @abstractmethod
    def _begin_phase(self) -> None:
        """Hook of the concrete phase rule."""

    @abstractmethod
    def _fold(self, X: NDArray[np.float64], counts: NDArray[np.int64], sums: NDArray[np.float64]) -> None:
        """Hook of the concrete phase rule."""

    # ------------------------------------------------------------------ schedule
    def _key(self, arm: Any) -> Any:
        a = np.asarray(arm)
        return int(a) if a.ndim == 0 else np.packbits(a.astype(bool)).tobytes()

    def _plan(self, arms: Any, counts: NDArray[np.int64]) -> None:
        """The phase's arms (bool masks (m, n) or ints (m,)) and planned counts (m,)."""
        keep = counts > 0
        self.plan_arms = np.asarray(arms)[keep]
        self.plan_counts = np.asarray(counts, dtype=np.int64)[keep]
        self.plan_done = np.zeros(self.plan_counts.size, dtype=np.int64)
        self._index = {self._key(a): i for i, a in enumerate(self.plan_arms)}

    def _phase_complete(self) -> bool:
        return bool(np.all(self.plan_done >= self.plan_counts))

    def _next_batch(self) -> Batch:
        need = self.plan_counts - self.plan_done
        keep = need > 0
        return Batch(self.plan_arms[keep], need[keep].astype(np.int64))

    def _rows(self, arms: NDArray[Any]) -> NDArray[np.float64]:
        return arms.astype(np.float64)

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = np.asarray(batch.arms)
        counts = np.asarray(batch.counts, dtype=np.int64)
        if self.arm_kind == "mask":
            arms = arms.astype(bool)
            self.T += counts @ arms.astype(np.int64)
        else:
            arms = arms.astype(np.intp)
            np.add.at(self.T, arms, counts)
        for a, c in zip(arms, counts.tolist()):
            i = self._index.get(self._key(a))
            if i is not None:
                self.plan_done[i] += c
        keep = counts > 0
        if keep.any():
            self._fold(self._rows(arms[keep]), counts[keep], reward_sums[keep])
        self._advance()

    def _told_arm_type(self) -> str:
        return self.arm_kind

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T

    # ------------------------------------------------------------------ save / resume
    def _extra_state(self) -> dict[str, Any]:
        return {"T": self.T.copy(), "phase": int(self.phase), "plan_arms": np.array(self.plan_arms, copy=True),
                "plan_counts": self.plan_counts.copy(), "plan_done": self.plan_done.copy(), "extra": self._extra()}

    def _extra(self) -> dict[str, Any]:
        return {}

    def _load_extra(self, state: dict[str, Any]) -> None:
        pass

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._setup()
        self.T = np.array(state["T"], dtype=np.int64, copy=True)
        if self.T.shape != (self.n,):
            raise StateError(f"The field 'T' of the saved state has shape {self.T.shape}, not ({self.n},).")
        phase = state["phase"]
        if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
            raise StateError(f"The field 'phase' of the saved state must be a nonnegative integer. Got {phase!r}.")
        self.phase = phase
        arms = np.array(state["plan_arms"], dtype=bool if self.arm_kind == "mask" else np.intp)
        self.plan_arms = arms
        self.plan_counts = np.array(state["plan_counts"], dtype=np.int64)
        self.plan_done = np.array(state["plan_done"], dtype=np.int64)
        if self.plan_counts.shape != self.plan_done.shape or self.plan_counts.shape[0] != arms.shape[0]:
            raise StateError("The fields 'plan_arms', 'plan_counts' and 'plan_done' of the saved state disagree "
                             "in length.")
        self._index = {self._key(a): i for i, a in enumerate(self.plan_arms)}
        self._load_extra(dict(state["extra"]))


class _TeamSolver(FixedBudgetSolver):
    arm_type: ClassVar[str] = "mask"
    families: ClassVar[tuple[str, ...]] = ("full-bandit",)


# ---------------------------------------------------------------------- uniform allocation
_DESIGNS = ("auto", "all", "balanced")


class _UniformExploration(_DesignExploration):
    arm_kind = "mask"

    def _setup(self) -> None:
        s = self.solver
        self.dc, self.n = _problem_arms(self.problem, type(s).__name__)
        if int(s.budget) < self.n:
            raise s._budget_error(self.n, f"at least the {self.n} members' qualities to estimate")

    def _init_extra(self) -> None:
        self.ls = LeastSquares(self.n)

    def _support(self) -> tuple[NDArray[np.bool_], str]:
        s = self.solver
        B = int(s.budget)
        if s.design in ("auto", "all"):
            members = _enumerate(self.dc, min(B, s.max_enumerate) if s.design == "auto" else s.max_enumerate)
            if members is not None and members.shape[0]:
                return members, "all members, round-robin"
            if s.design == "all":
                raise InvalidParameterError(
                    f"The 'design' parameter of {type(s).__name__} is 'all', but the decision class has more than "
                    f"max_enumerate={s.max_enumerate} members (or cannot enumerate them). Got {self.dc!r}."
                )
        if isinstance(self.dc, TopK) and 1 <= self.dc.k < self.n:
            return balanced_topk_support(self.n, self.dc.k, rng=0), "balanced cyclic top-k support"
        return support_from_decision_class(self.dc, rng=0), "spanning members of the class"

    def _begin_phase(self) -> None:
        support, self.design_name = self._support()
        self._plan(support, _even_counts(support.shape[0], int(self.solver.budget), self.rng))

    def _fold(self, X: NDArray[np.float64], counts: NDArray[np.int64], sums: NDArray[np.float64]) -> None:
        self.ls.update_many(X, sums, counts)

    def _end_phase(self) -> None:
        self.phase += 1
        self._finish()

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        return np.asarray(self.dc.argmax(_ls_theta(self.ls)), dtype=bool)

    def _extra(self) -> dict[str, Any]:
        return {"ls": self.ls.state_dict(), "design_name": self.design_name}

    def _load_extra(self, state: dict[str, Any]) -> None:
        self.ls = LeastSquares.from_state(state["ls"])
        self.design_name = str(state["design_name"])

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "design": self.design_name, "design_size": int(self.plan_arms.shape[0]),
                "information_matrix": np.array(self.ls.A, copy=True)}


@register_solver
class UniformAllocation(_TeamSolver):
    """Uniform allocation over teams, with full-bandit feedback (the fixed-budget baseline).

    The budget is spread evenly (counts differ by at most one; which teams get the extra
    pull is drawn from ``rng``) over a fixed design: with ``design="auto"``, every member of
    the decision class round-robin when it has at most ``budget`` members (for top-k classes
    the uniform design over all k-subsets, G-optimal by Kiefer-Wolfowitz:
    :func:`~combex.allocations.uniform_topk_g_value`), else the balanced cyclic support of
    :func:`~combex.allocations.balanced_topk_support` (top-k; G-value close to n) or the
    spanning members of :func:`~combex.allocations.support_from_decision_class` (other
    classes); ``"all"``: every member (up to ``max_enumerate``); ``"balanced"``: never
    enumerate. The answer is the class's argmax of the least-squares estimate of the members'
    qualities (the minimum-norm one while the design is singular).

    Parameters
    ----------
    design : {"auto", "all", "balanced"}
    max_enumerate : int, default 100000
        Largest class ``design="all"`` enumerates.
    budget : int, optional
        The number of team evaluations (>= the number of base arms n).

    Notes
    -----
    ``info["error_bound"]`` (classes of at most ``max_enumerate`` members): the union, over
    the members ``M`` with a positive gap ``Delta_M``, of the sub-Gaussian tail of the
    least-squares estimate of a fixed design (Lattimore & Szepesvari, "Bandit Algorithms",
    2020, Chapter 20): ``sum_M exp(-Delta_M^2 / (2 sigma^2 ||x* - x_M||^2_{V^-1}))``, ``V`` the
    design's information matrix (``sum`` of the pulled ``x x^T``) and ``sigma`` the scale of
    one team score.

    Examples
    --------
    >>> from combex.environments import FullBandit
    >>> env = FullBandit([1.0, 0.9, 0.2, 0.0], k=2, sigma=0.3, rng=0)
    >>> res = UniformAllocation(budget=60).run(env, rng=0)
    >>> np.flatnonzero(res.answer).tolist(), res.samples, res.info["design"]
    ([0, 1], 60, 'all members, round-robin')
    """

    name = "uniform-allocation"
    exploration_class = _UniformExploration

    def __init__(self, *, design: str = "auto", max_enumerate: int = 100_000, budget: int | None = None) -> None:
        super().__init__(budget=budget)
        self.design = check_choice(design, "design", _DESIGNS, owner=type(self).__name__)
        self.max_enumerate = check_int(max_enumerate, "max_enumerate", owner=type(self).__name__, low=1)

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        V = np.asarray(None if result is None else result.info.get("information_matrix"))
        mu = _env_means(env)
        dc = getattr(env, "decision_class", None)
        if V.ndim != 2:
            return {"error_bound": None, "error_bound_source": "no design: the bound needs the run's result"}
        if mu is None or dc is None:
            return {"error_bound": None, "error_bound_source": "no truth to compute the gaps"}
        sigma = _team_noise(env, dc)
        members = _enumerate(dc, self.max_enumerate)
        if sigma is None or members is None:
            return {"error_bound": None, "error_bound_source": "the class is too large to enumerate for the union bound"}
        X = members.astype(np.float64)
        vals = X @ mu
        star = int(np.argmax(vals))
        D = X - X[star]
        gaps = vals[star] - vals
        pos = gaps > 1e-12
        Vinv = np.linalg.pinv(V)
        norms = np.einsum("ij,jk,ik->i", D[pos], Vinv, D[pos])
        with np.errstate(divide="ignore"):
            terms = np.exp(-gaps[pos] ** 2 / (2.0 * sigma**2 * np.maximum(norms, 1e-300)))
        return {"error_bound": float(terms.sum()),
                "error_bound_source": "union bound over the members of the least-squares sub-Gaussian tail of a fixed "
                                      "design: sum_M exp(-Delta_M^2/(2 sigma^2 ||x* - x_M||^2_{V^-1}))"}


# ---------------------------------------------------------------------- OD-LinBAI
class _ODLinBAIExploration(_DesignExploration):
    """Phases ``r = 1..ceil(log2 d)`` over the candidate arms ``A_{r-1}`` (rows of ``X``):
    the phase's data only, in the coordinates of the candidates' span."""

    def _setup(self) -> None:
        s = self.solver
        owner = type(s).__name__
        p = self.problem
        if getattr(p, "arm_type", "index") == "mask":
            dc, self.n = _problem_arms(p, owner)
            members = _enumerate(dc, s.max_enumerate)
            if members is None or members.shape[0] == 0:
                raise InvalidParameterError(
                    f"{owner} runs over the enumerated members of the decision class; {dc!r} has more than "
                    f"max_enumerate={s.max_enumerate} members (or cannot enumerate them). Raise max_enumerate, or use "
                    "'csar-full-bandit' or 'uniform-allocation' for large classes."
                )
            self.arm_kind = "mask"
            self.members = members
            self.X = members.astype(np.float64)
        else:
            feats = getattr(p, "features", None)
            if feats is None:
                raise InvalidParameterError(f"{owner} needs a linear problem (features) or a full-bandit problem.")
            self.arm_kind = "index"
            self.members = None
            self.X = np.asarray(feats, dtype=np.float64)
            self.n = int(p.n_arms)
        K = self.X.shape[0]
        self.d = d = max(1, int(np.linalg.matrix_rank(self.X)))
        self.n_phases = max(1, math.ceil(math.log2(d)))
        self.keeps = [math.ceil(d / 2**r) for r in range(1, self.n_phases + 1)]
        reserve = min(K, d * (d + 1) // 2) + sum(self.keeps[:-1])
        B = int(s.budget)
        self.m = (B - reserve) / self.n_phases
        if self.m <= 0:
            raise s._budget_error(reserve + 1, f"m = (T - min(K, d(d+1)/2) - sum_r ceil(d/2^r)) / ceil(log2 d) > 0 "
                                               f"with K = {K}, d = {d}")

    def _init_extra(self) -> None:
        self.cand = np.arange(self.X.shape[0], dtype=np.intp)

    def _basis(self) -> NDArray[np.float64]:
        """An orthonormal basis (d x d_r) of the span of the candidates (the projection step of
        Algorithm 1; least-squares estimates are the same in any basis of it)."""
        Xc = self.X[self.cand]
        _, sv, vt = np.linalg.svd(Xc, full_matrices=False)
        rank = max(1, int(np.sum(sv > 1e-10 * max(sv[0], 1.0))))
        return np.ascontiguousarray(vt[:rank].T)

    def _begin_phase(self) -> None:
        self.V = self._basis()
        Z = self.X[self.cand] @ self.V
        w = _cached_design(Z)
        counts = np.zeros(w.size, dtype=np.int64)
        pos = w > 0
        counts[pos] = np.ceil(w[pos] * self.m).astype(np.int64)
        if self.phase == self.n_phases - 1:  # the samples the ceilings leave: the last phase, by its design
            rest = int(self.solver.budget) - int(self.samples) - int(counts.sum())
            if rest > 0:
                counts += apportion(w, rest)
        self.ls_phase = LeastSquares(self.V.shape[1])
        arms = self.members[self.cand] if self.arm_kind == "mask" else self.cand
        self._plan(arms, counts)

    def _rows(self, arms: NDArray[Any]) -> NDArray[np.float64]:
        X = arms.astype(np.float64) if self.arm_kind == "mask" else self.X[arms]
        return X @ self.V

    def _fold(self, X: NDArray[np.float64], counts: NDArray[np.int64], sums: NDArray[np.float64]) -> None:
        self.ls_phase.update_many(X, sums, counts)

    def _estimates(self) -> NDArray[np.float64]:
        return (self.X[self.cand] @ self.V) @ _ls_theta(self.ls_phase)

    def _end_phase(self) -> None:
        order = _ordered(self._estimates(), self.rng, np.arange(self.cand.size, dtype=np.intp))
        self.cand = self.cand[order[: min(self.cand.size, self.keeps[self.phase])]]
        self.phase += 1
        if self.phase >= self.n_phases:
            self._finish()
        else:
            self._begin_phase()

    @property
    def recommendation(self) -> Any:
        if self.done or self.ls_phase.n_updates == 0:
            best = int(self.cand[0])
        else:
            best = int(self.cand[int(np.argmax(self._estimates()))])
        return self.members[best].copy() if self.arm_kind == "mask" else best

    def _extra(self) -> dict[str, Any]:
        return {"cand": self.cand.copy(), "V": self.V.copy(), "ls": self.ls_phase.state_dict()}

    def _load_extra(self, state: dict[str, Any]) -> None:
        self.cand = np.array(state["cand"], dtype=np.intp)
        self.V = np.array(state["V"], dtype=np.float64)
        self.ls_phase = LeastSquares.from_state(state["ls"])
        if self.cand.size == 0 or self.cand.max() >= self.X.shape[0] or self.V.shape[0] != self.X.shape[1]:
            raise StateError("The fields 'cand' / 'V' of the saved state do not fit the problem's arms.")

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "m": float(self.m), "d": int(self.d), "n_candidates": int(self.X.shape[0])}


#: Phase designs of OD-LinBAI by arm set (the first phase's is the same for every run of a
#: problem); at most 16 kept, the oldest dropped. Values are read-only arrays.
_DESIGN_MEMO: dict[bytes, NDArray[np.float64]] = {}


def _cached_design(Z: NDArray[np.float64]) -> NDArray[np.float64]:
    """A G-optimal design over the rows of ``Z`` (Frank-Wolfe,
    :func:`~combex.allocations.g_optimal_design`) reduced to at most ``d (d + 1) / 2``
    support points (:func:`caratheodory_reduce`)."""
    key = Z.shape[0].to_bytes(8, "little") + np.ascontiguousarray(Z).tobytes()
    w = _DESIGN_MEMO.get(key)
    if w is None:
        w = caratheodory_reduce(Z, g_optimal_design(Z).weights)
        w.setflags(write=False)
        if len(_DESIGN_MEMO) >= 16:
            _DESIGN_MEMO.pop(next(iter(_DESIGN_MEMO)))
        _DESIGN_MEMO[key] = w
    return w


@register_solver
class ODLinBAI(FixedBudgetSolver):
    """OD-LinBAI: fixed-budget best arm of a linear bandit, over enumerated teams or features.

    Yang & Tan, "Minimax optimal fixed-budget best arm identification in linear bandits"
    (NeurIPS 2022), Algorithm 1: ``R = ceil(log2 d)`` phases with
    ``m = (T - min(K, d(d+1)/2) - sum_{r=1}^{R-1} ceil(d / 2^r)) / R``; phase ``r`` projects
    the candidates ``A_{r-1}`` onto their span (dimension ``d_r``), finds a G-optimal design
    ``pi_r`` with at most ``d_r (d_r + 1) / 2`` support points (Frank-Wolfe, then
    :func:`caratheodory_reduce`), pulls each arm ``ceil(pi_r(a) m)`` times, estimates
    ``theta`` by least squares on the phase's samples only and keeps the ``ceil(d / 2^r)``
    candidates with the largest estimates (ties at random). The samples the ceilings leave
    go to the last phase, by its design (:func:`~combex.allocations.apportion`).

    On a full-bandit problem the arms are the enumerated members of the decision class
    (their indicator vectors; e.g. the 495 teams of the lab case, d = 12): answers are bool
    masks. On a linear problem they are the feature rows: answers are row indices.

    Parameters
    ----------
    max_enumerate : int, default 100000
        Largest decision class enumerated.
    budget : int, optional
        The number of samples ``T`` (> min(K, d(d+1)/2) + sum_{r<R} ceil(d/2^r)).

    Notes
    -----
    ``info["error_bound"]``: the paper's upper bound, ``P(wrong) <= (4K/d + 3 log2 d) exp(-m / (32
    H_{2,lin}))`` with ``H_{2,lin} = max_{2 <= i <= d} i / Delta_i^2`` over the ``d`` best
    arms (1-sub-Gaussian noise; here ``Delta_i / sigma`` with ``sigma`` the scale of one
    observation). The first phase keeps only ``ceil(d / 2)`` of the ``K`` arms, so with
    many arms and a small budget most of the information is spent on one cut.

    Examples
    --------
    >>> from combex.environments import FullBandit
    >>> env = FullBandit([1.0, 0.9, 0.2, 0.0], k=2, sigma=0.3, rng=0)
    >>> res = ODLinBAI(budget=80).run(env, rng=0)
    >>> np.flatnonzero(res.answer).tolist(), res.samples
    ([0, 1], 80)
    """

    name = "od-linbai"
    arm_type: ClassVar[str] = "mask"
    families: ClassVar[tuple[str, ...]] = ("full-bandit", "linear")
    exploration_class = _ODLinBAIExploration

    def __init__(self, *, max_enumerate: int = 100_000, budget: int | None = None) -> None:
        super().__init__(budget=budget)
        self.max_enumerate = check_int(max_enumerate, "max_enumerate", owner=type(self).__name__, low=1)

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        mu = _env_means(env)
        if mu is None:
            return {"error_bound": None, "error_bound_source": "no truth to compute OD-LinBAI's H_2,lin"}
        dc = getattr(env, "decision_class", None)
        if getattr(env, "arm_type", "index") == "mask":
            members = None if dc is None else _enumerate(dc, self.max_enumerate)
            if members is None:
                return {"error_bound": None, "error_bound_source": "the class is too large to enumerate"}
            X, vals, sigma = members.astype(np.float64), members.astype(np.float64) @ mu, _team_noise(env, dc)
        else:
            X, vals, sigma = np.asarray(env.problem.features, dtype=np.float64), mu, true_noise_scale(env, largest=True)
        if sigma is None:
            return {"error_bound": None, "error_bound_source": "no noise scale to compute OD-LinBAI's bound"}
        K = X.shape[0]
        d = max(1, int(np.linalg.matrix_rank(X)))
        R = max(1, math.ceil(math.log2(d)))
        reserve = min(K, d * (d + 1) // 2) + sum(math.ceil(d / 2**r) for r in range(1, R))
        m = (int(self.budget) - reserve) / R  # type: ignore[arg-type]
        srt = np.sort(vals)[::-1][: max(2, d)]
        gaps = (srt[0] - srt[1:]) / sigma  # ranks i = 2..d; listed with the first twice, position i is rank i
        H = hardness_h2(np.concatenate([gaps[:1], gaps])) if gaps.size else 0.0
        prefactor = 4.0 * K / d + 3.0 * math.log2(d) if d > 1 else 4.0 * K
        return {"error_bound": _exp_bound(prefactor, m, 32.0 * H),
                "hardness": H,
                "error_bound_source": "Yang & Tan (2022), OD-LinBAI's upper bound: (4K/d + 3 log2 d) exp(-m/(32 H_2,lin)), "
                                      "H_2,lin = max_{2<=i<=d} i sigma^2/Delta_i^2"}


# ---------------------------------------------------------------------- CSAR, full bandit
class _RestrictedClass:
    """The members of ``dc`` containing ``include`` and avoiding ``exclude``, as a class
    with an ``argmax`` (what :func:`~combex.allocations.support_from_decision_class` needs)."""

    def __init__(self, dc: Any, include: NDArray[np.intp], exclude: NDArray[np.intp]) -> None:
        self.dc, self.include, self.exclude, self.n = dc, include, exclude, int(dc.n)

    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        m = self.dc.argmax_constrained(weights, include=self.include, exclude=self.exclude)
        if m is None:
            raise OracleError(f"{self.dc!r} has no member containing {self.include.tolist()} and avoiding "
                              f"{self.exclude.tolist()}.")
        return np.asarray(m, dtype=bool)

    def __repr__(self) -> str:
        return f"{self.dc!r} restricted to include={self.include.tolist()}, exclude={self.exclude.tolist()}"


#: Balanced top-k supports by (ground-set size, team size): deterministic (seed 0), reused by
#: every phase and run; at most 256 kept, the oldest dropped; read-only.
_BALANCED_MEMO: dict[tuple[int, int], NDArray[np.bool_]] = {}


class _FullBanditCSARExploration(_DesignExploration):
    arm_kind = "mask"

    def _setup(self) -> None:
        s = self.solver
        owner = type(s).__name__
        self.dc, self.n = _problem_arms(self.problem, owner)
        if not callable(getattr(self.dc, "argmax_constrained", None)):
            raise param_error("decision_class", owner, "a decision class with argmax_constrained", self.dc)
        B = int(s.budget)
        if B <= self.n:
            raise s._budget_error(self.n + 1, f"more evaluations than the {self.n} members: CSAR's phase lengths "
                                              "ceil((T - n) / (log~(n) (n - t + 1))) need T > n")
        self.n_t = _CSARSchedule.lengths(B, self.n)
        self.left_over = B - sum(self.n_t)
        self.n_phases = self.n

    def _init_extra(self) -> None:
        self.ls = LeastSquares(self.n)
        self.accepted = np.zeros(self.n, dtype=bool)
        self.rejected = np.zeros(self.n, dtype=bool)

    def _undecided(self) -> NDArray[np.intp]:
        return np.flatnonzero(~self.accepted & ~self.rejected).astype(np.intp)

    def _design(self) -> NDArray[np.bool_]:
        """Teams containing the accepted members and avoiding the rejected ones: for top-k
        the balanced cyclic support over the undecided members, else the spanning members of
        the restricted class; a single team when the class leaves no choice."""
        und = self._undecided()
        acc, rej = np.flatnonzero(self.accepted), np.flatnonzero(self.rejected)
        if isinstance(self.dc, TopK):
            kk = int(self.dc.k) - acc.size
            if 0 < kk < und.size:
                key = (int(und.size), kk)
                sub = _BALANCED_MEMO.get(key)
                if sub is None:
                    sub = balanced_topk_support(und.size, kk, rng=0)
                    sub.setflags(write=False)
                    if len(_BALANCED_MEMO) >= 256:
                        _BALANCED_MEMO.pop(next(iter(_BALANCED_MEMO)))
                    _BALANCED_MEMO[key] = sub
                teams = np.zeros((sub.shape[0], self.n), dtype=bool)
                teams[:, acc] = True
                teams[:, und] = sub
                return teams
            return np.asarray(_RestrictedClass(self.dc, acc, rej).argmax(np.zeros(self.n)), dtype=bool)[None, :]
        return support_from_decision_class(_RestrictedClass(self.dc, acc, rej), n_random=2 * max(1, und.size),
                                           rng=0, require_full_rank=False)

    def _begin_phase(self) -> None:
        t = self.phase
        pulls = self._undecided().size * (self.n_t[t] - (self.n_t[t - 1] if t else 0))
        if t == self.n_phases - 1:
            pulls += self.left_over
        teams = self._design()
        self._plan(teams, _even_counts(teams.shape[0], pulls, self.rng))

    def _fold(self, X: NDArray[np.float64], counts: NDArray[np.int64], sums: NDArray[np.float64]) -> None:
        self.ls.update_many(X, sums, counts)

    def _end_phase(self) -> None:
        arm, accept = csar_step(self.dc, _ls_theta(self.ls), self.accepted, self.rejected, self._undecided())
        (self.accepted if accept else self.rejected)[arm] = True
        self.phase += 1
        if self.phase >= self.n_phases:
            self._finish()
        else:
            self._begin_phase()

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        m = self.dc.argmax_constrained(_ls_theta(self.ls), include=np.flatnonzero(self.accepted),
                                       exclude=np.flatnonzero(self.rejected))
        return np.asarray(m, dtype=bool) if m is not None else self.accepted.copy()

    def _extra(self) -> dict[str, Any]:
        return {"ls": self.ls.state_dict(), "accepted": self.accepted.copy(), "rejected": self.rejected.copy()}

    def _load_extra(self, state: dict[str, Any]) -> None:
        self.ls = LeastSquares.from_state(state["ls"])
        self.accepted = np.array(state["accepted"], dtype=bool)
        self.rejected = np.array(state["rejected"], dtype=bool)
        if self.accepted.shape != (self.n,) or self.rejected.shape != (self.n,):
            raise StateError(f"The fields 'accepted' / 'rejected' of the saved state must have shape ({self.n},).")

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), "phase_lengths": list(self.n_t)}


@register_solver
class FullBanditCSAR(_TeamSolver):
    """CSAR with full-bandit feedback: combex's adaptation, for classes too large to enumerate.

    The phases, budget split and accept / reject rule of CSAR (Chen et al. 2014, Algorithm 2;
    :func:`csar_step`), with the members' qualities estimated by least squares from team
    scores: phase ``t`` spends ``(n - t + 1)(n~_t - n~_{t-1})`` evaluations -- CSAR's
    samples of that phase -- spread evenly (the remainder drawn from ``rng``) over teams that
    contain the accepted members and avoid the rejected ones (top-k: the balanced cyclic
    support of :func:`~combex.allocations.balanced_topk_support` over the undecided members;
    other classes: spanning members of the restricted class); after it, one member is
    accepted or rejected from the least-squares estimate of all evaluations so far. The run
    ends when every member is decided (the samples the ceilings leave go to the last
    phase). No paper proves a bound for this combination (the module docstring says what the
    literature has): ``info["error_bound"]`` is None.

    Parameters
    ----------
    budget : int, optional
        The number of team evaluations ``T`` (> the number of base arms n).

    Examples
    --------
    >>> from combex.environments import FullBandit
    >>> env = FullBandit([1.0, 0.9, 0.2, 0.0, 0.1], k=2, sigma=0.3, rng=0)
    >>> res = FullBanditCSAR(budget=100).run(env, rng=0)
    >>> np.flatnonzero(res.answer).tolist(), res.samples
    ([0, 1], 100)
    """

    name = "csar-full-bandit"
    exploration_class = _FullBanditCSARExploration

    def error_bound_info(self, env: Any, result: Result | None = None) -> dict[str, Any]:
        return {"error_bound": None,
                "error_bound_source": "none: combex's adaptation of CSAR (Chen et al. 2014) to full-bandit feedback "
                                      "has no proof"}
