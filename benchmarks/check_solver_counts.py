"""Error counts of check_solver's statistical cases, and the table of broken solvers it fails.

Default: one row per (solver, case) of every registered PAC solver: runs, wrong answers
among the runs that stopped, refusals (a CombexError: sound), undecided runs (sample budget
reached), the one-sided 95% Clopper-Pearson upper bound of the error rate over the decided
runs, the promised delta, the median samples, the verdict and the seconds. ``--runs N``
gives every case N runs (the fixed-run rule); without it the cases run check_solver's
default sequential test (``--slow``: its many-run version).

``--broken``: the broken-solver table. Each solver's stopping threshold (or confidence
radius) is multiplied by ``--factor`` (0.1: cut 10x, :func:`combex.testing.broken_solver`)
and ``check_solver`` runs at its default settings until the first failed check: the table
gives the check that failed, the runs it used, the runs of all the checks run, the errors
and the seconds; beside it, the real solver on that same check (its verdict, runs and
seconds), measured in the same run.

    python benchmarks/check_solver_counts.py [--runs 20] [--solvers lucb,icb] [--cases easy,near_tie]
    python benchmarks/check_solver_counts.py --broken [--factor 0.1] [--solvers top-two,lucb,icb,lingape,lingame]
"""

from __future__ import annotations

import argparse
import time

from combex.solvers import SOLVERS, get_solver
from combex.testing import broken_solver, yield_solver_checks

#: Solvers whose runs take seconds: a fixed number of runs (``--heavy-runs``) and a budget.
HEAVY = {"saqm": 30_000, "sa-foa": 30_000, "lingape-oracle": 200, "xy-adaptive": 200_000}
#: Solvers of the broken-solver table: one or more per family (semi-bandit / MAB,
#: full-bandit, linear).
BROKEN = ("top-two", "lucb", "lil-lucb", "lil-randlucb", "icb", "lingape", "lingame")


def _statistical(check: str) -> bool:
    return check == "easy" or check.startswith("adversarial_")


def counts(args: argparse.Namespace) -> None:
    get_solver("lucb")
    names = args.solvers.split(",") if args.solvers else sorted(n for n, c in SOLVERS.items() if c.contract == "pac")
    print("| solver | case | runs | errors | refused | undecided | CP upper | delta | median samples | verdict | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        budget = min(args.budget, HEAVY.get(name, args.budget))
        runs = args.heavy_runs if name in HEAVY else args.runs
        for check, fn in yield_solver_checks(name, rng=args.seed, n_runs=runs, slow=args.slow, budget=budget):
            if not _statistical(check) or (args.cases and check.removeprefix("adversarial_") not in args.cases):
                continue
            t0 = time.perf_counter()
            verdict = None
            try:
                rep = fn()
            except AssertionError as exc:
                verdict = "FAIL"
                rep = getattr(exc, "report", None)
                if rep is None:
                    print(f"| {name} | {check} | | | | | | | | FAIL: {str(exc)[:80]} | |", flush=True)
                    continue
            secs = time.perf_counter() - t0
            if rep.runs == 0:
                print(f"| {name} | {rep.case} | - | - | - | - | - | - | - | n/a ({rep.note[:40]}) | |", flush=True)
                continue
            med = int(sorted(rep.samples)[len(rep.samples) // 2]) if rep.samples else "-"
            up = f"{rep.upper:.3f}" if rep.decided else "-"
            print(f"| {name} | {rep.case} | {rep.runs} | {rep.errors} | {rep.refused} | {rep.undecided} | {up} | "
                  f"{rep.delta} | {med} | {verdict or rep.verdict or 'ok'} | {secs:.1f} |", flush=True)


def _run_check(solver, check: str, seed: int) -> tuple[str, object, float]:
    """One check of check_solver at its default settings: (verdict, report, seconds)."""
    t0 = time.perf_counter()
    try:
        rep = dict(yield_solver_checks(solver, rng=seed))[check]()
        verdict = rep.verdict
    except AssertionError as exc:
        rep, verdict = getattr(exc, "report", None), "FAIL"
    return verdict, rep, time.perf_counter() - t0


def _first_failure(solver, seed: int) -> tuple[str, object, int, float]:
    """check_solver's statistical checks in order (default settings) up to the first
    failure: (failed check or "none", its report, runs of all the checks run, seconds)."""
    total, t0 = 0, time.perf_counter()
    for check, fn in yield_solver_checks(solver, rng=seed):
        if not _statistical(check):
            continue
        try:
            rep = fn()
        except AssertionError as exc:
            rep = getattr(exc, "report", None)
            total += rep.runs if rep is not None else 0
            return check, rep, total, time.perf_counter() - t0
        total += rep.runs
    return "none", None, total, time.perf_counter() - t0


def broken_table(args: argparse.Namespace) -> None:
    names = args.solvers.split(",") if args.solvers else list(BROKEN)
    print(f"Stopping threshold (or confidence radius) multiplied by {args.factor}; check_solver at its default "
          f"settings (sequential rule), root seed {args.seed}.\n")
    print("| solver | family | delta | factor | failed check | runs (that check) | errors | runs (all checks) | seconds "
          "| real solver on that check: verdict, runs, errors, median samples, seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        real = get_solver(name)()
        bad = broken_solver(real, args.factor)
        check, rep, total, secs = _first_failure(bad, args.seed)
        family = getattr(type(real), "families", ("?",))[0]
        if rep is None:
            print(f"| {name} | {family} | {real.delta} | {args.factor} | none ({check}) | | | {total} | {secs:.1f} | |",
                  flush=True)
            continue
        cell = ""
        if not args.no_real:
            verdict, rrep, rsecs = _run_check(real, check, args.seed)
            med = int(sorted(rrep.samples)[len(rrep.samples) // 2]) if rrep is not None and rrep.samples else "-"
            cell = f"{verdict}, {getattr(rrep, 'runs', '-')}, {getattr(rrep, 'errors', '-')}, {med}, {rsecs:.1f}"
        print(f"| {name} | {family} | {real.delta} | {args.factor} | {check} | {rep.runs} | {rep.errors} | {total} | "
              f"{secs:.1f} | {cell} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=None, help="fixed runs per case (default: the sequential rule)")
    ap.add_argument("--heavy-runs", type=int, default=3, help="fixed runs for saqm, sa-foa, lingape-oracle (their runs "
                    "take seconds)")
    ap.add_argument("--slow", action="store_true", help="the many-run sequential rule")
    ap.add_argument("--budget", type=int, default=200_000)
    ap.add_argument("--solvers", default="", help="comma-separated names (default: every PAC solver / BROKEN)")
    ap.add_argument("--cases", type=lambda v: v.split(","), default=None,
                    help="comma-separated cases (easy, offset, near_tie...; default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--broken", action="store_true", help="print the broken-solver table")
    ap.add_argument("--factor", type=float, default=0.1, help="threshold multiplier of the broken solvers")
    ap.add_argument("--no-real", action="store_true", help="broken table without the real solvers' column")
    args = ap.parse_args()
    if args.broken:
        broken_table(args)
    else:
        counts(args)


if __name__ == "__main__":
    main()
