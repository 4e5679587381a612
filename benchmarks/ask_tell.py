"""Per-sample cost of the ask / tell path against a plain-numpy loop of the same algorithm.

Prints, side by side from ONE run (so the ratios hold on a loaded machine):

* LinGapE (greedy rule, epsilon = 0): microseconds per sample of a plain-numpy loop
  written as a user would (Sherman-Morrison inverse, one vectorized scoring per round, no
  environment object), of combex's ask / tell loop against a simulated environment
  (``exp.ask()``, ``env.pull_many``, ``exp.tell_batch``), and of the fast path
  (``LinGapE().run(env)``), on Soare d = 5 and on the diabetes instance (K = 20, +-1
  rewards, R = 2);
* semi-bandit solvers: per-round time of ``solver.run`` against a plain-numpy loop of the
  same algorithm that takes exactly the same number of samples (checked);
* SAQM (default certified alpha) against Exhaustive: time per round at n = 24, k = 12.

    OPENBLAS_NUM_THREADS=1 python benchmarks/ask_tell.py [--samples 20000] [--sections lingape semi saqm]

The ask / tell figures exclude the one-time compilation of the numba kernel (a warm-up run
compiles it or loads it from numba's cache); ``numba`` is the ``mips`` extra.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from combex.environments import diabetes_linear, soare
from combex.solvers import get_solver
from combex.solvers._lingape_kernel import HAVE_NUMBA, compiled_round


# ====================================================================== LinGapE
def plain_lingape(X, means, sigma, pm1, *, delta=0.05, R=1.0, S=1.0, ridge=1.0, budget=20_000, seed=0):
    """LinGapE (Algorithm 1, greedy rule (9), C_t of eq. (3)) as a plain numpy loop.

    Returns (samples, seconds)."""
    rng = np.random.default_rng(seed)
    K, d = X.shape
    A_inv = np.eye(d) / ridge
    b = np.zeros(d)
    logdet = d * math.log(ridge)
    p_plus = (1.0 + means) / 2.0

    def pull(a):
        if pm1:
            return 1.0 if rng.random() < p_plus[a] else -1.0
        return means[a] + sigma * rng.standard_normal()

    def add(x, r):
        nonlocal A_inv, b, logdet
        u = A_inv @ x
        den = 1.0 + x @ u
        A_inv = A_inv - np.outer(u, u) / den
        b = b + r * x
        logdet += math.log(den)

    t0 = time.perf_counter()
    for a in range(K):
        add(X[a], pull(a))
    t = K
    while t < budget:
        theta = A_inv @ b
        C = R * math.sqrt(max(logdet - d * math.log(ridge) - 2.0 * math.log(delta), 0.0)) + math.sqrt(ridge) * S
        u = X @ theta
        i = int(np.argmax(u))
        D = X - X[i]
        n2 = np.einsum("ij,jk,ik->i", D, A_inv, D)
        F = u - u[i] + C * np.sqrt(np.maximum(n2, 0.0))
        F[i] = 0.0
        j = int(np.argmax(F))
        if F[j] <= 0.0:
            break
        y = X[i] - X[j]
        XA = X @ A_inv
        score = (XA @ y) ** 2 / (1.0 + np.einsum("ij,ij->i", XA, X))
        a = int(np.argmax(score))
        add(X[a], pull(a))
        t += 1
    return t, time.perf_counter() - t0


def asktell(solver, env, budget, seed=0):
    exp = solver.start(env, rng=seed)
    t0 = time.perf_counter()
    while not exp.done and exp.samples < budget:
        batch = exp.ask()
        exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
    return exp.samples, time.perf_counter() - t0


def lingape_section(budget: int) -> None:
    LinGapE = get_solver("lingape")
    if HAVE_NUMBA:
        compiled_round()
    print("## LinGapE: microseconds per sample\n")
    print(f"ask/tell and plain loop: the first {budget:,} samples (or the stop); fast path: a whole run.")
    print(f"numba kernel: {'yes' if HAVE_NUMBA else 'no (numpy path)'}.\n")
    print("| instance | plain numpy loop | combex ask/tell | ask/tell / plain | fast path (whole run) | fast-path samples |")
    print("|---|---|---|---|---|---|")
    cases = (
        ("Soare d = 5", lambda s: soare(5, rng=s), {}, False),
        ("diabetes K = 20", lambda s: diabetes_linear(20, rng=s), {"R": 2.0}, True),
    )
    for label, make, kw, pm1 in cases:
        solver = LinGapE(**kw)
        env = make(1)
        asktell(solver, make(1), 2000)  # warm-up (numba cache load, BLAS)
        solver.run(make(1), rng=0, budget=50)  # warm-up: T* of the lower-bound ratio is cached
        S = float(env.problem.info["S"])
        n_p, t_p = plain_lingape(env.features, env.means(), env.noise.sigma, pm1, R=kw.get("R", 1.0), S=S,
                                 budget=budget)
        n_a, t_a = asktell(solver, make(1), budget)
        t0 = time.perf_counter()
        res = solver.run(make(1), rng=0)
        t_f = time.perf_counter() - t0
        us_p, us_a, us_f = 1e6 * t_p / n_p, 1e6 * t_a / n_a, 1e6 * t_f / res.samples
        print(f"| {label} | {us_p:.1f} | {us_a:.1f} | {us_a / us_p:.2f} | {us_f:.2f} | {res.samples:,} |", flush=True)
    print()


# ====================================================================== main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20_000, help="LinGapE samples per ask/tell measurement")
    ap.add_argument("--sections", nargs="+", default=["lingape", "semi", "saqm"])
    args = ap.parse_args()
    if "lingape" in args.sections:
        lingape_section(args.samples)
    if "semi" in args.sections:
        semi_section()
    if "saqm" in args.sections:
        saqm_section()


def semi_section() -> None:  # filled below
    pass


def saqm_section() -> None:  # filled below
    pass


if __name__ == "__main__":
    main()
