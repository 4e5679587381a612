"""Static designs (allocation strategies) for pure exploration.

- :func:`g_optimal_design`, :func:`xy_optimal_design`: G-optimal (through D-optimal, with
  the Kiefer-Wolfowitz check) and XY-optimal (transductive) designs over a finite
  candidate set, by cvxpy or solver-free Frank-Wolfe; :func:`uniform_design`.
- :func:`l1_design`: the L1 design of LinGapE (its ratio rule).
- Supports for combinatorial classes (exponentially many super-arms):
  :func:`support_from_decision_class`, :func:`topk_support`, and the closed forms
  :func:`uniform_topk_information`, :func:`uniform_topk_g_value`.
- :func:`apportion` (efficient apportionment, Appendix D of the full-bandit paper) and
  :class:`Tracker` (the rule ``argmin T_M / p_M``, one pull or batched).
- :class:`AdaHedge`: the scale-free learner of the game-based samplers (CombGame, LinGame), its
  arithmetic in :func:`hedge_weights` and :func:`hedge_update` (compiled when numba is installed).
- :func:`simplex_maxmin`: the direction of a Frank-Wolfe step on a max-min over the simplex
  (the Frank-Wolfe samplers of index and linear arms).
"""


from ._design import SUPPORT_TOL, Design, g_value, information_matrix, pairwise_differences, uniform_design, xy_value
from ._hedge import AdaHedge, hedge_update, hedge_weights
from ._l1 import L1Design, l1_design
from ._optimal_design import g_optimal_design, xy_optimal_design
from ._rounding import apportion
from ._simplex_game import simplex_maxmin
from ._supports import (
    balanced_topk_support,
    max_g_value_topk,
    support_from_decision_class,
    topk_support,
    uniform_topk_g_value,
    uniform_topk_information,
)
from ._tracking import Tracker

__all__ = [
    "balanced_topk_support",
    "Design",
    "SUPPORT_TOL",
    "g_optimal_design",
    "xy_optimal_design",
    "uniform_design",
    "information_matrix",
    "g_value",
    "xy_value",
    "pairwise_differences",
    "L1Design",
    "l1_design",
    "support_from_decision_class",
    "topk_support",
    "uniform_topk_information",
    "uniform_topk_g_value",
    "max_g_value_topk",
    "apportion",
    "Tracker",
    "AdaHedge",
    "hedge_weights",
    "hedge_update",
    "simplex_maxmin",
]
