"""Asymptotically optimal solvers vs the LUCB family, beside the lower bound and an oracle sampler.

Usage::

    python benchmarks/optimal.py                     # all sections, 10 runs per cell
    python benchmarks/optimal.py --runs 20 --sections mab bestk class
    python benchmarks/optimal.py --runs 5 --sections timing   # us/sample: fast path vs ask/tell, LinGapE
    python benchmarks/optimal.py --runs 5 --sections timing-top-two   # top-two run() vs a numba floor
    python benchmarks/optimal.py --runs 3 --sections many-arms        # the same at K = 100,000 arms
    python benchmarks/optimal.py --runs 5 --sections ask-tell         # ask / tell overhead over run()
    python benchmarks/optimal.py --runs 10 --sections tas   # Track-and-Stop: us/sample, w* solves/sample
    python benchmarks/optimal.py --runs 10 --sections uv   # cost of unknown variances
    python benchmarks/optimal.py --runs 10 --sections uv-class   # the same on s-t paths (a decision class)
    python benchmarks/optimal.py --runs 3 --sections class-certificate   # classes too large to list
    python benchmarks/optimal.py --runs 20 --sections mab bestk class delta trace --figures docs/figures

Every row gives: mean samples, samples / (T*(mu) log(1/delta)) ("xLB"), samples / (the
oracle sampler tracking the true w*(mu) with the same stopping threshold, same noise:
"xOracle"; it isolates the sampling rule), errors, and microseconds per sample (wall time
of ``run`` over samples, after one untimed warm-up run per cell; the new solvers take their
``run`` fast path on these simulated Gaussian arms, the partition-matroid section goes
through ask / tell). A final table gives the factor best LUCB-family / best new. All
algorithms use *valid* thresholds unless the row says "heuristic" (log((1 + log t)/delta),
the papers' experiments): "valid" is the default normal-mixture threshold, "valid-kk" the
Kaufmann & Koolen (2021) one, each with its own oracle row. The LUCB family runs in faithful mode at the same delta (their
guarantees). Run r of every algorithm sees the same noise stream (common random numbers).
This script prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any, Callable

import _figures
import numpy as np

from combex.environments import BestKGaussianArms, GaussianArms
from combex.environments._instances_semi import jiang_1sparse, jiang_exponential
from combex.identification import bandit_characteristic_time
from combex.oracles import PartitionMatroid
from combex.solvers.optimal import CombGame, FWSampling, OracleTracking, TopTwo, TrackAndStop
from combex.solvers.semi_bandit import LUCB, LilCLUCB, LilRandLUCB, LilUCB, LUCBPlusPlus

BUDGET = 3_000_000


def run_cell(make_solver: Callable[[], Any], env: Any, runs: int, tol: float, warm: bool = False) -> dict[str, Any]:
    samples, errors, secs, lbr = [], 0, 0.0, []
    seeds = np.random.SeedSequence(2024).spawn(runs)
    if warm:  # imports and the cached T*(mu) of the lower-bound ratio stay out of the timing
        make_solver().run(env.spawn(np.random.SeedSequence(7)), rng=0, budget=BUDGET)
    for r in range(runs):
        e = env.spawn(seeds[r])
        solver = make_solver()
        t0 = time.perf_counter()
        res = solver.run(e, rng=r, budget=BUDGET)
        secs += time.perf_counter() - t0
        samples.append(res.samples)
        lbr.append(res.info.get("lower_bound_ratio", np.nan))
        errors += (not res.identified) or (not env.is_correct(res.answer, tol))
    s = np.asarray(samples, dtype=float)
    return {"mean": float(s.mean()), "errors": errors, "us_per_sample": 1e6 * secs / s.sum(),
            "xLB": float(np.mean(lbr))}


def section(title: str, env: Any, delta: float, algs: list[tuple[str, Callable[[], Any], str]], runs: int,
            lb_kwargs: dict[str, Any], tol: float = 0.0) -> list[dict[str, Any]]:
    lb = bandit_characteristic_time(env.means(), sigma=float(env.noise.sigma), epsilon=tol, **lb_kwargs)
    denom = lb.T_star * np.log(1.0 / delta)
    print(f"\n=== {title} (delta = {delta}, {runs} runs; T* = {lb.T_star:.1f}, T* log(1/delta) = {denom:.0f}, "
          f"T* {'exact' if lb.exact else 'lower bound'}) ===")
    print(f"{'algorithm':<28}{'threshold':>11}{'samples':>11}{'xLB':>8}{'xOracle':>9}{'errors':>8}{'us/sample':>11}")
    oracle = {}
    rows = []
    for thr in ("valid", "heuristic", "valid-kk"):
        if thr == "valid-kk" and not any(t == thr for _, _, t in algs):
            continue
        oracle[thr] = run_cell(lambda: OracleTracking(lb.allocation, delta=delta, threshold=thr, epsilon=tol,
                                                      **_solver_kwargs(lb_kwargs)), env, runs, tol, warm=True)
    for name, make, thr in algs:
        cell = run_cell(make, env, runs, tol, warm=True)
        o = oracle.get(thr)
        ratio_o = cell["mean"] / o["mean"] if o is not None else float("nan")
        row = {"instance": title, "algorithm": name, "threshold": thr, **cell, "xLB": cell["mean"] / denom,
               "xOracle": ratio_o}
        rows.append(row)
        print(f"{name:<28}{thr:>11}{cell['mean']:>11.0f}{row['xLB']:>8.2f}{ratio_o:>9.2f}{cell['errors']:>8}"
              f"{cell['us_per_sample']:>11.1f}")
    for thr, o in oracle.items():
        print(f"{'oracle sampler (true w*)':<28}{thr:>11}{o['mean']:>11.0f}{o['mean'] / denom:>8.2f}{1.0:>9.2f}"
              f"{o['errors']:>8}{o['us_per_sample']:>11.1f}")
    best_old = min((r for r in rows if r["threshold"] == "lucb"), key=lambda r: r["mean"], default=None)
    best_new = min((r for r in rows if r["threshold"] == "valid"), key=lambda r: r["mean"], default=None)
    if best_old and best_new:
        print(f"  best new (valid): {best_new['algorithm']} {best_new['mean']:.0f}; best LUCB-family: "
              f"{best_old['algorithm']} {best_old['mean']:.0f}; ratio {best_old['mean'] / best_new['mean']:.2f}x fewer")
        FACTORS.append((title, best_old, best_new))
    return rows


#: (instance, best LUCB-family row, best new row with a valid threshold), for the summary.
FACTORS: list[tuple[str, dict[str, Any], dict[str, Any]]] = []


def print_factors() -> None:
    """The ">= 2x fewer samples than the best of the LUCB family" table of docs/optimal.md."""
    if not FACTORS:
        return
    print("\n=== Factor: best LUCB-family / best new algorithm (valid thresholds), same run ===")
    print(f"{'instance':<58}{'LUCB family':>26}{'new':>26}{'factor':>8}{'>= 2x':>7}")
    for title, old, new in FACTORS:
        f = old["mean"] / new["mean"]
        print(f"{title[:57]:<58}{old['algorithm'][:17]:>18}{old['mean']:>8.0f}{new['algorithm'][:17]:>18}"
              f"{new['mean']:>8.0f}{f:>8.2f}{'yes' if f >= 2.0 else 'no':>7}")


def _solver_kwargs(lb_kwargs: dict[str, Any]) -> dict[str, Any]:
    out = {}
    if "K" in lb_kwargs:
        out["K"] = lb_kwargs["K"]
    if lb_kwargs.get("decision_class") is not None:
        out["decision_class"] = lb_kwargs["decision_class"]
    return out


def new_algs(delta: float, kw: dict[str, Any], heuristic: bool = True, tol: float = 0.0) -> list[tuple[str, Callable[[], Any], str]]:
    out: list[tuple[str, Callable[[], Any], str]] = []
    for thr in ("valid", "heuristic") if heuristic else ("valid",):
        out += [
            ("track-and-stop (D)", lambda thr=thr: TrackAndStop(delta=delta, threshold=thr, epsilon=tol, **kw), thr),
            ("track-and-stop (C)", lambda thr=thr: TrackAndStop(delta=delta, threshold=thr, tracking="C",
                                                               epsilon=tol, **kw), thr),
            ("top-two (IDS)", lambda thr=thr: TopTwo(delta=delta, threshold=thr, epsilon=tol, **kw), thr),
            ("top-two (beta=w*)", lambda thr=thr: TopTwo(delta=delta, threshold=thr, epsilon=tol,
                                                                 beta="optimal", **kw), thr),
            ("top-two (beta=1/2)", lambda thr=thr: TopTwo(delta=delta, threshold=thr, epsilon=tol, beta=0.5,
                                                                  **kw), thr),
            ("fw-sampling", lambda thr=thr: FWSampling(delta=delta, threshold=thr, epsilon=tol, **kw), thr),
            ("comb-game", lambda thr=thr: CombGame(delta=delta, threshold=thr, epsilon=tol, **kw), thr),
        ]
    # the Kaufmann & Koolen thresholds (the pair thresholds of Theorems 7 and 9), to show what the threshold costs
    out += [("top-two (IDS)", lambda: TopTwo(delta=delta, threshold="valid-kk", epsilon=tol, **kw),
             "valid-kk"),
            ("top-two (beta=w*)", lambda: TopTwo(delta=delta, threshold="valid-kk", epsilon=tol,
                                                         beta="optimal", **kw), "valid-kk"),
            ("fw-sampling", lambda: FWSampling(delta=delta, threshold="valid-kk", epsilon=tol, **kw), "valid-kk")]
    return out


def mab(runs: int) -> list[dict[str, Any]]:
    delta = 0.01
    env = BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0)
    old = [
        ("LUCB (faithful)", lambda: LUCB(1, delta=delta), "lucb"),
        ("lil'UCB (faithful)", lambda: LilUCB(1, delta=delta), "lucb"),
        ("lil'RandLUCB (faithful)", lambda: LilRandLUCB(1, delta=delta), "lucb"),
    ]
    return section("Gaussian MAB means (1,.8,.6,.4,.2), unit variance", env, delta, old + new_algs(delta, {}), runs, {})


#: Best-K instances of the semi-bandit results page (docs/semi_bandit.md, Figure 1): name, N, K.
BESTK = [("1sparse", 10, 2), ("1sparse", 20, 2), ("1sparse", 50, 2), ("1sparse", 10, 5),
         ("exponential", 20, 2), ("exponential", 10, 5)]


def bestk(runs: int) -> list[dict[str, Any]]:
    delta = 0.01
    rows = []
    for name, N, K in BESTK:
        env = jiang_1sparse(N, K, rng=0) if name == "1sparse" else jiang_exponential(N, K, rng=0)
        old = [
            ("LUCB (faithful)", lambda K=K: LUCB(K, delta=delta), "lucb"),
            ("LUCB++ (faithful)", lambda K=K: LUCBPlusPlus(K, delta=delta), "lucb"),
            ("lil'RandLUCB (faithful)", lambda K=K: LilRandLUCB(K, delta=delta), "lucb"),
        ]
        title = f"Best-K jiang-{name}{' 0.3' if name == 'exponential' else ''} N={N}, K={K} (sigma 1/2)"
        rows += section(title, env, delta, old + new_algs(delta, {"K": K}, heuristic=False), runs, {"K": K})
    return rows


def decision_class(runs: int) -> list[dict[str, Any]]:
    delta = 0.01
    pm = PartitionMatroid([0, 0, 0, 1, 1, 1, 2, 2], [1, 1, 1], base=True)
    env = GaussianArms([1.0, 0.7, 0.2, 0.9, 0.5, 0.1, 0.6, 0.3], sigma=0.5, rng=0)
    env.decision_class = pm  # scoring against the class
    env.arm_type = "index"
    old = [("lil'CLUCB (faithful)", lambda: LilCLUCB(decision_class=pm, delta=delta), "lucb")]
    algs = old + [(n, m, t) for n, m, t in new_algs(delta, {"decision_class": pm}, heuristic=False)
                  if not n.startswith("track-and-stop (C)")]
    return section("Partition matroid (one arm from each of 3 groups of 8 arms)", _ClassEnv(env, pm), delta, algs,
                   runs, {"decision_class": pm})


class _ClassEnv:
    """Index-arm environment scored against a decision class (semi-bandit feedback)."""

    def __init__(self, env: Any, dc: Any) -> None:
        self.env, self.decision_class = env, dc
        self.noise, self.n_arms, self.arm_type = env.noise, env.n_arms, "index"

    @property
    def problem(self) -> Any:
        from combex.environments import Problem

        return Problem(self.n_arms, self.noise, "index", decision_class=self.decision_class)

    def means(self) -> Any:
        return self.env.means()

    def pull_many(self, arms: Any, counts: Any) -> Any:
        return self.env.pull_many(arms, counts)

    def spawn(self, rng: Any) -> "_ClassEnv":
        return _ClassEnv(self.env.spawn(rng), self.decision_class)

    def is_correct(self, answer: Any, tol: float) -> bool:
        mu = self.env.means()
        best = self.decision_class.argmax(mu)
        return float(mu[best].sum() - mu[np.asarray(answer, bool)].sum()) <= tol + 1e-12


def class_certificate(runs: int, n: int = 4, budget: int = 60_000) -> list[dict[str, Any]]:
    """Decision classes too large to list, side by side with the same class listed: the
    perfect matchings of K(n, n) (n^2 arms, n! members; means uniform on [0, 1] with seed 5,
    sigma 1, delta 0.1, top-two). Rows: the listed class (its exact GLR, one threshold per
    member, ``valid:sets-mixture``); the Lagrangian certificate with one threshold per
    member (``valid:sets-product-mixture``, what a class of more than
    ``CLASS_MEMBERS_LIMIT`` members gets); the certificate with one threshold over all arms
    (``threshold="valid-kk"``, ``valid:all-arms-gaussian``). The last two are forced on
    this small class by listing no member (``ClassQuery``'s ``max_members = 0``). Runs cut
    at ``budget`` samples report the statistic against the threshold at the cut."""
    import networkx as nx

    from combex.identification import _arm_queries
    from combex.oracles import Matchings

    dc = Matchings(nx.complete_bipartite_graph(n, n), cardinality=n)
    means = np.random.default_rng(5).uniform(0.0, 1.0, n * n)
    delta = 0.1
    env0 = GaussianArms(means, sigma=1.0, rng=0)
    cases = [("listed: exact GLR, sets-mixture", {}, None),
             ("certificate: sets-product-mixture", {}, 0),
             ("certificate: all-arms (valid-kk)", {"threshold": "valid-kk"}, 0)]
    print(f"\n=== perfect matchings of K({n}, {n}): {n * n} arms, {math.factorial(n)} members; top-two, delta = {delta}, "
          f"sigma 1, {runs} runs, budget {budget:,} ===")
    print(f"{'stopping rule':<36}{'threshold':>26}{'samples':>10}{'stopped':>9}{'errors':>8}{'stat/thr':>10}{'CPU s':>8}")
    defaults = _arm_queries.ClassQuery.__init__.__defaults__
    rows = []
    try:
        for title, kw, limit in cases:
            _arm_queries.ClassQuery.__init__.__defaults__ = defaults if limit is None else (limit,)
            samples, stopped, errors, ratio, cpu, name = [], 0, 0, [], 0.0, ""
            for sd in np.random.SeedSequence(2025).spawn(runs):
                env = env0.spawn(sd)
                env.decision_class = dc
                t0 = time.process_time()
                res = TopTwo(delta=delta, decision_class=dc, **kw).run(env, rng=int(sd.generate_state(1)[0]),
                                                                       budget=budget)
                cpu += time.process_time() - t0
                cert = res.certificate
                name = cert["threshold"]
                samples.append(res.samples)
                stopped += res.status == "identified"
                errors += res.status == "identified" and not np.array_equal(np.asarray(res.answer, bool),
                                                                           dc.argmax(means))
                ratio.append(cert["statistic"] / cert["threshold_value"])
            mean = float(np.mean(samples))
            print(f"{title:<36}{name:>26}{mean:>10,.0f}{stopped:>6}/{runs:<2}{errors:>8}{np.mean(ratio):>10.2f}"
                  f"{cpu / runs:>8.1f}")
            rows.append({"rule": title, "threshold": name, "samples": mean, "stopped": stopped, "errors": errors,
                         "stat_over_threshold": float(np.mean(ratio)), "cpu_s": cpu / runs})
    finally:
        _arm_queries.ClassQuery.__init__.__defaults__ = defaults
    return rows


def batches(runs: int) -> list[dict[str, Any]]:
    """What batching costs: the same solvers asking b samples at a time (one stopping check per batch)."""
    delta = 0.01
    env = BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0)
    lb = bandit_characteristic_time(env.means())
    denom = lb.T_star * np.log(1.0 / delta)
    print(f"\n=== Batches: Gaussian MAB (1,.8,.6,.4,.2), delta = {delta}, valid thresholds, {runs} runs ===")
    print(f"{'algorithm':<22}" + "".join(f"{'b=' + str(b):>10}" for b in (1, 10, 100, 1000)) + "   (mean samples; xLB)")
    rows = []
    for name, cls in (("top-two", TopTwo), ("fw-sampling", FWSampling), ("track-and-stop (D)", TrackAndStop)):
        cells = []
        for b in (1, 10, 100, 1000):
            c = run_cell(lambda cls=cls, b=b: cls(delta=delta, batch_size=b), env, runs, 0.0)
            cells.append(c)
            rows.append({"instance": "batches", "algorithm": name, "batch_size": b, **c})
        print(f"{name:<22}" + "".join(f"{c['mean']:>10.0f}" for c in cells) + "   "
              + " ".join(f"{c['mean'] / denom:.2f}" for c in cells))
    return rows


def timing(runs: int) -> list[dict[str, Any]]:
    """Microseconds per sample: ``run`` (fast path on GaussianArms) and the ask / tell loop
    (the base ``Solver._simulate``) of each new solver, beside LinGapE's fast path on Soare d = 5. CPU time
    of this process (``time.process_time``), less sensitive than wall time to the other jobs
    of a shared machine."""
    from combex.environments import soare
    from combex.solvers import LinGapE

    delta = 0.01
    cases = [("MAB (1,.8,.6,.4,.2)", BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0), {}),
             ("Best-K 1sparse N=10", jiang_1sparse(10, 2, rng=0), {"K": 2}),
             ("Best-K 1sparse N=20", jiang_1sparse(20, 2, rng=0), {"K": 2})]
    algs = [("track-and-stop (D)", TrackAndStop), ("top-two", TopTwo), ("fw-sampling", FWSampling),
            ("comb-game", CombGame)]
    print(f"\n=== CPU microseconds per sample, {runs} runs (fast path run() / ask-tell loop) ===")
    print(f"{'algorithm':<22}" + "".join(f"{c[0]:>24}" for c in cases))
    rows = []
    for name, cls in algs:
        cells = []
        for title, env, kw in cases:
            cls(delta=delta, **kw).run(env.spawn(np.random.SeedSequence(7)), rng=0)  # warm-up (T*, imports,
            _ask_tell(cls(delta=delta, **kw), env.spawn(np.random.SeedSequence(7)), 0)  # compiled code loaded)
            out = []
            for runner in (lambda s, e, r: s.run(e, rng=r), _ask_tell):
                secs, n = 0.0, 0
                for r, sd in enumerate(np.random.SeedSequence(2024).spawn(runs)):
                    t0 = time.process_time()
                    res = runner(cls(delta=delta, **kw), env.spawn(sd), r)
                    secs += time.process_time() - t0
                    n += res.samples
                out.append(1e6 * secs / n)
            cells.append(f"{out[0]:.1f} / {out[1]:.1f}")
            rows.append({"instance": title, "algorithm": name, "us_fast": out[0], "us_ask_tell": out[1]})
        print(f"{name:<22}" + "".join(f"{c:>24}" for c in cells))
    secs, n = 0.0, 0
    for r in range(runs):
        t0 = time.process_time()
        res = LinGapE(delta=0.05).run(soare(5, rng=r), rng=r)
        secs += time.process_time() - t0
        n += res.samples
    print(f"{'LinGapE (Soare d=5)':<22}{1e6 * secs / n:>24.1f}  (its fast path; delta = 0.05)")
    return rows


def _floor_kernel() -> Any:
    """A minimal numba Top-Two (IDS, known-variance Gaussian, best arm or Best-K pairs) with the
    same per-sample stopping rule (the normal-mixture pair thresholds): every pair recomputed
    at every sample, logarithms of counts from a table, no scale test, no bit-identity
    constraint. The floor of the ``top-two`` row of :func:`timing_top_two`."""
    import math

    import numba

    @numba.njit(cache=False)
    def floor(arng, erng, means, sig, K, c, rho, budget, logtab):  # noqa: ANN001, ANN202
        N = means.shape[0]
        T = np.zeros(N, np.int64)
        sums, mu, h, inv = np.zeros(N), np.zeros(N), np.zeros(N), np.zeros(N)
        mask = np.zeros(N, np.bool_)
        for a in range(N):
            r = means[a] + sig[a] * erng.standard_normal()
            T[a], sums[a], mu[a], inv[a], h[a] = 1, r, r, 1.0, 0.5 * math.log1p(1.0 / rho)
        t = N
        while t < budget:
            for a in range(N):
                mask[a] = False
            for _ in range(K):
                b = -1
                for a in range(N):
                    if not mask[a] and (b < 0 or mu[a] > mu[b]):
                        b = a
                mask[b] = True
            best_s, best_p, pi, pj = math.inf, math.inf, -1, -1
            for i in range(N):
                if not mask[i]:
                    continue
                for j in range(N):
                    if mask[j]:
                        continue
                    s = inv[i] + inv[j]
                    gap = mu[i] - mu[j]
                    z = gap * gap / (2.0 * s) if gap > 0 else 0.0
                    b = (s + rho * (inv[i] * inv[i] + inv[j] * inv[j])) / s * (c + h[i] + h[j])
                    if z - b < best_s:
                        best_s = z - b
                    pen = logtab[T[j]] if K == 1 else logtab[T[i] + T[j]]
                    if z + pen < best_p:
                        best_p, pi, pj = z + pen, i, j
            if best_s >= 0.0:
                return t
            ni, nj = float(T[pi]), float(T[pj])
            x = (ni * mu[pi] + nj * mu[pj]) / (ni + nj)
            hi = ni * (mu[pi] - x) ** 2
            hj = nj * (mu[pj] - x) ** 2
            a = pi if arng.random() < (hi / (hi + hj) if hi + hj > 0 else 0.5) else pj
            r = means[a] + sig[a] * erng.standard_normal()
            T[a] += 1
            t += 1
            sums[a] += r
            mu[a] = sums[a] / T[a]
            inv[a] = 1.0 / T[a]
            h[a] = 0.5 * math.log1p(T[a] / rho)
        return t

    return floor


def timing_top_two(runs: int) -> list[dict[str, Any]]:
    """CPU microseconds per sample of ``top-two`` ``run()`` (defaults: IDS, valid threshold;
    its compiled loop when numba is installed) beside a minimal numba Top-Two with the same
    stopping rule (:func:`_floor_kernel`), measured in the same process: best arm on
    ``GaussianArms(linspace(1, 0, N))`` and Best-K (K = 2) on ``BestKGaussianArms``, delta =
    0.01, runs capped at 100,000 samples (the floor at the run's own sample count)."""
    import math

    from combex.solvers import _glr_kernel as kern

    floor = _floor_kernel()
    delta, budget = 0.01, 100_000
    logtab = np.log(np.arange(1.0, 2.0 * budget + 4.0))
    logtab = np.concatenate([[0.0], logtab])
    print(f"\n=== top-two run() vs numba floor, CPU us per sample, {runs} runs "
          f"(compiled loop: {'on' if kern.HAVE_NUMBA and kern.ENABLED else 'off'}) ===")
    print(f"{'instance':<26}{'samples/run':>12}{'run() us':>10}{'floor us':>10}{'ratio':>8}")
    rows = []
    for k in (1, 2):
        for N in (5, 20, 100, 1000):
            means = np.linspace(1.0, 0.0, N)
            env = GaussianArms(means, rng=0) if k == 1 else BestKGaussianArms(means, K=k, sigma=1.0, rng=0)
            TopTwo(K=k, delta=delta).run(env.spawn(np.random.SeedSequence(7)), rng=0, budget=2000)  # warm-up
            m = k * (N - k)
            c = math.log(m / delta)
            sig = np.ones(N)
            floor(np.random.default_rng(0), np.random.default_rng(1), means, sig, k, c, 0.7213475204444817, 100, logtab)
            secs, fsecs, n, fn = 0.0, 0.0, 0, 0
            for r, sd in enumerate(np.random.SeedSequence(2024).spawn(runs)):
                t0 = time.process_time()
                res = TopTwo(K=k, delta=delta).run(env.spawn(sd), rng=r, budget=budget)
                secs += time.process_time() - t0
                n += res.samples
                t0 = time.process_time()
                fn += floor(np.random.default_rng(r), np.random.default_rng(1000 + r), means, sig, k, c,
                            0.7213475204444817, res.samples, logtab)
                fsecs += time.process_time() - t0
            us, fus = 1e6 * secs / n, 1e6 * fsecs / fn
            title = f"{'best arm' if k == 1 else 'Best-K K=2'} N={N}"
            print(f"{title:<26}{n / runs:>12.0f}{us:>10.2f}{fus:>10.2f}{us / fus:>8.2f}")
            rows.append({"instance": title, "us_run": us, "us_floor": fus, "samples": n / runs})
    return rows


def _ask_tell(solver: Any, env: Any, r: int, budget: int | None = None) -> Any:
    """The ask / tell loop of :class:`~combex.solvers.Solver` (the one a study drives),
    bypassing the solver's compiled or vectorized ``run`` fast path."""
    from combex.solvers._base import Solver

    return Solver._simulate(solver, env, rng=r, budget=budget, trace=False)


def ask_tell_overhead(runs: int) -> list[dict[str, Any]]:
    """What driving a solver through ask / tell costs over its ``run()``: CPU microseconds
    per sample of both, one sample per ask (``batch_size = 1``) and batches of 100, and their
    difference (the overhead). Same seeds, so the same samples (the fast paths are
    bit-identical to the loop)."""
    delta = 0.01
    cases = [("MAB (1,.8,.6,.4,.2)", BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0), {}),
             ("Best-K 1sparse N=20", jiang_1sparse(20, 2, rng=0), {"K": 2})]
    algs = [("top-two", TopTwo), ("fw-sampling", FWSampling), ("comb-game", CombGame)]
    print(f"\n=== ask / tell against run(): CPU us per sample, {runs} runs (run / ask-tell / overhead) ===")
    print(f"{'algorithm':<14}{'instance':<22}{'batch 1':>26}{'batch 100':>26}")
    rows = []
    for name, cls in algs:
        for title, env, kw in cases:
            cells = []
            for b in (1, 100):
                for runner in (lambda s, e, r: s.run(e, rng=r), _ask_tell):  # warm-up (compiled code loaded)
                    runner(cls(delta=delta, batch_size=b, **kw), env.spawn(np.random.SeedSequence(7)), 0)
                out = []
                for runner in (lambda s, e, r: s.run(e, rng=r), _ask_tell):
                    secs, n = 0.0, 0
                    for r, sd in enumerate(np.random.SeedSequence(2024).spawn(runs)):
                        t0 = time.process_time()
                        res = runner(cls(delta=delta, batch_size=b, **kw), env.spawn(sd), r)
                        secs += time.process_time() - t0
                        n += res.samples
                    out.append(1e6 * secs / n)
                cells.append(f"{out[0]:.2f} / {out[1]:.2f} / {out[1] - out[0]:.2f}")
                rows.append({"algorithm": name, "instance": title, "batch": b, "us_run": out[0],
                             "us_ask_tell": out[1]})
            print(f"{name:<14}{title:<22}" + "".join(f"{c:>26}" for c in cells))
    return rows


def many_arms(runs: int) -> list[dict[str, Any]]:
    """Top-two on 100,000 Gaussian arms (``linspace(1, 0, K)``, delta = 0.01): CPU
    milliseconds per *adaptive* sample (after the first sample of every arm; the difference
    between runs capped at K + 500 and K + 5,500 samples) beside the numba floor of
    :func:`timing_top_two` over the same samples, and the process's peak resident memory."""
    import math
    import resource

    K = 100_000
    means = np.linspace(1.0, 0.0, K)
    floor = _floor_kernel()
    logtab = np.concatenate([[0.0], np.log(np.arange(1.0, 2.0 * K + 12_000.0))])
    sig = np.ones(K)
    c = math.log((K - 1) / 0.01)
    TopTwo(delta=0.01).run(GaussianArms(means[:50], rng=0), rng=0, budget=2000)  # compile
    floor(np.random.default_rng(0), np.random.default_rng(1), means[:50], sig[:50], 1, c, 0.7213475204444817, 100,
          logtab)

    def cpu(fn: Callable[[], int]) -> tuple[float, int]:
        t0 = time.process_time()
        n = fn()
        return time.process_time() - t0, n

    ms, fms = [], []
    for r in range(runs):
        def run(budget: int) -> int:
            return TopTwo(delta=0.01).run(GaussianArms(means, rng=r), rng=r, budget=budget).samples

        def flo(budget: int) -> int:
            return int(floor(np.random.default_rng(r), np.random.default_rng(1000 + r), means, sig, 1, c,
                             0.7213475204444817, budget, logtab))

        (a, na), (b, nb) = cpu(lambda: run(K + 500)), cpu(lambda: run(K + 5500))
        (fa, fna), (fb, fnb) = cpu(lambda: flo(K + 500)), cpu(lambda: flo(K + 5500))
        ms.append(1e3 * (b - a) / (nb - na))
        fms.append(1e3 * (fb - fa) / (fnb - fna))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    us, fus = float(np.median(ms)), float(np.median(fms))
    print(f"\n=== top-two on K = 100,000 arms: CPU ms per adaptive sample (median of {runs} runs) ===")
    print(f"{'run() ms':>10}{'floor ms':>10}{'ratio':>8}{'peak RSS MB':>13}")
    print(f"{us:>10.3f}{fus:>10.3f}{us / fus:>8.2f}{rss:>13.0f}")
    return [{"instance": "best arm K=1e5", "ms_run": us, "ms_floor": fus, "peak_rss_mb": rss}]


def tas_solves(runs: int) -> list[dict[str, Any]]:
    """Track-and-Stop's cost of re-solving w*: CPU microseconds per sample of ``run()`` (the
    compiled loop, which solves inside it, where it applies), w* solves per sample and
    milliseconds per solve, D-tracking. The solves are counted on the same runs through the
    Python loop (the compiled loop switched off: the same samples, bit for bit), where each
    solve is a call (``bai_optimal_weights``, the compiled complete-pairs solve,
    ``pair_maxmin_weights`` or ``_maxmin_weights``)."""
    import combex.solvers._glr_kernel as kern
    import combex.solvers.optimal as opt

    counts = {"n": 0, "secs": 0.0}

    def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*a: Any, **k: Any) -> Any:
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                counts["n"] += 1
                counts["secs"] += time.process_time() - t0
        return wrapper

    pm = PartitionMatroid([0, 0, 0, 1, 1, 1, 2, 2], [1, 1, 1], base=True)
    pm_env = GaussianArms([1.0, 0.7, 0.2, 0.9, 0.5, 0.1, 0.6, 0.3], sigma=0.5, rng=0)
    pm_env.decision_class = pm
    pm_env.arm_type = "index"
    cases = [("Best-K (.6,.5,.3,.28) K=2 d=.05", BestKGaussianArms([0.6, 0.5, 0.3, 0.28], K=2, sigma=1.0, rng=0),
              {"K": 2, "delta": 0.05}),
             ("Best-K 1sparse N=10 K=2", jiang_1sparse(10, 2, rng=0), {"K": 2, "delta": 0.01}),
             ("MAB (1,.8,.6,.4,.2)", BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0),
              {"delta": 0.01}),
             ("partition matroid", _ClassEnv(pm_env, pm), {"decision_class": pm, "delta": 0.01})]
    names = ("pair_maxmin_weights", "_maxmin_weights", "bai_optimal_weights", "complete_pairs_kernel")
    saved = {k: getattr(opt, k) for k in names}
    kernel = saved["complete_pairs_kernel"]()
    print(f"\n=== Track-and-Stop (D): re-solving w*, {runs} runs ===")
    print(f"{'instance':<34}{'samples':>10}{'us/sample':>12}{'solves/sample':>15}{'ms/solve':>10}")
    rows = []
    for title, env, kw in cases:
        TrackAndStop(**kw).run(env.spawn(np.random.SeedSequence(7)), rng=0)  # warm-up (T*, imports)
        secs, n = 0.0, 0
        for r, sd in enumerate(np.random.SeedSequence(2024).spawn(runs)):
            t0 = time.process_time()
            n += TrackAndStop(**kw).run(env.spawn(sd), rng=r).samples
            secs += time.process_time() - t0
        counts.update(n=0, secs=0.0)
        for k in names[:3]:
            setattr(opt, k, counted(saved[k]))
        opt.complete_pairs_kernel = lambda: None if kernel is None else counted(kernel)
        kern.ENABLED = False
        try:
            m = sum(TrackAndStop(**kw).run(env.spawn(sd), rng=r).samples
                    for r, sd in enumerate(np.random.SeedSequence(2024).spawn(runs)))
        finally:
            kern.ENABLED = True
            for k, v in saved.items():
                setattr(opt, k, v)
        assert m == n, (m, n)  # the same runs
        row = {"instance": title, "samples": n / runs, "us_sample": 1e6 * secs / n,
               "solves_sample": counts["n"] / n, "ms_solve": 1e3 * counts["secs"] / max(counts["n"], 1)}
        rows.append(row)
        print(f"{title:<34}{row['samples']:>10.0f}{row['us_sample']:>12.1f}{row['solves_sample']:>15.4f}"
              f"{row['ms_solve']:>10.3f}")
    return rows


