"""BoundedME benchmarks: Figure 1 (adversarial guarantee) and Figures 2-3 (precision@K vs
online speedup over exact search, against HNSW and sign-LSH).

    python benchmarks/mips.py            # reduced sizes (5,000 x 4,000, dimension-major)
    python benchmarks/mips.py --full     # paper sizes: 10^4 x 10^5 float32 (4 GB per data set)
    python benchmarks/mips.py --full --skip-figure1 --order C --datasets mips-gaussian --planted 6

BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1) so the timings compare algorithms,
not thread counts. Times are medians over queries; "online speedup" is exact query time /
method query time (preprocessing excluded); for HNSW and LSH the build time is reported
separately, and "1-query speedup" includes it (the BoundedME paper's Motivation I).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from combex.environments._mips_instances import mips_adversarial, mips_gaussian, mips_uniform  # noqa: E402
from combex.mips import HNSWIndex, SignLSHIndex, exact_top_k, mips_top_k  # noqa: E402
from combex.solvers.mips import BoundedME  # noqa: E402


def figure1(n: int, dim: int, runs: int, seed: int) -> None:
    print(f"\n## Figure 1: adversarial data ({n} arms x {dim} rewards, ones first), {runs} runs per (eps, delta)\n")
    print("| epsilon | mean over delta of the (1-delta)-percentile suboptimality | max over delta | all < epsilon |")
    print("|---|---|---|---|")
    deltas = [0.01, 0.05, 0.1, 0.2, 0.3]
    ss = np.random.SeedSequence(seed)
    for eps in [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]:
        pct = []
        for delta in deltas:
            subs = []
            for child in ss.spawn(runs):
                env_rng, alg_rng = np.random.default_rng(child).spawn(2)
                env = mips_adversarial(n, dim, rng=env_rng)
                res = BoundedME(k=1, epsilon=eps, delta=delta).run(env, rng=alg_rng)
                mu = env.means()
                subs.append(mu.max() - mu[res.answer])
                assert res.pulls.max() <= dim
            pct.append(float(np.quantile(subs, 1 - delta)))
        print(f"| {eps} | {np.mean(pct):.4f} | {max(pct):.4f} | {all(p < eps for p in pct)} |")


def _median_time(f, reps: int = 3):
    best, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        best.append(time.perf_counter() - t0)
    return out, float(np.median(best))


def figures23(name: str, n: int, dim: int, n_queries: int, seed: int, order: str, *, planted: float = 0.0,
              hnsw_max: float = 2e8, hnsw_probe: int = 1000, lsh: bool = True) -> None:
    gen = {"mips-gaussian": mips_gaussian, "mips-uniform": mips_uniform}[name]
    t0 = time.perf_counter()
    data = gen(n, dim, n_queries=n_queries, dtype=np.float32, order=order, rng=seed)
    V, Q = data.V, data.queries
    v_max = data.v_max
    note = ""
    if planted > 0:
        # For query i, 5 rows of its own get + planted * q_i / ||q_i||: their inner products
        # with q_i rise by `planted` standard deviations (sd of <v, q_i> is ||q_i||); the
        # shift they give another query is planted * N(0, 1), negligible against ||q||.
        rows = np.random.default_rng(seed + 1).choice(n, size=(n_queries, 5), replace=False)
        for i, q in enumerate(Q):
            V[rows[i]] += (planted * q / np.linalg.norm(q)).astype(V.dtype)
        v_max = max(v_max, float(np.abs(V[rows.ravel()]).max()))
        note = f", top-5 planted at +{planted:g} sd"
    print(f"\n## {name}{note}: {n} x {dim} float32, order={order} (generated in {time.perf_counter() - t0:.1f} s), "
          f"{n_queries} queries\n")
    ex_times, truth = [], {}
    for i, q in enumerate(Q):
        res, t = _median_time(lambda: exact_top_k(V, q, 10, check_finite=False))
        ex_times.append(t)
        truth[i] = res.indices
    t_exact = float(np.median(ex_times))
    print(f"exact search (BLAS matvec + argpartition): median {t_exact * 1e3:.1f} ms per query\n")
    hnsw = None
    if n * dim <= hnsw_max:
        t0 = time.perf_counter()
        hnsw = HNSWIndex(dim, M=16, ef_construction=100 if n * dim > 10**8 else 50, capacity=n, rng=seed)
        hnsw.add(V, np.arange(n))
        hnsw_build = time.perf_counter() - t0
    elif hnsw_probe > 0:
        # A full build at this size takes hours on one core; building over the first
        # `hnsw_probe` vectors only is a lower bound of the full build time.
        m = min(hnsw_probe, n)
        t0 = time.perf_counter()
        probe = HNSWIndex(dim, M=16, ef_construction=100, capacity=m, rng=seed)
        probe.add(np.ascontiguousarray(V[:m]), np.arange(m))
        t_probe = time.perf_counter() - t0
        print(f"HNSW: full build skipped (n x dim = {n * dim:.1e} > --hnsw-max {hnsw_max:.0e}); building over "
              f"{m} of the {n} vectors alone took {t_probe:.1f} s = {t_probe / t_exact:.0f} exact queries "
              f"(a lower bound of the full build)\n")
        del probe
    lsh_cache = {}
    print("| method | setting | K | precision@K | online speedup | 1-query speedup (incl. build) | build s |")
    print("|---|---|---|---|---|---|---|")
    for K in [5, 10]:
        def report(method, setting, fn, build=0.0):
            precs, times = [], []
            for i, q in enumerate(Q):
                res, t = _median_time(lambda: fn(q), reps=1 if method == "BoundedME" and t_exact > 1 else 3)
                precs.append(len(set(res.indices.tolist()) & set(truth[i][:K].tolist())) / K)
                times.append(t)
            tm = float(np.median(times))
            print(f"| {method} | {setting} | {K} | {np.mean(precs):.2f} | {t_exact / tm:.2f} | "
                  f"{t_exact / (tm + build):.3f} | {build:.1f} |")

        # Coordinate sampling (block=1) suits dimension-major storage; with row-major (C)
        # storage, contiguous coordinate blocks are read at BLAS speed (block=B; epsilon is
        # then the knob of a list of N/B block sums, whose range bound is loose, so larger
        # epsilon values give the same sample sizes).
        # Blocks: the two largest of 4096 / 1024 / 256 / 64 that leave lists of >= 24 items.
        big, small = ([b for b in (4096, 1024, 256, 64) if dim // b >= 24] + [1, 1])[:2]
        settings = ([(1, e) for e in [0.1, 0.15, 0.2, 0.25, 0.3, 0.4]] if order == "F"
                    else [(big, e) for e in [4, 6, 8, 12]] + [(small, e) for e in [4, 6, 8]])
        for blk, eps in settings:
            report("BoundedME", f"block={blk}, eps={eps}, delta=0.1",
                   lambda q, eps=eps, blk=blk: mips_top_k(V, q, K, epsilon=eps, delta=0.1, rng=seed, block=blk,
                                                          v_max=v_max, check_finite=False))
        for ef in ([10, 50, 200] if hnsw is not None else []):
            hnsw.ef = max(ef, K)
            hnsw._index.set_ef(hnsw.ef)

            def hq(q):
                lab, _ = hnsw.query(q, K)
                s = V[lab] @ q
                o = np.argsort(-s)
                from combex.mips import MIPSResult
                return MIPSResult(lab[o], s[o].astype(np.float64), len(lab) * dim)

            report("HNSW", f"ef={ef}", hq, hnsw_build)
        for a, b in ([(8, 20), (12, 40)] if lsh else []):
            if (a, b) not in lsh_cache:
                lsh_cache[(a, b)] = SignLSHIndex(V, a=a, b=b, rng=seed, check_finite=False)
            idx = lsh_cache[(a, b)]
            report("LSH", f"a={a}, b={b}", lambda q, idx=idx: idx.query(q, K), idx.build_seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="paper sizes (10^4 x 10^5; needs ~5 GB)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-figure1", action="store_true")
    ap.add_argument("--order", choices=["C", "F", "both"], default=None,
                    help="storage order of V (default: F reduced, both with --full)")
    ap.add_argument("--datasets", nargs="*", choices=["mips-gaussian", "mips-uniform"],
                    default=["mips-gaussian", "mips-uniform"])
    ap.add_argument("--queries", type=int, default=None, help="queries per data set")
    ap.add_argument("--dim", type=int, default=None, help="override the dimension")
    ap.add_argument("--planted", type=float, default=0.0,
                    help="plant each query's top-5 this many standard deviations out (0: plain data)")
    ap.add_argument("--hnsw-max", type=float, default=2e8,
                    help="build HNSW only when n x dim is at most this (else time a partial build)")
    ap.add_argument("--no-lsh", action="store_true")
    args = ap.parse_args()
    if args.full:
        adv, runs, n, dim, nq = (10_000, 100_000), 20, 10_000, 100_000, 10
    else:
        adv, runs, n, dim, nq = (2_000, 20_000), 10, 5_000, 4_000, 3
    dim = args.dim or dim
    nq = args.queries or nq
    print(f"# BoundedME benchmarks ({'full' if args.full else 'reduced'} sizes, seed {args.seed})")
    if not args.skip_figure1:
        figure1(*adv, runs, args.seed)
    order = args.order or ("both" if args.full else "F")
    orders = ["F", "C"] if order == "both" else [order]
    for name in args.datasets:
        for order in orders:
            figures23(name, n, dim, nq, args.seed, order, planted=args.planted, hnsw_max=args.hnsw_max,
                      lsh=not args.no_lsh)


if __name__ == "__main__":
    main()
