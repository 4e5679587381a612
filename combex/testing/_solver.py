"""Conformance suite for PAC solvers (built-in or plug-in), like scikit-learn's
``check_estimator``: named checks, each separately addressable."""

from __future__ import annotations

import copy
import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_rng
from ..exceptions import CombexError, InvalidParameterError, StateError

__all__ = ["check_solver", "yield_solver_checks", "solver_family", "solver_families", "clopper_pearson", "CaseReport", "FAMILIES",
           "CHECKS"]

#: The instance families a PAC solver can declare (class attribute ``families``).
FAMILIES = ("semi-bandit", "full-bandit", "linear", "mips")

#: Adversarial cases (besides ``"easy"``), by family; see :func:`check_solver`.
ADVERSARIAL = ("offset", "small_gap", "noise_scale", "reward_range", "near_tie", "exact_tie")

#: Every check name, in the order :func:`check_solver` runs them (``"adversarial_order"`` is
#: added for the ``mips`` family).
CHECKS = ("easy", *(f"adversarial_{c}" for c in ADVERSARIAL), "resume", "reproducible", "seeds_differ",
          "settings_unchanged", "bad_input", "wrong_family")

_TOL = 1e-9
# Tolerance given to a solver for the tie cases (a fraction of the case's gap scale).
_TIE_EPSILON = 0.25


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
    from scipy.stats import beta

    errors = check_int(errors, "errors", owner="clopper_pearson", low=0)
    runs = check_int(runs, "runs", owner="clopper_pearson", low=1)
    if errors > runs:
        raise InvalidParameterError(f"clopper_pearson: errors={errors} exceeds runs={runs}.")
    alpha = 1.0 - float(level)
    lower = 0.0 if errors == 0 else float(beta.ppf(alpha, errors, runs - errors + 1))
    upper = 1.0 if errors == runs else float(beta.ppf(1.0 - alpha, errors + 1, runs - errors))
    return lower, upper


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
        The error probability the solver promises (``nu`` or ``delta``).
    epsilon : float
        The tolerance the answers are scored with (``solver.tolerance``).
    samples : list of int
        Samples of the runs that stopped.
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

    def as_row(self) -> dict[str, Any]:
        return {
            "case": self.case, "runs": self.runs, "errors": self.errors, "refused": self.refused,
            "undecided": self.undecided, "delta": self.delta, "epsilon": self.epsilon,
            "cp_upper": round(self.upper, 4), "certified": self.certified,
            "median_samples": int(np.median(self.samples)) if self.samples else None, "note": self.note,
        }


# ====================================================================== families
def _as_solver(solver_or_name: Any) -> Any:
    from ..solvers import Solver, get_solver

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
    """The error probability a solver promises: ``nu`` (the LIL solvers) or ``delta``;
    None for a heuristic mode (no guarantee)."""
    if getattr(solver, "mode", "faithful") == "heuristic":
        return None
    for attr in ("nu", "delta"):
        v = getattr(solver, attr, None)
        if isinstance(v, (int, float)) and 0 < v < 1:
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


# ---------------------------------------------------------------------- instances
@dataclass
class _Case:
    name: str
    make_env: Callable[[Any], Any]  # rng -> environment
    solver: Any  # the solver with the case's settings (or None: not applicable)
    score: Callable[[Any, Any], bool]  # (env, answer) -> correct
    note: str = ""


