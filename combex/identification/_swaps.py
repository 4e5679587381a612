"""Swap-decomposition lower bound of the exact GLR for classes of matroid bases.

Setting (:mod:`combex.identification._linear_thresholds`): the GLR of the answer ``x_hat`` against a
member ``x`` is, divided by its ``kappa_x``,
``Z_x / kappa_x = num_x^2 / (2 sigma^2 ||x_hat - x||^2_M)`` with
``num_x = ((x_hat - x)^T theta_hat + epsilon)_+`` and ``M = A^{-1} + lam A^{-2}`` (any
symmetric positive semi-definite matrix below). Stopping needs a lower bound of
``min_{x != x_hat} Z_x / kappa_x`` over a class too large to enumerate.

Swap decomposition
------------------
Let the class be the bases of a matroid (top-k = uniform matroid, partition matroids,
graphic matroids / spanning trees, linear matroids, any :class:`~combex.oracles.Matroid`
with ``base=True``) and ``x_hat`` a base. For any other base S, Brualdi's symmetric
exchange theorem (Brualdi 1969, "Comments on bases in dependence structures") gives a
bijection ``s: x_hat \\ S -> S \\ x_hat`` with ``x_hat - i + s(i)`` a base for every i.
So ``x_hat - x_S = sum_l (e_{i_l} - e_{j_l})`` over a *matching* of exchangeable pairs
(``i_l in x_hat``, ``j_l`` outside, ``x_hat - i_l + j_l`` a member). Then

* the numerator is additive: ``(x_hat - x_S)^T theta_hat + eps = eps + sum_l g_l``,
  ``g_l = theta_hat_i - theta_hat_j`` (``>= 0`` when ``x_hat`` is the empirical best base:
  a max-weight base is not improved by a single exchange);
* the norm is sub-additive (triangle inequality): ``||x_hat - x_S||_M <= sum_l w_l``,
  ``w_l = ||e_i - e_j||_M``; and, since the entries of ``x_hat - x_S`` are in {-1, 0, 1},
  also ``||x_hat - x_S||^2_M <= sum_l (r_i + r_j)`` for every vector ``r`` with
  ``y^T M y <= sum_a y_a^2 r_a`` on the vectors with ``sum y = 0`` (all bases have one size,
  so ``x_hat - x_S`` sums to 0 and ``M`` may be replaced by ``P M P``, ``P = I - 11^T/n``;
  ``r = diag(PMP) + s`` with ``diag(s) >= PMP - diag(PMP)``: the largest eigenvalue
  (``s_a = lambda_max``) or Gershgorin's row sums (``s_a = sum_{b != a} |(PMP)_ab|``)).

Hence, for every base ``S != x_hat``, with ``P(S)`` its matching::

    Z_S / kappa_S >= (eps + G)_+^2 / (2 sigma^2 W^2)   and   >= (eps + G)_+^2 / (2 sigma^2 V),
    G = sum_{l in P(S)} g_l,  W = sum_l w_l,  V = sum_l (r_i + r_j),

and the minimum over *all* nonempty matchings of exchangeable pairs (a superset of the
``P(S)``) of either right-hand side is a valid lower bound of ``min_S Z_S / kappa_S``.

* Triangle bound: ``min_P (eps + G) / W`` is a linear-fractional program over matchings,
  solved exactly by Dinkelbach's method (``rho <- (eps + G(P)) / W(P)`` with ``P``
  the min-cost matching of cost ``g - rho w``; a min-cost matching of any size >= 1 is a
  :func:`scipy.optimize.linear_sum_assignment` on the k x (n - k) pair matrix padded with k
  zero-cost "unmatched" columns, non-exchangeable pairs forbidden). For ``eps = 0`` the
  optimum is a single swap (mediant inequality: ``sum g / sum w >= min g_l / w_l``), whose
  ``Z`` is *exact*, so the bound equals the exact ``min_S Z_S / kappa_S`` whatever ``M``.
* Additive bound: ``min_P (eps + G)^2 / V`` is bounded below by its Lagrangian dual
  ``max_{c > 0} [2 c eps + min_P sum_l (2 c g_l - c^2 v_l)]`` (``num^2 / V >= 2 c num -
  c^2 V`` for every c); each inner minimum is again a matching. When ``M`` is diagonal on
  the sum-zero vectors (``PMP`` diagonal, e.g. the uniform design over all k-sets, whose
  ``A`` is ``a I + b 11^T``) the additive bound is exact up to the duality gap:
  ``||x_hat - x_S||^2_M = sum_l (M_ii + M_jj)``.

The larger of the two is returned (each is a lower bound of every term).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment, linprog

from ..oracles._matroids import _MatroidBase
from ..oracles import TopK

__all__ = ["is_matroid_base_class", "exchange_pairs", "SwapBound", "swap_glr_lower_bound",
           "swap_glr_lower_bound_of_size", "bases_at_distance", "topk_min_glr_of_size", "swap_T_star_lower_bound"]

_BIG = 1e30


def is_matroid_base_class(dc: Any) -> bool:
    """Whether the members of ``dc`` are the bases of a matroid combex can recognise:
    :class:`~combex.oracles.TopK` (uniform matroid), every matroid class of
    :mod:`combex.oracles` with ``base=True``, or any class declaring
    ``matroid_bases = True``."""
    if getattr(dc, "matroid_bases", False) is True:
        return True

    if isinstance(dc, TopK):
        return True
    return isinstance(dc, _MatroidBase) and bool(getattr(dc, "base", False))


def exchange_pairs(dc: Any, x_hat: NDArray[np.bool_]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.bool_]]:
    """``(I, J, E)``: the members ``I`` of ``x_hat``, the others ``J`` and ``E[a, b]`` =
    ``x_hat - I[a] + J[b]`` is a member (one ``contains`` call per pair; every pair for
    top-k)."""

    x_hat = np.asarray(x_hat, dtype=bool)
    I = np.flatnonzero(x_hat)
    J = np.flatnonzero(~x_hat)
    if isinstance(dc, TopK):
        return I, J, np.ones((I.size, J.size), dtype=bool)
    E = np.zeros((I.size, J.size), dtype=bool)
    m = x_hat.copy()
    for a, i in enumerate(I):
        m[i] = False
        for b, j in enumerate(J):
            m[j] = True
            E[a, b] = bool(dc.contains(m))
            m[j] = False
        m[i] = True
    return I, J, E


def _min_matching(C: NDArray[np.float64], E: NDArray[np.bool_]) -> tuple[float, list[tuple[int, int]]]:
    """Minimum of ``sum_{(a, b) in P} C[a, b]`` over the nonempty matchings ``P`` of allowed
    pairs (``E``): an assignment on ``C`` padded with zero-cost "unmatched" columns; if the
    optimum is empty every allowed cost is >= 0 and the best nonempty matching is the
    cheapest single pair."""

    k, m = C.shape
    Cm = np.where(E, C, _BIG)
    aug = np.hstack([Cm, np.zeros((k, k))])
    rows, cols = linear_sum_assignment(aug)
    pairs = [(int(a), int(b)) for a, b in zip(rows, cols) if b < m and E[a, b] and Cm[a, b] < 0.0]
    if not pairs:
        flat = int(np.argmin(Cm))
        a, b = divmod(flat, m)
        return float(Cm[a, b]), [(a, b)]
    return float(sum(Cm[a, b] for a, b in pairs)), pairs


def _exactly(C: NDArray[np.float64], E: NDArray[np.bool_], m: int, sign: float) -> tuple[float, list[tuple[int, int]]] | None:
    """Optimum of ``sign * sum C`` (min for sign = 1, max for -1) over the matchings of
    exactly ``m`` allowed pairs: an assignment of every row with ``k - m`` "unmatched"
    columns made cheap enough that all are used (so exactly m rows take real columns).
    None when no such matching exists."""

    k, n_out = C.shape
    sc = sign * C
    B = (k + 1) * (float(np.abs(sc[E]).max(initial=0.0)) + 1.0)
    Cm = np.where(E, sc, (2 * k + 1) * B)
    aug = np.hstack([Cm, np.full((k, k - m), -B)])
    rows, cols = linear_sum_assignment(aug)
    pairs = [(int(a), int(b)) for a, b in zip(rows, cols) if b < n_out]
    if len(pairs) != m or any(not E[a, b] for a, b in pairs):
        return None
    return float(sum(C[a, b] for a, b in pairs)), pairs


def _size_split(g: NDArray[np.float64], v: NDArray[np.float64], E: NDArray[np.bool_],
                eps: float) -> tuple[float, list[tuple[int, int]]]:
    """``min_m (eps + G_m)_+^2 / V_m`` with ``G_m = min G`` and ``V_m = max V`` over the
    matchings of exactly m pairs (two assignments per m): every matching of size m has
    ``(eps + G)_+^2 / V >= (eps + G_m)_+^2 / V_m``. Exact when ``v`` is constant (the
    uniform design), where the Lagrangian dual may leave a gap."""
    k, n_out = g.shape
    best, best_pairs = math.inf, []
    for m in range(1, min(k, n_out) + 1):
        lo = _exactly(g, E, m, 1.0)
        hi = _exactly(v, E, m, -1.0)
        if lo is None or hi is None:
            continue
        val = max(eps + lo[0], 0.0) ** 2 / max(hi[0], 1e-300)
        if val < best:
            best, best_pairs = val, lo[1]
    return (0.0 if not math.isfinite(best) else best), best_pairs


@dataclass(frozen=True)
class SwapBound:
    """Result of :func:`swap_glr_lower_bound`.

    Attributes
    ----------
    value : float
        Lower bound of ``min_{S != x_hat} Z_S / kappa_S`` (already divided by ``2 sigma^2``).
    pairs : list of (i, j)
        Ground-set indices of the matching attaining the larger bound (the challenger:
        ``x_hat - sum (e_i - e_j)`` is the closest alternative the bound sees).
    direction : array (n,)
        ``sum_l (e_i - e_j)`` over ``pairs``.
    info : dict
        ``triangle`` and ``additive`` (the two bounds), ``kind`` (which was larger).
    """

    value: float
    pairs: list[tuple[int, int]]
    direction: NDArray[np.float64]
    info: dict[str, Any] = field(default_factory=dict)


def swap_glr_lower_bound(
    x_hat: NDArray[np.bool_],
    theta: NDArray[np.float64],
    M: NDArray[np.float64],
    exchange: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.bool_]],
    *,
    sigma: float = 1.0,
    epsilon: float = 0.0,
    max_iter: int = 50,
) -> SwapBound:
    """Lower bound of ``min_{S != x_hat} ((x_hat - x_S)^T theta + eps)_+^2 / (2 sigma^2
    ||x_hat - x_S||^2_M)`` over the bases S of a matroid (module docstring).

    Parameters
    ----------
    x_hat : bool array (n,)
        A base (the empirical best one for the bound to be useful).
    theta : array (n,)
        The estimate.
    M : array (n, n)
        Symmetric positive semi-definite.
    exchange : (I, J, E)
        From :func:`exchange_pairs`.
    sigma, epsilon : float
    max_iter : int
        Dinkelbach / dual iterations (each one matching).
    """
    I, J, E = exchange
    n = x_hat.shape[0]
    if I.size == 0 or J.size == 0 or not E.any():
        return SwapBound(math.inf, [], np.zeros(n), {"triangle": math.inf, "additive": math.inf, "kind": "none"})
    M = 0.5 * (M + M.T)
    g = theta[I][:, None] - theta[J][None, :]
    dM = np.diag(M)
    w2 = dM[I][:, None] + dM[J][None, :] - 2.0 * M[np.ix_(I, J)]
    w = np.sqrt(np.maximum(w2, 0.0))
    eps = float(epsilon)

    # ---- triangle bound: Dinkelbach on (eps + G) / W
    ge = np.where(E, g, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        single = np.where(E, (eps + g) / np.maximum(w, 1e-300), np.inf)
    a0, b0 = divmod(int(np.argmin(single)), J.size)
    pairs = [(a0, b0)]
    rho = float(single[a0, b0])
    gap = -math.inf  # eps + min_P (G - rho W)(P) at the last rho checked: >= 0 certifies rho
    for _ in range(max_iter):
        if rho <= 0.0:
            gap = 0.0
            break
        val, P = _min_matching(g - rho * w, E)
        gap = eps + val
        if gap >= -1e-12 * max(1.0, abs(eps)):
            gap = max(gap, 0.0)
            break
        G = sum(g[a, b] for a, b in P)
        W = sum(w[a, b] for a, b in P)
        new = (eps + G) / max(W, 1e-300)
        if new >= rho:
            break
        rho, pairs = new, P
    rho = _certified_ratio(rho, gap, w, E)
    tri = max(rho, 0.0) ** 2
    tri_pairs = pairs
    del ge

    # ---- additive bound: Lagrangian dual of (eps + G)^2 / V
    Pm = M - M.mean(axis=0, keepdims=True)
    Pm = Pm - Pm.mean(axis=1, keepdims=True)
    D = np.diag(Pm).copy()
    O = Pm - np.diag(D)
    lam_max = max(float(np.linalg.eigvalsh(O)[-1]), 0.0)
    gersh = np.abs(O).sum(axis=1)
    add_all, add_pairs_all = 0.0, tri_pairs
    for r in (D + lam_max, D + gersh):
        add_best, add_pairs = 0.0, tri_pairs
        v = r[I][:, None] + r[J][None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            single_v = np.where(E, np.maximum(eps + g, 0.0) ** 2 / np.maximum(v, 1e-300), np.inf)
        a0, b0 = divmod(int(np.argmin(single_v)), J.size)
        upper = float(single_v[a0, b0])
        if upper <= 0.0:
            continue
        seen: dict[float, float] = {}

        def phi(c: float) -> tuple[float, list[tuple[int, int]]]:
            val, P = _min_matching(2.0 * c * g - c * c * v, E)
            return 2.0 * c * eps + val, P

        c = max(eps + float(g[a0, b0]), 0.0) / max(float(v[a0, b0]), 1e-300)
        best_c = c
        for _ in range(max_iter):
            val, P = phi(c)
            seen[c] = val
            if val > add_best:
                add_best, add_pairs, best_c = val, P, c
            G = sum(g[a, b] for a, b in P)
            V = sum(v[a, b] for a, b in P)
            c_new = max(eps + G, 0.0) / max(V, 1e-300)
            if c_new in seen or abs(c_new - c) <= 1e-12 * c:
                break
            c = c_new
        # golden-section refinement of the concave dual around the best c found
        lo, hi = math.log(best_c / 8.0), math.log(best_c * 8.0)
        gr = (math.sqrt(5.0) - 1.0) / 2.0
        x1, x2 = hi - gr * (hi - lo), lo + gr * (hi - lo)
        f1, f2 = phi(math.exp(x1))[0], phi(math.exp(x2))[0]
        for _ in range(24):
            if f1 < f2:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + gr * (hi - lo)
                f2 = phi(math.exp(x2))[0]
            else:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - gr * (hi - lo)
                f1 = phi(math.exp(x1))[0]
        for xv in (x1, x2):
            val, P = phi(math.exp(xv))
            if val > add_best:
                add_best, add_pairs = val, P
        add_best = min(add_best, upper)  # the dual never exceeds the primal; guards round-off
        split, split_pairs = _size_split(g, v, E, eps)
        if split > add_best:
            add_best, add_pairs = split, split_pairs
        if add_best > add_all:  # each r gives a valid bound: keep the larger
            add_all, add_pairs_all = add_best, add_pairs
    add_best, add_pairs = add_all, add_pairs_all
    s2 = 2.0 * sigma**2
    tri_v, add_v = tri / s2, max(add_best, 0.0) / s2
    if add_v > tri_v:
        value, sel, kind = add_v, add_pairs, "additive"
    else:
        value, sel, kind = tri_v, tri_pairs, "triangle"
    direction = np.zeros(n)
    out_pairs = []
    for a, b in sel:
        direction[I[a]] += 1.0
        direction[J[b]] -= 1.0
        out_pairs.append((int(I[a]), int(J[b])))
    return SwapBound(value, out_pairs, direction, {"triangle": tri_v, "additive": add_v, "kind": kind,
                                                  "matching_size": len(out_pairs)})


def _certified_ratio(rho: float, gap: float, w: NDArray[np.float64], E: NDArray[np.bool_]) -> float:
    """A certified lower bound of ``min_P (eps + G(P)) / W(P)`` from Dinkelbach's last step:
    ``gap = eps + min_P (G - rho W)(P)``. ``gap >= 0``: ``rho`` itself. Otherwise (stopped at
    ``max_iter`` or on round-off) every matching has ``eps + G - rho W >= gap``, so ``(eps +
    G) / W >= rho + gap / W >= rho + gap / W_max`` with ``W_max`` the largest total weight of a
    matching (an assignment): the ratio returned is a lower bound whatever the iteration did."""
    if gap >= 0.0:
        return rho
    if not math.isfinite(gap):
        return 0.0
    val, _ = _min_matching(-w, E)
    return rho + gap / max(-val, 1e-300)


def bases_at_distance(n: int, k: int, s: int) -> float:
    """``C(k, s) C(n - k, s)``: an upper bound of the number of bases at swap distance ``s``
    (``|B \\ B'| = s``) from a base ``B`` of size ``k`` of any matroid on ``n`` elements
    (choose the ``s`` members that leave and the ``s`` that enter); equal for top-k."""
    return float(math.comb(k, s) * math.comb(n - k, s))


def swap_glr_lower_bound_of_size(
    x_hat: NDArray[np.bool_],
    theta: NDArray[np.float64],
    M: NDArray[np.float64],
    exchange: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.bool_]],
    size: int,
    *,
    sigma: float = 1.0,
    epsilon: float = 0.0,
    max_iter: int = 50,
) -> float:
    """Lower bound of ``min Z_S / kappa_S`` (as :func:`swap_glr_lower_bound`) over the bases
    ``S`` at swap distance exactly ``size`` from ``x_hat`` (``|x_hat \\ S| = size``): by
    Brualdi's theorem their ``x_hat - x_S`` is a sum over a matching of exactly ``size``
    exchangeable pairs, so the module's two bounds hold with the minimum taken over those
    matchings only:

    * triangle: ``min_{|P| = size} (eps + G) / W`` by Dinkelbach's method, each step an
      assignment with exactly ``size`` real pairs (:func:`_exactly`);
    * additive (size split): ``(eps + min G)_+^2 / max V`` over the matchings of that size,
      ``V`` from the two diagonal dominations ``r`` of the module docstring.

    For ``size = 1`` both are exact when ``M`` is the metric (a single swap is one member):
    the triangle bound is then ``min_l (eps + g_l)_+^2 / w_l^2``. Returns ``inf`` when no
    matching of that size exists (no base at that distance).
    """
    I, J, E = exchange
    size = int(size)
    if I.size == 0 or J.size == 0 or size < 1 or size > min(I.size, J.size):
        return math.inf
    M = 0.5 * (M + M.T)
    g = theta[I][:, None] - theta[J][None, :]
    dM = np.diag(M)
    w = np.sqrt(np.maximum(dM[I][:, None] + dM[J][None, :] - 2.0 * M[np.ix_(I, J)], 0.0))
    eps = float(epsilon)
    start = _exactly(g, E, size, 1.0)
    if start is None:
        return math.inf
    P = start[1]
    rho = (eps + sum(g[a, b] for a, b in P)) / max(sum(w[a, b] for a, b in P), 1e-300)
    gap = -math.inf
    for _ in range(max_iter):
        if rho <= 0.0:
            gap = 0.0
            break
        step = _exactly(g - rho * w, E, size, 1.0)
        if step is None:
            gap = -math.inf
            break
        gap = eps + step[0]
        if gap >= -1e-12 * max(1.0, abs(eps)):
            gap = max(gap, 0.0)
            break
        P = step[1]
        new = (eps + sum(g[a, b] for a, b in P)) / max(sum(w[a, b] for a, b in P), 1e-300)
        if new >= rho:
            break
        rho = new
    w_max = _exactly(w, E, size, -1.0)
    rho = rho + min(gap, 0.0) / max(w_max[0], 1e-300) if (gap < 0 and w_max is not None) else rho
    best = max(rho, 0.0) ** 2
    if size > 1:
        Pm = M - M.mean(axis=0, keepdims=True)
        Pm = Pm - Pm.mean(axis=1, keepdims=True)
        D = np.diag(Pm).copy()
        O = Pm - np.diag(D)
        lam_max = max(float(np.linalg.eigvalsh(O)[-1]), 0.0)
        lo = eps + start[0]
        for r in (D + lam_max, D + np.abs(O).sum(axis=1)):
            hi = _exactly(r[I][:, None] + r[J][None, :], E, size, -1.0)
            if hi is not None:
                best = max(best, max(lo, 0.0) ** 2 / max(hi[0], 1e-300))
    return best / (2.0 * sigma**2)


#: Largest ``C(k, s) C(n - k, s)`` for which :func:`topk_min_glr_of_size` enumerates.
TOPK_EXACT_MAX = 2_000_000


def topk_min_glr_of_size(
    x_hat: NDArray[np.bool_],
    theta: NDArray[np.float64],
    M: NDArray[np.float64],
    size: int,
    *,
    sigma: float = 1.0,
    epsilon: float = 0.0,
) -> float | None:
    """The *exact* ``min Z_S / kappa_S`` (as :func:`swap_glr_lower_bound_of_size`) over the
    k-sets ``S`` at swap distance exactly ``size`` from ``x_hat``, for top-k (every pair is
    exchangeable, so those sets are all the choices of ``size`` members of ``x_hat`` to
    leave and ``size`` non-members to enter), by enumeration; ``None`` when there are more
    than :data:`TOPK_EXACT_MAX` of them, ``inf`` when there are none.

    With ``y = 1_L - 1_E`` (L the leaving members, E the entering ones) the numerator is
    ``eps + theta(L) - theta(E)`` and ``y^T M y = q(L) + q(E) - 2 1_L^T M 1_E``, ``q(B) =
    1_B^T M 1_B``: two vectors of block sums and one matrix product, ``C(k, s) x C(n - k,
    s)`` entries in all. Tighter than the matching bounds whenever ``M`` is not diagonal on
    the sum-zero directions (measured on kuroki-synthetic n = 36, k = 10: the size-2 bound
    was 15% below the exact minimum at the stop)."""

    x_hat = np.asarray(x_hat, dtype=bool)
    I, J = np.flatnonzero(x_hat), np.flatnonzero(~x_hat)
    size = int(size)
    if size < 1 or size > min(I.size, J.size):
        return math.inf
    if bases_at_distance(x_hat.size, I.size, size) > TOPK_EXACT_MAX:
        return None
    M = 0.5 * (M + M.T)
    L = np.array(list(combinations(range(I.size), size)), dtype=np.intp)
    E = np.array(list(combinations(range(J.size), size)), dtype=np.intp)
    CL = np.zeros((L.shape[0], I.size))
    CL[np.arange(L.shape[0])[:, None], L] = 1.0
    CE = np.zeros((E.shape[0], J.size))
    CE[np.arange(E.shape[0])[:, None], E] = 1.0
    MII, MJJ, MIJ = M[np.ix_(I, I)], M[np.ix_(J, J)], M[np.ix_(I, J)]
    qL = np.einsum("ia,ab,ib->i", CL, MII, CL)
    qE = np.einsum("ia,ab,ib->i", CE, MJJ, CE)
    quad = qL[:, None] + qE[None, :] - 2.0 * (CL @ MIJ) @ CE.T
    num = CL @ theta[I]
    num = np.maximum(float(epsilon) + num[:, None] - (CE @ theta[J])[None, :], 0.0)
    Z = num**2 / (2.0 * sigma**2 * np.maximum(quad, 1e-300))
    return float(Z.min())


def swap_T_star_lower_bound(theta: NDArray[np.float64], x_star: NDArray[np.bool_],
                            exchange: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.bool_]],
                            k: int, *, sigma: float = 1.0, epsilon: float = 0.0) -> float:
    """A certified *lower* bound of the characteristic time ``T*(theta)`` (exact
    identification, epsilon = 0, as :func:`combex.identification.characteristic_time`)
    of a class of matroid bases of size ``k`` with full-bandit feedback, through an LP.

    ``1 / T* = max_w min_{S != x*} Delta_S^2 / (2 sigma^2 ||x* - x_S||^2_{A(w)^{-1}})``
    (w a distribution over the members, ``A(w) = E_w[x x^T]``). Three relaxations, each
    raising the max-min (so lowering T*):

    1. only the single swaps ``S = x* - i + j`` (members; fewer alternatives);
    2. Cauchy-Schwarz ``(y^T y)^2 <= (y^T A y)(y^T A^{-1} y)`` with ``y = e_i - e_j``:
       ``1 / ||y||^2_{A^{-1}} <= y^T A(w) y / 4 = P_w(exactly one of i, j in the team) / 4
       <= min(p_i + p_j, 2 - p_i - p_j) / 4`` (``p`` the inclusion probabilities; Frechet's
       ``P(i and j) >= p_i + p_j - 1``);
    3. any ``p`` in ``[0, 1]^n`` with ``sum p = k`` (every distribution over k-sets has such
       marginals).

    The LP ``max tau s.t. tau <= Delta_ij^2 u_ij / (8 sigma^2), u_ij <= p_i + p_j,
    u_ij <= 2 - p_i - p_j`` gives ``T*_LP = 1 / tau <= T*``, so ``samples / (T*_LP
    log(1/delta))`` is a certified *upper* bound of the lower-bound ratio. Step 2 is an
    equality for the uniform design over k-sets (``y`` is an eigenvector of its A).
    Returns ``inf`` when a single swap has ``Delta = 0`` (T* is infinite).

    With ``epsilon > 0`` every ``Delta_ij`` becomes ``Delta_ij + epsilon`` (the closest
    alternative in which ``x*`` is not epsilon-good along that swap): the same relaxations
    bound ``T_eps(x*)``, the epsilon-good characteristic time *of the answer x** (Degenne &
    Koolen 2019; :func:`combex.identification.characteristic_time`). It bounds
    ``T*_eps = min_i T_eps(i)`` only when ``x*`` is the only epsilon-good base with a finite
    ``T_eps`` -- the caller checks that.
    """

    I, J, E = exchange
    a, b = np.nonzero(E)
    if a.size == 0:
        return math.inf
    d2 = (theta[I[a]] - theta[J[b]] + float(epsilon)) ** 2
    if np.any(d2 <= 0.0):
        return math.inf
    n = theta.shape[0]
    L = a.size
    # variables: p (n), u (L), tau (1); maximize tau
    c = np.zeros(n + L + 1)
    c[-1] = -1.0
    rows, rhs = [], []
    coef = d2 / (8.0 * sigma**2)
    for l in range(L):
        i, j = I[a[l]], J[b[l]]
        r = np.zeros(n + L + 1)
        r[-1] = 1.0
        r[n + l] = -coef[l]
        rows.append(r)
        rhs.append(0.0)
        r = np.zeros(n + L + 1)
        r[n + l] = 1.0
        r[i] -= 1.0
        r[j] -= 1.0
        rows.append(r)
        rhs.append(0.0)
        r = np.zeros(n + L + 1)
        r[n + l] = 1.0
        r[i] += 1.0
        r[j] += 1.0
        rows.append(r)
        rhs.append(2.0)
    A_eq = np.zeros((1, n + L + 1))
    A_eq[0, :n] = 1.0
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=A_eq, b_eq=[float(k)],
                  bounds=[(0.0, 1.0)] * n + [(0.0, 2.0)] * L + [(0.0, None)], method="highs")
    if res.status != 0 or -res.fun <= 0:
        return math.inf
    # the LP optimum (up to the solver's tolerance, made conservative) bounds 1 / T* above
    return 1.0 / (-res.fun * (1.0 + 1e-7))
