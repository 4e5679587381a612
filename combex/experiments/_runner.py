"""Repeated seeded runs of one solver on one named instance.

Seeding (SPEC 7): one root seed; ``SeedSequence(root).spawn(runs)`` gives one child per
run; each child spawns three generators: the instance's (random instances such as
``kuroki-synthetic`` are redrawn per run, as the papers average over realizations), the
environment's noise, and the algorithm's. Two solvers run with the same root seed therefore
see the same instances and the same noise streams (common random numbers). Results do not
depend on the number of jobs.
"""

from __future__ import annotations

import difflib
import inspect
import math
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .._validation import check_float, check_int
from ..exceptions import InvalidParameterError
from ..solvers import Algorithm, Solver, get_solver
from ._backends import execute
from ._instances import check_instance_params, make_instance

__all__ = ["run_once", "run_many", "summarize", "run_generators", "run_seed_sequence", "simulate", "ProgressLine"]


def run_seed_sequence(root_seed: int, index: int) -> np.random.SeedSequence:
    """The seed sequence of replicate ``index``: ``SeedSequence(root_seed).spawn(m)[index]``
    for any ``m > index`` (built directly, so it does not depend on how many runs exist)."""
    return np.random.SeedSequence(int(root_seed), spawn_key=(int(index),))


