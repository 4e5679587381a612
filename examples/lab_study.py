"""A lab's live study: several worker processes answer real quiz questions through SQLite.

The study looks for the best team of 5 among the 55 workers of the POKEMON quiz of Li,
Baba & Kashima (2017, shipped with combex): a ticket asks one worker to answer ``count``
random questions (their real recorded answers) and the reward is how many they got right.
Four worker processes ask and tell through one SQLite file; midway every worker is killed
with SIGKILL (tickets in flight are lost), then four new workers resume: the killed
tickets' leases run out and they are handed out again, and the study ends with the
identified team.

Run:  python examples/lab_study.py [STORAGE]     (default: a temporary SQLite file)
Watch it live in another terminal:  combex dashboard STORAGE
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import tempfile
import time

import numpy as np

import combex.studies as cs
from combex.datasets import load_quiz

NAME = "pokemon-team"


def worker(storage: str, seed: int) -> None:
    quiz = load_quiz("POKEMON")
    correct = quiz.correct  # (questions, workers) bools
    rng = np.random.default_rng(seed)
    study = cs.load_study(storage=storage, name=NAME)
    while True:
        try:
            tickets = study.ask(n=4)
        except cs.StudyFinishedError:
            return
        for t in tickets:
            questions = rng.integers(correct.shape[0], size=t.count)
            score = int(correct[questions, t.arm].sum())  # worker t.arm answers them
            try:
                study.tell(t, score)
            except cs.StudyFinishedError:
                return
            except cs.TicketError:  # our lease ran out meanwhile: the ticket went to another worker
                pass


def start_workers(storage: str, first_seed: int, n: int = 4) -> list:
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(storage, first_seed + i)) for i in range(n)]
    for p in procs:
        p.start()
    return procs


def main() -> None:
    storage = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "lab.db")
    quiz = load_quiz("POKEMON")
    study = cs.create_study(
        storage=storage, name=NAME, solver="lil-lucb",
        solver_params={"K": 5, "delta": 0.05, "mode": "heuristic"},
        problem=cs.problem_spec(len(quiz.worker_ids), noise="bernoulli", labels=quiz.worker_ids),
        seed=0, lease_seconds=5.0, snapshot_every=200, load_if_exists=True,
    )
    print(f"study {NAME!r} in {storage}")
    t0 = time.time()
    procs = start_workers(storage, 0)
    while study.summary()["evaluations"] < 800 and study.status == "running":
        time.sleep(0.2)
    for p in procs:  # the lab's machines crash: kill -9, tickets in flight are lost
        os.kill(p.pid, signal.SIGKILL)
        p.join()
    s = study.summary()
    print(f"killed 4 workers after {s['evaluations']} evaluations ({s['tickets']['pending']} tickets in flight)")
    procs = start_workers(storage, 100)  # new workers resume from the log
    for p in procs:
        p.join()
    s = study.summary()
    best = study.best()
    truth = np.argsort(-quiz.correct.mean(axis=0), kind="stable")[:5]
    print(f"{s['status']} after {s['evaluations']} evaluations in {time.time() - t0:.1f} s "
          f"({s['tickets']['expired']} tickets handed out again after their lease)")
    print("identified team:", best["labels"])
    print("top-5 accuracy in the data:", sorted(quiz.worker_ids[i] for i in truth),
          "accuracies", np.round(np.sort(quiz.correct.mean(axis=0))[::-1][:6], 2).tolist())


if __name__ == "__main__":
    main()
