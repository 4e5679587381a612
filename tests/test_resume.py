"""Kill a simulated study mid-way (SIGKILL, separate process) and resume it exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from combex._state import load_state
from combex.experiments import build_solver, make_instance, run_generators, run_study

SCRIPT = r"""
import sys, time
from combex.experiments import build_solver, make_instance, run_generators, run_study
i, e, a = run_generators(11, 0)
env = make_instance("jiang-1sparse", rng=i, N=5, K=1)
env.reset(e)
# slow the study down so that the kill lands mid-way
run_study(build_solver("lil-randlucb"), env, sys.argv[1], rng=a, save_every=2,
          on_save=lambda exp: time.sleep(0.02))
print("finished")
"""


def _env():
    i, e, a = run_generators(11, 0)
    env = make_instance("jiang-1sparse", rng=i, N=5, K=1)
    env.reset(e)
    return env, a


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_study_resumes_to_the_same_answer(tmp_path):
    solver = build_solver("lil-randlucb")
    env, a = _env()
    reference = solver.run(env, rng=a)

    path = tmp_path / "study.json"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not path.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the study never saved"
            time.sleep(0.05)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:  # pragma: no cover
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    saved = load_state(path)
    assert saved["status"] == "running", "the study finished before the kill; nothing was resumed"
    assert 0 < saved["samples"] < reference.samples

    fresh, _ = _env()
    fresh.reset(999)  # whatever its state, resuming restores the saved noise stream
    result = run_study(solver, fresh, path)
    assert result.samples == reference.samples
    assert np.array_equal(np.asarray(result.answer), np.asarray(reference.answer))
    assert np.array_equal(result.pulls, reference.pulls)
    assert result.rounds == reference.rounds
