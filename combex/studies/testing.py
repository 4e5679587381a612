"""Conformance suite of the storage contract (:class:`~combex.studies.BaseStorage`).

``check_storage(make_storage)`` runs every check on fresh storages and raises
``AssertionError`` naming the first broken rule; a third-party backend passes it before
it is used for real studies. The suite of combex runs it on the in-memory, SQLite and
PostgreSQL backends.
"""

from __future__ import annotations

import heapq
import time
from typing import Any, Callable

import numpy as np

from ..exceptions import DuplicatedStudyError, StorageError, StudyFinishedError, StudyNotFoundError
from ._storage import AssistantRow, BaseStorage, StudyRecord, payload_checksum, row_checksum

__all__ = ["check_storage", "simulate_assistants"]


def _record(name: str) -> StudyRecord:
    return StudyRecord(
        name=name,
        problem={"n_arms": 3, "arm_type": "index", "noise": {"kind": "bernoulli", "sigma": 0.5, "bound": 0.5,
                                                               "independent": True},
                 "reward_range": [0.0, 1.0], "decision_class": None, "labels": ["a", "b", "é"]},
        solver="lucb", solver_params={"K": 1, "delta": 0.1}, seed=7, lease_seconds=60.0, snapshot_every=10,
        policy="eager", created_at=time.time(), budget=2**40, progress={"leader": [0]},
        aggregates={"kind": "index", "n": [0, 0, 0]}, history=[{"event": "created"}],
    )


class _Boom(Exception):
    pass


