"""Live studies: ask / tell through a storage, by many processes and people at once.

The rules are stated in the :mod:`combex.studies` module docstring; this module implements
them (:class:`_Replay` folds the logs, :class:`Study` hands out tickets and records
tells, releases and corrections).

Why one file of more than 1,000 lines: :class:`Study` is one transaction boundary -- every
ask, tell, release and correction goes through the same lock, log and replay
(:class:`_Replay`), and the crash-safety argument (a study survives kill -9 at any line)
is checked by reading them together.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import io
import json
import math
import os
import secrets
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from .._state import join_arrays, split_arrays
from .._validation import check_int, param_error
from ..exceptions import CombexWarning, InvalidParameterError, StateError
from ..exceptions import DuplicatedStudyError, StorageError, StudyFinishedError, StudyNotFoundError, TicketError
from ..solvers import Batch
from ..solvers._bisect import LEFT_MIN_PROGRESS
from ._forecast import StudyForecast, fit_log, forecast
from ._problem import (
    build_problem,
    build_solver,
    check_lease,
    check_name,
    check_reward,
    check_seed,
    problem_spec,
    solver_spec,
)
from ._sql import SQLStorage
from ._storage import (
    AssistantRow,
    BaseStorage,
    CorrectionRow,
    InMemoryStorage,
    StudyRecord,
    TicketRow,
    payload_checksum,
    row_checksum,
)

__all__ = ["Ticket", "Study", "create_study", "load_study", "delete_study", "get_all_study_names",
           "get_storage", "MAX_ASK", "DEFAULT_LEASE_SECONDS", "iso_time", "owner_stop"]

#: Most tickets one ``ask(n=...)`` hands out (a larger ``n`` is refused: one ask is one
#: short transaction holding the study's lock).
MAX_ASK = 1000
#: Default lease of a ticket: one day (an assistant may ask in the morning and enter the
#: score in the evening). A ticket past its lease is handed out again; its score is still
#: accepted when it comes (see the module docstring of :mod:`combex.studies`).
DEFAULT_LEASE_SECONDS = 24 * 3600.0
#: A pending ticket is *overdue* (held) once it has been out this many times longer than
#: the median time-to-tell of the recent evaluations (and at least
#: :data:`OVERDUE_MIN_SECONDS`), or once more than ``2 m + 2`` evaluations were told since
#: it was handed out (``m`` the number of pending tickets).
OVERDUE_FACTOR = 3.0
OVERDUE_MIN_SECONDS = 1.0
#: How many further choices of the sampling rule an eager ask looks through for an arm (a
#: team) no held ticket has, before it hands out a repeat.
DISTINCT_LOOKAHEAD = 24
#: Largest ticket id a storage holds (32-bit ids).
MAX_TICKET_ID = 2**31 - 1
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}


def iso_time(t: float | None) -> str | None:
    """A Unix time as ISO 8601 UTC text (``"2026-11-27T18:31:54Z"``); None stays None."""
    if t is None or not math.isfinite(t):
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(t)))


@dataclass(frozen=True)
class Ticket:
    """An evaluation to perform: evaluate ``arm`` (a worker index, or the sorted member
    list of a team; ``names`` are their labels) ``count`` times and ``tell`` the sum of the
    scores, best before ``lease_deadline`` (Unix time; after it the evaluation is handed
    out again, but the score is still accepted). ``batch`` and ``entry`` locate it in the
    solver's batches (batch policy; ``batch`` is -1 under the eager policy);
    ``assistant`` is who asked (None: the owner); ``age_seconds`` and ``overdue`` are set
    by :meth:`Study.pending`."""

    id: int
    arm: Any
    count: int
    lease_deadline: float
    batch: int = -1
    entry: int = 0
    names: Any = None
    issued_at: float | None = None
    assistant: str | None = None
    age_seconds: float | None = None
    overdue: bool | None = None

    @classmethod
    def _of(cls, row: TicketRow, labels: Any = None, now: float | None = None,
            overdue: bool | None = None) -> "Ticket":
        return cls(row.id, row.arm, row.count, row.lease_deadline, row.batch, row.entry, _names(labels, row.arm),
                   row.issued_at, row.asked_by, None if now is None else max(now - row.issued_at, 0.0), overdue)

    def to_dict(self) -> dict[str, Any]:
        """JSON: names and ISO 8601 UTC times, with the raw ``arm`` and the Unix
        ``lease_deadline_unix`` for scripts."""
        out = {"id": self.id, "arm": self.arm, "names": self.names, "count": self.count,
               "issued_at": iso_time(self.issued_at), "lease_deadline": iso_time(self.lease_deadline),
               "lease_deadline_unix": self.lease_deadline, "assistant": self.assistant, "batch": self.batch,
               "entry": self.entry}
        if self.age_seconds is not None:
            out["age_seconds"] = round(self.age_seconds, 3)
            out["overdue"] = self.overdue
        return out


def _names(labels: Any, arm: Any) -> Any:
    if not labels or arm is None:
        return None
    if isinstance(arm, list):
        return [labels[i] for i in arm]
    return labels[int(arm)]


def get_storage(storage: Any) -> BaseStorage:
    """A storage from a :class:`BaseStorage`, ``None`` / ``":memory:"`` (in memory), a
    SQLAlchemy URL or a file path (SQLite)."""
    if isinstance(storage, BaseStorage):
        return storage
    if storage is None or storage == ":memory:":
        return InMemoryStorage()
    if not isinstance(storage, str) and not hasattr(storage, "__fspath__"):
        raise param_error("storage", "get_storage", "a BaseStorage, None, a SQLAlchemy URL or a file path", storage)
    return SQLStorage(storage)


# ============================================================================ replay
def _pack(obj: dict[str, Any]) -> bytes:
    arrays: dict[str, np.ndarray] = {}
    doc = json.dumps(split_arrays(obj, arrays)).encode()
    buf = io.BytesIO()
    np.savez(buf, __doc__=np.frombuffer(doc, dtype=np.uint8), **arrays)
    return buf.getvalue()


def _unpack(payload: bytes) -> dict[str, Any]:
    with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    doc = json.loads(arrays.pop("__doc__").tobytes().decode())
    return join_arrays(doc, arrays)


def _to_arm(arm: Any, n: int) -> Any:
    if isinstance(arm, list):
        m = np.zeros(n, dtype=bool)
        m[arm] = True
        return m
    return int(arm)


def _from_arm(arm: Any) -> Any:
    a = np.asarray(arm)
    if a.ndim == 0:
        return int(a)
    return np.flatnonzero(a).tolist()


def owner_stop(status: Any, budget: Any, history: Any) -> dict[str, Any] | None:
    """The history entry of the owner's stop that ended a ``budget_exhausted`` study (its
    budget set to the evaluations told: ``from`` is the budget it had), or None when the
    study is running, identified, or stopped by its own budget."""
    if status != "budget_exhausted":
        return None
    last = next((h for h in reversed(history or []) if isinstance(h, dict)
                 and h.get("event") in ("budget", "stopped_by_owner")), {})
    return last if last.get("event") == "stopped_by_owner" and last.get("to") == budget else None


def _left_note(rec: Any, left: Any, src: Any = None) -> str:
    """What the estimate of the evaluations left means for this study's state and budget
    (``src``: the solver's progress or result, for its statistic and threshold)."""
    if rec.status == "identified":
        return "the stopping rule holds: no more evaluations are needed"

    z, b = (src or {}).get("statistic"), (src or {}).get("threshold")
    if (left is None and isinstance(z, (int, float)) and isinstance(b, (int, float)) and math.isfinite(z)
            and math.isfinite(b) and b > 0 and z < LEFT_MIN_PROGRESS * b):
        return (f"too early to estimate: the stopping statistic is under {LEFT_MIN_PROGRESS:.0%} of its threshold "
                "(a forecast, combex study forecast or Forecast now on the study page, simulates the rest of the "
                "study)")
    if rec.status != "running":
        return "an estimate of the evaluations a certified answer would still need (the study has stopped)"
    if isinstance(left, (int, float)) and rec.budget is not None and left > rec.budget - rec.n_told:
        return (f"more than the {rec.budget - rec.n_told} the budget leaves: the budget may end the study first, "
                "uncertified, unless the owner raises it, on the owner's page, with Study.set_budget or with combex "
                "study set-budget. A rough estimate, mostly high early on: on simulated studies of a lab of 12 "
                "workers it read 1.3 to 2.3 times the sessions actually left. The forecast, Forecast now or combex "
                "study forecast, says by how much, with its spread")
    return "an estimate of the evaluations still needed, not a promise"


def _arm_key(arm: Any) -> Any:
    return tuple(arm) if isinstance(arm, list) else int(arm)


def _js(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return _js(v.tolist())
    if isinstance(v, np.generic):
        return _js(v.item())
    if isinstance(v, dict):
        return {str(k): _js(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_js(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


class _Batches:
    """Recorded batches of a study, fetched from a transaction in chunks."""

    def __init__(self, tx: Any) -> None:
        self._tx = tx
        self._cache: dict[int, tuple[list, list]] = {}

    def __call__(self, b: int) -> tuple[list, list] | None:
        if b not in self._cache:
            self._cache.update(self._tx.batches(b, b + 255))
            self._cache.setdefault(b, None)  # type: ignore[arg-type]
        return self._cache[b]


class _Replay:
    """The exploration after the first ``seq`` told tickets, with the corrections applied
    (the rules: :mod:`combex.studies`)."""

    def __init__(self, record: StudyRecord, problem: Any, solver: Any, corrections: Any = ()) -> None:
        self.record = record
        self.problem = problem
        self.solver = solver
        self.exp = solver.start(problem, rng=np.random.default_rng(record.seed))
        self._blind_tells()
        self.seq = 0
        self.batch_no = 0
        self.buffer: dict[int, dict[int, float]] = {}
        self.diverged = False
        self.values: dict[int, float | None] = {}
        self.n_corr = 0
        self.checks: dict[int, dict[str, Any]] = {}
        self.add_corrections(corrections)
        self._after_fold()

    def _blind_tells(self) -> None:
        """A design that never looks at the scores (``random-design``) keeps its fixed-design
        threshold in a study: every ticket is a draw of the design (:meth:`Study.ask`), and the
        order in which scores come back depends on the sessions, not on the scores."""
        if getattr(self.exp, "oblivious_design", False):
            self.exp.blind_tells = True

    # ------------------------------------------------------------------ corrections
    def add_corrections(self, rows: Any) -> None:
        for c in rows:
            if not (isinstance(c.told_seq, int) and c.told_seq >= 1) or (
                    c.reward_sum is not None and not math.isfinite(c.reward_sum)):
                raise StorageError(f"Correction {c.seq} of study {self.record.name!r} is damaged (told_seq "
                                   f"{c.told_seq!r}, reward_sum {c.reward_sum!r}).")
            self.values[int(c.told_seq)] = c.reward_sum
            self.n_corr = max(self.n_corr, int(c.seq))

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> bytes:
        return _pack({"seq": self.seq, "batch_no": self.batch_no, "diverged": self.diverged, "n_corr": self.n_corr,
                      "buffer": {str(b): {str(e): v for e, v in d.items()} for b, d in self.buffer.items()},
                      "exp": self.exp.state_dict()})

    @classmethod
    def from_snapshot(cls, record: StudyRecord, problem: Any, solver: Any, payload: bytes,
                      corrections: Any = ()) -> "_Replay":
        d = _unpack(payload)
        self = cls.__new__(cls)
        self.record, self.problem, self.solver = record, problem, solver
        self.exp = solver.resume(d["exp"], problem)
        self._blind_tells()
        self.seq = int(d["seq"])
        self.batch_no = int(d["batch_no"])
        self.diverged = bool(d.get("diverged", False))
        self.buffer = {int(b): {int(e): float(v) for e, v in dd.items()} for b, dd in d["buffer"].items()}
        self.values = {}
        self.n_corr = 0
        self.checks = {}
        self.add_corrections(corrections)
        self.exp.record_trace = True
        return self

    # ------------------------------------------------------------------ folding
    def _after_fold(self) -> None:
        self.exp.record_trace = True
        if not self.exp.done:
            self.exp.ask()

    def _validate(self, r: TicketRow) -> None:
        spec = self.record.problem
        n = int(spec["n_arms"])
        where = f"told row {r.told_seq} (ticket {r.id}) of study {self.record.name!r}"
        if r.checksum != row_checksum(r.id, r.arm, r.count, r.batch, r.entry, r.told_seq, r.reward_sum):
            raise StorageError(f"The {where} is damaged: its checksum does not match its content "
                               f"(arm {r.arm!r}, count {r.count}, reward_sum {r.reward_sum!r}).")
        if spec["arm_type"] == "mask":
            ok = (isinstance(r.arm, list) and r.arm == sorted(set(r.arm)) and len(r.arm) > 0
                  and all(isinstance(i, int) and 0 <= i < n for i in r.arm))
        else:
            ok = isinstance(r.arm, int) and not isinstance(r.arm, bool) and 0 <= r.arm < n
        if not ok or not (isinstance(r.count, int) and r.count >= 1):
            raise StorageError(f"The {where} is damaged: arm {r.arm!r} / count {r.count!r} is not an evaluation "
                               "of this problem.")
        try:
            check_reward(spec, r.arm, r.count, r.reward_sum, f"the {where}")
        except TicketError as exc:
            raise StorageError(f"The {where} is damaged: {exc}") from None

    def batch(self) -> Any:
        return self.exp.ask()

    def _recorded(self, b: int, source: Callable[[int], Any] | None) -> Any:
        mine = self.exp.ask()
        if not self.diverged or source is None:
            return mine
        rec = source(b)
        if rec is None:
            return mine
        arms, counts = rec
        if len(arms) == len(mine) and [int(c) for c in counts] == mine.counts.tolist() and \
                all(_arm_key(a) == _arm_key(_from_arm(m)) for a, m in zip(arms, mine.arms)):
            return mine
        return Batch(np.array([_to_arm(a, self.problem.n_arms) for a in arms]), np.asarray(counts, dtype=np.int64))

    def _check(self, r: TicketRow, rounds: int) -> None:
        tr = self.exp._trace
        if not tr and self.exp.rounds == rounds:
            return
        out: dict[str, Any] = {}
        for k, v in tr.items():
            if v:
                x = v[-1]
                x = x.item() if isinstance(x, np.generic) else x
                if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
                    out[k] = x
        tr.clear()
        self.checks[r.id] = out

    def fold(self, rows: list[TicketRow], source: Callable[[int], Any] | None = None) -> None:
        budget = self.record.budget
        for r in rows:
            if r.told_seq != self.seq + 1:
                raise StorageError(
                    f"The told log of study {self.record.name!r} has a gap: expected told_seq "
                    f"{self.seq + 1}, found {r.told_seq}."
                )
            self._validate(r)
            self.seq = r.told_seq
            if self.exp.done:
                continue
            value = r.reward_sum
            if r.told_seq in self.values:
                value = self.values[r.told_seq]
                self.diverged = True
                if value is not None:
                    try:
                        check_reward(self.record.problem, r.arm, r.count, value, "")
                    except TicketError as exc:
                        raise StorageError(f"A correction of told row {r.told_seq} (ticket {r.id}) of study "
                                           f"{self.record.name!r} is damaged: {exc}") from None
            rounds = self.exp.rounds
            if value is not None:
                if self.record.policy == "eager":
                    self.exp.tell(_to_arm(r.arm, self.problem.n_arms), value, r.count)
                    self._after_fold()
                elif r.batch >= self.batch_no and r.entry not in self.buffer.get(r.batch, {}):
                    self.buffer.setdefault(r.batch, {})[r.entry] = float(value)
                    self._fold_complete(source)
            if budget is not None and self.seq >= budget and not self.exp.done:
                # (batch policy: the told entries of an unfinished batch stay in the log and
                # the member estimates; the solver saw the complete batches)
                self.exp.stop("budget_exhausted", f"budget of {budget} evaluations told")
            self._check(r, rounds)

    def _fold_complete(self, source: Callable[[int], Any] | None) -> None:
        while not self.exp.done:
            entries = self.buffer.get(self.batch_no)
            if not entries:
                return
            batch = self._recorded(self.batch_no, source)
            if len(entries) < len(batch):
                return
            self.exp.tell_batch(batch, np.array([entries[i] for i in range(len(batch))]))
            del self.buffer[self.batch_no]
            self.batch_no += 1
            self._after_fold()

    def filled(self, b: int, e: int) -> bool:
        """Whether batch slot ``(b, e)`` holds a (live) told value."""
        return b < self.batch_no or e in self.buffer.get(b, {})


# ============================================================================ aggregates
def _new_aggregates(spec: dict[str, Any]) -> dict[str, Any]:
    n = int(spec["n_arms"])
    if spec["arm_type"] == "mask":
        return {"kind": "mask", "n": n, "rows": 0, "obs": 0, "xtx": [[0.0] * n for _ in range(n)],
                "xty": [0.0] * n, "yty": 0.0}
    return {"kind": "index", "n": n, "rows": 0, "obs": 0, "count": [0] * n, "sum": [0.0] * n, "sumsq": [0.0] * n}


def _add_to_aggregates(agg: dict[str, Any], arm: Any, count: int, value: float, sign: int = 1) -> None:
    """Add (``sign`` +1) or remove (-1) one told ticket: ``count`` observations of ``arm``
    summing to ``value`` (weighted least squares: the ticket's mean ``value / count`` has
    variance ``sigma^2 / count``)."""
    agg["rows"] += sign
    agg["obs"] += sign * count
    if agg["kind"] == "mask":
        members = list(arm)
        for i in members:
            agg["xty"][i] += sign * value
            row = agg["xtx"][i]
            for j in members:
                row[j] += sign * count
        agg["yty"] += sign * value * value / count
    else:
        i = int(arm)
        agg["count"][i] += sign * count
        agg["sum"][i] += sign * value
        agg["sumsq"][i] += sign * value * value / count


# ============================================================================ Study
class Study:
    """A live study in a storage (make one with :func:`create_study` or
    :func:`load_study`). Safe to use from many processes at once; each keeps a cached
    exploration state and folds in the tells (and corrections) it has not seen."""

    def __init__(self, storage: BaseStorage, record: StudyRecord) -> None:
        self.storage = storage
        self.name = record.name
        self._record = record
        self.problem = build_problem(record.problem)
        self.solver = build_solver(record.solver, record.solver_params)
        self._labels_list = record.problem.get("labels")
        self._replay: _Replay | None = None
        self.clock = time.time

    def __repr__(self) -> str:
        return f"Study(name={self.name!r}, solver={self._record.solver!r}, storage={self.storage!r})"

    # ------------------------------------------------------------------ state
    def _rebuild(self, tx: Any, corrections: list | None = None) -> _Replay:
        rec = tx.study
        corrections = tx.corrections() if corrections is None else corrections
        for snap in tx.snapshots():
            if snap.told_seq > rec.n_told or snap.n_corrections > rec.n_corrections:
                continue
            if any(c.seq > snap.n_corrections and c.told_seq <= snap.told_seq for c in corrections):
                continue  # made before a correction of a row it includes
            problem = None
            try:
                if snap.checksum != payload_checksum(snap.payload):
                    problem = "its checksum does not match its content"
                else:
                    rp = _Replay.from_snapshot(rec, self.problem, self.solver, snap.payload, corrections)
                    if rp.seq != snap.told_seq:
                        problem = f"it holds {rp.seq} tells, its row says {snap.told_seq}"
                    else:
                        return rp
            except Exception as exc:  # noqa: BLE001 - any damage: fall back to the log
                problem = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"The snapshot of study {self.name!r} after {snap.told_seq} tells is damaged ({problem}); "
                          "replaying the log instead.", CombexWarning, stacklevel=4)
        return _Replay(rec, self.problem, self.solver, corrections)

    def _sync(self, tx: Any, rp: _Replay | None = None) -> _Replay:
        rec = tx.study
        rp = self._replay if rp is None else rp
        if rp is not None and (rp.seq > rec.n_told or rp.n_corr > rec.n_corrections):
            rp = None  # holds folds that were rolled back
        if rp is not None and rp.exp.done and rec.status == "running":
            rp = None  # stopped at a budget since raised (the study was continued by another handle)
        if rp is not None and rec.n_corrections > rp.n_corr:
            new = tx.corrections(rp.n_corr)
            if any(c.told_seq <= rp.seq for c in new):
                rp = None  # a correction of a row it folded: replay the corrected log
            else:
                rp.add_corrections(new)
        if rp is None:
            rp = self._rebuild(tx)
        rp.record = replace(rp.record, budget=rec.budget)
        if rp.seq < rec.n_told:
            rp.fold(tx.told_since(rp.seq), _Batches(tx))
        rp.checks.clear()
        self._replay = rp
        return rp

    def _catch_up(self) -> None:
        """Fold the logs into the cached state in a read transaction *before* locking, so
        the locked transaction only folds the few tells since."""
        try:
            with self.storage.read(self.name) as rx:
                self._sync(rx)
        except BaseException:
            self._replay = None
            raise

    def _progress(self, rp: _Replay) -> dict[str, Any]:
        try:
            p = _js(rp.exp.progress())
        except Exception as exc:  # noqa: BLE001 - a solver's progress must not stop a tell
            p = {"error": f"{type(exc).__name__}: {exc}"}
        p["evaluations"] = rp.seq
        p["leader_names"] = _names(self._labels_list, p.get("leader"))
        p["challenger_names"] = _names(self._labels_list, p.get("challenger")) if isinstance(
            p.get("challenger"), (list, int)) else None
        return p

    def _result(self, tx: Any, rp: _Replay) -> dict[str, Any]:
        res = rp.exp.result()
        result = _js(res.to_dict())
        result["evaluations"] = int(tx.study.n_told)
        result["answer_labels"] = _names(self._labels_list, result["answer"])
        for k, v in self._progress(rp).items():
            result.setdefault(k, v)
        result["stopped_at"] = iso_time(self.clock())
        return result

    def _finish_if_done(self, tx: Any, rp: _Replay) -> None:
        if rp.exp.done and tx.study.status == "running":
            result = self._result(tx, rp)
            status = rp.exp.status
            out = tx.pending()  # tickets still out: cancelled (the study needs no more scores)
            entry = {"event": "stopped", "status": status, "at": result["stopped_at"], "evaluations": tx.study.n_told,
                     "answer": result["answer"]}
            if out:
                entry["cancelled"] = [{"ticket": t.id, "asked_by": t.asked_by} for t in out]
            tx.update_study(status=status, result=result, history=list(tx.study.history) + [entry])
            tx.set_state([t.id for t in out], "cancelled")

    def _finished_error(self, rec: StudyRecord) -> StudyFinishedError:
        ans = (rec.result or {}).get("answer")
        names = (rec.result or {}).get("answer_labels")
        words = ", ".join(map(str, names)) if isinstance(names, (list, tuple)) and names else repr(ans)
        if rec.status == "budget_exhausted":
            return StudyFinishedError(
                f"Study {self.name!r} is stopped (budget_exhausted: answer {words} after {rec.n_told} "
                "evaluations); nothing more to ask or tell unless the owner sets a larger budget, which continues "
                "it (Study.set_budget, `combex study set-budget`, or Budget on the owner's page)."
            )
        return StudyFinishedError(
            f"Study {self.name!r} is {rec.status} (answer {words} after {rec.n_told} evaluations); "
            "nothing more to ask or tell."
        )

    def _check_assistant(self, tx: Any, assistant: Any, owner: str) -> str | None:
        if assistant is None:
            return None
        if not isinstance(assistant, str) or assistant not in {a.name for a in tx.assistants()}:
            raise param_error("assistant", owner, f"None (the owner) or the name of an assistant of study "
                              f"{self.name!r} (see Study.add_assistant)", assistant)
        return assistant

    @staticmethod
    def _ticket_id(ticket: Any, owner: str) -> int:
        tid = getattr(ticket, "id", ticket) if isinstance(ticket, Ticket) else ticket
        if isinstance(tid, (bool, np.bool_)) or not isinstance(tid, (int, np.integer)):
            raise TicketError(str(param_error("ticket", owner, "a Ticket or a ticket id (an int)", ticket)))
        return int(tid)

    def _locked(self, work: Callable[[Any], Any]) -> Any:
        """Run ``work(tx)`` in a locked transaction; a failure drops the cached state
        (it may hold folds that were rolled back)."""
        self._catch_up()
        try:
            with self.storage.transaction(self.name) as tx:
                return work(tx)
        except (StudyFinishedError, InvalidParameterError):
            raise  # raised before anything was folded
        except BaseException:
            self._replay = None
            raise

    # ------------------------------------------------------------------ ask
    def ask(self, n: int | None = None, *, assistant: str | None = None) -> Any:
        """Hand out evaluation tickets (one transaction).

        Parameters
        ----------
        n : int, optional
            Ask for up to ``n`` tickets at once (a list is returned); at most
            :data:`MAX_ASK` (a larger ``n`` is refused).
        assistant : str, optional
            The assistant asking (recorded on the tickets); None: the owner.

        Returns
        -------
        Ticket or None (``n`` None): None when nothing can be handed out now (batch policy:
        every evaluation of the current batch is out and none is overdue; a budget
        reached by the evaluations told plus every ticket out, overdue ones included: a
        ticket beyond the budget would be cancelled at the stop, its session lost; release
        a ticket that will not come back, :meth:`release`). With ``n``: a list of up to
        ``n`` tickets (possibly empty).

        Raises
        ------
        StudyFinishedError
            When the study has stopped (the message carries the answer).
        """
        want = 1 if n is None else check_int(n, "n", owner="Study.ask", low=1, high=MAX_ASK)

        def work(tx: Any) -> Any:
            if tx.study.status != "running":
                return tx.study
            who = self._check_assistant(tx, assistant, "Study.ask")
            rp = self._sync(tx)
            self._finish_if_done(tx, rp)
            if tx.study.status != "running":
                return tx.study
            out = self._issue(tx, rp, want, who)
            if who is not None:
                tx.touch_assistant(who, self.clock())
            return out

        out = self._locked(work)
        if isinstance(out, StudyRecord):
            self._record = out
            raise self._finished_error(out)
        return out if n is not None else (out[0] if out else None)

    def _overdue(self, tx: Any, pend: list[TicketRow], now: float) -> set[int]:
        if not pend:
            return set()
        n_told = tx.study.n_told
        recent = tx.told_since(max(n_told - 32, 0))
        spans = sorted(r.told_at - r.issued_at for r in recent if r.told_at is not None)
        typical = spans[len(spans) // 2] if len(spans) >= 3 else None
        out = set()
        for t in pend:
            if n_told - t.issued_seq > 2 * len(pend) + 2:
                out.add(t.id)
            elif typical is not None and now - t.issued_at > max(OVERDUE_FACTOR * typical, OVERDUE_MIN_SECONDS):
                out.add(t.id)
        return out

    def _distinct_proposals(self, rp: _Replay, want: int, pending_arms: list[Any], held: list[Any],
                            seed: int, n_told: int) -> list[Any]:
        """The next ``want`` arms of the sampling rule (:meth:`Exploration.propose` from the
        told counts plus the held tickets), preferring arms no pending ticket has (overdue ones
        included: an overdue ticket no longer steers the rule, yet its team may still be in
        session): a team cannot
        run two sessions at once, so when the rule's next choice is already out, the
        following choices of the same simulated sequence (up to :data:`DISTINCT_LOOKAHEAD`
        further) come first, then the rule's leader and challenger, and repeats only when
        none of these is left. The following choices are simulated with the held teams
        *avoided* (``propose(..., avoid=...)``): a rule whose next choices are teams held for
        long -- forced exploration of a team whose ticket was never told -- then takes its best
        other choices (else it would fall back on the leader and challenger, and the tracking's
        ties on the teams in their listed order, for as long as the ticket stays out)."""

        def sequence(m: int, avoid: list[Any]) -> list[Any]:
            rng = np.random.default_rng([seed, int(n_told), 0x5EED])
            return [_from_arm(a) for a in rp.exp.propose(m, pending_arms, rng, avoid=avoid)]

        taken = {_arm_key(a) for a in held}
        seq = sequence(want, [])
        keys = [_arm_key(a) for a in seq]
        if not taken.intersection(keys) and len(set(keys)) == len(keys):
            return seq
        seq = sequence(want + DISTINCT_LOOKAHEAD, [_to_arm(a, self.problem.n_arms) for a in held])
        fresh, repeats = [], []
        for a in seq:
            k = _arm_key(a)
            (repeats if k in taken else fresh).append(a)
            taken.add(k)
        if len(fresh) < want and not getattr(rp.exp, "oblivious_design", False):
            # the rule keeps to arms already out: its leader and challenger are useful too (not
            # for a design blind to the scores: they are chosen from the scores)
            prog = rp.exp.progress()
            for a in (prog.get("leader"), prog.get("challenger")):
                if a is not None and _arm_key(a) not in taken and np.ndim(a) == np.ndim(seq[0] if seq else a):
                    fresh.append(a)
                    taken.add(_arm_key(a))
        return (fresh + repeats)[:want]

    def _issue(self, tx: Any, rp: _Replay, want: int, who: str | None) -> list[Ticket]:
        now = self.clock()
        lease = float(tx.study.lease_seconds)
        n_told = tx.study.n_told
        budget = tx.study.budget
        pend = tx.pending()
        late = [t for t in pend if t.lease_deadline < now]
        if late:
            tx.set_state([t.id for t in late], "expired")
            pend = [t for t in pend if t.lease_deadline >= now]
        if tx.study.policy == "batch":  # tickets of slots already filled are extras: they hold nothing
            pend = [t for t in pend if not rp.filled(t.batch, t.entry)]
        overdue = self._overdue(tx, pend, now)
        labels = self._labels_list
        out: list[Ticket] = []

        def add(arm: Any, count: int, b: int, e: int, reissue_of: int | None = None) -> None:
            row = tx.add_ticket(arm, count, b, e, now, now + lease, reissue_of, issued_seq=n_told, asked_by=who)
            out.append(Ticket._of(row, labels))

        if tx.study.policy == "eager":
            outstanding = [t for t in pend if t.id not in overdue]
            if budget is not None:  # every ticket out counts (an overdue one may still be told)
                want = min(want, budget - n_told - len(pend))
            if want <= 0:
                return out
            pending_arms = [_to_arm(t.arm, self.problem.n_arms) for t in outstanding]
            # an overdue ticket does not steer the rule, but its team may still be in session:
            # other teams come first all the same
            for a in self._distinct_proposals(rp, want, pending_arms, [t.arm for t in pend],
                                              int(tx.study.seed), n_told):
                add(a, 1, -1, 0)  # one evaluation (one session) per ticket
            return out
        # batch policy: the missing entries of the open batches, then duplicates of overdue ones
        last = tx.last_batch()
        if rp.batch_no > last:
            batch = rp.batch()
            tx.record_batch(rp.batch_no, [_from_arm(a) for a in batch.arms], batch.counts.tolist())
            last = rp.batch_no
        held = {(t.batch, t.entry) for t in pend}
        expired_of = {(t.batch, t.entry): t.id for t in late}
        room = None if budget is None else budget - n_told - len(held)
        recorded = tx.batches(rp.batch_no, last)
        for b in range(rp.batch_no, last + 1):
            arms, counts = recorded[b]
            for e in range(len(arms)):
                if len(out) >= want or (room is not None and room <= 0):
                    return out
                if (b, e) in held or rp.filled(b, e):
                    continue
                add(arms[e], counts[e], b, e, expired_of.get((b, e)))
                if room is not None:
                    room -= 1
        if out:
            return out
        fresh = {(t.batch, t.entry) for t in pend if t.id not in overdue}
        for t in sorted(pend, key=lambda t: t.issued_at):
            if len(out) >= want:
                break
            slot = (t.batch, t.entry)
            if t.id in overdue and slot not in fresh and not rp.filled(*slot):
                add(t.arm, t.count, t.batch, t.entry, t.id)
                fresh.add(slot)
        return out

    # ------------------------------------------------------------------ tell
    def tell(self, ticket: Any, reward_sum: Any, *, assistant: str | None = None) -> str:
        """Record the reward sum (the score) of a ticket (one transaction); returns the
        study status.

        Refused (a :class:`TicketError`, nothing written): an unknown ticket, a ticket
        already told (so a retried tell is safe), a reward that is not a real number
        (``"1"`` and ``True`` are refused), not finite, outside ``count * score_range``
        (or the per-arm ``reward_range`` times count and team size), or not an integer for
        sums of {0, 1} observations. A ticket past its lease (or released) is accepted:
        its evaluation was made.
        """
        return self.tell_many([(ticket, reward_sum)], assistant=assistant)

    def tell_many(self, results: Any, *, assistant: str | None = None) -> str:
        """Tell several ``(ticket or ticket id, reward_sum)`` pairs in one transaction (all
        or nothing); returns the study status."""
        try:
            items = list(results)
        except TypeError:
            raise param_error("results", "Study.tell_many", "a list of (ticket, reward_sum) pairs", results) from None
        if not items:
            raise param_error("results", "Study.tell_many", "a non-empty list of (ticket, reward_sum) pairs", results)
        pairs = []
        for it in items:
            if not isinstance(it, (tuple, list)) or len(it) != 2:
                raise param_error("results", "Study.tell_many", "a list of (ticket, reward_sum) pairs", it)
            pairs.append((self._ticket_id(it[0], "Study.tell"), it[1]))
        return self._locked(lambda tx: self._tell_many(tx, pairs, assistant))

    def _tell_many(self, tx: Any, pairs: list[tuple[int, Any]], assistant: Any) -> str:
        if tx.study.status != "running":
            raise self._finished_error(tx.study)
        who = self._check_assistant(tx, assistant, "Study.tell")
        now = self.clock()
        checked = []
        seen: set[int] = set()
        rows = tx.get_tickets([tid for tid, _ in pairs if 1 <= tid <= MAX_TICKET_ID])
        for tid, r in pairs:
            row = rows.get(tid)
            if row is None:
                raise TicketError(f"Study {self.name!r} has no ticket {tid}.")
            if row.state == "told" or tid in seen:
                raise TicketError(f"Ticket {tid} of study {self.name!r} was already told "
                                  f"(reward_sum={row.reward_sum!r}); a second tell is refused (correct a "
                                  "mistyped score with Study.correct).")
            x = check_reward(self._record.problem, row.arm, row.count, r, f"ticket {tid}")
            seen.add(tid)
            checked.append((row, x))
        rp = self._sync(tx)
        source = _Batches(tx)
        agg = copy.deepcopy(tx.study.aggregates) or _new_aggregates(self._record.problem)
        items = []
        snap = None
        for k, (row, x) in enumerate(checked):
            seq = tx.study.n_told + 1 + k
            told = replace(row, state="told", told_seq=seq, reward_sum=x, told_at=now, told_by=who,
                           checksum=row_checksum(row.id, row.arm, row.count, row.batch, row.entry, seq, x))
            rp.fold([told], source)
            items.append((row.id, x, now, self._stat(rp, row.id), who))
            _add_to_aggregates(agg, row.arm, row.count, x)
            if seq % tx.study.snapshot_every == 0:
                snap = (seq, rp.snapshot())
        rp.checks.clear()
        tx.tell_many(items)
        if snap is not None:
            tx.save_snapshot(snap[0], snap[1], rp.n_corr)
        if who is not None:
            tx.touch_assistant(who, now, told=len(items))
        tx.update_study(aggregates=agg, progress=self._progress(rp))
        self._finish_if_done(tx, rp)
        self._record = tx.study
        return tx.study.status

    def _stat(self, rp: _Replay, ticket_id: int) -> dict[str, Any] | None:
        """The stopping statistic after the fold of ``ticket_id`` (None when the fold ran
        no stopping check)."""
        if ticket_id not in rp.checks:
            return None
        p = self._progress(rp)
        out = dict(rp.checks.pop(ticket_id))
        for k in ("statistic", "threshold", "delta_achieved"):
            if isinstance(p.get(k), (int, float)) and not isinstance(p.get(k), bool):
                out[k] = p[k]
        return out or None

    # ------------------------------------------------------------------ release, correct
    def release(self, ticket: Any, *, assistant: str | None = None) -> str:
        """Hand a pending ticket back unevaluated (one transaction); returns the study
        status. Its evaluation is handed out again at the next ask (batch policy; under
        the eager policy the rule chooses again). A ticket already told, released or
        cancelled is refused; releasing a ticket past its lease is a no-op (it was handed
        out again already)."""
        tid = self._ticket_id(ticket, "Study.release")

        def work(tx: Any) -> str:
            if tx.study.status != "running":
                raise self._finished_error(tx.study)
            who = self._check_assistant(tx, assistant, "Study.release")
            row = tx.get_ticket(tid) if 1 <= tid <= MAX_TICKET_ID else None
            if row is None:
                raise TicketError(f"Study {self.name!r} has no ticket {tid}.")
            if row.state not in ("pending", "expired"):
                raise TicketError(f"Ticket {tid} of study {self.name!r} is {row.state}; only a pending ticket can "
                                  "be released.")
            tx.set_state([tid], "released")
            if who is not None:
                tx.touch_assistant(who, self.clock())
            # who handed it back and when (the assistant who asked finds it handed back)
            tx.update_study(history=list(tx.study.history) + [{
                "event": "released", "at": iso_time(self.clock()), "evaluations": tx.study.n_told, "ticket": tid,
                "arm": row.arm, "asked_by": row.asked_by, "by": who}])
            return tx.study.status

        return self._locked(work)

    def set_budget(self, budget: Any) -> str:
        """Set the study's budget of evaluations (the owner; one transaction); returns the
        study status.

        A budget at least the evaluations told: raised, the study runs on; lowered, it stops
        once that many are told; equal to the evaluations told, it stops **now** (status
        ``"budget_exhausted"``) with the recommendation and ``delta_achieved``, whose
        guarantee holds at any stopping time (see :meth:`best`). A study stopped by its
        budget or by :meth:`stop` **continues** when given a budget above the evaluations
        told: the stopping rule's threshold holds at every time, so sessions added after a
        stop keep the guarantee; its history records the reopening. An identified study is
        final (refused). Every change is recorded in the study's history.
        """
        return self._set_budget(budget, "budget")

    def _set_budget(self, budget: Any, event: str) -> str:
        def work(tx: Any) -> str:
            rec = tx.study
            reopen = rec.status == "budget_exhausted"
            if rec.status != "running" and not reopen:
                raise self._finished_error(rec)
            b = _check_budget(budget, "Study.set_budget", max(1, rec.n_told))
            if reopen and b <= rec.n_told:
                raise InvalidParameterError(
                    f"Study {self.name!r} stopped after {rec.n_told} evaluations ({rec.status}): a budget above "
                    f"{rec.n_told} continues it. Got {b}.")
            entry = {"event": event, "at": iso_time(self.clock()), "evaluations": rec.n_told, "from": rec.budget,
                     "to": b}
            if reopen:
                entry["reopened"] = True
                entry["previous_answer"] = (rec.result or {}).get("answer")
                tx.update_study(budget=b, status="running", result=None, history=list(rec.history) + [entry])
                rp = self._sync(tx)  # the cached state stopped at the old budget: rebuilt (see _sync)
                tx.update_study(progress=self._progress(rp))
                return tx.study.status
            tx.update_study(budget=b, history=list(rec.history) + [entry])
            rp = self._sync(tx)
            if rp.seq >= b and not rp.exp.done:
                rp.exp.stop("budget_exhausted", f"budget of {b} evaluations told")
            self._finish_if_done(tx, rp)
            return tx.study.status

        return self._locked(work)

    def stop(self) -> str:
        """End the study now, on the evaluations told (the owner): the budget becomes the
        evaluations told (status ``"budget_exhausted"``; the history records the owner's
        stop); the pending tickets are cancelled. The answer is the current leader with its
        ``delta_achieved``, an error probability valid at this (data-dependent) moment. A
        larger budget later continues the study (:meth:`set_budget`). Returns the study
        status."""
        with self.storage.read(self.name) as rx:
            told = rx.study.n_told
            status = rx.study.status
        if status != "running":
            with self.storage.read(self.name) as rx:
                raise self._finished_error(rx.study)
        if told == 0:
            raise StateError(f"Study {self.name!r} has no evaluation told yet; nothing to answer with.")
        return self._set_budget(told, "stopped_by_owner")

    def correct(self, ticket: Any, reward_sum: Any, *, reason: str, assistant: str | None = None) -> str:
        """Replace a told score (``reward_sum`` a number) or void it (None), with a
        ``reason``; returns the study status.

        The told row is never edited: a correction record is appended to the log and the
        state is the replay of the corrected log (the rules, and what a correction does to
        the guarantee: :mod:`combex.studies`). A voided evaluation of a batch-policy study
        is handed out again; under the eager policy it is dropped. After the stop, the
        corrected log is replayed: if the stop still holds the study stays stopped (its
        result recomputed, the correction listed in ``result["corrected_after_stop"]``);
        if not, it returns to ``running`` and a note is added to :meth:`summary`'s
        ``history``.
        """
        tid = self._ticket_id(ticket, "Study.correct")
        if not isinstance(reason, str) or not reason.strip() or len(reason) > 2000:
            raise param_error("reason", "Study.correct", "a non-empty str (at most 2000 characters) saying why",
                              reason)
        pre = self._prebuild(tid, reward_sum)
        return self._locked(lambda tx: self._correct(tx, tid, reward_sum, reason.strip(), assistant, pre))

    def _prebuild(self, tid: int, value: Any) -> Any:
        """The replay of the log with this correction applied, built in a read transaction
        before locking (a correction of an early row replays much of the log): ``(replay,
        {ticket id: new stat}, n_corrections it assumes)``, or None (the lock will say why
        the correction is refused)."""
        with self.storage.read(self.name) as rx:
            row = rx.get_ticket(tid) if 1 <= tid <= MAX_TICKET_ID else None
            if row is None or row.state != "told":
                return None
            try:
                x = None if value is None else check_reward(self._record.problem, row.arm, row.count, value, "")
            except TicketError:
                return None
            rec = rx.study
            virtual = CorrectionRow(rec.n_corrections + 1, tid, row.told_seq, x, "", None, 0.0)
            rp = self._rebuild(rx, rx.corrections() + [virtual])
            stats = self._refold(rx, rp, row.told_seq)
        return rp, stats, rec.n_corrections

    def _refold(self, tx: Any, rp: _Replay, stats_from: int) -> dict[int, Any]:
        """Fold the told log after ``rp`` and return the new stopping statistics of the
        rows from ``stats_from`` on whose stored one differs."""
        source = _Batches(tx)
        out: dict[int, Any] = {}
        for r in tx.told_since(rp.seq):
            rp.fold([r], source)
            if r.told_seq >= stats_from:
                stat = self._stat(rp, r.id)
                if stat != r.stat:
                    out[r.id] = stat
            rp.checks.clear()
        return out

    def _correct(self, tx: Any, tid: int, value: Any, reason: str, assistant: Any, pre: Any = None) -> str:
        who = self._check_assistant(tx, assistant, "Study.correct")
        row = tx.get_ticket(tid) if 1 <= tid <= MAX_TICKET_ID else None
        if row is None:
            raise TicketError(f"Study {self.name!r} has no ticket {tid}.")
        if row.state != "told":
            raise TicketError(f"Ticket {tid} of study {self.name!r} is {row.state}, not told: only a told score can "
                              "be corrected (tell it, or release it).")
        x = None if value is None else check_reward(self._record.problem, row.arm, row.count, value, f"ticket {tid}")
        now = self.clock()
        before = row.reward_sum
        for c in tx.corrections():
            if c.told_seq == row.told_seq:
                before = c.reward_sum
        tx.add_correction(tid, row.told_seq, x, reason, who, now)
        agg = copy.deepcopy(tx.study.aggregates) or _new_aggregates(self._record.problem)
        if before is not None:
            _add_to_aggregates(agg, row.arm, row.count, before, -1)
        if x is not None:
            _add_to_aggregates(agg, row.arm, row.count, x, +1)
        # the corrected log's state: the replay built before locking when nothing else
        # changed meanwhile (plus the tells since), else rebuilt here; the stopping
        # statistics (a derived cache) rewritten from the corrected row on
        if pre is not None and pre[2] == tx.study.n_corrections - 1 and pre[0].seq <= tx.study.n_told:
            rp, stats = pre[0], dict(pre[1])
            stats.update(self._refold(tx, rp, row.told_seq))
        else:
            rp = self._rebuild(tx)
            stats = self._refold(tx, rp, row.told_seq)
        for t_id, stat in stats.items():
            tx.set_stat(t_id, stat)
        self._replay = rp
        if who is not None:
            tx.touch_assistant(who, now)
        note = {"at": iso_time(now), "ticket": tid, "told_seq": row.told_seq, "before": before, "after": x,
                "reason": reason, "assistant": who}
        status = tx.study.status
        tx.update_study(aggregates=agg, progress=self._progress(rp))
        if status == "running":
            self._finish_if_done(tx, rp)
        elif rp.exp.done:
            old = tx.study.result or {}
            result = self._result(tx, rp)
            result["stopped_at"] = old.get("stopped_at", result["stopped_at"])
            note.update(answer_before=old.get("answer"), answer_after=result["answer"])
            result["corrected_after_stop"] = list(old.get("corrected_after_stop", [])) + [note]
            tx.update_study(status=rp.exp.status, result=result, history=list(tx.study.history) + [
                {"event": "corrected_after_stop", **note}])
        else:
            tx.update_study(status="running", result=None, history=list(tx.study.history) + [
                {"event": "reopened", "previous_status": status, "previous_answer": (tx.study.result or {}).get(
                    "answer"), **note}])
        self._record = tx.study
        return tx.study.status

    # ------------------------------------------------------------------ assistants
    def add_assistant(self, name: str) -> str:
        """Add an assistant; returns their **token** (a random secret, shown once: only a
        salted scrypt hash of it is stored). They sign in with it (the web app, or
        :meth:`assistant_for_token`)."""
        name = check_name(name, "name", "Study.add_assistant")
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        digest = hashlib.scrypt(secret.encode(), salt=salt, **_SCRYPT)
        row = AssistantRow(name, key_id, salt, digest, self.clock())
        with self.storage.transaction(self.name) as tx:
            tx.add_assistant(row)
        return f"cbx_{key_id}_{secret}"

    def remove_assistant(self, name: str) -> None:
        """Remove an assistant (their token stops working; their tickets and tells keep
        their name)."""
        with self.storage.transaction(self.name) as tx:
            if not isinstance(name, str) or not tx.remove_assistant(name):
                raise param_error("name", "Study.remove_assistant", f"the name of an assistant of study "
                                  f"{self.name!r}", name)

    def assistants(self) -> list[dict[str, Any]]:
        """The assistants: ``name``, ``created_at`` and ``last_seen`` (ISO 8601 UTC),
        ``n_told`` (never their token or its hash)."""
        with self.storage.read(self.name) as rx:
            return [{"name": a.name, "created_at": iso_time(a.created_at), "last_seen": iso_time(a.last_seen),
                     "n_told": a.n_told} for a in rx.assistants()]

    def assistant_for_token(self, token: Any) -> str | None:
        """The name of the assistant whose token this is, or None (the comparison is
        constant-time; a malformed or unknown token costs the same hash)."""
        key_id, secret = "", ""
        if isinstance(token, str) and token.startswith("cbx_") and len(token) < 200:
            key_id, _, secret = token[4:].partition("_")
        with self.storage.read(self.name) as rx:
            row = rx.assistant_by_key(key_id) if key_id and secret else None
        salt = row.salt if row is not None else b"\0" * 16
        digest = hashlib.scrypt(secret.encode(), salt=salt, **_SCRYPT)
        if row is not None and hmac.compare_digest(digest, row.secret_hash):
            return row.name
        return None

    # ------------------------------------------------------------------ reading
    @property
    def status(self) -> str:
        return self.storage.get_study(self.name).status

    def _read_state(self) -> tuple[StudyRecord, dict[str, Any]]:
        """The record and the progress after its last change, in one read transaction
        (the stored progress; a replay from the snapshot plus the tail when it is
        missing)."""
        with self.storage.read(self.name) as rx:
            rec = rx.study
            prog = rec.progress
            if prog is None or prog.get("evaluations") != rec.n_told:
                prog = self._progress(self._sync(rx))
        return rec, prog

    def best(self) -> dict[str, Any]:
        """Where the study stands, in a read transaction (no lock, no replay of the log).

        Returns
        -------
        dict
            ``status``; ``leader`` (``{"arm", "names"}``: the recommendation); ``challenger``
            (the closest alternative, same shape, or None where the solver has none);
            ``statistic``, ``threshold``, ``stops_when`` (the stopping rule);
            ``delta_achieved`` (the smallest delta at which the rule would stop now, or
            None); ``evaluations_left`` (an **estimate**, or None); ``evaluations``;
            ``budget``; ``noise_check``; ``certificate`` (at the stop); ``certificate_text``
            (one paragraph in words); ``answer`` / ``labels`` (the leader's arm and names);
            ``checked_at`` (the evaluations at the check the statistic is from, for a
            solver that checks at set points; None when unknown); ``oblivious_design``
            (True when the solver draws its evaluations blind to the scores);
            ``next_check_at`` (the evaluations at which such a solver checks its rule next);
            ``budget_checks`` (a solver that checks at set points, with a budget that is not
            one: ``{"last", "next", "note"}``, the last check at or before the budget, the
            first after it, in evaluations, and a sentence; the evaluations between the last
            check and the budget cannot certify the answer; None otherwise);
            ``first_check_pending`` (True while the solver's stopping rule has not checked
            yet: its initial sessions come first; until then there is no leader: ``leader``
            is ``{"arm": None, "names": None}`` and ``answer`` None, the solver's starting
            point not being a reading of the data); a study stopped before that check has its
            recommendation as the leader, no challenger and ``delta_achieved`` 1 (nothing
            certified).
        """
        rec, prog = self._read_state()
        src = rec.result if rec.status != "running" and rec.result is not None else prog
        # the solver's figures are of the told log as it is now (a voided row is told but not a sample)
        current = src.get("evaluations", src.get("samples")) == rec.n_told
        leader = src.get("answer", src.get("leader")) if src is rec.result else prog.get("leader")
        challenger = src.get("challenger")
        out = {
            "status": rec.status,
            "leader": {"arm": leader, "names": _names(self._labels_list, leader)},
            "challenger": None if challenger is None else {"arm": challenger,
                                                          "names": _names(self._labels_list, challenger)},
            "statistic": src.get("statistic"), "threshold": src.get("threshold"),
            "stops_when": src.get("stops_when"), "delta_achieved": src.get("delta_achieved"),
            "evaluations_left": src.get("evaluations_left"),
            "evaluations_left_note": _left_note(rec, src.get("evaluations_left"), src),
            "evaluations": rec.n_told, "budget": rec.budget, "noise_check": src.get("noise_check"),
            "checked_at": src.get("checked_at") if current else None,
            "next_check_at": src.get("next_check_at") if current and rec.status == "running"
            else None,
            "oblivious_design": bool(src.get("oblivious_design")),
            "budget_checks": _budget_checks(rec, prog) if rec.status == "running" else None,
            "certificate": (rec.result or {}).get("certificate", {}) if rec.status != "running" else {},
            "answer": leader, "labels": _names(self._labels_list, leader),
        }
        unchecked = out["statistic"] is None and str(out["stops_when"] or "").startswith("statistic")
        out["first_check_pending"] = bool(rec.status == "running" and unchecked)
        if out["first_check_pending"]:  # the solver's starting point is not a reading of the data: no leader yet
            out["leader"] = {"arm": None, "names": None}
            out["answer"] = out["labels"] = None
        elif unchecked and rec.status != "running":
            # stopped before the rule's first check: it certified nothing (an error probability of
            # 1, the anytime-valid reading of no test) and checked against no alternative
            out["challenger"] = None
            if out["delta_achieved"] is None:
                out["delta_achieved"] = 1.0
        out["certificate_text"] = self._certificate_text(rec, out)
        return _js(out)

    def _certificate_text(self, rec: StudyRecord, b: dict[str, Any]) -> str:
        who = b["leader"]["names"] or b["leader"]["arm"]
        what = ("team " + ", ".join(map(str, who))) if isinstance(who, list) else f"arm {who}"
        params = rec.solver_params
        delta = params.get("delta", params.get("nu"))
        eps = params.get("epsilon", 0) or 0
        good = (f"within {eps:g} of the best" if eps else "the best") if delta is not None else "the best"
        conf = f"with probability at least {1 - float(delta):.0%} (delta = {float(delta):g}) " if delta else ""
        stat = ""
        if isinstance(b["statistic"], (int, float)) and isinstance(b["threshold"], (int, float)):
            at = b.get("checked_at")
            rule = f"the study stops when {b['stops_when'] or 'the rule holds'}"
            if isinstance(at, int) and at < rec.n_told:
                stat = (f" At the rule's last check, after {_evaluations(at)} (it checks at set points, not after "
                        f"every score), the stopping statistic was {b['statistic']:.4g} against the threshold "
                        f"{b['threshold']:.4g}; {rule}.")
            else:
                stat = (f" The stopping statistic is {b['statistic']:.4g} against the threshold "
                        f"{b['threshold']:.4g} ({rule}).")
        da = ""
        if isinstance(b["delta_achieved"], (int, float)) and b["delta_achieved"] >= 1:
            da = (" On the data so far nothing is certified: no error probability below 1 can be claimed for the "
                  "leader (delta_achieved = 1).")
        elif isinstance(b["delta_achieved"], (int, float)):
            da = (f" On the data so far, the leader would be certified at delta = {b['delta_achieved']:.3g} "
                  "(anytime-valid).")
        left = ""
        if isinstance(b["evaluations_left"], (int, float)):
            left = f" About {b['evaluations_left']:.0f} more evaluations may be needed: {b['evaluations_left_note']}."
        budget = f" The budget is {rec.budget} evaluations." if rec.budget else ""
        if b.get("budget_checks"):
            budget += " " + b["budget_checks"]["note"]
        if rec.n_told == 0 and rec.status == "running":
            when = (f"its stopping rule's first check, after {_evaluations(b['next_check_at'])}"
                    if isinstance(b.get("next_check_at"), int) else "the first scores")
            return f"No evaluation told yet: the study has a leader after {when}.{budget}"
        if b.get("first_check_pending"):
            if isinstance(b.get("next_check_at"), int):
                return (f"After {_evaluations(rec.n_told)} the {rec.solver} rule has not checked yet: its first check "
                        f"comes after {_evaluations(b['next_check_at'])}; from then on the study has a leader and runs "
                        f"until the rule certifies a choice {conf.strip() or 'at its delta'}.{budget}")
            return (f"After {_evaluations(rec.n_told)} the {rec.solver} rule has not checked yet: the solver's initial "
                    f"sessions come first, then the study has a leader and runs until the rule certifies a choice "
                    f"{conf.strip() or 'at its delta'}.{budget}")
        if rec.status == "identified":
            return (f"After {rec.n_told} evaluations the study identified the {what}: {conf}it is {good} "
                    f"({rec.solver}).{stat}")
        if rec.status == "budget_exhausted":
            why = (f"The owner stopped the study after {rec.n_told} evaluations, before the stopping rule held"
                   if owner_stop(rec.status, rec.budget, rec.history) is not None else
                   f"The budget of {rec.budget} evaluations ran out before the stopping rule held")
            plan = ""
            if isinstance(b["delta_achieved"], (int, float)) and b["delta_achieved"] >= 1:
                plan = (f" What speaks for the leader then is the plan's error at a fixed budget: how often, in "
                        f"studies simulated under your assumptions, the leader after {rec.n_told} evaluations was not "
                        f"{good} (combex plan ... --budget {rec.n_told}).")
            return (f"{why}; the recommended {what} is the leader of the data, not certified at the study's delta."
                    f"{da}{plan}{stat}{left} A larger budget continues the study (how much larger: combex study "
                    f"forecast ... --name {rec.name}, or Forecast now on the study page).")
        if rec.status != "running":
            return f"The study stopped ({rec.status}) after {rec.n_told} evaluations; the recommendation is the {what}."
        return (f"After {_evaluations(rec.n_told)} the leader is the {what}; the study runs until the {rec.solver} "
                f"rule certifies a choice {conf.strip() or 'at its delta'}.{stat}{da}{left}{budget}")

    def exploration_state(self) -> _Replay:
        """The exploration rebuilt from the logs (snapshot plus tail, in a read
        transaction; read-only use)."""
        with self.storage.read(self.name) as rx:
            rp = self._sync(rx)
        return rp

    def pending(self) -> list[Ticket]:
        """The pending tickets (read transaction): who asked (``assistant``), when
        (``issued_at``), ``age_seconds``, ``lease_deadline``, and whether it is
        ``overdue`` (held much longer than evaluations take: see :data:`OVERDUE_FACTOR`)."""
        now = self.clock()
        with self.storage.read(self.name) as rx:
            rows = rx.pending()
            overdue = self._overdue(rx, rows, now)
        return [Ticket._of(r, self._labels_list, now, r.id in overdue) for r in rows]

    def summary(self) -> dict[str, Any]:
        """Status, counts of tickets by state, budget, evaluations told (``voided``: how many
        of them a correction voided; they count against the budget, as sessions run, but not
        in the statistics), corrections, assistants, the result and the history of the study
        (JSON; one read transaction)."""
        with self.storage.read(self.name) as rx:
            rec = rx.study
            counts = rx.state_counts()
            n_asst = len(rx.assistants())
            last: dict[int, Any] = {}
            for c in (rx.corrections() if rec.n_corrections else ()):
                last[c.told_seq] = c.reward_sum
        return {"name": rec.name, "status": rec.status, "solver": rec.solver, "solver_params": rec.solver_params,
                "seed": rec.seed, "policy": rec.policy, "n_arms": rec.problem["n_arms"],
                "labels": rec.problem.get("labels"), "created_at": iso_time(rec.created_at),
                "lease_seconds": rec.lease_seconds, "budget": rec.budget, "tickets": counts,
                "evaluations": rec.n_told, "voided": sum(v is None for v in last.values()),
                "corrections": rec.n_corrections, "assistants": n_asst, "result": rec.result, "history": rec.history}

    def events(self) -> list[dict[str, Any]]:
        """The study's history in words, oldest first: ``at`` (ISO 8601 UTC, None when not
        recorded), ``event`` (its kind), ``evaluations`` (told at the time) and ``text`` (a
        sentence: budget changes, the owner's stop, each stop with its answer, a continuation,
        a correction after a stop, a ticket handed back without a score). The raw entries are ``summary()["history"]``."""
        with self.storage.read(self.name) as rx:
            hist = list(rx.study.history or [])
        out: list[dict[str, Any]] = []
        prev: dict[str, Any] = {}
        for h in hist:
            if (prev.get("event") == "stopped_by_owner" and h.get("event") == "stopped"
                    and h.get("evaluations") == prev.get("evaluations")):  # the owner's stop and its answer: one line
                h = {**prev, "answer": h.get("answer"), **({"cancelled": h["cancelled"]} if "cancelled" in h else {})}
                out.pop()
            prev = h
            out.append({"at": h.get("at"), "event": h.get("event"), "evaluations": h.get("evaluations"),
                        "text": event_text(h, self._labels_list)})
        return out

    def history(self, max_points: int = 400) -> list[dict[str, Any]]:
        """The stopping statistic and threshold over the told evaluations (the stored
        ``stat`` of each told row that ran a stopping check; a batch-policy study checks
        only when a batch completes, so the other rows have none). At most about
        ``max_points`` rows, evenly spread over the log (read transaction; the cost does
        not grow with the log)."""
        max_points = check_int(max_points, "max_points", owner="Study.history", low=2, high=100_000)
        with self.storage.read(self.name) as rx:
            n = rx.study.n_told
            seqs = list(range(1, n + 1)) if n <= max_points else sorted(
                {1 + int(i * (n - 1) / (max_points - 1)) for i in range(max_points)})
            rows = rx.told_at(seqs)
        return [{"evaluation": r.told_seq, "told_at": iso_time(r.told_at), **r.stat} for r in rows if r.stat]

    def member_estimates(self, level: float = 0.95) -> list[dict[str, Any]]:
        """Per base arm (worker): ``name``, ``n`` (observations of it), ``estimate``,
        ``low``, ``high``.

        Team (mask) studies: the least-squares fit of the told log under the additive
        model (a team's expected score is the sum of its members' contributions; each
        ticket's mean score weighted by its count), from aggregates kept in the storage
        (the cost does not grow with the log). Index studies: per-arm means.

        The intervals are **pointwise** ``level`` confidence intervals for each member's
        contribution: ``estimate +- q * se`` with ``se`` from the declared noise scale when
        the problem has one (``q`` the normal quantile), else from the residual variance
        of the fit (``q`` Student's t with the residual degrees of freedom). They treat the
        design as fixed: an approximation when the teams were chosen adaptively from the
        scores, exact given the draws (Gaussian noise) for a solver whose design is blind to
        them (``best()["oblivious_design"]``, e.g. ``random-design``); they are neither
        simultaneous over the members nor anytime-valid: the
        stopping rule, not these intervals, carries the study's guarantee. A member whose
        contribution the teams told so far cannot separate (the design does not identify
        it) gets ``estimate`` from the minimum-norm solution, no interval (None) and
        ``estimable`` False (team studies; True when the told teams determine it: a
        property of the design, not a certificate; the study's answer is certified by
        its stopping rule, ``best()``).
        """
        from scipy import stats  # scipy.stats is slow to import (~0.3 s): combex --help stays light

        level = float(level)
        if not 0.0 < level < 1.0:
            raise param_error("level", "Study.member_estimates", "a float in (0, 1)", level)
        with self.storage.read(self.name) as rx:
            rec = rx.study
        f = self._fit_now(rec)
        out = []
        if f.kind == "mask":
            q = float(stats.norm.ppf(0.5 + level / 2)) if f.known else (
                float(stats.t.ppf(0.5 + level / 2, f.dof)) if f.dof >= 1 else math.nan)
            for i in range(f.n):
                est = float(f.theta[i]) if f.counts[i] > 0 else None
                lo = hi = None
                if f.identified[i] and math.isfinite(f.s2) and math.isfinite(q):
                    half = q * math.sqrt(max(f.s2 * f.cov[i, i], 0.0))
                    lo, hi = est - half, est + half
                out.append({"arm": i, "name": f.labels[i], "n": int(f.counts[i]), "estimate": est, "low": lo,
                            "high": hi, "estimable": bool(f.identified[i])})
            return out
        q = float(stats.norm.ppf(0.5 + level / 2)) if f.known else (
            float(stats.t.ppf(0.5 + level / 2, f.dof)) if f.dof >= 1 else math.nan)
        for i in range(f.n):
            seen = f.counts[i] > 0
            est = float(f.theta[i]) if seen else None
            lo = hi = None
            if seen and math.isfinite(f.s2) and math.isfinite(q):
                half = q * math.sqrt(f.s2 * f.cov[i, i])
                lo, hi = est - half, est + half
            out.append({"arm": i, "name": f.labels[i], "n": int(f.counts[i]), "estimate": est, "low": lo, "high": hi})
        return out

    def noise_level(self) -> dict[str, Any]:
        """The noise of one evaluation (a session's score) as the study uses it: ``sd``
        (declared, or the residual standard deviation of the least-squares fit of
        :meth:`member_estimates`; None while the told evaluations leave no degree of freedom
        for it), ``dof`` (its degrees of freedom; None when declared) and ``declared``. What
        :func:`~combex.studies.plan` takes as ``noise_sd`` to plan a similar study (read
        transaction)."""
        with self.storage.read(self.name) as rx:
            rec = rx.study
        f = self._fit_now(rec)
        sd = math.sqrt(f.s2) if math.isfinite(f.s2) else None
        return {"sd": sd, "dof": None if f.known else int(f.dof) if sd is not None else None, "declared": f.known}

    def _fit_now(self, rec: StudyRecord) -> Any:
        """The least-squares fit of the told log of ``rec`` (:func:`fit_log`)."""
        return fit_log(rec.problem, rec.aggregates or _new_aggregates(rec.problem))

    def forecast(self, *, runs: int = 20, more: int | None = None, rng: Any = 0) -> StudyForecast:
        """How many more evaluations the study may need, and how likely its budget is to be
        enough: its exploration continued in ``runs`` simulated continuations, each under a
        truth drawn around the current estimates (Notes; a read transaction, then simulation
        only: the study is not changed). Where :func:`~combex.studies.plan` simulates a
        study before it starts under qualities the lab assumes, the forecast simulates the
        rest of a study under the qualities its scores estimate, with their uncertainty: the
        interim *predictive* analysis of adaptive trials.

        Parameters
        ----------
        runs : int, default 20
        more : int, optional
            Evaluations more a continuation may take (default: the largest of 1,000, twice
            the evaluations told, twice what the budget leaves).
        rng : int, default 0
            Root seed (the same seed on the same told log gives the same forecast).

        Returns
        -------
        StudyForecast
            ``print(f)`` in words; ``f.summary()`` the figures; ``f.to_dict()`` everything.

        Raises
        ------
        StudyFinishedError
            When the study has identified its answer (nothing is left to forecast).
        StateError
            Before the told scores determine every worker's contribution (the first round
            of sessions), without a degree of freedom left to estimate the noise level, or
            for a noise kind without a forecast (Gaussian scores and Bernoulli answers of
            one arm per session have one).

        Notes
        -----
        The draws (the posterior of the study's model under a flat prior):

        - **Gaussian noise** (teams, or one worker per session): with ``theta_hat`` the
          least-squares estimates of the workers' contributions (:meth:`Study.member_estimates`),
          ``C = (X'X)^{-1}`` (teams; ``diag(1 / n_i)`` per arm) and, when the noise level is
          estimated, ``s^2`` the residual variance on ``nu`` degrees of freedom: ``sigma^2 = nu
          s^2 / chi^2_nu`` and ``theta ~ N(theta_hat, sigma^2 C)``; with the noise level declared,
          ``sigma^2`` is the declared one. A session of ``count`` observations of a team ``x``
          scores ``count x.theta + sqrt(count) sigma Z``.
        - **Bernoulli answers** (one arm per session): ``p_i ~ Beta(1 + s_i, 1 + n_i - s_i)``;
          ``count`` answers of arm ``i`` sum to ``Binomial(count, p_i)``.

        An answer is *good* under a draw when its value is within the solver's epsilon of the best
        answer's (the decision class's oracle at the drawn contributions).

        What a forecast is not: a guarantee. It assumes the study's model (the additive team score,
        the noise kind) and sessions told one at a time in the order the solver asks (the
        assistants' concurrent tickets make a study need a few more); the tickets out now are
        neither counted nor lost (their scores will come, counted among the evaluations more). Its
        figures move with the estimates, as the study's own estimate of the evaluations left does,
        but each comes with its spread over the continuations. Only the stopping rule's certificate
        carries the study's delta.
        """
        return forecast(self, runs=runs, more=more, rng=rng)

    def trials_dataframe(self) -> Any:
        """Every ticket as a row (pandas; reads the whole log): id, arm, names, count,
        state, batch, entry, asked_by, told_by (an assistant's name; None for the owner, and
        ``told_by`` None too while a ticket is not told: ``state`` tells them apart),
        issued_at, lease_deadline, told_at (ISO 8601 UTC text), told_seq (an integer, missing
        while not told), reward_sum (as told), reward_sum_corrected (after the corrections;
        None when voided), corrected, voided (True when the last correction voided the
        session: it counts against the budget, not in the statistics), and of the last
        correction of a row its
        correction_reason, corrected_by (None for the owner) and corrected_at; reissue_of,
        and the Unix times (``*_unix``). batch / entry place a ticket in a batch-policy
        study's batch (-1 / 0 under the eager policy); arm is the list of the team's member
        indices (the order of the workers), names the same by name."""
        import pandas as pd  # pandas is optional (the studies extra)

        rows = self.storage.tickets(self.name)
        with self.storage.read(self.name) as rx:
            last = {c.told_seq: c for c in rx.corrections()}  # the last correction of each told row
        labels = self._labels_list
        cols = ["id", "arm", "names", "count", "state", "batch", "entry", "asked_by", "told_by", "issued_at",
                "lease_deadline", "told_at", "told_seq", "reward_sum", "reward_sum_corrected", "corrected",
                "voided", "correction_reason", "corrected_by", "corrected_at", "reissue_of", "issued_at_unix",
                "lease_deadline_unix", "told_at_unix"]
        recs = []
        for r in rows:
            fixed = r.told_seq in last
            recs.append({"id": r.id, "arm": r.arm, "names": _names(labels, r.arm), "count": r.count,
                         "state": r.state, "batch": r.batch, "entry": r.entry, "asked_by": r.asked_by,
                         "told_by": r.told_by, "issued_at": iso_time(r.issued_at),
                         "lease_deadline": iso_time(r.lease_deadline), "told_at": iso_time(r.told_at),
                         "told_seq": r.told_seq, "reward_sum": r.reward_sum,
                         "reward_sum_corrected": last[r.told_seq].reward_sum if fixed else r.reward_sum,
                         "corrected": fixed, "voided": fixed and last[r.told_seq].reward_sum is None,
                         "correction_reason": last[r.told_seq].reason if fixed else None,
                         "corrected_by": last[r.told_seq].assistant if fixed else None,
                         "corrected_at": iso_time(last[r.told_seq].created_at) if fixed else None,
                         "reissue_of": r.reissue_of, "issued_at_unix": r.issued_at,
                         "lease_deadline_unix": r.lease_deadline, "told_at_unix": r.told_at})
        df = pd.DataFrame(recs, columns=cols)
        df["told_seq"] = df["told_seq"].astype("Int64")  # 1, 2, ... (missing while not told)
        return df


#: The largest budget a storage keeps (its integer columns are 64-bit).
MAX_BUDGET = 2**62


def _check_budget(budget: Any, owner: str, low: int) -> int:
    """A budget of evaluations: a whole number (not a bool) of at least ``low``."""
    if isinstance(budget, (bool, np.bool_)) or not isinstance(budget, (int, np.integer)) or not (
            low <= int(budget) <= MAX_BUDGET):
        big = not isinstance(budget, (bool, np.bool_)) and isinstance(budget, (int, np.integer)) and budget > low
        raise param_error("budget", owner, f"a whole number of evaluations, at least {low}"
                          + (" and at most 2**62" if big else ""), budget)
    return int(budget)


def _cancelled_words(cancelled: list[dict[str, Any]]) -> str:
    """" The 2 tickets still out (#29 of Ravi, #30 of Sol) were cancelled." (or "")."""
    if not cancelled:
        return ""
    which = ", ".join(f"#{c.get('ticket')}" + (f" of {c['asked_by']}" if c.get("asked_by") else "") for c in cancelled)
    if len(cancelled) == 1:
        return f" The ticket still out ({which}) was cancelled."
    return f" The {len(cancelled)} tickets still out ({which}) were cancelled."


def _budget_checks(rec: StudyRecord, prog: dict[str, Any]) -> dict[str, Any] | None:
    """For a solver checking its rule at set points (``check_schedule`` in its progress) and
    a budget between two of them: the last check at or before the budget and the first after
    it, in evaluations (the checks are at sample counts; voided evaluations count against
    the budget, not as samples), and a sentence saying what the evaluations between cost."""
    sched = prog.get("check_schedule")
    if not rec.budget or not isinstance(sched, list) or not isinstance(prog.get("samples"), int):
        return None
    from ..solvers.optimal_linear import fixed_design_checks  # the studies load their solvers on use

    voided = max(int(rec.n_told) - int(prog["samples"]), 0)
    room = int(rec.budget) - voided  # the samples the budget leaves room for
    checks = fixed_design_checks(float(sched[0]), max(room, 1) * 2 + int(sched[0]) * 2)
    before = [c for c in checks if c <= room]
    after = [c for c in checks if c > room]
    if not after or (before and before[-1] == room):
        return None
    last = before[-1] + voided if before else None
    nxt = after[0] + voided
    if last is None:
        note = (f"This solver checks its stopping rule at set points, the first after {_evaluations(nxt)}: a budget "
                f"of {rec.budget} ends the study before any check, so it cannot certify an answer; a budget of "
                f"{nxt} reaches the first check.")
    else:
        note = (f"This solver checks its stopping rule at set points: the last before the budget of {rec.budget} is "
                f"after {_evaluations(last)}, the next after {nxt}; evaluations {last + 1} to {rec.budget} cannot "
                f"certify the answer, so a budget of {last} or {nxt} spends none in vain.")
    return {"last": last, "next": nxt, "note": note}


def _evaluations(n: int) -> str:
    return f"{n} evaluation" if n == 1 else f"{n} evaluations"


def _answer_words(labels: Any, arm: Any) -> str:
    names = _names(labels, arm)
    who = names if names is not None else arm
    return ", ".join(map(str, who)) if isinstance(who, list) else str(who)


def event_text(event: dict[str, Any], labels: Any = None) -> str:
    """One entry of a study's history (``Study.summary()["history"]``) in a sentence: budget
    changes, the owner's stop, a stop and its answer, a continuation, a correction after
    the stop. ``labels`` names the arms (the study's labels)."""
    kind = event.get("event")
    n = event.get("evaluations")
    after = f" after {_evaluations(int(n))}" if isinstance(n, int) else ""
    status = str(event.get("status") or event.get("previous_status") or "").replace("_", " ")
    if kind == "budget" and event.get("reopened"):
        prev = event.get("previous_answer")
        then = f" (its answer then: {_answer_words(labels, prev)})" if prev is not None else ""
        return (f"The owner continued the stopped study with a budget of {event.get('to')} evaluations{after}"
                f"{then}.")
    if kind == "budget":
        old = event.get("from")
        old = "none" if old is None else f"{old}"
        stop = "; the study stops at its budget now" if isinstance(n, int) and event.get("to") == n else ""
        return f"The owner changed the budget from {old} to {event.get('to')} evaluations{after}{stop}."
    out = _cancelled_words(event.get("cancelled") or [])
    if kind == "stopped_by_owner":
        answer = ("" if event.get("answer") is None else
                  f"; answer (not certified): {_answer_words(labels, event['answer'])}")
        return f"The owner stopped the study{after}{answer}.{out}"
    if kind == "stopped":
        answer = _answer_words(labels, event.get("answer"))
        if event.get("status") == "identified":
            return f"The stopping rule held{after}: the study identified {answer}.{out}"
        if event.get("status") == "budget_exhausted":
            return (f"The study stopped at its budget{after}, before its rule held; answer (not certified): "
                    f"{answer}.{out}")
        return f"The study stopped ({status}){after}; answer: {answer}.{out}"
    if kind in ("corrected_after_stop", "reopened") and "ticket" in event:
        before, value = event.get("before"), event.get("after")
        change = (f"ticket #{event['ticket']}'s score {'voided' if value is None else f'corrected to {value:g}'}"
                  f"{'' if before is None else f' (was {before:g})'}")
        who = event.get("assistant") or "the owner"
        why = f": {event['reason']}" if event.get("reason") else ""
        if kind == "reopened":
            return f"After the stop ({status}), {who} had {change}{why}; the stop no longer holds and the study runs again."
        moved = ""
        if event.get("answer_before") is not None and event.get("answer_before") != event.get("answer_after"):
            moved = (f"; the answer changed from {_answer_words(labels, event['answer_before'])} to "
                     f"{_answer_words(labels, event.get('answer_after'))}")
        return f"After the stop, {who} had {change}{why}; the stop still holds{moved}."
    if kind == "released":
        team = _answer_words(labels, event.get("arm")) if event.get("arm") is not None else "its team"
        asked, by = event.get("asked_by"), event.get("by")
        if by is not None and by == asked:
            return f"{by} handed back ticket #{event.get('ticket')} ({team}) without a score{after}."
        whose = f", asked by {asked}," if asked is not None else ""
        return f"{by or 'The owner'} released ticket #{event.get('ticket')} ({team}){whose} without a score{after}."
    if kind == "upgraded":
        return f"The storage was upgraded from schema {event.get('from_schema')}."
    return "; ".join(f"{k}: {v}" for k, v in event.items())


# ============================================================================ module functions
def create_study(
    *,
    storage: Any = None,
    name: str,
    problem: Any,
    solver: Any,
    solver_params: dict | None = None,
    seed: int = 0,
    budget: int | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    snapshot_every: int = 1000,
    load_if_exists: bool = False,
) -> Study:
    """Create a study (optuna's naming).

    Parameters
    ----------
    storage : BaseStorage, str or path-like, optional
        A file path (SQLite), a SQLAlchemy URL (``postgresql+psycopg://...``), or None
        (in memory).
    name : str
        At most 255 printable characters.
    problem : dict, Problem or environment
        The problem spec (:func:`problem_spec`); a Problem is converted (its decision
        class stored by registered name and parameters).
    solver : str or Solver
        Registered name (with ``solver_params``) or an instance with JSON settings.
    seed : int
        Root seed of the solver's randomness.
    budget : int, optional
        The study stops (status ``"budget_exhausted"``, with the recommendation and what
        the solver reports of its confidence, e.g. ``delta_achieved``) when this many
        evaluations are told; no ticket is handed out beyond it.
    lease_seconds : float, default one day
        How long a ticket may stay pending before it is handed out again (see
        :data:`DEFAULT_LEASE_SECONDS`; a score told after the lease is still accepted).
    snapshot_every : int
        Store the exploration state every this many tells.
    load_if_exists : bool
        Return the existing study when one of that name has the same settings (a study
        of that name with other settings is always refused).

    Raises
    ------
    DuplicatedStudyError
        When the name is taken (with other settings, or ``load_if_exists=False``).
    StorageError
        When the storage cannot be reached.
    """
    name = check_name(name, "name", "create_study")
    spec = problem if isinstance(problem, dict) and "n_arms" in problem and "noise" in problem else None
    if spec is not None:
        known = {"n_arms", "noise", "arm_type", "decision_class", "reward_range", "score_range", "labels"}
        if set(spec) - known:
            raise param_error("problem", "create_study", f"a problem spec dict with keys among {sorted(known)} "
                              f"(unknown: {sorted(set(spec) - known)})", problem)
        spec = problem_spec(**spec)
    else:
        spec = problem_spec(problem)
    sname, sparams = solver_spec(solver, solver_params)
    solver_obj = build_solver(sname, sparams)
    prob = build_problem(spec)
    if budget is not None:
        budget = _check_budget(budget, "create_study", 1)
    solver_obj.start(prob, rng=0)  # the settings fit the problem (raises otherwise)
    record = StudyRecord(
        name=name, problem=spec, solver=sname, solver_params=sparams, seed=check_seed(seed),
        lease_seconds=check_lease(lease_seconds),
        snapshot_every=check_int(snapshot_every, "snapshot_every", owner="create_study", low=1, high=2**31 - 1),
        policy="eager" if getattr(solver_obj, "eager_tells", False) else "batch", created_at=time.time(),
        budget=budget, aggregates=_new_aggregates(spec),
    )
    st = get_storage(storage)
    study = Study(st, record)
    rp = _Replay(record, study.problem, study.solver)
    record = replace(record, progress=study._progress(rp))
    try:
        st.create_study(record)
    except DuplicatedStudyError:
        old = st.get_study(name)
        diff = sorted(k for k in record.settings() if record.settings()[k] != old.settings()[k])
        if diff == ["budget"] and any(h.get("event") == "budget" for h in old.history):
            diff = []  # the owner changed the budget since (Study.set_budget): the stored one holds
        if diff:
            raise DuplicatedStudyError(
                f"A study named {name!r} already exists in {st!r} with other settings ({', '.join(diff)} "
                "differ); choose another name or delete it."
            ) from None
        if not load_if_exists:
            raise DuplicatedStudyError(
                f"A study named {name!r} already exists in {st!r}; pass load_if_exists=True to load it."
            ) from None
        return Study(st, old)
    return Study(st, st.get_study(name))


def load_study(*, storage: Any, name: str) -> Study:
    """Open an existing study (:class:`StudyNotFoundError` when absent; a SQLite file that
    does not exist is not created)."""
    if isinstance(storage, str) or hasattr(storage, "__fspath__"):
        text = os.fspath(storage)
        path = text[len("sqlite:///"):] if text.startswith("sqlite:///") else (None if "://" in text else text)
        if path and path != ":memory:" and not os.path.exists(path):
            raise StudyNotFoundError(f"No study named {name!r}: the storage file {path!r} does not exist.")
    st = get_storage(storage)
    return Study(st, st.get_study(name))


def delete_study(*, storage: Any, name: str) -> None:
    """Remove a study with its logs, assistants and snapshots."""
    get_storage(storage).delete_study(name)


def get_all_study_names(storage: Any) -> list[str]:
    """Names of the studies in a storage."""
    return [r.name for r in get_storage(storage).list_studies()]
