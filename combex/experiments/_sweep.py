"""Sweeps: solvers x instances x parameter grid x seeds, written to a tidy results file.

A sweep is described by a :class:`Sweep` (from Python, the CLI, or a TOML file)::

    name = "icb-vs-saqm"        # free text
    seed = 0                    # the root seed (recorded in every row)
    runs = 20                   # replicates per (solver, instance point)
    budget = 1_000_000          # optional: maximum samples per run
    epsilon_correct = 0.0       # optional: scoring tolerance (default: each solver's)

    [[solvers]]
    name = "icb"
    delta = 0.05                # any other key is a solver setting
    grid = { epsilon = [0.0, 0.5] }   # optional: settings to sweep

    [[solvers]]
    name = "saqm"

    [[instances]]
    name = "kuroki-synthetic"
    k = 3                       # any other key is an instance parameter
    gap = 1.0
    grid = { n = [6, 8, 10] }   # optional: parameters to sweep

(``solvers = ["icb", "saqm"]`` is short for tables with a name only.)

Run ``(solver point, instance point, replicate r)`` uses the generators of
:func:`~combex.experiments.run_generators` ``(seed, r)``: every solver and every backend
sees the same instances and noise streams (common random numbers), and a run's result
does not depend on which other runs exist, so a sweep can be extended (more runs, more
grid points) and resumed: runs already present in the output file are skipped. Rows are
appended as runs finish (CSV) or the file is rewritten atomically (JSON, Parquet); an
existing results file is never truncated, and a file written by a different sweep
(another root seed, budget, solvers or instances) is refused. This module orchestrates; the
file format, its reader and its one-at-a-time writer are :mod:`combex.experiments._results`.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import combex

from .._validation import check_float, check_int
from ..exceptions import CombexError, ConfigError, InvalidParameterError, ResultsFileError
from ..solvers import get_solver
from ._backends import execute
from ._instances import check_instance_params
from ._runner import RunTask, build_solver, execute_task

from ._results import (BOUND_COLUMNS, FORMAT, FORMAT_VERSION, REGRET_COLUMNS, RESULT_COLUMNS, _format, _Lock,
                       _row_key, _Writer, canonical_json, read_results, results_table)

__all__ = ["ConfigError", "ResultsFileError", "Sweep", "SweepReport", "load_config", "run_sweep",
           "read_results", "results_table", "RESULT_COLUMNS", "REGRET_COLUMNS", "canonical_json"]


def _expand(fixed: Mapping[str, Any], grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [{**fixed, **dict(zip(keys, combo))} for combo in itertools.product(*(grid[k] for k in keys))]


def _entry(raw: Any, what: str, where: str) -> tuple[str, dict[str, Any], dict[str, list[Any]]]:
    if isinstance(raw, str):
        return raw, {}, {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: each entry of {what!r} must be a name or a table. Got {raw!r} instead.")
    raw = dict(raw)
    name = raw.pop("name", None)
    if not isinstance(name, str):
        raise ConfigError(f"{where}: an entry of {what!r} has no 'name' (a string). Got {raw!r} instead.")
    grid = raw.pop("grid", {}) or {}
    fixed = raw.pop("params", {}) or {}  # also accepted: settings in a 'params' sub-table
    if not isinstance(grid, Mapping) or not isinstance(fixed, Mapping):
        raise ConfigError(f"{where}: 'grid' and 'params' of {what} {name!r} must be tables.")
    fixed = {**dict(fixed), **raw}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(
                f"{where}: grid key {key!r} of {what} {name!r} must be a non-empty list. Got {values!r} instead."
            )
        if key in fixed:
            raise ConfigError(f"{where}: {what} {name!r} sets {key!r} both as a value and in its grid.")
    return name, fixed, {k: list(v) for k, v in grid.items()}


@dataclass
class Sweep:
    """A sweep: solver points x instance points x ``runs`` replicates.

    Parameters
    ----------
    solvers : list of (name, settings) pairs
        Solver points (grids already expanded; see :meth:`from_config`).
    instances : list of (name, params) pairs
        Instance points.
    runs : int
        Replicates per (solver point, instance point).
    seed : int
        Root seed.
    budget : int, optional
        Maximum samples per run.
    epsilon_correct : float, optional
        Scoring tolerance (default: each solver's :attr:`~combex.solvers.Solver.tolerance`).
    name : str
        Free text (not part of the sweep's identity).
    """

    solvers: list[tuple[str, dict[str, Any]]]
    instances: list[tuple[str, dict[str, Any]]]
    runs: int = 1
    seed: int = 0
    budget: int | None = None
    epsilon_correct: float | None = None
    name: str = "sweep"
    source: str = field(default="<python>", repr=False)

    def __post_init__(self) -> None:
        self.runs = check_int(self.runs, "runs", owner="Sweep", low=1)
        self.seed = check_int(self.seed, "seed", owner="Sweep", low=0)
        if self.budget is not None:
            self.budget = check_int(self.budget, "budget", owner="Sweep", low=1)
        if self.epsilon_correct is not None:
            self.epsilon_correct = check_float(self.epsilon_correct, "epsilon_correct", owner="Sweep", low=0.0)
        if not self.solvers:
            raise InvalidParameterError("The 'solvers' parameter of Sweep must name at least one solver.")
        if not self.instances:
            raise InvalidParameterError("The 'instances' parameter of Sweep must name at least one instance.")
        self.solvers = [(str(n), dict(s)) for n, s in self.solvers]
        self.instances = [(str(n), dict(p)) for n, p in self.instances]
        # Validate names and keys now (closest-name suggestions), not in a worker.
        for n, s in self.solvers:
            build_solver(n, s)
        for n, p in self.instances:
            check_instance_params(n, p)
        for pts, what in ((self.solvers, "solver"), (self.instances, "instance")):
            keys = [(n, canonical_json(s)) for n, s in pts]
            if len(set(keys)) != len(keys):
                dup = next(k for k in keys if keys.count(k) > 1)
                raise InvalidParameterError(f"The sweep lists {what} {dup[0]!r} with settings {dup[1]} twice.")

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, source: str = "<config>") -> "Sweep":
        """Build a sweep from a parsed TOML / dict configuration (see the module docstring)."""
        if not isinstance(config, Mapping):
            raise ConfigError(f"{source}: a sweep configuration must be a table. Got {config!r} instead.")
        allowed = {"name", "seed", "runs", "budget", "epsilon_correct", "solvers", "instances"}
        unknown = sorted(set(config) - allowed)
        if unknown:
            close = difflib.get_close_matches(unknown[0], allowed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{source}: unknown key {unknown[0]!r}.{hint} Known keys: {', '.join(sorted(allowed))}."
            )
        for key in ("solvers", "instances"):
            if key not in config:
                raise ConfigError(f"{source}: the configuration has no {key!r} list.")
            if not isinstance(config[key], list) or not config[key]:
                raise ConfigError(f"{source}: {key!r} must be a non-empty list. Got {config[key]!r} instead.")
        solvers: list[tuple[str, dict[str, Any]]] = []
        for raw in config["solvers"]:
            n, fixed, grid = _entry(raw, "solvers", source)
            solvers += [(n, s) for s in _expand(fixed, grid)]
        instances: list[tuple[str, dict[str, Any]]] = []
        for raw in config["instances"]:
            n, fixed, grid = _entry(raw, "instances", source)
            instances += [(n, p) for p in _expand(fixed, grid)]
        try:
            return cls(solvers=solvers, instances=instances, runs=config.get("runs", 1),
                       seed=config.get("seed", 0), budget=config.get("budget"),
                       epsilon_correct=config.get("epsilon_correct"), name=str(config.get("name", "sweep")),
                       source=source)
        except ConfigError:
            raise
        except CombexError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> "Sweep":
        """Read a TOML sweep file."""
        return cls.from_config(load_config(path), source=str(path))

    # ------------------------------------------------------------------ identity
    def identity(self) -> dict[str, Any]:
        """What makes two sweeps the same study (``runs`` and ``name`` excluded, so a
        sweep can be extended with more replicates)."""
        return {
            "seed": self.seed,
            "budget": self.budget,
            "epsilon_correct": self.epsilon_correct,
            "solvers": [[n, s] for n, s in self.solvers],
            "instances": [[n, p] for n, p in self.instances],
        }

    @property
    def sweep_id(self) -> str:
        """A short hash of :meth:`identity`."""
        return hashlib.sha256(canonical_json(self.identity()).encode()).hexdigest()[:16]

    def to_config(self) -> dict[str, Any]:
        return {"name": self.name, "runs": self.runs, **self.identity()}

    def param_columns(self) -> dict[tuple[str, str], str]:
        """Column of each (``"instance"`` or ``"solver"``, key): the bare key unless it
        collides with a result column or with a key of the other kind."""
        inst = sorted({k for _, p in self.instances for k in p})
        solv = sorted({k for _, s in self.solvers for k in s})
        cols: dict[tuple[str, str], str] = {}
        for kind, keys, other in (("instance", inst, solv), ("solver", solv, inst)):
            for k in keys:
                clash = k in RESULT_COLUMNS or k in REGRET_COLUMNS or k in BOUND_COLUMNS or k in other
                cols[(kind, k)] = f"{kind}.{k}" if clash else k
        return cols

    def has_regret_solvers(self) -> bool:
        """Whether a solver of the sweep minimizes regret (its rows carry REGRET_COLUMNS)."""
        return any(get_solver(n).contract == "regret" for n, _ in self.solvers)

    def columns(self) -> list[str]:
        extra = REGRET_COLUMNS if self.has_regret_solvers() else []

        pac = any(get_solver(n).contract != "regret" for n, _ in self.solvers)
        return (RESULT_COLUMNS[:7] + list(self.param_columns().values()) + RESULT_COLUMNS[7:] + extra
                + (BOUND_COLUMNS if pac else []))

    def tasks(self) -> list[tuple[tuple[str, str, str, str, int], RunTask]]:
        """Every run with its key ``(solver, settings json, instance, params json, run)``,
        in a fixed order (solver, instance, replicate)."""
        out = []
        for sn, ss in self.solvers:
            for iname, ip in self.instances:
                for r in range(self.runs):
                    key = (sn, canonical_json(ss), iname, canonical_json(ip), r)
                    out.append((key, RunTask((sn, ss), iname, ip, self.seed, r, self.budget, self.epsilon_correct)))
        return out

    def __len__(self) -> int:
        return len(self.solvers) * len(self.instances) * self.runs


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a TOML file (``tomllib``, or ``tomli`` before Python 3.11) with clear errors."""
    try:  # tomllib from Python 3.11; tomli before (the plots / sweep extras)
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise ImportError("Reading TOML on Python 3.10 needs tomli: pip install 'combex[sweep]'.") from None
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ConfigError(f"No sweep configuration at {str(p)!r}.") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: malformed TOML: {exc}.") from None


# ---------------------------------------------------------------------- results files


def _check_compatible(path: Path, meta: dict[str, Any] | None, rows: list[dict[str, Any]], sweep: Sweep) -> None:
    ids = {r.get("sweep") for r in rows}
    if meta is not None:
        if meta.get("format") != FORMAT:
            raise ResultsFileError(f"The file {str(path)!r} is not a combex results file.")
        ids.add(meta.get("sweep"))
    ids.discard(None)
    foreign = sorted(i for i in ids if i != sweep.sweep_id)
    if foreign:
        old = (meta or {}).get("config", {})
        diff = [k for k in ("seed", "budget", "epsilon_correct", "solvers", "instances")
                if k in old and canonical_json(old[k]) != canonical_json(sweep.identity()[k])]
        what = f" (it differs in: {', '.join(diff)})" if diff else ""
        raise ResultsFileError(
            f"The output file {str(path)!r} holds results of a different sweep (id {foreign[0]}; this sweep "
            f"is {sweep.sweep_id}){what}. Choose another output file; the existing one is left untouched."
        )


# ---------------------------------------------------------------------- running
@dataclass
class SweepReport:
    """What :func:`run_sweep` did. ``rows``: every run of the sweep (old and new), in the
    sweep's task order."""

    sweep: Sweep
    rows: list[dict[str, Any]]
    ran: int
    skipped: int
    wall_seconds: float
    path: Path | None = None

    def table(self) -> Any:
        """The rows as a pandas DataFrame (see :func:`results_table`)."""
        return results_table(self.rows)


def _make_row(sweep: Sweep, cols: dict[tuple[str, str], str], key: tuple[Any, ...], task: RunTask,
              rec: dict[str, Any]) -> dict[str, Any]:
    settings = key[1]
    row: dict[str, Any] = {
        "sweep": sweep.sweep_id,
        "root_seed": sweep.seed,
        "solver": task.solver[0],
        "solver_params": json.loads(settings),
        "instance": task.instance,
        "params": dict(task.params),
        "run": task.index,
    }
    for k, v in task.params.items():
        row[cols[("instance", k)]] = v
    for k, v in task.solver[1].items():
        row[cols[("solver", k)]] = v
    for c in RESULT_COLUMNS[7:]:
        row[c] = rec[c]
    for c in REGRET_COLUMNS:
        if c in rec:
            row[c] = rec[c]
    for c in BOUND_COLUMNS if "regret" not in rec else ():  # regret records have no T*
        v = rec.get(c)
        row[c] = None if v is None or (isinstance(v, float) and v != v) else float(v)
    return row


def run_sweep(
    sweep: Sweep,
    out: str | os.PathLike[str] | None = None,
    *,
    jobs: int = 1,
    backend: str | None = None,
    scheduler: Any = None,
    progress: bool | None = None,
    chunksize: int | None = None,
) -> SweepReport:
    """Run every run of ``sweep`` not already in ``out``; append the new rows to ``out``.

    Parameters
    ----------
    sweep : Sweep
    out : path, optional
        ``.csv`` (rows appended as runs finish), ``.json`` or ``.parquet`` (rewritten
        atomically every 30 s and at the end). CSV and Parquet get a ``.meta.json``
        sidecar with the configuration and the root seed. An existing file of the same
        sweep is resumed (a CSV row torn by a crash is cut and run again); one of another
        sweep raises :class:`ResultsFileError`, and so does a second sweep writing the same
        file at the same time (an exclusive ``flock`` on ``<out>.lock``).
    jobs, backend, scheduler, chunksize, progress
        See :func:`combex.experiments.execute`.
    """
    t0 = time.perf_counter()
    path = Path(out) if out is not None else None
    lock = None
    if path is not None:
        _format(path)
        if not path.parent.is_dir():
            raise ResultsFileError(f"The directory of the results file {str(path)!r} does not exist.")
        lock = _Lock(path)
    try:
        return _run_locked(sweep, path, jobs=jobs, backend=backend, scheduler=scheduler, progress=progress,
                           chunksize=chunksize, t0=t0)
    finally:
        if lock is not None:
            lock.release()


def _run_locked(sweep: Sweep, path: Path | None, *, jobs: int, backend: str | None, scheduler: Any,
                progress: bool | None, chunksize: int | None, t0: float) -> SweepReport:
    cols = sweep.param_columns()
    columns = sweep.columns()
    tasks = sweep.tasks()
    done: dict[tuple[Any, ...], dict[str, Any]] = {}
    old_rows: list[dict[str, Any]] = []
    exists = False
    if path is not None:
        exists = path.exists() and path.stat().st_size > 0
        if exists:
            meta, old_rows = read_results(path)
            _check_compatible(path, meta, old_rows, sweep)
            if path.suffix.lower() == ".csv":
                with open(path, newline="") as fh:
                    try:
                        header = next(csv.reader(fh), [])
                    except csv.Error as exc:
                        raise ResultsFileError(f"The results file {str(path)!r}, line 1: {exc}.") from None
                if header != columns:
                    raise ResultsFileError(
                        f"The output file {str(path)!r} has columns {header}, this sweep writes {columns}: "
                        "it holds results of a different sweep. Choose another output file."
                    )
            done = {_row_key(r): r for r in old_rows}
    todo = [(k, t) for k, t in tasks if k not in done]
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "sweep": sweep.sweep_id, "root_seed": sweep.seed,
            "config": sweep.to_config(), "columns": columns, "combex_version": combex.__version__,
            "python": sys.version.split()[0]}
    writer = _Writer(path, meta, columns, old_rows, exists) if path is not None else None
    new_rows: dict[tuple[Any, ...], dict[str, Any]] = {}

    def on_result(i: int, rec: dict[str, Any]) -> None:
        key, task = todo[i]
        row = _make_row(sweep, cols, key, task, rec)
        new_rows[key] = row
        if writer is not None:
            writer.add(row)

    try:
        execute(execute_task, [t for _, t in todo], backend=backend, jobs=jobs, scheduler=scheduler,
                chunksize=chunksize, progress=progress, desc=sweep.name, on_result=on_result)
    finally:
        if writer is not None:
            writer.close()
    rows = [new_rows.get(k) or done[k] for k, _ in tasks]
    return SweepReport(sweep, rows, ran=len(new_rows), skipped=len(tasks) - len(todo),
                       wall_seconds=time.perf_counter() - t0, path=path)


def sweep_from_lists(solvers: Iterable[Any], instances: Iterable[Any], *, runs: int = 1, seed: int = 0,
                     solver_grid: Mapping[str, Sequence[Any]] | None = None,
                     instance_grid: Mapping[str, Sequence[Any]] | None = None,
                     solver_params: Mapping[str, Any] | None = None,
                     instance_params: Mapping[str, Any] | None = None,
                     budget: int | None = None, epsilon_correct: float | None = None,
                     name: str = "sweep") -> Sweep:
    """A :class:`Sweep` from names plus shared settings / parameters and grids (the CLI's
    ``combex sweep --solver NAME --instance NAME --grid key=v1,v2``)."""
    sg, ig = dict(solver_grid or {}), dict(instance_grid or {})
    sp, ip = dict(solver_params or {}), dict(instance_params or {})
    return Sweep(
        solvers=[(s, x) for s in solvers for x in _expand(sp, sg)],
        instances=[(i, x) for i in instances for x in _expand(ip, ig)],
        runs=runs, seed=seed, budget=budget, epsilon_correct=epsilon_correct, name=name,
    )
