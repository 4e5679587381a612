"""Conformance suite for PAC solvers (built-in or plug-in), like scikit-learn's
``check_estimator``: named checks, each separately addressable.

Why one file of more than 1,000 lines: check_solver's named checks share the case builders,
the run loop, the sequential error test and the report; each check is a short function,
and a reader checking what the suite guarantees reads them side by side.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, check_int, check_rng
from ..environments import (
    BernoulliArms,
    BinaryRewardLists,
    FullBandit,
    GaussianArms,
    LinearBandit,
    LinearInstance,
    RewardLists,
)
from ..exceptions import CombexError, InvalidParameterError, NoiseScaleWarning, StateError
from ..oracles import TopK
from ..solvers import Solver, get_solver

__all__ = ["check_solver", "yield_solver_checks", "solver_family", "solver_families", "clopper_pearson", "CaseReport",
           "SequentialRule", "FAST_RULE", "SLOW_RULE", "FAMILIES", "CHECKS"]

#: The instance families a PAC solver can declare (class attribute ``families``).
FAMILIES = ("semi-bandit", "full-bandit", "linear", "mips")

#: Adversarial cases (besides ``"easy"``), by family; see :func:`check_solver`.
ADVERSARIAL = ("offset", "small_gap", "noise_scale", "reward_range", "near_tie", "exact_tie")

#: Every check name, in the order :func:`check_solver` runs them (``"adversarial_order"`` is
#: added for the ``mips`` family).
CHECKS = ("easy", *(f"adversarial_{c}" for c in ADVERSARIAL), "understated_noise", "resume", "reproducible",
          "seeds_differ", "settings_unchanged", "bad_input", "wrong_family")

_TOL = 1e-9
# Tolerance given to a solver without one of its own for the exact-tie case.
_TIE_EPSILON = 0.25
# Gap of the near-tie case beyond the solver's own epsilon, by family, in units of the
# case's reward scale (Gaussian sigma 0.5 for semi-bandit arms, sigma 1 per member for
# full-bandit teams, sigma 1 for linear rewards, {0, 1} lists for MIPS).
_NEAR_TIE_GAP = {"semi-bandit": 0.1, "full-bandit": 0.4, "linear": 0.1, "mips": 0.1}
# The true noise of the understated_noise check is this many times the declared scale.
_NOISE_FACTOR = 10.0
# Runs of the understated_noise check (every one must be flagged or refused).
_NOISE_RUNS = 3


# ====================================================================== statistics
def clopper_pearson(errors: int, runs: int, level: float = 0.95) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)`` of a binomial proportion.

    ``upper`` is the smallest p with ``P(Bin(runs, p) <= errors) <= 1 - level``;
    ``lower`` the largest p with ``P(Bin(runs, p) >= errors) <= 1 - level`` (0 when
    ``errors == 0``). With 0 errors, ``upper = 1 - (1 - level)^(1/runs)`` (about 3 / runs
    at 95%).

    Examples
    --------
    >>> from combex.testing import clopper_pearson
    >>> lo, up = clopper_pearson(0, 60)
    >>> lo, round(up, 4)
    (0.0, 0.0487)
    """
    from scipy.stats import beta  # scipy.stats is slow to import (~0.4 s): import combex.testing stays light

    errors = check_int(errors, "errors", owner="clopper_pearson", low=0)
    runs = check_int(runs, "runs", owner="clopper_pearson", low=1)
    if errors > runs:
        raise InvalidParameterError(f"clopper_pearson: errors={errors} exceeds runs={runs}.")
    alpha = 1.0 - float(level)
    lower = 0.0 if errors == 0 else float(beta.ppf(alpha, errors, runs - errors + 1))
    upper = 1.0 if errors == runs else float(beta.ppf(1.0 - alpha, errors + 1, runs - errors))
    return lower, upper


@dataclass(frozen=True)
class SequentialRule:
    """Wald's sequential probability ratio test (SPRT) on the error count of one case.

    The runs of a case are Bernoulli trials (wrong answer or not) with an unknown error
    rate p. The rule tests H0: ``p = delta`` (the promise, at its boundary) against H1:
    ``p = p1`` with ``p1 = min(max(p1_floor, p1_factor * delta), (1 + delta) / 2)`` (an error
    rate clearly beyond delta). After each run that stopped with an answer, the
    log-likelihood ratio of ``e`` errors in ``n`` such runs,

    ``L = e log(p1 / delta) + (n - e) log((1 - p1) / (1 - delta))``,

    is compared with Wald's boundaries (A. Wald, Sequential tests of statistical hypotheses,
    Ann. Math. Statist. 16, 1945): the case **fails** when
    ``L >= log((1 - beta) / alpha)`` and **passes** when ``L <= log(beta / (1 - alpha))``
    (each run without an error lowers L by ``log((1 - delta) / (1 - p1))``, so a solver that
    is never wrong passes after :meth:`runs_to_pass` runs). The likelihood ratio is
    increasing in p, so a solver with error rate at most delta fails with probability at
    most ``alpha / (1 - beta)``, and one with error rate at least p1 passes with
    probability at most ``beta / (1 - alpha)`` (Wald's inequalities for the untruncated
    test; :meth:`operating_characteristic` computes the exact probabilities of this
    truncated one, and a test checks them). A case that reaches
    ``max_runs`` runs undecided is judged by the one-sided ``1 - alpha`` Clopper-Pearson
    lower bound of the error rate (fail when it exceeds delta), which adds at most alpha to
    the probability of failing a correct solver.

    Parameters
    ----------
    p1_floor, p1_factor : float
        H1's error rate is ``max(p1_floor, p1_factor * delta)`` (capped at ``(1 + delta)/2``).
    alpha : float in (0, 1)
        Error probability of failing a solver that keeps its promise (at its boundary).
    beta : float in (0, 1)
        Error probability of passing a solver whose error rate is p1.
    max_runs : int
        Most runs of one case (runs that refuse or reach the budget included).

    Examples
    --------
    >>> from combex.testing import SequentialRule
    >>> rule = SequentialRule()
    >>> rule.p1(0.05), rule.runs_to_pass(0.05)
    (0.2, 14)
    >>> rule.decide(errors=5, decided=5, delta=0.05), rule.decide(errors=0, decided=14, delta=0.05)
    ('fail', 'pass')
    """

    p1_floor: float = 0.2
    p1_factor: float = 4.0
    alpha: float = 1e-3
    beta: float = 0.1
    max_runs: int = 100

    def p1(self, delta: float) -> float:
        """The alternative error rate for a promised ``delta``."""
        return min(max(self.p1_floor, self.p1_factor * delta), (1.0 + delta) / 2.0)

    def llr(self, errors: int, decided: int, delta: float) -> float:
        """Log-likelihood ratio of H1 against H0 after ``errors`` in ``decided`` runs."""
        p1 = self.p1(delta)
        return errors * math.log(p1 / delta) + (decided - errors) * math.log((1.0 - p1) / (1.0 - delta))

    def runs_to_pass(self, delta: float) -> int:
        """Runs without an error after which the case passes."""
        step = math.log((1.0 - delta) / (1.0 - self.p1(delta)))
        return int(math.ceil(math.log((1.0 - self.alpha) / self.beta) / step - 1e-12))

    def decide(self, errors: int, decided: int, delta: float) -> str | None:
        """``"fail"``, ``"pass"`` or None (run on)."""
        L = self.llr(errors, decided, delta)
        if L >= math.log((1.0 - self.beta) / self.alpha):
            return "fail"
        if L <= math.log(self.beta / (1.0 - self.alpha)):
            return "pass"
        return None

    def truncated_fails(self, errors: int, decided: int, delta: float) -> bool:
        """The decision at ``max_runs``: the one-sided ``1 - alpha`` Clopper-Pearson lower
        bound of the error rate exceeds delta."""
        return decided > 0 and clopper_pearson(errors, decided, 1.0 - self.alpha)[0] > delta

    def operating_characteristic(self, delta: float, p: float) -> tuple[float, float]:
        """Exact probability that a case fails, and its expected number of runs, when every
        run stops with a wrong answer with probability ``p`` (independently), computed by
        dynamic programming over the error counts (no simulation).

        Examples
        --------
        >>> from combex.testing import FAST_RULE
        >>> fail, runs = FAST_RULE.operating_characteristic(0.05, 0.0)
        >>> fail, runs
        (0.0, 14.0)
        """
        alive = {0: 1.0}  # errors -> probability of being undecided after n runs
        fail = expected = 0.0
        for n in range(1, self.max_runs + 1):
            nxt: dict[int, float] = {}
            for e, pr in alive.items():
                nxt[e + 1] = nxt.get(e + 1, 0.0) + pr * p
                nxt[e] = nxt.get(e, 0.0) + pr * (1.0 - p)
            alive = {}
            for e, pr in nxt.items():
                verdict = self.decide(e, n, delta)
                if verdict is None:
                    alive[e] = pr
                else:
                    expected += pr * n
                    fail += pr if verdict == "fail" else 0.0
        for e, pr in alive.items():
            expected += pr * self.max_runs
            fail += pr if self.truncated_fails(e, self.max_runs, delta) else 0.0
        return fail, expected


