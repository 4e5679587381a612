"""Live studies: ask / tell through a storage, by many processes at once.

The rules (stated once; the tests check them):

* **Truth = the told log.** The exploration state after ``m`` tells is
  ``solver.start(problem, rng=default_rng(seed))`` fed the told tickets ``1..m`` in told
  order (by :class:`_Replay`), with ``ask()`` called after every fold. A snapshot is that
  state serialized (JSON + ``.npz`` bytes, no pickle) every ``snapshot_every`` tells; a
  process resumes from the newest snapshot and replays the rest, so the state is
  bit-identical whoever computes it.
* **Batch policy** (every solver): a ticket is one entry ``(arm, count)`` of the solver's
  current batch (``exploration.ask()``). Tells are held until every entry of the batch is
  told, then folded with ``tell_batch`` *in batch order*: the solver sees exactly the
  batches it asked for, so the answer equals that of a sequential run given the same
  rewards, whatever the order the results arrived in. When every entry is out,
  ``ask()`` returns no ticket (``[]`` / ``None``): the workers wait for the batch.
* **Eager policy** (solvers with per-arm statistics: the semi-bandit family): each told
  ticket is folded at once, in told order, as ``tell(arm, reward_sum, count)``. The next
  arm is chosen from *told results only* -- pending tickets do not count: a ticket goes to
  the arm of the solver's next batch (e.g. LUCB's pair h_t, l_t) with the fewest pending
  tickets, ties to the one with the fewest told samples; so when every arm of the batch is
  already pending, another ticket for one of them is handed out (extra samples of an arm
  the solver asked for).
  The confidence bounds of these solvers hold for any sampling rule adapted to the told
  history, so the error guarantee is kept (tests/test_studies.py measures it under a
  pending window of 16).
* **Leases.** A pending ticket past its lease deadline is refused at ``tell`` and, at the
  next ``ask``, marked ``expired`` and handed out again under a new id (same arm, count,
  batch slot). Expired tickets are handed out before anything new.
* **Stop.** When the solver's stopping rule holds, the study's status becomes the
  solver's (``"identified"``), its result (answer, certificate, samples, evaluations) is
  stored, pending tickets are cancelled, ``ask`` raises :class:`StudyFinishedError`.
"""

from __future__ import annotations

import io
import json
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._state import join_arrays, split_arrays
from ._errors import DuplicatedStudyError, StorageError, StudyFinishedError, TicketError
from ._problem import (
    build_problem,
    build_solver,
    check_lease,
    check_reward,
    check_seed,
    problem_spec,
    solver_spec,
)
from ._storage import BaseStorage, InMemoryStorage, StudyRecord, TicketRow

__all__ = ["Ticket", "Study", "create_study", "load_study", "delete_study", "get_all_study_names",
           "get_storage", "EAGER_SOLVERS"]

#: Solvers whose explorations fold any (arm, count, reward_sum) into per-arm statistics
#: and choose the next arm from them: the eager policy applies.
EAGER_SOLVERS = frozenset({"lucb", "lil-lucb", "lucb++", "lil-ucb", "lil-randlucb", "lil-clucb"})


@dataclass(frozen=True)
class Ticket:
    """An evaluation to perform: evaluate ``arm`` (a worker index, or the sorted member
    list of a team) ``count`` times and ``tell`` the sum of the rewards before
    ``lease_deadline`` (Unix time). ``batch`` and ``entry`` locate it in the solver's
    batches (batch policy; ``batch`` is -1 under the eager policy)."""

    id: int
    arm: Any
    count: int
    lease_deadline: float
    batch: int = -1
    entry: int = 0

    @classmethod
    def _of(cls, row: TicketRow) -> "Ticket":
        return cls(row.id, row.arm, row.count, row.lease_deadline, row.batch, row.entry)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "arm": self.arm, "count": self.count, "lease_deadline": self.lease_deadline,
                "batch": self.batch, "entry": self.entry}


def get_storage(storage: Any) -> BaseStorage:
    """A storage from a :class:`BaseStorage`, ``None`` / ``":memory:"`` (in memory), a
    SQLAlchemy URL or a file path (SQLite)."""
    if isinstance(storage, BaseStorage):
        return storage
    if storage is None or storage == ":memory:":
        return InMemoryStorage()
    from ._sql import SQLStorage

    return SQLStorage(storage)


