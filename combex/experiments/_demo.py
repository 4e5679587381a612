"""``combex demo``: the team-selection study on the embedded default.

Three polynomial full-bandit solvers of the seed paper (ICB, SAQM, SA-FOA) and the GLR
linear Top-Two (``top-two`` on a full-bandit problem; the C(36, 10) = 2.5e8 teams go
through the oracle path: swap-decomposition stop, oracle-randomized design, see
:mod:`combex.identification._swaps`) identify the best team of k = 10
workers on a crowdsourcing domain of Li et al. (2017) when only the team's score on a
random quiz question is observed (real, correlated full-bandit feedback replayed from the
answers). The data are shipped in combex (:func:`combex.datasets.load_quiz`, CC BY 4.0).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from ..environments import CrowdQuiz
from ..solvers.full_bandit import ICB, SAFOA, SAQM
from ..solvers.optimal_linear import LinearTopTwo
from ._runner import lower_bound_text

__all__ = ["demo"]


def _environment(quick: bool) -> tuple[Any, str]:
    env = CrowdQuiz("ITMANAGE", k=10)
    return env, "real data: Li et al. (2017) quiz, domain ITMANAGE (25 questions, 36 workers; CC BY 4.0)"


def demo(*, quick: bool = False, out_dir: str | Path = ".") -> int:
    env, source = _environment(quick)
    mu = env.means()
    best = env.best()
    best_val = float(mu[best].sum())
    eps = 0.5
    print("combex demo: which team of 10 workers answers the most quiz questions correctly,")
    print("when only the number of correct answers of the whole team is observed?")
    print(f"  source: {source}")
    print(f"  epsilon = {eps}, delta = 0.05, uniform allocation (as in Kuroki et al., Table 2)\n")
    solvers = [
        ("ICB", ICB(delta=0.05, epsilon=eps, allocation="uniform")),
        ("SAQM", SAQM(delta=0.05, epsilon=eps, allocation="uniform")),
        ("SA-FOA", SAFOA(delta=0.05, epsilon=eps, allocation="uniform", growth=0.05 if quick else 0.01)),
        ("top-two", LinearTopTwo(delta=0.05, epsilon=eps, growth=0.05 if quick else 0.01)),
    ]
    rows = []
    traces = {}
    header = (f"{'solver':<8} {'samples':>14} {'x T* log(1/d)':>14} {'wall s':>8} {'team accuracy sum':>18} "
              f"{'best team':>10} {'eps-optimal':>12}")
    print(header)
    print("-" * len(header))
    for i, (label, solver) in enumerate(solvers):
        env_i = env.spawn(np.random.default_rng([7, i]))
        t0 = time.perf_counter()
        res = solver.run(env_i, rng=np.random.default_rng([11, i]), trace=True)
        wall = time.perf_counter() - t0
        val = float(mu[np.asarray(res.answer, dtype=bool)].sum())
        ok = best_val - val <= eps + 1e-12
        rows.append((label, res.samples, wall, val, ok))
        traces[label] = res.trace
        print(f"{label:<8} {res.samples:>14,d} {lower_bound_text(res.info) or '-':>14} {wall:>8.2f} {val:>18.3f} "
              f"{best_val:>10.3f} {str(ok):>12}")
        print(f"         team: {', '.join(env.data.workers_of(np.asarray(res.answer, dtype=bool)))}")
    print()
    print("Paper (Kuroki et al., Table 2, IT domain, thousands of samples): ICB 46,658; SAQM 68,328; SA-FOA 3,421.")
    print("top-two: GLR stop (valid fixed-design threshold: the random teams from the oracle do not depend on the")
    print("         scores) on the swap-decomposition bound.")
    print("x T* log(1/d): samples / (T*_eps log(1/delta)), the lower bound of any delta-correct algorithm; '<=': read")
    print("         against a certified lower bound of T*_eps (too many teams to compute it exactly), so at most that.")
    thresholds = {"ICB": eps, "SAQM": 0.0, "SA-FOA": eps / 2}
    _plot(traces, thresholds, Path(out_dir))
    return 0


def _plot(traces: dict[str, Any], thresholds: dict[str, float], out_dir: Path) -> None:
    try:
        # matplotlib is optional (the plots extra); pyplot after the backend is chosen
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot; `pip install combex[plots]`)")
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, tr in traces.items():
        if not tr or "t" not in tr:
            continue
        t = np.asarray(tr["t"], dtype=float)
        if "margin" in tr:  # GLR: stop when the lower bound of Z over beta exceeds 1
            y = 1.0 - np.asarray(tr["margin"], dtype=float)
        elif "statistic" in tr:  # ICB: stop when < eps; SA-FOA: when <= eps/2
            y = np.asarray(tr["statistic"], dtype=float) - thresholds.get(label, 0.0)
        else:  # SAQM: condition (4), rhs (which includes -eps) minus lhs
            y = np.asarray(tr["rhs"], dtype=float) - np.asarray(tr["lhs"], dtype=float)
        ax.plot(t, y, label=label)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-2)
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("samples")
    ax.set_ylabel("stopping statistic minus its threshold (stops at 0)")
    ax.set_title("Team selection with full-bandit feedback")
    ax.legend()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "combex-demo.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot saved to {path}")
