"""Runner benchmark: 1,000 short runs on one process vs two, and on a Dask LocalCluster.

Prints the wall time of the sweep with jobs=1 and jobs=2 (local processes), the speedup,
and whether a Dask LocalCluster(n_workers=2) gives the identical results table (wall
times excluded). Usage: python benchmarks/runner.py [--runs 1000] [--no-dask]
"""

from __future__ import annotations

import argparse
import os
import time

from combex.experiments import run_sweep, sweep_from_lists


def sweep(runs: int):
    # lil'RandLUCB on small Best-1 instances of Jiang et al.: ~10-30 ms per run
    return sweep_from_lists(["lil-randlucb"], ["jiang-1sparse"], runs=runs // 2, seed=2024,
                            instance_params={"K": 1}, instance_grid={"N": [4, 6]}, name="bench")


def timed(runs: int, **kw):
    t0 = time.perf_counter()
    rep = run_sweep(sweep(runs), None, progress=False, **kw)
    return time.perf_counter() - t0, rep.table().drop(columns=["wall_seconds"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    t1, df1 = timed(args.runs, jobs=1, backend="serial")
    print(f"{args.runs} runs, jobs=1 (in-process):   {t1:7.2f} s")
    t2, df2 = timed(args.runs, jobs=2, backend="processes")
    print(f"{args.runs} runs, jobs=2 (processes):    {t2:7.2f} s   speedup {t1 / t2:.2f}x")
    print(f"identical results (1 vs 2 processes): {df1.equals(df2)}")
    if not args.no_dask:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            print("dask.distributed not installed: Dask check skipped")
            return
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            t3, df3 = timed(args.runs, backend="dask", scheduler=client)
        print(f"{args.runs} runs, Dask LocalCluster(2):  {t3:7.2f} s   speedup {t1 / t3:.2f}x")
        print(f"identical results (in-process vs Dask): {df1.equals(df3)}")


if __name__ == "__main__":
    main()
