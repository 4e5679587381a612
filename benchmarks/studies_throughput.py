"""Live studies: asks + tells per second on SQLite and PostgreSQL, and resume time.

Throughput: W worker processes (1, 4, 16) each loop ``ask(n=B)`` + ``tell_many`` of the B
tickets (batched tickets, B = 16) on one eager study that never stops (8 arms of equal
mean), for ``--seconds`` seconds; the figure is told evaluations per second (one ask and
one tell each). PostgreSQL runs on a temporary cluster started like the test fixture
(``tests/_studies_helpers.py``; needs Debian's postgresql-15).

Resume: a SQLite study with ``--resume-n`` told evaluations (10^6 by default) and a
snapshot ``snapshot_every`` tells old at most; the figure is the time of
``load_study(...).best()`` in a fresh process state (snapshot load + replay of the rest).

Run: python benchmarks/studies_throughput.py [--seconds 5] [--resume-n 1000000]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import combex.studies as cs

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = cs.problem_spec(8, noise="bernoulli")


def _worker(url: str, seconds: float, batch: int, seed: int, q: "mp.Queue") -> None:
    try:
        _work(url, seconds, batch, seed, q)
    except BaseException as exc:  # report, never hang the parent
        q.put((0, 1.0, repr(exc)))


def _work(url: str, seconds: float, batch: int, seed: int, q: "mp.Queue") -> None:
    study = cs.load_study(storage=url, name="bench")
    rng = np.random.default_rng(seed)
    study.ask(n=1)  # warm up (replay)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        tickets = study.ask(n=batch)
        study.tell_many([(t, float(rng.integers(0, t.count + 1))) for t in tickets])
        n += len(tickets)
    q.put((n, time.perf_counter() - t0, None))


def throughput(url: str, workers: int, seconds: float, batch: int) -> float:
    try:
        cs.delete_study(storage=url, name="bench")
    except cs.StudyNotFoundError:
        pass
    cs.create_study(storage=url, name="bench", problem=PROBLEM, solver="lucb",
                    solver_params={"K": 1, "delta": 0.01}, lease_seconds=3600, snapshot_every=5000)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, seconds, batch, i, q)) for i in range(workers)]
    for p in procs:
        p.start()
    res = [q.get(timeout=seconds + 300) for _ in procs]
    errors = [e for _, _, e in res if e]
    if errors:
        raise RuntimeError(f"workers failed: {errors[:3]}")
    for p in procs:
        p.join()
    st = cs.get_storage(url)
    rows = st.tickets("bench", states=("told",))
    seqs = sorted(r.told_seq for r in rows)
    assert seqs == list(range(1, len(seqs) + 1)), "told log has a gap"
    return sum(r[0] for r in res) / max(r[1] for r in res)


def resume_time(n: int, path: str) -> tuple[float, float]:
    import sqlalchemy as sa

    study = cs.create_study(storage=path, name="big", problem=PROBLEM, solver="lucb",
                            solver_params={"K": 1, "delta": 0.01}, snapshot_every=n)
    st = study.storage
    rng = np.random.default_rng(0)
    arms = rng.integers(0, 8, size=n)
    rewards = rng.integers(0, 2, size=n).astype(float)
    sid = 1
    t0 = time.perf_counter()
    with st.engine.begin() as conn:
        conn.execute(st._t.insert(), [
            dict(study_id=sid, arm=str(int(a)), count=1, batch=-1, entry=0, state="told", issued_at=0.0,
                 lease_deadline=1e18, told_seq=i + 1, reward_sum=float(r), told_at=0.0)
            for i, (a, r) in enumerate(zip(arms, rewards))])
        conn.execute(st._s.update().where(st._s.c.id == sid).values(n_told=n))
    build = time.perf_counter() - t0
    # the snapshot 500 tells before the end: store it by replaying n - 500 tells
    fresh = cs.load_study(storage=path, name="big")
    with st.transaction("big") as tx:
        rp = cs._study._Replay(tx.study, fresh.problem, fresh.solver)
        rp.fold(tx.told_since(0)[: n - 500])
        tx.save_snapshot(rp.seq, rp.snapshot())
    t0 = time.perf_counter()
    best = cs.load_study(storage=path, name="big").best()
    resume = time.perf_counter() - t0
    assert best["evaluations"] == n
    return build, resume


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", default="1,4,16")
    ap.add_argument("--resume-n", type=int, default=1_000_000)
    ap.add_argument("--no-postgresql", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    backends = [("SQLite", os.path.join(tmp, "bench.db"))]
    cluster = None
    if not args.no_postgresql:
        sys.path.insert(0, str(ROOT / "tests"))
        from _studies_helpers import PgCluster

        cluster = PgCluster()
        backends.append(("PostgreSQL", cluster.new_database()))
    try:
        print(f"asks+tells per second (batched tickets, B={args.batch}, {args.seconds:g} s, {os.cpu_count()} cores)",
              flush=True)
        print(f"{'backend':<12}" + "".join(f"{w + ' workers':>14}" for w in args.workers.split(",")))
        for label, url in backends:
            figs = [throughput(url, int(w), args.seconds, args.batch) for w in args.workers.split(",")]
            print(f"{label:<12}" + "".join(f"{f:>14,.0f}" for f in figs), flush=True)
        if args.resume_n:
            build, resume = resume_time(args.resume_n, os.path.join(tmp, "big.db"))
            print(f"resume of a SQLite study with {args.resume_n:,} told evaluations (snapshot 500 tells old): "
                  f"{resume:.3f} s (log written in {build:.1f} s)")
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
