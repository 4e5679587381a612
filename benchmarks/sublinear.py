"""Sub-Elim / Sub-TS vs the linear-time baselines (Tables 1-2 of Yang et al. 2022), the
index libraries they can use, Sub-Elim's crossover against the compacting scan, and a
real-data analogue of Table 3 (white wines, arms revealed over time).

    python benchmarks/sublinear.py           # reduced: T = 3,000, K in {5,000, 30,000}, 2 runs
    python benchmarks/sublinear.py --full    # paper: T = 20,000, K in {5,000, 100,000}, 10 runs,
                                             # shortlists 10 / 30 / 100 at K = 100,000, wine T = 20,000
    python benchmarks/sublinear.py --index-libraries            # hnswlib / faiss / usearch at K = 10^5
    python benchmarks/sublinear.py --crossover --K 10000 30000 100000 300000 --runs 2   # Sub-Elim vs lin-elim
    python benchmarks/sublinear.py --K 100000 --T 20000 --runs 3 --family ts --beta 2 --ts-variants  # Sub-TS end to end

d = 16, theta* ~ N(0, I), arms ~ N(0, I), unit Gaussian noise, 2 arms added every 20 steps
(final size K). Regret: mean +/- sd over runs (same environment seeds for every method).
Every table gives the total time (preprocessing + online) beside the online time, both means
over runs; speedups are ratios against the family's baseline (lin-elim: the live arms scanned;
lin-ts: every present arm scanned) measured in the same run of this script. The load
average is printed with every row: figures taken with a load above 1.5 (other jobs on the
machine) are marked "loaded". BLAS single-threaded.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from combex.environments._mips_instances import sublinear_synthetic, wine_dynamic  # noqa: E402
from combex.exceptions import DataNotFoundError  # noqa: E402
from combex.mips import HNSWIndex  # noqa: E402
from combex.mips._hnsw import hnsw_backends  # noqa: E402
from combex.solvers.sublinear import LinElim, LinTS, SubElim, SubTS  # noqa: E402


def load() -> str:
    la = os.getloadavg()[0]
    return f"{la:.1f}" + (" loaded" if la > 1.5 else "")


def run_many(make_env, solver, runs: int, seed: int):
    """Regrets and mean (total, preprocessing, online, maintenance) seconds over ``runs`` seeds."""
    regrets, tot, pre, online, maint, infos = [], [], [], [], [], []
    for child in np.random.SeedSequence(seed).spawn(runs):
        env_rng, alg_rng = np.random.default_rng(child).spawn(2)
        env = make_env(env_rng)
        res = solver.run(env, rng=alg_rng)
        regrets.append(res.regret)
        tot.append(res.wall_seconds)
        pre.append(res.preprocess_seconds)
        online.append(res.online_seconds)
        maint.append(res.index_maintenance_seconds)
        infos.append(res.info)
    return (np.array(regrets), float(np.mean(tot)), float(np.mean(pre)), float(np.mean(online)),
            float(np.mean(maint)), infos)


def table(title: str, make_env, families, runs: int, seed: int, scan_runs: int) -> None:
    """One block per family: rows (label, solver, is_full_scan). Speedups are total-time and
    online-time ratios against the family's baseline (first row); regret is also given
    relative to the baseline's. The full scan (LinElim(compact=False), same decisions as
    lin-elim) is timed on the first ``scan_runs`` seeds only."""
    print(f"\n## {title} ({runs} runs)\n")
    print("| algorithm | regret (mean +/- sd) | regret vs baseline | total s | preprocessing s | online s "
          "[index maint.] | total speedup | online speedup | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rows in families:
        base = None
        for label, solver, full_scan in rows:
            n = min(runs, scan_runs) if full_scan else runs
            r, t, p, o, m, _ = run_many(make_env, solver, n, seed)
            if base is None:
                base = (r.mean(), t, o)
            sd = r.std(ddof=1) if n > 1 else 0.0
            rel = f"{100 * (r.mean() / base[0] - 1):+.1f}%" if not full_scan else "(same decisions)"
            print(f"| {label}{f' ({n} runs)' if n != runs else ''} | {r.mean():.0f} +/- {sd:.0f} | {rel} | "
                  f"{t:.2f} | {p:.2f} | {o:.2f} [{m:.2f}] | x{base[1] / t:.2f} | x{base[2] / o:.2f} | {load()} |",
                  flush=True)


def families(shortlists, which: str, beta, ts_variants: bool = False):
    elim = [("lin-elim (live arms scanned)", LinElim(beta=beta), False),
            ("lin-elim, compact=False (every arm scanned)", LinElim(beta=beta, compact=False), True),
            ("sub-elim, exact stage queries", SubElim(index="exact", beta=beta), False)]
    elim += [(f"sub-elim, shortlist {p}", SubElim(p, beta=beta), False) for p in shortlists]
    ts = [("lin-ts", LinTS(beta=beta), False)] + [(f"sub-ts, shortlist {p}", SubTS(p, beta=beta), False)
                                                  for p in shortlists]
    if ts_variants:
        ts += [(f"sub-ts, shortlist 30, {b}", SubTS(30, beta=beta, backend=b), False) for b in hnsw_backends()[1:]]
        ts += [("sub-ts, shortlist 30, build_threads=2", SubTS(30, beta=beta, build_threads=2), False),
               ("sub-ts, shortlist 30, hnswlib M=16 ef_construction=100 (before)",
                SubTS(30, beta=beta, backend="hnswlib", ef_construction=100), False)]
    return [elim] if which == "elim" else [ts] if which == "ts" else [elim, ts]


# ---------------------------------------------------------------------- index libraries
def index_libraries(K: int, seed: int, threads: list[int], efcs: list[int]) -> None:
    """Build (1 and 2 threads), shortlist query, single insertions and deletions for every
    installed graph library at K points: Sub-TS's points (d = 16 Gaussian arms) and
    Sub-Elim's (vec(x x^T / d), d(d+1)/2 = 136 dimensions). recall@1 = the exact best
    point is in the re-ranked shortlist of 30, over 300 queries (150 random directions,
    150 near one direction, as Thompson sampling's concentrate)."""
    rng = np.random.default_rng(seed)
    X16 = rng.standard_normal((K, 16))
    iu = np.triu_indices(16)
    X136 = X16[:, iu[0]] * X16[:, iu[1]] * np.where(iu[0] == iu[1], 1.0, np.sqrt(2.0)) / 16
    print(f"\n## Index libraries: build / query / update at K = {K:,} (M = 16, shortlist 30)\n")
    print("| points | library | ef_construction | threads | build s | query us | recall@1 | insert us/point "
          "| delete us/point | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, X in (("d = 16 (Sub-TS)", X16), ("d = 136 (Sub-Elim stages)", X136)):
        d = X.shape[1]
        theta = rng.standard_normal(d)
        Q = np.vstack([rng.standard_normal((150, d)), theta + 0.1 * rng.standard_normal((150, d))])
        Q /= np.linalg.norm(Q, axis=1, keepdims=True)
        best = np.argmax(X @ Q.T, axis=0)
        new = rng.standard_normal((500, d)) * X.std()
        for efc in efcs:
            for nt in threads:
                for lib in hnsw_backends():
                    ix = HNSWIndex(d, ef_construction=efc, ef=30, capacity=K + 1000, backend=lib, threads=nt, rng=0)
                    t0 = time.perf_counter()
                    ix.add(X, np.arange(K))
                    build = time.perf_counter() - t0
                    hits = 0
                    t0 = time.perf_counter()
                    for i, q in enumerate(Q):
                        lab, _ = ix._query(q.astype(np.float32), 30)
                        hits += int(best[i] in set(lab.tolist()))
                    tq = (time.perf_counter() - t0) / len(Q)
                    t0 = time.perf_counter()
                    for j in range(new.shape[0]):
                        ix.add(new[j:j + 1], [K + j])
                    ti = (time.perf_counter() - t0) / new.shape[0]
                    t0 = time.perf_counter()
                    for j in range(500):
                        ix.remove([j])
                    td = (time.perf_counter() - t0) / 500
                    print(f"| {name} | {lib} | {efc} | {nt} | {build:.2f} | {tq * 1e6:.0f} | {hits / len(Q):.3f} | "
                          f"{ti * 1e6:.0f} | {td * 1e6:.1f} | {load()} |", flush=True)


# ---------------------------------------------------------------------- Sub-Elim crossover
def crossover(Ks: list[int], T: int, runs: int, seed: int, beta, hnsw_max: int) -> None:
    """Online time of lin-elim (compacting scan) and Sub-Elim across K, the work each does
    (arm scans of lin-elim; bound evaluations of Sub-Elim, line 5 included) and a fit
    ``online = a + b K`` per algorithm; the crossover K is where the fitted lines meet."""
    print(f"\n## Sub-Elim vs the compacting scan across K (T = {T}, {runs} runs)\n")
    print("| K | algorithm | regret | total s | online s | online per step us | arms scanned (lin) / bounds "
          "evaluated (sub) per run | stage points scanned exactly per run | online ratio sub / lin | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    fits: dict[str, list[tuple[int, float]]] = {}
    for K in Ks:
        def make_env(g, K=K):
            return sublinear_synthetic(K=K, d=16, T=T, change=2, rng=g)
        algs = [("lin-elim", LinElim(beta=beta), "arm_scans"),
                ("sub-elim, exact stage queries", SubElim(index="exact", beta=beta), "bound_evaluations")]
        if K <= hnsw_max:
            algs.append(("sub-elim, shortlist 30", SubElim(30, beta=beta), "bound_evaluations"))
        lin_online = None
        for label, solver, work in algs:
            r, t, _, o, _, infos = run_many(make_env, solver, runs, seed)
            lin_online = o if lin_online is None else lin_online
            fits.setdefault(label, []).append((K, o))
            w = np.mean([i[work] for i in infos])
            sc = f"{np.mean([i['stage_scans'] for i in infos]):,.0f}" if "stage_scans" in infos[0] else "-"
            print(f"| {K:,} | {label} | {r.mean():.0f} | {t:.2f} | {o:.2f} | {1e6 * o / T:.0f} | {w:,.0f} | {sc} | "
                  f"x{o / lin_online:.2f} | {load()} |", flush=True)
    print()
    coef = {}
    for label, pts in fits.items():
        if len(pts) >= 2:
            k, o = np.array(pts, dtype=float).T
            b, a = np.polyfit(k, o, 1)
            coef[label] = (a, b)
            print(f"* {label}: online ~ {a:.3f} s + {b * 1e6:.2f} us x K")
    lin = coef.get("lin-elim")
    for label, (a, b) in coef.items():
        if label == "lin-elim" or lin is None:
            continue
        if b < lin[1]:
            print(f"* {label} would overtake lin-elim at K ~ {(a - lin[0]) / (lin[1] - b):,.0f}")
        else:
            print(f"* {label}: no crossover (its per-arm online cost is not below lin-elim's)")


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
    ap.add_argument("--ts-variants", action="store_true",
                    help="Sub-TS rows for every installed graph library, 2 build threads and the former "
                         "hnswlib ef_construction=100 graph")
    ap.add_argument("--deletions", action="store_true",
                    help="Table 4: start with K arms; every 20 steps 2 arrive and 2 random present arms leave (TS only)")
    ap.add_argument("--index-libraries", action="store_true", help="measure the graph libraries only")
    ap.add_argument("--ef-construction", type=int, nargs="*", default=[40], help="for --index-libraries")
    ap.add_argument("--crossover", action="store_true", help="Sub-Elim vs lin-elim across --K only")
    ap.add_argument("--hnsw-max", type=int, default=100_000, help="largest K with an HNSW Sub-Elim row (--crossover)")
    args = ap.parse_args()
    print(f"# load average at start: {load()}")
    if args.index_libraries:
        index_libraries((args.K or [100_000])[0], args.seed, [1, 2], args.ef_construction)
        return
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
    if args.crossover:
        crossover(Ks, T, runs, args.seed, args.beta, args.hnsw_max)
        return
    beta = "theoretical" if args.beta is None else args.beta
    print(f"# Sublinear-time linear bandits ({'full' if args.full else 'reduced'}; T = {T}, seed {args.seed}, "
          f"beta {beta}, graph library {hnsw_backends()[0]})")
    if args.only in ("synthetic", "all"):
        for K in Ks:
            sl = shortlists if K == max(Ks) else [30]
            what = "2 arms in and 2 out / 20 steps" if args.deletions else "2 arms / 20 steps"
            table(f"sublinear-synthetic, K = {K}, d = 16, {what}",
                  lambda g, K=K: sublinear_synthetic(K=K, d=16, T=T, change=2, deletions=args.deletions, rng=g),
                  families(sl, args.family, args.beta, args.ts_variants), runs, args.seed, args.scan_runs)
    if args.only in ("wine", "all"):
        try:
            wine_dynamic(T=T, rng=0)
        except DataNotFoundError as exc:
            print(f"\n(wine data not found: {exc})")
            return
        table(f"wine-dynamic (4,898 white wines, d = 12, start {4898 - 2 * (T // 20)}, +2 / 20 steps)",
              lambda g: wine_dynamic(T=T, rng=g), families([30], args.family, args.beta), runs, args.seed,
              args.scan_runs)
    print(f"\n# load average at end: {load()}")


if __name__ == "__main__":
    main()
