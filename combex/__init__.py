"""combex: pure exploration in structured bandits.

Identify the best team of k workers when only the team's total score is observed, the
best base of a matroid, the best arm of a linear model, or the top inner product in a huge
vector set, with a guaranteed error probability and as few noisy evaluations as possible.

Subpackages (imported on first use, so ``import combex`` stays light):
:mod:`combex.oracles` (decision classes and quadratic maximization),
:mod:`combex.allocations` (optimal designs), :mod:`combex.estimation` (least squares,
confidence radii), :mod:`combex.identification` (the theory of an instance: divergences,
GLR thresholds, the characteristic time T* and its certified bounds),
:mod:`combex.environments` (simulators, real-data environments, the
papers' instances), :mod:`combex.datasets` (real data with provenance),
:mod:`combex.solvers` (the algorithms), :mod:`combex.mips` (inner-product search),
:mod:`combex.studies` (live ask / tell studies in SQLite or PostgreSQL;
``combex.create_study``), :mod:`combex.experiments` (runner, sweeps, plots),
:mod:`combex.testing` (conformance
checks), :mod:`combex.exceptions`.

Examples
--------
>>> import combex
>>> env = combex.environments.FullBandit([0.9, 0.5, 0.1], k=1, rng=0)
>>> combex.solvers.get_solver("icb")(delta=0.05).run(env, rng=1).answer.tolist()
[True, False, False]
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

from . import exceptions
from .exceptions import CombexError, InvalidParameterError

SUBPACKAGES = (
    "allocations",
    "datasets",
    "environments",
    "estimation",
    "experiments",
    "identification",
    "mips",
    "oracles",
    "solvers",
    "studies",
    "testing",
)

#: Live-study functions re-exported at the top level (optuna-style: ``combex.create_study``).
_STUDY_FUNCTIONS = ("create_study", "load_study", "delete_study", "get_all_study_names")

__all__ = ["__version__", "exceptions", "CombexError", "InvalidParameterError", *SUBPACKAGES, *_STUDY_FUNCTIONS]


def __getattr__(name: str) -> Any:
    if name in SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name in _STUDY_FUNCTIONS:
        return getattr(importlib.import_module(".studies", __name__), name)
    raise AttributeError(f"module 'combex' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names only: not the helpers of this module (importlib, Any, annotations)
    return sorted({*__all__, "SUBPACKAGES"})
