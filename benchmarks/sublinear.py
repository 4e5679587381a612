"""Sub-Elim / Sub-TS vs the linear-time baselines (Tables 1-2 of Yang et al. 2022) and a
real-data analogue of Table 3 (white wines, arms revealed over time).

    python benchmarks/sublinear.py           # reduced: T = 3,000, K in {5,000, 30,000}, 2 runs
    python benchmarks/sublinear.py --full    # paper: T = 20,000, K in {5,000, 100,000}, 10 runs,
                                             # shortlists 10 / 30 / 100 at K = 100,000, wine T = 20,000

d = 16, theta* ~ N(0, I), arms ~ N(0, I), unit Gaussian noise, 2 arms added every 20 steps
(final size K). Regret: mean +/- sd over runs (same environment seeds for every method).
Time: total (with preprocessing) and online (without), means over runs; speedup vs the
baseline of the same family. BLAS single-threaded.
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


def table(title: str, make_env, families, runs: int, seed: int) -> None:
    print(f"\n## {title} ({runs} runs)\n")
    print("| algorithm | regret (mean +/- sd) | time s (online) [online w/o index maintenance] | speedup (online) [w/o maint.] |")
    print("|---|---|---|---|")
    for base, subs in families:
        r, t, o, m = run_many(make_env, base, runs, seed)
        print(f"| {base.name} | {r.mean():.0f} +/- {r.std(ddof=1) if runs > 1 else 0:.0f} | {t:.2f} ({o:.2f}) [{o - m:.2f}] | x1 |")
        for sub in subs:
            rs, ts, os_, ms = run_many(make_env, sub, runs, seed)
            print(f"| {sub.name}, shortlist {sub.shortlist} | {rs.mean():.0f} +/- {rs.std(ddof=1) if runs > 1 else 0:.0f} | "
                  f"{ts:.2f} ({os_:.2f}) [{os_ - ms:.2f}] | x{t / ts:.2f} (x{o / os_:.2f}) [x{(o - m) / (os_ - ms):.2f}] |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--only", choices=["synthetic", "wine", "all"], default="all")
    ap.add_argument("--K", type=int, nargs="*", default=None, help="override the arm-set sizes")
    ap.add_argument("--T", type=int, default=None, help="override the horizon")
    ap.add_argument("--family", choices=["elim", "ts", "both"], default="both")
    args = ap.parse_args()
    if args.full:
        T, Ks, runs, shortlists = 20_000, [5_000, 100_000], 10, [10, 30, 100]
    else:
        T, Ks, runs, shortlists = 3_000, [5_000, 30_000], 2, [30]
    runs = args.runs or runs
    T = args.T or T
    Ks = args.K or Ks
    print(f"# Sublinear-time linear bandits ({'full' if args.full else 'reduced'}; T = {T}, seed {args.seed})")
    if args.only in ("synthetic", "all"):
        for K in Ks:
            sl = shortlists if K == max(Ks) else [30]
            fams = [(LinElim(), [SubElim(p) for p in sl]), (LinTS(), [SubTS(p) for p in sl])]
            fams = fams[:1] if args.family == "elim" else fams[1:] if args.family == "ts" else fams
            table(f"sublinear-synthetic, K = {K}, d = 16, 2 arms / 20 steps",
                  lambda g, K=K: sublinear_synthetic(K=K, d=16, T=T, change=2, rng=g), fams, runs, args.seed)
    if args.only in ("wine", "all"):
        try:
            wine_dynamic(T=T, rng=0)
        except DataNotFoundError as exc:
            print(f"\n(wine data not found: {exc})")
            return
        fams = [(LinElim(), [SubElim(30)]), (LinTS(), [SubTS(30)])]
        table(f"wine-dynamic (4,898 white wines, d = 12, start {4898 - 2 * (T // 20)}, +2 / 20 steps)",
              lambda g: wine_dynamic(T=T, rng=g), fams, runs, args.seed)


if __name__ == "__main__":
    main()
