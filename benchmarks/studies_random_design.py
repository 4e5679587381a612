"""Adaptive teams (``top-two``) against random teams (``random-design``) on lab-sized team
problems, the noise level unknown (a study's default).

Each instance is a full-bandit team problem (a session's score = the sum of its members'
qualities + N(0, sigma^2)); both solvers run on the same seeds to their stop. Prints, per
instance, the mean and median sessions of each, their ratio and the errors (answers not
epsilon-good).

    python benchmarks/studies_random_design.py --seeds 10
    python benchmarks/studies_random_design.py --seeds 10 --known-noise
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from combex.environments import FullBandit
from combex.environments._instances_full import LAB_QUALITIES
from combex.solvers import get_solver

SPREAD = [20.0, 19.0, 18.0, 17.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0, 9.0, 8.0]
#: name: (qualities, team size, noise sd, epsilon, delta)
INSTANCES = {
    "12 workers, k 4, guide's gap 5 (eps 5, delta 0.1)": ([20.0] * 4 + [15.0] * 8, 4, 10.0, 5.0, 0.1),
    "12 workers, k 4, spread (eps 5, delta 0.1)": (SPREAD, 4, 10.0, 5.0, 0.1),
    "12 workers, k 4, spread (eps 0, delta 0.05)": (SPREAD, 4, 10.0, 0.0, 0.05),
    "12 workers, k 4, LAB_QUALITIES (eps 0, delta 0.05)": (list(LAB_QUALITIES), 4, 10.0, 0.0, 0.05),
    "8 workers, k 3, gap 5 (eps 5, delta 0.1)": ([20.0] * 3 + [15.0] * 5, 3, 10.0, 5.0, 0.1),
}


def one(args: tuple) -> tuple[int, bool]:
    q, k, sd, eps, delta, known, solver, seed = args
    env = FullBandit(np.asarray(q), k=k, noise="gaussian", sigma=sd, noise_level="observation", noise_known=known,
                     rng=np.random.default_rng([seed, 0]))
    r = get_solver(solver)(delta=delta, epsilon=eps).run(env, rng=np.random.default_rng([seed, 1]), budget=500_000)
    return int(r.samples), bool(not env.is_correct(r.answer, eps))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--known-noise", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"noise {'declared' if args.known_noise else 'unknown'}, {args.seeds} seeds, same seeds for both solvers\n")
    print("| instance | top-two mean (median) | random-design mean (median) | random / top-two | errors |")
    print("|---|---:|---:|---:|---:|")
    with ProcessPoolExecutor(args.jobs) as ex:
        for name, (q, k, sd, eps, delta) in INSTANCES.items():
            cols, errs = [], 0
            for solver in ("top-two", "random-design"):
                out = list(ex.map(one, [(q, k, sd, eps, delta, args.known_noise, solver, s) for s in range(args.seeds)]))
                n = [o[0] for o in out]
                errs += sum(o[1] for o in out)
                cols.append((float(np.mean(n)), float(np.median(n))))
            print(f"| {name} | {cols[0][0]:,.0f} ({cols[0][1]:,.0f}) | {cols[1][0]:,.0f} ({cols[1][1]:,.0f}) | "
                  f"{cols[1][0] / cols[0][0]:.2f} | {errs}/{2 * args.seeds} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