def unknown_variance(runs: int) -> list[dict[str, Any]]:
    """The cost of not knowing the variances (``divergence="unknown-variance"``, Jourdan,
    Degenne & Kaufmann 2023) against the known-variance Gaussian GLR, same seeds and noise,
    valid thresholds. With unequal variances the known-variance solvers take one scalar
    sigma, so the only valid known choice is the largest one."""
    rows = []
    delta = 0.01
    cases = [("equal variances: means 1..0.2, sigma 1", GaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], sigma=1.0, rng=0), 1.0),
             ("mixed variances: means 1, 0.7, 0; sigma 0.5, 2, 5", GaussianArms([1.0, 0.7, 0.0], sigma=[0.5, 2.0, 5.0], rng=0),
              5.0)]
    for title, env, known_sigma in cases:
        print(f"\n=== unknown variances: {title} (delta = {delta}, {runs} runs) ===")
        print(f"{'algorithm':<16}{'known sigma':>12}{'samples':>10}{'unknown':>10}{'ratio':>8}{'errors':>9}"
              f"{'us/sample':>11}{'unknown xT*':>13}")
        for name, cls in (("top-two", TopTwo), ("comb-game", CombGame), ("fw-sampling", FWSampling),
                          ("track-and-stop", TrackAndStop)):
            k = run_cell(lambda: cls(delta=delta, divergence="gaussian", sigma=known_sigma), env, runs, 0.0)
            u = run_cell(lambda: cls(delta=delta, divergence="unknown-variance"), env, runs, 0.0)
            ratio = u["mean"] / k["mean"]
            print(f"{name:<16}{known_sigma:>12.1f}{k['mean']:>10.0f}{u['mean']:>10.0f}{ratio:>8.2f}"
                  f"{k['errors']:>4d}/{u['errors']:<4d}{u['us_per_sample']:>11.0f}{u['xLB']:>13.2f}")
            rows.append({"instance": title, "algorithm": name, "known": k, "unknown": u, "ratio": ratio})
    return rows


