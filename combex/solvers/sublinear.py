"""Sublinear-time linear bandits over a changing arm set: Sub-Elim and Sub-TS.

Yang, Ren, Shakkottai, Price, Dhillon and Sanghavi, "Linear Bandit Algorithms with
Sublinear Time Complexity", ICML 2022. Choosing an arm in many linear bandit algorithms
is a maximum inner product search; answering it approximately with the adaptive MIPS
solver of Algorithm 1 (:class:`combex.mips.AdaptiveMIPS`) keeps the regret and makes the
per-step time sublinear in the number of arms K.

* :class:`SubElim` ("sub-elim"): Algorithm 3 (sublinear time elimination) with the
  heap-augmented arm sets of Algorithm 2; arms only arrive.
* :class:`SubTS` ("sub-ts"): Algorithm 4 (sublinear time Thompson sampling); arms arrive
  and leave.
* :class:`LinElim` ("lin-elim"), :class:`LinTS` ("lin-ts"): the linear-time baselines of
  Section 7: elimination with every live arm scanned at every step, and linear Thompson
  sampling with the MIPS step solved by a linear scan.

These are *regret policies* (:class:`~combex.solvers.RegretPolicy`, contract
``"regret"``), not pure-exploration :class:`~combex.solvers.Solver` objects: they minimize
regret over a fixed horizon against an arm set that changes every few steps, never stop,
and have no recommendation to certify. ``policy.run(env, T=None, *, rng=None) ->``
:class:`~combex.solvers.RegretResult` (regret; wall, preprocessing, online and
index-maintenance seconds). They share the registry with the PAC solvers:
``get_solver("sub-elim") is SubElim``, and ``SubElim.contract == "regret"``.

Modules: ``_sub_elim`` (Sub-Elim, Lin-Elim), ``_sub_ts`` (Sub-TS, Lin-TS), ``_regret`` (the
contract and the loop over a run's named steps).

The accuracy knob is the shortlist size ``p`` (Section 7: HNSW returns ``p`` candidates
that are re-ranked exactly); ``eta`` (``eta(T)``, default ``1/sqrt(T)``, Corollaries 5.3
and 6.2) sets the stages and thresholds of the algorithms.
"""

from __future__ import annotations

from ._regret import RegretPolicy, RegretResult
from ._sub_elim import LinElim, SubElim, _Packer, _StageMembers
from ._sub_ts import LinTS, SubTS, _ts_level

__all__ = ["SubElim", "LinElim", "SubTS", "LinTS", "SUBLINEAR_SOLVERS"]

# The classes live in private modules; their public home is this module (documentation,
# pickling and reprs name it).
for _cls in (SubElim, LinElim, SubTS, LinTS):
    _cls.__module__ = __name__
del _cls

#: The sublinear-bandit family by registry name (each is also ``get_solver(name)``).
SUBLINEAR_SOLVERS: dict[str, type[RegretPolicy]] = {
    "sub-elim": SubElim,
    "sub-ts": SubTS,
    "lin-elim": LinElim,
    "lin-ts": LinTS,
}

_private = (_Packer, _StageMembers, _ts_level)  # re-exported for the tests
