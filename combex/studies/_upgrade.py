"""``combex study upgrade STORAGE``: bring a storage written by an older combex to the
current schema, explicitly (a storage is never upgraded silently).

Schema 1 -> 2, in one transaction (all or nothing): the study rows gain ``budget`` (none),
``n_corrections`` (0), the derived ``progress`` (recomputed at the first read) and
``aggregates`` (computed from the told log here) and ``history``; the tickets gain
``issued_seq``, ``asked_by`` / ``told_by`` (None: the owner) and the checksum of every told
row; the tables of corrections, recorded batches (the complete batches of batch-policy
studies are recorded from their told rows) and assistants are created; snapshots (a cache,
in the format of the old schema) are dropped and rebuilt as the studies run.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..exceptions import SchemaVersionError, StorageError
from ._sql import SQLStorage, _sa, _tables
from ._storage import SCHEMA_VERSION, row_checksum
from ._study import _add_to_aggregates, _new_aggregates

__all__ = ["upgrade_storage"]


def upgrade_storage(storage: Any, **kwargs: Any) -> dict[str, Any]:
    """Upgrade a SQL storage to schema :data:`SCHEMA_VERSION` (see the module docstring).

    Parameters
    ----------
    storage : str or path-like
        A SQLAlchemy URL or a SQLite file path.
    **kwargs
        Passed to :class:`~combex.studies.SQLStorage` (timeouts...).

    Returns
    -------
    dict
        ``{"from": old version, "to": new version, "studies": [names]}`` (``from`` equals
        ``to`` when the storage was current already).

    Raises
    ------
    SchemaVersionError
        When the storage has no combex schema, or a newer one than this combex.
    StorageError
        When it cannot be reached (nothing is changed on any error).
    """
    sa = _sa()
    text = os.fspath(storage)
    if "://" not in text:
        if not os.path.exists(text):
            raise StorageError(f"There is no storage file {text!r} to upgrade.")
        text = "sqlite:///" + os.path.abspath(text)
    probe = SQLStorage.__new__(SQLStorage)
    probe.sa, probe.url, probe._sqlite = sa, text, text.startswith("sqlite")
    engine = sa.create_engine(text)
    try:
        with engine.begin() as conn:
            if probe._sqlite:
                conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            names = set(sa.inspect(conn).get_table_names())
            if "combex_schema" not in names:
                raise SchemaVersionError(f"The storage {probe._safe_url()!r} has no combex schema to upgrade.")
            version = int(conn.exec_driver_sql("SELECT version FROM combex_schema").scalar_one())
            if version > SCHEMA_VERSION:
                raise SchemaVersionError(f"The storage {probe._safe_url()!r} has schema version {version}, newer than "
                                         f"this combex's {SCHEMA_VERSION}: upgrade combex instead.")
            if version < 2:
                _v1_to_v2(sa, conn, probe)
            conn.exec_driver_sql(f"UPDATE combex_schema SET version = {SCHEMA_VERSION}")
    except (SchemaVersionError, StorageError):
        raise
    except sa.exc.DBAPIError as exc:
        raise probe._db_error(exc) from None
    finally:
        engine.dispose()
    st = SQLStorage(storage, **kwargs)
    try:
        studies = [r.name for r in st.list_studies()]
    finally:
        st.close()
    return {"from": version, "to": SCHEMA_VERSION, "studies": studies}


def _v1_to_v2(sa: Any, conn: Any, probe: Any) -> None:
    tb = _tables(sa)
    for col, ddl in (("budget", "BIGINT"), ("n_corrections", "INTEGER NOT NULL DEFAULT 0"), ("progress", "TEXT"),
                     ("aggregates", "TEXT"), ("history", "TEXT")):
        conn.exec_driver_sql(f"ALTER TABLE combex_studies ADD COLUMN {col} {ddl}")
    for col, ddl in (("issued_seq", "INTEGER NOT NULL DEFAULT 0"), ("asked_by", "VARCHAR(255)"),
                     ("told_by", "VARCHAR(255)"), ("checksum", "VARCHAR(32)")):
        conn.exec_driver_sql(f"ALTER TABLE combex_tickets ADD COLUMN {col} {ddl}")
    conn.exec_driver_sql("DELETE FROM combex_snapshots")
    for col, ddl in (("n_corrections", "INTEGER NOT NULL DEFAULT 0"), ("checksum", "VARCHAR(64) NOT NULL DEFAULT ''")):
        conn.exec_driver_sql(f"ALTER TABLE combex_snapshots ADD COLUMN {col} {ddl}")
    tb["md"].create_all(conn, tables=[tb["corrections"], tb["batches"], tb["assistants"]])
    t, s = tb["tickets"], tb["studies"]
    for study in conn.execute(sa.select(s.c.id, s.c.problem, s.c.n_told, s.c.policy)).fetchall():
        spec = json.loads(study.problem)
        agg = _new_aggregates(spec)
        updates = []
        batches: dict[int, dict[int, tuple[Any, int]]] = {}
        rows = conn.execute(sa.select(t.c.id, t.c.arm, t.c.count, t.c.batch, t.c.entry, t.c.told_seq, t.c.reward_sum)
                            .where(t.c.study_id == study.id, t.c.state == "told").order_by(t.c.told_seq))
        for r in rows:
            arm = json.loads(r.arm)
            updates.append({"tid": r.id, "ck": row_checksum(r.id, arm, r.count, r.batch, r.entry, r.told_seq,
                                                            float(r.reward_sum))})
            _add_to_aggregates(agg, arm, int(r.count), float(r.reward_sum))
            if r.batch >= 0:
                batches.setdefault(int(r.batch), {}).setdefault(int(r.entry), (arm, int(r.count)))
        if updates:
            conn.execute(t.update().where(t.c.id == sa.bindparam("tid")).values(checksum=sa.bindparam("ck")), updates)
        conn.execute(t.update().where(t.c.study_id == study.id, t.c.state == "pending")
                     .values(issued_seq=int(study.n_told)))
        # the batches as they were handed out: every batch before the last one is complete
        # (a batch was handed out once the previous one was folded); the last one is
        # recorded when it is next handed out
        done = [b for b in sorted(batches) if b < max(batches)] if batches else []
        if study.policy == "batch" and done:
            conn.execute(tb["batches"].insert(), [
                {"study_id": study.id, "batch": b, "arms": json.dumps([batches[b][e][0] for e in sorted(batches[b])]),
                 "counts": json.dumps([batches[b][e][1] for e in sorted(batches[b])])} for b in done])
        conn.execute(s.update().where(s.c.id == study.id).values(
            aggregates=json.dumps(agg), history=json.dumps([{"event": "upgraded", "from_schema": 1}])))
