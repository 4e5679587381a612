"""cvxpy formulations of the G-optimal (through D-optimal) and XY-optimal designs.

* :class:`DOptimalProblem`: ``maximize log_det(X^T diag(p) X)``, ``p`` in the simplex
  (solved once per instance; constant data).
* :class:`XYOptimalProblem` (re-solved by XY-adaptive): built once per shape with
  :class:`cvxpy.Parameter` data (DPP) and cached, so re-solving with new data of the same
  shape skips cvxpy's canonicalization. ``A = sum_i p_i x_i x_i^T`` through the parameter
  ``Phi`` of shape (d*d, m) whose column ``i`` is ``vec(x_i x_i^T)``;
  ``minimize t`` s.t. ``matrix_frac(y_j, A) <= t`` for every
  direction ``y_j`` (the epigraph of ``max_j y_j^T A^{-1} y_j``), same ``A``. Directions
  can be switched off (``active``) without rebuilding: an inactive direction is set to
  zero, and ``matrix_frac(0, A) = 0 <= t`` is void.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import param_error
from ..exceptions import AllocationError, ConvergenceWarning

__all__ = ["DOptimalProblem", "XYOptimalProblem", "default_solver", "get_xy_problem"]

_CACHE_SIZE = 8
_cache: "OrderedDict[tuple[Any, ...], Any]" = OrderedDict()


def _cp() -> Any:
    import cvxpy as cp  # cvxpy is slow to import (~0.5 s): only the cvxpy methods load it

    return cp


def default_solver() -> str:
    """CLARABEL when installed (exponential and PSD cones, interior point), else SCS."""
    cp = _cp()
    installed = cp.installed_solvers()
    for name in ("CLARABEL", "SCS"):
        if name in installed:
            return name
    raise AllocationError(  # pragma: no cover - cvxpy always ships SCS or CLARABEL
        "No cvxpy solver for log_det / PSD constraints is installed (need CLARABEL or SCS); "
        "install one or use method='frank-wolfe'."
    )


def _check_solver(solver: str | None, owner: str) -> str:
    cp = _cp()
    if solver is None:
        return default_solver()

    if not isinstance(solver, str) or solver.upper() not in cp.installed_solvers():
        raise param_error("solver", owner, f"an installed cvxpy solver, one of {sorted(cp.installed_solvers())}", solver)
    return solver.upper()


def _outer_columns(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """Column i is vec(x_i x_i^T) (symmetric, so F and C order agree)."""
    m, d = X.shape
    return np.einsum("ij,ik->jki", X, X).reshape(d * d, m)


#: Tighter than CLARABEL's defaults (1e-8): off-support weights then fall below 1e-8 and
#: the Kiefer-Wolfowitz gap of G designs is about 1e-4 instead of 1e-3 (d = 10).
_ACCURATE = {"CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}}


def _solve(problem: Any, solver: str, owner: str, **kwargs: Any) -> None:
    cp = _cp()
    kwargs = {**_ACCURATE.get(solver, {}), **kwargs}
    try:
        problem.solve(solver=solver, **kwargs)
    except cp.error.SolverError as exc:
        raise AllocationError(
            f"{owner}: the cvxpy solver {solver} failed ({exc}). Try another solver (e.g. "
            f"solver='SCS' or 'CLARABEL') or method='frank-wolfe'."
        ) from exc
    status = problem.status
    if status == cp.OPTIMAL_INACCURATE:
        warnings.warn(
            f"{owner}: the cvxpy solver {solver} returned status {status!r}; the design may be "
            f"inaccurate. Try another solver or method='frank-wolfe'.",
            ConvergenceWarning,
            stacklevel=3,
        )
    elif status != cp.OPTIMAL:
        raise AllocationError(
            f"{owner}: the cvxpy solver {solver} returned status {status!r} with no solution. "
            f"Remedy: try solver='SCS' (or 'CLARABEL'), rescale X, or use method='frank-wolfe'."
        )


class DOptimalProblem:
    """``max log det X^T diag(p) X`` over the simplex for one candidate set ``X``.

    The G design is solved once per instance, so the data enter as constants: a DPP
    parameter would be the (d*d, m) tensor of outer products, whose canonicalization
    costs far more than the solve (d = 50, m = 100: 62 s vs 41 s; d = 111 runs out of
    memory).
    """

    def __init__(self, X: NDArray[np.float64]) -> None:
        cp = _cp()
        m, d = X.shape
        self.m, self.d = m, d
        # scale so that the largest row norm is 1 (conditioning); the design is invariant
        Xs = X / float(np.max(np.linalg.norm(X, axis=1)))
        self.p = cp.Variable(m, nonneg=True, name="p")
        A = Xs.T @ cp.diag(self.p) @ Xs
        self.problem = cp.Problem(cp.Maximize(cp.log_det(A)), [cp.sum(self.p) == 1])

    def solve(self, solver: str, **kwargs: Any) -> tuple[NDArray[np.float64], int]:
        _solve(self.problem, solver, "g_optimal_design", **kwargs)
        iters = int(getattr(self.problem.solver_stats, "num_iters", 0) or 0)
        return np.asarray(self.p.value, dtype=np.float64), iters


class XYOptimalProblem:
    """``min_p max_j y_j^T A(p)^{-1} y_j`` over the simplex for fixed shapes (m, d, |Y|)."""

    def __init__(self, m: int, d: int, ny: int) -> None:
        cp = _cp()
        self.m, self.d, self.ny = m, d, ny
        self.phi = cp.Parameter((d * d, m), name="outer_products")
        self.Y = cp.Parameter((ny, d), name="directions")
        self.p = cp.Variable(m, nonneg=True, name="p")
        self.A = cp.Variable((d, d), symmetric=True, name="A")
        self.t = cp.Variable(name="t")
        cons = [cp.sum(self.p) == 1, cp.vec(self.A, order="F") == self.phi @ self.p]
        cons += [cp.matrix_frac(self.Y[j], self.A) <= self.t for j in range(ny)]
        self.problem = cp.Problem(cp.Minimize(self.t), cons)

    def solve(
        self, X: NDArray[np.float64], Y: NDArray[np.float64], solver: str, *, active: NDArray[np.bool_] | None = None, **kwargs: Any
    ) -> tuple[NDArray[np.float64], int]:
        scale = float(np.max(np.linalg.norm(X, axis=1)))
        self.phi.value = _outer_columns(X / scale)
        Yv = Y / scale
        if active is not None:
            Yv = np.where(active[:, None], Yv, 0.0)
        self.Y.value = Yv
        _solve(self.problem, solver, "xy_optimal_design", **kwargs)
        iters = int(getattr(self.problem.solver_stats, "num_iters", 0) or 0)
        return np.asarray(self.p.value, dtype=np.float64), iters


def _cached(key: tuple[Any, ...], build: Any) -> Any:
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    obj = build()
    _cache[key] = obj
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return obj


def get_xy_problem(m: int, d: int, ny: int) -> XYOptimalProblem:
    """The cached XY-optimal problem for shapes (m, d, |Y|) (built on first use)."""
    return _cached(("XY", m, d, ny), lambda: XYOptimalProblem(m, d, ny))  # type: ignore[no-any-return]
