"""What the yardstick costs beside the run it measures: ``T*`` against one LinGame run.

Every linear run reports ``lower_bound_ratio = samples / (T* log(1/delta))``; ``T*`` comes
from :func:`combex.identification.characteristic_time` (``method="auto"``: the
interior-point design with a certified relative gap of 1e-6), cached per instance. For
each instance this prints, measured in the same process, the CPU time of one cold ``T*``
solve (cache emptied first), the CPU time of a LinGame run at delta = 0.05 (the median over
``--seeds`` runs; ``T*`` is then a cache hit inside the run), their ratio, and ``T*`` with
its certified relative gap ``(T_hi - T_lo) / T_hi``. ``--methods`` adds Frank-Wolfe to a 1%
certified gap and cvxpy (no certificate) on the small instances, for comparison.

    OPENBLAS_NUM_THREADS=1 python benchmarks/yardstick.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/yardstick.py --seeds 3 --methods

Instances: Soare et al.'s (d = 5), random Gaussian features and parameter (d = 20, K = 40
and d = 50, K = 100, seed 0), and ``kuroki-synthetic`` n = 8, k = 3 (the 56 teams of
``benchmarks/optimal_linear.py --teams``). Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import combex.identification._linear as lbm
from combex.environments import LinearBandit, soare
from combex.experiments._instances import make_instance
from combex.identification import characteristic_time
from combex.identification._teams import _team_arms, true_noise_scale
from combex.solvers import LinGame

DELTA = 0.05


def _random(K: int, d: int, seed: int, s: int) -> LinearBandit:
    g = np.random.default_rng(seed)
    return LinearBandit(g.normal(size=(K, d)), g.normal(size=d), rng=s)


INSTANCES = [
    ("soare d=5", lambda s: soare(5, rng=1000 + s)),
    ("random d=20 K=40", lambda s: _random(40, 20, 0, s)),
    ("random d=50 K=100", lambda s: _random(100, 50, 0, s)),
    ("kuroki n=8 k=3 (56 teams)", lambda s: make_instance("kuroki-synthetic", rng=100, n=8, k=3)),
]


def truth(env):
    """The arguments ``characteristic_time`` gets inside a run (``_LinearTruthRun``)."""
    if getattr(env, "arm_type", "index") == "mask":
        X, _, _ = _team_arms(env.problem, 5000, "yardstick")
        return X, np.asarray(env.means(), dtype=np.float64), true_noise_scale(env, int(X.sum(axis=1).max()))
    return env.features, env.theta, true_noise_scale(env, 1)


def cold(X, theta, sigma, method="auto", **kw):
    lbm._CACHE.clear()
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = characteristic_time(X, theta, sigma=sigma, method=method, **kw)
    return time.process_time() - t0, lb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1, help="LinGame runs per instance (median CPU time)")
    ap.add_argument("--methods", action="store_true", help="also Frank-Wolfe (30 iterations) and cvxpy on small instances")
    args = ap.parse_args()
    print(f"LinGame, delta = {DELTA}; CPU seconds (time.process_time), one process\n")
    print("| instance | yardstick CPU s | run CPU s | yardstick / run | T* | certified gap | run samples |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    extra = []
    for name, make in INSTANCES:
        env = make(0)
        X, theta, sigma = truth(env)
        t_y, lb = cold(X, theta, sigma)
        runs, samples = [], []
        for s in range(args.seeds):
            e = make(s)
            t0 = time.process_time()
            r = LinGame(delta=DELTA).run(e, rng=s)
            runs.append(time.process_time() - t0)
            samples.append(r.samples)
        t_run = statistics.median(runs)
        print(f"| {name} | {t_y:.3f} | {t_run:.3f} | {t_y / t_run:.2f} | {lb.T_star:.6g} | {lb.gap:.1e} | "
              f"{int(statistics.median(samples))} |")
        if args.methods and X.shape[0] <= 60:
            t_fw, fw = cold(X, theta, sigma, method="frank-wolfe", tol=1e-2)
            extra.append((name, "frank-wolfe to 1%", t_fw, fw))
            if X.shape[0] * (X.shape[1] + 1) ** 2 <= 4000:
                t_cv, cv = cold(X, theta, sigma, method="cvxpy")
                extra.append((name, "cvxpy", t_cv, cv))
    if extra:
        print("\n| instance | method | CPU s | T* | certified gap |")
        print("|---|---|---:|---:|---:|")
        for name, meth, t, lb in extra:
            print(f"| {name} | {meth} | {t:.3f} | {lb.T_star:.6g} | {lb.gap:.1e} |")


if __name__ == "__main__":
    main()
