"""A worker process of the study tests: ask / tell until the study stops.

Usage: python _study_worker.py STORAGE NAME MODE [ARG]
MODE: "work" (ask / tell until identified, rewards from reward()),
      "hang-tell" (tell one ticket inside a transaction, then hang before commit),
      "hang-ask" (hang inside an ask transaction after the ticket was written).
Prints "READY" when it hangs.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import combex.studies as cs

MEANS = np.array([0.9, 0.7, 0.5, 0.3, 0.1, 0.0])


def reward(ticket, means=MEANS):
    """Deterministic reward of a ticket's (arm, count, batch slot): the same whoever asks
    (eager tickets, which have no batch slot: of the ticket id)."""
    arm = ticket.arm
    key = [int(ticket.count)] + (list(arm) if isinstance(arm, list) else [int(arm)])
    slot = [int(ticket.batch) + 1, int(ticket.entry)] if ticket.batch >= 0 else [0, int(ticket.id)]
    rng = np.random.default_rng(key + slot)
    if isinstance(arm, list):
        return float(rng.binomial(ticket.count, means[arm]).sum())
    return float(rng.binomial(ticket.count, means[arm]))


def main() -> None:
    storage, name, mode = sys.argv[1:4]
    study = cs.load_study(storage=storage, name=name)
    if mode == "hang-tell":
        t = study.ask()
        with study.storage.transaction(name) as tx:
            tx.tell(t.id, reward(t), time.time())
            print("READY", flush=True)
            time.sleep(600)
    if mode == "hang-ask":
        orig = study._issue

        def issue(*args):
            out = orig(*args)
            print("READY", flush=True)
            time.sleep(600)
            return out

        study._issue = issue
        study.ask()
    n = 0
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rng = np.random.default_rng(seed)
    while True:
        try:
            tickets = study.ask(n=2)
        except cs.StudyFinishedError:
            break
        if not tickets:
            time.sleep(0.01)
            continue
        rng.shuffle(tickets)
        for t in tickets:
            try:
                study.tell(t, reward(t))
            except cs.StudyFinishedError:
                break
            n += 1
    print(f"DONE {n}", flush=True)


if __name__ == "__main__":
    main()
