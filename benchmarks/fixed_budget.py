"""Fixed budget: how often each algorithm returns an epsilon-good team within B evaluations.

Usage::

    python benchmarks/fixed_budget.py                      # 200 seeds, both instances (~30 min on 2 busy cores)
    python benchmarks/fixed_budget.py --seeds 20           # a quick look
    python benchmarks/fixed_budget.py --jobs 2 --out /tmp/fb.csv --figures docs/figures
    python benchmarks/fixed_budget.py --table /tmp/fb.csv --figures docs/figures --no-profile   # redraw only
    python benchmarks/fixed_budget.py --profile-only       # top-two's allocation and design at small budgets

Instances (both full-bandit: only a team's total score is observed):

* ``lab-teams``: 12 workers, teams of 4 (495 teams; best 74, second 72), one session per
  evaluation with noise N(0, 10^2) shared by the members; epsilon = 5; budgets 100, 150, 300
  sessions.
* ``crowd`` ITMANAGE (the quiz data of Li et al. 2017): 36 workers, teams of 10 (about 2.5e8
  teams), one random question per evaluation; epsilon = 0.5; budgets 1000, 2000, 4000: the
  range over which uniform allocation's error falls from most runs to a few percent (measured
  with 20 seeds: 0.70 at 1000, 0.10 at 3000, 0 at 10000; below 1000 every algorithm fails
  almost always, above 4000 almost never), so the rows separate the algorithms.

Algorithms: ``top-two`` with its anytime recommendation at the budget
(``get_solver("top-two")(delta=0.1, epsilon=eps).run(env, budget=B)``; on the lab case with
the noise scale declared, ``known_noise=True``: the recommendation at the budget does not
depend on the threshold, only an early stop does), ``top-two-uv`` (the lab case as a real
study has it: the noise scale undeclared, top-two's unknown-variance rule), ``uniform-allocation`` (the budget spread
evenly over a fixed design, least squares, argmax), ``od-linbai`` (Yang & Tan 2022, over the
495 enumerated lab teams; ITMANAGE is too large to enumerate) and ``csar-full-bandit``
(combex's full-bandit adaptation of CSAR). Every algorithm sees the same noise on seed i
(common random numbers: :func:`combex.experiments.run_generators` ``(seed, i)``).

Printed per row: errors / seeds, the error rate with its two-sided 95% Clopper-Pearson
interval, the mean proven error bound when the algorithm has one (``info["error_bound"]``,
>= 1 is vacuous), the mean wall time per run; per budget, top-two's error rate over uniform
allocation's (aim: at most 0.5). This script prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from combex.experiments import make_instance, run_generators
from combex.solvers import get_solver
from combex.testing import clopper_pearson

import _figures

INSTANCES = {
    "lab-teams": {"params": {}, "epsilon": 5.0, "budgets": (100, 150, 300)},
    "crowd": {"params": {"dataset": "ITMANAGE", "k": 10}, "epsilon": 0.5, "budgets": (1000, 2000, 4000)},
}
SOLVERS = ("top-two", "top-two-uv", "uniform-allocation", "od-linbai", "csar-full-bandit")
# 2.5e8 teams: OD-LinBAI enumerates them; the quiz data's noise model is declared (scores in [0, 1])
SKIP = {("crowd", "od-linbai"), ("crowd", "top-two-uv")}


def _env(instance: str, solver: str, seed: int, index: int) -> tuple[Any, np.random.Generator]:
    g_inst, g_env, g_alg = run_generators(seed, index)
    params = dict(INSTANCES[instance]["params"])
    if instance == "lab-teams" and solver == "top-two":
        params["known_noise"] = True  # the declared scale; "top-two-uv" is the same solver without it
    env = make_instance(instance, rng=g_inst, **params)
    env.reset(g_env)
    return env, g_alg


def _solver(instance: str, name: str) -> Any:
    if name in ("top-two", "top-two-uv"):
        return get_solver("top-two")(delta=0.1, epsilon=INSTANCES[instance]["epsilon"])
    return get_solver(name)()


def run_cell(instance: str, name: str, budget: int, seed: int, indices: list[int]) -> dict[str, Any]:
    """Runs ``indices`` of one (instance, solver, budget) cell: errors, bounds, wall time."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    solver = _solver(instance, name)
    eps = INSTANCES[instance]["epsilon"]
    errors, bounds, wall, samples = 0, [], 0.0, []
    for i in indices:
        env, g_alg = _env(instance, name, seed, i)
        t0 = time.perf_counter()
        res = solver.run(env, rng=g_alg, budget=budget)
        wall += time.perf_counter() - t0
        samples.append(res.samples)
        errors += not env.is_correct(res.answer, eps)
        b = res.info.get("error_bound")
        if b is not None:
            bounds.append(float(b))
    return {"errors": errors, "runs": len(indices), "bounds": bounds, "wall": wall, "samples": samples}


