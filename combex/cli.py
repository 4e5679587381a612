"""The ``combex`` command (a contract: scripts and checks use it; see DESIGN.md).

::

    combex list
    combex run SOLVER [SOLVER ...] --instance NAME [--set key=value ...] [--param key=value ...]
               [--delta D] [--epsilon E] [--seed S] [--runs R] [--jobs J] [--budget B]
               [--backend serial|processes|dask] [--scheduler ADDRESS] [--json] [--out FILE]
    combex sweep [CONFIG.toml] [--solver S ...] [--instance I ...] [--grid key=v1,v2 ...]
               [--out results.csv] [--jobs J] [--backend B] [--scheduler ADDRESS]
    combex plot RESULTS --x PARAM [--y samples] [--hue solver] [--out FIG.png]
    combex demo

With one solver, ``combex run --json`` prints the DESIGN.md document
``{"solver", "instance", "params", "runs": [...], "summary": {...}}``; with several, a JSON
list of such documents, one per solver, in the order given (all on the same seeds).
"""

from __future__ import annotations

import argparse
import ast
import csv
import inspect
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .exceptions import CombexError, InvalidParameterError
from .oracles import get_decision_class, list_decision_classes
from .oracles.quadratic import DKS_ORACLES
from .solvers import get_solver
from .solvers._registry import SOLVERS, _load_builtin_solvers
from .studies._cli import add_study_command
from .studies._plan import add_plan_command
from .web import add_dashboard_command  # live studies (combex.studies) and their web app

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


