"""Benchmarks of the maximization oracles (prints tables; not pass/fail; < 2 minutes).

Run::

    .venv/bin/python benchmarks/oracles.py            # all sections
    .venv/bin/python benchmarks/oracles.py --quick    # fewer repetitions

Sections (each a function returning rows; add new ones to ``SECTIONS``):

* ``quadratic``: Algorithm 1 (Quadratic Maximization) with the DkS oracles ``peeling``,
  ``fpk`` and ``exact`` on the realistic CEM instance ``W = A^{-1}``, where ``A`` is a
  design matrix from random k-subsets (``sum chi chi^T + ridge I``): time per call of the
  DkS oracle alone and of ``maximize`` with its certificate, and the certified ratio.
* ``empirical``: at n = 24 over random CEM matrices, the true ratio ``value / OPT``
  (``OPT`` by exact enumeration) of Algorithm 1 with each oracle, next to the certified
  and the Theorem 1 worst-case ratios.

``+swap`` rows use ``QuadraticMaximization(..., refine="swap")`` (1-swap local search
after Algorithm 1; not in the paper). Times are the minimum over repetitions (the machine
may be shared).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

from combex.oracles.quadratic import (
    QuadraticMaximization,
    dks_graph,
    get_dks_oracle,
    solve_qp_exact,
)

# --------------------------------------------------------------------------- helpers


def cem_matrix(rng: np.random.Generator, n: int, k: int, *, rounds: int | None = None,
               ridge: float = 1e-3) -> np.ndarray:
    """``A^{-1}`` for ``A = sum_t chi_{M_t} chi_{M_t}^T + ridge I`` over random k-subsets
    (``rounds`` defaults to ``2 n``: the design after the initial rounds of SAQM)."""
    t = 2 * n if rounds is None else rounds
    X = np.zeros((t, n))
    rows = np.arange(t)[:, None]
    X[rows, np.argsort(rng.random((t, n)), axis=1)[:, :k]] = 1.0
    A = X.T @ X + ridge * np.eye(n)
    return np.linalg.inv(A)


def time_call(fn: Callable[[], Any], *, repeat: int) -> float:
    """Minimum wall time of ``fn()`` in seconds over ``repeat`` calls after one warm-up
    (the minimum is the least sensitive to other processes on a shared machine)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            if v != v:
                return "-"
            return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"
        return str(v)

    cells = [[fmt(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)]
    print(f"\n## {title}\n")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


# --------------------------------------------------------------------------- sections
QUAD_CASES = [(24, 12), (111, 55), (111, 10), (500, 250)]


def bench_quadratic(*, quick: bool = False, seed: int = 0) -> None:
    """Time per call and certified ratio of Algorithm 1 with each DkS oracle."""
    rng = np.random.default_rng(seed)
    rows = []
    for n, k in QUAD_CASES:
        W = cem_matrix(rng, n, k)
        Wt = dks_graph(W)
        repeat = 3 if quick else (20 if n <= 111 else 7)
        oracles = ["peeling", "fpk"] + (["exact"] if n <= 24 else [])
        for name, refine in [(o, None) for o in oracles] + [("peeling", "swap")]:
            oracle = get_dks_oracle(name)
            t_dks = time_call(lambda: oracle.solve(Wt, k), repeat=repeat)
            qm = QuadraticMaximization(oracle, refine=refine)
            t_max = time_call(lambda: qm.maximize(W, k), repeat=repeat)
            _, cert = qm.maximize(W, k)
            label = name + ("+swap" if refine else "")
            rows.append([n, k, label, 1e3 * t_dks, 1e3 * t_max, cert.certified_ratio,
                         cert.worst_case_ratio, cert.alpha_dks])
        if n <= 24:
            t_exact = time_call(lambda: solve_qp_exact(W, k), repeat=repeat)
            rows.append([n, k, "solve_qp_exact", 1e3 * t_exact, float("nan"), 1.0, 1.0, 1.0])
    print_table(
        "Quadratic maximization on W = A^-1 (CEM), one matrix per size",
        ["n", "k", "oracle", "DkS ms", "maximize+cert ms", "certified", "Thm1 ratio", "alpha_DkS"],
        rows,
    )


def bench_empirical(*, quick: bool = False, seed: int = 1, n: int = 24, k: int = 12) -> None:
    """Empirical ratio value/OPT at n = 24 over random CEM matrices."""
    rng = np.random.default_rng(seed)
    n_mats = 5 if quick else 20
    names = ["peeling", "fpk", "exact", "peeling+swap"]
    ratios: dict[str, list[float]] = {m: [] for m in names}
    certified: dict[str, list[float]] = {m: [] for m in names}
    thm1: dict[str, list[float]] = {m: [] for m in names}
    for _ in range(n_mats):
        W = cem_matrix(rng, n, k)
        _, opt = solve_qp_exact(W, k)
        for m in names:
            dks, _, refine = m.partition("+")
            _, cert = QuadraticMaximization(dks, refine=refine or None).maximize(W, k)
            ratios[m].append(cert.value / opt)
            certified[m].append(cert.certified_ratio)
            thm1[m].append(cert.worst_case_ratio)
    rows = []
    for m in names:
        r = np.array(ratios[m])
        rows.append([m, float(r.min()), float(r.mean()), float((r > 1 - 1e-9).mean()),
                     float(np.min(certified[m])), float(np.mean(certified[m])),
                     float(np.mean(thm1[m]))])
    print_table(
        f"Empirical ratio value/OPT of Algorithm 1 at n={n}, k={k} over {n_mats} matrices "
        "W = A^-1 (OPT by exact enumeration)",
        ["DkS oracle", "min ratio", "mean ratio", "frac optimal", "min certified",
         "mean certified", "mean Thm1"],
        rows,
    )


def bench_topk(*, quick: bool = False, seed: int = 2) -> None:
    """TopK argmax / argmax_excluding at n = 10^5 (and 10^6), versus a full sort."""
    from combex.oracles import TopK

    rng = np.random.default_rng(seed)
    rows = []
    for n, k in [(100_000, 10), (100_000, 1_000), (1_000_000, 100)]:
        if quick and n > 100_000:
            continue
        w = rng.standard_normal(n)
        dc = TopK(n, k)
        best = dc.argmax(w)
        t_arg = time_call(lambda: dc.argmax(w), repeat=5 if quick else 20)
        t_exc = time_call(lambda: dc.argmax_excluding(w, best), repeat=5 if quick else 20)
        t_sort = time_call(lambda: np.argsort(-w)[:k], repeat=3 if quick else 10)
        rows.append([n, k, f"{t_arg * 1e3:.2f}", f"{t_exc * 1e3:.2f}", f"{t_sort * 1e3:.2f}",
                     f"{t_sort / t_arg:.1f}x"])
    print_table("TopK linear oracle (ms per call)",
                ["n", "k", "argmax", "argmax_excluding", "full argsort", "argsort/argmax"], rows)


def bench_sherman_morrison(*, quick: bool = False, seed: int = 3, n: int = 111, k: int = 10) -> None:
    """Count-weighted Sherman-Morrison update of A^{-1} vs re-solving, at n = 111."""
    from combex.estimation import LeastSquares

    rng = np.random.default_rng(seed)
    X = np.zeros((4 * n, n))
    for row in X:
        row[rng.choice(n, size=k, replace=False)] = 1.0
    ls = LeastSquares(n)
    ls.update_many(X, rng.standard_normal(len(X)), np.ones(len(X), dtype=np.int64))
    x = X[0]
    reps = 200 if quick else 2000

    def sm() -> None:
        ls.update(x, 1.0, 3)

    t_sm = time_call(sm, repeat=reps)
    A = ls.A.copy()
    b = ls.b.copy()
    t_solve = time_call(lambda: np.linalg.solve(A + 3 * np.outer(x, x), b), repeat=max(20, reps // 10))
    t_inv = time_call(lambda: np.linalg.inv(A + 3 * np.outer(x, x)), repeat=max(20, reps // 10))
    rel = float(np.max(np.abs(ls.A_inv - np.linalg.inv(ls.A))) / np.max(np.abs(np.linalg.inv(ls.A))))
    print_table(f"Sherman-Morrison vs solve at n = {n} (us per update)",
                ["SM update (A^-1 kept)", "np.linalg.solve", "np.linalg.inv", "inv/SM", "rel. error of A^-1"],
                [[f"{t_sm * 1e6:.1f}", f"{t_solve * 1e6:.1f}", f"{t_inv * 1e6:.1f}",
                  f"{t_inv / t_sm:.1f}x", f"{rel:.1e}"]])


SECTIONS: dict[str, Callable[..., None]] = {
    "topk": bench_topk,
    "quadratic": bench_quadratic,
    "empirical": bench_empirical,
    "sherman-morrison": bench_sherman_morrison,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append",
                        help="run only these sections (repeatable)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    for name, fn in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        fn(quick=args.quick)
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
