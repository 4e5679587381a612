"""Results files under stress: two writers, duplicated rows, torn and garbled
rows; each damaged file is a ResultsFileError naming the file and the row."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from combex.cli import main
from combex.experiments import ResultsFileError, Sweep, read_results, results_table, run_sweep

pytest.importorskip("pandas")


def _sweep(runs=3):
    return Sweep(solvers=[("lucb", {})], instances=[("jiang-1sparse", {"N": 4, "K": 1})], runs=runs, seed=1)


def _data_lines(path):
    return path.read_text().splitlines(keepends=True)


def test_second_writer_is_refused(tmp_path):
    from combex.experiments._results import _Lock

    out = tmp_path / "r.csv"
    held = _Lock(out)  # another sweep holds the file
    try:
        with pytest.raises(ResultsFileError, match="Another sweep is writing"):
            run_sweep(_sweep(), out)
        assert not out.exists()
    finally:
        held.release()
    rep = run_sweep(_sweep(), out)
    assert rep.ran == 3


SLOW_SWEEP = r"""
import sys, time
from combex.experiments import Sweep, run_sweep
import combex.experiments._results as sw
real = sw._Writer.add
sw._Writer.add = lambda self, row: (real(self, row), time.sleep(0.3))
run_sweep(Sweep(solvers=[("lucb", {})], instances=[("jiang-1sparse", {"N": 4, "K": 1})], runs=8, seed=1),
          sys.argv[1])