def unknown_variance_class(runs: int) -> list[dict[str, Any]]:
    """Unknown vs known variances on a decision class (s-t paths of a small DAG, 3 paths of
    values 1.1, 0.5, 0.5): the unknown-variance run stops with the variance-UCB all-arms
    threshold, the known one with ``"all-arms-mixture"`` and one scalar sigma
    (the largest, the only valid choice with unequal variances). Same seeds and noise."""
    import networkx as nx

    from combex.oracles import STPaths

    dc = STPaths(nx.DiGraph([(0, 1), (0, 2), (1, 3), (2, 3), (1, 2)]), 0, 3)
    mu = np.array([0.6, 0.2, 0.5, -0.4, 0.3])
    best = dc.argmax(mu)
    delta = 0.01
    rows = []
    cases = [("equal variances: sigma 1", 1.0), ("mixed variances: sigma 0.5, 1, 0.3, 1, 0.5", [0.5, 1.0, 0.3, 1.0, 0.5])]

    def cell(make: Callable[[], Any], sig: Any) -> dict[str, Any]:
        samples, errors, secs, lbr = [], 0, 0.0, []
        for r, sd in enumerate(np.random.SeedSequence(2024).spawn(runs)):
            env = GaussianArms(mu, sigma=sig, rng=sd)
            t0 = time.perf_counter()
            res = make().run(env, rng=r, budget=BUDGET)
            secs += time.perf_counter() - t0
            samples.append(res.samples)
            lbr.append(res.info.get("lower_bound_ratio", np.nan))
            errors += (not res.identified) or not np.array_equal(res.answer, best)
        s = np.asarray(samples, dtype=float)
        return {"mean": float(s.mean()), "errors": errors, "us_per_sample": 1e6 * secs / s.sum(),
                "xLB": float(np.mean(lbr))}

    for title, sig in cases:
        known_sigma = float(np.max(sig))
        print(f"\n=== unknown variances, s-t paths: {title} (delta = {delta}, {runs} runs) ===")
        print(f"{'algorithm':<16}{'known sigma':>12}{'samples':>10}{'unknown':>10}{'ratio':>8}{'errors':>9}"
              f"{'us/sample':>11}{'unknown xT*':>13}")
        for name, cls in (("top-two", TopTwo), ("comb-game", CombGame), ("fw-sampling", FWSampling),
                          ("track-and-stop", TrackAndStop)):
            k = cell(lambda: cls(delta=delta, divergence="gaussian", sigma=known_sigma, decision_class=dc), sig)
            u = cell(lambda: cls(delta=delta, divergence="unknown-variance", decision_class=dc), sig)
            ratio = u["mean"] / k["mean"]
            print(f"{name:<16}{known_sigma:>12.1f}{k['mean']:>10.0f}{u['mean']:>10.0f}{ratio:>8.2f}"
                  f"{k['errors']:>4d}/{u['errors']:<4d}{u['us_per_sample']:>11.0f}{u['xLB']:>13.2f}", flush=True)
            rows.append({"instance": title, "algorithm": name, "known": k, "unknown": u, "ratio": ratio})
    return rows


