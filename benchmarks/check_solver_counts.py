"""Error counts of check_solver's easy and adversarial cases, per registered PAC solver.

Prints one row per (solver, case): runs, wrong answers among the runs that stopped,
refusals (a CombexError: sound), undecided runs (sample budget reached), the one-sided 95%
Clopper-Pearson upper bound of the error rate over the decided runs, the promised delta and
the median samples. A failed check (a significant violation) is marked FAIL.

    python benchmarks/check_solver_counts.py --runs 20 --heavy-runs 3 [--solvers lucb,icb]
"""

from __future__ import annotations

import argparse
import time

from combex.solvers import SOLVERS, get_solver
from combex.testing import yield_solver_checks

HEAVY = {"saqm": 30_000, "sa-foa": 30_000, "lingape-oracle": 200}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--heavy-runs", type=int, default=3, help="runs for saqm, sa-foa, lingape-oracle")
    ap.add_argument("--budget", type=int, default=100_000)
    ap.add_argument("--solvers", default="", help="comma-separated names (default: every PAC solver)")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    get_solver("lucb")
    names = args.solvers.split(",") if args.solvers else sorted(n for n, c in SOLVERS.items() if c.contract == "pac")
    print("| solver | case | runs | errors | refused | undecided | CP upper | delta | median samples | check |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        heavy = name in HEAVY
        runs = args.heavy_runs if heavy else args.runs
        budget = min(args.budget, HEAVY.get(name, args.budget))
        for check, fn in yield_solver_checks(name, rng=args.seed, n_runs=runs, budget=budget):
            if not (check == "easy" or check.startswith("adversarial_")):
                continue
            t0 = time.perf_counter()
            verdict = "ok"
            try:
                rep = fn()
            except AssertionError as exc:
                verdict = "FAIL"
                rep = getattr(exc, "report", None)
                if rep is None:
                    print(f"| {name} | {check[len('adversarial_'):] if check != 'easy' else 'easy'} | | | | | | | | FAIL: {str(exc)[:80]} |", flush=True)
                    continue
            case = rep.case
            if rep.runs == 0:
                print(f"| {name} | {case} | - | - | - | - | - | - | - | n/a (no PAC epsilon) |", flush=True)
                continue
            med = int(sorted(rep.samples)[len(rep.samples) // 2]) if rep.samples else "-"
            up = f"{rep.upper:.3f}" if rep.decided else "-"
            print(f"| {name} | {case} | {rep.runs} | {rep.errors} | {rep.refused} | {rep.undecided} | {up} | "
                  f"{rep.delta} | {med} | {verdict} ({time.perf_counter() - t0:.0f} s) |", flush=True)


if __name__ == "__main__":
    main()
