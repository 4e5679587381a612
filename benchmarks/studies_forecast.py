"""How well a study's forecast (``Study.forecast``) predicts the evaluations it actually
still needs, beside the study's own point estimate (``evaluations_left``) read at the same
moments.

The lab case of the studies guide, simulated: 12 workers (the walkthroughs' contributions
20, 19, 18, 17, 15, 14, ..., 8: the best team 74, the next 73), teams of 4, session scores =
the sum of the members' contributions + N(0, 10^2), rounded to 0.1 and clipped to [0, 100],
the noise level unknown to the study, top-two at delta 0.1 and epsilon 5, run to its stop.
At each of ``--at`` evaluations told (while the study runs) it makes a forecast of
``--runs`` continuations and reads ``evaluations_left``; after the stop, it compares both
with the evaluations that were actually left.

Printed per reading point: how many studies were still running; the median of forecast
median / actual; how often the actual fell inside the forecast's 80% range (its 10th to
90th percentile of the continuations; a calibrated forecast: about 80%); the mean
"probability integral transform" (the share of continuations that needed fewer than the
actual: 0.5 when calibrated); the forecast's mean chance to certify within ``--budget``
evaluations in all beside the share of studies that did; and the median of the point
estimate / actual with how often it was within a factor of 2.

    python benchmarks/studies_forecast.py --at 100 200 300 400 500

Measured (ten seeds, 20 continuations a forecast, 1.7 s of CPU each; the studies stopped
after 486-1,221 evaluations, median 654):

    told  running  fc med/actual  in 80% range  mean PIT  P(by 600) fc  actual  estimate/actual  within 2x
     100       10           1.46      4/10          0.24          0.11    0.30             2.02     3/6
     200       10           1.32      7/10          0.31          0.23    0.30             1.25    10/10
     300       10           1.26      7/10          0.33          0.19    0.30             1.32     8/10
     400       10           1.27      7/10          0.31          0.23    0.30             1.14     8/10
     500        9           1.54      3/9           0.21          0.05    0.22             1.54     7/9

The forecast runs high (a mean PIT of about 0.3, not 0.5). Two other draws were tried and
not kept: the estimates taken as the truth (no parameter uncertainty: median ratio
1.12-1.15 from 200 on, but the actual inside the 80% range in only 4-5 of 10) and an
empirical-Bayes normal prior on the workers (shrunk toward their mean: 1.21-1.44, 5-7 of
10, higher still at 100 told).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import combex.studies as cs

WORKERS = ["Ana", "Ben", "Cam", "Dev", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kim", "Lea"]
QUALITIES = [20.0, 19.0, 18.0, 17.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0, 9.0, 8.0]


def one_study(seed: int, at: list[int], runs: int) -> dict:
    problem = cs.problem_spec(workers=WORKERS, team_size=4, score_range=(0, 100))
    study = cs.create_study(storage=None, name="lab", problem=problem, solver="top-two",
                            solver_params={"delta": 0.1, "epsilon": 5.0}, seed=seed)
    gen = np.random.default_rng([seed, 7])
    reads: dict[int, dict] = {}
    n, cpu = 0, 0.0
    while study.status == "running" and n < 20_000:
        t = study.ask()
        score = sum(QUALITIES[i] for i in t.arm) + gen.normal(0, 10)
        study.tell(t.id, float(np.clip(round(score, 1), 0, 100)))
        n += 1
        if n in at and study.status == "running":
            t0 = time.process_time()
            f = study.forecast(runs=runs, rng=seed)
            cpu += time.process_time() - t0
            reads[n] = {"more": f.more, "left": study.best().get("evaluations_left")}
    return {"seed": seed, "stop": n, "reads": reads, "cpu": cpu, "forecasts": len(reads)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--at", type=int, nargs="+", default=[150, 300, 450])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--budget", type=int, default=600, help="evaluations in all for the 'certified by' column")
    args = ap.parse_args()
    out = [one_study(s, args.at, args.runs) for s in args.seeds]
    stops = [o["stop"] for o in out]
    print(f"{len(out)} simulated lab studies, stopped after {min(stops)}-{max(stops)} evaluations "
          f"(median {int(np.median(stops))}); forecasts of {args.runs} continuations, "
          f"{sum(o['cpu'] for o in out) / max(sum(o['forecasts'] for o in out), 1):.2f} s of CPU each.")
    print(f"{'told':>6} {'running':>8} {'fc med/actual':>14} {'in 80% range':>13} {'mean PIT':>9} "
          f"{'P(by ' + str(args.budget) + ') fc':>14} {'actual':>7} {'estimate/actual':>16} {'within 2x':>10}")
    for a in args.at:
        rows = [(o["reads"][a], o["stop"] - a) for o in out if a in o["reads"]]
        if not rows:
            continue
        ratio, inside, pit, p_fc, p_act, est, est2 = [], 0, [], [], [], [], 0
        for r, actual in rows:
            more = np.array([m if m is not None else math.inf for m in r["more"]], dtype=float)
            fin = np.sort(more)
            med = float(np.median(fin))
            ratio.append(med / actual)
            lo, hi = np.quantile(fin, 0.1, method="inverted_cdf"), np.quantile(fin, 0.9, method="inverted_cdf")
            inside += bool(lo <= actual <= hi)
            pit.append(float(np.mean(more < actual) + 0.5 * np.mean(more == actual)))
            p_fc.append(float(np.mean(more <= args.budget - a)))
            p_act.append(float(actual <= args.budget - a))
            if isinstance(r["left"], (int, float)) and r["left"] > 0:
                est.append(r["left"] / actual)
                est2 += bool(0.5 <= r["left"] / actual <= 2.0)
        n = len(rows)
        print(f"{a:>6} {n:>8} {np.median(ratio):>14.2f} {inside:>6}/{n:<6} {np.mean(pit):>9.2f} "
              f"{np.mean(p_fc):>14.2f} {np.mean(p_act):>7.2f} "
              f"{(np.median(est) if est else math.nan):>16.2f} {est2:>5}/{len(est):<4}")


if __name__ == "__main__":
    main()
