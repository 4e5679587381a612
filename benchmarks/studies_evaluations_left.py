"""How far a study's ``evaluations_left`` is from the sessions a study actually still needs.

The lab case, simulated: 12 workers with the hidden qualities of
``combex.environments._instances_full.LAB_QUALITIES``, teams of 4, session scores = the sum
of the members' qualities + N(0, 10^2), rounded to 0.1 and clipped to [0, 100], the noise
level unknown to the study, top-two at delta 0.05, run to its stop. Every ``--every``
sessions it reads ``Study.best()``: the estimate, the stopping statistic over its threshold,
and (after the stop) the sessions that were actually left. Prints the ratio estimate /
actual, grouped by where the statistic stood (under / over 5% of its threshold, the point
from which ``evaluations_left`` is reported), for the readings with more than ``--min-left``
sessions left.

    python benchmarks/studies_evaluations_left.py --seeds 2 3
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

import combex.studies as cs
from combex.environments._instances_full import LAB_QUALITIES, LAB_WORKERS
from combex.solvers._bisect import LEFT_MIN_PROGRESS, samples_left


def run(seed: int, every: int, directory: str) -> tuple[int, list[tuple[int, float | None, float]]]:
    problem = cs.problem_spec(workers=list(LAB_WORKERS), team_size=4, score_range=(0, 100))
    study = cs.create_study(storage=str(Path(directory) / f"lab{seed}.db"), name="lab", problem=problem,
                            solver="top-two", solver_params={"delta": 0.05}, seed=seed)
    gen = np.random.default_rng(seed)
    n, rows = 0, []
    while study.status == "running":
        t = study.ask()
        score = sum(LAB_QUALITIES[i] for i in t.arm) + gen.normal(0, 10)
        study.tell(t.id, float(np.clip(round(score, 1), 0, 100)))
        n += 1
        if n % every == 0 and study.status == "running":
            b = study.best()
            z, beta = float(b["statistic"]), float(b["threshold"])
            # the study's estimate; where it reports None (too early), the same extrapolation
            # without the cut (the linear rule's threshold grows like d/2 log t, d = 12 workers)
            raw = b["evaluations_left"]
            if raw is None:
                raw = samples_left(z, beta, float(n), slope=0.5 * len(LAB_WORKERS), min_progress=0.0)
            rows.append((n, raw, z / beta))
    return n, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--min-left", type=int, default=1000)
    args = ap.parse_args()
    groups: dict[str, list[float]] = {"under": [], "over": []}
    with tempfile.TemporaryDirectory() as d:
        for seed in args.seeds:
            stop, rows = run(seed, args.every, d)
            print(f"seed {seed}: identified after {stop} sessions")
            for n, est, zb in rows:
                left = stop - n
                if est is None or left < args.min_left:
                    continue
                groups["under" if zb < LEFT_MIN_PROGRESS else "over"].append(est / left)
    print(f"\nestimate / sessions actually left (readings with more than {args.min_left} left)")
    print("| statistic / threshold | readings | smallest | median | largest |")
    print("|---|---:|---:|---:|---:|")
    for name, label in (("under", f"< {LEFT_MIN_PROGRESS:g} (reported: too early)"),
                        ("over", f">= {LEFT_MIN_PROGRESS:g} (reported)")):
        r = groups[name]
        if r:
            print(f"| {label} | {len(r)} | {min(r):.2f} | {float(np.median(r)):.2f} | {max(r):,.2f} |")


if __name__ == "__main__":
    main()