#: The sequential rule of :func:`check_solver` by default: H1 error rate max(0.2, 4 delta),
#: alpha = 0.001, beta = 0.1, at most 100 runs a case (14 error-free runs pass delta = 0.05;
#: 11 pass delta = 0.01). Exactly (:meth:`SequentialRule.operating_characteristic`), at
#: delta = 0.05: a solver erring with probability delta fails with probability 7.8e-4, one
#: erring with probability 0.2 passes with probability 0.11 (0.03 at 0.25).
FAST_RULE = SequentialRule(p1_floor=0.2, p1_factor=4.0, alpha=1e-3, beta=0.1, max_runs=100)
#: The many-run rule (``check_solver(..., slow=True)``): H1 error rate max(0.1, 3 delta),
#: beta = 0.01, at most 400 runs a case (42 error-free runs pass delta = 0.05; 49 pass
#: delta = 0.01). At delta = 0.05: a solver erring with probability delta fails with
#: probability 9.5e-4, one erring with probability 0.15 passes with probability 0.009.
SLOW_RULE = SequentialRule(p1_floor=0.1, p1_factor=3.0, alpha=1e-3, beta=0.01, max_runs=400)


@dataclass
class CaseReport:
    """Outcome of one instance case over seeded runs.

    Attributes
    ----------
    case : str
    runs : int
        Runs attempted.
    errors : int
        Runs that stopped ("identified") with an answer that is not epsilon-correct.
    refused : int
        Runs the solver refused with a :class:`~combex.exceptions.CombexError` (a sound
        answer to a case it cannot guarantee).
    undecided : int
        Runs that hit the check's sample budget without stopping.
    delta : float or None
        The error probability the solver promises (its ``delta``; None: no promise).
    epsilon : float
        The tolerance the answers are scored with (``solver.tolerance``).
    samples : list of int
        Samples of the runs that stopped.
    rule : str
        ``"sequential"`` (:class:`SequentialRule`) or ``"fixed"`` (``n_runs`` runs).
    verdict : str
        ``"pass"``, ``"fail"``, ``"pass (max runs)"`` (the sequential rule reached its
        ``max_runs`` without evidence of a violation), ``"not applicable"`` or ``""``.
    llr : float or None
        The sequential rule's log-likelihood ratio at the end.
    seconds : float
        Wall time of the case.
    upper, lower : float
        One-sided 95% Clopper-Pearson bounds of the error rate over the decided runs.
    certified : bool
        ``upper <= delta`` (enough runs, few enough errors to show the promise holds).
    note : str
    """

    case: str
    runs: int = 0
    errors: int = 0
    refused: int = 0
    undecided: int = 0
    delta: float | None = None
    epsilon: float = 0.0
    samples: list[int] = field(default_factory=list)
    note: str = ""
    rule: str = "fixed"
    verdict: str = ""
    llr: float | None = None
    seconds: float = 0.0

    @property
    def decided(self) -> int:
        return self.runs - self.refused - self.undecided

    @property
    def bounds(self) -> tuple[float, float]:
        if self.decided == 0:
            return 0.0, 1.0
        return clopper_pearson(self.errors, self.decided)

    @property
    def upper(self) -> float:
        return self.bounds[1]

    @property
    def lower(self) -> float:
        return self.bounds[0]

    @property
    def certified(self) -> bool:
        return self.delta is not None and self.decided > 0 and self.upper <= self.delta

    @property
    def applicable(self) -> bool:
        """False when the case does not apply to the solver (see ``note``)."""
        return self.verdict != "not applicable"

    def as_row(self) -> dict[str, Any]:
        return {
            "case": self.case, "runs": self.runs, "errors": self.errors, "refused": self.refused,
            "undecided": self.undecided, "delta": self.delta, "epsilon": self.epsilon,
            "cp_upper": round(self.upper, 4), "certified": self.certified, "rule": self.rule,
            "verdict": self.verdict, "seconds": round(self.seconds, 2),
            "median_samples": int(np.median(self.samples)) if self.samples else None, "note": self.note,
        }


# ====================================================================== families
def _as_solver(solver_or_name: Any) -> Any:
    if isinstance(solver_or_name, str):
        cls = get_solver(solver_or_name)
        if getattr(cls, "contract", None) != "pac":
            raise InvalidParameterError(
                f"check_solver checks PAC solvers; {solver_or_name!r} follows the "
                f"{getattr(cls, 'contract', None)!r} contract."
            )
        return cls()
    if isinstance(solver_or_name, type):
        raise InvalidParameterError(
            f"check_solver takes a solver instance or a registered name, not the class {solver_or_name.__name__}; "
            f"pass {solver_or_name.__name__}()."
        )
    if not isinstance(solver_or_name, Solver):
        raise InvalidParameterError(
            f"The 'solver' parameter of check_solver must be a combex.solvers.Solver instance or a registered "
            f"name. Got {solver_or_name!r} instead."
        )
    return solver_or_name


def solver_families(solver: Any) -> tuple[str, ...]:
    """The instance families a solver takes: its class attribute ``families`` (or
    ``family``, for a plug-in that declares one to check_solver only); each one of
    :data:`FAMILIES`. Every built-in PAC solver declares ``families``."""
    cls = solver if isinstance(solver, type) else type(solver)
    fams: Any = getattr(cls, "families", None) or getattr(cls, "family", None)
    if isinstance(fams, str):
        fams = (fams,)
    if not fams or any(f not in FAMILIES for f in fams):
        raise InvalidParameterError(
            f"{cls.__name__} declares no instance family: give the class an attribute "
            f"families = (one or more of {FAMILIES}) so that check_solver knows which instances to build."
        )
    return tuple(str(f) for f in fams)


def solver_family(solver: Any) -> str:
    """The family whose instances :func:`check_solver` builds: the first of
    :func:`solver_families`."""
    return solver_families(solver)[0]


