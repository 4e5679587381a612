"""BoundedME benchmarks: reads and times against the cost model, side by side with exact
search, at informative epsilon (one run, one process).

    python benchmarks/mips.py                    # 2,000 x 20,000 float32 (Gaussian, uniform, planted) + Figure 1
    python benchmarks/mips.py --full             # also 10^4 x 10^5 float32 (4 GB per data set, one at a time)
    python benchmarks/mips.py --columns          # also dimension-major copies (memory of a second V)
    python benchmarks/mips.py --heuristic        # also epsilon >= 1 (no guarantee: epsilon as a knob), labelled
    python benchmarks/mips.py --breakdown        # where a planned index query's time goes
    python benchmarks/mips.py --skip-figure1 --figures docs/figures   # + the results page's figure
    python benchmarks/mips.py --banditmips DIR   # also the public BanditMIPS BoundedME (a checkout of
                                                 # ThrunGroup/BanditMIPS; not part of combex), same schedule

BLAS and numba run single-threaded. Times are medians over queries (each the median of
repeated runs); ratios are to exact float32 search (``exact_top_k``: one BLAS ``V @ q``
and an argpartition) run alternately with the method, query by query, on the same data
(exact search after the index's in-place permutation reads the permuted V: same cost). For every BoundedME setting the table
prints the measured fraction of V's bytes read (64-byte lines touched, counted by the
reader from addresses) beside the cost model's prediction (``read_cost``), the time
ratio, and the target ``time <= 1.15 x fraction x exact`` (and faster than exact when
the fraction is below 0.8). Preprocessing (the index's bound pass and permutation) is
reported separately, never inside query times.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import _figures  # noqa: E402
import numpy as np  # noqa: E402

from combex.environments._lists import BinaryRewardLists  # noqa: E402
from combex.environments._mips_instances import mips_adversarial, mips_gaussian, mips_uniform  # noqa: E402
from combex.mips import BoundedMEIndex, exact_top_k, mips_top_k  # noqa: E402
from combex.mips._cost import EXACT_ABOVE  # noqa: E402
from combex.solvers.mips import BoundedME  # noqa: E402

EPSILONS = [0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3]  # informative: < 1 on the guarantee's scale
DELTA = 0.1
K = 5
#: The BoundedMEIndex rows of the data sets run: the figure's points.
FIGURE_ROWS: list[dict] = []


def _load(os_getloadavg=getattr(os, "getloadavg", None)) -> str:
    return "n/a" if os_getloadavg is None else f"{os_getloadavg()[0]:.1f}"


def _median_time(f, reps: int):
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times))


def make_data(name: str, n: int, dim: int, n_queries: int, seed: int, planted: float = 6.0):
    """(V, queries) float32 row-major; "planted": Gaussian data where each query's own 5
    rows get ``+ planted q / ||q||`` (their inner products rise by ``planted`` standard
    deviations, ~2 above the natural maximum of 10^4 Gaussians)."""
    if name == "uniform":
        d = mips_uniform(n, dim, n_queries=n_queries, rng=seed)
        return d.V, d.queries
    d = mips_gaussian(n, dim, n_queries=n_queries, rng=seed)
    V, Q = d.V, d.queries
    if name == "planted":
        rows = np.random.default_rng(seed + 1).choice(n, size=(n_queries, K), replace=False)
        for i, q in enumerate(Q):
            V[rows[i]] += (planted * q / np.linalg.norm(q)).astype(V.dtype)
    return V, Q


def _paired_ratio(method_call, exact_call, reps: int):
    """(last result, median time of ``method_call`` / median time of ``exact_call``), the
    two run alternately so that drifts of the shared machine hit both alike."""
    tm, te, out = [], [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        exact_call()
        te.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = method_call()
        tm.append(time.perf_counter() - t0)
    return out, float(np.median(tm)), float(np.median(te))


def _peak_fraction(f, nbytes: int) -> float:
    """Peak Python/numpy allocation during ``f()`` as a fraction of V's bytes."""
    tracemalloc.start()
    f()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / nbytes


