"""The algorithms, one module per family, behind two contracts (see ``_base`` and ``_regret``).

``get_solver(name)`` returns the registered class for every algorithm; ``cls.contract`` is
``"pac"`` for pure exploration (:class:`Solver`: ask / tell, :class:`Result`) and
``"regret"`` for regret policies (:class:`RegretPolicy`: ``run(env, T)``,
:class:`RegretResult`).
"""

from ._base import CONTRACTS, SOLVERS, Algorithm, Batch, Exploration, Result, Solver, get_solver, register_solver
from ._regret import RegretPolicy, RegretResult

__all__ = ["Algorithm", "Batch", "Exploration", "Result", "Solver", "RegretPolicy", "RegretResult", "SOLVERS",
           "CONTRACTS", "get_solver", "register_solver"]
