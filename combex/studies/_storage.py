"""The storage contract of live studies, and the in-memory backend.

A storage holds several studies by name. A study is one row of settings (problem spec,
solver name and settings, root seed, budget, status, final result, and derived caches: the
current progress and the least-squares aggregates of the told log) plus

* an append-only log of *tickets* (evaluations): each is issued ``pending`` with a lease
  deadline, then becomes ``told`` (with its reward sum, the assistant who told it, a told
  sequence number 1, 2, ... without gaps and a checksum of the row), ``expired`` (its lease
  ran out), ``released`` (handed back unevaluated) or ``cancelled`` (still pending when the
  study stopped). Told rows are never changed again (only the derived ``stat`` cache);
* an append-only log of *corrections*: a told score replaced (or voided) with a reason;
* the *batches* of a batch-policy study (the arms and counts of each batch as it was
  handed out), so a replay after a correction folds exactly the recorded batches;
* the study's *assistants* (name, salted hash of their secret token, counters);
* *snapshots* (serialized exploration states keyed by the told sequence number and the
  number of corrections they include, with a checksum): a cache; the logs alone are the
  truth.

Every change goes through :meth:`BaseStorage.transaction`, which locks the study (an
immediate transaction in SQLite, ``SELECT ... FOR UPDATE`` of the study row in
PostgreSQL, a mutex in memory) and commits everything or nothing. Reads go through
:meth:`BaseStorage.read`: a consistent read that takes no write lock (SQLite's WAL
snapshot, PostgreSQL's repeatable-read snapshot).

:func:`combex.studies.testing.check_storage` checks a backend against this contract.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from ..exceptions import DuplicatedStudyError, StorageError, StudyNotFoundError

__all__ = ["SCHEMA_VERSION", "StudyRecord", "TicketRow", "CorrectionRow", "AssistantRow", "SnapshotRow",
           "BaseStorage", "StudyTransaction", "InMemoryStorage", "row_checksum", "payload_checksum"]

#: Version of the storage schema written by this combex (an older one is upgraded only by
#: ``combex study upgrade STORAGE``; a newer one is refused).
SCHEMA_VERSION = 2

TICKET_STATES = ("pending", "told", "expired", "released", "cancelled")


def row_checksum(ticket_id: int, arm: Any, count: int, batch: int, entry: int, told_seq: int,
                 reward_sum: float) -> str:
    """Checksum of a told row's content (what the replay reads): 16 hex digits of BLAKE2b."""
    a = ",".join(map(str, arm)) if isinstance(arm, list) else str(int(arm))
    doc = f"{int(ticket_id)}|{a}|{int(count)}|{int(batch)}|{int(entry)}|{int(told_seq)}|{float(reward_sum).hex()}"
    return hashlib.blake2b(doc.encode(), digest_size=8).hexdigest()


def payload_checksum(payload: bytes) -> str:
    """Checksum of a snapshot payload (SHA-256, hex)."""
    return hashlib.sha256(payload).hexdigest()


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
        How long an assistant may hold a ticket before it is handed out again.
    snapshot_every : int
        A snapshot of the exploration is stored every this many tells.
    policy : {"batch", "eager"}
        How tells reach the solver (see :mod:`combex.studies`).
    status : str
        ``"running"``, ``"identified"``, ``"budget_exhausted"`` (or another final status
        of the solver).
    result : dict or None
        At the stop: answer, certificate, samples, evaluations used...
    n_told : int
        Number of told tickets (the last told sequence number).
    created_at : float
        Unix time.
    budget : int or None
        The study stops when this many evaluations are told.
    n_corrections : int
        Number of correction records (the last correction sequence number).
    progress : dict or None
        Where the study stands after its last change (leader, statistic, threshold...):
        a cache written with every change, read by ``best()`` without a replay.
    aggregates : dict or None
        Sufficient statistics of the told log for the member estimates (a cache written
        with every tell and correction).
    history : list
        Notes on the study's course (a stop undone by a correction...).
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
    budget: int | None = None
    n_corrections: int = 0
    progress: dict | None = None
    aggregates: dict | None = None
    history: list = field(default_factory=list)

    def settings(self) -> dict[str, Any]:
        """What makes two studies of the same name the same study."""
        return {"problem": self.problem, "solver": self.solver, "solver_params": self.solver_params,
                "seed": self.seed, "policy": self.policy, "budget": self.budget}