def _clone(solver: Any, **overrides: Any) -> Any:
    """A new solver with the same settings, some overridden (only those it takes)."""
    params = copy.deepcopy(solver.get_params())
    for k, v in overrides.items():
        if k not in params:
            raise KeyError(k)
        params[k] = v
    return type(solver)(**params)


def _promised_delta(solver: Any) -> float | None:
    """The error probability a solver promises (its ``delta``); None for a heuristic mode
    (no guarantee)."""
    if getattr(solver, "mode", "faithful") == "heuristic":
        return None
    v = getattr(solver, "delta", None)
    if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1:
        return float(v)
    return None


def _with_tolerance(solver: Any, eps: float) -> Any | None:
    """The solver with PAC tolerance ``eps``, or None when it has no such setting."""
    if math.isclose(float(getattr(solver, "tolerance", 0.0) or 0.0), eps):
        return solver
    try:
        s = _clone(solver, epsilon=eps)
    except (KeyError, CombexError, TypeError, ValueError):
        return None
    return s if math.isclose(float(s.tolerance), eps) else None


def _exact_tie_solver(solver: Any, floor: float = _TIE_EPSILON) -> Any | None:
    """The solver for the exact-tie case: itself when its own epsilon is positive (an exact
    tie then ends), else a copy with tolerance ``floor`` (None: it has no PAC tolerance)."""
    eps0 = float(solver.tolerance)
    return solver if eps0 > 0 else _with_tolerance(solver, floor)


# ---------------------------------------------------------------------- instances
def _declared_scale(solver: Any, default: float) -> float:
    """The noise scale a run declares: the solver's own ``sigma`` setting when it has one,
    else ``default`` (the scale the case's problem declares)."""
    v = solver.get_params().get("sigma") if hasattr(solver, "get_params") else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else default


def _understated(make_env: Callable[[Any], Any], declared: float) -> Callable[[Any], Any]:
    """``make_env`` whose problem declares the noise scale ``declared`` (the environment
    draws its own, larger noise)."""

    def make(r: Any) -> Any:
        env = make_env(r)
        env.noise = dataclasses.replace(env.noise, sigma=declared)
        return env

    return make


@dataclass
class _Case:
    name: str
    make_env: Callable[[Any], Any]  # rng -> environment
    solver: Any  # the solver with the case's settings (or None: not applicable)
    score: Callable[[Any, Any], bool]  # (env, answer) -> correct
    note: str = ""


def _semi_cases(solver: Any) -> dict[str, _Case]:
    K = int(getattr(solver, "K", 1) or 1)
    n = K + 4

    def means(top: float, gap: float, tie_gap: float | None = None) -> NDArray[np.float64]:
        mu = np.concatenate([np.full(K, top), np.full(n - K, top - gap)])
        mu[n - 1] -= gap  # one clearly worse arm
        if tie_gap is not None:  # the K-th and (K+1)-th best within tie_gap
            mu[K - 1] = top
            mu[K] = top - tie_gap
        order = np.arange(n)[::-1]  # best arms last: index order must not matter
        return mu[order]

    def score_for(eps: float) -> Callable[[Any, Any], bool]:
        def score(env: Any, answer: Any) -> bool:
            mu = env.means()
            a = np.asarray(answer)
            chosen = np.flatnonzero(a) if a.dtype == np.bool_ and a.ndim == 1 else np.atleast_1d(a).astype(int)
            if chosen.size != K or np.unique(chosen).size != K:
                return False
            best = np.sort(mu)[::-1][:K].sum()
            return bool(best - mu[chosen].sum() <= eps + _TOL)

        return score

    eps0 = float(solver.tolerance)
    tie = _exact_tie_solver(solver)
    teps = float(tie.tolerance) if tie is not None else eps0
    near = eps0 + _NEAR_TIE_GAP["semi-bandit"]
    sd = _declared_scale(solver, 0.5)
    g = lambda m, s: (lambda r: GaussianArms(m, sigma=s, rng=r))  # noqa: E731
    return {
        "easy": _Case("easy", g(means(1.0, 1.0), 0.5), solver, score_for(eps0)),
        "offset": _Case("offset", g(means(50.8, 0.8), 1.0), solver, score_for(eps0), "means near 50"),
        "small_gap": _Case("small_gap", g(means(1.0, 0.4), 1.0), solver, score_for(eps0), "gap 0.4, sigma 1"),
        "noise_scale": _Case("noise_scale", g(means(1.0, 3.0), 4.0), solver, score_for(eps0), "sigma 4, gap 3"),
        "reward_range": _Case("reward_range", lambda r: BernoulliArms(means(0.9, 0.4), rng=r), solver,
                              score_for(eps0), "Bernoulli rewards in {0, 1}"),
        "near_tie": _Case("near_tie", g(means(1.0, 1.0, tie_gap=near), 0.5), solver, score_for(eps0),
                          f"K-th and (K+1)-th {near:g} apart (sigma 0.5), scored at the solver's epsilon {eps0:g}"),
        "exact_tie": _Case("exact_tie", g(means(1.0, 1.0, tie_gap=0.0), 0.5), tie,
                           score_for(teps), f"K-th and (K+1)-th equal, epsilon {teps:g}"),
        "understated_noise": _Case("understated_noise", _understated(g(means(1.0, 1.0), _NOISE_FACTOR * sd), sd), solver,
                                   score_for(eps0), f"easy means, sigma {sd:g} declared, {_NOISE_FACTOR * sd:g} true"),
    }


def _full_cases(solver: Any) -> dict[str, _Case]:
    dc = getattr(solver, "decision_class", None)
    n = dc.n if dc is not None else 5
    k_default = 2

    def env(mu: Any, noise: str = "gaussian", sigma: float | None = 1.0) -> Callable[[Any], Any]:
        mu = np.asarray(mu, dtype=float)

        def make(r: Any) -> Any:
            kw: dict[str, Any] = {"decision_class": dc} if dc is not None else {"decision_class": TopK(n, k_default)}
            return FullBandit(mu, noise=noise, sigma=sigma, rng=r, **kw)

        return make

    def means(top: float, gap: float, tie_gap: float | None = None) -> NDArray[np.float64]:
        mu = np.full(n, top - gap)
        mu[[1, 3]] = top  # the best team {1, 3}
        mu[0] = top - 2 * gap
        if tie_gap is not None:
            mu[4 % n] = top - tie_gap
        return mu

    def score_for(eps: float) -> Callable[[Any, Any], bool]:
        return lambda e, a: bool(e.is_correct(a, eps))

    eps0 = float(solver.tolerance)
    tie = _exact_tie_solver(solver)
    teps = float(tie.tolerance) if tie is not None else eps0
    near = eps0 + _NEAR_TIE_GAP["full-bandit"]
    sd = _declared_scale(solver, 1.0)
    return {
        "easy": _Case("easy", env(means(1.0, 1.0)), solver, score_for(eps0)),
        "offset": _Case("offset", env(means(50.0, 1.0)), solver, score_for(eps0), "means near 50"),
        "small_gap": _Case("small_gap", env(means(1.0, 0.5)), solver, score_for(eps0), "gap 0.5, sigma 1"),
        "noise_scale": _Case("noise_scale", env(means(1.0, 3.0), sigma=3.0), solver, score_for(eps0),
                             "sigma 3, gap 3"),
        "reward_range": _Case("reward_range", env(means(1.0, 1.0), noise="rademacher", sigma=2.0), solver,
                              score_for(eps0), "Rademacher noise +-2"),
        "near_tie": _Case("near_tie", env(means(1.0, 1.0, tie_gap=near)), solver, score_for(eps0),
                          f"the two best teams {near:g} apart (sigma 1 per member), scored at the solver's "
                          f"epsilon {eps0:g}"),
        "exact_tie": _Case("exact_tie", env(means(1.0, 1.0, tie_gap=0.0)), tie, score_for(teps),
                           f"two best teams tied, epsilon {teps:g}"),
        "understated_noise": _Case("understated_noise", _understated(env(means(1.0, 1.0), sigma=_NOISE_FACTOR * sd), sd),
                                   solver, score_for(eps0), f"easy means, sigma {sd:g} declared, {_NOISE_FACTOR * sd:g} true"),
    }


