"""The storage contract of live studies, and the in-memory backend.

A storage holds several studies by name. A study is one row of settings (problem spec,
solver name and settings, root seed, status, final result) plus an append-only log of
*tickets* (evaluations): each is issued ``pending`` with a lease deadline, then becomes
``told`` (with its reward sum and a told sequence number 1, 2, ... without gaps),
``expired`` (its lease ran out and it was handed out again under a new id) or
``cancelled`` (still pending when the study stopped). Told rows are never changed again.
Snapshots (serialized exploration states keyed by the told sequence number they include)
are a cache: the told log alone is the truth.

Every change goes through :meth:`BaseStorage.transaction`, which locks the study (an
immediate transaction in SQLite, ``SELECT ... FOR UPDATE`` of the study row in
PostgreSQL, a mutex in memory) and commits everything or nothing.

:func:`combex.studies.testing.check_storage` checks a backend against this contract.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, Iterator

from ._errors import DuplicatedStudyError, StudyNotFoundError

__all__ = ["SCHEMA_VERSION", "StudyRecord", "TicketRow", "BaseStorage", "StudyTransaction", "InMemoryStorage"]

#: Version of the storage schema written by this combex (a newer one is refused).
SCHEMA_VERSION = 1

TICKET_STATES = ("pending", "told", "expired", "cancelled")


@dataclass(frozen=True)
class StudyRecord:
    """The settings row of one study (JSON-able fields only; never pickled objects).

    Attributes
    ----------
    name : str
    problem : dict
        The problem spec (see :func:`combex.studies.problem_spec`).
    solver : str
        Registered solver name (:func:`combex.solvers.get_solver`).
    solver_params : dict
        The solver's settings (JSON values).
    seed : int
        Root seed of the solver's randomness.
    lease_seconds : float
        How long a worker may hold a ticket before it is handed out again.
    snapshot_every : int
        A snapshot of the exploration is stored every this many tells.
    policy : {"batch", "eager"}
        How tells reach the solver (see :class:`combex.studies.Study`).
    status : str
        ``"running"``, ``"identified"`` (or another final status of the solver).
    result : dict or None
        At the stop: answer, certificate, samples, evaluations used...
    n_told : int
        Number of told tickets (the last told sequence number).
    created_at : float
        Unix time.
    """

    name: str
    problem: dict
    solver: str
    solver_params: dict
    seed: int
    lease_seconds: float
    snapshot_every: int
    policy: str
    status: str = "running"
    result: dict | None = None
    n_told: int = 0
    created_at: float = 0.0

    def settings(self) -> dict[str, Any]:
        """What makes two studies of the same name the same study."""
        return {"problem": self.problem, "solver": self.solver, "solver_params": self.solver_params,
                "seed": self.seed, "policy": self.policy}


@dataclass(frozen=True)
class TicketRow:
    """One evaluation of the log.

    ``arm`` is an int (index arms) or the sorted member list (super-arms); ``batch`` and
    ``entry`` locate the ticket in the solver's batch (batch policy); ``told_seq`` is the
    told order (1, 2, ...) and ``stat`` the stopping statistic computed after this tell.
    """

    id: int
    study: str
    arm: Any
    count: int
    batch: int
    entry: int
    state: str
    issued_at: float
    lease_deadline: float
    told_seq: int | None = None
    reward_sum: float | None = None
    told_at: float | None = None
    stat: dict | None = None
    reissue_of: int | None = None


class StudyTransaction(ABC):
    """Operations on one locked study; all committed together at the end of the
    ``with storage.transaction(name)`` block, or none if it raises."""

    study: StudyRecord

    @abstractmethod
    def told_since(self, seq: int) -> list[TicketRow]:
        """Told tickets with ``told_seq > seq``, in told order."""

    @abstractmethod
    def pending(self) -> list[TicketRow]:
        """Pending tickets, by id."""

    @abstractmethod
    def expired(self, now: float, limit: int) -> list[TicketRow]:
        """Up to ``limit`` pending tickets whose lease deadline is before ``now``, by id."""

    @abstractmethod
    def batch_entries(self, batch: int) -> list[int]:
        """Entries of ``batch`` held by a pending or told ticket."""

    @abstractmethod
    def get_ticket(self, ticket_id: int) -> TicketRow | None:
        """The ticket, or None when the study has no ticket of that id."""

    @abstractmethod
    def add_ticket(self, arm: Any, count: int, batch: int, entry: int, issued_at: float,
                   lease_deadline: float, reissue_of: int | None = None) -> TicketRow:
        """Append a pending ticket (the storage assigns the id)."""

    @abstractmethod
    def set_state(self, ticket_ids: list[int], state: str) -> None:
        """Mark pending tickets ``expired`` or ``cancelled``."""

    @abstractmethod
    def tell(self, ticket_id: int, reward_sum: float, told_at: float) -> int:
        """Mark a pending ticket told; assign and return the next told sequence number
        (``study.n_told + 1``; the study row's ``n_told`` follows)."""

    def get_tickets(self, ticket_ids: list[int]) -> dict[int, TicketRow]:
        """The study's tickets among ``ticket_ids`` by id (absent ids left out); backends
        may override with one query."""
        out = {}
        for i in ticket_ids:
            row = self.get_ticket(i)
            if row is not None:
                out[int(i)] = row
        return out

    def tell_many(self, items: list[tuple[int, float, float, dict | None]]) -> list[int]:
        """``tell`` (then ``set_stat`` when given) for ``(ticket_id, reward_sum, told_at,
        stat)`` items in order; returns their told sequence numbers. Backends may override
        with one statement."""
        seqs = []
        for tid, r, at, stat in items:
            seqs.append(self.tell(tid, r, at))
            if stat:
                self.set_stat(tid, stat)
        return seqs

    @abstractmethod
    def set_stat(self, ticket_id: int, stat: dict) -> None:
        """Attach the stopping statistic computed after a tell (a derived cache)."""

    @abstractmethod
    def latest_snapshot(self) -> tuple[int, bytes] | None:
        """The newest snapshot as ``(told_seq, payload)``, or None."""

    @abstractmethod
    def save_snapshot(self, told_seq: int, payload: bytes) -> None:
        """Store a snapshot of the state after ``told_seq`` tells (replacing one with the
        same number)."""

    @abstractmethod
    def finish(self, status: str, result: dict) -> None:
        """Record the final status and result of the study."""


class BaseStorage(ABC):
    """The storage contract (see the module docstring)."""

    url: str = ""

    @abstractmethod
    def create_study(self, record: StudyRecord) -> None:
        """Add a study; :class:`DuplicatedStudyError` when the name is taken."""

    @abstractmethod
    def get_study(self, name: str) -> StudyRecord:
        """The study's record; :class:`StudyNotFoundError` when absent."""

    @abstractmethod
    def list_studies(self) -> list[StudyRecord]:
        """All studies, by name."""

    @abstractmethod
    def delete_study(self, name: str) -> None:
        """Remove a study with its log and snapshots; :class:`StudyNotFoundError` when absent."""

    @abstractmethod
    def tickets(self, name: str, *, states: tuple[str, ...] | None = None) -> list[TicketRow]:
        """The study's tickets by id (all, or those in ``states``); a consistent read."""

    def told_since(self, name: str, seq: int) -> list[TicketRow]:
        """Told tickets with ``told_seq > seq`` in told order, read *without* locking the
        study (told rows never change, so a process can catch up before it locks)."""
        with self.transaction(name) as tx:
            return tx.told_since(seq)

    @abstractmethod
    def transaction(self, name: str) -> contextlib.AbstractContextManager[StudyTransaction]:
        """Lock the study for one atomic change."""

    def close(self) -> None:
        """Release connections (the storage may not be used afterwards)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


# ============================================================================ memory
class _MemoryTransaction(StudyTransaction):
    def __init__(self, storage: "InMemoryStorage", name: str) -> None:
        self._s = storage
        self._name = name
        self.study = storage._studies[name]
        self._log = storage._tickets[name]
        self._undo: list[Any] = []

    def told_since(self, seq: int) -> list[TicketRow]:
        told = self._s._told[self._name]
        return [self._log[i] for i in told[seq:]]

    def pending(self) -> list[TicketRow]:
        return [self._log[i] for i in sorted(self._s._pending[self._name])]

    def expired(self, now: float, limit: int) -> list[TicketRow]:
        out = [t for t in self.pending() if t.lease_deadline < now]
        return out[:limit]

    def batch_entries(self, batch: int) -> list[int]:
        out = []
        for t in reversed(self._log.values()):  # ids grow with time, batches never go back
            if 0 <= t.batch < batch:
                break
            if t.batch == batch and t.state in ("pending", "told"):
                out.append(t.entry)
        return sorted(out)

    def get_ticket(self, ticket_id: int) -> TicketRow | None:
        return self._log.get(int(ticket_id))

    def _put(self, row: TicketRow) -> None:
        old = self._log.get(row.id)
        pend = self._s._pending[self._name]

        def undo() -> None:
            if old is None:
                self._log.pop(row.id, None)
                pend.discard(row.id)
            else:
                self._log[row.id] = old
                if old.state == "pending":
                    pend.add(row.id)
                else:
                    pend.discard(row.id)

        self._undo.append(undo)
        self._log[row.id] = row
        if row.state == "pending":
            pend.add(row.id)
        else:
            pend.discard(row.id)

    def add_ticket(self, arm: Any, count: int, batch: int, entry: int, issued_at: float,
                   lease_deadline: float, reissue_of: int | None = None) -> TicketRow:
        self._s._next_id += 1
        row = TicketRow(self._s._next_id, self._name, copy.deepcopy(arm), int(count), int(batch), int(entry),
                        "pending", float(issued_at), float(lease_deadline), reissue_of=reissue_of)
        self._put(row)
        return row

    def set_state(self, ticket_ids: list[int], state: str) -> None:
        for i in ticket_ids:
            self._put(replace(self._log[int(i)], state=state))

    def _set_study(self, **fields: Any) -> None:
        old = self.study
        self._undo.append(lambda: self._s._studies.__setitem__(self._name, old))
        self.study = replace(self.study, **fields)
        self._s._studies[self._name] = self.study

    def tell(self, ticket_id: int, reward_sum: float, told_at: float) -> int:
        seq = self.study.n_told + 1
        self._put(replace(self._log[int(ticket_id)], state="told", told_seq=seq,
                          reward_sum=float(reward_sum), told_at=float(told_at)))
        told = self._s._told[self._name]
        told.append(int(ticket_id))
        self._undo.append(told.pop)
        self._set_study(n_told=seq)
        return seq

    def set_stat(self, ticket_id: int, stat: dict) -> None:
        self._put(replace(self._log[int(ticket_id)], stat=copy.deepcopy(stat)))

    def latest_snapshot(self) -> tuple[int, bytes] | None:
        snaps = self._s._snapshots[self._name]
        if not snaps:
            return None
        seq = max(snaps)
        return seq, snaps[seq]

    def save_snapshot(self, told_seq: int, payload: bytes) -> None:
        snaps = self._s._snapshots[self._name]
        old = snaps.get(told_seq)
        self._undo.append(lambda: snaps.pop(told_seq) if old is None else snaps.__setitem__(told_seq, old))
        snaps[told_seq] = bytes(payload)

    def finish(self, status: str, result: dict) -> None:
        self._set_study(status=status, result=copy.deepcopy(result))

    def _rollback(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


class InMemoryStorage(BaseStorage):
    """A storage in this process's memory (tests, notebooks; lost at exit).

    Thread-safe: one lock serializes transactions.
    """

    url = ":memory:"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._studies: dict[str, StudyRecord] = {}
        self._tickets: dict[str, dict[int, TicketRow]] = {}
        self._told: dict[str, list[int]] = {}
        self._pending: dict[str, set[int]] = {}
        self._snapshots: dict[str, dict[int, bytes]] = {}
        self._next_id = 0

    def create_study(self, record: StudyRecord) -> None:
        with self._lock:
            if record.name in self._studies:
                raise DuplicatedStudyError(f"A study named {record.name!r} already exists in {self!r}.")
            self._studies[record.name] = copy.deepcopy(record)
            self._tickets[record.name] = {}
            self._told[record.name] = []
            self._pending[record.name] = set()
            self._snapshots[record.name] = {}

    def _check(self, name: str) -> None:
        if name not in self._studies:
            raise StudyNotFoundError(f"No study named {name!r} in {self!r}.")

    def get_study(self, name: str) -> StudyRecord:
        with self._lock:
            self._check(name)
            return copy.deepcopy(self._studies[name])

    def list_studies(self) -> list[StudyRecord]:
        with self._lock:
            return [copy.deepcopy(self._studies[k]) for k in sorted(self._studies)]

    def delete_study(self, name: str) -> None:
        with self._lock:
            self._check(name)
            for d in (self._studies, self._tickets, self._told, self._pending, self._snapshots):
                del d[name]

    def tickets(self, name: str, *, states: tuple[str, ...] | None = None) -> list[TicketRow]:
        with self._lock:
            self._check(name)
            rows = [self._tickets[name][i] for i in sorted(self._tickets[name])]
            return [r for r in rows if states is None or r.state in states]

    @contextlib.contextmanager
    def transaction(self, name: str) -> Iterator[StudyTransaction]:
        with self._lock:
            self._check(name)
            tx = _MemoryTransaction(self, name)
            try:
                yield tx
            except BaseException:
                tx._rollback()
                raise