# ============================================================================ replay
def _pack(obj: dict[str, Any]) -> bytes:
    arrays: dict[str, np.ndarray] = {}
    doc = json.dumps(split_arrays(obj, arrays)).encode()
    buf = io.BytesIO()
    np.savez(buf, __doc__=np.frombuffer(doc, dtype=np.uint8), **arrays)
    return buf.getvalue()


def _unpack(payload: bytes) -> dict[str, Any]:
    with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    doc = json.loads(arrays.pop("__doc__").tobytes().decode())
    return join_arrays(doc, arrays)


def _arm_key(arm: Any) -> Any:
    return tuple(arm) if isinstance(arm, list) else int(arm)


class _Replay:
    """The exploration after ``seq`` tells (see the module docstring)."""

    def __init__(self, record: StudyRecord, problem: Any, solver: Any) -> None:
        self.record = record
        self.problem = problem
        self.solver = solver
        self.exp = solver.start(problem, rng=np.random.default_rng(record.seed))
        self.seq = 0
        self.batch_no = 0
        self.buffer: dict[int, float] = {}
        self._after_fold()

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> bytes:
        return _pack({"seq": self.seq, "batch_no": self.batch_no,
                      "buffer": {str(k): v for k, v in self.buffer.items()}, "exp": self.exp.state_dict()})

    @classmethod
    def from_snapshot(cls, record: StudyRecord, problem: Any, solver: Any, payload: bytes) -> "_Replay":
        d = _unpack(payload)
        self = cls.__new__(cls)
        self.record, self.problem, self.solver = record, problem, solver
        self.exp = solver.resume(d["exp"], problem)
        self.seq = int(d["seq"])
        self.batch_no = int(d["batch_no"])
        self.buffer = {int(k): float(v) for k, v in d["buffer"].items()}
        self.exp.record_trace = True
        return self

    # ------------------------------------------------------------------ folding
    def _after_fold(self) -> None:
        self.exp.record_trace = True
        if not self.exp.done:
            self.exp.ask()

    def batch(self) -> Any:
        return self.exp.ask()

    def fold(self, rows: list[TicketRow]) -> None:
        for r in rows:
            if r.told_seq != self.seq + 1:
                raise StorageError(
                    f"The told log of study {self.record.name!r} has a gap: expected told_seq "
                    f"{self.seq + 1}, found {r.told_seq}."
                )
            self.seq = r.told_seq
            if self.exp.done:
                continue
            if self.record.policy == "eager":
                self.exp.tell(_to_arm(r.arm, self.problem.n_arms), r.reward_sum, r.count)
                self._after_fold()
                continue
            if r.batch != self.batch_no:
                raise StorageError(
                    f"Ticket {r.id} of study {self.record.name!r} belongs to batch {r.batch}, but batch "
                    f"{self.batch_no} is open."
                )
            self.buffer[r.entry] = float(r.reward_sum)
            batch = self.exp.ask()
            if len(self.buffer) == len(batch):
                sums = np.array([self.buffer[i] for i in range(len(batch))])
                self.exp.tell_batch(batch, sums)
                self.buffer = {}
                self.batch_no += 1
                self._after_fold()

    def pop_stat(self) -> dict[str, Any] | None:
        tr = self.exp._trace
        if not tr:
            return None
        out = {}
        for k, v in tr.items():
            if v:
                x = v[-1]
                x = x.item() if isinstance(x, np.generic) else x
                if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
                    out[k] = x
        tr.clear()
        return out or None


def _to_arm(arm: Any, n: int) -> Any:
    if isinstance(arm, list):
        m = np.zeros(n, dtype=bool)
        m[arm] = True
        return m
    return int(arm)


def _from_arm(arm: Any) -> Any:
    a = np.asarray(arm)
    if a.ndim == 0:
        return int(a)
    return np.flatnonzero(a).tolist()