def _linear_cases(solver: Any) -> dict[str, _Case]:
    X3 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.7, 0.7, 0.0]])

    def env(X: Any, theta: Any, **kw: Any) -> Callable[[Any], Any]:
        # the paper's model: the problem carries S = ||theta||_2 (info["S"])
        return lambda r: LinearInstance(X, theta, rng=r, **kw)

    def score_for(eps: float) -> Callable[[Any, Any], bool]:
        return lambda e, a: bool(e.is_correct(a, eps))

    eps0 = float(solver.tolerance)
    tie = _exact_tie_solver(solver)
    teps = float(tie.tolerance) if tie is not None else eps0
    near = eps0 + _NEAR_TIE_GAP["linear"]
    sd = _declared_scale(solver, 1.0)
    return {
        "easy": _Case("easy", env(X3, [0.0, 1.5, 0.0]), solver, score_for(eps0)),
        "offset": _Case("offset", lambda r: LinearBandit(np.eye(2), [50.0, 50.8], rng=r), solver, score_for(eps0),
                        "theta = (50, 50.8) on e_1, e_2, a plain LinearBandit (no S known)"),
        "small_gap": _Case("small_gap", env(X3, [0.0, 1.0, 0.6]), solver, score_for(eps0), "gap 0.3, sigma 1"),
        "noise_scale": _Case("noise_scale", env(X3, [0.0, 3.0, 0.0], sigma=3.0), solver, score_for(eps0),
                             "sigma 3"),
        "reward_range": _Case("reward_range", env(X3, [0.0, 0.9, -0.5], noise="pm1"), solver, score_for(eps0),
                              "+-1 rewards"),
        "near_tie": _Case("near_tie", env(X3, [0.0, 1.0, 1.0 - near]), solver, score_for(eps0),
                          f"two arms {near:g} apart (sigma 1), scored at the solver's epsilon {eps0:g}"),
        "exact_tie": _Case("exact_tie", env(X3, [0.0, 1.0, 1.0]), tie, score_for(teps),
                           f"two arms tied, epsilon {teps:g}"),
        "understated_noise": _Case("understated_noise", _understated(env(X3, [0.0, 1.5, 0.0], sigma=_NOISE_FACTOR * sd), sd),
                                   solver, score_for(eps0), f"easy theta, sigma {sd:g} declared, {_NOISE_FACTOR * sd:g} true"),
    }


def _mips_cases(solver: Any) -> dict[str, _Case]:
    k = int(getattr(solver, "k", 1) or 1)
    n, N = k + 5, 2000

    def lists(p: Any, low: float = 0.0, high: float = 1.0) -> NDArray[np.float64]:
        """0/1 lists with exactly round(p N) ones (spread evenly), mapped to {low, high}."""
        ones = np.rint(np.asarray(p) * N).astype(int)
        rows = np.zeros((len(ones), N))
        for i, c in enumerate(ones):
            rows[i, np.linspace(0, N - 1, c).astype(int) if c else []] = 1.0
        return low + (high - low) * rows

    def probs(top: float, gap: float, tie_gap: float | None = None) -> NDArray[np.float64]:
        p = np.concatenate([np.full(k, top), np.full(n - k, top - gap)])
        p[-1] -= gap / 2
        if tie_gap is not None:
            p[k] = top - tie_gap
        return p[::-1].copy()

    def env(L: Any) -> Callable[[Any], Any]:
        return lambda r: RewardLists(L, rng=r)

    def score_for(eps: float, scale: float = 1.0) -> Callable[[Any, Any], bool]:
        def score(e: Any, answer: Any) -> bool:
            mu = e.means()
            a = np.asarray(answer)
            chosen = np.flatnonzero(a) if a.dtype == np.bool_ and a.ndim == 1 else np.atleast_1d(a).astype(int)
            if chosen.size != k:
                return False
            kth = np.sort(mu)[::-1][k - 1]
            return bool(kth - mu[chosen].min() <= eps + _TOL)

        return score

    eps0 = float(solver.tolerance)
    tie = _exact_tie_solver(solver, 0.05)
    teps = float(tie.tolerance) if tie is not None else eps0
    near = eps0 + _NEAR_TIE_GAP["mips"]
    return {
        "easy": _Case("easy", env(lists(probs(0.9, 0.5))), solver, score_for(eps0)),
        "offset": _Case("offset", env(lists(probs(0.9, 0.4), 100.0, 101.0)), solver, score_for(eps0),
                        "rewards in {100, 101}"),
        "small_gap": _Case("small_gap", env(lists(probs(0.6, eps0 + 0.02))), solver, score_for(eps0),
                           f"gap epsilon + 0.02 below the noise scale 1/2"),
        "noise_scale": _Case("noise_scale", env(lists(probs(0.9, 0.5), -5.0, 5.0)), solver,
                             score_for(eps0), "rewards in {-5, 5}"),
        "reward_range": _Case("reward_range", env(lists(probs(0.9, 0.5), -1.0, 0.0)), solver, score_for(eps0),
                              "rewards in {-1, 0}"),
        "near_tie": _Case("near_tie", env(lists(probs(0.9, 0.5, tie_gap=near))), solver, score_for(eps0),
                          f"k-th and (k+1)-th {near:g} apart, scored at the solver's epsilon {eps0:g}"),
        "exact_tie": _Case("exact_tie", env(lists(probs(0.9, 0.5, tie_gap=0.0))), tie, score_for(teps),
                           "k-th and (k+1)-th equal"),
        "order": _Case("order", lambda r: BinaryRewardLists(
            np.rint(probs(0.6, 0.3) * 200_000).astype(int), 200_000, order="ones-first", rng=r),
            solver, score_for(eps0), "ones first: not a random reading order"),
    }


_CASE_BUILDERS = {"semi-bandit": _semi_cases, "full-bandit": _full_cases, "linear": _linear_cases,
                  "mips": _mips_cases}


def _wrong_family_env(families: tuple[str, ...], rng: Any) -> Any:
    """A problem of a family the solver does not take (linear first, then full-bandit, then
    semi-bandit arms), or None when it takes every kind (e.g. ``top-two``: semi-bandit,
    linear and full-bandit; the check then does not apply)."""
    if "linear" not in families:
        return LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]]), [1.0, 0.0], rng=rng)
    if "full-bandit" not in families:
        return FullBandit([1.0, 0.0, 0.0], k=1, rng=rng)
    if "semi-bandit" not in families and "mips" not in families:
        return GaussianArms([1.0, 0.0, 0.0], rng=rng)
    return None  # the solver takes every kind of problem: no wrong family to try


