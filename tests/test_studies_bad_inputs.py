"""Every bad input to a live study is a clear error naming the culprit, and writes nothing.

The cases are those of ``benchmarks/studies_bad_inputs.py`` (one table: the script counts
how a combex answers them, this test requires a clear answer for each): storage cases on
the in-memory, SQLite and PostgreSQL backends, CLI cases on SQLite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from _studies_helpers import PgCluster  # noqa: E402

_spec = importlib.util.spec_from_file_location("studies_bad_inputs", ROOT / "benchmarks" / "studies_bad_inputs.py")
bad = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bad)

STORAGE = [c for c in bad.CASES if c[1] == "storage"]
CLI = [c for c in bad.CASES if c[1] == "cli"]
#: cases of modules another engineer owns (the web app replaces combex/dashboard.py)
ELSEWHERE = {"cli-dashboard-port-99999"}


@pytest.fixture(scope="module")
def pg():
    cluster = PgCluster()
    yield cluster
    cluster.stop()


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgresql"])
@pytest.mark.parametrize("cid, kind, fn, expect, new", STORAGE, ids=[c[0] for c in STORAGE])
def test_bad_storage_input(cid, kind, fn, expect, new, backend, tmp_path, request):
    if backend == "postgresql" and cid == "storage-int":
        pytest.skip("no storage involved")
    url = {"memory": None, "sqlite": str(tmp_path / "s.db")}.get(backend) or (
        request.getfixturevalue("pg").new_database())
    verdict, detail = bad.classify_storage(fn, url, expect)
    assert verdict == "clear", detail


@pytest.mark.parametrize("cid, kind, fn, expect, new", CLI, ids=[c[0] for c in CLI])
def test_bad_cli_input(cid, kind, fn, expect, new, tmp_path):
    if cid in ELSEWHERE:
        pytest.skip("combex/dashboard.py is replaced by the web app (its engineer checks the port)")
    verdict, detail = bad.classify_cli(fn, tmp_path, expect)
    assert verdict == "clear", detail


def test_foreign_tables_are_shared_only_when_asked(tmp_path):
    import sqlite3

    import combex.studies as cs

    path = tmp_path / "app.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    con.commit()
    con.close()
    with pytest.raises(cs.StorageError, match="tables of another program.*invoices.*allow_foreign_tables"):
        cs.SQLStorage(path)
    st = cs.SQLStorage(path, allow_foreign_tables=True)
    cs.create_study(storage=st, name="s", problem=cs.problem_spec(3), solver="lucb", solver_params={"K": 1})
    assert cs.SQLStorage(path).list_studies()[0].name == "s"  # a combex database now: opened as such
    tables = {r[0] for r in sqlite3.connect(path).execute("select name from sqlite_master where type='table'")}
    assert "invoices" in tables and "combex_tickets" in tables
