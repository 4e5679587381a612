"""Conformance suite of the storage contract (:class:`~combex.studies.BaseStorage`).

``check_storage(make_storage)`` runs every check on fresh storages and raises
``AssertionError`` naming the first broken rule; a third-party backend passes it before
it is used for real studies. The suite of combex runs it on the in-memory, SQLite and
PostgreSQL backends.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ._errors import DuplicatedStudyError, StudyNotFoundError
from ._storage import BaseStorage, StudyRecord

__all__ = ["check_storage"]


def _record(name: str) -> StudyRecord:
    return StudyRecord(
        name=name,
        problem={"n_arms": 3, "arm_type": "index", "noise": {"kind": "bernoulli", "sigma": 0.5, "bound": 0.5,
                                                               "independent": True},
                 "reward_range": [0.0, 1.0], "decision_class": None, "labels": ["a", "b", "é"]},
        solver="lucb", solver_params={"K": 1, "delta": 0.1}, seed=7, lease_seconds=60.0, snapshot_every=10,
        policy="eager", created_at=time.time(),
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
    assert (got.status, got.n_told, got.result, got.lease_seconds, got.snapshot_every) == \
        ("running", 0, None, 60.0, 10), f"record fields do not round-trip: {got}"
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
    try:
        with st.transaction("nope"):
            pass
    except StudyNotFoundError:
        pass
    else:
        raise AssertionError("transaction() on a missing study must raise StudyNotFoundError")
    st.create_study(_record("s0"))
    assert [r.name for r in st.list_studies()] == ["s0", "s1"], "list_studies must list by name"

    # -- tickets, told order
    now = time.time()
    with st.transaction("s1") as tx:
        a = tx.add_ticket(0, 1, -1, 0, now, now + 60)
        b = tx.add_ticket([0, 2], 3, 0, 1, now, now + 60)
        c = tx.add_ticket(2, 1, 0, 2, now, now - 1)
        assert a.id < b.id < c.id, "ticket ids must increase"
        assert tx.get_ticket(b.id).arm == [0, 2], "a team arm must round-trip as a list"
        assert tx.get_ticket(10**9) is None, "an unknown ticket must be None"
        assert [t.id for t in tx.pending()] == [a.id, b.id, c.id], "pending() must list pending tickets by id"
        assert [t.id for t in tx.expired(now, 10)] == [c.id], "expired() must list tickets past their lease"
        assert tx.batch_entries(0) == [1, 2], "batch_entries() must list the held entries"
        assert tx.tell(b.id, 2.5, now) == 1 and tx.study.n_told == 1, "the first tell must get told_seq 1"
        assert tx.tell(a.id, 1.0, now) == 2, "told_seq must count up without gaps"
        tx.set_stat(a.id, {"gap": -0.5})
    with st.transaction("s1") as tx:
        assert tx.study.n_told == 2, "n_told must be committed"
        rows = tx.told_since(0)
        assert [(r.id, r.told_seq, r.reward_sum, r.state) for r in rows] == \
            [(b.id, 1, 2.5, "told"), (a.id, 2, 1.0, "told")], "told_since must return the told log in order"
        assert [r.id for r in tx.told_since(1)] == [a.id], "told_since(seq) must skip the first seq tells"
        assert rows[1].stat == {"gap": -0.5}, "the stopping statistic must round-trip"
        tx.set_state([c.id], "expired")
        assert tx.pending() == [], "set_state must take tickets out of pending"
        assert tx.batch_entries(0) == [1], "an expired ticket must not hold its batch entry"
    # -- rollback: nothing written when the block raises
    try:
        with st.transaction("s1") as tx:
            tx.add_ticket(1, 1, -1, 0, now, now + 60)
            tx.tell(tx.pending()[0].id, 0.0, now)
            tx.save_snapshot(3, b"x")
            tx.finish("identified", {"answer": 1})
            raise _Boom
    except _Boom:
        pass
    with st.transaction("s1") as tx:
        assert tx.study.n_told == 2 and tx.study.status == "running", "a failed transaction must write nothing"
        assert tx.pending() == [] and tx.latest_snapshot() is None, "a failed transaction must write nothing"
    assert len(st.tickets("s1")) == 3, "a failed transaction must add no ticket"
    # -- snapshots and finish
    with st.transaction("s1") as tx:
        assert tx.latest_snapshot() is None
        tx.save_snapshot(1, b"one")
        tx.save_snapshot(2, b"two\x00")
        tx.finish("identified", {"answer": [0], "certificate": {"gap": 0.1}})
    with st.transaction("s1") as tx:
        assert tx.latest_snapshot() == (2, b"two\x00"), "latest_snapshot must be the newest, bytes intact"
    rec2 = st.get_study("s1")
    assert rec2.status == "identified" and rec2.result == {"answer": [0], "certificate": {"gap": 0.1}}, \
        "finish must store the status and result"
    assert [t.state for t in st.tickets("s1")] == ["told", "told", "expired"]
    assert [t.id for t in st.tickets("s1", states=("told",))] == [a.id, b.id]
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
    st.close()