#: delta of the samples-against-delta section (the MAB instance of ``mab``).
DELTAS = (0.1, 0.01, 1e-3, 1e-4, 1e-6)


def against_delta(runs: int) -> list[dict[str, Any]]:
    """Mean samples against log(1/delta) on the MAB instance of ``mab``, beside T* log(1/delta):
    an asymptotically optimal solver's samples grow with slope 1 in T* log(1/delta)."""
    env = BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0)
    T = bandit_characteristic_time(env.means()).T_star
    algs = [("top-two (IDS)", lambda d: TopTwo(delta=d)), ("track-and-stop (D)", lambda d: TrackAndStop(delta=d)),
            ("fw-sampling", lambda d: FWSampling(delta=d)), ("LUCB (faithful)", lambda d: LUCB(1, nu=d)),
            ("lil'RandLUCB (faithful)", lambda d: LilRandLUCB(1, nu=d))]
    print(f"\n=== Samples against delta: Gaussian MAB (1,.8,.6,.4,.2), valid thresholds, {runs} runs; T* = {T:.1f} ===")
    print(f"{'algorithm':<26}" + "".join(f"{'d=' + format(d, 'g'):>12}" for d in DELTAS) + "   (mean samples)")
    rows = []
    for name, make in algs:
        cells = [run_cell(lambda make=make, d=d: make(d), env, runs, 0.0) for d in DELTAS]
        rows += [{"instance": "delta", "algorithm": name, "delta": d, **c} for d, c in zip(DELTAS, cells)]
        print(f"{name:<26}" + "".join(f"{c['mean']:>12.0f}" for c in cells) + f"   errors {sum(c['errors'] for c in cells)}",
              flush=True)
    print(f"{'T* log(1/delta)':<26}" + "".join(f"{T * np.log(1 / d):>12.0f}" for d in DELTAS))
    return [{**r, "T_star": T} for r in rows]