def check_storage(make_storage: Callable[[], BaseStorage]) -> None:
    """Check a storage backend against the contract.

    Parameters
    ----------
    make_storage : callable
        Returns a fresh, empty storage (called a few times; a storage opened twice on the
        same database must see the same studies, which the SQL backends are checked for
        by the test suite separately).

    Raises
    ------
    AssertionError
        With the rule that failed.
    """
    st = make_storage()
    assert isinstance(st, BaseStorage), f"{st!r} is not a BaseStorage"
    assert st.list_studies() == [], "a fresh storage must hold no study"

    # -- directory
    rec = _record("s1")
    st.create_study(rec)
    got = st.get_study("s1")
    assert got.settings() == rec.settings(), f"settings do not round-trip: {got.settings()} != {rec.settings()}"
    assert (got.status, got.n_told, got.result, got.lease_seconds, got.snapshot_every, got.budget,
            got.n_corrections, got.progress, got.aggregates, got.history) == \
        ("running", 0, None, 60.0, 10, 2**40, 0, {"leader": [0]}, {"kind": "index", "n": [0, 0, 0]},
         [{"event": "created"}]), f"record fields do not round-trip: {got}"
    try:
        st.create_study(_record("s1"))
    except DuplicatedStudyError:
        pass
    else:
        raise AssertionError("creating a study with a taken name must raise DuplicatedStudyError")
    for call in (lambda: st.get_study("nope"), lambda: st.delete_study("nope"), lambda: st.tickets("nope")):
        try:
            call()
        except StudyNotFoundError:
            pass
        else:
            raise AssertionError("a missing study must raise StudyNotFoundError")
    for ctx in (st.transaction, st.read):
        try:
            with ctx("nope"):
                pass
        except StudyNotFoundError:
            pass
        else:
            raise AssertionError(f"{ctx.__name__}() on a missing study must raise StudyNotFoundError")
    st.create_study(_record("s0"))
    assert [r.name for r in st.list_studies()] == ["s0", "s1"], "list_studies must list by name"

    # -- tickets, told order
    now = time.time()
    with st.transaction("s1") as tx:
        a = tx.add_ticket(0, 1, -1, 0, now, now + 60, issued_seq=0, asked_by="ann")
        b = tx.add_ticket([0, 2], 3, 0, 1, now, now + 60)
        c = tx.add_ticket(2, 1, 0, 2, now, now - 1, reissue_of=b.id)
        assert a.id < b.id < c.id, "ticket ids must increase"
        assert tx.get_ticket(b.id).arm == [0, 2], "a team arm must round-trip as a list"
        assert tx.get_ticket(a.id).asked_by == "ann" and tx.get_ticket(c.id).reissue_of == b.id, \
            "asked_by and reissue_of must round-trip"
        assert tx.get_ticket(10**9) is None, "an unknown ticket must be None"
        assert [t.id for t in tx.pending()] == [a.id, b.id, c.id], "pending() must list pending tickets by id"
        assert [t.id for t in tx.expired(now, 10)] == [c.id], "expired() must list tickets past their lease"
        assert tx.tell(b.id, 2.5, now, told_by="bob") == 1 and tx.study.n_told == 1, \
            "the first tell must get told_seq 1"
        assert tx.tell(a.id, 1.0, now) == 2, "told_seq must count up without gaps"
        tx.set_stat(a.id, {"gap": -0.5})
        assert tx.state_counts() == {"pending": 1, "told": 2, "expired": 0, "released": 0, "cancelled": 0}, \
            "state_counts must count the tickets by state"
    with st.transaction("s1") as tx:
        assert tx.study.n_told == 2, "n_told must be committed"
        rows = tx.told_since(0)
        assert [(r.id, r.told_seq, r.reward_sum, r.state, r.told_by) for r in rows] == \
            [(b.id, 1, 2.5, "told", "bob"), (a.id, 2, 1.0, "told", None)], \
            "told_since must return the told log in order"
        assert rows[0].checksum == row_checksum(b.id, [0, 2], 3, 0, 1, 1, 2.5), "a told row must carry its checksum"
        assert [r.id for r in tx.told_since(1)] == [a.id], "told_since(seq) must skip the first seq tells"
        assert [r.id for r in tx.told_since(0, limit=1)] == [b.id], "told_since must honour its limit"
        assert [r.id for r in tx.told_at([2, 1, 7])] == [b.id, a.id], "told_at must return the rows of those seqs"
        assert rows[1].stat == {"gap": -0.5}, "the stopping statistic must round-trip"
        tx.set_state([c.id, a.id], "expired")
        assert tx.get_ticket(a.id).state == "told", "set_state must leave told tickets as they are"
        assert tx.pending() == [], "set_state must take tickets out of pending"
        assert tx.tell(c.id, 0.0, now) == 3 and tx.get_ticket(c.id).state == "told", \
            "an expired ticket can still be told"
        try:
            tx.tell(c.id, 0.0, now)
        except StorageError:
            pass
        else:
            raise AssertionError("telling a told ticket twice must raise StorageError")
    # -- reads: consistent, no writes
    with st.read("s1") as rx:
        assert rx.read_only and rx.study.n_told == 3 and [r.told_seq for r in rx.told_since(0)] == [1, 2, 3], \
            "read() must see the committed log"
        try:
            rx.add_ticket(0, 1, -1, 0, now, now + 60)
        except StorageError:
            pass
        else:
            raise AssertionError("a read() must refuse to write")
    # -- corrections, batches, assistants, study fields
    with st.transaction("s1") as tx:
        assert tx.add_correction(b.id, 1, None, "mistyped", "bob", now) == 1
        assert tx.add_correction(b.id, 1, 2.0, "the right score", None, now) == 2
        tx.record_batch(0, [[0, 2], 1], [3, 1])
        tx.record_batch(1, [2], [4])
        tx.add_assistant(AssistantRow("bob", "k1", b"salt", b"hash", now))
        try:
            tx.add_assistant(AssistantRow("bob", "k2", b"salt", b"hash", now))
        except DuplicatedStudyError:
            pass
        else:
            raise AssertionError("a second assistant of the same name must raise DuplicatedStudyError")
        tx.add_assistant(AssistantRow("ann", "k3", b"s", b"h", now))
        tx.touch_assistant("bob", now + 5, told=2)
        tx.update_study(progress={"leader": [2]}, aggregates={"rows": 3}, history=[{"event": "x"}])
    with st.read("s1") as rx:
        cs = rx.corrections()
        assert [(c_.seq, c_.ticket_id, c_.told_seq, c_.reward_sum, c_.reason, c_.assistant) for c_ in cs] == \
            [(1, b.id, 1, None, "mistyped", "bob"), (2, b.id, 1, 2.0, "the right score", None)], \
            "corrections must round-trip in order"
        assert [c_.seq for c_ in rx.corrections(1)] == [2] and rx.study.n_corrections == 2
        assert rx.batches(0, 5) == {0: ([[0, 2], 1], [3, 1]), 1: ([2], [4])} and rx.batches(1, 1) == \
            {1: ([2], [4])}, "recorded batches must round-trip"
        assert rx.last_batch() == 1
        asst = rx.assistants()
        assert [(x.name, x.key_id, x.salt, x.secret_hash, x.last_seen, x.n_told) for x in asst] == \
            [("ann", "k3", b"s", b"h", None, 0), ("bob", "k1", b"salt", b"hash", now + 5, 2)], \
            "assistants must round-trip, by name"
        assert rx.assistant_by_key("k3").name == "ann" and rx.assistant_by_key("zz") is None
        assert (rx.study.progress, rx.study.aggregates, rx.study.history) == \
            ({"leader": [2]}, {"rows": 3}, [{"event": "x"}]), "update_study must store the fields"
    with st.transaction("s1") as tx:
        assert tx.remove_assistant("ann") and not tx.remove_assistant("ann")
    with st.read("s1") as rx:
        assert [x.name for x in rx.assistants()] == ["bob"], "remove_assistant must remove"
    # -- rollback: nothing written when the block raises
    try:
        with st.transaction("s1") as tx:
            tx.add_ticket(1, 1, -1, 0, now, now + 60)
            tx.tell(tx.pending()[0].id, 0.0, now)
            tx.save_snapshot(3, b"x")
            tx.add_correction(a.id, 2, None, "x", None, now)
            tx.record_batch(7, [1], [1])
            tx.add_assistant(AssistantRow("cy", "k9", b"s", b"h", now))
            tx.finish("identified", {"answer": 1})
            raise _Boom
    except _Boom:
        pass
    with st.transaction("s1") as tx:
        assert tx.study.n_told == 3 and tx.study.status == "running", "a failed transaction must write nothing"
        assert tx.pending() == [] and tx.latest_snapshot() is None, "a failed transaction must write nothing"
    assert len(st.tickets("s1")) == 3, "a failed transaction must add no ticket"
    # -- snapshots and finish
    with st.read("s1") as rx:
        assert rx.study.n_corrections == 2 and rx.last_batch() == 1 and [x.name for x in rx.assistants()] == ["bob"], \
            "a failed transaction must write nothing"
    with st.transaction("s1") as tx:
        assert tx.latest_snapshot() is None
        tx.save_snapshot(1, b"one")
        tx.save_snapshot(2, b"two\x00", n_corrections=2)
        tx.save_snapshot(3, b"three")
        tx.finish("identified", {"answer": [0], "certificate": {"gap": 0.1}})
    with st.transaction("s1") as tx:
        assert tx.latest_snapshot() == (3, b"three"), "latest_snapshot must be the newest, bytes intact"
        snaps = tx.snapshots()
        assert [(x.told_seq, x.n_corrections, x.payload, x.checksum) for x in snaps] == \
            [(3, 0, b"three", payload_checksum(b"three")), (2, 2, b"two\x00", payload_checksum(b"two\x00"))], \
            "snapshots() must list the two newest, newest first, with their checksums"
    rec2 = st.get_study("s1")
    assert rec2.status == "identified" and rec2.result == {"answer": [0], "certificate": {"gap": 0.1}}, \
        "finish must store the status and result"
    assert [t.state for t in st.tickets("s1")] == ["told", "told", "told"]
    assert [t.id for t in st.tickets("s1", states=("told",))] == [a.id, b.id, c.id]
    # -- studies are separate; delete removes everything
    assert st.tickets("s0") == [], "tickets must belong to their study"
    with st.transaction("s0") as tx:
        assert tx.get_ticket(a.id) is None, "a study must not see another study's tickets"
    st.delete_study("s1")
    assert [r.name for r in st.list_studies()] == ["s0"], "delete_study must remove the study"
    st.create_study(_record("s1"))
    assert st.tickets("s1") == [] and st.get_study("s1").n_told == 0, "a re-created study must start empty"
    with st.transaction("s1") as tx:
        assert tx.latest_snapshot() is None, "delete_study must remove snapshots"
        assert tx.corrections() == [] and tx.assistants() == [] and tx.last_batch() == -1, \
            "delete_study must remove corrections, assistants and batches"
        tx.add_assistant(AssistantRow("bob", "k1", b"s", b"h", now))  # its key id was freed
    st.close()