# ====================================================================== runs
def _loop(exp: Any, env: Any, budget: int, stop_at: int | None = None, record: list[Any] | None = None) -> Any:
    """The ask / tell loop of :meth:`Solver.run` (stopping early after ``stop_at`` tells;
    appending each batch's arms and counts to ``record`` when given)."""
    tells = 0
    while not exp.done:
        if stop_at is not None and tells >= stop_at:
            return exp
        batch = exp.ask()
        if batch.total > budget - exp.samples:
            batch = batch.truncated(budget - exp.samples)
        if record is not None:
            record.append((np.asarray(batch.arms).tolist(), np.asarray(batch.counts).tolist()))
        exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
        tells += 1
        if exp.samples >= budget and not exp.done:
            exp.stop("budget_exhausted", f"budget of {budget} samples exhausted")
    return exp


def _signature(res: Any) -> tuple[Any, ...]:
    return (np.asarray(res.answer).tolist(), res.status, int(res.samples), np.asarray(res.pulls).tolist())


def _run_once(case: _Case, seed: Any, budget: int, rep: CaseReport) -> None:
    """One seeded run of a case, counted into ``rep``."""
    s_env, s_alg = seed
    rep.runs += 1
    try:
        env = case.make_env(s_env)
        res = case.solver.run(env, rng=s_alg, budget=budget)
    except CombexError as exc:
        rep.refused += 1
        rep.note = f"refused: {type(exc).__name__}: {str(exc)[:160]}"
        return
    if res.status != "identified":
        rep.undecided += 1
        return
    rep.samples.append(int(res.samples))
    if not case.score(env, res.answer):
        rep.errors += 1


def _run_case(case: _Case, seeds: list[Any], budget: int, delta: float | None,
              rule: SequentialRule | None = None, strict: bool = False) -> CaseReport:
    """Runs of a case: every seed (``rule=None``), or seeds in order until ``rule`` decides.

    With a rule and a promised ``delta``, the case ends when the SPRT decides, when the
    runs that gave no answer (refused, undecided) are as many as a pass needs, or after
    ``rule.max_runs`` runs. Without a promise (a heuristic mode) it runs the number of
    error-free runs that pass delta = 0.05, ending at the first error. ``strict`` (the easy
    case) ends at the first refusal or undecided run."""
    rep = CaseReport(case.name, delta=delta, note=case.note, rule="fixed" if rule is None else "sequential")
    if case.solver is None:
        rep.note = "not applicable: the solver has no PAC tolerance setting (epsilon)"
        rep.verdict = "not applicable"
        return rep
    rep.epsilon = float(case.solver.tolerance)
    t0 = time.perf_counter()
    if rule is None:
        for seed in seeds:
            _run_once(case, seed, budget, rep)
        rep.seconds = time.perf_counter() - t0
        return rep
    n_pass = rule.runs_to_pass(0.05 if delta is None else delta)
    for seed in seeds[: rule.max_runs]:
        _run_once(case, seed, budget, rep)
        if strict and (rep.refused or rep.undecided):
            break
        if delta is None:
            if rep.errors or rep.decided >= n_pass:
                break
        else:
            rep.llr = rule.llr(rep.errors, rep.decided, delta)
            verdict = rule.decide(rep.errors, rep.decided, delta)
            if verdict is not None:
                rep.verdict = verdict
                break
        if rep.refused + rep.undecided >= n_pass:
            break
    rep.seconds = time.perf_counter() - t0
    if delta is not None and not rep.verdict:
        if rule.truncated_fails(rep.errors, rep.decided, delta):
            rep.verdict = "fail"
        else:
            rep.verdict = "pass (max runs)" if rep.runs >= rule.max_runs else "pass"
    return rep


def _name(solver: Any) -> str:
    return getattr(solver, "name", "") or type(solver).__name__


# ====================================================================== checks
class _StatFailure(AssertionError):
    """A failed statistical check; ``report`` holds the counts."""

    def __init__(self, message: str, report: CaseReport) -> None:
        super().__init__(message)
        self.report = report


def _evidence(rep: CaseReport, rule: SequentialRule | None) -> str:
    """The statistics behind a verdict, for a failure message."""
    lower, upper = rep.bounds
    out = f"95% Clopper-Pearson bounds of the error rate [{lower:.3g}, {upper:.3g}]"
    if rule is not None and rep.delta is not None and rep.llr is not None:
        out += (f"; sequential test of H0 p = {rep.delta} against H1 p = {rule.p1(rep.delta):.3g}: log-likelihood "
                f"ratio {rep.llr:.3g} >= {math.log((1 - rule.beta) / rule.alpha):.3g}")
    return out


def _check_easy(solver: Any, cases: dict[str, _Case], seeds: list[Any], budget: int,
                rule: SequentialRule | None = None) -> CaseReport:
    delta = _promised_delta(solver)
    rep = _run_case(cases["easy"], seeds, budget, delta, rule, strict=True)
    who = _name(solver)
    msg = ""
    if rep.refused:
        msg = f"{who}: refused the easy instance of its family: {rep.note}"
    elif rep.undecided:
        msg = f"{who}: did not stop within {budget} samples on the easy instance ({rep.undecided} of {rep.runs} runs)."
    elif rep.errors and (rule is None or delta is None or rep.verdict == "fail"):
        msg = f"{who}: wrong answer on the easy instance in {rep.errors} of {rep.runs} runs."
        if rule is not None and delta is not None:
            msg += f" {_evidence(rep, rule)}; the promised delta = {delta}."
    if msg:
        raise _StatFailure(msg, rep)
    return rep


def _check_adversarial(solver: Any, case: _Case, seeds: list[Any], budget: int,
                       rule: SequentialRule | None = None) -> CaseReport:
    delta = _promised_delta(solver)
    rep = _run_case(case, seeds, budget, delta, rule)
    who = _name(solver)
    if rep.errors == 0:
        return rep
    if delta is None:
        raise _StatFailure(f"{who}: {rep.errors} wrong answer(s) on case {case.name!r} ({case.note}) and no "
                           f"error probability promised.", rep)
    if rule is None:
        lower, upper = rep.bounds
        # Enough runs to certify the promise (0 errors would give upper <= delta): require it;
        # otherwise fail only on significant evidence of a violation (lower bound above delta).
        certifiable = clopper_pearson(0, max(rep.decided, 1))[1] <= delta
        failed = (certifiable and upper > delta) or lower > delta
    else:
        failed = rep.verdict == "fail"
    if failed:
        raise _StatFailure(
            f"{who}: {rep.errors} wrong answer(s) in {rep.decided} decided runs on case {case.name!r} "
            f"({case.note}); {_evidence(rep, rule)} vs the promised delta = {delta}. A solver that cannot "
            f"guarantee this case must refuse it with a CombexError.", rep
        )
    return rep


def _no_declared_scale(solver: Any, family: str) -> str:
    """Why the understated_noise check does not apply ("" when it does)."""
    if family == "mips":
        return ("not applicable: reward lists have a known range (the scale is the lists' own), no declared "
                "noise scale to understate")
    if getattr(solver, "divergence", None) == "unknown-variance":
        return "not applicable: the solver estimates the noise scale (divergence='unknown-variance')"
    return ""


