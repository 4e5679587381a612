"""The algorithms, one module per family, behind three contracts (see ``_base``, ``_regret``
and ``fixed_budget``).

``get_solver(name)`` returns the registered class for every algorithm; ``cls.contract`` is
``"pac"`` for pure exploration (:class:`Solver`: ask / tell, :class:`Result`),
``"regret"`` for regret policies (:class:`RegretPolicy`: ``run(env, T)``,
:class:`RegretResult`) and ``"fixed-budget"`` for algorithms that spend a given number of
samples (a :class:`Solver` whose ``run`` needs a ``budget``).

* full bandit (Kuroki et al. 2020): :class:`SAQM`, :class:`SAFOA`, :class:`ICB`,
  :class:`Exhaustive` -- :mod:`combex.solvers.full_bandit`;
* semi-bandit / Best-K (Jiang et al. 2017 and baselines): :class:`LilRandLUCB`,
  :class:`LilCLUCB`, :class:`LUCB`, :class:`LilLUCB`, :class:`LUCBPlusPlus`,
  :class:`LilUCB` -- :mod:`combex.solvers.semi_bandit`;
* linear (Xu et al. 2018): :class:`LinGapE`, :class:`LinGapEOracle`, :class:`XYStatic`,
  :class:`XYAdaptive`, :class:`XYOracle` -- :mod:`combex.solvers.linear`;
* asymptotically optimal linear / full-bandit (GLR stopping): :class:`LinGame`,
  :class:`RAGE`, :class:`LinearTopTwo`, :class:`LinearFWSampling`, :class:`RandomDesign` (teams
  drawn at random, the fixed-design stop) -- :mod:`combex.solvers.optimal_linear`,
  sampling rules on its shared loop (:class:`LinearGLRSolver`, :class:`LinearGLRExploration`),
  which takes a new rule as a small subclass;
* MIPS (Liu et al. 2019): :class:`BoundedME` -- :mod:`combex.solvers.mips`;
* asymptotically optimal (GLR stopping; best arm, Best-K, decision classes):
  :class:`TrackAndStop`, :class:`TopTwo`, :class:`FWSampling`, :class:`CombGame` --
  :mod:`combex.solvers.optimal`, sampling rules on the shared GLR loop of
  :mod:`combex.solvers.glr` (:class:`GLRSolver`, :class:`GLRExploration`), which takes a
  new sampling rule as a small subclass, and whose stopping rule is an object of
  :mod:`combex.solvers.stopping` (:func:`glr_stopping_rule`: :class:`PairStop`,
  :class:`PairStopUnknownVariance`, :class:`MemberStop`, :class:`CertificateStop`);
* sublinear-time linear bandits (Yang et al. 2022), regret policies: :class:`SubElim`,
  :class:`SubTS`, :class:`LinElim`, :class:`LinTS` -- :mod:`combex.solvers.sublinear`;
* fixed budget (the ``"fixed-budget"`` contract: spend exactly ``budget`` samples, report
  the paper's error bound): :class:`SuccessiveRejects`, :class:`SuccessiveAcceptsRejects`,
  :class:`SequentialHalving`, :class:`CSAR`, and for full-bandit teams
  :class:`UniformAllocation`, :class:`ODLinBAI`, :class:`FullBanditCSAR` --
  :mod:`combex.solvers.fixed_budget`.

Every algorithm is also reachable by its registered name: :func:`get_solver`. The family
modules are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._base import Algorithm, Batch, Exploration, Result, Solver
from ._registry import CONTRACTS, SOLVERS, get_solver, register_solver
from ._regret import RegretPolicy, RegretResult

#: Public algorithm classes (and the GLR loop's pieces) and the module holding each.
_ALGORITHMS = {
    "SAQM": "full_bandit", "SAFOA": "full_bandit", "ICB": "full_bandit", "Exhaustive": "full_bandit",
    "LilRandLUCB": "semi_bandit", "LilCLUCB": "semi_bandit", "LUCB": "semi_bandit", "LilLUCB": "semi_bandit",
    "LUCBPlusPlus": "semi_bandit", "LilUCB": "semi_bandit",
    "LinGapE": "linear", "LinGapEOracle": "linear", "XYStatic": "linear", "XYAdaptive": "linear",
    "XYOracle": "linear",
    "BoundedME": "mips",
    "SubElim": "sublinear", "SubTS": "sublinear", "LinElim": "sublinear", "LinTS": "sublinear",
    "LinGame": "optimal_linear", "RAGE": "optimal_linear", "LinearTopTwo": "optimal_linear",
    "LinearFWSampling": "optimal_linear", "RandomDesign": "optimal_linear", "LinearGLRSolver": "optimal_linear",
    "LinearGLRExploration": "optimal_linear",
    "TrackAndStop": "optimal", "TopTwo": "optimal", "FWSampling": "optimal", "CombGame": "optimal",
    "GLRSolver": "glr", "GLRExploration": "glr",
    "GLRStoppingRule": "stopping", "PairStop": "stopping", "PairStopUnknownVariance": "stopping",
    "MemberStop": "stopping", "CertificateStop": "stopping", "glr_stopping_rule": "stopping",
    "SuccessiveRejects": "fixed_budget", "SuccessiveAcceptsRejects": "fixed_budget",
    "SequentialHalving": "fixed_budget", "CSAR": "fixed_budget", "UniformAllocation": "fixed_budget",
    "ODLinBAI": "fixed_budget", "FullBanditCSAR": "fixed_budget",
}

__all__ = ["Algorithm", "Solver", "RegretPolicy", "Exploration", "Result", "RegretResult", "Batch", "SOLVERS",
           "CONTRACTS", "get_solver", "register_solver", *_ALGORITHMS]


def __getattr__(name: str) -> Any:
    module = _ALGORITHMS.get(name)
    if module is None:
        raise AttributeError(f"module 'combex.solvers' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    # the public names and the registered solvers, not this module's helpers (importlib, Any, annotations)
    return sorted((set(globals()) - {"importlib", "Any", "annotations"}) | set(_ALGORITHMS))
