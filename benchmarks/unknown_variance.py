"""Unknown noise against the true noise declared, side by side on the same seeds.

For each instance, the same solver runs twice on every seed (common random numbers): with the
true noise scale declared (the known-variance GLR) and with no scale declared (the default
unknown-variance rule: a time-uniform variance bound from the residuals, the GLR threshold at
delta / 2). Printed: median and mean samples of each, their ratio, errors against delta
(Clopper-Pearson 95% upper bound), and a third column with the scale declared 10x too small
(how many runs the test of the declared scale flagged, and the errors).

Instances:

* ``lab``: the lab case (``lab-teams``: 12 workers, the best team of 4, session noise sd 10,
  epsilon 5, delta 0.1), top-two;
* ``soare``: Soare et al.'s linear instance, d = 5, delta 0.05, top-two (linear);
* ``mab5``: Gaussian best arm (1, 0.8, 0.6, 0.4, 0.2), sigma 1, delta 0.01, top-two.

Targets: unknown / known <= 1.5 on the lab case, <= 1.3 on soare and mab5, and no more
errors than delta allows.

    OPENBLAS_NUM_THREADS=1 python benchmarks/unknown_variance.py --seeds 50
    python benchmarks/unknown_variance.py --instances mab5 --seeds 200
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from scipy.stats import beta as beta_dist

from combex.environments import GaussianArms, soare
from combex.exceptions import NoiseScaleWarning
from combex.experiments import make_instance
from combex.solvers import get_solver


def _cp_upper(k: int, n: int) -> float:
    return 1.0 if k >= n else float(beta_dist.ppf(0.95, k + 1, n - k))


def _instance(name: str, seed: int, mode: str):
    """(environment, solver, epsilon, delta) of one run; ``mode`` is known / unknown / wrong."""
    if name == "lab":
        env = make_instance("lab-teams", rng=seed, known_noise=(mode != "unknown"))
        sigma = {"known": None, "unknown": None, "wrong": 1.0}[mode]
        return env, get_solver("top-two")(delta=0.1, epsilon=5.0, sigma=sigma), 5.0, 0.1
    if name == "soare":
        env = soare(5, rng=seed)
        if mode == "unknown":
            env.noise = type(env.noise)(kind="gaussian", sigma=None)
        sigma = 0.1 * float(env.noise.sigma) if mode == "wrong" else None
        return env, get_solver("top-two")(delta=0.05, sigma=sigma), 0.0, 0.05
    env = GaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], sigma=1.0, rng=seed)
    if mode == "unknown":
        env.noise = type(env.noise)(kind="gaussian", sigma=None)
    return env, get_solver("top-two")(delta=0.01, sigma=0.1 if mode == "wrong" else None), 0.0, 0.01


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", default="lab,soare,mab5")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--no-wrong", action="store_true", help="skip the misdeclared column")
    args = ap.parse_args(argv)
    print(f"{'instance':<8} {'mode':<10} {'median':>8} {'mean':>9} {'errors':>8} {'CP95':>6} {'flagged':>8} {'s/run':>6}")
    for name in args.instances.split(","):
        rows = {}
        for mode in ("known", "unknown") + (() if args.no_wrong else ("wrong",)):
            samples, wrong, flagged = [], 0, 0
            t0 = time.perf_counter()
            for seed in range(args.seeds):
                env, solver, eps, delta = _instance(name, seed, mode)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", NoiseScaleWarning)
                    r = solver.run(env, rng=100_000 + seed)
                samples.append(r.samples)
                wrong += not env.is_correct(r.answer, eps)
                flagged += bool((r.info.get("noise_check") or {}).get("rejected"))
            dt = (time.perf_counter() - t0) / args.seeds
            rows[mode] = np.asarray(samples, dtype=float)
            print(f"{name:<8} {mode:<10} {np.median(samples):>8.0f} {np.mean(samples):>9.1f} "
                  f"{wrong:>4}/{args.seeds:<3} {_cp_upper(wrong, args.seeds):>6.3f} "
                  f"{flagged if mode == 'wrong' else '-':>8} {dt:>6.2f}")
        r_med = np.median(rows["unknown"]) / np.median(rows["known"])
        r_mean = rows["unknown"].mean() / rows["known"].mean()
        print(f"{name:<8} {'ratio':<10} unknown / known: median {r_med:.3f}, mean {r_mean:.3f} "
              f"(per seed, median of ratios {np.median(rows['unknown'] / rows['known']):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