def measure(seeds: int, seed: int, jobs: int, instances: list[str], solvers: list[str],
            budgets: dict[str, tuple[int, ...]]) -> list[dict[str, Any]]:
    cells = [(inst, name, b) for inst in instances for b in budgets[inst] for name in solvers if (inst, name) not in SKIP]
    chunks = max(1, jobs) * 2
    parts = [list(range(seeds))[j::chunks] for j in range(chunks)]
    tasks = [(c, p, seed) for c in cells for p in parts if p]
    t0 = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            outs = list(ex.map(_task, tasks))
    else:
        outs = [_task(t) for t in tasks]
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    for (cell, _, _), out in zip(tasks, outs):
        r = rows.setdefault(cell, {"errors": 0, "runs": 0, "bounds": [], "wall": 0.0, "samples": []})
        for k in ("errors", "runs", "wall"):
            r[k] += out[k]
        r["bounds"] += out["bounds"]
        r["samples"] += out["samples"]
    print(f"(measured in {time.perf_counter() - t0:.0f} s, {jobs} job(s))")
    result = []
    for (inst, name, b), r in rows.items():
        lo, hi = clopper_pearson(r["errors"], r["runs"], level=0.975)  # two-sided 95%: 2.5% each side
        result.append({"instance": inst, "budget": b, "solver": name, "seeds": r["runs"], "errors": r["errors"],
                       "error_rate": r["errors"] / r["runs"], "ci_low": lo, "ci_high": hi,
                       "mean_bound": float(np.mean(r["bounds"])) if r["bounds"] else None,
                       "wall_per_run": r["wall"] / r["runs"],
                       "all_samples_equal_budget": all(s == b for s in r["samples"]),
                       "max_samples": max(r["samples"])})
    return result


def _task(t: tuple[tuple[str, str, int], list[int], int]) -> dict[str, Any]:
    (inst, name, b), idx, seed = t
    return run_cell(inst, name, b, seed, idx)


def print_table(rows: list[dict[str, Any]], seeds: int, seed: int) -> None:
    print(f"\nFixed budget: error rate (answer not epsilon-good), {seeds} seeds (root seed {seed}), "
          "two-sided 95% Clopper-Pearson intervals")
    head = (f"{'instance':<10} {'budget':>6} {'solver':<18} {'errors':>8} {'rate':>6} {'95% CI':>15} "
            f"{'bound':>9} {'s/run':>7}")
    print(head)
    print("-" * len(head))
    key = {s: i for i, s in enumerate(SOLVERS)}
    rows = sorted(rows, key=lambda r: (list(INSTANCES).index(r["instance"]), r["budget"], key[r["solver"]]))
    for r in rows:
        bound = "-" if r["mean_bound"] is None else f"{r['mean_bound']:.3g}"
        name = r["solver"] + ("" if r["all_samples_equal_budget"] else f" (<= {r['max_samples']})")
        print(f"{r['instance']:<10} {r['budget']:>6} {name:<18} {r['errors']:>4}/{r['seeds']:<3} "
              f"{r['error_rate']:>6.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] {bound:>9} {r['wall_per_run']:>7.3f}")
    print("\nTop-two against uniform allocation (aim: top-two's error rate at most half of uniform's)")
    for inst in INSTANCES:
        for b in sorted({r["budget"] for r in rows if r["instance"] == inst}):
            cell = {r["solver"]: r for r in rows if r["instance"] == inst and r["budget"] == b}
            for name in ("top-two", "top-two-uv"):
                if name not in cell or "uniform-allocation" not in cell:
                    continue
                tt, un = cell[name], cell["uniform-allocation"]
                if un["errors"] == 0:
                    verdict = "met (both 0)" if tt["errors"] == 0 else "missed (uniform made no error)"
                    ratio = "-"
                else:
                    q = tt["error_rate"] / un["error_rate"]
                    ratio = f"{q:.2f}"
                    verdict = "met" if q <= 0.5 else "missed"
                print(f"  {inst:<10} B={b:<5} {name:<10} {tt['error_rate']:.3f}  uniform {un['error_rate']:.3f}  "
                      f"ratio {ratio:>5}  {verdict}")


def read_table(path: str) -> list[dict[str, Any]]:
    """The rows of a table written by ``--out`` (numbers as numbers)."""
    def value(k: str, v: str) -> Any:
        if k in ("instance", "solver"):
            return v
        if v in ("True", "False"):
            return v == "True"
        if v == "":
            return None
        return int(v) if k in ("budget", "seeds", "errors", "max_samples") else float(v)

    with open(path, newline="") as fh:
        return [{k: value(k, v) for k, v in r.items()} for r in csv.DictReader(fh)]