def _js(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _js(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_js(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# ============================================================================ Study
class Study:
    """A live study in a storage (make one with :func:`create_study` or
    :func:`load_study`). Safe to use from many processes at once; each keeps a cached
    exploration state and folds in the tells it has not seen."""

    def __init__(self, storage: BaseStorage, record: StudyRecord) -> None:
        self.storage = storage
        self.name = record.name
        self._record = record
        self.problem = build_problem(record.problem)
        self.solver = build_solver(record.solver, record.solver_params)
        self._replay: _Replay | None = None
        self.clock = time.time

    def __repr__(self) -> str:
        return f"Study(name={self.name!r}, solver={self._record.solver!r}, storage={self.storage!r})"

    # ------------------------------------------------------------------ state
    def _sync(self, tx: Any) -> _Replay:
        rp = self._replay
        if rp is None or rp.seq > tx.study.n_told:
            snap = tx.latest_snapshot()
            if snap is not None and snap[0] <= tx.study.n_told:
                rp = _Replay.from_snapshot(tx.study, self.problem, self.solver, snap[1])
            else:
                rp = _Replay(tx.study, self.problem, self.solver)
        if rp.seq < tx.study.n_told:
            rp.fold(tx.told_since(rp.seq))
        self._replay = rp
        return rp

    def _catch_up(self) -> None:
        """Fold the told log into the cached state *before* locking (told rows never
        change), so the locked transaction only folds the few tells since."""
        rp = self._replay
        if rp is None:
            return
        try:
            rows = self.storage.told_since(self.name, rp.seq)
            rp.fold(rows)
        except BaseException:
            self._replay = None
            raise

    def _finish_if_done(self, tx: Any, rp: _Replay) -> None:
        if rp.exp.done and tx.study.status == "running":
            res = rp.exp.result()
            result = _js(res.to_dict())
            result["evaluations"] = int(tx.study.n_told)
            result["answer_labels"] = self._labels(result["answer"])
            tx.finish(res.status, result)
            tx.set_state([t.id for t in tx.pending()], "cancelled")

    def _labels(self, answer: Any) -> Any:
        labels = self._record.problem.get("labels")
        if not labels:
            return None
        return [labels[i] for i in answer] if isinstance(answer, list) else labels[answer]

    def _finished_error(self, rec: StudyRecord) -> StudyFinishedError:
        ans = (rec.result or {}).get("answer")
        return StudyFinishedError(
            f"Study {self.name!r} is {rec.status} (answer {ans!r} after {rec.n_told} evaluations); "
            "nothing more to ask or tell."
        )

    # ------------------------------------------------------------------ ask
    def ask(self, n: int | None = None) -> Any:
        """Hand out evaluation tickets (one transaction).

        Parameters
        ----------
        n : int, optional
            Ask for up to ``n`` tickets at once (a list is returned).

        Returns
        -------
        Ticket or None (``n`` None): None when every evaluation of the solver's current
        batch is out (batch policy; ask again later). With ``n``: a list of up to ``n``
        tickets (possibly empty).

        Raises
        ------
        StudyFinishedError
            When the study has stopped (the message carries the answer).
        """
        want = 1 if n is None else int(n)
        if want < 1:
            raise TicketError(f"The 'n' parameter of Study.ask must be an int >= 1. Got {n!r} instead.")
        self._catch_up()
        try:
            with self.storage.transaction(self.name) as tx:
                if tx.study.status != "running":
                    raise self._finished_error(tx.study)
                rp = self._sync(tx)
                self._finish_if_done(tx, rp)
                if tx.study.status != "running":
                    done = tx.study
                else:
                    done = None
                    out = self._issue(tx, rp, want)
        except (StudyFinishedError, TicketError):
            raise  # raised before anything was folded
        except BaseException:
            self._replay = None  # the cache may hold folds that were rolled back
            raise
        if done is not None:
            self._record = done
            raise self._finished_error(done)
        return out if n is not None else (out[0] if out else None)

    def _issue(self, tx: Any, rp: _Replay, want: int) -> list[Ticket]:
        now = self.clock()
        lease = float(tx.study.lease_seconds)
        out: list[Ticket] = []
        expired = tx.expired(now, want)
        if expired:
            tx.set_state([t.id for t in expired], "expired")
            for t in expired:
                row = tx.add_ticket(t.arm, t.count, t.batch, t.entry, now, now + lease, reissue_of=t.id)
                out.append(Ticket._of(row))
        if len(out) >= want:
            return out
        batch = rp.batch()
        arms = [_from_arm(a) for a in batch.arms]
        counts = [int(c) for c in batch.counts]
        if tx.study.policy == "batch":
            taken = set(tx.batch_entries(rp.batch_no))
            for i in range(len(arms)):
                if len(out) >= want:
                    break
                if i not in taken:
                    row = tx.add_ticket(arms[i], counts[i], rp.batch_no, i, now, now + lease)
                    out.append(Ticket._of(row))
            return out
        # eager: the solver's next entries first, then the least-pending entry again
        pend: dict[Any, int] = {}
        for t in tx.pending():
            k = _arm_key(t.arm)
            pend[k] = pend.get(k, 0) + 1
        told = np.asarray(rp.exp.pulls)
        while len(out) < want:
            i = min(range(len(arms)), key=lambda j: (pend.get(_arm_key(arms[j]), 0), int(told[arms[j]]), j))
            row = tx.add_ticket(arms[i], counts[i], -1, i, now, now + lease)
            out.append(Ticket._of(row))
            k = _arm_key(arms[i])
            pend[k] = pend.get(k, 0) + 1
        return out

    # ------------------------------------------------------------------ tell
    def tell(self, ticket: Any, reward_sum: Any) -> str:
        """Record the reward sum of a ticket (one transaction); returns the study status.

        Refused (a :class:`TicketError`, nothing written) for an unknown ticket, a ticket
        already told (so a retried tell is safe), an expired or cancelled ticket, and a
        reward that is not finite or outside the problem's ``reward_range`` times the
        ticket's count (and team size).
        """
        return self.tell_many([(ticket, reward_sum)])

    def tell_many(self, results: Any) -> str:
        """Tell several ``(ticket or ticket id, reward_sum)`` pairs in one transaction (all
        or nothing); returns the study status."""
        pairs = [(int(getattr(t, "id", t)), r) for t, r in results]
        self._catch_up()
        try:
            return self._tell_many(pairs)
        except (StudyFinishedError, TicketError):
            raise  # raised before anything was folded
        except BaseException:
            self._replay = None  # the cache may hold folds that were rolled back
            raise

    def _tell_many(self, pairs: list[tuple[int, Any]]) -> str:
        with self.storage.transaction(self.name) as tx:
            if tx.study.status != "running":
                raise self._finished_error(tx.study)
            now = self.clock()
            checked = []
            seen = set()
            rows = tx.get_tickets([tid for tid, _ in pairs])
            for tid, r in pairs:
                row = rows.get(tid)
                if row is None:
                    raise TicketError(f"Study {self.name!r} has no ticket {tid}.")
                if row.state == "told" or tid in seen:
                    raise TicketError(f"Ticket {tid} of study {self.name!r} was already told "
                                      f"(reward_sum={row.reward_sum!r}); a second tell is refused.")
                if row.state != "pending" or row.lease_deadline < now:
                    raise TicketError(
                        f"Ticket {tid} of study {self.name!r} has expired (lease deadline "
                        f"{row.lease_deadline:.3f} < now {now:.3f}, state {row.state!r}); its evaluation "
                        "is handed out again, ask for a new ticket."
                    )
                x = check_reward(self._record.problem, row.arm, row.count, r, f"ticket {tid}")
                seen.add(tid)
                checked.append((row, x))
            rp = self._sync(tx)
            items = []
            snap = None
            for k, (row, x) in enumerate(checked):
                seq = tx.study.n_told + 1 + k
                told = TicketRow(**{**row.__dict__, "state": "told", "told_seq": seq, "reward_sum": x,
                                    "told_at": now})
                rp.fold([told])
                items.append((row.id, x, now, rp.pop_stat()))
                if seq % tx.study.snapshot_every == 0:
                    snap = (seq, rp.snapshot())
            tx.tell_many(items)
            if snap is not None:
                tx.save_snapshot(*snap)
            self._finish_if_done(tx, rp)
            self._record = tx.study
            return tx.study.status

    # ------------------------------------------------------------------ reading
    @property
    def status(self) -> str:
        return self.storage.get_study(self.name).status

    def best(self) -> dict[str, Any]:
        """The recommendation: the stored result when the study has stopped, else the
        current leader of the told evaluations (``{"status", "answer", "labels",
        "evaluations", "certificate"}``)."""
        rec = self.storage.get_study(self.name)
        if rec.status != "running" and rec.result is not None:
            return {"status": rec.status, "answer": rec.result["answer"], "labels": rec.result.get("answer_labels"),
                    "evaluations": rec.n_told, "certificate": rec.result.get("certificate", {})}
        rp = self.exploration_state()
        ans = _from_arm(rp.exp.answer)
        return {"status": rec.status, "answer": ans, "labels": self._labels(ans), "evaluations": rp.seq,
                "certificate": _js(rp.exp.certificate)}

    def exploration_state(self) -> _Replay:
        """The exploration rebuilt from the log (read-only use)."""
        with self.storage.transaction(self.name) as tx:
            return self._sync(tx)

    def summary(self) -> dict[str, Any]:
        """Status, counts of tickets by state, and the result (JSON)."""
        rec = self.storage.get_study(self.name)
        rows = self.storage.tickets(self.name)
        counts = {s: 0 for s in ("pending", "told", "expired", "cancelled")}
        for r in rows:
            counts[r.state] += 1
        return {"name": rec.name, "status": rec.status, "solver": rec.solver, "solver_params": rec.solver_params,
                "seed": rec.seed, "policy": rec.policy, "n_arms": rec.problem["n_arms"],
                "tickets": counts, "evaluations": rec.n_told, "result": rec.result}

    def trials_dataframe(self) -> Any:
        """Every ticket as a row (pandas): id, arm, count, state, batch, entry, issued_at,
        lease_deadline, told_seq, reward_sum, told_at, reissue_of."""
        import pandas as pd

        rows = self.storage.tickets(self.name)
        cols = ["id", "arm", "count", "state", "batch", "entry", "issued_at", "lease_deadline", "told_seq",
                "reward_sum", "told_at", "reissue_of"]
        return pd.DataFrame([{c: getattr(r, c) for c in cols} for r in rows], columns=cols)


# ============================================================================ module functions
def create_study(
    *,
    storage: Any = None,
    name: str,
    problem: Any,
    solver: Any,
    solver_params: dict | None = None,
    seed: int = 0,
    lease_seconds: float = 3600.0,
    snapshot_every: int = 1000,
    load_if_exists: bool = False,
) -> Study:
    """Create a study (optuna's naming).

    Parameters
    ----------
    storage : BaseStorage, str or path-like, optional
        A file path (SQLite), a SQLAlchemy URL (``postgresql+psycopg://...``), or None
        (in memory).
    name : str
    problem : dict, Problem or environment
        The problem spec (:func:`problem_spec`); a Problem is converted (its decision
        class stored by registered name and parameters).
    solver : str or Solver
        Registered name (with ``solver_params``) or an instance with JSON settings.
    seed : int
        Root seed of the solver's randomness.
    lease_seconds : float
        How long a ticket may stay pending before it is handed out again.
    snapshot_every : int
        Store the exploration state every this many tells.
    load_if_exists : bool
        Return the existing study when one of that name has the same settings (a study
        of that name with other settings is always refused).

    Raises
    ------
    DuplicatedStudyError
        When the name is taken (with other settings, or ``load_if_exists=False``).
    StorageError
        When the storage cannot be reached.
    """
    if not isinstance(name, str) or not name.strip():
        raise TicketError(f"The 'name' parameter of create_study must be a non-empty str. Got {name!r} instead.")
    spec = problem if isinstance(problem, dict) and "n_arms" in problem and "noise" in problem else None
    spec = problem_spec(**spec) if spec is not None else problem_spec(problem)
    sname, sparams = solver_spec(solver, solver_params)
    solver_obj = build_solver(sname, sparams)
    prob = build_problem(spec)
    solver_obj.start(prob, rng=0)  # the settings fit the problem (raises otherwise)
    from .._validation import check_int

    record = StudyRecord(
        name=name, problem=spec, solver=sname, solver_params=sparams, seed=check_seed(seed),
        lease_seconds=check_lease(lease_seconds),
        snapshot_every=check_int(snapshot_every, "snapshot_every", owner="create_study", low=1),
        policy="eager" if sname in EAGER_SOLVERS else "batch", created_at=time.time(),
    )
    st = get_storage(storage)
    try:
        st.create_study(record)
    except DuplicatedStudyError:
        old = st.get_study(name)
        if old.settings() != record.settings():
            diff = sorted(k for k in record.settings() if record.settings()[k] != old.settings()[k])
            raise DuplicatedStudyError(
                f"A study named {name!r} already exists in {st!r} with other settings ({', '.join(diff)} "
                "differ); choose another name or delete it."
            ) from None
        if not load_if_exists:
            raise DuplicatedStudyError(
                f"A study named {name!r} already exists in {st!r}; pass load_if_exists=True to load it."
            ) from None
        return Study(st, old)
    return Study(st, st.get_study(name))


def load_study(*, storage: Any, name: str) -> Study:
    """Open an existing study (:class:`StudyNotFoundError` when absent)."""
    st = get_storage(storage)
    return Study(st, st.get_study(name))


def delete_study(*, storage: Any, name: str) -> None:
    """Remove a study with its log and snapshots."""
    get_storage(storage).delete_study(name)


def get_all_study_names(storage: Any) -> list[str]:
    """Names of the studies in a storage."""
    return [r.name for r in get_storage(storage).list_studies()]