@dataclass(frozen=True)
class TicketRow:
    """One evaluation of the log.

    ``arm`` is an int (index arms) or the sorted member list (super-arms); ``batch`` and
    ``entry`` locate the ticket in the solver's batch (batch policy; ``batch`` is -1 under
    the eager policy); ``told_seq`` is the told order (1, 2, ...), ``stat`` the stopping
    statistic computed after this tell (a derived cache), ``issued_seq`` the number of
    told tickets when it was issued, ``asked_by`` / ``told_by`` the assistants (None: the
    owner), ``checksum`` the told row's :func:`row_checksum`.
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
    issued_seq: int = 0
    asked_by: str | None = None
    told_by: str | None = None
    checksum: str | None = None


@dataclass(frozen=True)
class CorrectionRow:
    """A told score replaced (``reward_sum``) or voided (``reward_sum`` None); ``seq`` is
    the study's correction number (1, 2, ...)."""

    seq: int
    ticket_id: int
    told_seq: int
    reward_sum: float | None
    reason: str
    assistant: str | None
    created_at: float


@dataclass(frozen=True)
class AssistantRow:
    """An assistant of a study: the public ``key_id`` of their token and the salted hash
    of its secret (never the secret)."""

    name: str
    key_id: str
    salt: bytes
    secret_hash: bytes
    created_at: float
    last_seen: float | None = None
    n_told: int = 0


@dataclass(frozen=True)
class SnapshotRow:
    """A serialized exploration after ``told_seq`` tells and ``n_corrections`` corrections."""

    told_seq: int
    n_corrections: int
    payload: bytes
    checksum: str


