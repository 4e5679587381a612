"""The algorithms, one module per family, behind one ask/tell contract (see ``_base``).

* full bandit (Kuroki et al. 2020): :class:`SAQM`, :class:`SAFOA`, :class:`ICB`,
  :class:`Exhaustive` -- :mod:`combex.solvers.full_bandit`;
* semi-bandit / Best-K (Jiang et al. 2017 and baselines): :class:`LilRandLUCB`,
  :class:`LilCLUCB`, :class:`LUCB`, :class:`LilLUCB`, :class:`LUCBPlusPlus`,
  :class:`LilUCB` -- :mod:`combex.solvers.semi_bandit`;
* linear (Xu et al. 2018): :class:`LinGapE`, :class:`LinGapEOracle`, :class:`XYStatic`,
  :class:`XYAdaptive`, :class:`XYOracle` -- :mod:`combex.solvers.linear`;
* MIPS (Liu et al. 2019): :class:`BoundedME` -- :mod:`combex.solvers.mips`;
* sublinear-time linear bandits (Yang et al. 2022), regret minimizers: :class:`SubElim`,
  :class:`SubTS`, :class:`LinElim`, :class:`LinTS` -- :mod:`combex.solvers.sublinear`.

Every algorithm is also reachable by its registered name: :func:`get_solver`. The family
modules are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._base import SOLVERS, Batch, Exploration, Result, Solver, get_solver, register_solver

#: Public algorithm classes and the family module holding each.
_ALGORITHMS = {
    "SAQM": "full_bandit", "SAFOA": "full_bandit", "ICB": "full_bandit", "Exhaustive": "full_bandit",
    "LilRandLUCB": "semi_bandit", "LilCLUCB": "semi_bandit", "LUCB": "semi_bandit", "LilLUCB": "semi_bandit",
    "LUCBPlusPlus": "semi_bandit", "LilUCB": "semi_bandit",
    "LinGapE": "linear", "LinGapEOracle": "linear", "XYStatic": "linear", "XYAdaptive": "linear",
    "XYOracle": "linear",
    "BoundedME": "mips",
    "SubElim": "sublinear", "SubTS": "sublinear", "LinElim": "sublinear", "LinTS": "sublinear",
    "RegretResult": "sublinear",
}

__all__ = ["Solver", "Exploration", "Result", "Batch", "SOLVERS", "get_solver", "register_solver", *_ALGORITHMS]


def __getattr__(name: str) -> Any:
    module = _ALGORITHMS.get(name)
    if module is None:
        raise AttributeError(f"module 'combex.solvers' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ALGORITHMS))
