"""The results store of sweeps: one tidy file (CSV, JSON or Parquet) with a metadata
record, rows appended as runs finish (CSV) or the file rewritten atomically (JSON,
Parquet), a torn last line tolerated and rows deduplicated by their run key, one writer at
a time (an advisory lock beside the file). :mod:`combex.experiments._sweep` orchestrates
the runs and writes through :class:`_Writer`; :func:`read_results` and
:func:`results_table` read any such file back.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..exceptions import InvalidParameterError, ResultsFileError

__all__ = ["read_results", "results_table", "RESULT_COLUMNS", "REGRET_COLUMNS", "BOUND_COLUMNS", "canonical_json",
           "FORMAT", "FORMAT_VERSION"]

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
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON-able")


# ---------------------------------------------------------------------- configuration


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
        import pandas as pd  # pandas is optional (the plots / sweep extras)
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
            try:  # Parquet needs pyarrow (the sweep extra) or fastparquet: optional
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
            import fcntl  # POSIX only: no lock on Windows
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