def simulate_assistants(
    study: Any,
    score: Callable[[Any, Any], float],
    *,
    assistants: int = 3,
    mean_minutes: float = 60.0,
    retry_minutes: float = 15.0,
    hold: int = 0,
    rng: Any = None,
    max_evaluations: int = 1_000_000,
) -> dict[str, Any]:
    """Run ``study`` to its stop with simulated assistants on a simulated clock.

    Each of ``assistants`` people asks for one ticket, takes an exponential time of mean
    ``mean_minutes`` to evaluate it, tells ``score(ticket, rng)`` and asks again; one who
    gets no ticket checks back after ``retry_minutes``. ``hold`` more tickets are taken at
    the start by people who never come back (held tickets). The study's ``clock`` is set to
    the simulated clock.

    Returns
    -------
    dict
        ``status``, ``answer`` (the recommendation), ``evaluations`` (told), ``empty_asks``
        (asks that got no ticket while the study ran), ``hours`` (simulated time).
    """
    rng = np.random.default_rng(rng)
    now = [0.0]
    study.clock = lambda: now[0]
    events: list[tuple[float, int, Any]] = []
    empty = 0
    for _ in range(hold):
        study.ask()

    def ask(who: int) -> bool:
        nonlocal empty
        try:
            t = study.ask()
        except StudyFinishedError:
            return False
        if t is None:
            empty += 1
            heapq.heappush(events, (now[0] + 60.0 * retry_minutes, who, None))
        else:
            heapq.heappush(events, (now[0] + 60.0 * float(rng.exponential(mean_minutes)), who, t))
        return True

    running = all(ask(i) for i in range(assistants))
    told = 0
    while running and events and told < max_evaluations:
        when, who, t = heapq.heappop(events)
        now[0] = when
        if t is not None:
            try:
                if study.tell(t, score(t, rng)) != "running":
                    break
            except StudyFinishedError:
                break
            told += 1
        running = ask(who)
    best = study.best()
    rec = study.storage.get_study(study.name)
    return {"status": rec.status, "answer": best["leader"]["arm"], "evaluations": rec.n_told, "empty_asks": empty,
            "hours": now[0] / 3600.0}