def bench_data_set(name: str, n: int, dim: int, n_queries: int, seed: int, *, columns: bool,
                   heuristic: bool, reps: int, banditmips: str | None) -> None:
    t0 = time.perf_counter()
    V, Q = make_data(name, n, dim, n_queries, seed)
    gen_s = time.perf_counter() - t0
    print(f"\n## {name}: {n:,} x {dim:,} float32 ({V.nbytes / 2**30:.2f} GiB), {n_queries} queries, "
          f"delta = {DELTA}, k = {K} (generated in {gen_s:.0f} s; load average {_load()})\n")
    truth, ex_times = [], []
    for q in Q:
        r, t = _median_time(lambda: exact_top_k(V, q, K), reps)
        truth.append(set(r.indices.tolist()))
        ex_times.append(t)
    t_ex = float(np.median(ex_times))
    print(f"exact float32 search: {t_ex * 1e3:.2f} ms per query ({V.nbytes / t_ex / 1e9:.1f} GB/s)\n")

    # ---- default calls: no tuning arguments, no copy of V, within 1.2x of the tuned call
    print("| data | call | method chosen (cost model) | time / exact | default / tuned | peak allocation / V |")
    print("|---|---|---|---|---|---|")
    layouts = {"row-major V": V}
    if columns:
        layouts["dimension-major V"] = np.asfortranarray(V)
    for label, data in layouts.items():
        _default_row(label, data, Q, V, reps)

    index = BoundedMEIndex(V, permute="inplace", rng=seed)  # V's columns permuted in place (no 2nd copy)
    _default_row(f"BoundedMEIndex (preprocessing {index.preprocess_seconds:.2f} s = "
                 f"{index.preprocess_seconds / t_ex:.0f} exact queries)", index, Q, V, reps)
    # (the dimension-major copy, if any, was made before the permutation: same vectors)
    layouts = {"BoundedMEIndex": index, **{k: v for k, v in layouts.items() if k != "row-major V"}}

    # ---- informative epsilon: reads and times against the model
    print(f"\n| layout | epsilon | precision@{K} | fraction read: measured / model | products | "
          "time / exact | 1.15 x fraction | target met | faster than exact | model time / exact (target) | auto runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    first = len(FIGURE_ROWS)
    for label, data in layouts.items():
        for eps in EPSILONS:
            _bandit_row(label, data, V, Q, truth, eps, reps, method="bandit")
    for row in FIGURE_ROWS[first:]:
        row["data"] = name
    if heuristic:
        print(f"\nHeuristic mode (epsilon >= 1: the guarantee says nothing; epsilon only sets how much "
              "is read):\n")
        print(f"| layout | epsilon | precision@{K} | fraction read: measured / model | products | "
              "time / exact | 1.15 x fraction | target met | faster than exact | model time / exact (target) | "
              "auto runs |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for eps in [1.0, 2.0]:
            _bandit_row("BoundedMEIndex", index, V, Q, truth, eps, reps, method="bandit")
        raw = np.ascontiguousarray(index.V[:, np.argsort(index.perm)]) if n * dim <= 10**8 else None
        if raw is not None:
            for blk, eps in [(4096 if dim >= 10**5 else 1024, 4.0), (4096 if dim >= 10**5 else 1024, 8.0),
                             (256, 4.0)]:
                _bandit_row(f"row-major V, block={blk}", raw, V, Q, truth, eps, reps, method="bandit", block=blk)
    if banditmips:
        _banditmips_rows(banditmips, index, Q, truth, t_ex, seed)


def _default_row(label: str, data, Q, raw, reps: int) -> None:
    """The default call on ``data`` against exact search on ``raw`` and against the tuned
    call (same path, checks off), each paired in time."""
    q0 = Q[0]
    mips_top_k(data, q0, K)  # compile / warm
    res = mips_top_k(data, q0, K)
    tuned_kw = {"check_finite": False, "method": res.info["method"]}
    if res.info["method"] == "bandit":
        tuned_kw["block"] = res.info["block"]
    ratios_ex, ratios_tuned = [], []
    for q in Q:
        _, td, te = _paired_ratio(lambda q=q: mips_top_k(data, q, K, rng=0),
                                  lambda q=q: exact_top_k(raw, q, K), reps)
        _, td2, tt = _paired_ratio(lambda q=q: mips_top_k(data, q, K, rng=0),
                                   lambda q=q: mips_top_k(data, q, K, rng=0, **tuned_kw), reps)
        ratios_ex.append(td / te)
        ratios_tuned.append(td2 / tt)
    nbytes = data.V.nbytes if isinstance(data, BoundedMEIndex) else data.nbytes
    peak = _peak_fraction(lambda: mips_top_k(data, q0, K, rng=0), nbytes)
    why = res.info["method"]
    if res.info.get("model_fraction_read") is not None:
        why += (f" (model: {res.info['model_fraction_read']:.0%} of V's bytes, time "
                f"{res.info['model_time_fraction']:.2f} x exact)")
    print(f"| {label} | `mips_top_k(V, q, {K})` | {why} | {np.median(ratios_ex):.3f} | "
          f"{np.median(ratios_tuned):.3f} | {peak:.4f} |")
    sys.stdout.flush()


def _bandit_row(label: str, data, raw, Q, truth, eps: float, reps: int, *, method: str,
                block: int | None = None) -> None:
    precs, ratios, fr, model, prods = [], [], [], [], []
    for i, q in enumerate(Q):
        res, tm, te = _paired_ratio(
            lambda q=q, i=i: mips_top_k(data, q, K, epsilon=eps, delta=DELTA, rng=i, method=method, block=block,
                                        check_finite=False),
            lambda q=q: exact_top_k(raw, q, K), reps)
        precs.append(len(truth[i] & set(res.indices.tolist())) / K)
        ratios.append(tm / te)
        fr.append(res.info["fraction_read"])
        model.append(res.info["model_fraction_read"])
        prods.append(res.info["fraction_products"])
    ratio = float(np.median(ratios))
    f = float(np.mean(fr))
    met = ratio <= 1.15 * f
    faster = "yes" if ratio < 1 else ("no" if f < 0.8 else "(f >= 0.8)")
    tag = "" if eps < 1 else " (heuristic)"
    # The cost model's verdict before reading: its time estimate (reads + fixed costs),
    # whether that is within the target, and what the default method="auto" runs.
    mt = res.info["model_time_fraction"]
    m_met = mt <= 1.15 * res.info["model_fraction_read"]
    auto = "exact" if mt >= EXACT_ABOVE else "bandit"
    if label == "BoundedMEIndex" and eps < 1:
        FIGURE_ROWS.append({"shape": raw.shape, "epsilon": eps,
                            "ratio": ratio, "fraction": f, "model": float(np.mean(model)),
                            "precision": float(np.mean(precs))})
    print(f"| {label} | {eps}{tag} | {np.mean(precs):.2f} | {f:.3f} / {np.mean(model):.3f} | {np.mean(prods):.3f} | "
          f"{ratio:.3f} | {1.15 * f:.3f} | {'yes' if met else 'NO'} | {faster} | {mt:.3f} "
          f"({'met' if m_met else 'not met'}) | {auto} |")
    sys.stdout.flush()


def _banditmips_rows(path: str, index: BoundedMEIndex, Q, truth, t_ex: float, seed: int) -> None:
    """The public BanditMIPS BoundedME (numba; reads sampled columns of every vector,
    then keeps the candidates' rows) at the same epsilon: the same schedule."""
    sys.path.insert(0, path)
    try:
        from algorithms.median_elimination import median_elimination  # type: ignore[import-not-found]
    except ImportError as exc:
        print(f"\n(BanditMIPS not importable from {path}: {exc})")
        return
    raw = np.ascontiguousarray(index.V[:, np.argsort(index.perm)])  # the caller's coordinate order
    median_elimination(raw, Q[:1], 0.3, DELTA, K)  # compile
    print("\nPublic BanditMIPS BoundedME (same schedule at equal epsilon; its own random columns):\n")
    print(f"| epsilon | BanditMIPS ms | precision@{K} | combex index ms | combex row-major, block=1 ms | "
          "lead (index) | lead (row-major) |")
    print("|---|---|---|---|---|---|---|")
    for eps in [0.1, 0.2, 0.3]:
        tb, tc, tr, precs = [], [], [], []
        for i, q in enumerate(Q):
            t0 = time.perf_counter()
            cand, _ = median_elimination(raw, q[None, :], eps, DELTA, K, False, False, seed + i)
            tb.append(time.perf_counter() - t0)
            precs.append(len(truth[i] & set(cand[0].tolist())) / K)
            tc.append(_median_time(lambda q=q: mips_top_k(index, q, K, epsilon=eps, delta=DELTA, rng=i,
                                                          method="bandit", check_finite=False), 1)[1])
            tr.append(_median_time(lambda q=q: mips_top_k(raw, q, K, epsilon=eps, delta=DELTA, rng=i, block=1,
                                                          method="bandit", check_finite=False), 1)[1])
        b, c, r = (float(np.median(x)) for x in (tb, tc, tr))
        print(f"| {eps} | {b * 1e3:.1f} | {np.mean(precs):.2f} | {c * 1e3:.1f} | {r * 1e3:.1f} | "
              f"{b / c:.1f}x | {b / r:.1f}x |")


def breakdown(n: int, dim: int, seed: int, reps: int) -> None:
    """Where a planned index query's time goes (planted data, epsilon 0.2 and 0.3), each
    query right after an exact search as in the tables: the compiled call, NumPy's
    ``default_rng(seed)``, the rest (``gen.integers`` and the Python around it), and the
    same query with a Generator built outside the timed call."""
    from combex.mips import _bandit

    V, Q = make_data("planted", n, dim, 5, seed)
    index = BoundedMEIndex(V, permute="inplace", rng=seed)
    print(f"\n## Breakdown of a planned query: planted, {n:,} x {dim:,} float32, {reps} x {len(Q)} queries "
          f"(load average {_load()})\n")
    print("| epsilon | fraction read | exact us | query us (int seed) | / exact | 1.15 x fraction | compiled call us | "
          "default_rng(seed) us | rest us | query us (Generator) | / exact |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for eps in [0.2, 0.3]:
        for i, q in enumerate(Q):
            res = mips_top_k(index, q, K, epsilon=eps, delta=DELTA, rng=i, method="bandit", check_finite=False)
        plan = list(index._plans.values())[-1]
        kernel, check_rng = plan.kernel, _bandit.check_rng
        acc: dict[str, list[float]] = {"kernel": [], "rng": []}

        def timed_rng(r, _f=check_rng):
            t0 = time.perf_counter()
            g = _f(r)
            acc["rng"].append(time.perf_counter() - t0)
            return g

        def timed_kernel(*a, _k=kernel):
            t0 = time.perf_counter()
            out = _k(*a)
            acc["kernel"].append(time.perf_counter() - t0)
            return out

        times: dict[str, list[float]] = {"exact": [], "int": [], "gen": []}
        for _ in range(reps):
            for i, q in enumerate(Q):
                for name in times:
                    exact_top_k(V, Q[(i + 1) % len(Q)], K)  # caches as after any other query
                    if name == "exact":
                        t0 = time.perf_counter()
                        exact_top_k(V, q, K)
                        times[name].append(time.perf_counter() - t0)
                        continue
                    g = np.random.default_rng(i) if name == "gen" else i
                    if name == "int":
                        _bandit.check_rng, plan.kernel = timed_rng, timed_kernel
                    t0 = time.perf_counter()
                    mips_top_k(index, q, K, epsilon=eps, delta=DELTA, rng=g, method="bandit", check_finite=False)
                    times[name].append(time.perf_counter() - t0)
                    _bandit.check_rng, plan.kernel = check_rng, kernel
        te, ti, tg = (float(np.median(times[x])) * 1e6 for x in ("exact", "int", "gen"))
        tk, tr = (float(np.median(acc[x])) * 1e6 for x in ("kernel", "rng"))
        f = res.info["fraction_read"]
        print(f"| {eps} | {f:.3f} | {te:.0f} | {ti:.0f} | {ti / te:.3f} | {1.15 * f:.3f} | {tk:.0f} | {tr:.0f} | "
              f"{ti - tk - tr:.0f} | {tg:.0f} | {tg / te:.3f} |")
        sys.stdout.flush()


def figure1(n: int, dim: int, runs: int, seed: int) -> None:
    print(f"\n## Figure 1: adversarial lists ({n:,} arms x {dim:,} rewards), {runs} runs per (epsilon, delta)\n")
    print("The paper's lists return their ones first, which voids the random reading order the guarantee "
          "needs: `bounded-me` refuses them unless run with `assume_random_order=True` (a heuristic run). "
          "Beside it, the same lists read in a random order (the guarantee holds).\n")
    print("| epsilon | ones first (heuristic): mean (1-delta)-percentile suboptimality | max over delta | "
          "error rate | read at random: mean percentile | error rate | random-order error <= delta |")
    print("|---|---|---|---|---|---|---|")
    deltas = [0.01, 0.05, 0.1, 0.2, 0.3]
    for eps in [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]:
        pct = {"ones-first": [], "random": []}
        err = {"ones-first": [], "random": []}
        ok = True
        for delta in deltas:
            subs = {"ones-first": [], "random": []}
            for child in np.random.SeedSequence([seed, int(eps * 100), int(delta * 100)]).spawn(runs):
                env_rng, alg_rng = np.random.default_rng(child).spawn(2)
                adv = mips_adversarial(n, dim, rng=env_rng)
                mu = adv.means()
                for order in subs:
                    lists = BinaryRewardLists(adv.ones, dim, order=order, rng=alg_rng.spawn(1)[0])
                    res = BoundedME(K=1, epsilon=eps, delta=delta, assume_random_order=True).run(lists, rng=alg_rng)
                    subs[order].append(mu.max() - mu[res.answer])
            for order, s in subs.items():
                pct[order].append(float(np.quantile(s, 1 - delta)))
                err[order].append(float(np.mean(np.asarray(s) >= eps)))
            ok &= err["random"][-1] <= delta
        print(f"| {eps} | {np.mean(pct['ones-first']):.4f} | {max(pct['ones-first']):.4f} | "
              f"{np.mean(err['ones-first']):.2f} | {np.mean(pct['random']):.4f} | {np.mean(err['random']):.2f} | {ok} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also 10^4 x 10^5 (4 GB per data set)")
    ap.add_argument("--only-full", action="store_true", help="only the 10^4 x 10^5 data sets")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--queries", type=int, default=5)
    ap.add_argument("--datasets", nargs="*", choices=["gaussian", "uniform", "planted"],
                    default=["gaussian", "uniform", "planted"])
    ap.add_argument("--columns", action="store_true", help="also dimension-major copies of V")
    ap.add_argument("--heuristic", action="store_true", help="also epsilon >= 1 (labelled heuristic)")
    ap.add_argument("--banditmips", default=None, help="path of a BanditMIPS checkout (compared on Gaussian data)")
    ap.add_argument("--reps", type=int, default=3,
                    help="alternated repeats per query at n x dim <= 1e8 (median; 1 above); more on a shared machine")
    ap.add_argument("--breakdown", action="store_true",
                    help="only the breakdown of a planned query (planted, 2,000 x 20,000, epsilon 0.2 and 0.3)")
    ap.add_argument("--skip-figure1", action="store_true")
    _figures.add_option(ap)
    ap.add_argument("--figure1", nargs=3, type=int, default=None, metavar=("N", "DIM", "RUNS"),
                    help="Figure 1 size (default 2,000 x 20,000, 10 runs; the paper: 10,000 100,000 20)")
    args = ap.parse_args()
    print(f"# BoundedME benchmarks (seed {args.seed}; {args.reps} repeats per query; load average at start {_load()})")
    if args.breakdown:
        breakdown(2_000, 20_000, args.seed, max(args.reps, 9))
        return
    sizes = [] if args.only_full else [(2_000, 20_000)]
    if args.full or args.only_full:
        sizes.append((10_000, 100_000))
    for n, dim in sizes:
        for name in args.datasets:
            bench_data_set(name, n, dim, args.queries, args.seed, columns=args.columns, heuristic=args.heuristic,
                           reps=args.reps if n * dim <= 10**8 else 1,
                           banditmips=args.banditmips if name == "gaussian" else None)
    if not args.skip_figure1:
        figure1(*(args.figure1 or (2_000, 20_000, 10)), args.seed)
    if args.figures is not None and FIGURE_ROWS:
        time_figure(args.figures)


def time_figure(folder) -> None:
    """Query time over exact search's, and the fraction of V's bytes read (measured; the
    cost model dashed), against epsilon, for each data set of BoundedMEIndex queries."""
    plt = _figures.pyplot()
    shapes = list(dict.fromkeys(r["shape"] for r in FIGURE_ROWS))
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.4 * len(shapes), 3.9), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        rows = [r for r in FIGURE_ROWS if r["shape"] == shape]
        for i, name in enumerate(dict.fromkeys(r["data"] for r in rows)):
            sel = [r for r in rows if r["data"] == name]
            eps = [r["epsilon"] for r in sel]
            color = f"C{i}"
            ax.plot(eps, [r["ratio"] for r in sel], marker="o", color=color, label=f"{name}: time / exact search")
            ax.plot(eps, [r["fraction"] for r in sel], marker="s", mfc="none", ls=":", color=color,
                    label=f"{name}: fraction of V read")
            ax.plot(eps, [r["model"] for r in sel], ls="--", lw=0.8, color=color)
        ax.axhline(1.0, color="k", lw=1)
        ax.text(EPSILONS[-1], 0.95, "exact search (BLAS V @ q) = 1", va="top", ha="right")
        ax.set(xscale="log", yscale="log", xlabel="epsilon (delta = 0.1, k = 5)",
               ylabel="query time / exact search time; fraction read",
               title=f"BoundedMEIndex queries, {shape[0]:,} x {shape[1]:,} float32 (dashed: the cost model's fraction)")
        ax.title.set_fontsize(8.5)
        ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
        ticks = [t for t in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5) if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.legend(loc="lower left", ncol=1)
    _figures.save(fig, folder, __file__, "time-vs-exact")


if __name__ == "__main__":
    main()
