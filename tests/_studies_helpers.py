"""Helpers of the study tests: a temporary PostgreSQL 15 cluster and worker processes.

The cluster is a real server (``initdb`` + ``pg_ctl`` of Debian's postgresql-15 on a free
port in a temporary directory; as root it runs as the ``postgres`` user through
``runuser``). When the binaries are missing the PostgreSQL tests skip, except under CI
(``CI`` set), where they fail: CI must run them (``.ci/run`` installs the package).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("COMBEX_PG_BIN", "/usr/lib/postgresql/15/bin"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            msg = f"PostgreSQL binaries not found in {PG_BIN} (apt-get install postgresql)"
            if os.environ.get("CI"):
                pytest.fail(msg + "; CI must run the PostgreSQL tests")
            pytest.skip(msg)
        self.dir = Path(tempfile.mkdtemp(prefix="combex-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        root = os.geteuid() == 0
        self.prefix = ["runuser", "-u", "postgres", "--"] if root else []
        if root:
            os.chmod(self.dir, 0o755)
            shutil.chown(self.dir, "postgres", "postgres")
        self._run([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                   "--no-sync"])
        self._run([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
                   "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                         f"-c synchronous_commit=off -c full_page_writes=off -c max_connections=100",
                   "start"])
        self.n = 0

    def _run(self, cmd: list[str]) -> None:
        res = subprocess.run(self.prefix + cmd, capture_output=True, text=True, timeout=120)
        if res.returncode:
            log = (self.dir / "log").read_text() if (self.dir / "log").exists() else ""
            raise RuntimeError(f"{cmd[0]} failed: {res.stdout}\n{res.stderr}\n{log}")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        """A fresh empty database; returns its URL."""
        import sqlalchemy as sa

        self.n += 1
        name = f"t{self.n}"
        eng = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with eng.connect() as c:
            c.exec_driver_sql(f"CREATE DATABASE {name}")
        eng.dispose()
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(self.prefix + [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w",
                                      "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def make_v1_storage(url: str, studies: list) -> None:
    """Write ``studies`` (Study objects of any storage) into ``url`` in the layout of
    storage schema 1 (the tables and columns combex wrote before schema 2), with a snapshot
    in the old format: what ``combex study upgrade`` meets."""
    import json

    import sqlalchemy as sa

    md = sa.MetaData()
    schema = sa.Table("combex_schema", md, sa.Column("version", sa.Integer, nullable=False))
    st = sa.Table(
        "combex_studies", md, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True), sa.Column("problem", sa.Text, nullable=False),
        sa.Column("solver", sa.String(255), nullable=False), sa.Column("solver_params", sa.Text, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False), sa.Column("lease_seconds", sa.Float, nullable=False),
        sa.Column("snapshot_every", sa.Integer, nullable=False), sa.Column("policy", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False), sa.Column("result", sa.Text, nullable=True),
        sa.Column("n_told", sa.Integer, nullable=False), sa.Column("created_at", sa.Float, nullable=False))
    tk = sa.Table(
        "combex_tickets", md, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), nullable=False),
        sa.Column("arm", sa.Text, nullable=False), sa.Column("count", sa.Integer, nullable=False),
        sa.Column("batch", sa.Integer, nullable=False), sa.Column("entry", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False), sa.Column("issued_at", sa.Float, nullable=False),
        sa.Column("lease_deadline", sa.Float, nullable=False), sa.Column("told_seq", sa.Integer, nullable=True),
        sa.Column("reward_sum", sa.Float, nullable=True), sa.Column("told_at", sa.Float, nullable=True),
        sa.Column("stat", sa.Text, nullable=True), sa.Column("reissue_of", sa.Integer, nullable=True),
        sa.UniqueConstraint("study_id", "told_seq", name="uq_combex_told_seq"),
        sa.Index("ix_combex_tickets_state", "study_id", "state"), sa.Index("ix_combex_tickets_batch", "study_id", "batch"))
    sn = sa.Table(
        "combex_snapshots", md,
        sa.Column("study_id", sa.Integer, sa.ForeignKey("combex_studies.id"), primary_key=True),
        sa.Column("told_seq", sa.Integer, primary_key=True), sa.Column("payload", sa.LargeBinary, nullable=False))
    eng = sa.create_engine(url if "://" in url else "sqlite:///" + url)
    with eng.begin() as conn:
        md.create_all(conn)
        conn.execute(schema.insert().values(version=1))
        for study in studies:
            rec = study.storage.get_study(study.name)
            sid = conn.execute(st.insert().returning(st.c.id).values(
                name=rec.name, problem=json.dumps(rec.problem), solver=rec.solver,
                solver_params=json.dumps(rec.solver_params), seed=rec.seed, lease_seconds=rec.lease_seconds,
                snapshot_every=rec.snapshot_every, policy=rec.policy, status=rec.status,
                result=None if rec.result is None else json.dumps(rec.result), n_told=rec.n_told,
                created_at=rec.created_at)).scalar_one()
            for r in study.storage.tickets(study.name):
                conn.execute(tk.insert().values(
                    study_id=sid, arm=json.dumps(r.arm), count=r.count, batch=r.batch, entry=r.entry, state=r.state,
                    issued_at=r.issued_at, lease_deadline=r.lease_deadline, told_seq=r.told_seq,
                    reward_sum=r.reward_sum, told_at=r.told_at, stat=None if r.stat is None else json.dumps(r.stat),
                    reissue_of=r.reissue_of))
            if rec.n_told:
                conn.execute(sn.insert().values(study_id=sid, told_seq=rec.n_told, payload=b"schema-1 snapshot"))
    eng.dispose()
