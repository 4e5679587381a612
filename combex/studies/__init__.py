"""Live studies: persistent ask / tell for real evaluations, by many people at once.

A study is its problem spec, solver settings, root seed and budget, plus append-only logs in
a storage (in memory, SQLite by file path, any SQLAlchemy URL such as PostgreSQL): the
evaluation *tickets* and the *corrections*. Assistants ``ask()`` for tickets and ``tell()``
their scores, from many processes and machines; the exploration state is the replay of the
logs (snapshots are a cache). The lab's case: ``problem_spec(workers=[...], team_size=4,
score_range=(0, 100))``, one team per ticket, one score per session.

The rules
---------
**Truth = the logs.** The state after ``m`` tells is ``solver.start(problem,
rng=default_rng(seed))`` fed the told tickets ``1..m`` in told order, each with its score
as corrected by the latest correction record of that row (a voided row is skipped). A
snapshot is that state serialized (JSON + ``.npz`` bytes, never a pickle) with a checksum,
keyed by the tells and corrections it includes; a process resumes from the newest usable
snapshot and replays the rest, so the state is bit-identical whoever computes it. Told rows
carry a checksum and are validated on replay (arm, count, score in range): damage is an
error naming the row, and a damaged snapshot falls back to the log with a warning.

**Batch policy** (solvers without ``eager_tells``: static designs such as ICB): a ticket is
one entry ``(arm, count)`` of the solver's current batch, recorded as handed out. A batch
is folded when every entry has a score, *in batch order*: the solver sees exactly the
batches it asked for, so the answer equals that of a sequential run given the same scores,
whatever order they arrive in. The first score of an entry fills it; a second one (the
entry was handed out again) is kept in the log as an extra evaluation the solver does not
see. When every entry is out, ``ask()`` hands out nothing (``None`` / ``[]``), except a
second ticket for an entry whose ticket is *overdue*.

**Eager policy** (solvers with ``Solver.eager_tells``: the LUCB family; the GLR solvers
when they declare it): each told ticket is folded at once, in told order. New tickets come
from ``exploration.propose(n, pending, rng)``: the arms the sampling rule wants given the
evaluations still out (``rng`` derived from the seed and the told count, so the replay
never depends on proposals). An overdue ticket does not count as out: a held ticket
neither blocks nor biases the study (its arm, a team perhaps still in session, is still
kept from the next tickets while the rule has another use for them). The confidence bounds of these solvers hold for any
sampling rule adapted to the told history, so the error guarantee is kept.

**Leases, overdue tickets, release.** A ticket's lease (default one day: an assistant may
ask in the morning and enter the score at night) is how long it stays reserved; past it,
the ticket is ``expired`` and its evaluation handed out again (batch policy) or no longer
counted as out (eager). A ticket is *overdue* well before that when it has been out
``OVERDUE_FACTOR`` (3) times longer than the median time-to-tell of recent evaluations, or
while ``2 m + 2`` evaluations were told (``m`` tickets out). A late score is accepted all
the same (the evaluation was made). ``release(ticket)`` hands a ticket back unevaluated.
One ``ask(n=...)`` hands out at most ``MAX_ASK`` (1000) tickets (a larger ``n`` is refused:
an ask is one short transaction holding the study's lock).

**Budget.** With ``budget=B`` the study stops after ``B`` told evaluations (status
``budget_exhausted``, the recommendation, and what the solver reports of its confidence,
e.g. ``delta_achieved``); no ticket is handed out beyond it. (Batch policy: the solver has
seen the complete batches; the scores of an unfinished batch stay in the log and the member
estimates.)

**Corrections.** ``correct(ticket, score_or_None, reason=...)`` appends a correction
record (the told row is never edited); every process notices it and replays the corrected
log (snapshots made before a correction of a row they include are not used). A voided
entry of a batch-policy study is handed out again; under the eager policy it is dropped.
After the stop, the corrected log is replayed: if the stop still holds, the study stays
stopped (result recomputed, the correction listed in ``result["corrected_after_stop"]``);
if not, it returns to ``running`` with a note in its ``history``.
*What this does to the guarantee:* the stopping rules are valid on every prefix of any log
whose arms were chosen from earlier data, so replaying a corrected log keeps the guarantee
when a correction fixes what happened (a mistyped digit, the wrong team in the room) and
the mistake is independent of the later sessions' noise. Correcting or voiding scores
*because of their value* (an unlucky session) biases the data and voids the guarantee; so
does not telling, or releasing, a ticket after seeing its score.

**Stop.** When the rule holds, the status becomes the solver's (``"identified"``), the
result (answer with names, certificate, samples, evaluations, progress) is stored, pending
tickets are cancelled, ``ask`` raises :class:`StudyFinishedError`.

**Reads** (``status``, ``summary()``, ``best()``, ``pending()``, ``history()``,
``member_estimates()``) run in a read transaction, never take the write lock, and read a
bounded part of the storage (the study row with its cached progress and least-squares
aggregates, the pending tickets, a sample of the log): their cost does not grow with it.

**Security-relevant data.** An assistant's token (``add_assistant``) is shown once; the
storage keeps only a random key id and a salted scrypt hash of the secret, compared in
constant time. The storage holds in clear the workers' names, the assistants' names on
every ticket and correction, the scores, times and correction reasons: whoever can read the
database file (or connect to the server) reads all of it, so protect it like the lab's
records. Error messages never show a storage URL's password.

Examples
--------
>>> import combex
>>> study = combex.studies.create_study(
...     storage=None, name="demo", solver="lucb", solver_params={"K": 1, "delta": 0.1},
...     problem=combex.studies.problem_spec(3, noise="bernoulli"), seed=0)
>>> t = study.ask()
>>> (t.arm, t.count)
(0, 1)
>>> study.tell(t.id, 1.0)
'running'
"""