def traces(runs: int) -> list[dict[str, Any]]:
    """The GLR statistic against its threshold at every check of one Top-Two run (trace=True),
    on the MAB instance of ``mab`` and on the partition matroid of ``class`` (delta = 0.01)."""
    delta = 0.01
    mab_env = BestKGaussianArms([1.0, 0.8, 0.6, 0.4, 0.2], K=1, sigma=1.0, rng=0)
    pm = PartitionMatroid([0, 0, 0, 1, 1, 1, 2, 2], [1, 1, 1], base=True)
    cls_env = GaussianArms([1.0, 0.7, 0.2, 0.9, 0.5, 0.1, 0.6, 0.3], sigma=0.5, rng=0)
    rows = []
    print(f"\n=== Stopping statistic against its threshold: one top-two (IDS) run each, delta = {delta} ===")
    for title, env, kw in (("Gaussian MAB (1,.8,.6,.4,.2)", mab_env, {}),
                           ("partition matroid, 3 groups", cls_env, {"decision_class": pm})):
        res = TopTwo(delta=delta, **kw).run(env.spawn(np.random.SeedSequence(2024)), rng=0, budget=BUDGET, trace=True)
        glr, thr = np.asarray(res.trace["glr"]), np.asarray(res.trace["threshold"])
        t = res.samples - len(glr) + 1 + np.arange(len(glr))  # one sample per check (batch_size 1)
        print(f"{title:<32} stopped at {res.samples} samples: GLR {glr[-1]:.2f} >= threshold {thr[-1]:.2f}")
        rows.append({"instance": title, "t": t, "glr": glr, "threshold": thr, "samples": res.samples})
    return rows


