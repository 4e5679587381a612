"""Asymptotically optimal linear pure exploration on Soare et al.'s instance (issue 15).

One run, the same seeds for every algorithm: LinGame, RAGE, linear Top-Two, linear
Frank-Wolfe sampling and the oracle sampler (tracks the true optimal allocation p*), each
with the valid mixture threshold and with the papers' heuristic threshold
``log((1 + log t) / delta)``, beside combex's seed-paper algorithms (LinGapE, XY-static,
XY-adaptive, XY-oracle). Prints a markdown table: mean samples, ``samples / (T*
log(1/delta))``, ``samples / oracle sampler`` (same threshold, same seeds: the sampling
rule's own cost), errors, microseconds per sample.

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py                # 20 seeds
    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --seeds 5 --no-xy   # quick
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from combex.environments import soare
from combex.solvers import RAGE, LinearFWSampling, LinearTopTwo, LinGame
from combex.solvers._lower_bound import characteristic_time
from combex.solvers.linear import LinGapE, XYAdaptive, XYOracle, XYStatic
from combex.solvers.optimal_linear import OracleSampler


def run(solver, d, seeds):
    rows = []
    for s in seeds:
        env = soare(d, rng=1000 + s)
        t0 = time.perf_counter()
        r = solver.run(env, rng=s)
        rows.append((r.samples, time.perf_counter() - t0, r.answer == env.best(), r.status))
    return rows


def main() -> None:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--no-xy", action="store_true", help="skip the XY baselines (slow)")
    args = ap.parse_args()
    d, delta, seeds = args.d, args.delta, list(range(args.seeds))
    env = soare(d)
    lb = characteristic_time(env.features, env.theta)
    bound = lb.T_star * math.log(1.0 / delta)
    print(f"soare d={d}, delta={delta}, {len(seeds)} seeds; T* = {lb.T_star:.1f}, "
          f"T* log(1/delta) = {bound:.4g}\n")
    table = []
    oracle_mean = {}
    for thr in ("mixture", "heuristic"):
        algos = [
            ("oracle sampler (p*)", OracleSampler(lb.allocation, delta, threshold=thr)),
            ("lingame", LinGame(delta, threshold=thr)),
            ("top-two (linear)", LinearTopTwo(delta, threshold=thr)),
            ("fw-sampling (linear)", LinearFWSampling(delta, threshold=thr)),
        ]
        for name, solver in algos:
            rows = run(solver, d, seeds)
            mean = float(np.mean([r[0] for r in rows]))
            if name.startswith("oracle"):
                oracle_mean[thr] = mean
            table.append((name, thr, rows, mean, mean / oracle_mean[thr]))
            print(f"  done {name} / {thr}", flush=True)
    base = [("rage", RAGE(delta)), ("LinGapE", LinGapE(delta))]
    if not args.no_xy:
        base += [("XY-oracle", XYOracle(delta)), ("XY-static", XYStatic(delta)), ("XY-adaptive", XYAdaptive(delta))]
    for name, solver in base:
        rows = run(solver, d, seeds)
        mean = float(np.mean([r[0] for r in rows]))
        table.append((name, "own (valid)", rows, mean, mean / oracle_mean["mixture"]))
        print(f"  done {name}", flush=True)
    print()
    print("| algorithm | threshold | mean samples | / T* log(1/delta) | / oracle sampler (same threshold) "
          "| errors | us / sample |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, thr, rows, mean, orc in table:
        errors = sum(1 for r in rows if not r[2])
        us = 1e6 * sum(r[1] for r in rows) / sum(r[0] for r in rows)
        print(f"| {name} | {thr} | {mean:,.0f} | {mean / bound:.2f} | {orc:.2f} | {errors}/{len(rows)} | {us:.2f} |")


if __name__ == "__main__":
    main()
