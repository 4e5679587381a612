"""Reproduce Section 7 of Xu, Honda & Sugiyama (2018) with combex's linear solvers.

Prints (markdown) Figure 1 (samples vs d on the Soare et al. instance, four solvers),
Table 1 (per-arm pulls at d = 5, the paper's numbers beside ours), Figure 2 (samples vs
gap on the canonical instance, d = 5) and the real-data simulation of Section 7.2 (samples
vs number of arms on the diabetes and wine-quality data). Every row also gives the
lower-bound ratio samples / (T* log(1/delta)).

    OPENBLAS_NUM_THREADS=1 python benchmarks/linear.py            # reduced sizes
    OPENBLAS_NUM_THREADS=1 python benchmarks/linear.py --full     # the paper's sizes
    python benchmarks/linear.py --sections fig1 fig2 --figures docs/figures   # the page's figures
    OPENBLAS_NUM_THREADS=1 python benchmarks/linear.py --sections xy-peer --seeds 4 --fiezt DIR

The ``xy-peer`` section runs XY-oracle and XY-adaptive on Soare et al.'s instance (d = 5,
delta = 0.05) as printed and with the settings that close the gap to Fiez et al.'s (2019)
implementation (``readmit=False``, ``radius="sub-gaussian"``); with ``--fiezt DIR`` (a
checkout of github.com/fiezt/Transductive-Linear-Bandit-Code) it runs their XY_ORACLE and
XY_ADAPTIVE on the same instance, delta and seeds in the same process, and prints each
combex row's ratio to them (their XY-adaptive: about 5 minutes of CPU a run).

LinGapE runs Algorithm 1 exactly (``growth=0``: one pull and one stopping check per
round) in both modes; the reduced mode uses fewer d / gaps / arms / seeds (``--seeds``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import _figures
import numpy as np

from combex.environments._instances_linear import canonical, diabetes_linear, soare, wine_linear
from combex.solvers.linear import LinGapE, XYAdaptive, XYOracle, XYStatic

SECTIONS = ("fig1", "fig2", "real", "xy-peer")

# Table 1 of the paper (d = 5): pulls per arm.
PAPER_TABLE1 = {
    "XY-static": [1298590, 2546604, 2546666, 2546666, 2546666, 1273742],
    "LinGapE": [2133, 428889, 19, 34, 33, 11],
    "XY-oracle": [13646, 2728606, 68, 68, 68, 1],
}


def run_many(solver, make_env, seeds):
    out = []
    for s in seeds:
        env = make_env(s)
        t0 = time.perf_counter()
        r = solver.run(env, rng=10_000 + s)
        out.append((r, time.perf_counter() - t0, r.answer_list() == [env.best()] or r.answer == env.best()))
    return out


def summarize(rows):
    samples = np.array([r.samples for r, _, _ in rows], dtype=float)
    ratio = np.array([r.info.get("lower_bound_ratio", np.nan) for r, _, _ in rows])
    secs = np.array([t for _, t, _ in rows])
    err = 1.0 - np.mean([ok for _, _, ok in rows])
    return samples.mean(), ratio.mean(), secs.mean(), err


def main() -> None:
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="the paper's sizes (slow)")
    ap.add_argument("--seeds", type=int, default=None, help="runs per setting (default 10 full, 3 reduced)")
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, default=["fig1", "fig2", "real"],
                    help="fig1 = Figure 1 and Table 1, fig2 = Figure 2, real = Section 7.2, "
                         "xy-peer = XY-oracle / XY-adaptive beside Fiez et al.'s code")
    ap.add_argument("--fiezt", default=None, metavar="DIR",
                    help="a checkout of fiezt/Transductive-Linear-Bandit-Code (xy-peer section)")
    _figures.add_option(ap)
    args = ap.parse_args()
    full = args.full
    g = 0.0
    seeds = range(args.seeds if args.seeds else (10 if full else 3))
    lingape = LinGapE(growth=g)

    fig_rows: dict[str, list[tuple[float, str, float, float]]] = {"fig1": [], "fig2": []}
    if "fig1" in args.sections:
        fig1_table1(args, full, seeds, lingape, fig_rows["fig1"])
    if "fig2" in args.sections:
        fig2(full, seeds, lingape, fig_rows["fig2"])
    if args.figures is not None and (fig_rows["fig1"] or fig_rows["fig2"]):
        samples_figure(args, fig_rows, len(seeds))
    if "real" in args.sections:
        real_data(full, seeds, g)
    if "xy-peer" in args.sections:
        xy_peer(seeds, args.fiezt)


def _fiezt_runs(directory, seeds, X, theta, delta):
    """Fiez et al.'s XY_ORACLE and XY_ADAPTIVE (alpha = 0.1) from their checkout: (name, samples, ok, CPU s)."""
    import importlib
    import logging
    import sys

    sys.path.insert(0, directory)
    try:
        filters = warnings.filters[:]
        mods = {n: importlib.import_module(n) for n in ("XY_ORACLE", "XY_ADAPTIVE")}
    finally:
        warnings.filters[:] = filters  # their XY_ORACLE turns every warning into an error
        sys.path.remove(directory)
    logging.disable(logging.CRITICAL)
    out = []
    for name, make in (("XY-oracle", lambda: mods["XY_ORACLE"].XY_ORACLE(X, theta, delta)),
                       ("XY-adaptive", lambda: mods["XY_ADAPTIVE"].XY_ADAPTIVE(X, theta, 0.1, delta))):
        for s in seeds:
            alg = make()
            t0 = time.process_time()
            alg.algorithm(s)
            out.append((name, alg.N, bool(alg.success), time.process_time() - t0))
    logging.disable(logging.NOTSET)
    return out


