"""The ``combex`` command (a contract: scripts and checks use it; see DESIGN.md).

::

    combex list
    combex run SOLVER --instance NAME [--set key=value ...] [--param key=value ...]
               [--delta D] [--epsilon E] [--seed S] [--runs R] [--jobs J] [--budget B]
               [--json] [--out FILE]
    combex demo
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .exceptions import CombexError, InvalidParameterError

__all__ = ["main", "parse_assignments"]


def _parse_value(text: str) -> Any:
    """'3' -> 3, '0.5' -> 0.5, 'true' -> True, '[1,2]' -> [1, 2], 'SCIENCE' -> 'SCIENCE'."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_assignments(items: Sequence[str] | None, option: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidParameterError(
                f"The {option!r} option takes key=value pairs. Got {item!r} instead."
            )
        out[key.strip()] = _parse_value(value)
    return out


def _cmd_list(args: argparse.Namespace) -> int:
    from .experiments import list_instances
    from .solvers._base import SOLVERS, _load_builtin_solvers

    _load_builtin_solvers()
    print("solvers:")
    for name in sorted(SOLVERS):
        doc = (SOLVERS[name].__doc__ or "").strip().splitlines()
        print(f"  {name:<16} {doc[0] if doc else ''}")
    try:
        from .oracles import get_decision_class, list_decision_classes

        print("decision classes:")
        for name in list_decision_classes():
            cls = get_decision_class(name)
            doc = (cls.__doc__ or "").strip().splitlines()
            print(f"  {name:<20} {doc[0] if doc else ''}")
    except ImportError:  # pragma: no cover - oracles always present in a full install
        pass
    try:
        from .oracles.quadratic import DKS_ORACLES

        print("densest-k-subgraph oracles:")
        for name in sorted(DKS_ORACLES):
            print(f"  {name}")
    except ImportError:  # pragma: no cover
        pass
    print("instances:")
    for spec in list_instances():
        print(f"  {spec.name:<20} [{spec.family}] {spec.summary}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .experiments import run_many
    from .solvers import get_solver

    cls = get_solver(args.solver)
    sparams = parse_assignments(args.param, "--param")
    if args.delta is not None:
        sparams["delta"] = args.delta
    if args.epsilon is not None:
        sparams["epsilon"] = args.epsilon
    params = parse_assignments(args.set, "--set")
    # Best-K instances name K; a solver that takes K gets the instance's unless told otherwise.
    import inspect

    if "K" in params and "K" not in sparams and "K" in inspect.signature(cls.__init__).parameters:
        sparams["K"] = params["K"]
    try:
        solver = cls(**sparams)
    except TypeError as exc:
        raise InvalidParameterError(f"Bad settings for solver {args.solver!r}: {exc}.") from None
    doc = run_many(solver, args.instance, params, runs=args.runs, seed=args.seed, jobs=args.jobs,
                   budget=args.budget)
    text = json.dumps(doc, indent=None if args.json else 2)
    if args.out:
        out = Path(args.out)
        if out.exists() and not args.force:
            raise InvalidParameterError(
                f"The output file {str(out)!r} exists; pass --force to replace it or choose another name."
            )
        out.write_text(text + "\n")
    if args.json:
        print(text)
    else:
        s = doc["summary"]
        print(f"{doc['solver']} on {doc['instance']} {doc['params']}: {len(doc['runs'])} run(s)")
        for r in doc["runs"]:
            ans = r["answer"]
            ans_txt = ans if not isinstance(ans, list) or len(ans) <= 12 else f"{ans[:12]}..."
            print(f"  run {r['run']}: answer={ans_txt} correct={r['correct']} samples={r['samples']} "
                  f"rounds={r['rounds']} wall={r['wall_seconds']:.3f}s status={r['status']}")
        print(f"  mean samples {s['mean_samples']:.6g}, error rate {s['error_rate']:.3f}, "
              f"median wall {s['median_wall_seconds']:.3f}s")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .experiments._demo import demo

    return demo(quick=args.quick, out_dir=args.out_dir)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="combex",
        description="Pure exploration in structured bandits.",
        epilog="Example: combex run icb --instance kuroki-synthetic --set n=10 --set k=5 --set gap=0.5 --runs 5",
    )
    p.add_argument("--version", action="version", version=f"combex {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    sl = sub.add_parser("list", help="list solvers, decision classes, oracles and instances",
                        epilog="Example: combex list")
    sl.set_defaults(func=_cmd_list)

    sr = sub.add_parser(
        "run", help="run a solver on a named instance",
        description="Run SOLVER on a named instance, several seeded runs, and report samples, "
                    "correctness and time.",
        epilog="Example: combex run saqm --instance kuroki-synthetic --set n=10 --set k=5 "
               "--set gap=0.5 --delta 0.05 --runs 10 --json",
    )
    sr.add_argument("solver", help="solver name (see `combex list`)")
    sr.add_argument("--instance", required=True, help="instance name (see `combex list`)")
    sr.add_argument("--set", action="append", metavar="KEY=VALUE", help="instance parameter (repeatable)")
    sr.add_argument("--param", action="append", metavar="KEY=VALUE", help="solver setting (repeatable)")
    sr.add_argument("--delta", type=float, default=None, help="confidence level delta in (0, 1)")
    sr.add_argument("--epsilon", type=float, default=None, help="accuracy epsilon >= 0")
    sr.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    sr.add_argument("--runs", type=int, default=1, help="number of seeded runs (default 1)")
    sr.add_argument("--jobs", type=int, default=1, help="parallel worker processes (default 1)")
    sr.add_argument("--budget", type=int, default=None, help="maximum samples per run")
    sr.add_argument("--json", action="store_true", help="print one JSON object")
    sr.add_argument("--out", default=None, help="also write the JSON document to this file")
    sr.add_argument("--force", action="store_true", help="replace an existing --out file")
    sr.set_defaults(func=_cmd_run)

    sd = sub.add_parser("demo", help="the team-selection study on the embedded default",
                        epilog="Example: combex demo")
    sd.add_argument("--quick", action="store_true", help="a smaller run (seconds)")
    sd.add_argument("--out-dir", default=".", help="where to save the plot (default .)")
    sd.set_defaults(func=_cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CombexError as exc:
        print(f"combex: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