def _semi_cases(solver: Any) -> dict[str, _Case]:
    from ..environments import BernoulliArms, GaussianArms

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
    tie = _with_tolerance(solver, _TIE_EPSILON)
    g = lambda m, s: (lambda r: GaussianArms(m, sigma=s, rng=r))  # noqa: E731
    return {
        "easy": _Case("easy", g(means(1.0, 1.0), 0.5), solver, score_for(eps0)),
        "offset": _Case("offset", g(means(50.8, 0.8), 1.0), solver, score_for(eps0), "means near 50"),
        "small_gap": _Case("small_gap", g(means(1.0, 0.4), 1.0), solver, score_for(eps0), "gap 0.4, sigma 1"),
        "noise_scale": _Case("noise_scale", g(means(1.0, 3.0), 4.0), solver, score_for(eps0), "sigma 4, gap 3"),
        "reward_range": _Case("reward_range", lambda r: BernoulliArms(means(0.9, 0.4), rng=r), solver,
                              score_for(eps0), "Bernoulli rewards in {0, 1}"),
        "near_tie": _Case("near_tie", g(means(1.0, 1.0, tie_gap=0.01), 0.5), tie,
                          score_for(_TIE_EPSILON), f"K-th and (K+1)-th 0.01 apart, epsilon {_TIE_EPSILON}"),
        "exact_tie": _Case("exact_tie", g(means(1.0, 1.0, tie_gap=0.0), 0.5), tie,
                           score_for(_TIE_EPSILON), f"K-th and (K+1)-th equal, epsilon {_TIE_EPSILON}"),
    }


def _full_cases(solver: Any) -> dict[str, _Case]:
    from ..environments import FullBandit
    from ..oracles import TopK

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
    tie = _with_tolerance(solver, _TIE_EPSILON)
    return {
        "easy": _Case("easy", env(means(1.0, 1.0)), solver, score_for(eps0)),
        "offset": _Case("offset", env(means(50.0, 1.0)), solver, score_for(eps0), "means near 50"),
        "small_gap": _Case("small_gap", env(means(1.0, 0.5)), solver, score_for(eps0), "gap 0.5, sigma 1"),
        "noise_scale": _Case("noise_scale", env(means(1.0, 3.0), sigma=3.0), solver, score_for(eps0),
                             "sigma 3, gap 3"),
        "reward_range": _Case("reward_range", env(means(1.0, 1.0), noise="rademacher", sigma=2.0), solver,
                              score_for(eps0), "Rademacher noise +-2"),
        "near_tie": _Case("near_tie", env(means(1.0, 1.0, tie_gap=0.01)), tie, score_for(_TIE_EPSILON),
                          f"second and third arms 0.01 apart, epsilon {_TIE_EPSILON}"),
        "exact_tie": _Case("exact_tie", env(means(1.0, 1.0, tie_gap=0.0)), tie, score_for(_TIE_EPSILON),
                           f"two best teams tied, epsilon {_TIE_EPSILON}"),
    }


def _linear_cases(solver: Any) -> dict[str, _Case]:
    from ..environments import LinearBandit, LinearInstance

    X3 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.7, 0.7, 0.0]])

    def env(X: Any, theta: Any, **kw: Any) -> Callable[[Any], Any]:
        # the paper's model: the problem carries S = ||theta||_2 (info["S"])
        return lambda r: LinearInstance(X, theta, rng=r, **kw)

    def score_for(eps: float) -> Callable[[Any, Any], bool]:
        return lambda e, a: bool(e.is_correct(a, eps))

    eps0 = float(solver.tolerance)
    tie = _with_tolerance(solver, _TIE_EPSILON)
    return {
        "easy": _Case("easy", env(X3, [0.0, 1.5, 0.0]), solver, score_for(eps0)),
        "offset": _Case("offset", lambda r: LinearBandit(np.eye(2), [50.0, 50.8], rng=r), solver, score_for(eps0),
                        "theta = (50, 50.8) on e_1, e_2, a plain LinearBandit (no S known)"),
        "small_gap": _Case("small_gap", env(X3, [0.0, 1.0, 0.6]), solver, score_for(eps0), "gap 0.3, sigma 1"),
        "noise_scale": _Case("noise_scale", env(X3, [0.0, 3.0, 0.0], sigma=3.0), solver, score_for(eps0),
                             "sigma 3"),
        "reward_range": _Case("reward_range", env(X3, [0.0, 0.9, -0.5], noise="pm1"), solver, score_for(eps0),
                              "+-1 rewards"),
        "near_tie": _Case("near_tie", env(X3, [0.0, 1.0, 0.99]), tie, score_for(_TIE_EPSILON),
                          f"two arms 0.01 apart, epsilon {_TIE_EPSILON}"),
        "exact_tie": _Case("exact_tie", env(X3, [0.0, 1.0, 1.0]), tie, score_for(_TIE_EPSILON),
                           f"two arms tied, epsilon {_TIE_EPSILON}"),
    }


