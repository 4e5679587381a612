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
(another root seed, budget, solvers or instances) is refused.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .._validation import check_float, check_int
from ..exceptions import CombexError, ConfigError, InvalidParameterError, ResultsFileError
from ._backends import execute
from ._instances import check_instance_params
from ._runner import RunTask, build_solver, execute_task

__all__ = ["ConfigError", "ResultsFileError", "Sweep", "SweepReport", "load_config", "run_sweep",
           "read_results", "results_table", "RESULT_COLUMNS", "REGRET_COLUMNS", "canonical_json"]

FORMAT = "combex-results"
FORMAT_VERSION = 1
RESULT_COLUMNS = ["sweep", "root_seed", "solver", "solver_params", "instance", "params", "run",
                  "answer", "correct", "status", "samples", "rounds", "wall_seconds", "pulls",
                  "certificate"]
#: Extra columns of sweeps that hold regret policies (``contract == "regret"``).
REGRET_COLUMNS = ["regret", "online_seconds", "preprocess_seconds", "index_maintenance_seconds"]
#: Column of every sweep with a pure-exploration solver: samples / (T* log(1/delta)) where
#: the instance's truth gives T* (empty otherwise).
BOUND_COLUMNS = ["lower_bound_ratio"]
_JSON_COLUMNS = ("solver_params", "params", "answer", "pulls", "certificate")
_SUFFIXES = (".csv", ".json", ".parquet")