class StudyTransaction(ABC):
    """Operations on one study; in a ``with storage.transaction(name)`` block all committed
    together at the end, or none if it raises. A ``storage.read(name)`` block offers the
    reading methods only (the writing ones raise :class:`StorageError`)."""

    study: StudyRecord
    read_only: bool = False

    def _writable(self) -> None:
        if self.read_only:
            raise StorageError(f"A read of study {self.study.name!r} cannot write.")

    # -------------------------------------------------------------- reading
    @abstractmethod
    def told_since(self, seq: int, limit: int | None = None) -> list[TicketRow]:
        """Told tickets with ``told_seq > seq``, in told order (at most ``limit``)."""

    @abstractmethod
    def told_at(self, seqs: list[int]) -> list[TicketRow]:
        """The told tickets of the given told sequence numbers, in told order."""

    @abstractmethod
    def pending(self) -> list[TicketRow]:
        """Pending tickets, by id."""

    @abstractmethod
    def expired(self, now: float, limit: int) -> list[TicketRow]:
        """Up to ``limit`` pending tickets whose lease deadline is before ``now``, by id."""

    @abstractmethod
    def get_ticket(self, ticket_id: int) -> TicketRow | None:
        """The ticket, or None when the study has no ticket of that id."""

    def get_tickets(self, ticket_ids: list[int]) -> dict[int, TicketRow]:
        """The study's tickets among ``ticket_ids`` by id (absent ids left out); backends
        may override with one query."""
        out = {}
        for i in ticket_ids:
            row = self.get_ticket(i)
            if row is not None:
                out[int(i)] = row
        return out

    @abstractmethod
    def state_counts(self) -> dict[str, int]:
        """Number of tickets in each state (every state of :data:`TICKET_STATES`)."""

    @abstractmethod
    def corrections(self, since: int = 0) -> list[CorrectionRow]:
        """Correction records with ``seq > since``, in order."""

    @abstractmethod
    def batches(self, first: int, last: int) -> dict[int, tuple[list, list]]:
        """Recorded batches ``first..last`` as ``{batch: (arms, counts)}``."""

    @abstractmethod
    def last_batch(self) -> int:
        """The highest recorded batch number (-1 when none)."""

    @abstractmethod
    def assistants(self) -> list[AssistantRow]:
        """The study's assistants, by name."""

    @abstractmethod
    def assistant_by_key(self, key_id: str) -> AssistantRow | None:
        """The assistant whose token has this public key id, or None."""

    @abstractmethod
    def snapshots(self) -> list[SnapshotRow]:
        """Stored snapshots, newest (highest ``told_seq``) first."""

    def latest_snapshot(self) -> tuple[int, bytes] | None:
        """The newest snapshot as ``(told_seq, payload)``, or None."""
        snaps = self.snapshots()
        return None if not snaps else (snaps[0].told_seq, snaps[0].payload)

    # -------------------------------------------------------------- writing
    @abstractmethod
    def add_ticket(self, arm: Any, count: int, batch: int, entry: int, issued_at: float,
                   lease_deadline: float, reissue_of: int | None = None, *, issued_seq: int = 0,
                   asked_by: str | None = None) -> TicketRow:
        """Append a pending ticket (the storage assigns the id)."""

    @abstractmethod
    def set_state(self, ticket_ids: list[int], state: str) -> None:
        """Mark pending tickets ``expired``, ``released`` or ``cancelled`` (tickets in
        another state are left as they are)."""

    @abstractmethod
    def tell(self, ticket_id: int, reward_sum: float, told_at: float, *, told_by: str | None = None) -> int:
        """Mark a pending, expired, released or cancelled ticket told; assign and return the
        next told sequence number (``study.n_told + 1``; the study row's ``n_told``
        follows) and store the row's :func:`row_checksum`."""

    def tell_many(self, items: list[tuple[Any, ...]]) -> list[int]:
        """``tell`` (then ``set_stat`` when given) for ``(ticket_id, reward_sum, told_at,
        stat[, told_by])`` items in order; returns their told sequence numbers. Backends
        may override with one statement."""
        seqs = []
        for item in items:
            tid, r, at, stat = item[:4]
            seqs.append(self.tell(tid, r, at, told_by=item[4] if len(item) > 4 else None))
            if stat:
                self.set_stat(tid, stat)
        return seqs

    @abstractmethod
    def set_stat(self, ticket_id: int, stat: dict | None) -> None:
        """Attach the stopping statistic computed after a tell (a derived cache)."""

    @abstractmethod
    def add_correction(self, ticket_id: int, told_seq: int, reward_sum: float | None, reason: str,
                       assistant: str | None, created_at: float) -> int:
        """Append a correction record; returns its number (``study.n_corrections + 1``)."""

    @abstractmethod
    def record_batch(self, batch: int, arms: list, counts: list) -> None:
        """Record the arms and counts of a batch as it is first handed out."""

    @abstractmethod
    def add_assistant(self, row: AssistantRow) -> None:
        """Add an assistant; :class:`DuplicatedStudyError` when the name is taken."""

    @abstractmethod
    def remove_assistant(self, name: str) -> bool:
        """Remove an assistant; False when there is none of that name."""

    @abstractmethod
    def touch_assistant(self, name: str, at: float, told: int = 0) -> None:
        """Set an assistant's ``last_seen`` and add ``told`` to their ``n_told``."""

    @abstractmethod
    def save_snapshot(self, told_seq: int, payload: bytes, n_corrections: int = 0) -> None:
        """Store a snapshot of the state after ``told_seq`` tells and ``n_corrections``
        corrections, with its :func:`payload_checksum` (replacing one with the same
        number; the two newest are kept)."""

    @abstractmethod
    def update_study(self, **fields: Any) -> None:
        """Set fields of the study row: ``status``, ``budget``, ``result``, ``progress``,
        ``aggregates``, ``history``."""

    def finish(self, status: str, result: dict | None) -> None:
        """Record the status and result of the study."""
        self.update_study(status=status, result=result)


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
        """Remove a study with its logs, assistants and snapshots; :class:`StudyNotFoundError`
        when absent."""

    @abstractmethod
    def tickets(self, name: str, *, states: tuple[str, ...] | None = None) -> list[TicketRow]:
        """The study's tickets by id (all, or those in ``states``); a consistent read
        (exports: it reads the whole log)."""

    def told_since(self, name: str, seq: int) -> list[TicketRow]:
        """Told tickets with ``told_seq > seq`` in told order, read *without* locking the
        study (told rows never change, so a process can catch up before it locks)."""
        with self.read(name) as tx:
            return tx.told_since(seq)

    @abstractmethod
    def transaction(self, name: str) -> contextlib.AbstractContextManager[StudyTransaction]:
        """Lock the study for one atomic change."""

    @abstractmethod
    def read(self, name: str) -> contextlib.AbstractContextManager[StudyTransaction]:
        """A consistent read of the study that takes no write lock (a read-only
        :class:`StudyTransaction`)."""

    def close(self) -> None:
        """Release connections (the storage may not be used afterwards)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


# ============================================================================ memory
@dataclass
class _MemoryStudy:
    record: StudyRecord
    tickets: dict[int, TicketRow] = field(default_factory=dict)
    told: list[int] = field(default_factory=list)
    pending: set[int] = field(default_factory=set)
    snapshots: dict[int, SnapshotRow] = field(default_factory=dict)
    corrections: list[CorrectionRow] = field(default_factory=list)
    batches: dict[int, tuple[list, list]] = field(default_factory=dict)
    assistants: dict[str, AssistantRow] = field(default_factory=dict)


class _MemoryTransaction(StudyTransaction):
    def __init__(self, storage: "InMemoryStorage", name: str, read_only: bool = False) -> None:
        self._s = storage
        self._name = name
        self._d = storage._studies[name]
        self.study = self._d.record
        self.read_only = read_only
        self._undo: list[Any] = []

    # -------------------------------------------------------------- reading
    def told_since(self, seq: int, limit: int | None = None) -> list[TicketRow]:
        ids = self._d.told[max(int(seq), 0):]
        if limit is not None:
            ids = ids[:limit]
        return [self._d.tickets[i] for i in ids]

    def told_at(self, seqs: list[int]) -> list[TicketRow]:
        n = len(self._d.told)
        return [self._d.tickets[self._d.told[s - 1]] for s in sorted(set(int(x) for x in seqs)) if 1 <= s <= n]

    def pending(self) -> list[TicketRow]:
        return [self._d.tickets[i] for i in sorted(self._d.pending)]

    def expired(self, now: float, limit: int) -> list[TicketRow]:
        out = [t for t in self.pending() if t.lease_deadline < now]
        return out[:limit]

    def get_ticket(self, ticket_id: int) -> TicketRow | None:
        return self._d.tickets.get(int(ticket_id))

    def state_counts(self) -> dict[str, int]:
        out = {s: 0 for s in TICKET_STATES}
        for t in self._d.tickets.values():
            out[t.state] += 1
        return out

    def corrections(self, since: int = 0) -> list[CorrectionRow]:
        return list(self._d.corrections[max(int(since), 0):])

    def batches(self, first: int, last: int) -> dict[int, tuple[list, list]]:
        return {b: copy.deepcopy(v) for b, v in self._d.batches.items() if first <= b <= last}

    def last_batch(self) -> int:
        return max(self._d.batches, default=-1)

    def assistants(self) -> list[AssistantRow]:
        return [self._d.assistants[k] for k in sorted(self._d.assistants)]

    def assistant_by_key(self, key_id: str) -> AssistantRow | None:
        for a in self._d.assistants.values():
            if a.key_id == key_id:
                return a
        return None

    def snapshots(self) -> list[SnapshotRow]:
        return [self._d.snapshots[k] for k in sorted(self._d.snapshots, reverse=True)]

    # -------------------------------------------------------------- writing
    def _put(self, row: TicketRow) -> None:
        self._writable()
        d = self._d
        old = d.tickets.get(row.id)

        def undo() -> None:
            if old is None:
                d.tickets.pop(row.id, None)
                d.pending.discard(row.id)
            else:
                d.tickets[row.id] = old
                if old.state == "pending":
                    d.pending.add(row.id)
                else:
                    d.pending.discard(row.id)

        self._undo.append(undo)
        d.tickets[row.id] = row
        if row.state == "pending":
            d.pending.add(row.id)
        else:
            d.pending.discard(row.id)

    def add_ticket(self, arm: Any, count: int, batch: int, entry: int, issued_at: float,
                   lease_deadline: float, reissue_of: int | None = None, *, issued_seq: int = 0,
                   asked_by: str | None = None) -> TicketRow:
        self._writable()
        self._s._next_id += 1
        row = TicketRow(self._s._next_id, self._name, copy.deepcopy(arm), int(count), int(batch), int(entry),
                        "pending", float(issued_at), float(lease_deadline), reissue_of=reissue_of,
                        issued_seq=int(issued_seq), asked_by=asked_by)
        self._put(row)
        return row

    def set_state(self, ticket_ids: list[int], state: str) -> None:
        for i in ticket_ids:
            row = self._d.tickets[int(i)]
            if row.state == "pending":
                self._put(replace(row, state=state))

    def _set_study(self, **fields: Any) -> None:
        self._writable()
        old = self.study
        d = self._d

        def undo() -> None:
            d.record = old

        self._undo.append(undo)
        self.study = d.record = replace(self.study, **copy.deepcopy(fields))

    def tell(self, ticket_id: int, reward_sum: float, told_at: float, *, told_by: str | None = None) -> int:
        self._writable()
        row = self._d.tickets[int(ticket_id)]
        if row.state == "told":
            raise StorageError(f"Ticket {ticket_id} of study {self._name!r} is already told.")
        seq = self.study.n_told + 1
        r = float(reward_sum)
        self._put(replace(row, state="told", told_seq=seq, reward_sum=r, told_at=float(told_at), told_by=told_by,
                          checksum=row_checksum(row.id, row.arm, row.count, row.batch, row.entry, seq, r)))
        told = self._d.told
        told.append(int(ticket_id))
        self._undo.append(told.pop)
        self._set_study(n_told=seq)
        return seq

    def set_stat(self, ticket_id: int, stat: dict | None) -> None:
        self._put(replace(self._d.tickets[int(ticket_id)], stat=copy.deepcopy(stat)))

    def add_correction(self, ticket_id: int, told_seq: int, reward_sum: float | None, reason: str,
                       assistant: str | None, created_at: float) -> int:
        self._writable()
        seq = self.study.n_corrections + 1
        c = CorrectionRow(seq, int(ticket_id), int(told_seq), None if reward_sum is None else float(reward_sum),
                          str(reason), assistant, float(created_at))
        self._d.corrections.append(c)
        self._undo.append(self._d.corrections.pop)
        self._set_study(n_corrections=seq)
        return seq

    def record_batch(self, batch: int, arms: list, counts: list) -> None:
        self._writable()
        b = self._d.batches
        if int(batch) in b:
            raise StorageError(f"Batch {batch} of study {self._name!r} is already recorded.")
        b[int(batch)] = (copy.deepcopy(arms), [int(c) for c in counts])
        self._undo.append(lambda: b.pop(int(batch), None))

    def add_assistant(self, row: AssistantRow) -> None:
        self._writable()
        a = self._d.assistants
        if row.name in a:
            raise DuplicatedStudyError(f"Study {self._name!r} already has an assistant named {row.name!r}.")
        a[row.name] = row
        self._undo.append(lambda: a.pop(row.name, None))

    def remove_assistant(self, name: str) -> bool:
        self._writable()
        a = self._d.assistants
        old = a.pop(name, None)
        if old is None:
            return False
        self._undo.append(lambda: a.__setitem__(name, old))
        return True

    def touch_assistant(self, name: str, at: float, told: int = 0) -> None:
        self._writable()
        a = self._d.assistants
        old = a.get(name)
        if old is None:
            return
        a[name] = replace(old, last_seen=float(at), n_told=old.n_told + int(told))
        self._undo.append(lambda: a.__setitem__(name, old))

    def save_snapshot(self, told_seq: int, payload: bytes, n_corrections: int = 0) -> None:
        self._writable()
        snaps = self._d.snapshots
        before = dict(snaps)
        self._undo.append(lambda: (snaps.clear(), snaps.update(before)))
        snaps[int(told_seq)] = SnapshotRow(int(told_seq), int(n_corrections), bytes(payload),
                                           payload_checksum(bytes(payload)))
        for k in sorted(snaps, reverse=True)[2:]:
            del snaps[k]

    def update_study(self, **fields: Any) -> None:
        bad = set(fields) - {"status", "budget", "result", "progress", "aggregates", "history"}
        if bad:
            raise StorageError(f"update_study cannot set {sorted(bad)}.")
        self._set_study(**fields)

    def _rollback(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


class InMemoryStorage(BaseStorage):
    """A storage in this process's memory (tests, notebooks; lost at exit).

    Thread-safe: one lock serializes transactions (reads take it too: in one process
    there is nothing to gain by not taking it).
    """

    url = ":memory:"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._studies: dict[str, _MemoryStudy] = {}
        self._next_id = 0

    def create_study(self, record: StudyRecord) -> None:
        with self._lock:
            if record.name in self._studies:
                raise DuplicatedStudyError(f"A study named {record.name!r} already exists in {self!r}.")
            self._studies[record.name] = _MemoryStudy(copy.deepcopy(record))

    def _check(self, name: str) -> None:
        if name not in self._studies:
            raise StudyNotFoundError(f"No study named {name!r} in {self!r}.")

    def get_study(self, name: str) -> StudyRecord:
        with self._lock:
            self._check(name)
            return copy.deepcopy(self._studies[name].record)

    def list_studies(self) -> list[StudyRecord]:
        with self._lock:
            return [copy.deepcopy(self._studies[k].record) for k in sorted(self._studies)]

    def delete_study(self, name: str) -> None:
        with self._lock:
            self._check(name)
            del self._studies[name]

    def tickets(self, name: str, *, states: tuple[str, ...] | None = None) -> list[TicketRow]:
        with self._lock:
            self._check(name)
            d = self._studies[name].tickets
            rows = [d[i] for i in sorted(d)]
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

    @contextlib.contextmanager
    def read(self, name: str) -> Iterator[StudyTransaction]:
        with self._lock:
            self._check(name)
            yield _MemoryTransaction(self, name, read_only=True)
