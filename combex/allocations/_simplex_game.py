"""The direction of a Frank-Wolfe step on a max-min of smooth functions over the simplex.

Frank-Wolfe sampling (Wang, Tzeng & Proutiere, NeurIPS 2021, Algorithm 1) maximizes
``F(x) = min_a F_a(x)`` over the simplex; at a point where several ``F_a`` are (nearly)
active, it moves towards ``z = argmax_{z in simplex} min_{a in H} <grad F_a(x), z - x>``.
:func:`simplex_maxmin` computes this direction for any arms -- independent arms (index
problems), a linear model's arms or teams -- so both Frank-Wolfe samplers share it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

__all__ = ["simplex_maxmin"]


def simplex_maxmin(G: NDArray[np.float64], x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``argmax_{z in simplex} min_h <G_h, z - x>``: the Frank-Wolfe direction against the
    rows ``G_h`` (gradients of the active functions at ``x``).

    One row: the vertex ``e_k``, ``k = argmax G_0`` (first index on ties). Two rows: in
    closed form (:func:`_two_row_game`). More rows: a linear program (HiGHS) on the rows
    scaled to ``max |G| = 1`` (the value scales, the maximizer does not); should the LP
    fail, the vertex of the largest mean gradient.

    Parameters
    ----------
    G : array of shape (m, n)
        One row per active function.
    x : array of shape (n,)
        The current point of the simplex.

    Returns
    -------
    array of shape (n,)
        A point of the simplex (nonnegative, sums to one).

    Examples
    --------
    >>> import numpy as np
    >>> from combex.allocations import simplex_maxmin
    >>> simplex_maxmin(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.5, 0.5])).tolist()
    [0.5, 0.5]
    """
    G = np.asarray(G, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    m, n = G.shape
    z = np.zeros(n)
    if m == 1:
        z[int(np.argmax(G[0]))] = 1.0
        return z
    if m == 2:
        return _two_row_game(G[0] - G[0] @ x, G[1] - G[1] @ x)
    scale = max(float(np.abs(G).max()), 1e-300)
    Gs = G / scale
    # variables (z_1..z_n, u): maximize u s.t. u <= G_h z - G_h x, z in the simplex
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-Gs, np.ones((m, 1))])
    b_ub = -(Gs @ x)
    A_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0], bounds=[(0, None)] * n + [(None, None)],
                  method="highs")
    if res.status != 0:  # pragma: no cover - a degenerate game
        z[int(np.argmax(G.mean(axis=0)))] = 1.0
        return z
    z = np.maximum(res.x[:n], 0.0)
    return z / z.sum()


def _two_row_game(u: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``argmax_{z in simplex} min(u^T z, v^T z)`` in closed form: an LP with two
    constraints has a basic optimal solution with at most two nonzero coordinates, so the
    optimum is at a vertex or on an edge ``z = a e_k + (1 - a) e_l`` where the two are
    equal."""
    k = u.shape[0]
    best_val = np.minimum(u, v)
    kk = int(np.argmax(best_val))
    val = float(best_val[kk])
    z = np.zeros(k)
    z[kk] = 1.0
    du = u - v  # difference at each vertex
    D = du[:, None] - du[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        a = -du[None, :] / D  # crossing: a du_k + (1 - a) du_l = 0
    ok = np.isfinite(a) & (a > 0) & (a < 1)
    if ok.any():
        a = np.where(ok, a, 0.0)
        mix = np.where(ok, a * u[:, None] + (1 - a) * u[None, :], -np.inf)
        i, j = np.unravel_index(int(np.argmax(mix)), mix.shape)
        if mix[i, j] > val:
            z = np.zeros(k)
            z[i] += a[i, j]
            z[j] += 1 - a[i, j]
    return z
