"""Sub-Elim / Sub-TS vs the linear-time baselines (Tables 1-2 of Yang et al. 2022) and a
real-data analogue of Table 3 (white wines, arms revealed over time).

    python benchmarks/sublinear.py           # reduced: T = 3,000, K in {5,000, 30,000}, 2 runs
    python benchmarks/sublinear.py --full    # paper: T = 20,000, K in {5,000, 100,000}, 10 runs,
                                             # shortlists 10 / 30 / 100 at K = 100,000, wine T = 20,000

d = 16, theta* ~ N(0, I), arms ~ N(0, I), unit Gaussian noise, 2 arms added every 20 steps
(final size K). Regret: mean +/- sd over runs (same environment seeds for every method).
Time: total (with preprocessing) and online (without), means over runs; online speedups
vs the baseline of the same family (lin-elim scans the live arms; lin-ts scans every
present arm) and, for elimination, vs the full scan of every arm (LinElim(compact=False),
the cost the paper's Linear Elim timings imply). BLAS single-threaded.

    python benchmarks/sublinear.py --K 100000 --T 20000 --runs 10 --only synthetic
    python benchmarks/sublinear.py --K 5000 --T 20000 --runs 10 --family ts --beta 2   # practical TS scale
    python benchmarks/sublinear.py --K 10000 --T 20000 --runs 10 --deletions --shortlists 10 30 100  # Table 4
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

from combex.environments._mips_instances import sublinear_synthetic, wine_dynamic  # noqa: E402
from combex.exceptions import DataNotFoundError  # noqa: E402
from combex.solvers.sublinear import LinElim, LinTS, SubElim, SubTS  # noqa: E402


def run_many(make_env, solver, runs: int, seed: int):
    regrets, tot, online, maint = [], [], [], []
    for child in np.random.SeedSequence(seed).spawn(runs):
        env_rng, alg_rng = np.random.default_rng(child).spawn(2)
        env = make_env(env_rng)
        res = solver.run(env, rng=alg_rng)
        regrets.append(res.regret)
        tot.append(res.seconds)
        online.append(res.online_seconds)
        maint.append(res.info.get("index_maintenance_seconds", 0.0))
    return np.array(regrets), float(np.mean(tot)), float(np.mean(online)), float(np.mean(maint))


def table(title: str, make_env, families, runs: int, seed: int, scan_runs: int) -> None:
    """One block per family: rows (label, solver, is_full_scan). Speedups are online-time
    ratios against the family's baseline (first row) and, for elimination, against the
    Theta(K)-per-step full scan (LinElim(compact=False): same decisions, so it is timed on
    the first ``scan_runs`` seeds only)."""
    print(f"\n## {title} ({runs} runs)\n")
    print("| algorithm | regret (mean +/- sd) | time s (online) [online w/o index maintenance] "
          "| online speedup vs baseline | online speedup vs full scan |")
    print("|---|---|---|---|---|")
    for rows in families:
        base_online = scan_online = None
        for label, solver, full_scan in rows:
            n = min(runs, scan_runs) if full_scan else runs
            r, t, o, m = run_many(make_env, solver, n, seed)
            base_online = o if base_online is None else base_online
            if full_scan:
                scan_online = o
            sd = r.std(ddof=1) if n > 1 else 0.0
            vs_scan = f"x{scan_online / o:.2f}" if scan_online is not None else "-"
            print(f"| {label}{f' ({n} runs)' if n != runs else ''} | {r.mean():.0f} +/- {sd:.0f} | "
                  f"{t:.2f} ({o:.2f}) [{o - m:.2f}] | x{base_online / o:.2f} | {vs_scan} |", flush=True)


def families(shortlists, which: str, beta):
    elim = [("lin-elim (live arms scanned)", LinElim(beta=beta), False),
            ("lin-elim, compact=False (every arm scanned)", LinElim(beta=beta, compact=False), True),
            ("sub-elim, exact stage queries", SubElim(index="exact", beta=beta), False)]
    elim += [(f"sub-elim, shortlist {p}", SubElim(p, beta=beta), False) for p in shortlists]
    ts = [("lin-ts", LinTS(beta=beta), False)] + [(f"sub-ts, shortlist {p}", SubTS(p, beta=beta), False)
                                                  for p in shortlists]
    return [elim] if which == "elim" else [ts] if which == "ts" else [elim, ts]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--scan-runs", type=int, default=3,
                    help="runs for the full-scan elimination baseline (identical decisions; time only)")
    ap.add_argument("--only", choices=["synthetic", "wine", "all"], default="all")
    ap.add_argument("--K", type=int, nargs="*", default=None, help="override the arm-set sizes")
    ap.add_argument("--T", type=int, default=None, help="override the horizon")
    ap.add_argument("--shortlists", type=int, nargs="*", default=None, help="override the shortlist sizes p")
    ap.add_argument("--beta", type=float, default=None,
                    help="confidence width for every algorithm (default: each paper's theoretical beta)")
    ap.add_argument("--family", choices=["elim", "ts", "both"], default="both")
    ap.add_argument("--deletions", action="store_true",
                    help="Table 4: start with K arms; every 20 steps 2 arrive and 2 random present arms leave (TS only)")
    args = ap.parse_args()
    if args.deletions:
        args.family = "ts"
    if args.full:
        T, Ks, runs, shortlists = 20_000, [5_000, 100_000], 10, [10, 30, 100]
    else:
        T, Ks, runs, shortlists = 3_000, [5_000, 30_000], 2, [30]
    runs = args.runs or runs
    T = args.T or T
    Ks = args.K or Ks
    shortlists = args.shortlists or shortlists
    beta = "theoretical" if args.beta is None else args.beta
    print(f"# Sublinear-time linear bandits ({'full' if args.full else 'reduced'}; T = {T}, seed {args.seed}, "
          f"beta {beta})")
    if args.only in ("synthetic", "all"):
        for K in Ks:
            sl = shortlists if K == max(Ks) else [30]
            what = "2 arms in and 2 out / 20 steps" if args.deletions else "2 arms / 20 steps"
            table(f"sublinear-synthetic, K = {K}, d = 16, {what}",
                  lambda g, K=K: sublinear_synthetic(K=K, d=16, T=T, change=2, deletions=args.deletions, rng=g),
                  families(sl, args.family, args.beta), runs, args.seed, args.scan_runs)
    if args.only in ("wine", "all"):
        try:
            wine_dynamic(T=T, rng=0)
        except DataNotFoundError as exc:
            print(f"\n(wine data not found: {exc})")
            return
        table(f"wine-dynamic (4,898 white wines, d = 12, start {4898 - 2 * (T // 20)}, +2 / 20 steps)",
              lambda g: wine_dynamic(T=T, rng=g), families([30], args.family, args.beta), runs, args.seed,
              args.scan_runs)


if __name__ == "__main__":
    main()
