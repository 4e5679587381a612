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