def figures(folder: Any, rows: list[dict[str, Any]], seeds: int) -> None:
    """The results page's figure: error rate against the budget per algorithm, one panel per
    instance, with the 95% Clopper-Pearson intervals as vertical lines."""
    plt = _figures.pyplot()
    for name, pair in (("uniform-allocation", ("k", "o")), ("od-linbai", ("C4", "D")), ("csar-full-bandit", ("C2", "v"))):
        _figures.STYLE.setdefault(name, pair)  # distinct from top-two's on this page
    insts = [i for i in INSTANCES if any(r["instance"] == i for r in rows)]
    fig, axes = plt.subplots(1, len(insts), figsize=(5.2 * len(insts), 3.8), squeeze=False)
    titles = {"lab-teams": "lab case: 12 workers, teams of 4, epsilon 5",
              "crowd": "ITMANAGE: 36 workers, teams of 10, epsilon 0.5"}
    for ax, inst in zip(axes[0], insts):
        names = [n for n in SOLVERS if any(r["instance"] == inst and r["solver"] == n for r in rows)]
        for j, name in enumerate(names):
            pts = sorted((r["budget"], r["error_rate"], r["ci_low"], r["ci_high"]) for r in rows
                         if r["instance"] == inst and r["solver"] == name)
            b, e, lo, hi = (np.array(v, dtype=float) for v in zip(*pts))
            x = b * (1.0 + 0.025 * (j - (len(names) - 1) / 2))  # side by side at each budget
            st = _figures.style("top-two" if name == "top-two-uv" else name)
            ax.plot(x, e, label=name, color=st["color"], marker=st["marker"],
                    mfc="none" if name == "top-two-uv" else st["color"])
            ax.vlines(x, lo, hi, color=st["color"], lw=1, alpha=0.6)
        budgets = sorted({r["budget"] for r in rows if r["instance"] == inst})
        ax.set(xscale="log", xlabel="budget (team evaluations)", ylabel=f"error rate ({seeds} seeds, 95% CI)",
               title=titles.get(inst, inst))
        ax.set_xticks(budgets, [str(v) for v in budgets])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper right")
    fig.tight_layout()
    _figures.save(fig, folder, __file__, "error-vs-budget")


# ---------------------------------------------------------------------- allocation profile
def profile(instance: str, budget: int, seeds: int, seed: int) -> None:
    """Where top-two's evaluations go at a small budget, against uniform allocation's:
    distinct teams evaluated, share of the evaluations on the 5 most evaluated teams, mean
    true gap of the evaluated teams, per-worker evaluation counts (smallest and coefficient of
    variation), the first evaluations spent before the sampling rule adapts (top-two's
    initial basis), and errors."""
    eps = INSTANCES[instance]["epsilon"]
    print(f"\nAllocation profile on {instance}, budget {budget}, {seeds} seeds (mean over seeds)")
    print(f"  {'solver':<18} {'teams':>6} {'top-5':>6} {'gap':>6} {'min/worker':>10} {'cv/worker':>9} "
          f"{'first batch':>11} {'errors':>7}")
    for name in ("top-two", "uniform-allocation"):
        distinct, top5, gaps, wmin, wcv, first, errors = [], [], [], [], [], [], 0
        for i in range(seeds):
            env, g_alg = _env(instance, name, seed, i)
            mu = env.means()
            top = float(mu[np.asarray(env.best(), dtype=bool)].sum())
            solver = _solver(instance, name)
            exp = solver.start(env, rng=g_alg) if name == "top-two" else solver.start(env, rng=g_alg, budget=budget)
            counts: dict[bytes, int] = {}
            per_worker = np.zeros(env.n_arms)
            gap_sum = 0.0
            first_batch = None
            while not exp.done:
                batch = exp.ask().truncated(budget - exp.samples)
                if first_batch is None:
                    first_batch = batch.total
                sums = env.pull_many(batch.arms, batch.counts)
                for a, c in zip(batch.arms, batch.counts.tolist()):
                    if c:
                        k = np.packbits(a).tobytes()
                        counts[k] = counts.get(k, 0) + c
                        per_worker += c * a
                        gap_sum += c * (top - float(mu[a].sum()))
                exp.tell_batch(batch, sums)
                if exp.samples >= budget and not exp.done:
                    exp.stop("budget_exhausted")
            errors += not env.is_correct(exp.answer, eps)
            c = np.array(sorted(counts.values(), reverse=True))
            distinct.append(len(c))
            top5.append(c[:5].sum() / c.sum())
            gaps.append(gap_sum / c.sum())
            wmin.append(per_worker.min())
            wcv.append(per_worker.std() / per_worker.mean())
            first.append(first_batch or 0)
        print(f"  {name:<18} {np.mean(distinct):6.1f} {np.mean(top5):6.2f} {np.mean(gaps):6.2f} {np.mean(wmin):10.1f} "
              f"{np.mean(wcv):9.2f} {np.mean(first):11.1f} {errors:>3}/{seeds}")