def _check_understated_noise(solver: Any, family: str, cases: dict[str, _Case], seeds: list[Any],
                             budget: int) -> CaseReport:
    """Runs on an instance whose true noise is ``_NOISE_FACTOR`` times the declared scale:
    each must be refused (a CombexError), or flagged -- ``info["noise_check"]["rejected"]``
    True or a :class:`~combex.exceptions.NoiseScaleWarning`."""
    who = _name(solver)
    rep = CaseReport("understated_noise", delta=_promised_delta(solver), rule="flag")
    reason = _no_declared_scale(solver, family)
    if reason or "understated_noise" not in cases:
        rep.note = reason or "not applicable: no Gaussian case in this family"
        rep.verdict = "not applicable"
        return rep
    case = cases["understated_noise"]
    rep.note = case.note
    rep.epsilon = float(solver.tolerance)
    t0 = time.perf_counter()
    unflagged: list[str] = []
    for s_env, s_alg in seeds:
        rep.runs += 1
        env = case.make_env(s_env)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NoiseScaleWarning)
            try:
                res = solver.run(env, rng=s_alg, budget=budget)
            except CombexError:
                rep.refused += 1
                continue
        flagged = False
        for w in caught:
            if issubclass(w.category, NoiseScaleWarning):
                flagged = True
            else:  # not ours to swallow
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        check = (res.info or {}).get("noise_check")
        if isinstance(check, dict) and check.get("rejected") is True:
            flagged = True
        if res.status != "identified":
            rep.undecided += 1
        else:
            rep.samples.append(int(res.samples))
            rep.errors += not case.score(env, res.answer)
        if not flagged:
            unflagged.append(f"{res.status} after {res.samples} samples, "
                             f"{'right' if case.score(env, res.answer) else 'wrong'} answer")
    rep.seconds = time.perf_counter() - t0
    if unflagged:
        rep.verdict = "fail"
        raise _StatFailure(
            f"{who}: on an instance whose noise is {_NOISE_FACTOR:g} times the declared scale ({case.note}), "
            f"{len(unflagged)} of {rep.runs} runs neither refused nor flagged it (no NoiseScaleWarning, "
            f"info['noise_check']['rejected'] not True): {'; '.join(unflagged)}.", rep
        )
    rep.verdict = "pass"
    return rep


def _for_env(solver: Any, env: Any) -> Any:
    """The solver ready for ``start`` on ``env``: an oracle baseline whose truth setting is
    None gets the environment's truth (``Solver.with_truth``; plug-ins without the method
    are used as they are)."""
    with_truth = getattr(solver, "with_truth", None)
    if with_truth is None:
        return solver
    try:
        return with_truth(env)
    except InvalidParameterError:  # no truth to give: start() says what is missing
        return solver


def _check_resume(solver: Any, cases: dict[str, _Case], budget: int, rng: Any) -> None:
    case = cases["easy"]
    who = _name(solver)
    s_env, s_alg = _seed_pairs(rng, 1)[0]
    ref_env = case.make_env(s_env)
    solver_e = _for_env(solver, ref_env)
    ref = solver_e.start(ref_env, rng=s_alg)
    n_tells = 0
    while not ref.done:  # the uninterrupted ask / tell loop, counting tells
        _loop(ref, ref_env, budget, stop_at=1)
        n_tells += 1
    ref_res = ref.result()
    stop_at = int(np.random.default_rng(_rng_int(rng)).integers(1, max(2, n_tells)))
    env = case.make_env(s_env)
    part = _loop(solver_e.start(env, rng=s_alg), env, budget, stop_at=stop_at)
    if not part.done:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "state.json")
            try:
                part.save(path)
                part = _clone(solver_e).load(path, env.problem)
            except CombexError as exc:
                raise AssertionError(f"{who}: cannot save and resume a run ({type(exc).__name__}: {exc}).") from exc
        part = _loop(part, env, budget)
    got = part.result()
    if _signature(got) != _signature(ref_res) or got.rounds != ref_res.rounds:
        raise AssertionError(
            f"{who}: saved after {stop_at} of {n_tells} tells and resumed, the run ended with answer "
            f"{np.asarray(got.answer).tolist()} after {got.samples} samples ({got.status}); the uninterrupted run "
            f"with {np.asarray(ref_res.answer).tolist()} after {ref_res.samples} ({ref_res.status})."
        )
    sim = solver.run(case.make_env(s_env), rng=s_alg, budget=budget)
    if _signature(sim) != _signature(ref_res):
        raise AssertionError(
            f"{who}: run() and the ask / tell loop differ on the same seeds: answer "
            f"{np.asarray(sim.answer).tolist()} vs {np.asarray(ref_res.answer).tolist()}, samples {sim.samples} vs "
            f"{ref_res.samples}."
        )


def _rng_int(rng: Any) -> int:
    return int(check_rng(rng).integers(2**31)) if not isinstance(rng, (int, np.integer)) else int(rng)


def _check_reproducible(solver: Any, cases: dict[str, _Case], budget: int, rng: Any) -> None:
    case = cases["easy"]
    s_env, s_alg = _seed_pairs(rng, 1)[0]
    a = solver.run(case.make_env(s_env), rng=s_alg, budget=budget)
    b = solver.run(case.make_env(s_env), rng=s_alg, budget=budget)
    if _signature(a) != _signature(b):
        raise AssertionError(
            f"{_name(solver)}: two runs with the same seeds differ (samples {a.samples} vs {b.samples}, answer "
            f"{np.asarray(a.answer).tolist()} vs {np.asarray(b.answer).tolist()}): randomness not taken from rng."
        )
    # The results can agree by chance (two runs stopping in the same round); the batches
    # asked, in order, cannot: compare the first ones of two ask / tell loops.
    if _asked(solver, case, s_env, s_alg, budget) != _asked(solver, case, s_env, s_alg, budget):
        raise AssertionError(
            f"{_name(solver)}: two ask / tell loops with the same seeds asked different batches: randomness not "
            "taken from rng."
        )


def _asked(solver: Any, case: _Case, s_env: Any, s_alg: Any, budget: int, n_asks: int = 50) -> list[Any]:
    """The first ``n_asks`` batches (arms and counts, in order) of an ask / tell loop."""
    env = case.make_env(s_env)
    out: list[Any] = []
    try:
        exp = solver.start(env, rng=s_alg)
    except InvalidParameterError:  # a solver that only runs through run() (e.g. given the truth there)
        return out
    _loop(exp, env, budget, stop_at=n_asks, record=out)
    return out


def _check_seeds_differ(solver: Any, cases: dict[str, _Case], budget: int, rng: Any) -> None:
    # On the easy case first; a solver whose pull counts depend on the data only through
    # rare events (a phased elimination, RAGE) may repeat them there, so the small-gap
    # case is tried before failing.
    for key in ("easy", "small_gap"):
        case = cases[key]
        paths = set()
        for s_env, s_alg in _seed_pairs(rng, 3):
            res = solver.run(case.make_env(s_env), rng=s_alg, budget=budget)
            paths.add((int(res.samples), tuple(np.asarray(res.pulls).ravel().tolist())))
        if len(paths) > 1:
            return
    raise AssertionError(
        f"{_name(solver)}: three runs with different seeds followed the same sample path on the easy and the "
        f"small-gap cases ({paths.pop()[0]} samples, same pulls): the run does not depend on the data or the seed."
    )


def _snapshot(obj: Any, depth: int = 0) -> Any:
    """A comparable copy of a settings object's contents."""
    if depth > 6:
        return repr(obj)
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, dict):
        return {k: _snapshot(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_snapshot(v, depth + 1) for v in obj])
    if isinstance(obj, (int, float, str, bool, type(None), np.generic)):
        return obj
    if isinstance(obj, np.random.Generator):
        return ("Generator", repr(obj.bit_generator.state))
    d = getattr(obj, "__dict__", None)
    if d is not None:
        return (type(obj).__name__, _snapshot(dict(d), depth + 1))
    return repr(obj)