def _mips_cases(solver: Any) -> dict[str, _Case]:
    from ..environments import BinaryRewardLists, RewardLists

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
    tie = _with_tolerance(solver, max(eps0, 0.05))
    teps = float(tie.tolerance) if tie is not None else eps0
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
        "near_tie": _Case("near_tie", env(lists(probs(0.9, 0.5, tie_gap=0.005))), tie, score_for(teps),
                          "k-th and (k+1)-th 0.005 apart"),
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
    from ..environments import FullBandit, GaussianArms, LinearBandit

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


def _run_case(case: _Case, seeds: list[Any], budget: int, delta: float | None) -> CaseReport:
    rep = CaseReport(case.name, delta=delta, note=case.note)
    if case.solver is None:
        rep.note = "not applicable: the solver has no PAC tolerance setting (epsilon)"
        return rep
    rep.epsilon = float(case.solver.tolerance)
    for s_env, s_alg in seeds:
        rep.runs += 1
        try:
            env = case.make_env(s_env)
            res = case.solver.run(env, rng=s_alg, budget=budget)
        except CombexError as exc:
            rep.refused += 1
            rep.note = f"refused: {type(exc).__name__}: {str(exc)[:160]}"
            continue
        if res.status != "identified":
            rep.undecided += 1
            continue
        rep.samples.append(int(res.samples))
        if not case.score(env, res.answer):
            rep.errors += 1
    return rep


def _name(solver: Any) -> str:
    return getattr(solver, "name", "") or type(solver).__name__


# ====================================================================== checks
class _StatFailure(AssertionError):
    """A failed statistical check; ``report`` holds the counts."""

    def __init__(self, message: str, report: CaseReport) -> None:
        super().__init__(message)
        self.report = report


def _check_easy(solver: Any, cases: dict[str, _Case], seeds: list[Any], budget: int) -> CaseReport:
    rep = _run_case(cases["easy"], seeds, budget, _promised_delta(solver))
    who = _name(solver)
    msg = ""
    if rep.refused:
        msg = f"{who}: refused the easy instance of its family: {rep.note}"
    elif rep.undecided:
        msg = f"{who}: did not stop within {budget} samples on the easy instance ({rep.undecided} of {rep.runs} runs)."
    elif rep.errors:
        msg = f"{who}: wrong answer on the easy instance in {rep.errors} of {rep.runs} runs."
    if msg:
        raise _StatFailure(msg, rep)
    return rep


def _check_adversarial(solver: Any, case: _Case, seeds: list[Any], budget: int) -> CaseReport:
    delta = _promised_delta(solver)
    rep = _run_case(case, seeds, budget, delta)
    who = _name(solver)
    if rep.errors == 0:
        return rep
    if delta is None:
        raise _StatFailure(f"{who}: {rep.errors} wrong answer(s) on case {case.name!r} ({case.note}) and no "
                           f"error probability promised.", rep)
    lower, upper = rep.bounds
    # Enough runs to certify the promise (0 errors would give upper <= delta): require it;
    # otherwise fail only on significant evidence of a violation (lower bound above delta).
    certifiable = clopper_pearson(0, max(rep.decided, 1))[1] <= delta
    if (certifiable and upper > delta) or lower > delta:
        raise _StatFailure(
            f"{who}: {rep.errors} wrong answer(s) in {rep.decided} decided runs on case {case.name!r} "
            f"({case.note}); 95% Clopper-Pearson bounds of the error rate [{lower:.3g}, {upper:.3g}] vs the "
            f"promised delta = {delta}. A solver that cannot guarantee this case must refuse it with a "
            f"CombexError.", rep
        )
    return rep