def run_generators(root_seed: int, index: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The three generators of replicate ``index``: (instance, environment noise, solver).

    The same for every solver and every backend: solvers are compared on common random
    numbers.
    """
    inst, env, alg = (np.random.default_rng(s) for s in run_seed_sequence(root_seed, index).spawn(3))
    return inst, env, alg


def _rngs(root_seed: int, index: int, runs: int | None = None) -> tuple[np.random.Generator, ...]:
    return run_generators(root_seed, index)


class ProgressLine:
    """A ``callback`` for :meth:`Solver.run` that writes one line to stderr at most every
    ``every`` seconds: samples so far, the stopping statistic against its threshold and
    the current leader (:meth:`Exploration.progress`), so a long run is never silent."""

    def __init__(self, desc: str, *, every: float = 2.0, stream: Any = None) -> None:
        self.desc = desc
        self.every = float(every)
        self.stream = stream if stream is not None else sys.stderr
        self._last = time.perf_counter()
        self.lines = 0

    @staticmethod
    def format(desc: str, p: Mapping[str, Any]) -> str:
        leader = p.get("leader")
        if isinstance(leader, list) and len(leader) > 12:
            leader = f"{leader[:12]}..."
        return (f"[{desc}] samples={p['samples']:,} statistic={p['statistic']:.6g} "
                f"(stops at <= {p['threshold']:.6g}) leader={leader}")

    def __call__(self, exp: Any) -> None:
        now = time.perf_counter()
        if now - self._last < self.every:
            return
        self._last = now
        self.stream.write(self.format(self.desc, exp.progress()) + "\n")
        self.stream.flush()
        self.lines += 1


def simulate(solver: Solver, env: Any, *, rng: Any = None, budget: int | None = None,
             progress: bool | None = False, desc: str | None = None, every: float = 2.0,
             time_limit: float | None = None) -> Any:
    """``solver.run(env, rng=rng, budget=budget)``, with a progress line on stderr.

    Without progress or time limit this is exactly ``solver.run``. With progress
    (``None``: when stderr is a terminal), the run gets a :class:`ProgressLine` callback
    (every ``every`` seconds: samples, stopping statistic vs threshold, leader); the
    callback only reads the state, so the result is the same. ``time_limit`` (seconds)
    ends the run at the first check after it with status ``"budget_exhausted"``. Solvers
    whose ``run`` takes no ``callback`` run as is.
    """
    if progress is None:
        progress = sys.stderr.isatty()
    if time_limit is not None:
        time_limit = check_float(time_limit, "time_limit", owner="simulate", low=0.0, closed="neither")
    if (not progress and time_limit is None) or "callback" not in inspect.signature(type(solver).run).parameters:
        return solver.run(env, rng=rng, budget=budget)
    line = ProgressLine(desc or solver.name, every=every) if progress else None
    t0 = time.perf_counter()

    def callback(exp: Any) -> None:
        if line is not None:
            line(exp)
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            exp.stop("budget_exhausted", f"time limit of {time_limit:g} s reached")

    return solver.run(env, rng=rng, budget=budget, callback=callback)


def run_once(
    solver: Solver,
    instance: str,
    params: Mapping[str, Any],
    *,
    root_seed: int,
    index: int,
    runs: int | None = None,
    budget: int | None = None,
    epsilon: float = 0.0,
    progress: bool | None = False,
    time_limit: float | None = None,
) -> dict[str, Any]:
    """One seeded run; returns the ``runs`` record of the CLI's JSON schema.

    The instance, the environment's noise and the solver get the three generators of
    :func:`run_generators` ``(root_seed, index)``; ``runs`` is accepted for backward
    compatibility and ignored (the seeds of run ``index`` do not depend on it).
    """
    inst_rng, env_rng, alg_rng = run_generators(root_seed, index)
    env = make_instance(instance, rng=inst_rng, **dict(params))
    env.reset(env_rng)
    if _is_regret_solver(solver):
        # The "regret" contract: one run of env.horizon steps; no answer to score.
        out = solver.run(env, None, rng=alg_rng)
        rec = out.to_dict()
        return {
            "seed": root_seed, "run": index, "answer": rec["last_arm"], "correct": None, "status": "horizon",
            "samples": rec["steps"], "rounds": rec["steps"], "wall_seconds": rec["wall_seconds"], "pulls": [],
            "certificate": None, "regret": rec["regret"], "preprocess_seconds": rec["preprocess_seconds"],
            "online_seconds": rec["online_seconds"], "index_maintenance_seconds": rec["index_maintenance_seconds"],
        }
    res = simulate(solver, env, rng=alg_rng, budget=budget, progress=progress, time_limit=time_limit)
    rec = res.to_dict()
    rec = {
        "seed": root_seed,
        "run": index,
        "answer": rec["answer"],
        "correct": bool(env.is_correct(res.answer, epsilon)),
        "status": res.status,
        "samples": res.samples,
        "rounds": res.rounds,
        "wall_seconds": res.wall_seconds,
        "pulls": rec["pulls"],
        "certificate": rec["certificate"],
    }
    for key in ("lower_bound_ratio", "lower_bound_ratio_kind", "indistinguishable"):
        if key in res.info:
            rec[key] = res.info[key]
    return rec


def lower_bound_text(info: Mapping[str, Any]) -> str:
    """A result's (or run record's) ``lower_bound_ratio`` for printing: ``"<= 1,843.7"``
    when the yardstick is a certified lower bound of T* (``lower_bound_ratio_kind`` says
    "upper bound of the ratio"), ``"6.9"`` when it is T* itself, ``""`` when not reported."""
    r = info.get("lower_bound_ratio")
    if not isinstance(r, (int, float)) or not math.isfinite(r):
        return ""
    rel = "<= " if "upper bound" in str(info.get("lower_bound_ratio_kind", "")) else ""
    return f"{rel}{r:,.1f}"


def _is_regret_solver(solver: Any) -> bool:
    """Whether ``solver`` follows the regret contract (its class declares ``contract``)."""
    return getattr(solver, "contract", "pac") == "regret"


def _tolerance(solver: Any) -> float:
    """The scoring tolerance: a PAC solver's own; 0 for regret policies (nothing to score)."""
    return 0.0 if _is_regret_solver(solver) else float(solver.tolerance)


