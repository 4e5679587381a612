"""Clean process handling: process-pool workers die with their parent, Ctrl-C
stops a run promptly (exit 130, no traceback, finished runs kept), a closed pipe exits
quietly; ``combex run --out`` checks its file before any work and writes as runs finish."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from combex.cli import main

linux = pytest.mark.skipif(not Path("/proc/self/task").exists() or not hasattr(signal, "SIGKILL"),
                           reason="needs Linux /proc and SIGKILL")

RUN = ["--instance", "jiang-1sparse", "--set", "N=4", "--set", "K=1", "--runs", "2", "--seed", "3"]


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has exited


def _wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


POOL = r"""
import time
from combex.experiments import execute
print("start", flush=True)
execute(time.sleep, [60.0] * 4, backend="processes", jobs=2)
"""


@linux
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_pool_workers_exit_when_the_parent_dies(sig):
    proc = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        _wait_for(lambda: len(_children(proc.pid)) >= 2, 60, "the pool never started its workers")
        workers = _children(proc.pid)
        time.sleep(0.5)  # the initializers have run
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        _wait_for(lambda: not any(_alive(w) for w in workers), 10, f"orphaned workers {workers} still alive")
    finally:
        if proc.poll() is None:  # pragma: no cover
            proc.kill()
            proc.wait()
        for w in workers:  # do not leave orphans behind when the test fails
            if _alive(w):  # pragma: no cover
                os.kill(w, signal.SIGKILL)


@linux
def test_ctrl_c_stops_promptly_keeps_finished_runs_exits_130(tmp_path):
    out = tmp_path / "r.csv"
    cmd = [sys.executable, "-m", "combex.cli", "run", "lil-randlucb", "--instance", "jiang-1sparse",
           "--set", "N=40", "--set", "K=1", "--runs", "400", "--jobs", "2", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= 4, 120, "no run finished")
        workers = _children(proc.pid)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        _, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:  # pragma: no cover
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err, err.decode()
    assert elapsed < 10
    rows = list(csv.DictReader(out.open()))
    assert 3 <= len(rows) < 400
    assert all(r["solver"] == "lil-randlucb" and r["samples"].isdigit() for r in rows)
    _wait_for(lambda: not any(_alive(w) for w in workers), 10, "workers left behind after Ctrl-C")


def test_closed_pipe_exits_quietly():
    r, w = os.pipe()
    os.close(r)  # the reader (`| head`) is gone before combex writes
    proc = subprocess.run([sys.executable, "-m", "combex.cli", "run", "lucb", *RUN, "--json"],
                          stdout=w, stderr=subprocess.PIPE, timeout=120)
    os.close(w)
    assert proc.returncode == 141, proc.stderr.decode()
    assert proc.stderr == b""


def test_run_out_is_checked_before_any_work(tmp_path, capsys, monkeypatch):
    import combex.experiments as ex

    calls = []
    real = ex.run_many
    monkeypatch.setattr(ex, "run_many", lambda *a, **k: calls.append(1) or real(*a, **k))
    existing = tmp_path / "o.json"
    existing.write_text("keep")
    assert main(["run", "lucb", *RUN, "--out", str(existing)]) == 2
    assert "exists" in capsys.readouterr().err and existing.read_text() == "keep"
    assert main(["run", "lucb", *RUN, "--out", str(tmp_path / "nodir" / "o.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert calls == []  # no run was made


def test_run_out_csv_when_the_name_says_so(tmp_path, capsys):
    out = tmp_path / "o.csv"
    assert main(["run", "lil-randlucb", "lucb", *RUN, "--out", str(out), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    rows = list(csv.DictReader(out.open()))
    assert [(r["solver"], int(r["run"])) for r in rows] == [("lil-randlucb", 0), ("lil-randlucb", 1),
                                                              ("lucb", 0), ("lucb", 1)]
    assert [int(r["samples"]) for r in rows] == [x["samples"] for d in docs for x in d["runs"]]
    assert json.loads(rows[0]["params"]) == {"K": 1, "N": 4}


def test_run_out_json_is_written_as_runs_finish(tmp_path, capsys, monkeypatch):
    import combex.cli as cli

    seen = []
    real_add = cli._RunOutput.add

    def add(self, rec):
        real_add(self, rec)
        seen.append(json.loads(self.path.read_text()))

    monkeypatch.setattr(cli._RunOutput, "add", add)
    out = tmp_path / "o.json"
    assert main(["run", "lucb", *RUN, "--out", str(out)]) == 0
    assert [len(d["runs"]) for d in seen] == [1, 2] and all(d["partial"] for d in seen)
    assert seen[0]["summary"]["mean_samples"] == seen[0]["runs"][0]["samples"]
    final = json.loads(out.read_text())
    assert "partial" not in final and len(final["runs"]) == 2
