"""Plan a study before the first session: how many sessions, at which delta and epsilon, and
how sure a fixed budget leaves you.

:func:`plan` simulates the study under assumed worker qualities (or a plausible gap) and noise,
with each candidate solver, on common random numbers, and reports per solver, epsilon and
delta the distribution of sessions needed (median, 90th percentile), the lower bound
``T* log(1/delta)`` that no delta-correct algorithm can beat on that instance, and the error at
fixed budgets. One run per (solver, epsilon, seed) serves every delta of the grid: the
sampling rules do not depend on delta, only the stopping rule does, and the rule at a larger
delta stops no later than at a smaller one, so one run to the smallest delta's stop records
every larger delta's stopping time (:meth:`Exploration.delta_achieved`'s monotonicity) and the
recommendation at every budget.

Examples
--------
>>> import combex.studies as cs
>>> p = cs.plan(workers=6, team_size=2, gap=10.0, noise_sd=10.0, delta=0.1, epsilon=5.0,
...             budgets=(50,), runs=4, rng=0)
>>> sorted(p.summary()[0])[:4]
['T_star_log', 'delta', 'epsilon', 'errors']
"""

from __future__ import annotations

import argparse
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._validation import check_float, check_int, check_probability, param_error
from ..environments import FullBandit, GaussianArms
from ..exceptions import InvalidParameterError
from ..identification import bandit_characteristic_time, team_T_star_lower_bound
from ..solvers import get_solver

__all__ = ["plan", "StudyPlan"]

#: What a plan reports per (solver, epsilon, delta): see :meth:`StudyPlan.summary`.
_COLUMNS = ("solver", "epsilon", "delta", "median", "p90", "mean", "errors", "runs", "T_star_log", "ratio")


