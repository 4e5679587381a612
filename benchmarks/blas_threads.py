"""CPU time of a run with combex's one-thread BLAS limit versus the BLAS default.

Each configuration runs in a fresh subprocess (so thread pools start as a plain install
leaves them) and reports wall time and CPU time (user + system, from the child's rusage):

* ``default``: as installed (every ``run`` limits BLAS to one thread, combex/_blas.py);
* ``COMBEX_BLAS_THREADS=off``: BLAS left at its default (one thread per core), which is
  what a plain ``pip install combex`` did before threadpoolctl became a core dependency.

    python benchmarks/blas_threads.py            # LinGapE on the diabetes instance + ICB/SAQM on the quiz
    python benchmarks/blas_threads.py --repeat 3

The ratio of CPU times is the figure to read (the machine may be shared: wall times are
noisy, the two configurations run back to back).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

CODE = r"""
import numpy as np
from combex.environments import CrowdQuiz
from combex.environments._instances_linear import diabetes_linear
from combex.solvers.full_bandit import ICB, SAQM
from combex.solvers.linear import LinGapE
r = LinGapE(delta=0.05).run(diabetes_linear(20, rng=0), rng=1)
print("lingape samples", r.samples)
env = CrowdQuiz("ITMANAGE", k=10, rng=7)
for s in (ICB(delta=0.05, epsilon=0.5, allocation="uniform"), SAQM(delta=0.05, epsilon=0.5, allocation="uniform")):
    print(type(s).__name__, "samples", s.run(env.spawn(np.random.default_rng(3)), rng=11).samples)
"""


def measure(env_extra: dict[str, str]) -> tuple[float, float, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env.update(env_extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.strip().replace("\n", "; ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    print(f"{'configuration':<28} {'wall s':>8} {'CPU s':>8}")
    rows = {}
    for _ in range(args.repeat):
        for label, extra in (("one BLAS thread (default)", {}), ("COMBEX_BLAS_THREADS=off", {"COMBEX_BLAS_THREADS": "off"})):
            wall, cpu, out = measure(extra)
            rows.setdefault(label, []).append(cpu)
            print(f"{label:<28} {wall:>8.2f} {cpu:>8.2f}   ({out})")
    a, b = (min(v) for v in rows.values())
    print(f"CPU time ratio off / default: {b / a:.2f}x")


if __name__ == "__main__":
    main()
