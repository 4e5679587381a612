"""Live studies: the time of one read (a dashboard poll) on a study of 10^6 told results.

A study (LUCB on 8 Bernoulli arms of equal means, which never stops) is given ``--n``
told evaluations written straight into the storage (with their checksums and the
aggregates), a snapshot of its state after them (built by replaying the log once: its
time is printed), then a few real asks and one real tell. In a fresh process, each read a
dashboard makes is timed (median of ``--repeat``): ``status``, ``summary()``, ``best()``,
``pending()``, ``history()``, ``member_estimates()``, ``assistants()``, and
``load_study(...).best()`` (a poll that opens the study anew). The peer, measured in the
same run, is what a read that scans the log costs: ``storage.tickets(name)``, every row.

Backends: SQLite (a temporary file) and PostgreSQL (a temporary cluster started like the
test fixture, ``tests/_studies_helpers.py``).

Run: python benchmarks/studies_reads.py [--n 1000000] [--repeat 5] [--no-postgresql]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def build(url: str, n: int) -> dict[str, float]:
    import combex.studies as cs
    from combex.studies._storage import row_checksum
    from combex.studies._study import _Replay, _add_to_aggregates, _new_aggregates

    spec = cs.problem_spec(8, noise="bernoulli", labels=[f"w{i}" for i in range(8)])
    study = cs.create_study(storage=url, name="big", problem=spec, solver="lucb", solver_params={"K": 1, "delta": 0.01},
                            snapshot_every=10 * n)
    st = study.storage
    study.add_assistant("Ann")
    rng = np.random.default_rng(0)
    arms = rng.integers(0, 8, size=n - 1)
    rewards = rng.integers(0, 2, size=n - 1).astype(float)
    t0 = time.perf_counter()
    with st.engine.begin() as conn:
        sid = conn.execute(st._s.select().where(st._s.c.name == "big")).first().id
        step = 50_000
        for lo in range(0, n - 1, step):
            rows = []
            for i in range(lo, min(lo + step, n - 1)):
                a, r = int(arms[i]), float(rewards[i])
                tid = i + 1
                rows.append(dict(id=tid, study_id=sid, arm=str(a), count=1, batch=-1, entry=0, state="told",
                                 issued_at=1.0e9 + i, lease_deadline=2.0e9, told_seq=i + 1, reward_sum=r,
                                 told_at=1.0e9 + i + 30.0, issued_seq=i, asked_by="Ann", told_by="Ann",
                                 checksum=row_checksum(tid, a, 1, -1, 0, i + 1, r),
                                 stat=None if i % 1000 else '{"gap": 0.1}'))
            conn.execute(st._t.insert(), rows)
        agg = _new_aggregates(spec)
        for a in range(8):
            m = arms == a
            agg["count"][a] = int(m.sum())
            agg["sum"][a] = float(rewards[m].sum())
            agg["sumsq"][a] = float((rewards[m] ** 2).sum())
        agg["rows"] = agg["obs"] = n - 1
        conn.execute(st._s.update().where(st._s.c.id == sid).values(n_told=n - 1, aggregates=__import__("json").dumps(
            agg)))
        if not st._sqlite:  # the ids were given: move the sequence past them
            conn.exec_driver_sql(f"SELECT setval(pg_get_serial_sequence('combex_tickets', 'id'), {n})")
    written = time.perf_counter() - t0
    t0 = time.perf_counter()
    with st.transaction("big") as tx:
        rp = _Replay(tx.study, study.problem, study.solver)
        rp.fold(tx.told_since(0))
        tx.save_snapshot(rp.seq, rp.snapshot(), 0)
    snap = time.perf_counter() - t0
    del _add_to_aggregates
    fresh = cs.load_study(storage=url, name="big")
    t = fresh.ask(n=4, assistant="Ann")
    fresh.tell(t[0], 1.0, assistant="Ann")
    assert fresh.storage.get_study("big").n_told == n
    st.close()
    return {"written": written, "snapshot": snap}


def _time_reads(url: str, repeat: int, q: "mp.Queue") -> None:
    try:
        import combex.studies as cs

        study = cs.load_study(storage=url, name="big")
        reads = {
            "status": lambda: study.status,
            "summary()": study.summary,
            "best()": study.best,
            "pending()": study.pending,
            "history()": study.history,
            "member_estimates()": study.member_estimates,
            "assistants()": study.assistants,
            "load_study().best()": lambda: cs.load_study(storage=url, name="big").best(),
            "peer: every row": lambda: study.storage.tickets("big"),
        }
        out = {}
        for label, f in reads.items():
            times = []
            for _ in range(repeat if not label.startswith("peer") else 1):
                t0 = time.perf_counter()
                f()
                times.append(time.perf_counter() - t0)
            out[label] = statistics.median(times)
        q.put(out)
    except BaseException as exc:  # report, never hang the parent
        q.put({"error": repr(exc)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-postgresql", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    backends = [("SQLite", os.path.join(tmp, "reads.db"))]
    cluster = None
    if not args.no_postgresql:
        sys.path.insert(0, str(ROOT / "tests"))
        from _studies_helpers import PgCluster

        cluster = PgCluster()
        backends.append(("PostgreSQL", cluster.new_database()))
    try:
        results = {}
        for label, url in backends:
            b = build(url, args.n)
            print(f"{label}: {args.n:,} told evaluations written in {b['written']:.0f} s, snapshot built by one "
                  f"replay in {b['snapshot']:.0f} s", flush=True)
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=_time_reads, args=(url, args.repeat, q))
            p.start()
            results[label] = q.get(timeout=3600)
            p.join()
            if "error" in results[label]:
                raise RuntimeError(results[label]["error"])
        labels = list(next(iter(results.values())))
        print(f"\nseconds per read at {args.n:,} told evaluations (median of {args.repeat}; fresh process)")
        print(f"{'read':<22}" + "".join(f"{k:>14}" for k in results))
        for lab in labels:
            print(f"{lab:<22}" + "".join(f"{results[k][lab]:>14.4f}" for k in results))
        for k, r in results.items():
            worst = max(v for lab, v in r.items() if not lab.startswith("peer"))
            print(f"{k}: slowest read {worst:.4f} s = {worst / r['peer: every row']:.4f} x the scan of every row")
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
