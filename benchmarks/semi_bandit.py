"""Semi-bandit Best-K benchmarks: speed, and Figures 1 and 2 of Jiang, Li & Qiao (2017).

Usage::

    python benchmarks/semi_bandit.py                 # everything (several minutes)
    python benchmarks/semi_bandit.py --quick         # small N, few runs (about a minute)
    python benchmarks/semi_bandit.py --sections speed
    python benchmarks/semi_bandit.py --sections fig1 fig2 --Ns 10 20 50 100 --runs 20
    python benchmarks/semi_bandit.py --sections fig1 fig2 --Ns 10 20 50 100 --runs 8 --lilucb-max-n 20 --figures docs/figures

Sections
--------
speed  lil'RandLUCB (heuristic) on jiang-1sparse with N = 10^4, K = 2 (target < 30 s), and
       rounds per second of every solver at N = 1,000.
fig1   Best-K (Figure 1): 1-sparse and 0.3-Exponential, K = 2 and K = N/2, faithful and
       heuristic: mean samples per N per algorithm (LUCB has no heuristic version).
fig2   Best-1 (Figure 2): 1-sparse, lil-Exponential alpha = 0.3 and 0.6, with lil'UCB.
cpe    Generalized lil'CLUCB on a partition matroid and on s-t paths.

Every setting uses Gaussian rewards of variance 1/4 and delta = 0.01 (the paper's nu, Section 5). Runs use
common random numbers: run r of every algorithm sees the same noise stream
(``SeedSequence(seed).spawn(runs)[r]``). The paper's qualitative claims are checked and
printed at the end of each figure. This script prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import _figures
import networkx as nx
import numpy as np

from combex.environments import GaussianArms
from combex.environments._instances_semi import (
    jiang_1sparse,
    jiang_exponential,
    lil_exponential,
)
from combex.solvers.semi_bandit import LUCB, LilCLUCB, LilLUCB, LilRandLUCB, LilUCB, LUCBPlusPlus

DELTA = 0.01
BEST_K_ALGS = [("LUCB", LUCB), ("lil'LUCB", LilLUCB), ("LUCB++", LUCBPlusPlus), ("lil'RandLUCB", LilRandLUCB), ("lil'CLUCB", LilCLUCB)]
BUDGET = 5_000_000  # per run, against runaway settings (reported if hit)


def run_setting(
    make_env: Callable[[Any], Any],
    solver: Any,
    runs: int,
    seed: int,
    correct: Callable[[Any, Any], bool] | None = None,
) -> dict[str, Any]:
    """Mean samples, errors and budget-exhausted runs of ``solver`` over ``runs`` seeds."""
    samples, errors, exhausted, wall, bound = [], 0, 0, 0.0, []
    for child in np.random.SeedSequence(seed).spawn(runs):
        env_rng, alg_rng = np.random.default_rng(child).spawn(2)
        env = make_env(env_rng)
        t0 = time.perf_counter()
        res = solver.run(env, rng=alg_rng, budget=BUDGET)
        wall += time.perf_counter() - t0
        samples.append(res.samples)
        bound.append(_figures.bound_samples(res))
        exhausted += res.status != "identified"
        errors += not (correct(env, res.answer) if correct else env.is_correct(res.answer))
    return {"mean": float(np.mean(samples)), "errors": errors, "exhausted": exhausted, "wall": wall, "runs": runs,
            "bound": float(np.mean(bound))}


def figure(args: argparse.Namespace, name: str, title: str,
           panels: list[tuple[str, list[str], dict[tuple[int, str], dict[str, Any]]]]) -> None:
    """One panel per instance: mean samples against N (faithful mode), one line per algorithm,
    and the lower bound T* log(1/delta) of the instance (black dashes)."""
    if args.figures is None:
        return
    plt = _figures.pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels), 3.4), squeeze=False)
    for ax, (ptitle, cols, cells) in zip(axes[0], panels):
        for c in cols:
            ns = [n for n in args.Ns if (n, c) in cells]
            ax.plot(ns, [cells[(n, c)]["mean"] for n in ns], label=c, **_figures.style(c))
        ns = [n for n in args.Ns if (n, cols[0]) in cells]
        ax.plot(ns, [cells[(n, cols[0])]["bound"] for n in ns], "k--", label="T* log(1/nu)")
        ax.set(xscale="log", yscale="log", xlabel="N arms", title=ptitle)
        ax.set_xticks(args.Ns, [str(n) for n in args.Ns])
        ax.minorticks_off()
    axes[0, 0].set_ylabel(f"samples (mean of {args.runs} runs)")
    handles, labels = axes[0, -1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.06))
    fig.suptitle(title)
    fig.tight_layout()
    _figures.save(fig, args.figures, __file__, name)


def print_table(title: str, Ns: list[int], cols: list[str], cells: dict[tuple[int, str], dict[str, Any]]) -> None:
    print(f"\n{title}")
    w = max(12, max(len(c) for c in cols) + 2)
    print(f"{'N':>6}" + "".join(f"{c:>{w}}" for c in cols))
    for n in Ns:
        row = f"{n:>6}"
        for c in cols:
            cell = cells.get((n, c))
            if cell is None:
                row += f"{'-':>{w}}"
            else:
                flag = "*" if cell["errors"] or cell["exhausted"] else ""
                row += f"{cell['mean']:>{w - 1}.0f}{flag or ' '}"
        print(row)
    bad = [(n, c, v["errors"], v["exhausted"]) for (n, c), v in cells.items() if v["errors"] or v["exhausted"]]
    if bad:
        print("  * errors / budget-exhausted runs:", ", ".join(f"N={n} {c}: {e} err, {x} exh" for n, c, e, x in bad))
    tot_err = sum(v["errors"] for v in cells.values())
    tot_runs = sum(v["runs"] for v in cells.values())
    print(f"  error rate over all {tot_runs} runs of this panel: {tot_err / tot_runs:.4f}")


def verdict(ok: bool, text: str) -> None:
    print(f"  [{'HOLDS' if ok else 'FAILS'}] {text}")


# ---------------------------------------------------------------------- speed
def section_speed(args: argparse.Namespace) -> None:
    print("\n=== speed ===")
    env = jiang_1sparse(10_000, 2, rng=0)
    t0 = time.perf_counter()
    res = LilRandLUCB(2, delta=DELTA, mode="heuristic").run(env, rng=1)
    dt = time.perf_counter() - t0
    print(
        f"lil'RandLUCB heuristic, jiang-1sparse N=10^4 K=2: {dt:.1f} s, {res.samples} samples, "
        f"{res.rounds} rounds ({res.rounds / dt:,.0f} rounds/s), correct={env.is_correct(res.answer)}; "
        f"target < 30 s: {'met' if dt < 30 else 'MISSED'}"
    )
    print("\nrounds per second at N = 1,000 (jiang-1sparse, K = 2; lil'UCB: K = 1), one run each:")
    print(f"{'solver':<14}{'mode':<11}{'samples':>10}{'rounds':>10}{'seconds':>9}{'rounds/s':>11}")
    for name, cls in BEST_K_ALGS + [("lil'UCB", LilUCB)]:
        for mode in ("faithful", "heuristic"):
            if cls is LUCB and mode == "heuristic":
                continue
            K = 1 if cls is LilUCB else 2
            env = jiang_1sparse(1000, K, rng=2)
            t0 = time.perf_counter()
            r = cls(K, delta=DELTA, mode=mode).run(env, rng=3, budget=BUDGET)
            dt = time.perf_counter() - t0
            print(f"{name:<14}{mode:<11}{r.samples:>10}{r.rounds:>10}{dt:>9.2f}{r.rounds / dt:>11,.0f}")


# ---------------------------------------------------------------------- figure 1
def section_fig1(args: argparse.Namespace) -> None:
    print("\n=== Figure 1: Best-K (mean samples over", args.runs, "runs; delta = 0.01) ===")
    panels = [
        ("1-Sparse, K=2", lambda n, r: jiang_1sparse(n, 2, rng=r), "K2"),
        ("1-Sparse, K=N/2", lambda n, r: jiang_1sparse(n, n // 2, rng=r), "KN2"),
        ("0.3-Exponential, K=2", lambda n, r: jiang_exponential(n, 2, 0.3, rng=r), "K2"),
        ("0.3-Exponential, K=N/2", lambda n, r: jiang_exponential(n, n // 2, 0.3, rng=r), "KN2"),
    ]
    shown = []
    for title, make, kind in panels:
        for mode in ("faithful", "heuristic"):
            cells: dict[tuple[int, str], dict[str, Any]] = {}
            cols = [c for c, cls in BEST_K_ALGS if not (cls is LUCB and mode == "heuristic")]
            for n in args.Ns:
                K = 2 if kind == "K2" else n // 2
                for name, cls in BEST_K_ALGS:
                    if name not in cols:
                        continue
                    cells[(n, name)] = run_setting(lambda r, n=n: make(n, r), cls(K, delta=DELTA, mode=mode), args.runs, args.seed)
            print_table(f"({mode.capitalize()}) {title}", args.Ns, cols, cells)
            if mode == "faithful":
                shown.append((title, cols, cells))
            n = args.Ns[-1]
            m = {c: cells[(n, c)]["mean"] for c in cols}
            rand = m["lil'RandLUCB"]
            if kind == "K2":
                best_other = min(v for c, v in m.items() if c != "lil'RandLUCB")
                verdict(rand < best_other, f"K=2, N={n}: lil'RandLUCB takes the fewest samples "
                        f"({rand:.0f} vs next best {best_other:.0f}, ratio {rand / best_other:.2f})")
            else:
                ratio = rand / m["LUCB++"]
                verdict(abs(ratio - 1) <= 0.15, f"K=N/2, N={n}: lil'RandLUCB close to LUCB++ (ratio {ratio:.2f}, within 15%)")
                others = [m[c] for c in ("LUCB", "lil'CLUCB") if c in m]
                verdict(all(rand < o for o in others), f"K=N/2, N={n}: lil'RandLUCB below LUCB and lil'CLUCB "
                        f"({rand:.0f} vs {', '.join(f'{o:.0f}' for o in others)})")
                if mode == "heuristic":
                    same = cells[(n, "LUCB++")]["mean"] == cells[(n, "lil'LUCB")]["mean"]
                    verdict(same, "K=N/2 heuristic: LUCB++ coincides with lil'LUCB (identical runs)")
    figure(args, "figure1", f"Best-K (Jiang et al. Figure 1), faithful mode, nu = {NU}", shown)


# ---------------------------------------------------------------------- figure 2
def section_fig2(args: argparse.Namespace) -> None:
    print("\n=== Figure 2: Best-1 (mean samples over", args.runs, "runs; delta = 0.01) ===")
    panels = [
        ("1-Sparse, K=1", lambda n, r: jiang_1sparse(n, 1, rng=r)),
        ("alpha=0.3, K=1", lambda n, r: lil_exponential(n, 0.3, rng=r)),
        ("alpha=0.6, K=1", lambda n, r: lil_exponential(n, 0.6, rng=r)),
    ]
    algs = BEST_K_ALGS + [("lil'UCB", LilUCB)]
    shown = []
    for title, make in panels:
        for mode in ("faithful", "heuristic"):
            cells: dict[tuple[int, str], dict[str, Any]] = {}
            cols = [c for c, cls in algs if not (cls is LUCB and mode == "heuristic")]
            for n in args.Ns:
                for name, cls in algs:
                    if name not in cols:
                        continue
                    if cls is LilUCB and mode == "faithful" and n > args.lilucb_max_n:
                        continue
                    cells[(n, name)] = run_setting(lambda r, n=n: make(n, r), cls(1, delta=DELTA, mode=mode), args.runs, args.seed)
            print_table(f"({mode.capitalize()}) {title}", args.Ns, cols, cells)
            if mode == "faithful":
                shown.append((title, cols, cells))
            ns = [n for n in args.Ns if (n, "lil'UCB") in cells]
            n = args.Ns[-1]
            m = {c: cells[(n, c)]["mean"] for c in cols if (n, c) in cells}
            rand = m["lil'RandLUCB"]
            if mode == "faithful" and ns:
                n1 = ns[-1]
                others = [cells[(n1, c)]["mean"] for c in cols if c != "lil'UCB"]
                ratio = cells[(n1, "lil'UCB")]["mean"] / float(np.median(others))
                verdict(ratio >= 5, f"N={n1}: faithful lil'UCB an order of magnitude worse "
                        f"({ratio:.1f}x the median of the other algorithms)")
            if "0.6" in title:
                ratio = rand / m["LUCB++"]
                verdict(abs(ratio - 1) <= 0.15, f"alpha=0.6, N={n}: lil'RandLUCB similar to LUCB++ (ratio {ratio:.2f})")
            else:
                best_other = min(v for c, v in m.items() if c != "lil'RandLUCB")
                verdict(rand < best_other, f"N={n}: lil'RandLUCB takes the fewest samples "
                        f"({rand:.0f} vs next best {best_other:.0f}, ratio {rand / best_other:.2f})")
            slow = [m[c] for c in ("LUCB", "lil'CLUCB") if c in m]
            fast = [m[c] for c in ("lil'RandLUCB", "LUCB++") if c in m]
            verdict(max(fast) < min(slow), f"N={n}: lil'RandLUCB and LUCB++ below LUCB and lil'CLUCB")
    figure(args, "figure2", f"Best-1 (Jiang et al. Figure 2), faithful mode, nu = {NU}", shown)


# ---------------------------------------------------------------------- CPE
def section_cpe(args: argparse.Namespace) -> None:
    from combex.oracles import PartitionMatroid, STPaths

    print("\n=== Generalized lil'CLUCB (Algorithm 3), delta = 0.01, sigma = 1/2 ===")
    rng = np.random.default_rng(7)
    # partition matroid: 12 arms in 4 groups of 3, bases; distinct means 1/11 apart
    groups = np.repeat(np.arange(4), 3)
    pm = PartitionMatroid(groups, [1, 2, 1, 2], base=True)
    mu_pm = rng.permutation(np.linspace(0.0, 1.0, 12))
    # s-t paths in a layered DAG (3 inner layers of 3 nodes, complete between layers):
    # a planted best path with edge means in [0.6, 0.9], other edges in [0, 0.3], so every
    # other path loses at least 0.3 per replaced edge (unique optimum)
    g = nx.DiGraph()
    layers = [["s"]] + [[f"{i}{j}" for j in range(3)] for i in range(3)] + [["t"]]
    for a, b in zip(layers, layers[1:]):
        g.add_edges_from((u, v) for u in a for v in b)
    paths = STPaths(g, "s", "t")
    planted = {("s", "00"), ("00", "11"), ("11", "22"), ("22", "t")}
    mu_p = np.array([rng.uniform(0.6, 0.9) if e in planted else rng.uniform(0.0, 0.3) for e in paths.edges])
    print(f"{'class':<30}{'mode':<11}{'n':>4}{'width':>6}{'mean samples':>14}{'errors':>8}")
    for name, dc, mu in [("partition matroid (4x3 arms)", pm, mu_pm), (f"s-t paths ({paths.n} edges)", paths, mu_p)]:
        for mode in ("faithful", "heuristic"):
            best = dc.argmax(mu)  # the optimum on the true means
            cell = run_setting(lambda r, mu=mu: GaussianArms(mu, sigma=0.5, rng=r),
                               LilCLUCB(decision_class=dc, delta=DELTA, mode=mode), args.cpe_runs, args.seed,
                               correct=lambda env, ans, best=best: bool(np.array_equal(ans, best)))
            print(f"{name:<30}{mode:<11}{dc.n:>4}{dc.width:>6}{cell['mean']:>14.0f}{cell['errors']:>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", nargs="+", default=["speed", "fig1", "fig2", "cpe"])
    ap.add_argument("--Ns", nargs="+", type=int, default=[10, 20, 50, 100])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cpe-runs", type=int, default=10)
    ap.add_argument("--lilucb-max-n", type=int, default=50, help="largest N for faithful lil'UCB (costly)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="N in {10, 20, 50}, 4 runs")
    _figures.add_option(ap)
    args = ap.parse_args()
    if args.quick:
        args.Ns, args.runs, args.cpe_runs, args.lilucb_max_n = [10, 20, 50], 4, 5, 20
    t0 = time.perf_counter()
    for sec in args.sections:
        {"speed": section_speed, "fig1": section_fig1, "fig2": section_fig2, "cpe": section_cpe}[sec](args)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
