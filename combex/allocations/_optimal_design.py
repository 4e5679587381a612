"""The optimal designs: :func:`g_optimal_design` and :func:`xy_optimal_design`, each by a
cvxpy conic solve or by solver-free Frank-Wolfe (:mod:`._frank_wolfe`), returning a
:class:`~combex.allocations.Design` (:mod:`._design`: the result type, criteria and checks)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._validation import check_bool, check_choice, check_float, check_int, check_mask, check_matrix
from ..exceptions import ConvergenceWarning, InvalidParameterError
from ._cvx import DOptimalProblem, _check_solver, get_xy_problem
from ._design import Design, SUPPORT_TOL, _check_candidates, _finalize_weights, g_value, pairwise_differences, xy_value
from ._frank_wolfe import fw_g_optimal, fw_xy_optimal
from ._interior_point import ip_xy_optimal


def _check_options(owner: str, methods: tuple[str, ...], method: Any, tol: Any, max_iter: Any, away_steps: Any,
                   support_tol: Any) -> tuple[str, float, int, bool, float]:
    """The options shared by the design entry points, checked: ``(method, tol, max_iter,
    away_steps, support_tol)``."""
    method = check_choice(method, "method", methods, owner=owner)
    t = check_float(tol, "tol", owner=owner, low=0.0, high=1.0, closed="neither")
    it = check_int(max_iter, "max_iter", owner=owner, low=1)
    away = check_bool(away_steps, "away_steps", owner=owner)
    st = check_float(support_tol, "support_tol", owner=owner, low=0.0, high=1e-2, closed="left")
    return method, t, it, away, st


# ---------------------------------------------------------------------- optimal designs
_METHODS = ("auto", "cvxpy", "frank-wolfe")
#: XY designs have a third solver: the log-barrier interior-point method (:mod:`._interior_point`).
_XY_METHODS = _METHODS + ("interior-point",)


def g_optimal_design(
    X: Any,
    *,
    method: str = "auto",
    solver: str | None = None,
    tol: float = 1e-6,
    max_iter: int = 100_000,
    away_steps: bool = True,
    support_tol: float = SUPPORT_TOL,
) -> Design:
    """G-optimal design: ``argmin_p max_i x_i^T A(p)^{-1} x_i`` over the simplex.

    Computed through the equivalent D-optimal problem ``max_p log det A(p)``
    (Kiefer-Wolfowitz equivalence theorem); at the optimum the G-value equals ``d``, and
    ``Design.kw_gap = value - d`` reports how close the returned design is.

    Parameters
    ----------
    X : array of shape (m, d)
        Candidates (rows), spanning R^d.
    method : {"auto", "cvxpy", "frank-wolfe"}
        ``"cvxpy"``: ``log_det`` with a cvxpy conic solver. ``"frank-wolfe"``: solver-free
        Fedorov-Wynn / Frank-Wolfe with closed-form line search and away steps, stopped
        when ``max_i g_i <= (1 + tol) d`` (duality gap). ``"auto"`` uses Frank-Wolfe,
        which is faster at every size we benchmarked (``benchmarks/allocations.py``).
    solver : str, optional
        cvxpy solver name (default CLARABEL, else SCS); ignored by Frank-Wolfe.
    tol : float in (0, 1)
        Frank-Wolfe: relative G-value tolerance. cvxpy: not used (solver defaults).
    max_iter : int
        Frank-Wolfe iteration cap (a :class:`ConvergenceWarning` is issued if reached).
    away_steps : bool
        Frank-Wolfe: use Wolfe-Atwood away/drop steps (linear convergence).
    support_tol : float in [0, 0.01)
        Weights at or below this are dropped from the support and the rest renormalized.

    Returns
    -------
    Design
        ``criterion="G"``, ``value`` the G-value at the returned weights, ``kw_gap``.

    Raises
    ------
    InvalidParameterError
        Bad ``X`` (not finite, empty, rank < d) or options.
    AllocationError
        The cvxpy solver failed; the message names the solver, its status and a remedy.

    Examples
    --------
    >>> d = g_optimal_design(np.eye(3))
    >>> np.round(d.weights, 6).tolist(), round(d.value, 6)
    ([0.333333, 0.333333, 0.333333], 3.0)
    """


    owner = "g_optimal_design"
    Xa = _check_candidates(X, owner)
    method, tol, max_iter, away_steps, support_tol = _check_options(owner, _METHODS, method, tol, max_iter,
                                                                    away_steps, support_tol)
    m, d = Xa.shape
    if method == "cvxpy":
        solver_name = _check_solver(solver, owner)
        p, iters = DOptimalProblem(Xa).solve(solver_name)
        p = np.nan_to_num(p, nan=0.0)
        converged, used = True, "cvxpy"
    else:

        p, iters, _, converged = fw_g_optimal(Xa, tol=tol, max_iter=max_iter, away_steps=away_steps)
        solver_name, used = None, "frank-wolfe"
        if not converged:
            warnings.warn(
                f"g_optimal_design (frank-wolfe) reached max_iter={max_iter} before the "
                f"G-value came within a factor 1 + tol of d; increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
    w, support = _finalize_weights(p, support_tol)
    value = g_value(Xa, w)
    return Design(w, support, value, "G", used, solver_name, int(iters), value - d, value - d, converged)


def xy_optimal_design(
    X: Any,
    Y: Any = None,
    *,
    method: str = "auto",
    solver: str | None = None,
    tol: float = 1e-3,
    max_iter: int = 20_000,
    away_steps: bool = True,
    active: Any = None,
    support_tol: float = SUPPORT_TOL,
) -> Design:
    """XY-optimal (transductive) design: ``argmin_p max_{y in Y} y^T A(p)^{-1} y``.

    Used by XY-static (Soare et al. 2014) and, on shrinking direction sets, XY-adaptive.

    Parameters
    ----------
    X : array of shape (m, d)
        Candidates to sample (rows), spanning R^d.
    Y : array of shape (n_y, d), optional
        Directions; default all differences ``x_i - x_j`` (:func:`pairwise_differences`).
    method : {"auto", "cvxpy", "frank-wolfe"}
        ``"cvxpy"``: epigraph with one ``matrix_frac(y, A) <= t`` per direction
        (a PSD block of size d + 1 each), built once per shape (DPP) and cached.
        ``"frank-wolfe"``: solver-free, see :mod:`combex.allocations._frank_wolfe`.
        ``"interior-point"``: solver-free log-barrier Newton method with a certified gap
        (:mod:`combex.allocations._interior_point`; one dense (m + 2)-square solve per
        step, tens of steps: 0.05 s at m = 40, d = 20, 1e-6 relative gap); ``tol`` is its
        certified relative gap, ``max_iter`` its Newton-step cap, ``away_steps`` unused.
        ``"auto"``: cvxpy when ``n_y (d + 1)^2 <= 20000`` (accurate, about a second),
        else Frank-Wolfe.
    solver : str, optional
        cvxpy solver (default CLARABEL, else SCS).
    tol : float in (0, 1)
        Frank-Wolfe: stop when the certified relative optimality gap is at most ``tol``
        (the minimax Frank-Wolfe converges sublinearly: 1e-3 takes tens to hundreds of
        iterations, 1e-4 up to thousands).
    max_iter : int
        Frank-Wolfe iteration cap.
    away_steps : bool
        Frank-Wolfe away steps.
    active : bool array of shape (n_y,), optional
        Only the active directions count (XY-adaptive's shrinking set); the cvxpy problem
        is not rebuilt when only ``active`` changes.
    support_tol : float
        Weights at or below this are dropped and the rest renormalized.

    Returns
    -------
    Design
        ``criterion="XY"``; ``value`` the XY-value (over active directions) at the
        returned weights; ``gap`` the certified gap (Frank-Wolfe, interior-point: the
        optimum lies in ``[value - gap, value]``) or ``None`` (cvxpy).

    Raises
    ------
    InvalidParameterError
        Bad ``X``, ``Y`` (wrong width, empty, no active direction) or options.
    AllocationError
        The cvxpy solver failed (message names solver, status and a remedy).
    """

    owner = "xy_optimal_design"
    Xa = _check_candidates(X, owner)
    m, d = Xa.shape
    if Y is None:
        if m < 2:
            raise InvalidParameterError(
                f"The 'X' parameter of {owner} must have at least 2 rows when Y is not given "
                f"(Y defaults to the differences x_i - x_j). Got {m} row instead."
            )
        Ya = pairwise_differences(Xa)
    else:
        Ya = check_matrix(Y, "Y", owner=owner, shape=(None, d))
        if Ya.shape[0] == 0:
            raise InvalidParameterError(f"The 'Y' parameter of {owner} must have at least one direction. Got 0 rows instead.")
    act = None
    if active is not None:

        act = check_mask(active, Ya.shape[0], "active", owner=owner)
        if not act.any():
            raise InvalidParameterError(f"The 'active' parameter of {owner} must select at least one direction. Got none.")
    method, tol, max_iter, away_steps, support_tol = _check_options(owner, _XY_METHODS, method, tol, max_iter,
                                                                    away_steps, support_tol)
    Yeff = Ya if act is None else Ya[act]
    if not np.any(np.abs(Yeff) > 0):
        raise InvalidParameterError(f"The 'Y' parameter of {owner} must contain a nonzero (active) direction.")
    if method == "auto":
        method = "cvxpy" if Ya.shape[0] * (d + 1) ** 2 <= 20_000 else "frank-wolfe"
    gap: float | None
    if method == "cvxpy":
        solver_name = _check_solver(solver, owner)
        p, iters = get_xy_problem(m, d, Ya.shape[0]).solve(Xa, Ya, solver_name, active=act)
        p = np.nan_to_num(p, nan=0.0)
        converged, used, gap = True, "cvxpy", None
    elif method == "interior-point":
        p, iters, _, lower, converged = ip_xy_optimal(Xa, Yeff, tol=tol, max_iter=max_iter)
        solver_name, used = None, "interior-point"
        w, support = _finalize_weights(p, support_tol)
        value = xy_value(Xa, Yeff, w)
        if value - lower > tol * value and support_tol > 0:
            w_all, support_all = _finalize_weights(p, 0.0)  # do the dropped weights matter?
            value_all = xy_value(Xa, Yeff, w_all)
            if value_all < value:
                w, support, value = w_all, support_all, value_all
        gap = max(value - lower, 0.0)  # certified: the optimum lies in [value - gap, value]
        converged = gap <= tol * value
        return Design(w, support, value, "XY", used, solver_name, int(iters), None, gap, converged)
    else:

        p, iters, _, gap, converged = fw_xy_optimal(Xa, Yeff, tol=tol, max_iter=max_iter, away_steps=away_steps)
        solver_name, used = None, "frank-wolfe"
    w, support = _finalize_weights(p, support_tol)
    value = xy_value(Xa, Yeff, w)
    return Design(w, support, value, "XY", used, solver_name, int(iters), None, gap, converged)
