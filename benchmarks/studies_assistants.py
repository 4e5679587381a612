"""Live studies with several assistants: the cost of parallelism and of a held ticket.

Simulated people (:func:`combex.studies.testing.simulate_assistants`): each assistant asks
for a ticket, takes an exponential time (mean 60 minutes) to run the session and enter the
score, and asks again; one who gets no ticket checks back after 15 minutes. For 1
(sequential), 3 and 8 assistants, and for one held ticket (taken at the start by someone
who never comes back) with 1 and 3 assistants, the script prints over ``--runs`` seeded
studies: the mean number of evaluations told until the stop, its ratio to the sequential
study (the peer measured in the same run), the error rate with its Clopper-Pearson 95%
upper bound, the asks that got no ticket while the study ran, and the simulated days.

Solvers (``--solver``):

* ``lucb``: LUCB (K = 1, nu = 0.1; eager policy) on four Bernoulli arms of means 0.9, 0.4,
  0.3, 0.2;
* ``top-two`` (or any full-bandit solver name): the lab case, 12 workers, the best team of
  4, one session's score = the members' qualities (``lab-teams``: best team 74, second 72)
  plus N(0, 10^2) session noise; delta = 0.1, epsilon = 5 (correct = a team within 5 of
  the best); the noise scale is declared (``--unknown-noise``: not declared, for solvers
  that estimate it).

Run: python benchmarks/studies_assistants.py --solver lucb [--runs 20]
     python benchmarks/studies_assistants.py --solver top-two [--runs 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

import combex.studies as cs
from combex.environments._instances_full import LAB_QUALITIES, LAB_WORKERS
from combex.studies.testing import simulate_assistants

BERNOULLI = np.array([0.9, 0.4, 0.3, 0.2])
LAB = np.asarray(LAB_QUALITIES)
LAB_BEST = float(np.sort(LAB)[-4:].sum())


def _case(solver: str, unknown_noise: bool, seed: int) -> tuple:
    if solver in ("lucb", "lil-lucb", "lucb++", "lil-ucb", "lil-randlucb", "lil-clucb"):
        study = cs.create_study(name="s", problem=cs.problem_spec(4, noise="bernoulli"), solver=solver,
                                solver_params={"K": 1, "delta": 0.1}, seed=seed)

        def score(t, rng):
            return float(rng.binomial(t.count, BERNOULLI[t.arm]))

        def correct(answer):
            return answer == [0]

        return study, score, correct
    spec = cs.problem_spec(workers=list(LAB_WORKERS), team_size=4, score_range=(0, 100),
                           noise_scale=None if unknown_noise else 10.0)
    study = cs.create_study(name="s", problem=spec, solver=solver, solver_params={"delta": 0.1, "epsilon": 5},
                            seed=seed)

    def score(t, rng):
        return float(np.clip(LAB[t.arm].sum() + rng.normal(0.0, 10.0), 0.0, 100.0)) * t.count

    def correct(answer):
        return LAB[answer].sum() >= LAB_BEST - 5.0

    return study, score, correct


def cp_upper(k: int, n: int, level: float = 0.95) -> float:
    return 1.0 if k >= n else float(stats.beta.ppf(level, k + 1, n - k))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--solver", default="lucb")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--unknown-noise", action="store_true")
    ap.add_argument("--max-evaluations", type=int, default=20_000)
    args = ap.parse_args()
    configs = [("sequential", 1, 0), ("3 assistants", 3, 0), ("8 assistants", 8, 0), ("1 + held ticket", 1, 1),
               ("3 + held ticket", 3, 1)]
    print(f"{args.solver}: {args.runs} seeded studies per row (simulated sessions of mean 60 min)", flush=True)
    print(f"{'':<18}{'evaluations':>12}{'ratio':>8}{'errors':>8}{'CP95 up':>9}{'empty asks':>12}{'days':>8}"
          f"{'policy':>8}", flush=True)
    base = None
    for label, m, hold in configs:
        evals, errs, empty, hours = [], 0, [], []
        t0 = time.perf_counter()
        policy = ""
        for seed in range(args.runs):
            study, score, correct = _case(args.solver, args.unknown_noise, seed)
            policy = study.storage.get_study("s").policy
            r = simulate_assistants(study, score, assistants=m, hold=hold, rng=10_000 + seed,
                                    max_evaluations=args.max_evaluations)
            evals.append(r["evaluations"])
            errs += not correct(r["answer"]) if r["status"] == "identified" else 1
            empty.append(r["empty_asks"])
            hours.append(r["hours"])
        mean = float(np.mean(evals))
        if base is None:
            base = mean
        print(f"{label:<18}{mean:>12.1f}{mean / base:>8.2f}{errs:>8d}{cp_upper(errs, args.runs):>9.3f}"
              f"{np.mean(empty):>12.1f}{np.mean(hours) / 24:>8.1f}{policy:>8}"
              f"   ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