def xy_peer(seeds, fiezt_dir) -> None:
    # ------------------------------------------------------------- XY solvers beside Fiez et al.
    d, delta = 5, 0.05
    env0 = soare(d, rng=0)
    print("\n## XY-oracle and XY-adaptive beside Fiez et al.'s implementation (soare d = 5, delta = 0.05)\n")
    peer: dict[str, float] = {}
    if fiezt_dir:
        runs = _fiezt_runs(fiezt_dir, seeds, env0.features, env0.theta.reshape(-1, 1), delta)
        for name in ("XY-oracle", "XY-adaptive"):
            mine = [r for r in runs if r[0] == name]
            peer[name] = float(np.mean([r[1] for r in mine]))
            errs = sum(not r[2] for r in mine)
            print(f"Fiez et al.'s {name}: {peer[name]:,.0f} samples (mean of {len(mine)}), errors {errs}/{len(mine)}, "
                  f"{np.mean([r[3] for r in mine]):.1f} s of CPU a run")
        print()
    print(f"{len(seeds)} seeded runs per row; 'peer' = Fiez et al.'s same algorithm, same seeds' count, same run.\n")
    print("| solver | settings | mean samples | / T* log(1/delta) | / peer | errors | CPU s/run |")
    print("|---|---|---:|---:|---:|---:|---:|")
    rows = [("XY-oracle", "as printed", XYOracle()),
            ("XY-oracle", 'radius="sub-gaussian"', XYOracle(radius="sub-gaussian")),
            ("XY-adaptive", "as printed", XYAdaptive()),
            ("XY-adaptive", "readmit=False", XYAdaptive(readmit=False)),
            ("XY-adaptive", 'radius="sub-gaussian"', XYAdaptive(radius="sub-gaussian")),
            ("XY-adaptive", 'readmit=False, radius="sub-gaussian"', XYAdaptive(readmit=False, radius="sub-gaussian"))]
    for name, label, solver in rows:
        res = []
        for s in seeds:
            env = soare(d, rng=s)
            t0 = time.process_time()
            r = solver.run(env, rng=10_000 + s)
            res.append((r, time.process_time() - t0, r.answer == env.best()))
        m, lr, _, err = summarize([(r, t, ok) for r, t, ok in res])
        cpu = np.mean([t for _, t, _ in res])
        vs = f"{m / peer[name]:.2f}" if name in peer else "-"
        print(f"| {name} | {label} | {m:,.0f} | {lr:.2f} | {vs} | {round(err * len(seeds))}/{len(seeds)} | {cpu:.2f} |",
              flush=True)


def samples_figure(args, fig_rows, n_seeds) -> None:
    """Mean samples against d (Figure 1) and against the gap (Figure 2), with T* log(1/delta)."""
    plt = _figures.pyplot()
    panels = [(k, v) for k, v in fig_rows.items() if v]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
    for ax, (key, rows) in zip(axes[0], panels):
        names = list(dict.fromkeys(r[1] for r in rows))
        for name in names:
            sel = [r for r in rows if r[1] == name]
            ax.plot([r[0] for r in sel], [r[2] for r in sel], label=name, **_figures.style(name))
        xs = sorted({r[0] for r in rows})
        bound = [np.nanmean([r[3] for r in rows if r[0] == x]) for x in xs]
        ax.plot(xs, bound, "k--", label="T* log(1/delta)")
        ax.set(yscale="log", ylabel=f"samples (mean of {n_seeds} runs)")
        if key == "fig1":
            ax.set(xlabel="d", title="Figure 1: Soare et al.'s instance, delta = 0.05")
            ax.set_xticks(xs)
        else:
            ax.set(xscale="log", xlabel="gap", title="Figure 2: canonical instance, d = 5")
            ax.set_xticks(xs, [f"{x:g}" for x in xs])
            ax.minorticks_off()
        ax.legend()
    fig.tight_layout()
    _figures.save(fig, args.figures, __file__, "samples")