def _check_settings_unchanged(solver: Any, cases: dict[str, _Case], budget: int, rng: Any) -> None:
    case = cases["easy"]
    s_env, s_alg = _seed_pairs(rng, 1)[0]
    before_params = _snapshot(solver.get_params())
    before = _snapshot(dict(vars(solver)))
    solver.run(case.make_env(s_env), rng=s_alg, budget=budget)
    prepared = _for_env(solver, case.make_env(s_env))
    before_prepared = _snapshot(dict(vars(prepared)))
    exp = prepared.start(case.make_env(s_env), rng=s_alg)
    if not exp.done:
        batch = exp.ask()
        exp.tell_batch(batch, case.make_env(s_env).pull_many(batch.arms, batch.counts))
    if prepared is not solver and _snapshot(dict(vars(prepared))) != before_prepared:
        raise AssertionError(f"{_name(solver)}: start / tell changed the solver object.")
    if _snapshot(solver.get_params()) != before_params:
        raise AssertionError(f"{_name(solver)}: get_params() changed after a run.")
    after = _snapshot(dict(vars(solver)))
    if after != before:
        changed = sorted(set(before) ^ set(after) | {k for k in set(before) & set(after) if before[k] != after[k]})
        raise AssertionError(
            f"{_name(solver)}: running changed the solver object (attributes {changed}); the state of a run "
            f"belongs in its Exploration, not in the settings."
        )


def _expect_error(who: str, what: str, arg: str, fn: Callable[[], Any], kinds: tuple[type, ...] = (CombexError,)) -> None:
    try:
        fn()
    except kinds as exc:
        if arg and arg not in str(exc):
            raise AssertionError(f"{who}: {what} raised {type(exc).__name__} without naming {arg!r}: {exc}") from exc
        return
    except Exception as exc:  # noqa: BLE001 - reported
        raise AssertionError(f"{who}: {what} raised {type(exc).__name__}: {exc}; expected a CombexError naming "
                             f"{arg!r}.") from exc
    wanted = f"a CombexError naming {arg!r}" if arg else f"a {' or '.join(k.__name__ for k in kinds)}"
    raise AssertionError(f"{who}: {what} raised nothing; expected {wanted}.")


def _check_bad_input(solver: Any, cases: dict[str, _Case], budget: int, rng: Any) -> None:
    who = _name(solver)
    case = cases["easy"]
    s_env, s_alg = _seed_pairs(rng, 1)[0]
    env = case.make_env(s_env)
    run_solver, solver = solver, _for_env(solver, env)
    _expect_error(who, "start(None)", "problem", lambda: solver.start(None, rng=0))
    _expect_error(who, "start('not a problem')", "problem", lambda: solver.start("not a problem", rng=0))
    _expect_error(who, "start(problem, rng='seed')", "rng", lambda: solver.start(env, rng="seed"))
    for b in (0, -5, 2.5, "10"):
        _expect_error(who, f"run(env, budget={b!r})", "budget",
                      lambda b=b: run_solver.run(case.make_env(s_env), rng=0, budget=b))
    _expect_error(who, "run(env, rng='seed')", "rng", lambda: run_solver.run(case.make_env(s_env), rng="seed"))

    exp = solver.start(case.make_env(s_env), rng=s_alg)
    n = int(env.problem.n_arms)
    arm_type = getattr(solver, "arm_type", "index")
    good_arm: Any = 0 if arm_type == "index" else np.asarray(case.make_env(s_env).best(), dtype=bool)
    bad_arms: list[tuple[str, Any]]
    if arm_type == "index":
        bad_arms = [("arm=n_arms", n), ("arm=-1", -1), ("arm=1.5", 1.5), ("arm='a'", "a")]
    else:
        bad_arms = [("arm of length n+1", np.ones(n + 1, dtype=bool)), ("arm of shape (n, 2)", np.ones((n, 2), dtype=bool)),
                    ("arm with a 2", np.full(n, 2))]
    for label, arm in bad_arms:
        _expect_error(who, f"tell({label}, ...)", "arm", lambda arm=arm: exp.tell(arm, 1.0, 1))
    for label, count in (("count=0", 0), ("count=-1", -1), ("count=1.5", 1.5)):
        _expect_error(who, f"tell(arm, 1.0, {label})", "count", lambda c=count: exp.tell(good_arm, 1.0, c))
    for label, val in (("nan", float("nan")), ("inf", float("inf")), ("'x'", "x")):
        _expect_error(who, f"tell(arm, reward_sum={label})", "reward_sum", lambda v=val: exp.tell(good_arm, v, 1))
    if exp.samples != 0:
        raise AssertionError(f"{who}: rejected tells changed the sample count to {exp.samples}.")
    done = _loop(solver.start(case.make_env(s_env), rng=s_alg), case.make_env(s_env), budget)
    _expect_error(who, "ask() after the run ended", "", done.ask, (StateError,))
    _expect_error(who, "tell() after the run ended", "", lambda: done.tell(good_arm, 1.0, 1), (StateError,))


def _check_wrong_family(solver: Any, families: tuple[str, ...], rng: Any) -> None:
    who = _name(solver)
    env = _wrong_family_env(families, rng)
    _expect_error(who, f"start() on a {type(env).__name__} (not a {' / '.join(families)} problem)", "",
                  lambda: _loop(solver.start(env, rng=0), env, 2000))


# ====================================================================== driver
def _seed_pairs(rng: Any, n: int) -> list[tuple[np.random.SeedSequence, np.random.SeedSequence]]:
    ss = np.random.SeedSequence(_rng_int(rng))
    kids = ss.spawn(n)
    return [tuple(k.spawn(2)) for k in kids]  # type: ignore[misc]


def _settings(n_runs: Any, slow: Any, rng: Any) -> tuple[int | None, SequentialRule | None, list[Any], int]:
    """(n_runs, rule, seeds, root seed) from check_solver's options."""
    slow = check_bool(slow, "slow", owner="check_solver")
    seed = _rng_int(rng)
    if n_runs is None:
        rule = SLOW_RULE if slow else FAST_RULE
        return None, rule, _seed_pairs(seed, rule.max_runs), seed
    n = check_int(n_runs, "n_runs", owner="check_solver", low=1)
    return n, None, _seed_pairs(seed, n), seed


def yield_solver_checks(solver_or_name: Any, *, rng: Any = 0, n_runs: int | None = None, slow: bool = False,
                        budget: int = 200_000) -> Iterator[tuple[str, Callable[[], Any]]]:
    """The named checks of :func:`check_solver`, as ``(name, check)`` pairs.

    Each ``check()`` runs one check and raises :class:`AssertionError` on a violation; the
    statistical ones (``"easy"``, ``"adversarial_*"``, ``"understated_noise"``) return a
    :class:`CaseReport`. Use it to run (or parametrize a test over) the checks one by one.
    The options are those of :func:`check_solver`.
    """
    solver = _as_solver(solver_or_name)
    family = solver_family(solver)
    n_runs, rule, seeds, seed = _settings(n_runs, slow, rng)
    budget = check_int(budget, "budget", owner="check_solver", low=1)
    cases = _CASE_BUILDERS[family](solver)

    yield "easy", lambda: _check_easy(solver, cases, seeds, budget, rule)
    names = list(ADVERSARIAL) + (["order"] if "order" in cases else [])
    for c in names:
        yield f"adversarial_{c}", (lambda c=c: _check_adversarial(solver, cases[c], seeds, budget, rule))
    yield "understated_noise", lambda: _check_understated_noise(solver, family, cases, _seed_pairs(seed, _NOISE_RUNS),
                                                                budget)
    yield "resume", lambda: _check_resume(solver, cases, budget, seed)
    yield "reproducible", lambda: _check_reproducible(solver, cases, budget, seed)
    yield "seeds_differ", lambda: _check_seeds_differ(solver, cases, budget, seed)
    yield "settings_unchanged", lambda: _check_settings_unchanged(solver, cases, budget, seed)
    yield "bad_input", lambda: _check_bad_input(solver, cases, budget, seed)
    if _wrong_family_env(solver_families(solver), 0) is not None:
        yield "wrong_family", lambda: _check_wrong_family(solver, solver_families(solver), seed)


