"""Forecast a running study: how many more evaluations it may need, and how likely its
budget is to be enough.

:func:`forecast` continues the study's own exploration (its statistics, its solver, its
stopping rule, rebuilt from the logs) in simulated sessions, each continuation under a
truth drawn from what the told scores say about it, and reports how many more evaluations
the continuations needed to a certified answer, how many certified within the budget, and
how often the answer was good. It is the interim *predictive* analysis of adaptive trials:
:func:`~combex.studies.plan` simulates a study before it starts, under qualities the lab
assumes; the forecast simulates the rest of a study under the qualities its scores
estimate, with their uncertainty.

The draws and what a forecast is not: :meth:`Study.forecast`.

Examples
--------
>>> import numpy as np
>>> import combex.studies as cs
>>> study = cs.create_study(storage=None, name="demo", solver="top-two",
...                         solver_params={"delta": 0.1, "epsilon": 5.0},
...                         problem=cs.problem_spec(workers=list("ABCDEF"), team_size=2,
...                                                 score_range=(0, 100)))
>>> rng = np.random.default_rng(0)
>>> q = dict(zip("ABCDEF", (30, 28, 20, 18, 15, 12)))
>>> for _ in range(40):
...     t = study.ask()
...     _ = study.tell(t.id, float(np.clip(sum(q[w] for w in t.names) + 8 * rng.standard_normal(), 0, 100)))
>>> f = study.forecast(runs=8, rng=1)
>>> f.runs, f.evaluations
(8, 40)
>>> sorted(f.summary())[:3]
['budget', 'budget_for_80', 'certified']
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import check_int, param_error
from ..environments import FullBandit, GaussianArms
from ..exceptions import StateError, StudyFinishedError

__all__ = ["StudyForecast", "forecast", "fit_log"]

#: Evaluations a continuation may go on for, at least (default ``more``: the largest of
#: this, twice the evaluations told, and twice what the budget leaves).
MIN_HORIZON = 1000


@dataclass(frozen=True)
class _Fit:
    """The least-squares fit of a study's told log (from its stored aggregates): ``theta``
    the estimates (minimum-norm where the design does not identify them), ``cov`` the
    matrix with ``s2 * cov`` their covariance (``(X'X)^+`` for teams, ``diag(1 / n)`` per
    arm), ``s2`` the variance of one observation (declared, or the residual variance on
    ``dof`` degrees of freedom; nan without any), ``known`` whether it was declared."""

    kind: str
    n: int
    labels: list
    theta: np.ndarray
    cov: np.ndarray
    counts: np.ndarray
    identified: np.ndarray
    s2: float
    dof: int
    known: bool

    def factor(self) -> np.ndarray:
        """``L`` with ``cov = L L'`` (the symmetric square root, through the
        eigendecomposition: ``cov`` is singular in the directions the decision class cannot
        tell apart, e.g. a sum every team shares)."""
        w, v = np.linalg.eigh(np.asarray(self.cov, dtype=float))
        return v * np.sqrt(np.maximum(w, 0.0))


def fit_log(spec: dict[str, Any], agg: dict[str, Any]) -> _Fit:
    """:class:`_Fit` of a study's problem spec and stored aggregates (what
    :meth:`Study.member_estimates` and :func:`forecast` read)."""
    n = int(spec["n_arms"])
    labels = spec.get("labels") or [str(i) for i in range(n)]
    noise = spec["noise"]
    sigma = noise.get("sigma")
    if agg["kind"] == "mask":
        A = np.asarray(agg["xtx"], dtype=float)
        b = np.asarray(agg["xty"], dtype=float)
        Ainv = np.linalg.pinv(A, hermitian=True)
        theta = Ainv @ b
        rank = int(np.linalg.matrix_rank(A, hermitian=True)) if agg["rows"] else 0
        dof = int(agg["rows"] - rank)
        if sigma is not None:
            k = int((spec.get("decision_class") or {}).get("params", {}).get("k", 1))
            s2 = float(sigma) ** 2 * (1 if noise.get("level") == "observation" else
                                      (k if noise.get("independent", True) else k * k))
        elif dof >= 1:
            s2 = max(float(agg["yty"] - theta @ b), 0.0) / dof
        else:
            s2 = math.nan
        ident = np.abs(A @ Ainv - np.eye(n)).max(axis=0) < 1e-8 if agg["rows"] else np.zeros(n, bool)
        return _Fit("mask", n, labels, theta, Ainv, np.diag(A).copy(), ident, s2, dof, sigma is not None)
    cnt = np.asarray(agg["count"], dtype=float)
    tot = np.asarray(agg["sum"], dtype=float)
    sq = np.asarray(agg["sumsq"], dtype=float)
    seen = cnt > 0
    mean = np.divide(tot, cnt, out=np.zeros(n), where=seen)
    dof = int(agg["rows"] - int(seen.sum()))
    if sigma is not None:
        s2 = float(sigma) ** 2
    elif dof >= 1:
        s2 = max(float(sq.sum() - (mean * tot).sum()), 0.0) / dof
    else:
        s2 = math.nan
    cov = np.diag(np.divide(1.0, cnt, out=np.full(n, np.inf), where=seen))
    return _Fit("index", n, labels, mean, cov, cnt, seen, s2, dof, sigma is not None)


@dataclass
class StudyForecast:
    """The outcome of :meth:`Study.forecast` (:mod:`combex.studies._forecast`).

    Attributes
    ----------
    study : str
    evaluations : int
        Evaluations told when the forecast was made.
    budget : int or None
        The study's budget then.
    horizon : int
        Evaluations more each continuation could take before counting as not certified.
    more : list of (int or None)
        Per continuation: the evaluations more to a certified answer (None: not certified
        within ``horizon``).
    good_at_stop : list of (bool or None)
        Per continuation: whether its certified answer was good under its draw (None: not
        certified).
    good_at_budget : list of (bool or None)
        Per continuation: whether the recommendation once the budget was used (or at the
        stop, if earlier) was good under its draw (None without a budget).
    leader_good : list of bool
        Per draw: whether the leader now is good under it.
    leader : list or int
        The leader now (names for a team study).
    epsilon, delta : float
        The solver's.
    noise : dict
        ``kind``; ``sigma`` (declared) or ``s`` (estimated) with ``dof``.
    """

    study: str
    evaluations: int
    budget: int | None
    horizon: int
    more: list[int | None]
    good_at_stop: list[bool | None]
    good_at_budget: list[bool | None]
    leader_good: list[bool]
    leader: Any
    epsilon: float
    delta: float | None
    noise: dict[str, Any]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.more)

    def quantile(self, q: float) -> float:
        """The ``q`` quantile of the evaluations more to a certified answer over the
        continuations (the order statistic at ``ceil(q runs)``; ``inf`` when that many did not
        certify within the horizon)."""
        if not 0.0 < q <= 1.0:
            raise param_error("q", "StudyForecast.quantile", "a float in (0, 1]", q)
        done = sorted(m for m in self.more if m is not None)
        j = max(math.ceil(q * self.runs), 1)
        return float(done[j - 1]) if j <= len(done) else math.inf

    def summary(self) -> dict[str, Any]:
        """The figures of :meth:`__str__` as a dict (JSON values)."""
        n = self.runs
        left = None if self.budget is None else max(self.budget - self.evaluations, 0)
        certified = sum(m is not None for m in self.more)
        by_budget = None if left is None else sum(m is not None and m <= left for m in self.more)

        def num(x: float) -> float | None:
            return None if not math.isfinite(x) else float(x)

        good_stop = [g for g in self.good_at_stop if g is not None]
        good_budget = [g for g in self.good_at_budget if g is not None]
        return {
            "study": self.study, "evaluations": self.evaluations, "budget": self.budget, "runs": n,
            "horizon": self.horizon, "certified": certified, "certified_by_budget": by_budget,
            "median_more": num(self.quantile(0.5)), "p80_more": num(self.quantile(0.8)),
            "p90_more": num(self.quantile(0.9)),
            "budget_for_80": None if not math.isfinite(self.quantile(0.8)) else
            int(self.evaluations + self.quantile(0.8)),
            "good_at_stop": sum(good_stop), "stopped": len(good_stop),
            "good_at_budget": sum(good_budget) if self.budget is not None else None,
            "leader": self.leader, "leader_good": sum(self.leader_good),
            "epsilon": self.epsilon, "delta": self.delta, "noise": self.noise, "seconds": self.seconds,
        }

    def to_dict(self) -> dict[str, Any]:
        """Every field (JSON values): the summary, the notes, and the per-continuation lists
        under ``per_run`` (``more``, ``good_at_stop``, ``good_at_budget``, ``leader_good``)."""
        return {**self.summary(), "notes": list(self.notes),
                "per_run": {"more": list(self.more), "good_at_stop": list(self.good_at_stop),
                            "good_at_budget": list(self.good_at_budget), "leader_good": list(self.leader_good)}}

    def lines(self) -> list[str]:
        """The forecast in words, one sentence a line (what :meth:`__str__` joins)."""
        s = self.summary()
        n = s["runs"]
        nz = self.noise
        noise = (f"noise sd {nz['sigma']:.3g}, declared" if nz.get("sigma") is not None else
                 f"noise sd {nz['s']:.3g} estimated on {nz['dof']} degrees of freedom" if nz.get("s") is not None
                 else "Bernoulli answers")
        budget = "" if self.budget is None else f", budget {self.budget:,}"
        out = [f"Forecast for study {self.study!r} after {self.evaluations:,} evaluations{budget}: {n} simulated "
               f"continuations of its exploration, each under workers' contributions drawn around the current "
               f"estimates ({noise})."]
        if self.budget is not None:
            left = max(self.budget - self.evaluations, 0)
            out.append(f"Certified within the budget ({left:,} evaluations more): {s['certified_by_budget']} of {n} "
                       f"({100.0 * s['certified_by_budget'] / n:.0f}%).")
        if s["median_more"] is None:
            out.append(f"Evaluations more to a certified answer: more than {self.horizon:,} in over half of them "
                       f"({n - s['certified']} of {n} not certified within {self.horizon:,} more).")
        else:
            tail = "" if s["certified"] == n else \
                f" ({n - s['certified']} of {n} not certified within {self.horizon:,} more)"
            p80 = "more than " + f"{self.horizon:,}" if s["p80_more"] is None else f"{s['p80_more']:,.0f}"
            out.append(f"Evaluations more to a certified answer: median {s['median_more']:,.0f}, 4 in 5 by {p80}"
                       f"{tail}.")
            if s["budget_for_80"] is not None:
                out.append(f"A budget of about {s['budget_for_80']:,} evaluations certifies in 4 of 5 "
                           f"continuations; a single forecast can be off either way (it moves with the estimates): "
                           f"leave a margin, and read it again after some more sessions.")
        who = ", ".join(map(str, self.leader)) if isinstance(self.leader, list) else str(self.leader)
        good = f"The leader now ({who}) is within {self.epsilon:g} of the best in {s['leader_good']} of {n} draws"
        if self.budget is not None:
            good += f"; the answer once the budget is used, in {s['good_at_budget']} of {n}"
        out.append(good + ".")
        out.append("A forecast, not a guarantee: it assumes the study's model and sessions told one at a time; only "
                   "the stopping rule's certificate carries the study's error guarantee"
                   + ("." if self.delta is None else f" (delta {self.delta:g})."))
        return out + list(self.notes)

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _draw(fit: _Fit, factor: Any, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One draw of the truth (contributions, noise sd) from the posterior (:meth:`Study.forecast`, Notes)."""
    if kind == "bernoulli":
        s = fit.theta * fit.counts
        return rng.beta(1.0 + s, 1.0 + fit.counts - s), math.nan
    s2 = fit.s2 if fit.known else fit.dof * fit.s2 / rng.chisquare(fit.dof)
    z = rng.standard_normal(fit.n)
    return fit.theta + math.sqrt(s2) * (factor @ z), math.sqrt(s2)