def canonical_json(obj: Any) -> str:
    """Compact, key-sorted JSON (the identity of settings and parameters)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON-able")


# ---------------------------------------------------------------------- configuration
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
            import difflib

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
        from ..solvers import get_solver

        return any(get_solver(n).contract == "regret" for n, _ in self.solvers)

    def columns(self) -> list[str]:
        extra = REGRET_COLUMNS if self.has_regret_solvers() else []
        from ..solvers import get_solver

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
    try:
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
def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise InvalidParameterError(
            f"The results file {str(path)!r} must end in {', '.join(_SUFFIXES)}. Got {suffix or 'no suffix'!r} instead."
        )
    return suffix[1:]


def _meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def read_results(path: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Read a results file: ``(metadata or None, rows)``; JSON columns decoded.

    Raises :class:`ResultsFileError` when the file is not a combex results file.
    """
    p = Path(path)
    fmt = _format(p)
    if not p.exists():
        raise ResultsFileError(f"No results file at {str(p)!r}.")
    meta = None
    mp = _meta_path(p)
    if fmt == "json":
        try:
            doc = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise ResultsFileError(f"The file {str(p)!r} is not a combex results file ({exc}).") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ResultsFileError(f"The file {str(p)!r} is not a combex results file.")
        rows = doc.get("rows", [])
        if not isinstance(rows, list):
            raise ResultsFileError(f"The results file {str(p)!r}: 'rows' must be a list. Got {type(rows).__name__}.")
        for i, r in enumerate(rows):
            _check_row(p, r, f"row {i}")
        meta = doc.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise ResultsFileError(f"The results file {str(p)!r}: 'meta' must be a table.")
        return meta, _dedup(rows)
    if mp.exists():
        try:
            meta = json.loads(mp.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ResultsFileError(f"The metadata file {str(mp)!r} is malformed ({exc}).") from None
        if not isinstance(meta, dict):
            raise ResultsFileError(f"The metadata file {str(mp)!r} is malformed (not a table).")
    if fmt == "csv":
        return meta, _dedup(_read_csv(p))
    pd = _pandas()
    try:
        df = pd.read_parquet(p)
    except ImportError:
        raise
    except Exception as exc:  # pyarrow raises its own error types
        raise ResultsFileError(f"The file {str(p)!r} is not a readable Parquet file ({exc}).") from None
    missing = [c for c in RESULT_COLUMNS if c not in df.columns]
    if missing:
        raise ResultsFileError(f"The file {str(p)!r} is not a combex results file (no column {missing[0]!r}).")
    rows = df.to_dict("records")
    for i, r in enumerate(rows):
        for c in _JSON_COLUMNS:
            if isinstance(r.get(c), str):
                try:
                    r[c] = json.loads(r[c])
                except json.JSONDecodeError as exc:
                    raise ResultsFileError(f"The results file {str(p)!r}, row {i}: the column {c!r} is not "
                                           f"valid JSON ({exc}).") from None
        _check_row(p, r, f"row {i}")
    return meta, _dedup(rows)


def _check_row(p: Path, r: Any, where: str) -> None:
    if not isinstance(r, dict):
        raise ResultsFileError(f"The results file {str(p)!r}, {where}: a row must be a table. Got {r!r}.")
    missing = [c for c in ("solver", "solver_params", "instance", "params", "run") if c not in r]
    if missing:
        raise ResultsFileError(f"The results file {str(p)!r}, {where}: no column {missing[0]!r}.")
    try:
        _row_key(r)
    except (TypeError, ValueError) as exc:
        raise ResultsFileError(f"The results file {str(p)!r}, {where}: malformed run key ({exc}).") from None


def _dedup(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows without repeated runs (same run key; the first copy is kept): two writers
    of one file, or a row re-appended after a crash, never count a run twice."""
    seen: set[Any] = set()
    out = []
    for r in rows:
        k = _row_key(r)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def _torn_tail(p: Path) -> int | None:
    """The byte offset just after the last newline when the file does not end with one
    (its last row was torn by a crash mid-write), else None."""
    size = p.stat().st_size
    if size == 0:
        return None
    with open(p, "rb") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return None
        step = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - step)
            fh.seek(start)
            chunk = fh.read(pos - start)
            j = chunk.rfind(b"\n")
            if j >= 0:
                return start + j + 1
            pos = start
    return 0


def _read_csv(p: Path) -> list[dict[str, Any]]:
    """The decoded rows of a CSV results file. A torn last row (no final newline: a crash
    mid-append) is dropped, and a resumed sweep runs it again; any other malformed row
    raises :class:`ResultsFileError` naming the file and the line."""
    torn = _torn_tail(p)
    try:
        with open(p, newline="") as fh:
            text = fh.read() if torn is None else fh.read(torn)
    except UnicodeDecodeError as exc:
        raise ResultsFileError(f"The results file {str(p)!r} is not text ({exc}).") from None
    import io

    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise ResultsFileError(f"The results file {str(p)!r}, line 1: malformed header ({exc}).") from None
    missing = [c for c in RESULT_COLUMNS if c not in header]
    if missing:
        raise ResultsFileError(
            f"The file {str(p)!r} is not a combex results file (no column {missing[0]!r})."
        )
    rows = []
    while True:
        line = reader.line_num + 1  # where the next row starts
        try:
            r = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ResultsFileError(f"The results file {str(p)!r}, line {line}: {exc}.") from None
        if None in r or any(v is None for v in r.values()):
            n = sum(1 for k, v in r.items() if k is not None and v is not None) + len(r.get(None) or [])
            raise ResultsFileError(f"The results file {str(p)!r}, line {line}: the row has {n} fields, "
                                   f"the header {len(header)}.")
        try:
            rows.append(_decode_csv_row(r))
        except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
            raise ResultsFileError(f"The results file {str(p)!r}, line {line}: a malformed "
                                   f"value ({exc}).") from None
    return rows


def _decode_csv_row(r: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in r.items():
        if k in _JSON_COLUMNS:
            out[k] = json.loads(v) if v else None
        elif k in ("root_seed", "run", "samples", "rounds"):
            out[k] = int(v)
        elif k == "wall_seconds":
            out[k] = float(v)
        elif k in REGRET_COLUMNS or k in BOUND_COLUMNS:  # empty where not measured
            out[k] = float(v) if v != "" else None
        elif k == "correct":  # empty for runs with nothing to score (regret runs)
            out[k] = None if v == "" else v == "True"
        elif k in ("sweep", "solver", "instance", "status"):
            out[k] = v
        else:  # a parameter column: JSON-encoded value, empty when absent
            out[k] = json.loads(v) if v != "" else None
    return out


def _encode_row(row: Mapping[str, Any], columns: Sequence[str]) -> dict[str, Any]:
    out = {}
    for c in columns:
        v = row.get(c)
        if c in _JSON_COLUMNS:
            out[c] = canonical_json(v)
        elif c in RESULT_COLUMNS or c in REGRET_COLUMNS:
            out[c] = v
        elif c in BOUND_COLUMNS:
            out[c] = "" if v is None or (isinstance(v, float) and v != v) else v
        else:
            out[c] = "" if c not in row else canonical_json(v)
    return out


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - depends on the install
        raise ImportError(
            "Results tables need pandas: pip install 'combex[plots]' (or 'combex[data]')."
        ) from None
    return pd


def _row_key(row: Mapping[str, Any]) -> tuple[str, str, str, str, int]:
    return (row["solver"], canonical_json(row["solver_params"]), row["instance"],
            canonical_json(row["params"]), int(row["run"]))


def results_table(rows_or_path: Any) -> Any:
    """The tidy results as a pandas DataFrame (one row per run), sorted by
    (solver, solver_params, instance, params, run); JSON columns hold Python objects
    except ``solver_params`` and ``params``, kept as canonical JSON text so rows group."""
    pd = _pandas()
    if isinstance(rows_or_path, (str, os.PathLike)):
        _, rows = read_results(rows_or_path)
    else:
        rows = _dedup(list(rows_or_path))
    recs = []
    for r in rows:
        r = dict(r)
        r["solver_params"] = canonical_json(r["solver_params"])
        r["params"] = canonical_json(r["params"])
        recs.append(r)
    df = pd.DataFrame.from_records(recs)
    if len(df):
        df = df.sort_values(["solver", "solver_params", "instance", "params", "run"], kind="stable")
        df = df.reset_index(drop=True)
    return df


class _Writer:
    """Appends rows (CSV) or rewrites atomically (JSON, Parquet) without losing old rows."""

    def __init__(self, path: Path, meta: dict[str, Any], columns: list[str], old_rows: list[dict[str, Any]],
                 exists: bool) -> None:
        self.path, self.meta, self.columns = path, meta, columns
        self.fmt = _format(path)
        self.rows = list(old_rows)
        self.new = 0
        self.last_flush = time.monotonic()
        self._fh = None
        if self.fmt == "parquet":
            _pandas()
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                try:
                    import fastparquet  # noqa: F401
                except ImportError:
                    raise ImportError(
                        "Writing Parquet needs pyarrow (or fastparquet): pip install pyarrow, "
                        "or write .csv / .json."
                    ) from None
        if self.fmt != "json" and not _meta_path(path).exists():
            _atomic_write(_meta_path(path), json.dumps(meta, indent=1))
        if self.fmt == "csv":
            torn = _torn_tail(path) if exists else None
            if torn is not None:  # cut a row torn by a crash: it is run again
                with open(path, "r+b") as fh:
                    fh.truncate(torn)
            self._fh = open(path, "a", newline="")
            self._csv = csv.DictWriter(self._fh, fieldnames=columns)
            if not exists:
                self._csv.writeheader()
                self._fh.flush()

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        self.new += 1
        if self._fh is not None:
            self._csv.writerow(_encode_row(row, self.columns))
            self._fh.flush()
        elif time.monotonic() - self.last_flush > 30.0:
            self.flush()

    def flush(self) -> None:
        self.last_flush = time.monotonic()
        if self.fmt == "json":
            doc = {"format": FORMAT, "version": FORMAT_VERSION, "meta": self.meta, "rows": self.rows}
            _atomic_write(self.path, json.dumps(doc, default=_json_default))
        elif self.fmt == "parquet":
            pd = _pandas()
            df = pd.DataFrame([_encode_row(r, self.columns) for r in self.rows], columns=self.columns)
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            os.close(fd)
            try:
                df.to_parquet(tmp, index=False)
                os.replace(tmp, self.path)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        elif self.new:
            self.flush()


def _atomic_write(path: Path, text: str) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


class _Lock:
    """An exclusive ``flock`` on ``<out>.lock`` for the whole sweep: a second sweep writing
    the same results file is refused instead of duplicating every row. The lock file is
    removed on release, while still locked; a sweep that locked a file some other sweep had
    already removed sees that the path now names another file (or none) and locks anew, so
    two sweeps never both hold the lock. (No lock where ``fcntl`` is missing, e.g. Windows.)"""

    def __init__(self, path: Path) -> None:
        self.fh = None
        self.path = _lock_path(path)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return
        lp = self.path
        while True:
            try:
                fd = os.open(lp, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except OSError as exc:  # e.g. a symlink planted there (O_NOFOLLOW), a read-only directory
                raise ResultsFileError(f"The lock file {str(lp)!r} of the results file {str(path)!r} cannot be "
                                       f"opened ({exc}).") from None
            fh = os.fdopen(fd, "r+")
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.close()
                raise ResultsFileError(
                    f"Another sweep is writing the results file {str(path)!r} (its lock {str(lp)!r} is held); "
                    "wait for it to finish, or choose another output file."
                ) from None
            held = os.fstat(fh.fileno())
            try:
                now = os.stat(lp, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                self.fh = fh
                return
            fh.close()  # the file was removed by the sweep that held it: lock the new one

    def release(self) -> None:
        if self.fh is not None:
            try:
                os.unlink(self.path)  # still locked: no other sweep can be inside
            except FileNotFoundError:  # pragma: no cover - removed by hand
                pass
            self.fh.close()  # closing the descriptor releases the flock
            self.fh = None


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
    import combex

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