def check_solver(solver_or_name: Any, *, checks: Any = None, rng: Any = 0, n_runs: int | None = None,
                 slow: bool = False, budget: int = 200_000) -> dict[str, Any]:
    """Check that a PAC solver keeps the :class:`~combex.solvers.Solver` contract and its
    (epsilon, delta) promise on easy and adversarial instances of its family.

    Like scikit-learn's ``check_estimator``: every check has a name
    (:func:`yield_solver_checks` lists them) and can be run alone (``checks=[...]``).
    The instance family is read from the class attribute ``families`` (or ``family``),
    one of ``"semi-bandit"`` (index arms, Best-K answers; the solver's ``K``),
    ``"full-bandit"`` (super-arm masks over ``TopK(5, 2)`` or the solver's
    ``decision_class``), ``"linear"`` (feature rows) and ``"mips"`` (finite reward lists,
    the solver's ``k``).

    Parameters
    ----------
    solver_or_name : Solver or str
        A solver instance (its settings are used: its ``delta`` is the promise checked, its
        ``epsilon`` the tolerance answers are scored with) or a registered name (default
        settings).
    checks : iterable of str, optional
        Run only these checks (names from :data:`CHECKS`).
    rng : int, SeedSequence or Generator, default 0
        Root seed of every run (the runs are reproducible).
    n_runs : int, optional
        None (default): each statistical case runs until the sequential test
        (:class:`SequentialRule`) decides. An int: exactly that many seeded runs per case,
        judged by the Clopper-Pearson rule below.
    slow : bool, default False
        With ``n_runs=None``: the many-run sequential test (:data:`SLOW_RULE`: it also
        fails solvers whose error rate is max(0.1, 3 delta), at up to 400 runs a case)
        instead of the default one (:data:`FAST_RULE`: error rate max(0.2, 4 delta), up to
        100 runs).
    budget : int, default 200000
        Sample budget of one run.

    Returns
    -------
    dict
        Check name -> :class:`CaseReport` (statistical checks) or None.

    Raises
    ------
    AssertionError
        On the first failed check, naming the solver, the check and what went wrong.

    Notes
    -----
    The checks:

    ``easy``
        Every run stops within ``budget`` samples; the wrong answers are judged as below.
    ``adversarial_offset``, ``_small_gap``, ``_noise_scale``, ``_reward_range``, ``_near_tie``, ``_exact_tie`` (and ``_order`` for MIPS)
        Means far from the origin (theta = (50, 50.8)), gaps below the noise scale,
        non-default noise scales and reward ranges (Bernoulli, Rademacher, +-1, shifted
        lists), lists read ones-first, and ties. The near tie puts the two best answers
        the solver's own epsilon plus a small gap apart (0.1: 0.2 sigma for semi-bandit arms
        of sigma 0.5, 0.1 sigma for linear rewards of sigma 1, 0.1 for {0, 1} lists; 0.4 for
        teams of members of sigma 1) and scores answers at the solver's epsilon, so a wrong
        pick between the near-tied answers is an error; a stopping rule that stops too
        early is wrong there most often. The exact tie is scored with the
        solver's epsilon when positive, else with a tolerance of 0.25 given to it (solvers
        without a PAC tolerance: not applicable). A run that raises a
        :class:`~combex.exceptions.CombexError` counts as a refusal (sound); a run that
        hits ``budget`` as undecided; a stopped run with a wrong answer as an error.

        With ``n_runs=None`` the error count of each case is tested sequentially against
        the promised delta (:class:`SequentialRule`, Wald's SPRT: fail when the evidence
        that the error rate is clearly above delta is strong, pass when it is strong that
        it is not; a case with as many refused or undecided runs as a pass needs ends
        there). With an int ``n_runs`` a case fails when the one-sided 95%
        Clopper-Pearson bounds of the error rate contradict the promised delta: when
        ``n_runs`` is large enough for 0 errors to certify the promise (``n_runs >=
        log(0.05) / log(1 - delta)``, 59 runs at delta = 0.05) the *upper* bound must be at
        most delta; with fewer runs the *lower* bound must be (no significant evidence of
        a violation). A solver without a promise (a heuristic mode) fails on any error.
    ``understated_noise``
        Three runs on the easy instance whose noise is 10 times the declared scale (the
        problem's ``noise.sigma``, or the solver's own ``sigma`` setting): each must be
        refused (a CombexError) or flagged (a
        :class:`~combex.exceptions.NoiseScaleWarning`, or ``result.info["noise_check"]
        ["rejected"] is True``). Not applicable to reward lists (``mips``: the lists' range
        is known) and to solvers that estimate the scale (``divergence="unknown-variance"``).
    ``resume``
        Saved to disk (``Exploration.save``) after a random number of tells and resumed by
        a fresh solver: bit-identical answer, samples, pulls and rounds; ``run`` equals
        the ask / tell loop.
    ``reproducible``, ``seeds_differ``
        Same seeds, same run; different seeds, different sample paths.
    ``settings_unchanged``
        ``get_params()`` and the object's ``__dict__`` are unchanged by ``run``, ``start``
        and ``tell`` (no caches on the settings).
    ``bad_input``
        Bad ``problem``/``rng`` to ``start``, bad ``budget``/``rng`` to ``run``, bad
        ``arm``/``count``/``reward_sum`` to ``tell`` raise a CombexError naming the
        argument (and leave the state unchanged); ``ask``/``tell`` after the end raise
        StateError.
    ``wrong_family``
        A problem of another family is refused with a CombexError.

    Cost: a correct solver passes a case after 14 error-free runs at delta = 0.05 (11 at
    delta = 0.01); a solver whose stopping threshold is cut 10x fails the near tie after a
    few runs (``benchmarks/check_solver_counts.py --broken`` prints the table).

    Examples
    --------
    >>> from combex.testing import check_solver
    >>> reports = check_solver("lucb", checks=["easy", "resume"])
    >>> reports["easy"].errors, reports["easy"].verdict
    (0, 'pass')
    """
    all_checks = list(yield_solver_checks(solver_or_name, rng=rng, n_runs=n_runs, slow=slow, budget=budget))
    known = [n for n, _ in all_checks]
    wanted = known if checks is None else list(checks)
    unknown = [c for c in wanted if c not in known]
    if unknown:
        raise InvalidParameterError(
            f"The 'checks' parameter of check_solver has unknown check(s) {unknown}; known checks: {known}."
        )
    out: dict[str, Any] = {}
    for name, fn in all_checks:
        if name in wanted:
            try:
                out[name] = fn()
            except AssertionError as exc:
                raise AssertionError(f"[{name}] {exc}") from exc
    return out
