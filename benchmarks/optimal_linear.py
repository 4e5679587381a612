"""Asymptotically optimal linear pure exploration on Soare et al.'s instance.

One run, the same seeds for every algorithm: LinGame, RAGE, linear Top-Two, linear
Frank-Wolfe sampling and the oracle sampler (tracks the true optimal allocation p*), each
with the valid mixture threshold and with the papers' heuristic threshold
``log((1 + log t) / delta)``, beside combex's seed-paper algorithms (LinGapE, XY-static,
XY-adaptive, XY-oracle). Prints a markdown table: mean samples, ``samples / (T*
log(1/delta))``, ``samples / oracle sampler`` (same threshold, same seeds: the sampling
rule's own cost), errors, microseconds per sample.

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py                # 20 seeds
    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --seeds 5 --no-xy   # quick
    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --teams --seeds 5    # full bandit
    python benchmarks/optimal_linear.py --figures docs/figures                     # + the page's figure
    python benchmarks/optimal_linear.py --crowd --seeds 3 --figures docs/figures   # + the teams figure

``--teams``: team selection with full-bandit feedback (``kuroki-synthetic`` n = 8, k = 3,
the C(8, 3) = 56 teams enumerated) beside ICB.

``--crowd``: teams too large to enumerate (the oracle path: swap-decomposition stop,
oracle-randomized design): the real quiz domains (k = 10, epsilon = 0.5, delta = 0.05;
ITMANAGE has C(36, 10) = 2.5e8 teams) and ``kuroki-synthetic`` n = 36, k = 10, linear
Top-Two beside ICB (its default G-allocation) in the same run, same seeds:
team evaluations, ratio to ICB, answers epsilon-optimal, and the ratio to the lower bound
against two certified yardsticks: the LP every result reports and the moment-matrix bound
(``team_T_star_lower_bound(method="moment")``, computed once per instance).

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --crowd --seeds 3

``--yardsticks``: the two certified lower bounds of ``T*`` that the oracle path reports (the
LP, the moment bound) against the exact ``T*_eps`` on random small top-k instances.

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --yardsticks

``--paths``: small enumerable team classes, the enumerated path (adaptive sampling, mixture
threshold) against the oracle-randomized design (fixed-design threshold), linear Top-Two.

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --paths --seeds 5

``--floor``: ``kuroki-synthetic`` n = 36, k = 10, epsilon = 0.5: the noise-free floor of the
fixed-design stop (exact means, expected Gram matrix of the uniform design; and the best
oblivious design chosen knowing the means) against ICB / 10 and a measured top-two run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --floor --seeds 5

``--limits``: the same instance, single swaps: the smallest per-sample cost any design could
have (an SDP relaxation over the teams' moment matrix) against the uniform design's, and
a threshold calibrated by simulation over the checkpoints against the union bound.

    OPENBLAS_NUM_THREADS=1 python benchmarks/optimal_linear.py --limits --seeds 1
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import _figures
import numpy as np

from combex.environments import soare
from combex.identification import characteristic_time, team_T_star_lower_bound
from combex.solvers import RAGE, LinearFWSampling, LinearTopTwo, LinGame
from combex.solvers.linear import LinGapE, XYAdaptive, XYOracle, XYStatic
from combex.solvers.optimal_linear import OracleSampler


def run(solver, d, seeds):
    rows = []
    for s in seeds:
        env = soare(d, rng=1000 + s)
        t0 = time.perf_counter()
        r = solver.run(env, rng=s)
        rows.append((r.samples, time.perf_counter() - t0, r.answer == env.best(), r.status))
    return rows


def teams(seeds) -> None:
    from combex.experiments._instances import make_instance
    from combex.solvers import ICB

    def env_of(s):
        return make_instance("kuroki-synthetic", rng=100 + s, n=8, k=3)

    def oracle(s):  # tracks the true p* over the 56 enumerated teams (same order as the runs' arms)
        X = LinearTopTwo().start(env_of(s), rng=s).X
        return OracleSampler(characteristic_time(X, env_of(s).means()).allocation)

    print("kuroki-synthetic n=8, k=3 (valid thresholds)\n")
    print("| algorithm | mean team evaluations | / T* log(1/delta) | / oracle sampler | errors | us / sample |")
    print("|---|---:|---:|---:|---:|---:|")
    base = None
    for name, S in [("oracle sampler (p*)", oracle), ("lingame", LinGame()), ("top-two (linear)", LinearTopTwo()),
                    ("fw-sampling (linear)", LinearFWSampling()), ("rage", RAGE()), ("icb (seed paper)", ICB())]:
        res = []
        t0 = time.perf_counter()
        for s in seeds:
            env = env_of(s)
            r = (S if hasattr(S, "run") else S(s)).run(env, rng=s, budget=5_000_000)
            res.append((r.samples, env.is_correct(r.answer, getattr(S, "tolerance", 0.0)),
                        r.info.get("lower_bound_ratio", np.nan)))
        el = time.perf_counter() - t0
        ratio = np.array([c for _, _, c in res], dtype=float)
        rtxt = f"{np.mean(ratio):.2f}" if np.isfinite(ratio).all() else "-"
        mean = float(np.mean([a for a, _, _ in res]))
        base = base or mean
        print(f"| {name} | {mean:,.0f} | {rtxt} | {mean / base:.2f} | {sum(not b for _, b, _ in res)}/{len(res)} "
              f"| {1e6 * el / sum(a for a, _, _ in res):.1f} |", flush=True)


def crowd(seeds, domains, figures=None) -> None:
    from combex.environments import CrowdQuiz
    from combex.experiments._instances import make_instance
    from combex.solvers import ICB

    eps, delta = 0.5, 0.05
    print(f"team selection, k = 10, epsilon = {eps}, delta = {delta}, {len(seeds)} seeds (valid thresholds: "
          "top-two's default is the fixed-design one on this path)\n")
    print("| instance | algorithm | mean team evaluations | ICB / this | eps-optimal | stop bound "
          "| ratio to T* log(1/delta), certified upper bound: LP yardstick (every result's) | same, moment yardstick "
          "| s / run |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|")
    shown = []
    for dom in domains:
        rows = {}
        for name, S in [("top-two (oracle path)", LinearTopTwo(delta, epsilon=eps)),
                        ("top-two, mixture threshold", LinearTopTwo(delta, epsilon=eps, threshold="mixture")),
                        ("icb (seed paper)", ICB(delta=delta, epsilon=eps))]:
            res = []
            for s in seeds:
                if dom == "kuroki-synthetic":
                    env = make_instance("kuroki-synthetic", rng=100 + s, n=36, k=10)
                else:
                    env = CrowdQuiz(dom, k=10, rng=100 + s)
                t0 = time.perf_counter()
                r = S.run(env, rng=s, budget=100_000_000)
                mu = env.means()
                gap = float(mu[env.best()].sum() - mu[np.asarray(r.answer, dtype=bool)].sum())
                el = time.perf_counter() - t0
                # the tighter yardstick, for every row (memoized per instance)
                t_m, _ = team_T_star_lower_bound(env, epsilon=eps, method="moment")
                mom = r.samples / (t_m * math.log(1 / delta))
                res.append((r.samples, gap <= eps + 1e-9, el, r.info.get("stop_bound", "-"),
                            r.info.get("lower_bound_ratio", float("nan")), mom))
            rows[name] = res
        icb = np.mean([a for a, *_ in rows["icb (seed paper)"]])
        for name, res in rows.items():
            mean = np.mean([a for a, *_ in res])
            ratio = np.array([q[4] for q in res], dtype=float)
            mom = np.array([q[5] for q in res], dtype=float)
            rtxt = f"{np.mean(ratio):.2f}" if np.isfinite(ratio).all() else "- (not computed)" if (
                name.startswith("top")) else "-"
            mtxt = f"{np.mean(mom):.2f}" if np.isfinite(mom).all() else "-"
            print(f"| {dom} | {name} | {mean:,.0f} | {icb / mean:.1f} | {sum(q[1] for q in res)}/{len(res)} "
                  f"| {res[0][3]} | {rtxt} | {mtxt} | {np.mean([q[2] for q in res]):.1f} |", flush=True)
            shown.append({"instance": dom, "algorithm": name, "mean": float(mean),
                          "lp": float(np.mean([q[0] / q[4] for q in res])),
                          "moment": float(np.mean([q[0] / q[5] for q in res]))})
    if figures is not None:
        teams_figure(figures, shown, len(seeds), delta, eps)


def teams_figure(folder, shown, n_seeds, delta, eps) -> None:
    """Team evaluations per instance: linear Top-Two (oracle path) beside ICB, with the two
    certified lower bounds of T*_eps log(1/delta) (black ticks: LP, grey: moment)."""
    plt = _figures.pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 3.9))
    insts = list(dict.fromkeys(r["instance"] for r in shown))
    names = list(dict.fromkeys(r["algorithm"] for r in shown))
    xs = np.arange(len(insts))
    for j, name in enumerate(names):
        key = "icb" if name.startswith("icb") else "top-two" if name == "top-two (oracle path)" else name
        st = _figures.style(key)
        ys = [next(r["mean"] for r in shown if r["instance"] == i and r["algorithm"] == name) for i in insts]
        ax.plot(xs + (j - 1) * 0.12, ys, ls="none", label=name, color=st["color"], marker=st["marker"],
                mfc=st["color"] if j == 0 or key == "icb" else "none")
    for key, color, label in (("moment", "0.5", "T* log(1/delta) >= moment yardstick"),
                              ("lp", "k", "T* log(1/delta) >= LP yardstick")):
        ys = [np.mean([r[key] for r in shown if r["instance"] == i]) for i in insts]
        ax.plot(xs, ys, ls="none", marker="_", ms=28, mew=1.5, color=color, label=label)
    ax.set(yscale="log", ylabel=f"team evaluations (mean of {n_seeds} seeds)",
           title=f"Best team of 10, epsilon = {eps}, delta = {delta}: teams too many to enumerate")
    ax.set_xticks(xs, insts)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _figures.save(fig, folder, __file__, "teams-vs-icb")


def soare_figure(folder, table, bound, n_seeds, d, delta) -> None:
    """samples / (T* log(1/delta)) per solver on Soare et al.'s instance, valid and heuristic
    thresholds (seed-paper algorithms: their own valid thresholds)."""
    plt = _figures.pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 3.9))
    labels = []
    for i, (name, thr, rows, mean, _) in enumerate(table):
        st = _figures.style(name.split(" (")[0])
        ratios = np.array([r[0] for r in rows], dtype=float) / bound
        heur = thr == "heuristic"
        ax.plot(np.full(len(ratios), i), ratios, ls="none", marker=st["marker"], color=st["color"], alpha=0.25,
                ms=4, mfc="none" if heur else st["color"])
        ax.plot([i], [mean / bound], ls="none", marker=st["marker"], color=st["color"], ms=9,
                mfc="none" if heur else st["color"])
        labels.append(f"{name}, {thr}" if thr != "own (valid)" else name)
    ax.axhline(1.0, color="k", ls="--", lw=1)
    ax.text(len(table) - 0.5, 1.08, "lower bound", ha="right")
    ax.set(yscale="log", ylabel="samples / (T* log(1/delta))",
           title=f"Soare et al.'s instance, d = {d}, delta = {delta}: {n_seeds} seeds (small dots) and their mean; "
                 "open = heuristic threshold")
    ax.title.set_fontsize(8.5)
    ax.set_xticks(range(len(table)), labels, rotation=35, ha="right", fontsize=7.5)
    ax.set_ylim(0.7, None)
    _figures.save(fig, folder, __file__, "soare-ratio")


def paths(seeds) -> None:
    """Small enumerable team classes: the enumerated path (adaptive sampling, mixture
    threshold) against the oracle-randomized design with the fixed-design threshold
    (``max_enumerate=2`` forces it), linear Top-Two, same seeds."""
    from combex.environments import FullBandit
    from combex.experiments import make_instance

    cases = [
        ("kuroki n=8, k=3", lambda s: make_instance("kuroki-synthetic", rng=100 + s, n=8, k=3), 0.0),
        ("kuroki n=8, k=3, gap 0.1", lambda s: make_instance("kuroki-synthetic", rng=100 + s, n=8, k=3, gap=0.1), 0.0),
        ("kuroki n=10, k=5, eps 0.5", lambda s: make_instance("kuroki-synthetic", rng=100 + s, n=10, k=5), 0.5),
        ("top-2 of 6, near-tie", lambda s: FullBandit([1.0, 0.9, 0.85, 0.2, 0.1, 0.0], k=2, rng=s), 0.0),
        ("top-4 of 8, gap 0.1 at the boundary",
         lambda s: FullBandit([1.0, 0.98, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0], k=4, rng=s), 0.0),
    ]
    print("| instance | enumerated (adaptive, mixture) | design (fixed-design) | enumerated / design |")
    print("|---|---:|---:|---:|")
    for label, mk, eps in cases:
        out = []
        for S in (LinearTopTwo(epsilon=eps), LinearTopTwo(epsilon=eps, max_enumerate=2)):
            res = []
            for s in seeds:
                env = mk(s)
                r = S.run(env, rng=s, budget=20_000_000)
                assert env.is_correct(r.answer, eps)
                res.append(r.samples)
            out.append(float(np.mean(res)))
        print(f"| {label} | {out[0]:,.0f} | {out[1]:,.0f} | {out[0] / out[1]:.2f} |", flush=True)


def floor(seeds) -> None:
    """kuroki-synthetic n = 36, k = 10, gap 0.5, epsilon 0.5: how far below ICB a run with
    the fixed-design threshold *can* get.

    ``noise-free floor``: the first checkpoint ``c_m`` at which the stop would pass if the
    estimate were exact (``theta_hat = theta``) and the Gram matrix its expectation under the
    uniform design, ``A = t ((p - q) I + q 11^T)``. On the sum-zero directions every base at
    swap distance s has ``||x_hat - x_S||^2_{A^-1} = 2 s / (t (p - q))``, so the smallest GLR
    at distance s is ``(eps + G_s)^2 t (p - q) / (4 s sigma^2)``, ``G_s`` the sum of the s
    smallest gaps (the s weakest members against the s strongest non-members); it must exceed
    ``beta(m, s)`` for every s. ``oracle design``: the same floor for the best of a family of
    oblivious designs chosen *knowing theta* (a fraction ``alpha`` of uniform k-sets, the rest
    keeping the members far from the boundary fixed and drawing the others at random),
    with the Gram matrix from 40,000 draws and the exact distance-1 and distance-2 minima
    (the closest 6 x 8 members). A run needs more than its floor: it stops on a noisy
    estimate, the smallest of many noisy GLRs."""
    import itertools

    from combex.experiments._instances import make_instance
    from combex.solvers import ICB
    from combex.solvers.optimal_linear import FIXED_DESIGN_SPACING

    n, k, gap, eps, delta = 36, 10, 0.5, 0.5, 0.05
    p = k / n
    q = k * (k - 1) / (n * (n - 1))
    print(f"kuroki-synthetic n = {n}, k = {k}, gap {gap}, epsilon {eps}, delta {delta}: team evaluations\n")
    print("| seed | ICB | ICB / 10 | top-two (measured) | noise-free floor, uniform design | binding s "
          "| noise-free floor, best oracle design | floor / (ICB / 10) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in seeds:
        env = make_instance("kuroki-synthetic", rng=100 + s, n=n, k=k)
        th = env.means()
        icb = ICB(delta=delta, epsilon=eps).run(env, rng=s, budget=10**8).samples
        env = make_instance("kuroki-synthetic", rng=100 + s, n=n, k=k)
        top = LinearTopTwo(delta, epsilon=eps).run(env, rng=s, budget=10**8).samples
        ex = LinearTopTwo(delta, epsilon=eps).start(make_instance("kuroki-synthetic", rng=100 + s, n=n, k=k), rng=s)
        sig2 = ex.sigma**2
        o = np.sort(th)[::-1]
        G = np.cumsum(o[k - 1::-1][:k] - o[k:2 * k])  # n - k >= k here
        sizes = range(1, min(k, n - k) + 1)
        m, bind = 1, 1
        while True:
            t = 10.0 * n * (1.0 + FIXED_DESIGN_SPACING) ** (m - 1)
            ratios = {sz: (eps + G[sz - 1]) ** 2 * t * (p - q) / (4 * sz * sig2) / ex._fixed_design_beta(m, sz, n, k)
                      for sz in sizes}
            if min(ratios.values()) > 1.0:
                break
            bind = min(ratios, key=ratios.get)  # the distance that failed last
            m += 1
        # the best oracle design of the family (theta known), continuous-time floor at the
        # final checkpoint's thresholds (a lower bound of its checkpoint floor)
        g = np.random.default_rng(0)
        order = np.argsort(-th)
        S = np.zeros(n, dtype=bool)
        S[order[:k]] = True
        thr = 0.5 * (th[order[k - 1]] + th[order[k]])
        I, J = np.flatnonzero(S), np.flatnonzero(~S)
        b1, b2 = ex._fixed_design_beta(m, 1, n, k), ex._fixed_design_beta(m, 2, n, k)

        def need(A):
            Ai = np.linalg.pinv(A)
            gg = th[I][:, None] - th[J][None, :]
            dd = np.diag(Ai)
            v = dd[I][:, None] + dd[J][None, :] - 2 * Ai[np.ix_(I, J)]
            r1 = ((gg + eps) ** 2 / (2 * sig2 * v)).min()
            ii, jj = np.argsort(gg.min(axis=1))[:6], np.argsort(gg.min(axis=0))[:8]
            r2 = math.inf
            for a in itertools.combinations(ii, 2):
                for b in itertools.combinations(jj, 2):
                    y = np.zeros(n)
                    y[I[list(a)]] += 1
                    y[J[list(b)]] -= 1
                    r2 = min(r2, (y @ th + eps) ** 2 / (2 * sig2 * (y @ Ai @ y)))
            return max(b1 / r1, b2 / r2)

        def gram(alpha, win, N=40_000):
            act = np.flatnonzero(np.abs(th - thr) <= win)
            F = np.flatnonzero(S & (np.abs(th - thr) > win))
            mm = k - F.size
            nu = int(alpha * N)
            X = np.zeros((N, n))
            idx = np.argpartition(-g.standard_normal((nu, n)), k - 1, axis=1)[:, :k]
            X[np.arange(nu)[:, None], idx] = 1
            if N > nu:
                if not 0 < mm < act.size:
                    return None
                idx = np.argpartition(-g.standard_normal((N - nu, act.size)), mm - 1, axis=1)[:, :mm]
                X[nu:, F] = 1
                X[np.arange(nu, N)[:, None], act[idx]] = 1
            return X.T @ X / N

        best = need(gram(1.0, 0.0))
        for alpha in (0.1, 0.2, 0.3, 0.5):
            for win in (0.3, 0.4, 0.5, 0.6, 0.8):
                A = gram(alpha, win)
                if A is not None:
                    best = min(best, need(A))
        print(f"| {s} | {icb:,} | {icb / 10:,.0f} | {top:,} | {t:,.0f} | {bind} | {best:,.0f} "
              f"| {t / (icb / 10):.2f} |", flush=True)


def limits(seeds, horizon: int = 45, reps: int = 20_000, keep: int = 30) -> None:
    """kuroki-synthetic n = 36, k = 10, gap 0.5, epsilon 0.5: two ways past the floor of
    ``--floor``, and how far each could go (the single swaps, ``s = 1``, the term that any
    stop must clear).

    ``design``: the per-sample cost of the hardest single swap, ``T_1(A) = max_(i, j) 2
    sigma^2 ||e_i - e_j||^2_{A^-1} / (eps + theta_i - theta_j)^2`` (``A`` the Gram matrix per
    sample), for the uniform design against the smallest value any design can have, even one
    chosen knowing theta (an adaptive design included: its average Gram matrix is a
    design's). The teams' moment matrix ``M = E[x x^T]`` satisfies ``diag M = p``, ``sum p =
    k``, ``M 1 = k p``, ``M >= 0`` and ``[[1, p^T], [p, M]] >= 0``; minimising ``T_1``
    over that relaxation (one LMI ``[[M, y], [y^T, c_y u]] >= 0`` per swap; SCS at 1e-7,
    which agreed with Clarabel's interior point to 6 digits on seed 0 in a seventh of the time) gives
    a lower bound of ``T_1`` over every design; keeping only the ``keep`` swaps of smallest
    gap keeps it a lower bound (a max over fewer swaps) and makes the solve fast. The noise-free floor of the single swaps is
    then at least ``T_1 beta(m, 1)`` at the first checkpoint that passes.

    ``threshold``: the union over checkpoints. On the idealized uniform design (``A_t = t
    Abar`` at every checkpoint, Gaussian noise), ``reps`` simulated runs give the constant
    ``z`` with ``P(exists m <= horizon, (i, j): (xi_j - xi_i) / (sigma ||e_i - e_j||_{A^-1})
    > z) = delta 6 / pi^2`` (the single swaps' share of delta), against the union bound's
    ``z`` at each checkpoint. A finite horizon makes the simulated threshold optimistic (a
    valid one must grow with m)."""
    import cvxpy as cp

    from combex.experiments._instances import make_instance
    from combex.solvers import ICB
    from combex.solvers.optimal_linear import FIXED_DESIGN_SPACING

    n, k, gap, eps, delta = 36, 10, 0.5, 0.5, 0.05
    pq, q = k / n - k * (k - 1) / (n * (n - 1)), k * (k - 1) / (n * (n - 1))
    Abar = pq * np.eye(n) + q * np.ones((n, n))
    Ai = np.linalg.inv(Abar)
    c0 = 10.0 * n
    print(f"kuroki-synthetic n = {n}, k = {k}, gap {gap}, epsilon {eps}, delta {delta}: single swaps\n")
    print("| seed | ICB / 10 | T_1 uniform design | T_1 any design (lower bound) | design gain (at most) "
          "| floor of the single swaps, any design | / (ICB / 10) | solve s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    ex = None
    for s in seeds:
        env = make_instance("kuroki-synthetic", rng=100 + s, n=n, k=k)
        th = env.means()
        icb = ICB(delta=delta, epsilon=eps).run(env, rng=s, budget=10**8).samples
        ex = LinearTopTwo(delta, epsilon=eps).start(make_instance("kuroki-synthetic", rng=100 + s, n=n, k=k), rng=s)
        sig2 = ex.sigma**2
        o = np.argsort(-th)
        pairs = [(i, j) for i in o[:k] for j in o[k:]]
        cost = {(i, j): (eps + th[i] - th[j]) ** 2 / (2 * sig2) for i, j in pairs}
        t_unif = max((Ai[i, i] + Ai[j, j] - 2 * Ai[i, j]) / cost[i, j] for i, j in pairs)
        pairs = sorted(pairs, key=cost.get)[:keep]  # fewer swaps: a smaller max, still a lower bound
        P, u = cp.Variable((n + 1, n + 1), PSD=True), cp.Variable()  # P = [[1, p^T], [p, M]]
        p, M = P[0, 1:], P[1:, 1:]
        cons = [P[0, 0] == 1, cp.diag(M) == p, cp.sum(p) == k, M @ np.ones(n) == k * p, M >= 0]
        for i, j in pairs:
            y = np.zeros(n)
            y[i], y[j] = 1.0, -1.0
            B = cp.Variable((n + 1, n + 1), PSD=True)  # [[M, y], [y^T, c_y u]] >= 0
            cons += [B[:n, :n] == M, B[:n, n] == y, B[n, n] == cost[i, j] * u]
        t0 = time.perf_counter()
        cp.Problem(cp.Minimize(u), cons).solve(solver=cp.SCS, eps=1e-7, max_iters=100_000)
        el = time.perf_counter() - t0
        t_any = float(u.value)
        m = 1
        while c0 * (1.0 + FIXED_DESIGN_SPACING) ** (m - 1) < t_any * ex._fixed_design_beta(m, 1, n, k):
            m += 1
        fl = c0 * (1.0 + FIXED_DESIGN_SPACING) ** (m - 1)
        print(f"| {s} | {icb / 10:,.0f} | {t_unif:.1f} | {t_any:.1f} | {t_unif / t_any:.2f} | {fl:,.0f} "
              f"| {fl / (icb / 10):.2f} | {el:.0f} |", flush=True)

    from scipy.stats import norm

    rng = np.random.default_rng(1)
    L = np.linalg.cholesky(Abar)
    I, J = np.arange(k), np.arange(k, n)
    w2 = Ai[I, I][:, None] + Ai[J, J][None, :] - 2 * Ai[np.ix_(I, J)]
    top = np.full(reps, -np.inf)
    S, t_prev = np.zeros((reps, n)), 0.0
    for m in range(horizon):
        c = c0 * (1.0 + FIXED_DESIGN_SPACING) ** m
        S += (rng.standard_normal((reps, n)) @ L.T) * math.sqrt(c - t_prev)
        t_prev = c
        xi = S @ Ai / c
        z = (xi[:, J][:, None, :] - xi[:, I][:, :, None]) / np.sqrt(w2 / c)[None]
        top = np.maximum(top, z.reshape(reps, -1).max(axis=1))
    share = delta * 6 / math.pi**2
    z_sim = float(np.quantile(top, 1.0 - share))
    print(f"\nthreshold of the single swaps, idealized uniform design, {reps:,} simulated runs, "
          f"{horizon} checkpoints (t up to {c0 * (1 + FIXED_DESIGN_SPACING) ** (horizon - 1):,.0f}):\n")
    print("| checkpoint m | t | union bound: beta(m, 1) | simulated constant threshold z^2 / 2 | union / simulated |")
    print("|---:|---:|---:|---:|---:|")
    for m in (8, 12, 16):
        b = ex._fixed_design_beta(m, 1, n, k)
        print(f"| {m} | {c0 * (1 + FIXED_DESIGN_SPACING) ** (m - 1):,.0f} | {b:.2f} | {z_sim**2 / 2:.2f} "
              f"| {b / (z_sim**2 / 2):.2f} |")
    print(f"\n(one checkpoint alone: z^2 / 2 = {norm.isf(share / (k * (n - k))) ** 2 / 2:.2f} by the union "
          "over the single swaps)")


def yardsticks(instances: int = 40) -> None:
    """The two certified yardsticks of the oracle path against the exact ``T*_eps`` (brute
    force over all k-sets): random top-k instances, n = 6-9, means uniform on [0, 1],
    epsilon 0, 0.1 or 0.3 (the instances with more than 8 epsilon-good teams, whose exact
    ``T*_eps`` is not computed, are left out)."""
    from combex.oracles import TopK
    from combex.identification import exchange_pairs, swap_T_star_lower_bound, swap_T_star_moment_bound

    rng = np.random.default_rng(5)
    rows = []
    for _ in range(instances):
        n = int(rng.integers(6, 10))
        k = int(rng.integers(2, min(5, n - 1)))
        theta, eps = rng.uniform(0, 1, n), float(rng.choice([0.0, 0.1, 0.3]))
        try:
            exact = characteristic_time(np.array(list(TopK(n, k).enumerate()), float), theta, epsilon=eps).T_star
        except Exception:  # noqa: BLE001 -- more than 8 epsilon-good teams: no exact T*_eps
            continue
        if not np.isfinite(exact):
            continue
        dc = TopK(n, k)
        xs = np.asarray(dc.argmax(theta), dtype=bool)
        lp = swap_T_star_lower_bound(theta, xs, exchange_pairs(dc, xs), k, epsilon=eps)
        mom, _ = swap_T_star_moment_bound(theta, xs, exchange_pairs(dc, xs), k, epsilon=eps)
        srt = np.sort(theta)[::-1]
        rows.append((eps > 0 and srt[k - 1] - srt[k] <= eps, lp / exact, mom / exact))
    print("| epsilon-good teams | instances | LP / exact: min, median | moment / exact: min, median |")
    print("|---|---:|---:|---:|")
    for name, several in (("one", False), ("several", True)):
        r = np.array([(a, b) for s, a, b in rows if s == several])
        print(f"| {name} | {len(r)} | {r[:, 0].min():.2f}, {np.median(r[:, 0]):.2f} "
              f"| {r[:, 1].min():.2f}, {np.median(r[:, 1]):.2f} |")


def main() -> None:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--delta", type=float, default=0.05)
    ap.add_argument("--no-xy", action="store_true", help="skip the XY baselines (slow)")
    ap.add_argument("--teams", action="store_true", help="the full-bandit team-selection table instead")
    ap.add_argument("--crowd", action="store_true", help="teams too large to enumerate (quiz domains, kuroki n=36)")
    ap.add_argument("--paths", action="store_true",
                    help="small enumerable team classes: enumerated path against the design path")
    ap.add_argument("--floor", action="store_true",
                    help="kuroki n=36: the noise-free floor of the fixed-design stop against ICB / 10")
    ap.add_argument("--limits", action="store_true",
                    help="kuroki n=36: how much a better design or threshold could gain (single swaps)")
    ap.add_argument("--yardsticks", action="store_true",
                    help="the oracle path's two certified yardsticks against the exact T* (random small instances)")
    ap.add_argument("--domains", default="ITMANAGE,MEDICINE,CHINESE,kuroki-synthetic",
                    help="comma-separated --crowd instances")
    _figures.add_option(ap)
    args = ap.parse_args()
    d, delta, seeds = args.d, args.delta, list(range(args.seeds))
    if args.teams:
        teams(seeds)
        return
    if args.crowd:
        crowd(seeds, args.domains.split(","), args.figures)
        return
    if args.paths:
        paths(seeds)
        return
    if args.floor:
        floor(seeds)
        return
    if args.limits:
        limits(seeds)
        return
    if args.yardsticks:
        yardsticks()
        return
    env = soare(d)
    lb = characteristic_time(env.features, env.theta)
    bound = lb.T_star * math.log(1.0 / delta)
    print(f"soare d={d}, delta={delta}, {len(seeds)} seeds; T* = {lb.T_star:.1f}, "
          f"T* log(1/delta) = {bound:.4g}\n")
    table = []
    oracle_mean = {}
    for thr in ("mixture", "heuristic"):
        algos = [
            ("oracle sampler (p*)", OracleSampler(lb.allocation, delta, threshold=thr)),
            ("lingame", LinGame(delta, threshold=thr)),
            ("top-two (linear)", LinearTopTwo(delta, threshold=thr)),
            ("fw-sampling (linear)", LinearFWSampling(delta, threshold=thr)),
        ]
        for name, solver in algos:
            rows = run(solver, d, seeds)
            mean = float(np.mean([r[0] for r in rows]))
            if name.startswith("oracle"):
                oracle_mean[thr] = mean
            table.append((name, thr, rows, mean, mean / oracle_mean[thr]))
            print(f"  done {name} / {thr}", flush=True)
    base = [("rage", RAGE(delta)), ("LinGapE", LinGapE(delta))]
    if not args.no_xy:
        base += [("XY-oracle", XYOracle(delta)), ("XY-static", XYStatic(delta)), ("XY-adaptive", XYAdaptive(delta))]
    for name, solver in base:
        rows = run(solver, d, seeds)
        mean = float(np.mean([r[0] for r in rows]))
        table.append((name, "own (valid)", rows, mean, mean / oracle_mean["mixture"]))
        print(f"  done {name}", flush=True)
    print()
    print("| algorithm | threshold | mean samples | / T* log(1/delta) | / oracle sampler (same threshold) "
          "| errors | us / sample |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, thr, rows, mean, orc in table:
        errors = sum(1 for r in rows if not r[2])
        us = 1e6 * sum(r[1] for r in rows) / sum(r[0] for r in rows)
        print(f"| {name} | {thr} | {mean:,.0f} | {mean / bound:.2f} | {orc:.2f} | {errors}/{len(rows)} | {us:.2f} |")
    if args.figures is not None:
        soare_figure(args.figures, table, bound, len(seeds), d, delta)


if __name__ == "__main__":
    main()