from ..exceptions import (
    DuplicatedStudyError,
    SchemaVersionError,
    StorageError,
    StudyFinishedError,
    StudyNotFoundError,
    TicketError,
)
from ._problem import problem_spec
from ._storage import (
    SCHEMA_VERSION,
    AssistantRow,
    BaseStorage,
    CorrectionRow,
    InMemoryStorage,
    SnapshotRow,
    StudyRecord,
    StudyTransaction,
    TicketRow,
)
from ._forecast import StudyForecast
from ._plan import StudyPlan, plan
from ._upgrade import upgrade_storage
from ._study import (
    DEFAULT_LEASE_SECONDS,
    MAX_ASK,
    MAX_BUDGET,
    Study,
    Ticket,
    create_study,
    delete_study,
    get_all_study_names,
    get_storage,
    iso_time,
    load_study,
    owner_stop,
)


def __getattr__(name: str):  # SQLStorage needs SQLAlchemy: imported on first use
    if name == "SQLStorage":
        from ._sql import SQLStorage  # SQLAlchemy is optional (the studies extra)

        return SQLStorage
    raise AttributeError(f"module 'combex.studies' has no attribute {name!r}")


__all__ = [
    "create_study", "load_study", "delete_study", "get_all_study_names", "get_storage", "problem_spec", "plan",
    "StudyPlan", "StudyForecast", "upgrade_storage",
    "Study", "Ticket", "BaseStorage", "StudyTransaction", "StudyRecord", "TicketRow", "CorrectionRow",
    "AssistantRow", "SnapshotRow", "InMemoryStorage", "MAX_ASK", "MAX_BUDGET", "DEFAULT_LEASE_SECONDS", "iso_time",
    "owner_stop", "SQLStorage", "SCHEMA_VERSION", "StorageError", "SchemaVersionError", "StudyNotFoundError",
    "DuplicatedStudyError", "TicketError", "StudyFinishedError",
]