@dataclass(frozen=True)
class RunTask:
    """One run of a sweep: everything a worker needs (picklable).

    ``solver`` is a :class:`Solver` object or a ``(name, settings)`` pair built in the
    worker (so TOML sweeps ship names, not objects).
    """

    solver: Any
    instance: str
    params: Mapping[str, Any]
    root_seed: int
    index: int
    budget: int | None = None
    epsilon: float | None = None
    progress: bool | None = False
    time_limit: float | None = None

    def build_solver(self) -> Solver:
        """The solver object; a named solver that takes ``K`` gets the instance's ``K``
        (Best-K instances) unless its settings give one."""
        if isinstance(self.solver, Algorithm):
            return self.solver
        name, settings = self.solver
        settings = dict(settings)
        if "K" in self.params and "K" not in settings and _accepts(name, "K"):
            settings["K"] = self.params["K"]
        return _cached_solver(name, _freeze(settings))


def _accepts(name: str, setting: str) -> bool:
    return setting in inspect.signature(get_solver(name).__init__).parameters


_SOLVER_CACHE: dict[Any, Solver] = {}


def _freeze(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return ("__seq__",) + tuple(_freeze(v) for v in obj)
    return obj


def _thaw(obj: Any) -> Any:
    if isinstance(obj, tuple):
        if obj and obj[0] == "__seq__":
            return [_thaw(v) for v in obj[1:]]
        return {k: _thaw(v) for k, v in obj}
    return obj


def _cached_solver(name: str, frozen: Any) -> Solver:
    key = (name, frozen)
    if key not in _SOLVER_CACHE:
        _SOLVER_CACHE[key] = build_solver(name, _thaw(frozen))
    return _SOLVER_CACHE[key]


def build_solver(name: str, settings: Mapping[str, Any] | None = None) -> Solver:
    """``get_solver(name)(**settings)`` with a clear error on unknown settings."""
    cls = get_solver(name)
    settings = dict(settings or {})
    sig = inspect.signature(cls.__init__)
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    renamed = getattr(cls, "renamed_params", {})  # deprecated aliases: the constructor warns and maps them
    unknown = [k for k in settings if (k not in sig.parameters and k not in renamed) or k == "self"]
    if unknown and not accepts_any:
        known = [p for p in sig.parameters if p != "self"]
        close = difflib.get_close_matches(unknown[0], known, n=1)
        close = close or [k for k in known if k.lower() == unknown[0].lower()]
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(
            f"Solver {name!r} has no setting {unknown[0]!r}.{hint} Its settings: {', '.join(known)}."
        )
    try:
        return cls(**settings)
    except TypeError as exc:
        raise InvalidParameterError(f"Bad settings for solver {name!r}: {exc}.") from None


def execute_task(task: RunTask) -> dict[str, Any]:
    """Run one :class:`RunTask` (module level, so process and Dask workers can call it)."""
    solver = task.build_solver()
    eps = _tolerance(solver) if task.epsilon is None else float(task.epsilon)
    return run_once(solver, task.instance, task.params, root_seed=task.root_seed, index=task.index,
                    budget=task.budget, epsilon=eps, progress=task.progress, time_limit=task.time_limit)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Summary of run records (the ``summary`` of ``combex run --json``): mean and median
    samples, error rate over the scored runs, median wall seconds."""
    samples = [r["samples"] for r in records]
    walls = [r["wall_seconds"] for r in records]
    scored = [r["correct"] for r in records if r["correct"] is not None]
    out = {
        "mean_samples": float(np.mean(samples)) if samples else None,
        "median_samples": float(statistics.median(samples)) if samples else None,
        "std_samples": float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0,
        # Regret runs (correct=None) have no answer to score.
        "error_rate": float(np.mean([not c for c in scored])) if scored else None,
        "median_wall_seconds": float(statistics.median(walls)) if walls else None,
        "identified_rate": float(np.mean([r["status"] == "identified" for r in records])) if records else None,
    }
    regrets = [r["regret"] for r in records if "regret" in r]
    if regrets:
        out["mean_regret"] = float(np.mean(regrets))
        out["std_regret"] = float(np.std(regrets, ddof=1)) if len(regrets) > 1 else 0.0
        for key in ("online_seconds", "preprocess_seconds"):  # absent in older results files
            vals = [r[key] for r in records if r.get(key) is not None]
            if vals:
                out[f"mean_{key}"] = float(np.mean(vals))
    return out


def run_many(
    solver: Solver | str,
    instance: str,
    params: Mapping[str, Any] | None = None,
    *,
    runs: int = 1,
    seed: int = 0,
    jobs: int = 1,
    budget: int | None = None,
    epsilon_correct: float | None = None,
    solver_params: Mapping[str, Any] | None = None,
    backend: str | None = None,
    scheduler: Any = None,
    progress: bool | None = False,
    time_limit: float | None = None,
    on_result: Callable[[int, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run ``solver`` ``runs`` times on ``instance``; return the CLI's JSON document.

    Parameters
    ----------
    solver : Solver or str
        A solver object, or a registry name built with ``solver_params``.
    instance : str
        A registered instance name (:func:`list_instances`).
    params : mapping, optional
        Instance parameters.
    runs, seed : int
        Number of replicates and the root seed (run ``i`` uses
        :func:`run_generators` ``(seed, i)``).
    jobs, backend, scheduler
        Where to run (see :func:`combex.experiments.execute`); the records do not depend
        on them, wall times aside.
    budget : int, optional
        Maximum samples per run.
    epsilon_correct : float, optional
        A run is "correct" when its answer is epsilon-optimal (default: the solver's PAC
        tolerance, :attr:`Solver.tolerance`).
    progress : bool or None
        tqdm bar over the runs (None: when stderr is a terminal); serial runs also print
        progress lines inside each run (:class:`ProgressLine`).
    time_limit : float, optional
        Seconds per run; a run past it ends at its next check with status
        ``"budget_exhausted"``.
    on_result : callable, optional
        ``on_result(index, record)`` as each run finishes (completion order), e.g. to
        write it out at once.

    Returns
    -------
    dict
        ``{"solver", "solver_params", "instance", "params", "seed", "runs": [...],
        "summary": {...}, "total_wall_seconds", "backend", "jobs"}``.
    """
    if isinstance(solver, str):
        solver = build_solver(solver, solver_params)
    runs = check_int(runs, "runs", owner="run_many", low=1)
    seed = check_int(seed, "seed", owner="run_many", low=0)
    jobs = check_int(jobs, "jobs", owner="run_many", low=1)
    eps = epsilon_correct if epsilon_correct is not None else _tolerance(solver)
    eps = check_float(eps, "epsilon_correct", owner="run_many", low=0.0)
    if budget is not None:
        budget = check_int(budget, "budget", owner="run_many", low=1)
    params = dict(params or {})
    check_instance_params(instance, params)
    if backend is None:
        backend = "dask" if scheduler is not None else ("processes" if jobs > 1 and runs > 1 else "serial")
    # in-run progress lines (samples, statistic vs threshold, leader) for serial runs
    in_run = progress if backend == "serial" else False
    if time_limit is not None:
        time_limit = check_float(time_limit, "time_limit", owner="run_many", low=0.0, closed="neither")
    tasks = [RunTask(solver, instance, params, seed, i, budget, eps, in_run, time_limit) for i in range(runs)]
    t0 = time.perf_counter()
    records = execute(execute_task, tasks, backend=backend, jobs=jobs, scheduler=scheduler,
                      progress=progress, desc=f"{solver.name} on {instance}", on_result=on_result)
    return {
        "solver": solver.name,
        "solver_params": solver.json_params(),
        "instance": instance,
        "params": params,
        "seed": seed,
        "runs": records,
        "summary": summarize(records),
        "total_wall_seconds": time.perf_counter() - t0,
        "backend": backend,
        "jobs": jobs,
    }
