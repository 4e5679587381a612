"""Repeated seeded runs of one solver on one named instance.

Seeding (SPEC 7): one root seed; ``SeedSequence(root).spawn(runs)`` gives one child per
run; each child spawns three generators: the instance's (random instances such as
``kuroki-synthetic`` are redrawn per run, as the papers average over realizations), the
environment's noise, and the algorithm's. Two solvers run with the same root seed therefore
see the same instances and the same noise streams (common random numbers). Results do not
depend on the number of jobs.
"""

from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Mapping

import numpy as np

from .._validation import check_float, check_int
from ..solvers._base import Solver, get_solver
from ._instances import make_instance

__all__ = ["run_once", "run_many", "summarize"]


def _rngs(root_seed: int, index: int, runs: int) -> tuple[np.random.Generator, ...]:
    child = np.random.SeedSequence(root_seed).spawn(runs)[index]
    return tuple(np.random.default_rng(s) for s in child.spawn(3))


def run_once(
    solver: Solver,
    instance: str,
    params: Mapping[str, Any],
    *,
    root_seed: int,
    index: int,
    runs: int,
    budget: int | None = None,
    epsilon: float = 0.0,
) -> dict[str, Any]:
    """One seeded run; returns the ``runs`` record of the CLI's JSON schema."""
    inst_rng, env_rng, alg_rng = _rngs(root_seed, index, runs)
    env = make_instance(instance, rng=inst_rng, **dict(params))
    env.reset(env_rng)
    res = solver.run(env, rng=alg_rng, budget=budget)
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
    for key in ("lower_bound_ratio",):
        if key in res.info:
            rec[key] = res.info[key]
    return rec


def _run_index(args: tuple[Any, ...]) -> dict[str, Any]:
    solver, instance, params, root, i, runs, budget, eps = args
    return run_once(solver, instance, params, root_seed=root, index=i, runs=runs, budget=budget, epsilon=eps)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    samples = [r["samples"] for r in records]
    walls = [r["wall_seconds"] for r in records]
    return {
        "mean_samples": float(np.mean(samples)) if samples else None,
        "median_samples": float(statistics.median(samples)) if samples else None,
        "std_samples": float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0,
        "error_rate": float(np.mean([not r["correct"] for r in records])) if records else None,
        "median_wall_seconds": float(statistics.median(walls)) if walls else None,
        "identified_rate": float(np.mean([r["status"] == "identified" for r in records])) if records else None,
    }


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
) -> dict[str, Any]:
    """Run ``solver`` ``runs`` times on ``instance``; return the CLI's JSON document.

    ``epsilon_correct``: a run is "correct" when its answer is epsilon-optimal (default: the
    solver's PAC tolerance, :attr:`Solver.tolerance`).
    """
    if isinstance(solver, str):
        solver = get_solver(solver)(**dict(solver_params or {}))
    runs = check_int(runs, "runs", owner="run_many", low=1)
    seed = check_int(seed, "seed", owner="run_many", low=0)
    jobs = check_int(jobs, "jobs", owner="run_many", low=1)
    eps = epsilon_correct if epsilon_correct is not None else float(solver.tolerance)
    eps = check_float(eps, "epsilon_correct", owner="run_many", low=0.0)
    params = dict(params or {})
    tasks = [(solver, instance, params, seed, i, runs, budget, eps) for i in range(runs)]
    t0 = time.perf_counter()
    if jobs == 1 or runs == 1:
        records = [_run_index(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, os.cpu_count() or 1, runs)) as pool:
            records = list(pool.map(_run_index, tasks))
    return {
        "solver": solver.name,
        "solver_params": solver.json_params(),
        "instance": instance,
        "params": params,
        "seed": seed,
        "runs": records,
        "summary": summarize(records),
        "total_wall_seconds": time.perf_counter() - t0,
    }