def _for_env(solver: Any, env: Any) -> Any:
    """The solver ready for ``start`` on ``env``: an oracle baseline whose ``theta`` setting
    is None (``xy-oracle``; its ``run`` reads the truth) gets the environment's theta."""
    params = solver.get_params()
    if "theta" in params and params["theta"] is None and getattr(env, "theta", None) is not None:
        return _clone(solver, theta=np.asarray(env.theta))
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


def yield_solver_checks(solver_or_name: Any, *, rng: Any = 0, n_runs: int = 2,
                        budget: int = 200_000) -> Iterator[tuple[str, Callable[[], Any]]]:
    """The named checks of :func:`check_solver`, as ``(name, check)`` pairs.

    Each ``check()`` runs one check and raises :class:`AssertionError` on a violation; the
    statistical ones (``"easy"``, ``"adversarial_*"``) return a :class:`CaseReport`. Use it
    to run (or parametrize a test over) the checks one by one.
    """
    solver = _as_solver(solver_or_name)
    family = solver_family(solver)
    n_runs = check_int(n_runs, "n_runs", owner="check_solver", low=1)
    budget = check_int(budget, "budget", owner="check_solver", low=1)
    seed = _rng_int(rng)
    cases = _CASE_BUILDERS[family](solver)
    seeds = _seed_pairs(seed, n_runs)

    yield "easy", lambda: _check_easy(solver, cases, seeds, budget)
    names = list(ADVERSARIAL) + (["order"] if "order" in cases else [])
    for c in names:
        yield f"adversarial_{c}", (lambda c=c: _check_adversarial(solver, cases[c], seeds, budget))
    yield "resume", lambda: _check_resume(solver, cases, budget, seed)
    yield "reproducible", lambda: _check_reproducible(solver, cases, budget, seed)
    yield "seeds_differ", lambda: _check_seeds_differ(solver, cases, budget, seed)
    yield "settings_unchanged", lambda: _check_settings_unchanged(solver, cases, budget, seed)
    yield "bad_input", lambda: _check_bad_input(solver, cases, budget, seed)
    if _wrong_family_env(solver_families(solver), 0) is not None:
        yield "wrong_family", lambda: _check_wrong_family(solver, solver_families(solver), seed)


def check_solver(solver_or_name: Any, *, checks: Any = None, rng: Any = 0, n_runs: int = 2,
                 budget: int = 200_000) -> dict[str, Any]:
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
        A solver instance (its settings are used) or a registered name (default settings).
    checks : iterable of str, optional
        Run only these checks (names from :data:`CHECKS`).
    rng : int, SeedSequence or Generator, default 0
        Root seed of every run (the runs are reproducible).
    n_runs : int, default 2
        Seeded runs per statistical case.
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
        Every run stops within ``budget`` samples with an epsilon-correct answer.
    ``adversarial_offset``, ``_small_gap``, ``_noise_scale``, ``_reward_range``, ``_near_tie``, ``_exact_tie`` (and ``_order`` for MIPS)
        Means far from the origin (theta = (50, 50.8)), gaps below the noise scale,
        non-default noise scales and reward ranges (Bernoulli, Rademacher, +-1, shifted
        lists), near and exact ties scored with a tolerance epsilon > 0 (solvers without
        a PAC tolerance: not applicable), lists read ones-first. A run that raises a
        :class:`~combex.exceptions.CombexError` counts as a refusal (sound); a run that
        hits ``budget`` as undecided; a stopped run with a wrong answer as an error. The
        check fails when the one-sided 95% Clopper-Pearson bounds of the error rate
        contradict the promised delta (``nu`` for the LIL solvers): when ``n_runs`` is
        large enough for 0 errors to certify the promise (``n_runs >= log(0.05) /
        log(1 - delta)``, 59 runs at delta = 0.05) the *upper* bound must be at most delta;
        with fewer runs the *lower* bound must be (no significant evidence of a violation).
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

    Examples
    --------
    >>> from combex.testing import check_solver
    >>> reports = check_solver("lucb", checks=["easy", "resume"])
    >>> reports["easy"].errors
    0
    """
    all_checks = list(yield_solver_checks(solver_or_name, rng=rng, n_runs=n_runs, budget=budget))
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
