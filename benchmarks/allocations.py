"""Benchmark: G-optimal designs, cvxpy (CLARABEL) vs Frank-Wolfe, plus XY and supports.

Prints time and objective (G-value; the optimum is d) for d = 20, 50, 111 and 100 to
2,000 candidates. cvxpy is skipped where the extrapolated time (previous size times the
growth in m * d^2) exceeds 60 s, and the table says so. Run:

    python benchmarks/allocations.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from combex.allocations import (
    g_optimal_design,
    max_g_value_topk,
    topk_support,
    uniform_topk_g_value,
    xy_optimal_design,
)

CVX_LIMIT = 60.0


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def g_table(dims, sizes, seed=0):
    print("G-optimal design (rows: Gaussian candidates; optimum G-value = d)")
    print(f"{'d':>4} {'m':>6} | {'cvxpy s':>9} {'cvxpy G-d':>10} | {'FW s':>7} {'FW G-d':>9} {'FW iters':>8} {'supp':>5}")
    rng = np.random.default_rng(seed)
    for d in dims:
        last = None  # (seconds, m) of the last cvxpy run at this d
        for m in sizes:
            if m < d:
                continue
            X = rng.standard_normal((m, d))
            fw, t_fw = timed(g_optimal_design, X, method="frank-wolfe", tol=1e-6)
            predicted = None if last is None else last[0] * m / last[1]
            # CLARABEL's time grows about like d^4 (d = 20, m = 100: ~1 s; d = 50: ~40 s),
            # so d > 50 is predicted above the limit without trying.
            if d > 50 or (predicted is not None and predicted > CVX_LIMIT):
                cvx_txt = f"{'skipped':>9} {'(>60 s)':>10}"
            else:
                cv, t_cv = timed(g_optimal_design, X, method="cvxpy")
                last = (t_cv, m)
                cvx_txt = f"{t_cv:9.2f} {cv.kw_gap:10.2e}"
                if t_cv > CVX_LIMIT:
                    last = (np.inf, m)
            print(f"{d:4d} {m:6d} | {cvx_txt} | {t_fw:7.3f} {fw.kw_gap:9.2e} {fw.iterations:8d} {fw.support.size:5d}", flush=True)


def xy_table(seed=1):
    print("\nXY-optimal design, Y = all differences (FW tol = 1e-3, certified)")
    print(f"{'d':>4} {'m':>5} {'|Y|':>6} | {'cvxpy s':>8} {'cvxpy val':>10} | {'FW s':>7} {'FW val':>10} {'FW gap/val':>10}")
    rng = np.random.default_rng(seed)
    for m, d, run_cvx in [(10, 3, True), (20, 5, True), (40, 8, True), (100, 20, False), (200, 10, False)]:
        X = rng.standard_normal((m, d))
        fw, t_fw = timed(xy_optimal_design, X, method="frank-wolfe")
        if run_cvx:
            cv, t_cv = timed(xy_optimal_design, X, method="cvxpy")
            cvx_txt = f"{t_cv:8.2f} {cv.value:10.4f}"
        else:
            cvx_txt = f"{'skipped':>8} {'(>60 s)':>10}"
        print(f"{d:4d} {m:5d} {m * (m - 1) // 2:6d} | {cvx_txt} | {t_fw:7.2f} {fw.value:10.4f} {fw.gap / fw.value:10.2e}", flush=True)


def topk_table():
    print("\nTop-k supports: G-value over ALL k-subsets of the G-optimal design on the support")
    print("(the uniform design over all k-subsets has G-value n, closed form)")
    print(f"{'n':>4} {'k':>3} {'|supp|':>6} | {'G on supp':>9} {'G over class':>12} {'uniform all':>11}")
    for n, k in [(8, 3), (10, 5), (12, 4), (16, 4), (20, 3)]:
        S = topk_support(n, k).astype(float)
        des = g_optimal_design(S)
        g_all = max_g_value_topk(des.information(S), k)
        print(f"{n:4d} {k:3d} {S.shape[0]:6d} | {des.value:9.4f} {g_all:12.4f} {uniform_topk_g_value(n, k):11.4f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small grid (CI smoke run)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if args.quick:
        g_table([20], [100, 200])
    else:
        g_table([20, 50, 111], [100, 250, 500, 1000, 2000])
        xy_table()
        topk_table()
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