def figures(folder: Any, rows: dict[str, list[dict[str, Any]]], runs: int) -> None:
    """The results page's figures from the sections that ran."""
    plt = _figures.pyplot()
    table = rows.get("mab", []) + rows.get("bestk", []) + rows.get("class", [])
    if table:
        insts = list(dict.fromkeys(r["instance"] for r in table))
        short = [i.replace("Gaussian MAB means (1,.8,.6,.4,.2), unit variance", "MAB, 5 arms")
                 .replace("Partition matroid (one arm from each of 3 groups of 8 arms)", "partition matroid")
                 .replace("Best-K jiang-", "").replace(" (sigma 1/2)", "").replace("exponential 0.3", "exp 0.3")
                 for i in insts]
        names = list(dict.fromkeys(r["algorithm"] for r in table if r["threshold"] in ("valid", "lucb")))
        fig, ax = plt.subplots(figsize=(7.6, 4.0))
        for j, name in enumerate(names):
            st = _figures.style("top-two" if name == "top-two (IDS)" else name.replace(" (faithful)", ""))
            off = (j - (len(names) - 1) / 2) * 0.06
            pts = [(i + off, r["xLB"]) for i, inst in enumerate(insts) for r in table
                   if r["instance"] == inst and r["algorithm"] == name and r["threshold"] in ("valid", "lucb")]
            lucb = any(r["threshold"] == "lucb" for r in table if r["algorithm"] == name)
            ax.plot(*zip(*pts), ls="none", label=name, color=st["color"], marker=st["marker"],
                    mfc="none" if lucb else st["color"])
        ax.axhline(1.0, color="k", ls="--", lw=1, label="the lower bound (ratio 1)")
        ax.set(yscale="log", ylabel=f"samples / (T* log(1/delta)), mean of {runs} runs",
               title="Ratio to the lower bound, delta = 0.01 (open: LUCB family, faithful; filled: GLR solvers)")
        ax.set_xticks(range(len(insts)), short, rotation=20, ha="right")
        ax.set_ylim(0.8, None)
        ax.legend(ncol=1, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        _figures.save(fig, folder, __file__, "ratio-to-bound")
    if rows.get("delta"):
        d_rows = rows["delta"]
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        T = d_rows[0]["T_star"]
        x = np.log(1.0 / np.asarray(DELTAS))
        for name in dict.fromkeys(r["algorithm"] for r in d_rows):
            ys = [r["mean"] for r in d_rows if r["algorithm"] == name]
            st = _figures.style("top-two" if name == "top-two (IDS)" else name.replace(" (faithful)", ""))
            ax.plot(x, ys, label=name, color=st["color"], marker=st["marker"],
                    mfc="none" if "faithful" in name else st["color"])
        ax.plot(x, T * x, "k--", label="T* log(1/delta)")
        ax.set(xscale="log", yscale="log", xlabel="delta (placed at log(1/delta), log scale)",
               ylabel=f"samples (mean of {runs} runs)", title="Samples against delta: Gaussian MAB, 5 arms")
        ax.set_xticks(x, [f"{d:g}" for d in DELTAS])
        ax.minorticks_off()
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        _figures.save(fig, folder, __file__, "samples-vs-delta")
    if rows.get("trace"):
        tr = rows["trace"]
        fig, axes = plt.subplots(1, len(tr), figsize=(4.6 * len(tr), 3.4), squeeze=False)
        for ax, r in zip(axes[0], tr):
            ax.plot(r["t"], r["glr"], color="C1", lw=1.2, label="GLR statistic")
            ax.plot(r["t"], r["threshold"], color="k", ls="--", lw=1.2, label="threshold (delta = 0.01)")
            ax.axvline(r["samples"], color="gray", ls=":", lw=1)
            ax.annotate(f"stop: {r['samples']:,} samples", (r["samples"], r["threshold"][-1]),
                        xytext=(-8, 12), textcoords="offset points", ha="right")
            ax.set(xscale="log", xlabel="samples", title=f"top-two (IDS): {r['instance']}")
            ax.set_ylim(0, 1.5 * r["threshold"][-1])
        axes[0, 0].set_ylabel("statistic")
        axes[0, 0].legend(loc="upper left")
        fig.tight_layout()
        _figures.save(fig, folder, __file__, "statistic-vs-threshold")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sections", nargs="*", default=["mab", "bestk", "class", "batch"],
                    help="any of mab bestk class class-certificate batch timing timing-top-two ask-tell many-arms tas uv "
                         "uv-class delta trace")
    _figures.add_option(ap)
    args = ap.parse_args()
    t0 = time.time()
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (2 cores, shared)")
    rows = {}
    for s in args.sections:
        rows[s] = {"mab": mab, "bestk": bestk, "class": decision_class, "batch": batches, "timing": timing,
                   "timing-top-two": timing_top_two, "ask-tell": ask_tell_overhead,
                   "class-certificate": class_certificate, "many-arms": many_arms, "tas": tas_solves,
                   "uv": unknown_variance, "uv-class": unknown_variance_class, "delta": against_delta,
                   "trace": traces}[s](args.runs)
    print_factors()
    if args.figures is not None:
        figures(args.figures, rows, args.runs)
    print(f"\nload average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
