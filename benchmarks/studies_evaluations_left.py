"""How far a study's ``evaluations_left`` is from the sessions a study actually still needs.

The lab case, simulated: 12 workers, teams of 4, session scores = the sum of the members'
qualities + N(0, 10^2), rounded to 0.1 and clipped to [0, 100], the noise level unknown to
the study, top-two run to its stop. Two settings:

* ``--setting long`` (default): the hidden qualities of
  ``combex.environments._instances_full.LAB_QUALITIES`` (best team 74, second 72), delta 0.05,
  epsilon 0: studies of several thousand sessions;
* ``--setting guide``: the studies guide's lab (four workers 5 points above the others,
  ``gap=5`` of ``combex plan``), delta 0.1, epsilon 5: studies of about 600 sessions.

Every ``--every`` sessions it reads ``Study.best()``: the estimate, the stopping statistic
over its threshold, and (after the stop) the sessions that were actually left. Prints the
ratio estimate / actual, grouped by where the statistic stood against its threshold (the
study reports the estimate from ``LEFT_MIN_PROGRESS`` of it on; below, the same
extrapolation is computed here for the table), for the readings with more than
``--min-left`` sessions left.

    python benchmarks/studies_evaluations_left.py --seeds 2 3
    python benchmarks/studies_evaluations_left.py --setting guide --seeds 0 1 2 3 4 5 6 7 8 9 --every 25 --min-left 50
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

import combex.studies as cs
from combex.environments._instances_full import LAB_QUALITIES, LAB_WORKERS
from combex.solvers._bisect import LEFT_MIN_PROGRESS, samples_left

SETTINGS = {
    "long": {"qualities": list(LAB_QUALITIES), "delta": 0.05, "epsilon": 0.0},
    "guide": {"qualities": [20.0] * 4 + [15.0] * 8, "delta": 0.1, "epsilon": 5.0},
}
#: Where the statistic stood against its threshold: the table's groups.
EDGES = (0.0, LEFT_MIN_PROGRESS, 0.1, 0.2, 0.5, 1.0)


def run(seed: int, every: int, directory: str, setting: dict) -> tuple[int, list[tuple[int, float | None, float]]]:
    q = setting["qualities"]
    problem = cs.problem_spec(workers=list(LAB_WORKERS), team_size=4, score_range=(0, 100))
    params = {"delta": setting["delta"]}
    if setting["epsilon"]:
        params["epsilon"] = setting["epsilon"]
    study = cs.create_study(storage=str(Path(directory) / f"lab{seed}.db"), name="lab", problem=problem,
                            solver="top-two", solver_params=params, seed=seed)
    gen = np.random.default_rng(seed)
    n, rows = 0, []
    while study.status == "running":
        t = study.ask()
        score = sum(q[i] for i in t.arm) + gen.normal(0, 10)
        study.tell(t.id, float(np.clip(round(score, 1), 0, 100)))
        n += 1
        if n % every == 0 and study.status == "running":
            b = study.best()
            if b["statistic"] is None:
                continue
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
    ap.add_argument("--setting", choices=sorted(SETTINGS), default="long")
    ap.add_argument("--seeds", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--min-left", type=int, default=1000)
    args = ap.parse_args()
    setting = SETTINGS[args.setting]
    groups: list[list[float]] = [[] for _ in EDGES[:-1]]
    with tempfile.TemporaryDirectory() as d:
        for seed in args.seeds:
            stop, rows = run(seed, args.every, d, setting)
            print(f"seed {seed}: identified after {stop} sessions")
            for n, est, zb in rows:
                left = stop - n
                if est is None or left < args.min_left:
                    continue
                k = max(i for i in range(len(EDGES) - 1) if zb >= EDGES[i])
                groups[k].append(est / left)
    print(f"\n{args.setting}: delta {setting['delta']:g}, epsilon {setting['epsilon']:g}; estimate / sessions "
          f"actually left (readings with more than {args.min_left} left; reported from {LEFT_MIN_PROGRESS:g} on)")
    print("| statistic / threshold | readings | smallest | median | largest |")
    print("|---|---:|---:|---:|---:|")
    for k, r in enumerate(groups):
        if r:
            lo, hi = EDGES[k], EDGES[k + 1]
            print(f"| [{lo:g}, {hi:g}) | {len(r)} | {min(r):.2f} | {float(np.median(r)):.2f} | {max(r):,.2f} |")


if __name__ == "__main__":
    main()
