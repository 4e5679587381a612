"""The registry of algorithms: every built-in or plug-in algorithm is registered under its
command-line name (:func:`register_solver`) and found by it (:func:`get_solver`)."""

from __future__ import annotations

import difflib
import importlib
from typing import TYPE_CHECKING

from ..exceptions import InvalidParameterError

if TYPE_CHECKING:
    from ._base import Algorithm

__all__ = ["SOLVERS", "CONTRACTS", "register_solver", "get_solver"]


# ---------------------------------------------------------------------- registry
#: The contracts a registered algorithm can follow: ``"pac"`` (:class:`Solver`: ask / tell
#: pure exploration, a :class:`Result` with a certified answer), ``"regret"``
#: (:class:`~combex.solvers.RegretPolicy`: a fixed horizon over a changing arm set, a
#: :class:`~combex.solvers.RegretResult`) and ``"fixed-budget"``
#: (:class:`~combex.solvers.fixed_budget.FixedBudgetSolver`: ask / tell exploration that
#: spends exactly a given number of samples and answers, with the error bound its paper
#: proves at that budget instead of a certificate).
CONTRACTS = ("pac", "regret", "fixed-budget")

SOLVERS: dict[str, type["Algorithm"]] = {}


def register_solver(cls: type["Algorithm"]) -> type["Algorithm"]:
    """Class decorator: register an algorithm under ``cls.name`` (the CLI name).

    The class declares its contract (``cls.contract``, one of :data:`CONTRACTS`); the
    runner, sweeps and the CLI dispatch on it.
    """
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    if getattr(cls, "contract", None) not in CONTRACTS:
        raise ValueError(
            f"{cls.__name__} declares no contract (class attribute 'contract' must be one of {CONTRACTS})"
        )
    SOLVERS[cls.name] = cls
    return cls


def get_solver(name: str) -> type["Algorithm"]:
    """The class registered under ``name`` (PAC solver or regret policy: check its
    ``contract``); a clear error suggesting the closest name otherwise."""
    _load_builtin_solvers()
    try:
        return SOLVERS[name]
    except KeyError:
        close = difflib.get_close_matches(str(name).lower(), SOLVERS, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise InvalidParameterError(
            f"Unknown solver {name!r}.{hint} Known solvers: {', '.join(sorted(SOLVERS))}."
        ) from None


def _load_builtin_solvers() -> None:
    for mod in ("full_bandit", "semi_bandit", "linear", "mips", "sublinear", "optimal", "optimal_linear", "fixed_budget"):
        try:
            importlib.import_module(f"combex.solvers.{mod}")
        except ModuleNotFoundError as exc:  # a family not built yet
            if exc.name != f"combex.solvers.{mod}":
                raise
