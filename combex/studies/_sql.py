"""SQL storage (SQLAlchemy): SQLite by file path, any SQLAlchemy URL (PostgreSQL...).

Schema (version :data:`~combex.studies._storage.SCHEMA_VERSION`, in table
``combex_schema``): ``combex_studies`` (one row per study: JSON settings, status, result,
``n_told``), ``combex_tickets`` (the append-only evaluation log, unique
``(study_id, told_seq)``), ``combex_snapshots`` (serialized states, a cache). A database
whose ``combex_schema`` names another version is refused, never read.

Locking: SQLite transactions start with ``BEGIN IMMEDIATE`` (one writer at a time, WAL
journal so readers never wait); other databases lock the study row with
``SELECT ... FOR UPDATE`` at the start of every transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any, Iterator

from ._errors import DuplicatedStudyError, SchemaVersionError, StorageError, StudyNotFoundError
from ._storage import SCHEMA_VERSION, BaseStorage, StudyRecord, StudyTransaction, TicketRow

__all__ = ["SQLStorage"]


def _sa() -> Any:
    try:
        import sqlalchemy
    except ImportError as exc:  # pragma: no cover - the studies extra
        raise ImportError("SQL storages need SQLAlchemy: pip install 'combex[studies]'") from exc
    return sqlalchemy


def _tables(sa: Any) -> tuple[Any, ...]:
    md = sa.MetaData()
    schema = sa.Table("combex_schema", md, sa.Column("version", sa.Integer, nullable=False))
    studies = sa.Table(
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
    )
    tickets = sa.Table(
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
        sa.UniqueConstraint("study_id", "told_seq", name="uq_combex_told_seq"),
        sa.Index("ix_combex_tickets_state", "study_id", "state"),
        sa.Index("ix_combex_tickets_batch", "study_id", "batch"),
    )
    snapshots = sa.Table(
        "combex_snapshots", md,
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), primary_key=True),
        sa.Column("told_seq", sa.Integer, primary_key=True),
        sa.Column("payload", sa.LargeBinary, nullable=False),
    )
    return md, schema, studies, tickets, snapshots


def _dump(x: Any) -> str:
    return json.dumps(x, sort_keys=True, allow_nan=False)


class _SQLTransaction(StudyTransaction):
    def __init__(self, st: "SQLStorage", conn: Any, row: Any) -> None:
        self._st = st
        self._c = conn
        self._id = row.id
        self.study = st._record(row)

    def _rows(self, stmt: Any) -> list[TicketRow]:
        return [self._st._ticket(r, self.study.name) for r in self._c.execute(stmt)]

    def told_since(self, seq: int) -> list[TicketRow]:
        t = self._st._t
        return self._rows(t.select().where(t.c.study_id == self._id, t.c.told_seq > seq).order_by(t.c.told_seq))

    def pending(self) -> list[TicketRow]:
        t = self._st._t
        return self._rows(t.select().where(t.c.study_id == self._id, t.c.state == "pending").order_by(t.c.id))

    def expired(self, now: float, limit: int) -> list[TicketRow]:
        t = self._st._t
        return self._rows(t.select().where(t.c.study_id == self._id, t.c.state == "pending",
                                           t.c.lease_deadline < now).order_by(t.c.id).limit(limit))

    def batch_entries(self, batch: int) -> list[int]:
        t = self._st._t
        stmt = (self._st.sa.select(t.c.entry)
                .where(t.c.study_id == self._id, t.c.batch == batch, t.c.state.in_(("pending", "told")))
                .order_by(t.c.entry))
        return [int(r[0]) for r in self._c.execute(stmt)]

    def get_ticket(self, ticket_id: int) -> TicketRow | None:
        t = self._st._t
        rows = self._rows(t.select().where(t.c.study_id == self._id, t.c.id == int(ticket_id)))
        return rows[0] if rows else None

    def add_ticket(self, arm: Any, count: int, batch: int, entry: int, issued_at: float,
                   lease_deadline: float, reissue_of: int | None = None) -> TicketRow:
        t = self._st._t
        values = dict(study_id=self._id, arm=_dump(arm), count=int(count), batch=int(batch), entry=int(entry),
                      state="pending", issued_at=float(issued_at), lease_deadline=float(lease_deadline),
                      reissue_of=reissue_of)
        res = self._c.execute(self._st._add_stmt, values)
        tid = int(res.scalar_one())
        return TicketRow(tid, self.study.name, arm, int(count), int(batch), int(entry), "pending",
                         float(issued_at), float(lease_deadline), reissue_of=reissue_of)

    def set_state(self, ticket_ids: list[int], state: str) -> None:
        if not ticket_ids:
            return
        t = self._st._t
        self._c.execute(t.update().where(t.c.study_id == self._id, t.c.id.in_([int(i) for i in ticket_ids]),
                                         t.c.state == "pending").values(state=state))

    def tell(self, ticket_id: int, reward_sum: float, told_at: float) -> int:
        t, s = self._st._t, self._st._s
        seq = self.study.n_told + 1
        res = self._c.execute(t.update().where(t.c.study_id == self._id, t.c.id == int(ticket_id),
                                               t.c.state == "pending")
                              .values(state="told", told_seq=seq, reward_sum=float(reward_sum),
                                      told_at=float(told_at)))
        if res.rowcount != 1:  # pragma: no cover - the study checks the ticket first
            raise StorageError(f"Ticket {ticket_id} of study {self.study.name!r} is not pending.")
        self._c.execute(s.update().where(s.c.id == self._id).values(n_told=seq))
        from dataclasses import replace

        self.study = replace(self.study, n_told=seq)
        return seq

    def get_tickets(self, ticket_ids: list[int]) -> dict[int, TicketRow]:
        t = self._st._t
        ids = sorted({int(i) for i in ticket_ids})
        rows = self._rows(t.select().where(t.c.study_id == self._id, t.c.id.in_(ids)))
        return {r.id: r for r in rows}

    def tell_many(self, items: list[tuple[int, float, float, dict | None]]) -> list[int]:
        if not items:
            return []
        first = self.study.n_told + 1
        params = [{"tid": int(tid), "seq": first + k, "r": float(r), "at": float(at),
                   "stat": None if not stat else json.dumps(stat)}
                  for k, (tid, r, at, stat) in enumerate(items)]
        res = self._c.execute(self._st._tell_stmt, params)
        if res.rowcount not in (-1, len(params)):  # pragma: no cover - the study checks tickets first
            raise StorageError(f"Some tickets of study {self.study.name!r} were not pending.")
        last = first + len(items) - 1
        s = self._st._s
        self._c.execute(s.update().where(s.c.id == self._id).values(n_told=last))
        from dataclasses import replace

        self.study = replace(self.study, n_told=last)
        return list(range(first, last + 1))

    def set_stat(self, ticket_id: int, stat: dict) -> None:
        t = self._st._t
        self._c.execute(t.update().where(t.c.id == int(ticket_id)).values(stat=json.dumps(stat)))

    def latest_snapshot(self) -> tuple[int, bytes] | None:
        sn = self._st._snap
        row = self._c.execute(sn.select().where(sn.c.study_id == self._id)
                              .order_by(sn.c.told_seq.desc()).limit(1)).first()
        return None if row is None else (int(row.told_seq), bytes(row.payload))

    def save_snapshot(self, told_seq: int, payload: bytes) -> None:
        sn = self._st._snap
        self._c.execute(sn.delete().where(sn.c.study_id == self._id, sn.c.told_seq == int(told_seq)))
        self._c.execute(sn.insert().values(study_id=self._id, told_seq=int(told_seq), payload=bytes(payload)))
        # keep the two newest snapshots
        old = self._c.execute(self._st.sa.select(sn.c.told_seq).where(sn.c.study_id == self._id)
                              .order_by(sn.c.told_seq.desc()).offset(2)).fetchall()
        if old:
            self._c.execute(sn.delete().where(sn.c.study_id == self._id,
                                              sn.c.told_seq.in_([int(r[0]) for r in old])))

    def finish(self, status: str, result: dict) -> None:
        s = self._st._s
        self._c.execute(s.update().where(s.c.id == self._id).values(status=status, result=_dump(result)))
        from dataclasses import replace

        self.study = replace(self.study, status=status, result=result)


class SQLStorage(BaseStorage):
    """A storage in a SQL database through SQLAlchemy.

    Parameters
    ----------
    url : str or path-like
        A SQLAlchemy URL (``"postgresql+psycopg://user@host:port/db"``,
        ``"sqlite:///study.db"``) or a file path (SQLite).
    connect_timeout : float, default 10
        Seconds to wait for the server (or, in SQLite, for a lock) before a clear
        :class:`StorageError`.
    engine_kwargs : dict, optional
        Passed to :func:`sqlalchemy.create_engine`.

    Raises
    ------
    StorageError
        When the database cannot be reached.
    SchemaVersionError
        When it holds a combex schema of another version.
    """

    def __init__(self, url: Any, *, connect_timeout: float = 10.0, engine_kwargs: dict | None = None) -> None:
        sa = self.sa = _sa()
        text = os.fspath(url)
        if "://" not in text:
            text = "sqlite:///" + os.path.abspath(text)
        self.url = text
        kwargs = dict(engine_kwargs or {})
        self._sqlite = text.startswith("sqlite")
        if self._sqlite:
            kwargs.setdefault("connect_args", {"timeout": max(float(connect_timeout), 30.0)})
        elif text.startswith("postgresql"):
            kwargs.setdefault("connect_args", {"connect_timeout": max(1, int(connect_timeout))})
        kwargs.setdefault("pool_pre_ping", not self._sqlite)
        try:
            self.engine = sa.create_engine(text, **kwargs)
        except Exception as exc:  # bad URL, unknown dialect, missing driver
            raise StorageError(f"Cannot open the storage {self._safe_url()!r}: {exc}") from None
        if self._sqlite:
            from sqlalchemy import event

            @event.listens_for(self.engine, "connect")
            def _connect(dbapi_conn: Any, record: Any) -> None:
                dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.close()

            @event.listens_for(self.engine, "begin")
            def _begin(conn: Any) -> None:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

            # reads (the dashboard, catching up before a locked transaction) take no write lock
            self._read_engine = sa.create_engine(text, **kwargs)

            @event.listens_for(self._read_engine, "connect")
            def _connect_read(dbapi_conn: Any, record: Any) -> None:
                dbapi_conn.isolation_level = None

            @event.listens_for(self._read_engine, "begin")
            def _begin_read(conn: Any) -> None:
                conn.exec_driver_sql("BEGIN")
        else:
            self._read_engine = self.engine

        self._md, self._schema, self._s, self._t, self._snap = _tables(sa)
        t = self._t
        self._add_stmt = t.insert().returning(t.c.id)
        self._tell_stmt = (t.update().where(t.c.id == sa.bindparam("tid"), t.c.state == "pending")
                           .values(state="told", told_seq=sa.bindparam("seq"), reward_sum=sa.bindparam("r"),
                                   told_at=sa.bindparam("at"), stat=sa.bindparam("stat")))
        self._init_schema()

    def _safe_url(self) -> str:
        try:
            return self.sa.engine.make_url(self.url).render_as_string(hide_password=True)
        except Exception:
            return "<unparsable URL>"

    def _connect_error(self, exc: Exception) -> StorageError:
        msg = str(getattr(exc, "orig", exc)).strip().splitlines()
        return StorageError(f"Cannot reach the storage {self._safe_url()!r}: {msg[0] if msg else exc}")

    def _init_schema(self) -> None:
        sa = self.sa
        try:
            with self.engine.begin() as conn:
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
                    if v < SCHEMA_VERSION:  # pragma: no cover - no older schema exists yet
                        raise SchemaVersionError(
                            f"The storage {self._safe_url()!r} has schema version {v} < {SCHEMA_VERSION}; "
                            "no migration is known."
                        )
                    return
                if names & {"combex_studies", "combex_tickets", "combex_snapshots"}:
                    raise SchemaVersionError(
                        f"The storage {self._safe_url()!r} has combex tables but no combex_schema "
                        "version row; refusing to guess its layout."
                    )
                self._md.create_all(conn)
                conn.execute(self._schema.insert().values(version=SCHEMA_VERSION))
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
            policy=r.policy, status=r.status, result=None if r.result is None else json.loads(r.result),
            n_told=int(r.n_told), created_at=float(r.created_at),
        )

    @staticmethod
    def _ticket(r: Any, study: str) -> TicketRow:
        return TicketRow(
            id=int(r.id), study=study, arm=json.loads(r.arm), count=int(r.count), batch=int(r.batch),
            entry=int(r.entry), state=r.state, issued_at=float(r.issued_at), lease_deadline=float(r.lease_deadline),
            told_seq=None if r.told_seq is None else int(r.told_seq),
            reward_sum=None if r.reward_sum is None else float(r.reward_sum),
            told_at=None if r.told_at is None else float(r.told_at),
            stat=None if r.stat is None else json.loads(r.stat),
            reissue_of=None if r.reissue_of is None else int(r.reissue_of),
        )

    @contextlib.contextmanager
    def _begin(self, read: bool = False) -> Iterator[Any]:
        sa = self.sa
        try:
            with (self._read_engine if read else self.engine).begin() as conn:
                yield conn
        except sa.exc.OperationalError as exc:
            raise self._connect_error(exc) from None

    # ------------------------------------------------------------------ contract
    def create_study(self, record: StudyRecord) -> None:
        s = self._s
        try:
            with self._begin() as conn:
                conn.execute(s.insert().values(
                    name=record.name, problem=_dump(record.problem), solver=record.solver,
                    solver_params=_dump(record.solver_params), seed=int(record.seed),
                    lease_seconds=float(record.lease_seconds), snapshot_every=int(record.snapshot_every),
                    policy=record.policy, status=record.status,
                    result=None if record.result is None else _dump(record.result),
                    n_told=int(record.n_told), created_at=float(record.created_at or time.time()),
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

    def list_studies(self) -> list[StudyRecord]:
        with self._begin(read=True) as conn:
            return [self._record(r) for r in conn.execute(self._s.select().order_by(self._s.c.name))]

    def delete_study(self, name: str) -> None:
        with self._begin() as conn:
            row = self._row(conn, name, lock=True)
            conn.execute(self._snap.delete().where(self._snap.c.study_id == row.id))
            conn.execute(self._t.delete().where(self._t.c.study_id == row.id))
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
        t = self._t
        with self._begin(read=True) as conn:
            row = self._row(conn, name)
            stmt = t.select().where(t.c.study_id == row.id, t.c.told_seq > int(seq)).order_by(t.c.told_seq)
            return [self._ticket(r, name) for r in conn.execute(stmt)]

    @contextlib.contextmanager
    def transaction(self, name: str) -> Iterator[StudyTransaction]:
        with self._begin() as conn:
            row = self._row(conn, name, lock=True)
            yield _SQLTransaction(self, conn, row)

    def close(self) -> None:
        self.engine.dispose()
        self._read_engine.dispose()

    def __repr__(self) -> str:
        return f"SQLStorage({self._safe_url()!r})"