def design_analysis(budgets: tuple[int, ...], seeds: int, seed: int) -> None:
    """On the lab case: ``rho(A) = B max_M ||x* - x_M||^2_{A^-1} / Delta_M^2`` over the
    epsilon-bad teams M (``A`` the pulled information matrix, normalized by the budget B; the
    least-squares error's exponent is ``B / (2 sigma^2 rho)``) for the uniform design over all
    teams, a lower bound of the best static design (cvxpy on the 60 directions binding for the
    uniform design: fewer constraints, a smaller optimum), and the designs top-two and uniform
    allocation have pulled by the budget."""
    from combex.allocations import xy_optimal_design

    env0 = make_instance("lab-teams", rng=0)
    mu, eps, sigma = env0.means(), INSTANCES["lab-teams"]["epsilon"], float(env0.sigma)
    M = np.array(list(env0.decision_class.enumerate()), dtype=float)
    v = M @ mu
    star = int(np.argmax(v))
    gaps = v[star] - v
    bad = gaps > eps + 1e-9
    Y = (M[star] - M[bad]) / gaps[bad][:, None]

    def rho(A: np.ndarray) -> float:
        return float(np.max(np.einsum("ij,jk,ik->i", Y, np.linalg.pinv(A), Y)))

    rho_u = rho(M.T @ M / len(M))
    binding = Y[np.argsort(-np.einsum("ij,jk,ik->i", Y, np.linalg.inv(M.T @ M / len(M)), Y))[:60]]
    rho_o = xy_optimal_design(M, binding, method="cvxpy").value * (1 - 1e-6)
    print(f"\nDesign analysis on lab-teams (epsilon = {eps:g}, {int(bad.sum())} epsilon-bad teams): rho of the uniform "
          f"design over all teams {rho_u:.3f}; best static design >= {rho_o:.3f}")
    for B in budgets:
        factor = math.exp(-B * (1 / rho_o - 1 / rho_u) / (2 * sigma**2))
        line = f"  B={B:<4} oracle error factor by the exponents >= {factor:.3f};"
        for name in ("top-two", "uniform-allocation"):
            vals = []
            for i in range(seeds):
                env, g_alg = _env("lab-teams", name, seed, i)
                solver = _solver("lab-teams", name)
                exp = solver.start(env, rng=g_alg) if name == "top-two" else solver.start(env, rng=g_alg, budget=B)
                A = np.zeros((M.shape[1], M.shape[1]))
                while not exp.done:
                    batch = exp.ask().truncated(B - exp.samples)
                    X = batch.arms.astype(float)
                    A += X.T @ (batch.counts[:, None] * X)
                    exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
                    if exp.samples >= B and not exp.done:
                        exp.stop("budget_exhausted")
                vals.append(rho(A / B))
            line += f" {name} rho {np.mean(vals):.3f}"
        print(line + f" ({seeds} seeds)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0, help="root seed (run i uses run_generators(seed, i))")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=list(INSTANCES))
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--lab-budgets", nargs="+", type=int, default=list(INSTANCES["lab-teams"]["budgets"]))
    ap.add_argument("--crowd-budgets", nargs="+", type=int, default=list(INSTANCES["crowd"]["budgets"]))
    ap.add_argument("--profile-seeds", type=int, default=50)
    ap.add_argument("--profile-only", action="store_true")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--design-seeds", type=int, default=20, help="seeds of the design analysis (0: skip it)")
    ap.add_argument("--out", help="write the table as CSV")
    ap.add_argument("--table", help="read a table written by --out instead of measuring (print it, draw --figures)")
    _figures.add_option(ap)
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    if not args.profile_only:
        budgets = {"lab-teams": tuple(args.lab_budgets), "crowd": tuple(args.crowd_budgets)}
        if args.table:
            rows = read_table(args.table)
            args.seeds = rows[0]["seeds"]
        else:
            rows = measure(args.seeds, args.seed, args.jobs, args.instances, args.solvers, budgets)
        print_table(rows, args.seeds, args.seed)
        if args.figures is not None:
            figures(args.figures, rows, args.seeds)
        if args.out:
            with open(args.out, "w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
    if not args.no_profile:
        profile("lab-teams", min(args.lab_budgets), args.profile_seeds, args.seed)
        profile("crowd", min(args.crowd_budgets), args.profile_seeds, args.seed)
    if args.design_seeds > 0 and "lab-teams" in args.instances:
        design_analysis(tuple(args.lab_budgets), args.design_seeds, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
