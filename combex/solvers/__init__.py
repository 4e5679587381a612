"""The algorithms, one module per family, behind one ask/tell contract (see ``_base``)."""

from ._base import SOLVERS, Batch, Exploration, Result, Solver, get_solver, register_solver

__all__ = ["Batch", "Exploration", "Result", "Solver", "SOLVERS", "get_solver", "register_solver"]