def table1_figure(args, table1) -> None:
    """Pulls per arm at d = 5: combex (filled) beside Table 1 of the paper (open)."""
    plt = _figures.pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    names = [n for n in ("XY-static", "LinGapE", "XY-oracle") if n in table1]
    arms = np.arange(1, 7)
    for i, n in enumerate(names):
        st = _figures.style(n)
        off = (i - 1) * 0.18
        ours = np.asarray(table1[n], dtype=float)
        paper = np.asarray(PAPER_TABLE1[n], dtype=float)
        ax.plot(arms[ours > 0] + off, ours[ours > 0], ls="none", label=f"{n} (combex)", **st)
        ax.plot(arms + off, paper, ls="none", marker=st["marker"], mfc="none", color=st["color"],
                label=f"{n} (paper)")
    ax.set(yscale="log", xlabel="arm (arm 6 is x_6, the near-optimal distractor; a zero count is not drawn)",
           ylabel="pulls (mean over the seeds)", title="Table 1: pulls per arm at d = 5, combex beside the paper")
    ax.set_xticks(arms)
    ax.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    _figures.save(fig, args.figures, __file__, "table1-vs-paper")


def fig1_table1(args, full, seeds, lingape, fig_rows) -> None:
    # ------------------------------------------------------------- Figure 1
    ds = range(2, 11) if full else (2, 3, 4, 5)
    print("## Figure 1: samples vs d (soare instance, delta = 0.05, lambda = 1, epsilon = 0)\n")
    print(f"{len(seeds)} seeded runs per row; T* from combex.identification.characteristic_time.\n")
    print("| d | solver | mean samples | samples/(T* log 1/delta) | error rate | s/run |")
    print("|---|---|---|---|---|---|")
    table1 = {}
    for d in ds:
        solvers = {"LinGapE": lingape, "XY-static": XYStatic(), "XY-oracle": XYOracle()}
        if full or d <= 3:
            solvers["XY-adaptive"] = XYAdaptive()
        for name, solver in solvers.items():
            rows = run_many(solver, lambda s, d=d: soare(d, rng=s), seeds)
            m, lr, sec, err = summarize(rows)
            fig_rows.append((d, name, m, m / lr))
            print(f"| {d} | {name} | {m:,.0f} | {lr:.2f} | {err:.2f} | {sec:.2f} |", flush=True)
            if d == 5:
                table1[name] = np.mean([r.pulls for r, _, _ in rows], axis=0)
    if table1:
        print("\n## Table 1: pulls per arm at d = 5 (paper / combex)\n")
        names = [n for n in ("XY-static", "LinGapE", "XY-oracle") if n in table1]
        print("| arm | " + " | ".join(f"{n} paper | {n} combex" for n in names) + " |")
        print("|---" * (1 + 2 * len(names)) + "|")
        for a in range(6):
            cells = " | ".join(f"{PAPER_TABLE1[n][a]:,} | {table1[n][a]:,.0f}" for n in names)
            print(f"| {a + 1} | {cells} |")
        tot = " | ".join(f"{sum(PAPER_TABLE1[n]):,} | {table1[n].sum():,.0f}" for n in names)
        print(f"| total | {tot} |")
        print("\n(combex columns: mean over the seeds.)")
        if args.figures is not None:
            table1_figure(args, table1)


def fig2(full, seeds, lingape, fig_rows) -> None:
    # ------------------------------------------------------------- Figure 2
    gaps = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0) if full else (0.2, 0.5, 1.0)
    print("\n## Figure 2: samples vs gap (canonical instance, d = 5)\n")
    print("| gap | LinGapE | XY-static | LinGapE ratio | XY-static ratio | errors (L / XY) |")
    print("|---|---|---|---|---|---|")
    for gap in gaps:
        a = summarize(run_many(lingape, lambda s: canonical(5, gap, rng=s), seeds))
        b = summarize(run_many(XYStatic(), lambda s: canonical(5, gap, rng=s), seeds))
        fig_rows += [(gap, "LinGapE", a[0], a[0] / a[1]), (gap, "XY-static", b[0], b[0] / b[1])]
        print(f"| {gap} | {a[0]:,.0f} | {b[0]:,.0f} | {a[1]:.2f} | {b[1]:.2f} | {a[3]:.2f} / {b[3]:.2f} |", flush=True)



def real_data(full, seeds, g) -> None:
    # ------------------------------------------------------------- Section 7.2
    arms = (12, 16, 20, 30, 40) if full else (12, 16, 20)
    print("\n## Section 7.2: real-data simulation (+-1 rewards, Delta_i >= 0.05)\n")
    print("LinGapE: lambda = 1, R = 2; XY-static: ridge 0.01, sigma = 2 (Appendix A).\n")
    print("| data | K | LinGapE | XY-static | XY-static / LinGapE | LinGapE ratio | XY-static ratio | LinGapE s/run | errors (L / XY) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, builder in (("diabetes", diabetes_linear), ("wine (red)", wine_linear)):
        for k in arms:
            a = summarize(run_many(LinGapE(R=2.0, growth=g), lambda s: builder(k, rng=s), seeds))
            b = summarize(run_many(XYStatic(ridge=0.01, sigma=2.0), lambda s: builder(k, rng=s), seeds))
            print(f"| {label} | {k} | {a[0]:,.0f} | {b[0]:,.0f} | {b[0] / a[0]:.1f} | {a[1]:.2f} | {b[1]:.2f} | {a[2]:.1f} | {a[3]:.2f} / {b[3]:.2f} |")


if __name__ == "__main__":
    main()