def forecast(study: Any, *, runs: int = 20, more: int | None = None, rng: Any = 0) -> StudyForecast:
    """Simulate the rest of a running study (module docstring); :meth:`Study.forecast`.

    Parameters
    ----------
    study : Study
    runs : int, default 20
        Simulated continuations (each under its own draw of the truth).
    more : int, optional
        Evaluations more a continuation may take before it counts as not certified (default:
        the largest of 1,000, twice the evaluations told and twice what the budget leaves).
    rng : int, default 0
        Root seed of the draws and the simulated sessions.

    Raises
    ------
    StudyFinishedError
        When the study has identified its answer (nothing is left to forecast).
    StateError
        When the told scores do not yet determine every worker's contribution, or leave no
        degree of freedom to estimate the noise level (the first round of sessions must be
        told first), or when the study's noise kind has no forecast (Gaussian scores and
        Bernoulli answers have).
    """
    owner = "Study.forecast"
    runs = check_int(runs, "runs", owner=owner, low=1, high=100_000)
    if more is not None:
        more = check_int(more, "more", owner=owner, low=1)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (int, np.integer)) or int(rng) < 0:
        raise param_error("rng", owner, "a nonnegative int (the root seed)", rng)
    t0 = time.perf_counter()
    with study.storage.read(study.name) as rx:
        rp = study._sync(rx)
        rec = rx.study
    if rec.status == "identified":
        raise StudyFinishedError(f"Study {study.name!r} has identified its answer after {rec.n_told} evaluations: "
                                 "there is nothing left to forecast.")
    spec = rec.problem
    kind = spec["noise"]["kind"]
    fit = study._fit_now(rec)
    if kind == "bernoulli" and fit.kind == "index":
        draw_kind = "bernoulli"
        if not np.all(fit.counts > 0):
            raise StateError(f"A forecast of study {study.name!r} needs a told answer of every arm first "
                             f"(untold: {[fit.labels[i] for i in np.flatnonzero(fit.counts == 0)]}).")
        noise = {"kind": "bernoulli"}
    elif kind == "gaussian":
        draw_kind = "gaussian"
        if rec.n_told == 0:
            raise StateError(f"A forecast of study {study.name!r} needs told scores: none is told yet.")
        if not np.all(fit.identified):
            who = [fit.labels[i] for i in np.flatnonzero(~fit.identified)]
            raise StateError(f"A forecast of study {study.name!r} needs the told scores to determine every worker's "
                             f"contribution first (not yet: {who}); tell the first round of sessions.")
        if not fit.known and not fit.dof >= 1:
            raise StateError(f"A forecast of study {study.name!r} needs more told scores than workers to estimate "
                             f"the noise level (told {rec.n_told}).")
        noise = {"kind": "gaussian", "sigma": math.sqrt(fit.s2)} if fit.known else \
            {"kind": "gaussian", "s": math.sqrt(fit.s2), "dof": int(fit.dof)}
    else:
        raise StateError(f"A forecast of study {study.name!r} is made for Gaussian scores and Bernoulli answers (one "
                         f"arm per session); its noise kind is {kind!r}.")

    factor = fit.factor() if draw_kind == "gaussian" else None
    state = rp.exp.state_dict()
    if state["status"] != "running":  # stopped at its budget: forecast its continuation
        state = {**state, "status": "running", "message": ""}
    solver, problem = study.solver, study.problem
    eps = float(solver.tolerance)
    delta = getattr(solver, "delta", None)
    delta = None if delta is None else float(delta)
    dc = problem.decision_class
    told = int(rec.n_told)
    budget_stop = rec.status == "budget_exhausted"  # forecast as continued: no budget left to speak of
    budget = None if budget_stop else rec.budget
    left = None if budget is None else max(int(budget) - told, 0)
    horizon = more if more is not None else max(MIN_HORIZON, 2 * told, 2 * (left or 0))
    leader = np.asarray(rp.exp.answer)

    out_more: list[int | None] = []
    good_stop: list[bool | None] = []
    good_budget: list[bool | None] = []
    leader_good: list[bool] = []
    for ss in np.random.SeedSequence([int(rng), told]).spawn(runs):
        g = np.random.default_rng(ss)
        theta, sd = _draw(fit, factor, draw_kind, g)
        # the drawn truth, to score answers (Environment.is_correct; its noise is not used)
        truth = FullBandit(theta, decision_class=dc) if leader.dtype == bool else GaussianArms(theta)

        def good(arm: Any) -> bool:
            a = np.asarray(arm)
            return truth.is_correct(a if a.dtype == bool else int(a), eps)

        leader_good.append(good(leader))
        exp = solver.resume(state, problem)
        exp.rng = np.random.default_rng(g.integers(2**63))
        at_budget: bool | None = None if left is None else (good(leader) if left == 0 else None)
        while not exp.done and exp.samples - told < horizon:
            batch = exp.ask()
            counts = batch.counts.astype(float)
            if draw_kind == "bernoulli":
                p = theta[batch.arms]
                sums = g.binomial(batch.counts, p).astype(float)
            else:
                mu = batch.arms.astype(float) @ theta if batch.arms.ndim == 2 else theta[batch.arms]
                sums = counts * mu + np.sqrt(counts) * sd * g.standard_normal(counts.shape[0])
            exp.tell_batch(batch, sums)
            if left is not None and at_budget is None and exp.samples - told >= left:
                at_budget = good(exp.answer)
        stopped = exp.status == "identified"
        out_more.append(int(exp.samples - told) if stopped else None)
        good_stop.append(good(exp.answer) if stopped else None)
        if left is not None and at_budget is None:
            at_budget = good(exp.answer)
        good_budget.append(at_budget)
    notes = []
    if budget_stop:
        notes.append(f"The study stopped at its budget of {rec.budget:,}: the forecast continues it as if the budget "
                     "were raised (the owner's page: Continue the study; Study.set_budget; combex study set-budget).")
    return StudyForecast(study=study.name, evaluations=told, budget=budget, horizon=int(horizon), more=out_more,
                         good_at_stop=good_stop, good_at_budget=good_budget, leader_good=leader_good,
                         leader=[fit.labels[i] for i in np.flatnonzero(leader)] if leader.dtype == bool else
                         fit.labels[int(leader)],
                         epsilon=eps, delta=delta, noise=noise, seconds=time.perf_counter() - t0, notes=notes)

