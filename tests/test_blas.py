"""Runs use one BLAS thread in every install, and leave the process's setting alone.

Each check runs in a fresh interpreter: the suite itself limits BLAS (conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import json
from threadpoolctl import threadpool_info
import numpy as np
from combex.environments._instances_linear import canonical
from combex.environments import FullBandit
from combex.solvers.full_bandit import ICB
from combex.solvers.linear import LinGapE
from combex.solvers.sublinear import LinTS
from combex.environments import sublinear_synthetic

def blas():
    return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

seen = {}
class Env:  # wraps an environment and records the BLAS threads while pulls happen
    def __init__(self, env, key): self.env, self.key = env, key
    def __getattr__(self, name):
        if name in ("pull_many", "pull"):
            seen[self.key] = blas()
        return getattr(self.env, name)

class MyICB(ICB):  # a subclass with its own run is limited too
    def run(self, env, **kw):
        seen["subclass"] = blas()
        return super().run(env, **kw)

out = {"before": blas()}
LinGapE(delta=0.1).run(Env(canonical(3, gap=1.0, rng=0), "lingape"), rng=1)
ICB(delta=0.1).run(Env(FullBandit([1.0, 0.0, 0.0], k=1, rng=0), "icb"), rng=1)
MyICB(delta=0.1).run(FullBandit([1.0, 0.0, 0.0], k=1, rng=0), rng=1)
env = sublinear_synthetic(K=50, d=4, T=30, rng=0)
orig = type(env).pull
def spy(self, *a, **k):
    seen["regret policy"] = blas()
    return orig(self, *a, **k)
type(env).pull = spy
LinTS().run(env, rng=1)
out["during"] = seen
out["after"] = blas()
print(json.dumps(out))
"""


def _child(**env_extra):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS") and k != "COMBEX_BLAS_THREADS"}
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_run_uses_one_blas_thread_and_restores_the_setting():
    out = _child(OPENBLAS_NUM_THREADS="2")
    before = out["before"]  # numpy's and scipy's OpenBLAS, at the process default (2 here)
    assert len(before) >= 2 and set(before.values()) == {2}
    assert set(out["during"]) == {"lingape", "icb", "subclass", "regret policy"}
    for key, threads in out["during"].items():
        assert all(threads[f] == 1 for f in before), (key, threads)
    assert {f: out["after"][f] for f in before} == before  # restored after the runs


def test_the_limit_can_be_changed_or_turned_off():
    off = _child(OPENBLAS_NUM_THREADS="2", COMBEX_BLAS_THREADS="off")
    assert all(t[f] == 2 for t in off["during"].values() for f in off["before"])
    two = _child(OPENBLAS_NUM_THREADS="2", COMBEX_BLAS_THREADS="2")
    assert all(t[f] == 2 for t in two["during"].values() for f in two["before"])