@dataclass
class StudyPlan:
    """The outcome of :func:`plan`.

    Attributes
    ----------
    setting : dict
        The assumed instance: workers, team size, qualities, noise sd, score range.
    runs : list of dict
        One record per (solver, epsilon, seed): ``stop`` (sessions to the stop at each delta of
        the grid; None past ``max_sessions``), ``correct`` (whether the answer at each delta's
        stop is epsilon-good), ``at_budget`` (whether the recommendation at each budget is
        epsilon-good).
    deltas, epsilons, budgets, solvers : tuples
    T_star : dict
        ``{epsilon: T*}`` at the assumed instance (a certified lower bound of the
        characteristic time for teams: the single-swap LP; exact for best arm).
    seconds : float
        Wall time of the simulation.
    """

    setting: dict[str, Any]
    runs: list[dict[str, Any]]
    deltas: tuple[float, ...]
    epsilons: tuple[float, ...]
    budgets: tuple[int, ...]
    solvers: tuple[str, ...]
    T_star: dict[float, float]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> list[dict[str, Any]]:
        """Per (solver, epsilon, delta): ``median`` / ``p90`` / ``mean`` sessions to the stop,
        ``errors`` (answers not epsilon-good) out of ``runs``, ``T_star_log`` = ``T* log(1/delta)``
        and ``ratio`` = median / ``T_star_log`` (runs that did not stop within ``max_sessions``
        count as ``inf`` in the percentiles)."""
        out = []
        for name in self.solvers:
            for eps in self.epsilons:
                rs = [r for r in self.runs if r["solver"] == name and r["epsilon"] == eps]
                for j, d in enumerate(self.deltas):
                    stops = np.array([math.inf if r["stop"][j] is None else r["stop"][j] for r in rs], dtype=float)
                    errs = sum(not r["correct"][j] for r in rs if r["stop"][j] is not None)
                    t = self.T_star.get(eps, math.nan)
                    tl = t * math.log(1.0 / d)
                    med = float(np.median(stops)) if stops.size else math.nan
                    out.append({"solver": name, "epsilon": eps, "delta": d, "median": med,
                                "p90": float(np.percentile(stops, 90)) if stops.size else math.nan,
                                "mean": float(stops.mean()) if stops.size else math.nan,
                                "errors": int(errs), "runs": len(rs), "T_star_log": tl,
                                "ratio": med / tl if tl > 0 and math.isfinite(tl) else math.nan})
        return out

    def budget_errors(self) -> list[dict[str, Any]]:
        """Per (solver, epsilon, budget): the fraction of runs whose recommendation after that
        many sessions is not epsilon-good, with its Clopper-Pearson 95% interval; and
        ``certified``, the fraction of runs whose stopping rule at the study's delta held by
        then (a study with that budget ends identified, not at its budget; None when the
        plan's deltas do not include the study's)."""
        from scipy.stats import beta as beta_dist  # scipy.stats is slow to import (~0.3 s): combex --help stays light

        d = self.setting.get("delta")
        jd = next((j for j, x in enumerate(self.deltas) if d is not None and math.isclose(x, d)), None)
        out = []
        for name in self.solvers:
            for eps in self.epsilons:
                rs = [r for r in self.runs if r["solver"] == name and r["epsilon"] == eps]
                for j, b in enumerate(self.budgets):
                    k = sum(not r["at_budget"][j] for r in rs)
                    n = len(rs)
                    lo = float(beta_dist.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
                    hi = float(beta_dist.ppf(0.975, k + 1, n - k)) if k < n else 1.0
                    cert = None if jd is None or not n else sum(
                        r["stop"][jd] is not None and r["stop"][jd] <= b for r in rs) / n
                    out.append({"solver": name, "epsilon": eps, "budget": int(b), "error": k / n if n else math.nan,
                                "low": lo, "high": hi, "runs": n, "certified": cert})
        return out

    def in_short(self) -> list[str]:
        """One sentence per solver at the study's delta and epsilon (when the grids hold
        them): the median and 90% sessions to a certified answer, and with budgets, how many
        simulated studies it certified by each."""
        d, e = self.setting.get("delta"), self.setting.get("epsilon")
        rows = [r for r in self.summary() if d is not None and e is not None and math.isclose(r["delta"], d)
                and math.isclose(r["epsilon"], e)]
        if not rows:
            return []
        what = "sessions" if self.setting.get("team_size") else "evaluations"
        out = ["", f"In short (delta {d:g}, epsilon {e:g}):"]
        berr = sorted((r for r in self.budget_errors() if math.isclose(r["epsilon"], e) and r["certified"] is not None),
                      key=lambda r: r["budget"])
        for r in rows:
            line = (f"  {r['solver']}: about {_fmt_n(r['median'])} {what} to a certified answer (half the simulated "
                    f"studies stopped by then, 9 in 10 by {_fmt_n(r['p90'])})")
            cs = [c for c in berr if c["solver"] == r["solver"]]
            if cs:
                line += "; " + ", ".join(f"with a budget of {c['budget']:,}, {round(c['certified'] * c['runs'])} of "
                                         f"{c['runs']}" for c in cs) + " studies certified their answer"
            out.append(line + ".")
        if "random-design" in [r["solver"] for r in rows] and self.setting.get("team_size"):
            from ..solvers.optimal_linear import FIXED_DESIGN_FIRST, fixed_design_checks  # loaded on use

            top = max(max(self.budgets, default=0), max(r["p90"] for r in rows if r["solver"] == "random-design"))
            checks = fixed_design_checks(float(FIXED_DESIGN_FIRST * self.setting["n_workers"]), int(top * 1.25) + 1)
            out.append(f"  random-design checks its rule after {', '.join(f'{c:,}' for c in checks)}, ... sessions: "
                       "give it a budget on one of these (the sessions after the last check before a budget cannot "
                       "certify).")
        return out

    def table(self) -> str:
        """The plan as text (the ``combex plan`` output)."""
        s = self.setting
        lines = [f"Plan: {s['n_workers']} workers, teams of {s['team_size']}, noise sd {s['noise_sd']:g} per session, "
                 f"assumed qualities {_fmt_list(s['qualities'])}; {self.runs_per_case} simulated studies per solver "
                 f"and epsilon ({self.seconds:.1f} s)."
                 if s.get("team_size") else
                 f"Plan: {s['n_workers']} arms, noise sd {s['noise_sd']:g}, assumed means {_fmt_list(s['qualities'])}; "
                 f"{self.runs_per_case} simulated studies per solver and epsilon ({self.seconds:.1f} s).",
                 *self.in_short(),
                 "", "Sessions needed to stop (the answer is epsilon-good with probability >= 1 - delta):",
                 f"{'solver':<14} {'epsilon':>7} {'delta':>6} {'median':>8} {'90%':>8} {'errors':>7} "
                 f"{'T* log(1/d)':>12} {'median/T*':>10}"]
        for r in self.summary():
            lines.append(f"{r['solver']:<14} {r['epsilon']:>7g} {r['delta']:>6g} {_fmt_n(r['median']):>8} "
                         f"{_fmt_n(r['p90']):>8} {r['errors']:>3}/{r['runs']:<3} {_fmt_n(r['T_star_log'], 1):>12} "
                         f"{r['ratio']:>10.2f}")
        if self.budgets:
            d = s.get("delta")
            lines += ["", "At a fixed budget: error (the recommendation after that many sessions is not epsilon-good)"
                      + (f" and certified (the study's rule at delta {d:g} held by then: it ends identified, not at "
                         "its budget)" if d is not None else "") + ":",
                      f"{'solver':<14} {'epsilon':>7} {'budget':>7} {'error':>7} {'95% interval':>16} "
                      f"{'certified':>10}"]
            for r in self.budget_errors():
                cert = "-" if r["certified"] is None else f"{round(r['certified'] * r['runs'])}/{r['runs']}"
                lines.append(f"{r['solver']:<14} {r['epsilon']:>7g} {r['budget']:>7} {r['error']:>7.3f} "
                             f"{'[' + format(r['low'], '.3f') + ', ' + format(r['high'], '.3f') + ']':>16} "
                             f"{cert:>10}")
        lines += ["", "T* is the characteristic time at the assumed qualities (for teams a certified lower bound: "
                  "the single-swap LP); no delta-correct method can need fewer than T* log(1/delta) sessions on "
                  "average there.", *self.notes]
        return "\n".join(lines)

    @property
    def runs_per_case(self) -> int:
        n = len(self.runs) // max(len(self.solvers) * len(self.epsilons), 1)
        return int(n)

    def __str__(self) -> str:
        return self.table()

    def to_frame(self) -> Any:
        """The summary as a pandas DataFrame."""
        import pandas as pd  # pandas is optional (the studies / plots extras)

        return pd.DataFrame(self.summary(), columns=list(_COLUMNS))

    def figure(self, path: Any = None) -> Any:
        """Sessions against delta (median with the 10-90% band), one line per solver and
        epsilon, the lower bound ``T* log(1/delta)`` dashed, the budgets dotted; log axes (one
        delta: error bars, and the bound as a bar). Saved to ``path`` when
        given; returns the matplotlib Figure."""
        import matplotlib  # matplotlib is optional (the plots extra)

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt  # matplotlib is optional (the plots extra)

        fig, ax = plt.subplots(figsize=(8.4, 4.2))
        rows = self.summary()
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        bounds = {}  # the bound depends on epsilon only: drawn once per epsilon, whatever the solvers
        for i, (name, eps) in enumerate((n, e) for n in self.solvers for e in self.epsilons):
            rs = [r for r in rows if r["solver"] == name and r["epsilon"] == eps]
            d = [r["delta"] for r in rs]
            c = colors[i % len(colors)]
            stops = [[math.inf if r["stop"][j] is None else r["stop"][j] for r in self.runs
                      if r["solver"] == name and r["epsilon"] == eps] for j in range(len(self.deltas))]
            lo = [np.percentile(s, 10) for s in stops]
            hi = [np.percentile(s, 90) for s in stops]
            med = [r["median"] for r in rs]
            bounds.setdefault(eps, (list(d), [r["T_star_log"] for r in rs]))
            if len(d) > 1:
                ax.fill_between(d, lo, hi, color=c, alpha=0.15, linewidth=0)
                ax.plot(d, med, "o-", color=c, label=f"{name}, epsilon {eps:g}")
            else:  # one delta: the band as an error bar, the series side by side (log axis)
                n_series = len(self.solvers) * len(self.epsilons)
                d = [x * 1.12 ** (i - (n_series - 1) / 2.0) for x in d]
                ax.errorbar(d, med, yerr=[[m - a for m, a in zip(med, lo)], [b - m for m, b in zip(med, hi)]],
                            fmt="o", color=c, capsize=5, label=f"{name}, epsilon {eps:g} (10-90%)")
        grays = ["0.15", "0.45", "0.65", "0.3", "0.55"]
        for k, (eps, (d, tl)) in enumerate(bounds.items()):
            g = grays[k % len(grays)]
            if len(d) > 1:
                ax.plot(d, tl, "--", color=g, linewidth=1, label=f"T* log(1/delta), epsilon {eps:g}")
            else:  # the bound as a bar-shaped marker
                ax.plot(d, tl, "_", color=g, markersize=22, markeredgewidth=2, label=f"T* log(1/delta), epsilon {eps:g}")
        for k, b in enumerate(self.budgets):
            ax.axhline(b, color="0.4", linestyle=":", linewidth=1, label="budgets" if k == 0 else None)
            ax.annotate(f"budget {b:,}", (0.0, b), xycoords=("axes fraction", "data"), xytext=(4, 3),
                        textcoords="offset points", ha="left", va="bottom", fontsize=8, color="0.3")
        ax.set_xscale("log")
        if len(self.deltas) == 1:
            ax.set_xlim(self.deltas[0] / 4.0, min(self.deltas[0] * 4.0, 1.0))
        if len(self.deltas) <= 8:  # the deltas planned, as written
            from matplotlib.ticker import NullFormatter  # matplotlib is optional (the plots extra)

            ax.set_xticks(list(self.deltas), [f"{x:g}" for x in self.deltas])
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale("log")
        ax.set_xlabel("delta (error probability)")
        ax.set_ylabel("sessions to the stop")
        ax.set_title("Sessions needed (median, 10-90% band) against delta")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig


def _fmt_n(x: float, digits: int = 0) -> str:
    if not math.isfinite(x):
        return "inf" if x > 0 else "nan"
    return f"{x:,.{digits}f}"


def _fmt_list(v: Sequence[float]) -> str:
    return "[" + ", ".join(f"{x:g}" for x in v) + "]"


def _instance(qualities: np.ndarray, team_size: int | None, noise_sd: float, known_noise: bool, rng: Any) -> Any:
    if team_size is None:
        env = GaussianArms(qualities, sigma=noise_sd, rng=rng)
        if not known_noise:
            env.noise = type(env.noise)(kind="gaussian", sigma=None)
        return env
    return FullBandit(qualities, k=team_size, noise="gaussian", sigma=noise_sd, noise_level="observation",
                      noise_known=known_noise, rng=rng)


def _T_star(env: Any, team_size: int | None, epsilon: float, noise_sd: float) -> float:
    """The characteristic time at the assumed instance (for teams the certified single-swap LP
    lower bound of :func:`~combex.identification.team_T_star_lower_bound`)."""
    try:
        if team_size is None:
            return float(bandit_characteristic_time(env.means(), sigma=noise_sd, epsilon=epsilon).T_star)
        t, _ = team_T_star_lower_bound(env, epsilon=epsilon, sigma=noise_sd, method="lp")
        return float(t)
    except Exception:  # noqa: BLE001 - the yardstick is a display aid; the plan stands without it
        return math.nan


def _one_run(args: tuple) -> dict[str, Any]:
    (name, params, eps, deltas, budgets, qualities, team_size, noise_sd, known_noise, seed, max_sessions) = args

    env = _instance(qualities, team_size, noise_sd, known_noise, rng=np.random.default_rng([seed, 0]))
    solver = get_solver(name)(delta=min(deltas), epsilon=eps, **params)
    stop: list[int | None] = [None] * len(deltas)
    correct: list[bool] = [False] * len(deltas)
    at_budget: list[bool | None] = [None] * len(budgets)
    order = sorted(range(len(deltas)), key=lambda j: -deltas[j])  # largest delta stops first

    def look(exp: Any) -> None:
        t = exp.samples
        for j, b in enumerate(budgets):
            if at_budget[j] is None and t >= b:
                at_budget[j] = bool(env.is_correct(exp.answer, eps))
        for j in order:
            if stop[j] is None and deltas[j] != min(deltas) and exp.would_stop(deltas[j]):
                stop[j] = int(t)
                correct[j] = bool(env.is_correct(exp.answer, eps))

    r = solver.run(env, rng=np.random.default_rng([seed, 1]), budget=max_sessions, callback=look)
    ok = bool(env.is_correct(r.answer, eps))
    for j, d in enumerate(deltas):
        if stop[j] is None and r.status == "identified":  # the smallest delta, and any not seen before
            stop[j], correct[j] = int(r.samples), ok
    for j in range(len(budgets)):
        if at_budget[j] is None:
            at_budget[j] = ok
    return {"solver": name, "epsilon": eps, "seed": seed, "stop": stop, "correct": correct, "at_budget": at_budget,
            "samples": int(r.samples)}


def plan(
    *,
    workers: Any = 12,
    team_size: int | None = 4,
    qualities: Any = None,
    gap: float | None = None,
    noise_sd: float = 10.0,
    score_range: tuple[float, float] = (0.0, 100.0),
    delta: float = 0.1,
    epsilon: float = 5.0,
    deltas: Sequence[float] | None = None,
    epsilons: Sequence[float] | None = None,
    budgets: Sequence[int] = (),
    solvers: Sequence[str] = ("top-two",),
    solver_params: dict[str, dict[str, Any]] | None = None,
    known_noise: bool = False,
    runs: int = 20,
    max_sessions: int = 100_000,
    jobs: int = 1,
    rng: Any = 0,
) -> StudyPlan:
    """Simulate a study before running it: sessions needed, against the lower bound, and the
    error at fixed budgets (module docstring).

    Parameters
    ----------
    workers : int or list of str
        The candidate workers (their number, or their names).
    team_size : int or None, default 4
        Members of a team (one team per session, its score observed); None: one worker per
        session (best-arm identification).
    qualities : array of shape (n_workers,), optional
        Assumed contribution of each worker to a session's score. Default: from ``gap``.
    gap : float, optional
        A plausible gap between the best team and the next: the hardest instance with that gap
        (the best ``team_size`` workers at one quality, every other worker ``gap`` below it, so
        every single swap costs ``gap``). Give ``qualities`` or ``gap``; neither: ``gap = epsilon``.
    noise_sd : float, default 10
        Assumed standard deviation of a session's score around the sum of its members' qualities.
    score_range : (low, high), default (0, 100)
        Range of a session's score (places the assumed qualities inside it when built from ``gap``).
    delta, epsilon : float
        The study's error probability and tolerance (a team is good when its expected score is
        within epsilon of the best).
    deltas, epsilons : sequences, optional
        Grids for the table and the figure (default: ``delta / 2, delta, 2 delta`` capped below 1,
        and ``epsilon / 2, epsilon, 2 epsilon``).
    budgets : sequence of int
        Fixed numbers of sessions at which to report the error of the recommendation.
    solvers : sequence of str
        Candidate solvers (GLR solvers with ``delta_achieved``: ``top-two``, ``fw-sampling``,
        ``lingame`` ...).
    solver_params : dict, optional
        Extra settings per solver name.
    known_noise : bool, default False
        Simulate studies that declare ``noise_sd`` (the known-variance rule) instead of
        estimating it (the default of a study).
    runs : int, default 20
        Simulated studies per solver and epsilon (common random numbers across solvers).
    max_sessions : int
        A run that has not stopped by then counts as not stopping (``inf``).
    jobs : int, default 1
        Worker processes.
    rng : int
        Root seed.

    Returns
    -------
    StudyPlan
        ``print(plan)`` shows the table; ``plan.figure(path)`` the figure.
    """
    owner = "plan"
    names = list(workers) if not isinstance(workers, (int, np.integer)) else None
    n = len(names) if names is not None else check_int(workers, "workers", owner=owner, low=2)
    if team_size is not None:
        team_size = check_int(team_size, "team_size", owner=owner, low=1, high=n - 1)
    noise_sd = check_float(noise_sd, "noise_sd", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)
    runs = check_int(runs, "runs", owner=owner, low=1)
    jobs = check_int(jobs, "jobs", owner=owner, low=1)
    max_sessions = check_int(max_sessions, "max_sessions", owner=owner, low=1)
    try:
        lo_s, hi_s = (float(v) for v in score_range)
    except (TypeError, ValueError):
        raise param_error("score_range", owner, "a pair (low, high)", score_range) from None
    if not lo_s < hi_s:
        raise param_error("score_range", owner, "a pair with low < high", score_range)
    k = team_size or 1
    if qualities is not None:
        q = np.asarray(qualities, dtype=np.float64).reshape(-1)
        if q.size != n or not np.all(np.isfinite(q)):
            raise param_error("qualities", owner, f"{n} finite numbers (one per worker)", qualities)
    else:
        g = epsilon if gap is None else check_float(gap, "gap", owner=owner, low=0.0, closed="neither")
        if g <= 0:
            raise param_error("gap", owner, "a positive gap (or qualities, or epsilon > 0)", gap)
        top = (lo_s + 0.6 * (hi_s - lo_s)) / k
        q = np.full(n, top - g)
        q[:k] = top
    deltas = tuple(sorted({float(delta / 2), float(delta), float(min(2 * delta, 0.5))}, reverse=True)) \
        if deltas is None else tuple(check_probability(d, "deltas", owner=owner) for d in deltas)
    epsilons = (tuple(sorted({epsilon / 2, epsilon, 2 * epsilon})) if epsilon > 0 else (0.0,)) \
        if epsilons is None else tuple(check_float(e, "epsilons", owner=owner, low=0.0) for e in epsilons)
    budgets = tuple(check_int(b, "budgets", owner=owner, low=1) for b in budgets)
    solvers = tuple(str(s) for s in solvers)

    params = dict(solver_params or {})
    for name in solvers:
        cls = get_solver(name)
        if getattr(cls, "contract", "") != "pac" or not getattr(cls, "eager_tells", False):
            raise param_error("solvers", owner, "GLR solvers that report delta_achieved ('top-two', 'fw-sampling', "
                              "'track-and-stop', 'lingame', ...)", name)
    root = np.random.SeedSequence(check_int(rng, "rng", owner=owner, low=0))
    seeds = [int(s.generate_state(1)[0]) for s in root.spawn(runs)]
    tasks = [(name, params.get(name, {}), eps, deltas, budgets, q, team_size, noise_sd, known_noise, seed, max_sessions)
             for name in solvers for eps in epsilons for seed in seeds]
    t0 = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            out = list(pool.map(_one_run, tasks, chunksize=max(1, len(tasks) // (4 * jobs))))
    else:
        out = [_one_run(t) for t in tasks]
    env = _instance(q, team_size, noise_sd, True, rng=0)
    T = {eps: _T_star(env, team_size, eps, noise_sd) for eps in epsilons}
    setting = {"n_workers": n, "workers": names, "team_size": team_size, "qualities": q.tolist(),
               "noise_sd": noise_sd, "score_range": (lo_s, hi_s), "known_noise": known_noise, "delta": float(delta),
               "epsilon": float(epsilon)}
    notes = []
    if not known_noise:
        notes.append("The simulated studies estimate the noise level (a study's default); with the noise declared "
                     "they would need fewer sessions (known_noise=True; --known-noise from a shell).")
    return StudyPlan(setting=setting, runs=out, deltas=deltas, epsilons=epsilons, budgets=budgets, solvers=solvers,
                     T_star=T, seconds=time.perf_counter() - t0, notes=notes)


def _cmd(args: Any) -> int:
    def floats(text: str | None, option: str) -> tuple[float, ...] | None:
        if text is None:
            return None
        try:
            return tuple(float(x) for x in text.split(",") if x.strip())
        except ValueError:
            raise InvalidParameterError(f"The {option} option takes comma-separated numbers. Got {text!r} instead.") \
                from None

    workers: Any = args.workers
    if workers is not None and not workers.strip().isdigit():
        workers = [w.strip() for w in workers.split(",") if w.strip()]
    elif workers is not None:
        workers = int(workers)
    budgets = floats(args.budget, "--budget") or ()
    if any(b != int(b) or b < 1 for b in budgets):
        raise InvalidParameterError(f"The --budget option takes positive whole numbers of sessions. Got {args.budget!r}.")
    sr = floats(args.score_range, "--score-range")
    if sr is not None and len(sr) != 2:
        raise InvalidParameterError(f"The --score-range option takes LOW,HIGH. Got {args.score_range!r} instead.")
    p = plan(workers=workers, team_size=None if args.team_size == 0 else args.team_size,
             qualities=floats(args.qualities, "--qualities"), gap=args.gap, noise_sd=args.noise_sd,
             score_range=sr or (0.0, 100.0), delta=args.delta, epsilon=args.epsilon,
             deltas=floats(args.deltas, "--deltas"), epsilons=floats(args.epsilons, "--epsilons"),
             budgets=tuple(int(b) for b in budgets), solvers=tuple(s.strip() for s in args.solver.split(",")),
             known_noise=args.known_noise, runs=args.runs, jobs=args.jobs, rng=args.seed)
    if args.json:
        print(json.dumps({"setting": p.setting, "summary": p.summary(), "budgets": p.budget_errors(),
                          "seconds": p.seconds}, default=float))
    else:
        print(p.table())
    if args.figure:
        p.figure(args.figure)
        if not args.json:
            print(f"figure written to {args.figure}")
    return 0


def add_plan_command(sub: Any) -> None:
    """Register ``combex plan`` on the ``combex`` parser's subparsers."""
    p = sub.add_parser(
        "plan", help="plan a study: sessions needed against delta and epsilon, error at fixed budgets",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Simulate a team-selection study under assumed worker qualities (or a plausible gap) and "
                    "noise before recruiting anyone (combex.studies.plan).",
        epilog="Examples:\n"
               "  combex plan --workers 12 --team-size 4 --gap 2 --noise-sd 10 --delta 0.1 --epsilon 5 "
               "--budget 100,150,300\n"
               "  combex plan --workers Ana,Ben,Cleo,Dev,Eli,Fay --team-size 2 --qualities 30,28,25,20,18,10 "
               "--noise-sd 8 --figure plan.png",
    )
    p.add_argument("--workers", default="12", help="number of workers, or their names (comma-separated)")
    p.add_argument("--team-size", type=int, default=4, help="members per team (0: one worker per session)")
    p.add_argument("--qualities", default=None, help="assumed contribution of each worker to a score (comma-separated)")
    p.add_argument("--gap", type=float, default=None, help="a plausible gap between the best team and the next")
    p.add_argument("--noise-sd", type=float, default=10.0, help="assumed sd of a session's score (default 10)")
    p.add_argument("--score-range", default=None, help="LOW,HIGH of a session's score (default 0,100)")
    p.add_argument("--delta", type=float, default=0.1)
    p.add_argument("--epsilon", type=float, default=5.0)
    p.add_argument("--deltas", default=None, help="grid of deltas (default delta/2, delta, 2 delta)")
    p.add_argument("--epsilons", default=None, help="grid of epsilons (default epsilon/2, epsilon, 2 epsilon)")
    p.add_argument("--budget", default=None, help="fixed budgets in sessions, comma-separated")
    p.add_argument("--solver", default="top-two", help="candidate solvers, comma-separated (default top-two)")
    p.add_argument("--known-noise", action="store_true", help="studies that declare --noise-sd instead of estimating it")
    p.add_argument("--runs", type=int, default=20, help="simulated studies per solver and epsilon (default 20)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--figure", default=None, help="write the figure (sessions against delta) to this file")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(func=_cmd)
