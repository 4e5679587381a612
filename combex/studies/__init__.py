"""Live studies: persistent ask / tell for real evaluations, by many workers at once.

A study is its problem spec, solver settings, root seed and an append-only log of
evaluation tickets in a storage (in memory, SQLite by file path, any SQLAlchemy URL such
as PostgreSQL). Workers ``ask()`` for tickets and ``tell()`` their reward sums, from many
processes and machines; the exploration state is rebuilt by replaying the told log
(snapshots make resuming fast). See :mod:`combex.studies._study` for the rules
(batch / eager policies, leases, the stop).

Examples
--------
>>> import combex
>>> study = combex.studies.create_study(
...     storage=None, name="demo", solver="lucb", solver_params={"K": 1, "nu": 0.1},
...     problem=combex.studies.problem_spec(3, noise="bernoulli"), seed=0)
>>> t = study.ask()
>>> (t.arm, t.count)
(0, 1)
>>> study.tell(t.id, 1.0)
'running'
"""

from __future__ import annotations

from ._errors import (
    DuplicatedStudyError,
    SchemaVersionError,
    StorageError,
    StudyFinishedError,
    StudyNotFoundError,
    TicketError,
)
from ._problem import problem_spec
from ._storage import SCHEMA_VERSION, BaseStorage, InMemoryStorage, StudyRecord, StudyTransaction, TicketRow
from ._plan import StudyPlan, plan
from ._study import Study, Ticket, create_study, delete_study, get_all_study_names, get_storage, load_study


def __getattr__(name: str):  # SQLStorage needs SQLAlchemy: imported on first use
    if name == "SQLStorage":
        from ._sql import SQLStorage

        return SQLStorage
    raise AttributeError(f"module 'combex.studies' has no attribute {name!r}")


__all__ = [
    "create_study", "load_study", "delete_study", "get_all_study_names", "get_storage", "problem_spec", "plan",
    "StudyPlan",
    "Study", "Ticket", "BaseStorage", "StudyTransaction", "StudyRecord", "TicketRow", "InMemoryStorage",
    "SQLStorage", "SCHEMA_VERSION", "StorageError", "SchemaVersionError", "StudyNotFoundError",
    "DuplicatedStudyError", "TicketError", "StudyFinishedError",
]
