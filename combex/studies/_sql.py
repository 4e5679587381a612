"""SQL storage (SQLAlchemy): SQLite by file path, any SQLAlchemy URL (PostgreSQL...).

Schema (version :data:`~combex.studies._storage.SCHEMA_VERSION`, in table
``combex_schema``): ``combex_studies`` (one row per study: JSON settings, status, result,
``n_told``, ``n_corrections`` and the derived ``progress`` / ``aggregates`` caches),
``combex_tickets`` (the append-only evaluation log, unique ``(study_id, told_seq)``),
``combex_corrections`` (the append-only correction log), ``combex_batches`` (the batches
of batch-policy studies as handed out), ``combex_assistants`` (names, public key ids and
salted hashes of their tokens), ``combex_snapshots`` (serialized states with checksums, a
cache). A database whose ``combex_schema`` names another version is refused, never read.

Locking: SQLite transactions start with ``BEGIN IMMEDIATE`` (one writer at a time, WAL
journal so readers never wait); other databases lock the study row with
``SELECT ... FOR UPDATE`` at the start of every transaction. Reads run in a separate
read transaction (SQLite: a deferred ``BEGIN`` on the WAL snapshot; PostgreSQL:
``REPEATABLE READ``) and never take the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from dataclasses import replace
from typing import Any, Iterator

from .._validation import check_float
from ..exceptions import InvalidParameterError
from ..exceptions import DuplicatedStudyError, SchemaVersionError, StorageError, StudyNotFoundError
from ._storage import (
    SCHEMA_VERSION,
    TICKET_STATES,
    AssistantRow,
    BaseStorage,
    CorrectionRow,
    SnapshotRow,
    StudyRecord,
    StudyTransaction,
    TicketRow,
    payload_checksum,
    row_checksum,
)

__all__ = ["SQLStorage"]


def _sa() -> Any:
    try:
        import sqlalchemy  # SQLAlchemy is optional (the studies extra)
    except ImportError as exc:  # pragma: no cover - the studies extra
        raise ImportError("SQL storages need SQLAlchemy: pip install 'combex[studies]'") from exc
    return sqlalchemy


def _tables(sa: Any) -> dict[str, Any]:
    md = sa.MetaData()
    out: dict[str, Any] = {"md": md}
    out["schema"] = sa.Table("combex_schema", md, sa.Column("version", sa.Integer, nullable=False))
    out["studies"] = sa.Table(
        "combex_studies", md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("problem", sa.Text, nullable=False),
        sa.Column("solver", sa.String(255), nullable=False),
        sa.Column("solver_params", sa.Text, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("lease_seconds", sa.Float, nullable=False),
        sa.Column("snapshot_every", sa.Integer, nullable=False),
        sa.Column("policy", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("n_told", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("budget", sa.BigInteger, nullable=True),
        sa.Column("n_corrections", sa.Integer, nullable=False, server_default="0"),
        sa.Column("progress", sa.Text, nullable=True),
        sa.Column("aggregates", sa.Text, nullable=True),
        sa.Column("history", sa.Text, nullable=True),
    )
    out["tickets"] = sa.Table(
        "combex_tickets", md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), nullable=False),
        sa.Column("arm", sa.Text, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("batch", sa.Integer, nullable=False),
        sa.Column("entry", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("issued_at", sa.Float, nullable=False),
        sa.Column("lease_deadline", sa.Float, nullable=False),
        sa.Column("told_seq", sa.Integer, nullable=True),
        sa.Column("reward_sum", sa.Float, nullable=True),
        sa.Column("told_at", sa.Float, nullable=True),
        sa.Column("stat", sa.Text, nullable=True),
        sa.Column("reissue_of", sa.Integer, nullable=True),
        sa.Column("issued_seq", sa.Integer, nullable=False, server_default="0"),
        sa.Column("asked_by", sa.String(255), nullable=True),
        sa.Column("told_by", sa.String(255), nullable=True),
        sa.Column("checksum", sa.String(32), nullable=True),
        sa.UniqueConstraint("study_id", "told_seq", name="uq_combex_told_seq"),
        sa.Index("ix_combex_tickets_state", "study_id", "state"),
        sa.Index("ix_combex_tickets_batch", "study_id", "batch"),
    )
    out["corrections"] = sa.Table(
        "combex_corrections", md,
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("ticket_id", sa.Integer, nullable=False),
        sa.Column("told_seq", sa.Integer, nullable=False),
        sa.Column("reward_sum", sa.Float, nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("assistant", sa.String(255), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    out["batches"] = sa.Table(
        "combex_batches", md,
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), primary_key=True),
        sa.Column("batch", sa.Integer, primary_key=True),
        sa.Column("arms", sa.Text, nullable=False),
        sa.Column("counts", sa.Text, nullable=False),
    )
    out["assistants"] = sa.Table(
        "combex_assistants", md,
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), primary_key=True),
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("key_id", sa.String(64), nullable=False, unique=True),
        sa.Column("salt", sa.LargeBinary, nullable=False),
        sa.Column("secret_hash", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("last_seen", sa.Float, nullable=True),
        sa.Column("n_told", sa.Integer, nullable=False, server_default="0"),
    )
    out["snapshots"] = sa.Table(
        "combex_snapshots", md,
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), primary_key=True),
        sa.Column("told_seq", sa.Integer, primary_key=True),
        sa.Column("n_corrections", sa.Integer, nullable=False, server_default="0"),
        sa.Column("checksum", sa.String(64), nullable=False, server_default=""),
        sa.Column("payload", sa.LargeBinary, nullable=False),
    )
    return out


def _dump(x: Any) -> str:
    return json.dumps(x, sort_keys=True, allow_nan=False)


def _load(x: Any) -> Any:
    return None if x is None else json.loads(x)


class _SQLTransaction(StudyTransaction):
    def __init__(self, st: "SQLStorage", conn: Any, row: Any, read_only: bool = False) -> None:
        self._st = st
        self._c = conn
        self._id = row.id
        self.study = st._record(row)
        self.read_only = read_only

    def _rows(self, stmt: Any) -> list[TicketRow]:
        return [self._st._ticket(r, self.study.name) for r in self._c.execute(stmt)]

    # -------------------------------------------------------------- reading
    def told_since(self, seq: int, limit: int | None = None) -> list[TicketRow]:
        t = self._st._t
        stmt = t.select().where(t.c.study_id == self._id, t.c.told_seq > int(seq)).order_by(t.c.told_seq)
        if limit is not None:
            stmt = stmt.limit(int(limit))
        return self._rows(stmt)

    def told_at(self, seqs: list[int]) -> list[TicketRow]:
        t = self._st._t
        wanted = sorted({int(x) for x in seqs})
        out: list[TicketRow] = []
        for i in range(0, len(wanted), 500):
            out += self._rows(t.select().where(t.c.study_id == self._id, t.c.told_seq.in_(wanted[i:i + 500]))
                              .order_by(t.c.told_seq))
        return out

    def pending(self) -> list[TicketRow]:
        t = self._st._t
        return self._rows(t.select().where(t.c.study_id == self._id, t.c.state == "pending").order_by(t.c.id))

    def expired(self, now: float, limit: int) -> list[TicketRow]:
        t = self._st._t
        return self._rows(t.select().where(t.c.study_id == self._id, t.c.state == "pending",
                                           t.c.lease_deadline < now).order_by(t.c.id).limit(limit))

    def get_ticket(self, ticket_id: int) -> TicketRow | None:
        t = self._st._t
        rows = self._rows(t.select().where(t.c.study_id == self._id, t.c.id == int(ticket_id)))
        return rows[0] if rows else None

    def get_tickets(self, ticket_ids: list[int]) -> dict[int, TicketRow]:
        t = self._st._t
        ids = sorted({int(i) for i in ticket_ids})
        rows = self._rows(t.select().where(t.c.study_id == self._id, t.c.id.in_(ids)))
        return {r.id: r for r in rows}

    def state_counts(self) -> dict[str, int]:
        sa, t = self._st.sa, self._st._t
        out = {s: 0 for s in TICKET_STATES}
        others = [s for s in TICKET_STATES if s != "told"]
        stmt = (sa.select(t.c.state, sa.func.count()).where(t.c.study_id == self._id, t.c.state.in_(others))
                .group_by(t.c.state))
        for state, n in self._c.execute(stmt):
            out[state] = int(n)
        out["told"] = int(self.study.n_told)
        return out

    def corrections(self, since: int = 0) -> list[CorrectionRow]:
        c = self._st._corr
        stmt = c.select().where(c.c.study_id == self._id, c.c.seq > int(since)).order_by(c.c.seq)
        return [CorrectionRow(int(r.seq), int(r.ticket_id), int(r.told_seq),
                              None if r.reward_sum is None else float(r.reward_sum), r.reason, r.assistant,
                              float(r.created_at)) for r in self._c.execute(stmt)]

    def batches(self, first: int, last: int) -> dict[int, tuple[list, list]]:
        b = self._st._batches
        stmt = b.select().where(b.c.study_id == self._id, b.c.batch >= int(first), b.c.batch <= int(last))
        return {int(r.batch): (json.loads(r.arms), json.loads(r.counts)) for r in self._c.execute(stmt)}

    def last_batch(self) -> int:
        sa, b = self._st.sa, self._st._batches
        v = self._c.execute(sa.select(sa.func.max(b.c.batch)).where(b.c.study_id == self._id)).scalar()
        return -1 if v is None else int(v)

    def _assistant(self, r: Any) -> AssistantRow:
        return AssistantRow(r.name, r.key_id, bytes(r.salt), bytes(r.secret_hash), float(r.created_at),
                            None if r.last_seen is None else float(r.last_seen), int(r.n_told))

    def assistants(self) -> list[AssistantRow]:
        a = self._st._asst
        stmt = a.select().where(a.c.study_id == self._id).order_by(a.c.name)
        return [self._assistant(r) for r in self._c.execute(stmt)]

    def assistant_by_key(self, key_id: str) -> AssistantRow | None:
        a = self._st._asst
        r = self._c.execute(a.select().where(a.c.study_id == self._id, a.c.key_id == str(key_id))).first()
        return None if r is None else self._assistant(r)

    def snapshots(self) -> list[SnapshotRow]:
        sn = self._st._snap
        stmt = sn.select().where(sn.c.study_id == self._id).order_by(sn.c.told_seq.desc())
        return [SnapshotRow(int(r.told_seq), int(r.n_corrections), bytes(r.payload), r.checksum)
                for r in self._c.execute(stmt)]

    # -------------------------------------------------------------- writing
    def add_ticket(self, arm: Any, count: int, batch: int, entry: int, issued_at: float,
                   lease_deadline: float, reissue_of: int | None = None, *, issued_seq: int = 0,
                   asked_by: str | None = None) -> TicketRow:
        self._writable()
        values = dict(study_id=self._id, arm=_dump(arm), count=int(count), batch=int(batch), entry=int(entry),
                      state="pending", issued_at=float(issued_at), lease_deadline=float(lease_deadline),
                      reissue_of=reissue_of, issued_seq=int(issued_seq), asked_by=asked_by)
        res = self._c.execute(self._st._add_stmt, values)
        tid = int(res.scalar_one())
        return TicketRow(tid, self.study.name, arm, int(count), int(batch), int(entry), "pending",
                         float(issued_at), float(lease_deadline), reissue_of=reissue_of, issued_seq=int(issued_seq),
                         asked_by=asked_by)

    def set_state(self, ticket_ids: list[int], state: str) -> None:
        self._writable()
        if not ticket_ids:
            return
        t = self._st._t
        self._c.execute(t.update().where(t.c.study_id == self._id, t.c.id.in_([int(i) for i in ticket_ids]),
                                         t.c.state == "pending").values(state=state))

    def tell(self, ticket_id: int, reward_sum: float, told_at: float, *, told_by: str | None = None) -> int:
        return self.tell_many([(ticket_id, reward_sum, told_at, None, told_by)])[0]

    def tell_many(self, items: list[tuple[Any, ...]]) -> list[int]:
        self._writable()
        if not items:
            return []
        rows = self.get_tickets([it[0] for it in items])
        first = self.study.n_told + 1
        params = []
        for k, item in enumerate(items):
            tid, r, at, stat = item[:4]
            row = rows.get(int(tid))
            if row is None or row.state == "told":
                raise StorageError(f"Ticket {tid} of study {self.study.name!r} cannot be told (absent or told).")
            seq = first + k
            params.append({"tid": int(tid), "sid": self._id, "seq": seq, "r": float(r), "at": float(at),
                           "stat": None if not stat else json.dumps(stat),
                           "by": item[4] if len(item) > 4 else None,
                           "ck": row_checksum(row.id, row.arm, row.count, row.batch, row.entry, seq, float(r))})
        res = self._c.execute(self._st._tell_stmt, params)
        if res.rowcount not in (-1, len(params)):  # pragma: no cover - checked above
            raise StorageError(f"Some tickets of study {self.study.name!r} could not be told.")
        last = first + len(items) - 1
        s = self._st._s
        self._c.execute(s.update().where(s.c.id == self._id).values(n_told=last))
        self.study = replace(self.study, n_told=last)
        return list(range(first, last + 1))

    def set_stat(self, ticket_id: int, stat: dict | None) -> None:
        self._writable()
        t = self._st._t
        self._c.execute(t.update().where(t.c.study_id == self._id, t.c.id == int(ticket_id))
                        .values(stat=None if stat is None else json.dumps(stat)))

    def add_correction(self, ticket_id: int, told_seq: int, reward_sum: float | None, reason: str,
                       assistant: str | None, created_at: float) -> int:
        self._writable()
        seq = self.study.n_corrections + 1
        self._c.execute(self._st._corr.insert().values(
            study_id=self._id, seq=seq, ticket_id=int(ticket_id), told_seq=int(told_seq),
            reward_sum=None if reward_sum is None else float(reward_sum), reason=str(reason), assistant=assistant,
            created_at=float(created_at)))
        s = self._st._s
        self._c.execute(s.update().where(s.c.id == self._id).values(n_corrections=seq))
        self.study = replace(self.study, n_corrections=seq)
        return seq

    def record_batch(self, batch: int, arms: list, counts: list) -> None:
        self._writable()
        self._c.execute(self._st._batches.insert().values(study_id=self._id, batch=int(batch), arms=_dump(arms),
                                                          counts=_dump([int(c) for c in counts])))

    def add_assistant(self, row: AssistantRow) -> None:
        self._writable()
        a = self._st._asst
        if self._c.execute(a.select().where(a.c.study_id == self._id, a.c.name == row.name)).first() is not None:
            raise DuplicatedStudyError(f"Study {self.study.name!r} already has an assistant named {row.name!r}.")
        self._c.execute(a.insert().values(study_id=self._id, name=row.name, key_id=row.key_id, salt=row.salt,
                                          secret_hash=row.secret_hash, created_at=row.created_at,
                                          last_seen=row.last_seen, n_told=row.n_told))

    def remove_assistant(self, name: str) -> bool:
        self._writable()
        a = self._st._asst
        res = self._c.execute(a.delete().where(a.c.study_id == self._id, a.c.name == str(name)))
        return res.rowcount == 1

    def touch_assistant(self, name: str, at: float, told: int = 0) -> None:
        self._writable()
        a = self._st._asst
        self._c.execute(a.update().where(a.c.study_id == self._id, a.c.name == str(name))
                        .values(last_seen=float(at), n_told=a.c.n_told + int(told)))

    def save_snapshot(self, told_seq: int, payload: bytes, n_corrections: int = 0) -> None:
        self._writable()
        sn = self._st._snap
        self._c.execute(sn.delete().where(sn.c.study_id == self._id, sn.c.told_seq == int(told_seq)))
        self._c.execute(sn.insert().values(study_id=self._id, told_seq=int(told_seq), payload=bytes(payload),
                                           n_corrections=int(n_corrections),
                                           checksum=payload_checksum(bytes(payload))))
        # keep the two newest snapshots
        old = self._c.execute(self._st.sa.select(sn.c.told_seq).where(sn.c.study_id == self._id)
                              .order_by(sn.c.told_seq.desc()).offset(2)).fetchall()
        if old:
            self._c.execute(sn.delete().where(sn.c.study_id == self._id,
                                              sn.c.told_seq.in_([int(r[0]) for r in old])))

    def update_study(self, **fields: Any) -> None:
        self._writable()
        bad = set(fields) - {"status", "budget", "result", "progress", "aggregates", "history"}
        if bad:
            raise StorageError(f"update_study cannot set {sorted(bad)}.")
        values = {}
        for k, v in fields.items():
            values[k] = v if k in ("status", "budget") else (None if v is None else _dump(v))
        s = self._st._s
        self._c.execute(s.update().where(s.c.id == self._id).values(**values))
        self.study = replace(self.study, **{k: (list(v) if k == "history" and v is not None else v)
                                            for k, v in fields.items()})


class SQLStorage(BaseStorage):
    """A storage in a SQL database through SQLAlchemy.

    Parameters
    ----------
    url : str or path-like
        A SQLAlchemy URL (``"postgresql+psycopg://user@host:port/db"``,
        ``"sqlite:///study.db"``) or a file path (SQLite).
    connect_timeout : float, default 10
        Seconds to wait for the server before a clear :class:`StorageError`.
    lock_timeout : float, default 10
        Seconds a change waits for a study locked by another process before a clear
        :class:`StorageError` (PostgreSQL's ``lock_timeout``; SQLite's busy timeout).
    idle_in_transaction_timeout : float or None, default 20
        PostgreSQL ends a writing session that stays this many seconds inside a transaction
        without a statement (``idle_in_transaction_session_timeout``): a process frozen
        (``SIGSTOP``, a hung machine) while it holds a study's lock loses its transaction
        (nothing of it is written) and the lock is free again. Reads have none (they hold
        no lock). None: no limit.
    statement_timeout : float or None, default 60
        PostgreSQL cancels a statement running longer (``statement_timeout``); None: no
        limit.
    allow_foreign_tables : bool, default False
        combex adds its tables only to a database without tables of other programs (an
        application's SQLite file, an optuna database...) unless this is True.
    durability : {"full", "normal"}, default "full"
        ``"full"``: a change that returned survives a power loss (SQLite: the write-ahead
        log is synced at every commit, ``synchronous=FULL``; PostgreSQL:
        ``synchronous_commit=on``, the server's default). ``"normal"``: a power loss (not a
        crash of the process) may undo the last changes that returned, never leave the
        database damaged (SQLite ``synchronous=NORMAL``, PostgreSQL
        ``synchronous_commit=off``); faster (``benchmarks/studies_throughput.py``).
    engine_kwargs : dict, optional
        Passed to :func:`sqlalchemy.create_engine`.

    Raises
    ------
    StorageError
        When the database cannot be reached.
    SchemaVersionError
        When it holds a combex schema of another version.

    Notes
    -----
    With the defaults, a process frozen inside a transaction on PostgreSQL makes the others'
    changes of that study fail with a :class:`StorageError` naming the lock after 10 s, and
    succeed again once the server has ended the frozen session (20 s after its last
    statement); when it wakes, its transaction fails with a :class:`StorageError` and
    nothing of it was written. SQLite has no server to end a frozen writer: its lock holds
    until the process dies or wakes (the others get the :class:`StorageError` after
    ``lock_timeout``).
    """

    def __init__(self, url: Any, *, connect_timeout: float = 10.0, lock_timeout: float = 10.0,
                 idle_in_transaction_timeout: float | None = 20.0, statement_timeout: float | None = 60.0,
                 durability: str = "full", allow_foreign_tables: bool = False,
                 engine_kwargs: dict | None = None) -> None:

        sa = self.sa = _sa()
        if not isinstance(url, str) and not hasattr(url, "__fspath__"):
            raise StorageError(f"The storage must be a SQLAlchemy URL or a file path. Got {url!r} instead.")
        owner = "SQLStorage"
        connect_timeout = check_float(connect_timeout, "connect_timeout", owner=owner, low=0.0, closed="neither")
        self.lock_timeout = check_float(lock_timeout, "lock_timeout", owner=owner, low=0.0, closed="neither")
        self.idle_in_transaction_timeout = None if idle_in_transaction_timeout is None else check_float(
            idle_in_transaction_timeout, "idle_in_transaction_timeout", owner=owner, low=0.0, closed="neither")
        self.statement_timeout = None if statement_timeout is None else check_float(
            statement_timeout, "statement_timeout", owner=owner, low=0.0, closed="neither")
        if durability not in ("full", "normal"):
            raise InvalidParameterError(f"The 'durability' parameter of SQLStorage must be 'full' or 'normal'. "
                                        f"Got {durability!r} instead.")
        self.durability = durability
        if not isinstance(allow_foreign_tables, bool):
            raise InvalidParameterError(f"The 'allow_foreign_tables' parameter of SQLStorage must be a bool. Got "
                                        f"{allow_foreign_tables!r} instead.")
        self.allow_foreign_tables = allow_foreign_tables
        text = os.fspath(url)
        if "://" not in text:
            text = "sqlite:///" + os.path.abspath(text)
        self.url = text
        kwargs = dict(engine_kwargs or {})
        self._sqlite = text.startswith("sqlite")
        read_kwargs = dict(kwargs)
        if self._sqlite:
            kwargs.setdefault("connect_args", {"timeout": self.lock_timeout})
            read_kwargs.setdefault("connect_args", {"timeout": self.lock_timeout})
        elif text.startswith("postgresql"):
            def ms(x: float | None) -> int:
                return 0 if x is None else max(1, int(round(1000 * x)))

            opts = (f"-c lock_timeout={ms(self.lock_timeout)} -c statement_timeout={ms(self.statement_timeout)} "
                    f"-c idle_in_transaction_session_timeout={ms(self.idle_in_transaction_timeout)} "
                    f"-c synchronous_commit={'on' if durability == 'full' else 'off'}")
            kwargs.setdefault("connect_args", {"connect_timeout": max(1, int(connect_timeout)), "options": opts})
            read_kwargs.setdefault("connect_args", {
                "connect_timeout": max(1, int(connect_timeout)),
                "options": f"-c statement_timeout={ms(self.statement_timeout)} "
                           "-c idle_in_transaction_session_timeout=0"})
        kwargs.setdefault("pool_pre_ping", not self._sqlite)
        read_kwargs.setdefault("pool_pre_ping", not self._sqlite)
        try:
            self.engine = sa.create_engine(text, **kwargs)
        except Exception as exc:  # bad URL, unknown dialect, missing driver
            raise StorageError(f"Cannot open the storage {self._safe_url()!r}: {exc}") from None
        if self._sqlite:
            from sqlalchemy import event  # SQLAlchemy is optional (the studies extra)

            @event.listens_for(self.engine, "connect")
            def _connect(dbapi_conn: Any, record: Any) -> None:
                dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.close()

            @event.listens_for(self.engine, "begin")
            def _begin(conn: Any) -> None:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

            # reads (the dashboard, catching up before a locked transaction) take no write lock
            self._read_engine = sa.create_engine(text, **read_kwargs)

            @event.listens_for(self._read_engine, "connect")
            def _connect_read(dbapi_conn: Any, record: Any) -> None:
                dbapi_conn.isolation_level = None

            @event.listens_for(self._read_engine, "begin")
            def _begin_read(conn: Any) -> None:
                conn.exec_driver_sql("BEGIN")
        else:
            # reads: one consistent snapshot per read transaction, no row lock, no idle limit
            self._read_engine = sa.create_engine(text, **read_kwargs).execution_options(
                isolation_level="REPEATABLE READ")

        tb = _tables(sa)
        self._md, self._schema, self._s, self._t, self._snap = (tb["md"], tb["schema"], tb["studies"], tb["tickets"],
                                                                tb["snapshots"])
        self._corr, self._batches, self._asst = tb["corrections"], tb["batches"], tb["assistants"]
        t = self._t
        self._add_stmt = t.insert().returning(t.c.id)
        self._tell_stmt = (t.update().where(t.c.id == sa.bindparam("tid"), t.c.study_id == sa.bindparam("sid"),
                                            t.c.state != "told")
                           .values(state="told", told_seq=sa.bindparam("seq"), reward_sum=sa.bindparam("r"),
                                   told_at=sa.bindparam("at"), stat=sa.bindparam("stat"), told_by=sa.bindparam("by"),
                                   checksum=sa.bindparam("ck")))
        self._init_schema()

    def _safe_url(self) -> str:
        try:
            return self.sa.engine.make_url(self.url).render_as_string(hide_password=True)
        except Exception:
            return "<unparsable URL>"

    def _cli_url(self) -> str:
        """The storage as the CLI takes it (a file path for SQLite)."""
        if self._sqlite and self.url.startswith("sqlite:///"):
            return self.url[len("sqlite:///"):]
        return self._safe_url()

    def _connect_error(self, exc: Exception) -> StorageError:
        return self._db_error(exc)

    def _init_schema(self, write: bool = False) -> None:
        """Check the schema in a read transaction; create it (a write transaction) only in
        a database without it."""
        sa = self.sa
        try:
            with (self.engine if write else self._read_engine).begin() as conn:
                insp = sa.inspect(conn)
                names = set(insp.get_table_names())
                if "combex_schema" in names:
                    versions = [r[0] for r in conn.execute(sa.select(self._schema.c.version))]
                    if len(versions) != 1:
                        raise SchemaVersionError(
                            f"The storage {self._safe_url()!r} has a damaged combex_schema table "
                            f"({len(versions)} rows, expected 1)."
                        )
                    v = int(versions[0])
                    if v > SCHEMA_VERSION:
                        raise SchemaVersionError(
                            f"The storage {self._safe_url()!r} was written with combex storage schema "
                            f"version {v}, newer than this combex's {SCHEMA_VERSION}; upgrade combex to "
                            "read it (it is never read with an older schema)."
                        )
                    if v < SCHEMA_VERSION:
                        raise SchemaVersionError(
                            f"The storage {self._safe_url()!r} was written with combex storage schema version {v}, "
                            f"older than this combex's {SCHEMA_VERSION}; it is never changed silently: upgrade it "
                            f"with `combex study upgrade {self._cli_url()}` (back it up first: `combex study backup`)."
                        )
                    return
                if names & {"combex_studies", "combex_tickets", "combex_snapshots"}:
                    raise SchemaVersionError(
                        f"The storage {self._safe_url()!r} has combex tables but no combex_schema "
                        "version row; refusing to guess its layout."
                    )
                foreign = sorted(n for n in names if not n.startswith(("combex_", "sqlite_")))
                if foreign and not self.allow_foreign_tables:
                    what = ("an optuna database" if {"studies", "trials"} <= set(foreign) else
                            "tables of another program")
                    shown = ", ".join(foreign[:8]) + (", ..." if len(foreign) > 8 else "")
                    raise StorageError(
                        f"The database {self._safe_url()!r} holds {what} ({shown}); combex does not add its tables "
                        "to it. Use a database of its own, or SQLStorage(url, allow_foreign_tables=True) to share "
                        "this one.")
                if not write:
                    create = True
                else:
                    create = False
                    self._md.create_all(conn)
                    conn.execute(self._schema.insert().values(version=SCHEMA_VERSION))
            if create:
                return self._init_schema(write=True)
        except SchemaVersionError:
            raise
        except sa.exc.IntegrityError:  # pragma: no cover - two processes created it at once
            return self._init_schema()
        except sa.exc.OperationalError as exc:
            if "already exists" in str(exc):  # another process created the tables meanwhile
                return self._init_schema()
            raise self._connect_error(exc) from None
        except sa.exc.SQLAlchemyError as exc:
            raise self._connect_error(exc) from None

    # ------------------------------------------------------------------ rows
    def _record(self, r: Any) -> StudyRecord:
        return StudyRecord(
            name=r.name, problem=json.loads(r.problem), solver=r.solver, solver_params=json.loads(r.solver_params),
            seed=int(r.seed), lease_seconds=float(r.lease_seconds), snapshot_every=int(r.snapshot_every),
            policy=r.policy, status=r.status, result=_load(r.result), n_told=int(r.n_told),
            created_at=float(r.created_at), budget=None if r.budget is None else int(r.budget),
            n_corrections=int(r.n_corrections), progress=_load(r.progress), aggregates=_load(r.aggregates),
            history=_load(r.history) or [],
        )

    @staticmethod
    def _ticket(r: Any, study: str) -> TicketRow:
        return TicketRow(
            id=int(r.id), study=study, arm=json.loads(r.arm), count=int(r.count), batch=int(r.batch),
            entry=int(r.entry), state=r.state, issued_at=float(r.issued_at), lease_deadline=float(r.lease_deadline),
            told_seq=None if r.told_seq is None else int(r.told_seq),
            reward_sum=None if r.reward_sum is None else float(r.reward_sum),
            told_at=None if r.told_at is None else float(r.told_at),
            stat=_load(r.stat), reissue_of=None if r.reissue_of is None else int(r.reissue_of),
            issued_seq=int(r.issued_seq), asked_by=r.asked_by, told_by=r.told_by, checksum=r.checksum,
        )

    @contextlib.contextmanager
    def _begin(self, read: bool = False, integrity: bool = False) -> Iterator[Any]:
        """A transaction; database errors become :class:`StorageError` (``integrity``:
        an :class:`~sqlalchemy.exc.IntegrityError` is passed on to the caller)."""
        sa = self.sa
        try:
            with (self._read_engine if read else self.engine).begin() as conn:
                yield conn
        except sa.exc.DBAPIError as exc:
            if integrity and isinstance(exc, sa.exc.IntegrityError):
                raise
            raise self._db_error(exc) from None

    def _db_error(self, exc: Exception) -> StorageError:
        """A clear :class:`StorageError` for a database error."""
        orig = getattr(exc, "orig", exc)
        code = getattr(orig, "sqlstate", None) or getattr(getattr(orig, "diag", None), "sqlstate", None)
        text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        where = self._safe_url()
        if code == "55P03" or "lock timeout" in text or (self._sqlite and "database is locked" in text):
            return StorageError(
                f"The study in {where!r} stayed locked by another process for more than {self.lock_timeout:g} s "
                "(lock_timeout); nothing was written. That process may be frozen: PostgreSQL ends its session "
                f"after idle_in_transaction_timeout={self.idle_in_transaction_timeout} s. Try again.")
        if code == "57014" or "statement timeout" in text:
            return StorageError(f"A statement on {where!r} ran longer than statement_timeout="
                                f"{self.statement_timeout} s and was cancelled; nothing was written ({text}).")
        if code == "25P03" or "idle-in-transaction" in text or "terminating connection" in text \
                or "server closed the connection" in text or "consuming input failed" in text:
            return StorageError(
                f"The storage {where!r} ended this process's transaction (it stayed idle inside it longer than "
                f"idle_in_transaction_timeout={self.idle_in_transaction_timeout} s, e.g. frozen, or the server "
                f"went away): nothing of it was written; try again ({text}).")
        if isinstance(exc, self.sa.exc.OperationalError) or code is None:
            return StorageError(f"Cannot reach the storage {where!r}: {text}")
        return StorageError(f"The storage {where!r} refused an operation ({type(orig).__name__}: {text}).")

    # ------------------------------------------------------------------ contract
    def create_study(self, record: StudyRecord) -> None:
        s = self._s
        try:
            with self._begin(integrity=True) as conn:
                conn.execute(s.insert().values(
                    name=record.name, problem=_dump(record.problem), solver=record.solver,
                    solver_params=_dump(record.solver_params), seed=int(record.seed),
                    lease_seconds=float(record.lease_seconds), snapshot_every=int(record.snapshot_every),
                    policy=record.policy, status=record.status,
                    result=None if record.result is None else _dump(record.result),
                    n_told=int(record.n_told), created_at=float(record.created_at or time.time()),
                    budget=record.budget, n_corrections=int(record.n_corrections),
                    progress=None if record.progress is None else _dump(record.progress),
                    aggregates=None if record.aggregates is None else _dump(record.aggregates),
                    history=_dump(list(record.history)),
                ))
        except self.sa.exc.IntegrityError:
            raise DuplicatedStudyError(f"A study named {record.name!r} already exists in {self!r}.") from None

    def _row(self, conn: Any, name: str, lock: bool = False) -> Any:
        stmt = self._s.select().where(self._s.c.name == name)
        if lock and not self._sqlite:
            stmt = stmt.with_for_update()
        row = conn.execute(stmt).first()
        if row is None:
            raise StudyNotFoundError(f"No study named {name!r} in {self!r}.")
        return row

    def get_study(self, name: str) -> StudyRecord:
        with self._begin(read=True) as conn:
            return self._record(self._row(conn, name))

    def backup(self, path: Any) -> str:
        """A consistent copy of this SQLite storage in a new file ``path``, taken while studies
        run (SQLite's online backup, which reads through the write-ahead log: a plain copy of
        the file alone can miss the newest writes, which sit in ``<file>-wal`` until a
        checkpoint). Returns the copy's path. A PostgreSQL storage is copied with the
        server's own tools (``pg_dump``).

        Raises
        ------
        InvalidParameterError
            If ``path`` exists (a backup never overwrites a file).
        StorageError
            If the storage is not an SQLite file, or the copy fails."""
        src = self._cli_url()
        if not self._sqlite or src == self._safe_url() or not os.path.isfile(src):
            raise StorageError(f"combex study backup copies an SQLite file; this storage is {self._safe_url()}: "
                               f"copy a PostgreSQL database with pg_dump.")
        dst = os.path.abspath(os.fspath(path))
        if os.path.exists(dst):
            raise InvalidParameterError(f"The 'out' parameter of the backup must be a new file; {dst} exists. "
                                        f"Got {os.fspath(path)!r}.")
        try:
            with contextlib.closing(sqlite3.connect(src, timeout=self.lock_timeout)) as a, \
                    contextlib.closing(sqlite3.connect(dst)) as b:
                a.backup(b)
        except sqlite3.Error as exc:
            with contextlib.suppress(OSError):
                os.remove(dst)
            raise StorageError(f"The backup of {src} to {dst} failed: {exc}") from exc
        return dst

    def list_studies(self) -> list[StudyRecord]:
        with self._begin(read=True) as conn:
            return [self._record(r) for r in conn.execute(self._s.select().order_by(self._s.c.name))]

    def delete_study(self, name: str) -> None:
        with self._begin() as conn:
            row = self._row(conn, name, lock=True)
            for tab in (self._snap, self._t, self._corr, self._batches, self._asst):
                conn.execute(tab.delete().where(tab.c.study_id == row.id))
            conn.execute(self._s.delete().where(self._s.c.id == row.id))

    def tickets(self, name: str, *, states: tuple[str, ...] | None = None) -> list[TicketRow]:
        t = self._t
        with self._begin(read=True) as conn:
            row = self._row(conn, name)
            stmt = t.select().where(t.c.study_id == row.id)
            if states is not None:
                stmt = stmt.where(t.c.state.in_(list(states)))
            return [self._ticket(r, name) for r in conn.execute(stmt.order_by(t.c.id))]

    def told_since(self, name: str, seq: int) -> list[TicketRow]:
        with self.read(name) as tx:
            return tx.told_since(seq)

    @contextlib.contextmanager
    def transaction(self, name: str) -> Iterator[StudyTransaction]:
        with self._begin() as conn:
            row = self._row(conn, name, lock=True)
            yield _SQLTransaction(self, conn, row)

    @contextlib.contextmanager
    def read(self, name: str) -> Iterator[StudyTransaction]:
        with self._begin(read=True) as conn:
            row = self._row(conn, name)
            yield _SQLTransaction(self, conn, row, read_only=True)

    def close(self) -> None:
        self.engine.dispose()
        self._read_engine.dispose()

    def __repr__(self) -> str:
        return f"SQLStorage({self._safe_url()!r})"
