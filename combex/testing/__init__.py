"""Public conformance checks, for built-in and plug-in components alike.

- :func:`check_decision_class` — the :class:`~combex.oracles.DecisionClass` contract.
- :func:`check_solver` — the PAC :class:`~combex.solvers.Solver` contract and its
  (epsilon, delta) promise on easy and adversarial instances (named checks:
  :func:`yield_solver_checks`; error counts tested sequentially, :class:`SequentialRule`).
- :func:`broken_solver` — a built-in solver with its stopping threshold cut, which
  :func:`check_solver` must fail.
- :func:`check_storage` — the study storage contract (:class:`~combex.studies.BaseStorage`).
"""


from ..studies.testing import check_storage
from ._broken import broken_solver
from ._decision_class import check_decision_class
from ._solver import (
    CHECKS,
    FAST_RULE,
    SLOW_RULE,
    CaseReport,
    SequentialRule,
    check_solver,
    clopper_pearson,
    solver_families,
    solver_family,
    yield_solver_checks,
)

__all__ = ["check_decision_class", "check_solver", "yield_solver_checks", "solver_family", "solver_families", "clopper_pearson",
           "CaseReport", "CHECKS", "SequentialRule", "FAST_RULE", "SLOW_RULE", "broken_solver", "check_storage"]