"""


def test_two_concurrent_sweep_processes_do_not_duplicate_rows(tmp_path):
    out = tmp_path / "r.csv"
    a = subprocess.Popen([sys.executable, "-c", SLOW_SWEEP, str(out)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (out.exists() and len(_data_lines(out)) >= 2):
            assert a.poll() is None, a.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        b = subprocess.run([sys.executable, "-c", SLOW_SWEEP, str(out)], stderr=subprocess.PIPE, timeout=120)
        assert b.returncode != 0 and b"Another sweep is writing" in b.stderr
        assert a.wait(timeout=120) == 0
    finally:
        if a.poll() is None:  # pragma: no cover
            a.kill()
            a.wait()
    _, rows = read_results(out)
    assert len(rows) == 8 and len(_data_lines(out)) == 9


def test_duplicated_rows_are_dropped_on_read(tmp_path):
    out = tmp_path / "r.csv"
    run_sweep(_sweep(), out)
    lines = _data_lines(out)
    out.write_text("".join(lines + lines[1:]))  # what two unlocked writers produced
    _, rows = read_results(out)
    assert len(rows) == 3
    df = results_table(out)
    assert len(df) == 3 and sorted(df["run"]) == [0, 1, 2]
    assert len(results_table(rows + rows)) == 3
    assert run_sweep(_sweep(), out).ran == 0


def test_torn_last_row_is_cut_and_run_again(tmp_path):
    out = tmp_path / "r.csv"
    full = run_sweep(_sweep(), out)
    text = out.read_text()
    out.write_text(text[: len(text) - 25])  # killed in the middle of appending the last row
    _, rows = read_results(out)
    assert len(rows) == 2
    rep = run_sweep(_sweep(), out)
    assert rep.ran == 1 and rep.skipped == 2
    _, rows = read_results(out)
    assert len(rows) == 3 and len(_data_lines(out)) == 4
    strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rs]  # noqa: E731
    assert strip(rows) == strip(full.rows)


@pytest.mark.parametrize("damage, match", [
    (lambda lines: lines[:2] + ['garbage,"x\n'] + lines[2:], r"r\.csv.*line 3"),
    (lambda lines: lines[:2] + [lines[2].replace("lucb", "lucb,extra,fields", 1)] + lines[3:], r"r\.csv.*line 3"),
    (lambda lines: lines[:2] + [lines[2].replace('"[', '"[[', 1)] + lines[3:], r"r\.csv.*line 3"),
])
def test_garbled_csv_row_names_file_and_line(tmp_path, capsys, damage, match):
    out = tmp_path / "r.csv"
    run_sweep(_sweep(), out)
    out.write_text("".join(damage(_data_lines(out))))
    with pytest.raises(ResultsFileError, match=match):
        read_results(out)
    with pytest.raises(ResultsFileError, match=match):
        run_sweep(_sweep(), out)
    assert main(["plot", str(out), "--x", "N", "--out", str(tmp_path / "f.png")]) == 2
    assert "line 3" in capsys.readouterr().err


@pytest.mark.parametrize("text, match", [
    ('{"format": "combex-results", "rows": [{"solver"', "not a combex results file"),
    ('{"format": "combex-results", "rows": {"a": 1}}', "'rows' must be a list"),
    ('{"format": "combex-results", "rows": [{"solver": "x"}]}', r"row 0.*no column"),
    ('{"format": "combex-results", "rows": [3]}', r"row 0.*must be a table"),
])
def test_garbled_json_results(tmp_path, text, match):
    out = tmp_path / "r.json"
    out.write_text(text)
    with pytest.raises(ResultsFileError, match=match):
        results_table(out)


def test_garbled_metadata(tmp_path):
    out = tmp_path / "r.csv"
    run_sweep(_sweep(), out)
    (tmp_path / "r.csv.meta.json").write_text("[1, 2]")
    with pytest.raises(ResultsFileError, match="meta.json"):
        read_results(out)


def test_plot_frame_drops_duplicated_runs(tmp_path):
    from combex.experiments._plots import _frame

    out = tmp_path / "r.csv"
    run_sweep(_sweep(), out)
    df = results_table(out)
    import pandas as pd

    assert len(_frame(pd.concat([df, df]))) == 3


def _sweep_kill_loop(tmp_path, kills, seed):
    import os
    import signal

    import numpy as np

    sweep = Sweep(solvers=[("lucb", {}), ("lil-randlucb", {})], instances=[("jiang-1sparse", {"N": 4, "K": 1})],
                  runs=20, seed=4)
    reference = run_sweep(sweep).rows
    out = tmp_path / "r.csv"
    rs = np.random.default_rng(seed)
    counts = {"kills": 0, "readable": 0, "torn": 0}
    for _ in range(kills):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                run_sweep(sweep, out)
            finally:
                os._exit(0)
        time.sleep(float(rs.uniform(0.0, 0.3)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        counts["kills"] += 1
        if out.exists():
            counts["torn"] += not out.read_bytes().endswith(b"\n")
            read_results(out)  # never an error, torn tail or not
            counts["readable"] += 1
    rep = run_sweep(sweep, out)  # resume to the end
    strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rs]  # noqa: E731
    assert strip(rep.rows) == strip(reference)
    _, rows = read_results(out)
    assert len(rows) == len(reference) == len(_data_lines(out)) - 1  # no duplicate, no torn row left
    return counts


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_sweep_killed_at_random_instants_resumes_exactly(tmp_path):
    counts = _sweep_kill_loop(tmp_path, 15, seed=0)
    assert counts["kills"] == 15


def test_a_finished_sweep_leaves_no_lock_file(tmp_path, capsys):
    out = tmp_path / "r.csv"
    run_sweep(_sweep(), out)
    assert main(["sweep", "--solver", "lucb", "--instance", "jiang-1sparse", "--set", "K=1", "--grid", "N=4,5",
                 "--runs", "1", "--out", str(tmp_path / "cli.csv")]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "r.csv" in names and "cli.csv" in names
    assert not [n for n in names if n.endswith(".lock")], names


def test_a_lock_removed_by_its_holder_is_not_shared(tmp_path, monkeypatch):
    """A sweep that opened the lock file just before its holder finished (and removed it)
    then locks a removed file: it must notice and lock the file now at the path, so that a
    third sweep is refused."""
    import fcntl
    import os

    from combex.experiments._results import _Lock

    out = tmp_path / "r.csv"
    first = _Lock(out)
    real_flock, calls = fcntl.flock, []

    def flock(fd, op):
        if not calls:  # the holder finishes between the second sweep's open and its flock
            calls.append(fd)
            first.release()
        return real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock)
    second = _Lock(out)
    try:
        assert len(calls) == 1
        assert os.fstat(second.fh.fileno()).st_ino == os.stat(tmp_path / "r.csv.lock").st_ino
        with pytest.raises(ResultsFileError, match="Another sweep is writing"):
            _Lock(out)
    finally:
        second.release()
    assert not (tmp_path / "r.csv.lock").exists()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_sweep_killed_many_times(tmp_path):
    counts = _sweep_kill_loop(tmp_path, 200, seed=1)
    assert counts["kills"] == 200


def test_lock_file_symlink_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "r.csv"
    (tmp_path / "r.csv.lock").symlink_to(victim)
    with pytest.raises(ResultsFileError, match="lock file"):
        run_sweep(_sweep(), out)
    assert victim.read_text() == "precious" and not out.exists()