def _summary(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line, without the
    reStructuredText literal quotes (a first *line* often stops mid-sentence)."""
    para = " ".join((doc or "").strip().split("\n\n")[0].split()).replace("``", "")
    m = re.search(r"(?<!\bal)(?<!\beq)(?<!e\.g)(?<!i\.e)\.(?=\s|$)", para)
    return para[: m.end()] if m else para


def _cmd_list(args: argparse.Namespace) -> int:
    from .experiments import list_instances  # combex.experiments adds ~50 ms: combex --help stays light

    _load_builtin_solvers()
    print("solvers:")
    for name in sorted(SOLVERS):
        cls = SOLVERS[name]
        fams = tuple(getattr(cls, "families", ()) or ())
        if not fams and getattr(cls, "contract", "pac") == "regret":
            fams = ("sublinear",)  # regret policies play the growing arm sets of the sublinear instances
        fam = f"[{', '.join(fams)}] " if fams else ""
        print(f"  {name:<16} {fam}{_summary(SOLVERS[name].__doc__)}")
    print("decision classes:")
    for name in list_decision_classes():
        print(f"  {name:<20} {_summary(get_decision_class(name).__doc__)}")
    print("densest-k-subgraph oracles:")
    for name in sorted(DKS_ORACLES):
        print(f"  {name}")
    print("instances:")
    for spec in list_instances():
        print(f"  {spec.name:<20} [{spec.family}] {spec.summary}")
        if args.verbose:
            params = ", ".join(k if v is inspect.Parameter.empty else f"{k}={v!r}"
                               for k, v in spec.parameters().items())
            print(f"  {'':<20} parameters: {params}")
    return 0


def _solver_for(name: str, sparams: dict[str, Any], params: dict[str, Any]) -> Any:
    from .experiments import build_solver  # combex.experiments adds ~50 ms: combex --help stays light

    cls = get_solver(name)
    sparams = dict(sparams)
    # Best-K instances name K; a solver that takes K gets the instance's unless told otherwise.
    if "K" in params and "K" not in sparams and "K" in inspect.signature(cls.__init__).parameters:
        sparams["K"] = params["K"]
    return build_solver(name, sparams)


def _atomic_text(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` through a fresh temporary file (O_EXCL) and one rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


#: Columns of ``combex run --out FILE.csv`` (one row per run; JSON-encoded lists and tables).
RUN_CSV_COLUMNS = ["solver", "solver_params", "instance", "params", "seed", "run", "answer", "correct",
                   "status", "samples", "rounds", "wall_seconds", "pulls", "certificate", "regret",
                   "online_seconds", "preprocess_seconds", "index_maintenance_seconds", "lower_bound_ratio",
                   "lower_bound_ratio_kind"]


class _RunOutput:
    """The ``--out`` file of ``combex run``: checked (and created) before any run, written
    as runs finish: one CSV row per run when the name ends in ``.csv``, otherwise the JSON
    document(s), rewritten atomically (with ``"partial": true`` until the last run)."""

    def __init__(self, path: Path, force: bool) -> None:
        self.path = path
        self.csv = path.suffix.lower() == ".csv"
        if path.is_dir():
            raise InvalidParameterError(f"The output file {str(path)!r} is a directory.")
        if not path.parent.is_dir():
            raise InvalidParameterError(
                f"The directory of the output file {str(path)!r} does not exist ({str(path.parent)!r})."
            )
        try:
            self._fh = open(path, "w" if force else "x", newline="")
        except FileExistsError:
            raise InvalidParameterError(
                f"The output file {str(path)!r} exists; pass --force to replace it or choose another name."
            ) from None
        except OSError as exc:
            raise InvalidParameterError(f"The output file {str(path)!r} cannot be written ({exc}).") from None
        if self.csv:
            self._writer = csv.DictWriter(self._fh, fieldnames=RUN_CSV_COLUMNS, extrasaction="ignore")
            self._writer.writeheader()
            self._fh.flush()
        else:
            self._fh.close()
        self.docs: list[dict[str, Any]] = []

    def begin(self, solver: Any, instance: str, params: dict[str, Any], seed: int) -> None:
        self.docs.append({"solver": solver.name, "solver_params": solver.json_params(), "instance": instance,
                          "params": params, "seed": seed, "runs": []})
        if not self.csv:  # a valid (partial) document from the start
            self._write_partial()

    def add(self, rec: dict[str, Any]) -> None:
        doc = self.docs[-1]
        doc["runs"].append(rec)
        if self.csv:
            row = {k: rec.get(k) for k in RUN_CSV_COLUMNS}
            for k in ("solver", "solver_params", "instance", "params"):
                row[k] = doc[k]
            for k in ("solver_params", "params", "answer", "pulls", "certificate"):
                row[k] = json.dumps(row[k], sort_keys=True)
            self._writer.writerow(row)
            self._fh.flush()
        else:
            self._write_partial()

    def _write_partial(self) -> None:
        from .experiments import summarize  # combex.experiments adds ~50 ms: combex --help stays light

        docs = [dict(d, runs=sorted(d["runs"], key=lambda r: r["run"]), summary=summarize(d["runs"]),
                     partial=True) for d in self.docs]
        _atomic_text(self.path, json.dumps(docs[0] if len(docs) == 1 else docs) + "\n")

    def finish(self, text: str) -> None:
        if self.csv:
            self._fh.close()
        else:
            _atomic_text(self.path, text + "\n")

    def close(self) -> None:
        if self.csv and not self._fh.closed:
            self._fh.close()


#: Default sample budget of ``combex run`` (a run on tied data with epsilon = 0 never stops).
DEFAULT_BUDGET = 10**8


def _cmd_run(args: argparse.Namespace) -> int:
    # combex.experiments adds ~50 ms: combex --help stays light
    from .experiments import check_instance_params, run_many
    from .experiments._runner import lower_bound_text

    if args.budget is not None and args.budget <= 0:
        args.budget = None

    sparams = parse_assignments(args.param, "--param")
    if args.delta is not None:
        sparams["delta"] = args.delta
    if args.epsilon is not None:
        sparams["epsilon"] = args.epsilon
    if getattr(args, "divergence", None) is not None:
        sparams["divergence"] = args.divergence
    params = parse_assignments(args.set, "--set")
    check_instance_params(args.instance, params)
    solvers = [_solver_for(name, sparams, params) for name in args.solver]
    # The output file is checked (and created) before any work.
    out = _RunOutput(Path(args.out), args.force) if args.out else None
    docs = []
    try:
        for solver in solvers:
            if out is not None:
                out.begin(solver, args.instance, params, args.seed)
            docs.append(run_many(
                solver, args.instance, params, runs=args.runs, seed=args.seed, jobs=args.jobs,
                budget=args.budget, backend=args.backend, scheduler=args.scheduler,
                progress=None if args.progress is None else args.progress, time_limit=args.time_limit,
                on_result=None if out is None else (lambda i, rec: out.add(rec))))
        out_obj: Any = docs[0] if len(docs) == 1 else docs
        text = json.dumps(out_obj, indent=None if args.json else 2)
        if out is not None:
            out.finish(text)
    finally:
        if out is not None:
            out.close()
    if args.json:
        print(text)
        return 0
    for doc in docs:
        s = doc["summary"]
        print(f"{doc['solver']} on {doc['instance']} {doc['params']}: {len(doc['runs'])} run(s)")
        for r in doc["runs"]:
            ans = r["answer"]
            ans_txt = ans if not isinstance(ans, list) or len(ans) <= 12 else f"{ans[:12]}..."
            regret = (f" regret={r['regret']:.6g} online={r['online_seconds']:.3f}s "
                      f"preprocessing={r['preprocess_seconds']:.3f}s") if "regret" in r else ""
            lb_txt = lower_bound_text(r)  # "<= R": a certified lower bound of T* as the yardstick
            lb_txt = f" samples/(T* log(1/delta)): {lb_txt}" if lb_txt else ""
            print(f"  run {r['run']}: answer={ans_txt} correct={r['correct']} samples={r['samples']} "
                  f"rounds={r['rounds']} wall={r['wall_seconds']:.3f}s status={r['status']}{regret}{lb_txt}")
            if r.get("indistinguishable"):
                ind = r["indistinguishable"]
                print(f"    still indistinguishable from the answer ({len(ind)}): {ind[:5]}{'...' if len(ind) > 5 else ''}")
        err = "n/a" if s["error_rate"] is None else f"{s['error_rate']:.3f}"
        extra = f", mean regret {s['mean_regret']:.6g} +/- {s['std_regret']:.3g}" if "mean_regret" in s else ""
        if "mean_online_seconds" in s:
            extra += f", mean online {s['mean_online_seconds']:.3f}s"
        if doc["runs"] and all(lower_bound_text(r) for r in doc["runs"]):
            mean = {"lower_bound_ratio": statistics.fmean(r["lower_bound_ratio"] for r in doc["runs"]),
                    "lower_bound_ratio_kind": " ".join(str(r.get("lower_bound_ratio_kind", "")) for r in doc["runs"])}
            extra += f", mean samples/(T* log(1/delta)): {lower_bound_text(mean)}"
        print(f"  mean samples {_fmt_count(s['mean_samples'])}, error rate {err}{extra}, "
              f"median wall {s['median_wall_seconds']:.3f}s")
    return 0


def _parse_grid(items: Sequence[str] | None, option: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InvalidParameterError(
                f"The {option!r} option takes key=v1,v2,... Got {item!r} instead."
            )
        value = value.strip()
        if value.startswith("["):
            parsed = _parse_value(value)
            vals = list(parsed) if isinstance(parsed, (list, tuple)) else [parsed]
        else:
            vals = [_parse_value(v) for v in value.split(",") if v.strip()]
        out[key.strip()] = vals
    return out


def _cmd_sweep(args: argparse.Namespace) -> int:
    # combex.experiments adds ~50 ms: combex --help stays light
    from .experiments import Sweep, run_sweep, summarize_table, sweep_from_lists

    if args.config:
        if args.solver or args.instance or args.grid or args.solver_grid or args.set or args.param:
            raise InvalidParameterError(
                "Give either a CONFIG file or --solver/--instance/--grid/--set/--param options, not both."
            )
        sweep = Sweep.from_toml(args.config)
        if args.runs is not None:
            sweep.runs = args.runs
            sweep.__post_init__()
        if args.seed is not None:
            sweep.seed = args.seed
            sweep.__post_init__()
    else:
        if not args.solver or not args.instance:
            raise InvalidParameterError(
                "combex sweep needs a CONFIG.toml file, or at least one --solver and one --instance."
            )
        sweep = sweep_from_lists(
            args.solver, args.instance, runs=args.runs or 1, seed=args.seed or 0,
            instance_params=parse_assignments(args.set, "--set"),
            solver_params=parse_assignments(args.param, "--param"),
            instance_grid=_parse_grid(args.grid, "--grid"),
            solver_grid=_parse_grid(args.solver_grid, "--solver-grid"),
            budget=args.budget, name=args.name,
        )
    report = run_sweep(sweep, args.out, jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
                       progress=args.progress)
    df = report.table()
    summary = _sort_summary(summarize_table(df, ["solver", "solver_params", "instance", "params"], "samples"))
    if args.json:
        print(json.dumps({
            "sweep": sweep.sweep_id, "root_seed": sweep.seed, "out": args.out, "runs": len(report.rows),
            "ran": report.ran, "skipped": report.skipped, "wall_seconds": report.wall_seconds,
            "groups": json.loads(summary.to_json(orient="records")),
        }))
        return 0
    print(f"sweep {sweep.name!r} (id {sweep.sweep_id}, root seed {sweep.seed}): {len(report.rows)} runs, "
          f"{report.ran} run now, {report.skipped} already in {args.out or 'the output'}; "
          f"{report.wall_seconds:.1f}s")
    by = ["solver", "solver_params", "instance", "params"]
    regret = extra = None
    if "regret" in df.columns and df["regret"].notna().any():
        regret = _sort_summary(summarize_table(df, by, "regret"))
        extra = _sort_summary(summarize_table(df, by, "online_seconds"))
    for i, r in enumerate(summary.itertuples(index=False)):
        tail = ""
        if regret is not None and regret["mean"].iloc[i] == regret["mean"].iloc[i]:  # not NaN
            tail = (f" mean regret={regret['mean'].iloc[i]:.6g} (+- {0.0 if r.count < 2 else regret['sem'].iloc[i]:.3g})"
                    f" mean online={extra['mean'].iloc[i]:.3g}s")
        print(f"  {r.solver:<14} {r.solver_params:<24} {r.instance:<18} {r.params:<28} runs={r.count:<4} "
              f"mean samples={r.mean:.6g} (+- {0.0 if r.count < 2 else r.sem:.3g}) error rate={_fmt_rate(r.error_rate)}"
              f"{tail}")
    if args.out:
        print(f"results: {args.out}")
    return 0


def _setting_key(text: Any) -> tuple[Any, ...]:
    """Sort key of a canonical-JSON settings cell: numbers compare as numbers (n=4 < n=10)."""
    try:
        obj = json.loads(text)
    except (TypeError, ValueError):
        return ((1, str(text)),)
    if not isinstance(obj, dict):
        return ((1, str(obj)),)
    out: list[Any] = []
    for k in sorted(obj):
        v = obj[k]
        num = isinstance(v, (int, float)) and not isinstance(v, bool)
        out.append((k, (0, v, "") if num else (1, 0, json.dumps(v, sort_keys=True))))
    return tuple(out)


def _sort_summary(table: Any) -> Any:
    """Rows in order of solver, solver settings, instance, instance settings (numerically)."""
    keys = [(r.solver, _setting_key(r.solver_params), r.instance, _setting_key(r.params))
            for r in table.itertuples(index=False)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return table.iloc[order].reset_index(drop=True)


def _cmd_plot(args: argparse.Namespace) -> int:
    from .experiments import plot_results, results_table  # combex.experiments adds ~50 ms: combex --help stays light

    df = results_table(args.results)
    ax = plot_results(df, args.x, args.y, hue=args.hue, error=args.error, logx=args.logx, logy=args.logy,
                      title=args.title)
    out = Path(args.out) if args.out else Path(args.results).with_name(
        f"{Path(args.results).stem}-{args.y}-vs-{args.x}.png")
    if out.exists() and not args.force:
        raise InvalidParameterError(
            f"The figure file {str(out)!r} exists; pass --force to replace it or choose another --out."
        )
    fig = ax.get_figure()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"plot saved to {out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .experiments._demo import demo  # combex.experiments adds ~50 ms: combex --help stays light

    return demo(quick=args.quick, out_dir=args.out_dir)


def _add_backend_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1)")
    p.add_argument("--backend", default=None, choices=["serial", "processes", "dask"],
                   help="where runs execute (default: processes when --jobs > 1, dask with --scheduler)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="address of a running Dask scheduler, e.g. tcp://10.0.0.1:8786 (implies --backend dask)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")


def _fmt_count(x: Any) -> str:
    """A count or a mean of counts as a reader writes it: ``6,778,058`` (not ``6.77806e+06``),
    ``12.5`` for a small mean; ``n/a`` when missing."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "n/a"
    if v != v:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 100 or v.is_integer() else f"{v:.3g}"


def _fmt_rate(x: Any) -> str:
    try:
        return "n/a" if x is None or x != x else f"{float(x):.3f}"
    except (TypeError, ValueError):
        return "n/a"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="combex",
        description="Pure exploration in structured bandits.",
        epilog="Example: combex run icb --instance kuroki-synthetic --set n=10 --set k=5 --set gap=0.5 --runs 5",
    )
    p.add_argument("--version", action="version", version=f"combex {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    sl = sub.add_parser("list", help="list solvers, decision classes, oracles and instances",
                        description="List the registered solvers, decision classes, quadratic oracles "
                                    "and named instances (with their parameters).",
                        epilog="Example: combex list")
    sl.add_argument("-v", "--verbose", action="store_true", help="also show instance parameters and defaults")
    sl.set_defaults(func=_cmd_list)

    sr = sub.add_parser(
        "run", help="run one or more solvers on a named instance",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run each SOLVER on a named instance, several seeded runs, and report samples, "
                    "correctness and time.\n\nAll solvers see the same instances and noise streams "
                    "(common random numbers: run i uses SeedSequence(seed).spawn(...)[i]). With one "
                    "solver, --json prints one document {solver, instance, params, runs, summary}; "
                    "with several, a JSON list of such documents.",
        epilog="Examples:\n"
               "  combex run saqm --instance kuroki-synthetic --set n=10 --set k=5 --set gap=0.5 "
               "--delta 0.05 --runs 10 --json\n"
               "  combex run icb saqm --instance kuroki-synthetic --set n=8 --runs 20 --jobs 2\n"
               "  combex run lil-randlucb --instance jiang-1sparse --set N=20 --set K=2 --runs 100 "
               "--backend dask --scheduler tcp://127.0.0.1:8786",
    )
    sr.add_argument("solver", nargs="+", help="solver name(s) (see `combex list`)")
    sr.add_argument("--instance", required=True, help="instance name (see `combex list`)")
    sr.add_argument("--set", action="append", metavar="KEY=VALUE", help="instance parameter (repeatable)")
    sr.add_argument("--param", action="append", metavar="KEY=VALUE", help="solver setting (repeatable)")
    sr.add_argument("--delta", type=float, default=None, help="confidence level delta in (0, 1)")
    sr.add_argument("--epsilon", type=float, default=None, help="accuracy epsilon >= 0")
    sr.add_argument("--divergence", default=None, metavar="NAME",
                    help="reward model of the GLR solvers (track-and-stop, top-two, fw-sampling, comb-game): "
                         "auto, gaussian, bernoulli or unknown-variance (same as --param divergence=NAME)")
    sr.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    sr.add_argument("--runs", type=int, default=1, help="number of seeded runs (default 1)")
    sr.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                    help=f"maximum samples per run (default {DEFAULT_BUDGET:.0e}; 0: no limit); a run "
                         "that reaches it ends with status budget_exhausted and lists the candidates "
                         "still indistinguishable from its leader")
    sr.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="end each run at its first check after this many seconds (status budget_exhausted)")
    _add_backend_options(sr)
    sr.add_argument("--json", action="store_true", help="print one JSON object (a list with several solvers)")
    sr.add_argument("--out", default=None,
                    help="also write the results to this file as runs finish: one CSV row per run when "
                         "the name ends in .csv, else the JSON document (checked before any run)")
    sr.add_argument("--force", action="store_true", help="replace an existing --out file")
    sr.set_defaults(func=_cmd_run)

    sw = sub.add_parser(
        "sweep", help="solvers x instances x parameter grid x seeds, to a resumable results file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a sweep described by a TOML file or by options, writing one row per run "
                    "to --out (.csv appended as runs finish, .json or .parquet rewritten "
                    "atomically). Runs already in --out are skipped (resume); a file written by a "
                    "different sweep is refused, never truncated.\n\nTOML format:\n"
                    "  name = \"icb-vs-saqm\"\n  seed = 0\n  runs = 20\n  budget = 1000000      # optional\n"
                    "  [[solvers]]\n  name = \"icb\"\n  delta = 0.05\n"
                    "  [[solvers]]\n  name = \"saqm\"\n  grid = { epsilon = [0.0, 0.5] }\n"
                    "  [[instances]]\n  name = \"kuroki-synthetic\"\n  k = 3\n  gap = 1.0\n"
                    "  grid = { n = [6, 8, 10] }",
        epilog="Examples:\n"
               "  combex sweep study.toml --out results.csv --jobs 2\n"
               "  combex sweep --solver icb --solver saqm --instance kuroki-synthetic --set k=3 "
               "--set gap=1.0 --grid n=6,8,10 --runs 20 --out results.csv\n"
               "  combex plot results.csv --x n --y samples",
    )
    sw.add_argument("config", nargs="?", default=None, help="TOML sweep file (or use the options below)")
    sw.add_argument("--solver", action="append", metavar="NAME", help="solver name (repeatable)")
    sw.add_argument("--instance", action="append", metavar="NAME", help="instance name (repeatable)")
    sw.add_argument("--set", action="append", metavar="KEY=VALUE", help="instance parameter for all instances")
    sw.add_argument("--param", action="append", metavar="KEY=VALUE", help="solver setting for all solvers")
    sw.add_argument("--grid", action="append", metavar="KEY=V1,V2", help="instance parameter values to sweep")
    sw.add_argument("--solver-grid", action="append", metavar="KEY=V1,V2", help="solver setting values to sweep")
    sw.add_argument("--runs", type=int, default=None, help="replicates per point (overrides the config)")
    sw.add_argument("--seed", type=int, default=None, help="root seed (overrides the config; default 0)")
    sw.add_argument("--budget", type=int, default=None, help="maximum samples per run")
    sw.add_argument("--name", default="sweep", help="sweep name (free text)")
    _add_backend_options(sw)
    sw.add_argument("--out", default=None, help="results file: .csv, .json or .parquet (resumed if it exists)")
    sw.add_argument("--json", action="store_true", help="print a JSON summary")
    sw.set_defaults(func=_cmd_sweep)

    sp = sub.add_parser(
        "plot", help="plot a metric of a results file against a parameter",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Plot the mean of --y (samples, rounds, wall_seconds, time_per_round, correct) "
                    "against the parameter --x, one line per --hue value, with error bars.",
        epilog="Examples:\n  combex plot results.csv --x n --y samples\n"
               "  combex plot results.csv --x n --y time_per_round --logy --out time.png",
    )
    sp.add_argument("results", help="results file written by `combex sweep`")
    sp.add_argument("--x", required=True, help="parameter column for the x axis")
    sp.add_argument("--y", default="samples", help="metric (default samples)")
    sp.add_argument("--hue", default="solver",
                    help="column separating the lines (default solver); every other setting that varies "
                         "separates lines too, so different settings are never averaged")
    sp.add_argument("--error", default="sem", choices=["sem", "std", "none"], help="error bars (default sem)")
    sp.add_argument("--logx", action="store_true", help="logarithmic x axis")
    sp.add_argument("--logy", action="store_true", help="logarithmic y axis")
    sp.add_argument("--title", default=None, help="figure title")
    sp.add_argument("--out", default=None, help="figure file (default RESULTS-Y-vs-X.png)")
    sp.add_argument("--force", action="store_true", help="replace an existing figure file")
    sp.set_defaults(func=_cmd_plot)

    sd = sub.add_parser("demo", help="the team-selection study on the embedded default",
                        description="Identify the best team of 10 workers from full-bandit feedback "
                                    "(ICB, SAQM, SA-FOA) on the crowdsourcing quiz data, or an embedded "
                                    "synthetic crowd when the data is absent; saves a plot.",
                        epilog="Example: combex demo --quick --out-dir /tmp")
    sd.add_argument("--quick", action="store_true", help="a smaller run (seconds)")
    sd.add_argument("--out-dir", default=".", help="where to save the plot (default .)")
    sd.set_defaults(func=_cmd_demo)

    add_study_command(sub)
    add_plan_command(sub)
    add_dashboard_command(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CombexError as exc:
        print(f"combex: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:  # an optional dependency (pandas, matplotlib, dask...) is missing
        print(f"combex: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: finished runs are already in the output file
        print("combex: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `combex ... | head`: the reader is gone, exit quietly
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the shell convention


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # e.g. a captured stdout without a file descriptor
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
