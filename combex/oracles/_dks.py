"""Densest-k-subgraph (DkS) oracles for Algorithm 1 (Quadratic Maximization).

Algorithm 1 of Kuroki et al. (full-bandit paper, Section 3) reduces 0-1 quadratic
maximization to a densest-k-subgraph instance on a complete graph with non-negative edge
weights and accepts *any* DkS oracle; Theorem 1 turns the oracle's approximation ratio
``alpha_DkS`` into a ratio for the quadratic program. This module provides three oracles
behind one small contract:

``name``
    Registry name (``"peeling"``, ``"fpk"``, ``"exact"``).
``solve(Wt, k) -> (mask, value)``
    ``Wt`` is a symmetric ``(n, n)`` matrix of non-negative edge weights (the diagonal is
    ignored); ``mask`` is a bool array of shape ``(n,)`` with exactly ``k`` entries set and
    ``value`` is the weight of the induced subgraph, every unordered pair counted once.
``alpha(n, k) -> float``
    A worst-case ratio the oracle *provably* guarantees: ``value >= alpha * OPT`` on every
    instance with ``n`` vertices. Each bound is proven in the oracle's docstring; the
    asymptotic ratios of the literature (with unstated ``O(.)`` terms) are not used.

All oracles are deterministic (ties go to the lowest index).

The module also holds the exact yardsticks shared with :mod:`combex.oracles.quadratic`:
a meet-in-the-middle enumeration of all k-subsets (vectorized with BLAS) and a CP-SAT model
with the standard linearization.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_matrix, param_error
from ..exceptions import InvalidParameterError, OracleError
from ._cpsat import import_cp_model

__all__ = [
    "DkSOracle",
    "GreedyPeeling",
    "FeigePelegKortsarz",
    "ExactDkS",
    "DKS_ORACLES",
    "get_dks_oracle",
    "subgraph_weight",
]

# Largest number of vertices for which the meet-in-the-middle enumeration builds the
# 2^(n/2) half-subset tables (2^16 rows of 16 booleans).
_MITM_MAX_N = 32
# Number of entries of one block of the enumeration (memory cap, ~8 MB of float64).
_BLOCK = 1 << 20


# --------------------------------------------------------------------------- helpers
def _check_graph(Wt: Any, k: Any, owner: str) -> tuple[NDArray[np.float64], int]:
    """Validate a DkS instance; return the weight matrix with a zero diagonal and k."""
    fast = isinstance(Wt, np.ndarray) and Wt.dtype == np.float64 and Wt.ndim == 2
    W = Wt if fast else check_matrix(Wt, "Wt", owner=owner)
    if W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise InvalidParameterError(
            f"The 'Wt' parameter of {owner} must be a non-empty square matrix. "
            f"Got an array of shape {W.shape} instead."
        )
    n = W.shape[0]
    W = check_matrix(W, "Wt", owner=owner, symmetric=True)
    W = 0.5 * (W + W.T)  # exact symmetry (check_matrix allows rounding noise)
    np.fill_diagonal(W, 0.0)
    if n > 1 and W.min() < 0.0:
        i, j = np.unravel_index(int(np.argmin(W)), W.shape)
        raise InvalidParameterError(
            f"The 'Wt' parameter of {owner} must have non-negative off-diagonal entries "
            f"(edge weights). Got {W[i, j]!r} at ({i}, {j}) instead."
        )
    k = check_int(k, "k", owner=owner, low=1, high=n)
    return W, k


def subgraph_weight(Wt: NDArray[np.float64], mask: NDArray[np.bool_]) -> float:
    """Weight of the subgraph induced by ``mask``: the sum of ``Wt[i, j]`` over unordered
    pairs ``i < j`` inside the set (the diagonal is ignored)."""
    idx = np.flatnonzero(mask)
    sub = Wt[np.ix_(idx, idx)]
    return float(0.5 * (sub.sum() - np.trace(sub)))


def _complete_greedily(W0: NDArray[np.float64], mask: NDArray[np.bool_], k: int) -> NDArray[np.bool_]:
    """Add vertices of largest weight into the current set until it has ``k`` vertices
    (ties: lowest index). Weights are non-negative, so completion never loses weight."""
    mask = mask.copy()
    gain = W0[mask].sum(axis=0) if mask.any() else np.zeros(W0.shape[0])
    gain = np.where(mask, -np.inf, gain)
    for _ in range(k - int(mask.sum())):
        v = int(np.argmax(gain))
        mask[v] = True
        gain += W0[v]
        gain[v] = -np.inf
    return mask


def _top_mask(scores: NDArray[np.float64], m: int) -> NDArray[np.bool_]:
    """Mask of the ``m`` largest scores (stable: ties to the lowest index)."""
    mask = np.zeros(scores.shape[0], dtype=bool)
    if m > 0:
        mask[np.argsort(-scores, kind="stable")[:m]] = True
    return mask


# ------------------------------------------------------------------ exact yardsticks
def _subset_table(h: int) -> NDArray[np.float64]:
    """All 2^h subsets of range(h) as 0/1 rows (float64)."""
    codes = np.arange(1 << h, dtype=np.int64)
    return ((codes[:, None] >> np.arange(h)) & 1).astype(np.float64)


def _enumerate_qp(M: NDArray[np.float64], k: int) -> tuple[NDArray[np.bool_], float]:
    """Exact ``max x^T M x`` over 0/1 vectors with ``sum(x) = k`` by full enumeration.

    For ``n <= 32`` a meet-in-the-middle scheme: split the ground set into halves A and B,
    list every subset of each half with its own value ``x_A^T M_AA x_A``, and score every
    pair (S_A, S_B) with ``|S_A| + |S_B| = k`` at once as
    ``v_A[:, None] + v_B[None, :] + 2 X_A M_AB X_B^T`` (matrix products, blocked). For
    larger ``n`` (small k) the k-subsets are listed with :func:`itertools.combinations`
    in chunks and scored with a vectorized gather. Work is ``O(C(n, k) * k)``.
    """
    n = M.shape[0]
    best_val = -np.inf
    best: NDArray[np.bool_] | None = None
    if n <= _MITM_MAX_N:
        h = n // 2
        XA, XB = _subset_table(h), _subset_table(n - h)
        sA, sB = XA.sum(axis=1), XB.sum(axis=1)
        MAA, MBB, MAB = M[:h, :h], M[h:, h:], M[:h, h:]
        for r in range(max(0, k - (n - h)), min(h, k) + 1):
            SA, SB = XA[sA == r], XB[sB == k - r]
            vA = np.einsum("ij,ij->i", SA @ MAA, SA)
            vB = np.einsum("ij,ij->i", SB @ MBB, SB)
            CA = 2.0 * (SA @ MAB)
            step = max(1, _BLOCK // SB.shape[0])
            for a0 in range(0, SA.shape[0], step):
                block = vA[a0:a0 + step, None] + vB[None, :] + CA[a0:a0 + step] @ SB.T
                flat = int(np.argmax(block))
                val = float(block.flat[flat])
                if val > best_val:
                    ia, ib = divmod(flat, SB.shape[0])
                    best_val = val
                    best = np.concatenate([SA[a0 + ia], SB[ib]]).astype(bool)
    else:
        combos = itertools.combinations(range(n), k)
        chunk = max(1, _BLOCK // max(1, k * k))
        while True:
            flat_idx = np.fromiter(
                itertools.chain.from_iterable(itertools.islice(combos, chunk)), dtype=np.intp
            )
            if flat_idx.size == 0:
                break
            I = flat_idx.reshape(-1, k)
            vals = M[I[:, :, None], I[:, None, :]].sum(axis=(1, 2))
            j = int(np.argmax(vals))
            if vals[j] > best_val:
                best_val = float(vals[j])
                best = np.zeros(n, dtype=bool)
                best[I[j]] = True
    assert best is not None  # at least one k-subset exists (1 <= k <= n)
    return best, best_val


def _enumeration_affordable(n: int, k: int, max_enumeration: int) -> bool:
    """Whether :func:`_enumerate_qp` fits the budget (see ``ExactDkS.max_enumeration``)."""
    budget = max_enumeration if n <= _MITM_MAX_N else max_enumeration // 100
    return math.comb(n, k) <= budget


def _cpsat_qp(
    C: NDArray[np.float64],
    d: NDArray[np.float64],
    k: int,
    *,
    time_limit: float,
    num_workers: int,
    precision: float,
) -> tuple[NDArray[np.bool_], str, float]:
    """Maximize ``sum_i d_i x_i + sum_{i<j} C_ij x_i x_j`` s.t. ``sum x = k`` with CP-SAT.

    Standard linearization: one Boolean ``y_ij`` per pair with ``C_ij != 0``;
    ``y_ij <= x_i``, ``y_ij <= x_j`` when ``C_ij > 0`` and ``y_ij >= x_i + x_j - 1`` when
    ``C_ij < 0`` (so ``y_ij = x_i x_j`` at an optimum), plus the valid degree cuts
    ``sum_{j: C_ij > 0} y_ij <= (k - 1) x_i`` which strengthen the LP relaxation.
    Coefficients are scaled to integers: ``round(c * S)`` with
    ``S = 1 / (precision * max|c|)``.

    Returns
    -------
    mask, status_name, upper_bound
        ``upper_bound`` is a valid bound on the true (unscaled) optimum: CP-SAT's best
        integer bound plus the largest possible total rounding error, divided by S.
    """
    cp_model = import_cp_model()

    n = d.shape[0]
    iu, ju = np.triu_indices(n, 1)
    c_pairs = C[iu, ju]
    scale_ref = max(float(np.abs(c_pairs).max(initial=0.0)), float(np.abs(d).max(initial=0.0)))
    if scale_ref == 0.0:  # every subset has value 0
        mask = np.zeros(n, dtype=bool)
        mask[:k] = True
        return mask, "OPTIMAL", 0.0
    S = 1.0 / (precision * scale_ref)
    ci = np.rint(c_pairs * S).astype(np.int64)
    di = np.rint(d * S).astype(np.int64)

    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{i}") for i in range(n)]
    model.add(sum(x) == k)
    # Solution hint: the k vertices of largest weighted degree, so a feasible solution (and
    # with on_timeout="best" an answer) exists from the start even under a short time limit.
    strength = d + np.bincount(iu, weights=c_pairs, minlength=n) + np.bincount(ju, weights=c_pairs, minlength=n)
    hint = np.zeros(n, dtype=bool)
    hint[np.argsort(-strength, kind="stable")[:k]] = True
    for i in range(n):
        model.add_hint(x[i], bool(hint[i]))
    obj = [int(di[i]) * x[i] for i in range(n) if di[i] != 0]
    incident: list[list[Any]] = [[] for _ in range(n)]
    for p in np.flatnonzero(ci):
        i, j, c = int(iu[p]), int(ju[p]), int(ci[p])
        y = model.new_bool_var(f"y{i}_{j}")
        model.add_hint(y, bool(hint[i] and hint[j]))
        if c > 0:
            model.add_implication(y, x[i])
            model.add_implication(y, x[j])
            incident[i].append(y)
            incident[j].append(y)
        else:
            model.add_bool_or([x[i].Not(), x[j].Not(), y])
        obj.append(c * y)
    for i in range(n):
        if len(incident[i]) > k - 1:
            model.add(sum(incident[i]) <= (k - 1) * x[i])
    model.maximize(sum(obj))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(num_workers)
    status = solver.solve(model)
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return np.zeros(n, dtype=bool), name, np.inf
    mask = np.array([solver.boolean_value(v) for v in x], dtype=bool)
    n_terms = k * (k - 1) // 2 + k
    bound = (float(solver.best_objective_bound) + 0.5 * n_terms) / S
    return mask, name, bound


# ------------------------------------------------------------------------- oracles
class DkSOracle(ABC):
    """Contract of a densest-k-subgraph oracle (see the module docstring)."""

    name: ClassVar[str] = ""

    @abstractmethod
    def solve(self, Wt: Any, k: int) -> tuple[NDArray[np.bool_], float]:
        """Return ``(mask, value)``: a k-subset and its induced edge weight."""

    @abstractmethod
    def alpha(self, n: int, k: int) -> float:
        """Guaranteed worst-case ratio ``ALG / OPT`` on graphs with ``n`` vertices."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _trivial_alpha(n: int, k: int) -> float | None:
    """k <= 1 (every set has weight 0) and k = n (one feasible set) are solved exactly."""
    if k <= 1 or k >= n:
        return 1.0
    return None


class GreedyPeeling(DkSOracle):
    """Greedy peeling (Asahiro, Iwama, Tamaki, Tokuyama, J. Algorithms 34, 2000).

    Repeatedly remove a vertex of minimum weighted degree in the remaining graph (ties:
    lowest index) until ``k`` vertices remain. Degrees are kept in a vector and updated by
    subtracting the removed vertex's row: ``O(n^2)`` time, ``n - k`` vectorized steps.

    Notes
    -----
    **Guarantee used by** :meth:`alpha`: ``ALG >= k(k-1) / (n(n-1)) * OPT``.

    *Proof.* Let ``E_m`` be the total weight left when ``m`` vertices remain. The weighted
    degrees sum to ``2 E_m``, so the minimum degree is at most ``2 E_m / m`` and removing
    that vertex leaves ``E_{m-1} >= E_m (m - 2) / m``. Telescoping from ``m = n`` down to
    ``m = k + 1`` gives ``E_k >= E_n * prod_{m=k+1}^{n} (m-2)/m = E_n k(k-1) / (n(n-1))``.
    Weights are non-negative, so ``OPT <= E_n``. For ``k <= 1`` every set has weight 0 and
    for ``k = n`` there is one feasible set, so ``alpha = 1`` there. (The sharper ratios of
    Asahiro et al., about ``(1/2 + n/(2k))^{-2}`` for ``k >= n/3``, carry unstated
    ``O(.)`` terms and are not claimed.) The stronger statement ``ALG >= k(k-1)/(n(n-1))
    * E_n`` is what the tests check.

    References
    ----------
    Y. Asahiro, K. Iwama, H. Tamaki, T. Tokuyama. Greedily finding a dense subgraph.
    Journal of Algorithms 34(2):203-221, 2000.
    """

    name: ClassVar[str] = "peeling"

    def solve(self, Wt: Any, k: int) -> tuple[NDArray[np.bool_], float]:
        W0, k = _check_graph(Wt, k, "GreedyPeeling")
        return self._solve(W0, k)

    def _solve(self, W0: NDArray[np.float64], k: int) -> tuple[NDArray[np.bool_], float]:
        """:meth:`solve` on a validated instance (symmetric, non-negative, zero diagonal)."""
        n = W0.shape[0]
        deg = W0.sum(axis=1)
        alive = np.ones(n, dtype=bool)
        for _ in range(n - k):
            v = int(np.argmin(deg))
            deg -= W0[v]
            deg[v] = np.inf
            alive[v] = False
        return alive, subgraph_weight(W0, alive)

    def solve_many(self, Wts: Any, k: int, *, copy: bool = True) -> NDArray[np.bool_]:
        """Peel ``m`` graphs at once: ``Wts`` of shape (m, n, n) (non-negative, symmetric,
        diagonal ignored); returns the (m, n) masks, each equal to :meth:`solve` on its
        graph (same tie rule, same arithmetic). ``O(m n^2)`` work in ``n - k`` vectorized
        steps: what SA-FOA's ``l n`` quadratic maximizations per check need.

        Adding a constant to every edge of a graph does not change the peeling order (all
        remaining vertices gain the same degree), so graphs shifted to be non-negative give
        the same masks as the unshifted ones.
        """
        W = np.asarray(Wts, dtype=np.float64)
        if W.ndim != 3 or W.shape[1] != W.shape[2]:
            raise InvalidParameterError(
                "The 'Wts' parameter of GreedyPeeling.solve_many must have shape (m, n, n). "
                f"Got an array of shape {W.shape} instead."
            )
        m, n, _ = W.shape
        k = check_int(k, "k", owner="GreedyPeeling.solve_many", low=1, high=n)
        if copy or W is not Wts:
            W = W.copy()
        idx = np.arange(n)
        W[:, idx, idx] = 0.0
        deg = W.sum(axis=2)
        alive = np.ones((m, n), dtype=bool)
        rows = np.arange(m)
        for _ in range(n - k):
            v = np.argmin(deg, axis=1)
            deg -= W[rows, v, :]
            deg[rows, v] = np.inf
            alive[rows, v] = False
        return alive

    def alpha(self, n: int, k: int) -> float:
        n = check_int(n, "n", owner="GreedyPeeling", low=1)
        k = check_int(k, "k", owner="GreedyPeeling", low=1, high=n)
        t = _trivial_alpha(n, k)
        return t if t is not None else k * (k - 1) / (n * (n - 1))


class FeigePelegKortsarz(DkSOracle):
    """"Algorithm A" of Feige, Peleg and Kortsarz (Algorithmica 29(3), 2001), weighted.

    Returns the densest of three candidate k-sets (ties: the earlier candidate):

    1. *Trivial*: a greedy matching of the ``floor(k/2)`` heaviest edges (repeatedly take
       the heaviest edge whose endpoints are both unused) and its endpoints.
    2. *Greedy*: ``H`` = the ``ceil(k/2)`` vertices of largest weighted degree (ties:
       lowest index); ``C`` = the ``floor(k/2)`` vertices outside ``H`` with the largest
       weight into ``H``; candidate ``H u C``.
    3. *Walks of length 2* on the graph induced by ``V \\ H`` (adjacency ``A``): with
       ``A2 = A @ A`` (the weight of length-2 walks), for every ``v`` in ``V \\ H``:
       ``P_v`` = the ``floor(k/2)`` vertices ``u != v`` with the largest ``A2[v, u]``;
       ``B_v`` = the ``ceil(k/2)`` neighbours ``x`` of ``v`` (``A[v, x] > 0``, ``x`` not in
       ``P_v``) with the largest weight into ``P_v``; candidate ``P_v u B_v``. All ``|V \\ H|``
       candidates are built and scored with matrix products.

    Every candidate with fewer than ``k`` vertices (too few neighbours, or ``|V \\ H| < k``)
    is completed greedily by the vertex of largest weight into the set; with non-negative
    weights completion never decreases the weight. Choices made where the paper is silent
    for weighted graphs: ``v`` itself is excluded from ``P_v``; ``B_v`` excludes ``P_v``.

    Notes
    -----
    The paper's ratio ``Omega(n^{-1/3})`` is proven for unweighted graphs only. The bound
    used by :meth:`alpha` holds for every non-negative weighting; it is the better of:

    * *Trivial candidate*: its first edge is the heaviest edge ``w_max`` and
      ``OPT <= C(k, 2) w_max``, so ``ALG >= 2 / (k(k-1)) * OPT``.
    * *Greedy candidate*: let ``h = ceil(k/2)``, ``c = floor(k/2)``, ``m = n - h``, ``E``
      the total weight, ``D_H`` the degree sum of ``H`` and ``w(H, X)`` the weight between
      two sets. ``H`` holds the ``h`` largest degrees, so ``D_H >= (h/n) 2E``; ``C`` holds
      the ``c`` best vertices of ``V \\ H`` by weight into ``H``, so
      ``w(H, C) >= (c/m) w(H, V \\ H) = (c/m)(D_H - 2 w(H))``. Hence
      ``w(H u C) >= w(H) + w(H, C) >= (1 - 2c/m) w(H) + (c/m) D_H``. If ``2c <= m`` this is
      ``>= (c/m) D_H >= 2ch/(nm) E``; otherwise use ``w(H) <= D_H / 2`` to get
      ``>= D_H / 2 >= (h/n) E``. With ``OPT <= E``:
      ``ALG >= (h/n) min(1, 2c/m) OPT``.

    ``alpha = 1`` for ``k <= 1`` and ``k = n``. ``O(n^omega)`` time (two ``n x n`` matrix
    products plus scoring the candidates).

    References
    ----------
    U. Feige, D. Peleg, G. Kortsarz. The dense k-subgraph problem. Algorithmica
    29(3):410-421, 2001.
    """

    name: ClassVar[str] = "fpk"

    def solve(self, Wt: Any, k: int) -> tuple[NDArray[np.bool_], float]:
        W0, k = _check_graph(Wt, k, "FeigePelegKortsarz")
        return self._solve(W0, k)

    def _solve(self, W0: NDArray[np.float64], k: int) -> tuple[NDArray[np.bool_], float]:
        """:meth:`solve` on a validated instance (symmetric, non-negative, zero diagonal)."""
        n = W0.shape[0]
        if k == n:
            mask = np.ones(n, dtype=bool)
            return mask, subgraph_weight(W0, mask)
        h, c = (k + 1) // 2, k // 2
        candidates = [self._trivial(W0, k), self._greedy(W0, k, h, c)]
        walk = self._walks(W0, k, h)
        best_mask, best_val = candidates[0], subgraph_weight(W0, candidates[0])
        for cand in candidates[1:]:
            val = subgraph_weight(W0, cand)
            if val > best_val:
                best_mask, best_val = cand, val
        if walk is not None:
            wmask, wval = walk
            if wval > best_val:
                best_mask, best_val = wmask, subgraph_weight(W0, wmask)
        return best_mask, best_val

    @staticmethod
    def _trivial(W0: NDArray[np.float64], k: int) -> NDArray[np.bool_]:
        n = W0.shape[0]
        M = W0.copy()
        np.fill_diagonal(M, -np.inf)
        row_arg = np.argmax(M, axis=1)
        row_max = M[np.arange(n), row_arg]
        mask = np.zeros(n, dtype=bool)
        for _ in range(k // 2):
            a = int(np.argmax(row_max))
            b = int(row_arg[a])
            mask[a] = mask[b] = True
            M[:, [a, b]] = -np.inf
            row_max[[a, b]] = -np.inf
            stale = np.flatnonzero(~mask & np.isin(row_arg, (a, b)))
            if stale.size:
                row_arg[stale] = np.argmax(M[stale], axis=1)
                row_max[stale] = M[stale, row_arg[stale]]
        return _complete_greedily(W0, mask, k)

    @staticmethod
    def _greedy(W0: NDArray[np.float64], k: int, h: int, c: int) -> NDArray[np.bool_]:
        H = _top_mask(W0.sum(axis=1), h)
        into_H = np.where(H, -np.inf, W0[:, H].sum(axis=1))
        return H | _top_mask(into_H, c)

    @staticmethod
    def _walks(
        W0: NDArray[np.float64], k: int, h: int
    ) -> tuple[NDArray[np.bool_], float] | None:
        n = W0.shape[0]
        H = _top_mask(W0.sum(axis=1), h)
        rest = np.flatnonzero(~H)
        m = rest.size
        p, b = k // 2, k - k // 2
        if m < 2 or p == 0:
            return None
        A = W0[np.ix_(rest, rest)]
        A2 = A @ A
        np.fill_diagonal(A2, -np.inf)  # u != v
        order = np.argsort(-A2, axis=1, kind="stable")[:, : min(p, m - 1)]
        P = np.zeros((m, m), dtype=bool)
        P[np.arange(m)[:, None], order] = True
        into_P = P.astype(np.float64) @ A  # into_P[v, x] = weight from x into P_v
        ok = (A > 0) & ~P
        np.fill_diagonal(ok, False)
        score = np.where(ok, into_P, -np.inf)
        border = np.argsort(-score, axis=1, kind="stable")[:, :b]
        B = np.zeros((m, m), dtype=bool)
        rows = np.broadcast_to(np.arange(m)[:, None], border.shape)
        B[rows, border] = np.isfinite(score[rows, border])
        X = np.zeros((m, n), dtype=bool)
        X[:, rest] = P | B
        # Complete every short candidate greedily (vectorized over candidates).
        deficit = k - X.sum(axis=1)
        Xf = X.astype(np.float64)
        gain = np.where(X, -np.inf, Xf @ W0)
        rows_all = np.arange(m)
        for _ in range(int(deficit.max())):
            need = deficit > 0
            v = np.argmax(gain, axis=1)
            r = rows_all[need]
            X[r, v[need]] = True
            gain[r] += W0[v[need]]
            gain[r, v[need]] = -np.inf
            deficit[need] -= 1
        Xf = X.astype(np.float64)
        vals = 0.5 * np.einsum("ij,ij->i", Xf @ W0, Xf)
        best = int(np.argmax(vals))
        return X[best].copy(), float(vals[best])

    def alpha(self, n: int, k: int) -> float:
        n = check_int(n, "n", owner="FeigePelegKortsarz", low=1)
        k = check_int(k, "k", owner="FeigePelegKortsarz", low=1, high=n)
        t = _trivial_alpha(n, k)
        if t is not None:
            return t
        h, c = (k + 1) // 2, k // 2
        m = n - h
        greedy = (h / n) * min(1.0, 2.0 * c / m)
        trivial = 2.0 / (k * (k - 1))
        return max(greedy, trivial)


class ExactDkS(DkSOracle):
    """Exact densest k-subgraph: enumeration for small ``C(n, k)``, CP-SAT beyond.

    Parameters
    ----------
    time_limit : float, default=10.0
        CP-SAT time limit in seconds.
    max_enumeration : int, default=200_000_000
        Enumerate all k-subsets when enumeration is affordable: for ``n <= 32`` (meet in
        the middle, BLAS; ``C(30, 15) = 1.6e8`` subsets take about a second) when
        ``C(n, k) <= max_enumeration``; for ``n > 32`` (chunked combinations, about 100
        times slower per subset) when ``C(n, k) <= max_enumeration / 100``. Otherwise
        CP-SAT is used.
    on_timeout : {"raise", "best"}, default="raise"
        What to do when CP-SAT does not prove optimality within ``time_limit``:
        ``"raise"`` raises :class:`~combex.exceptions.OracleError`; ``"best"`` returns the
        best set found and records CP-SAT's bound in :attr:`last_upper_bound` (then
        :meth:`alpha` is 0: no worst-case guarantee).
    num_workers : int, default=1
        CP-SAT search workers.
    precision : float, default=1e-6
        CP-SAT needs integer weights: each weight is rounded to a multiple of
        ``precision * max_weight``. A proven CP-SAT optimum is therefore optimal up to an
        additive ``C(k, 2) * precision * max_weight`` (rounding error of both the returned
        and the optimal set); the returned value is always recomputed from the true
        weights. Enumeration is exact.

    Attributes
    ----------
    last_upper_bound : float
        A valid upper bound on the optimum of the last instance solved (the value itself
        after an enumeration or a proven optimum; CP-SAT's bound plus rounding slack
        otherwise).
    last_method : str
        ``"enumeration"`` or ``"cp-sat"``.
    """

    name: ClassVar[str] = "exact"

    def __init__(
        self,
        *,
        time_limit: float = 10.0,
        max_enumeration: int = 200_000_000,
        on_timeout: str = "raise",
        num_workers: int = 1,
        precision: float = 1e-6,
    ) -> None:
        self.time_limit = check_float(time_limit, "time_limit", owner="ExactDkS", low=0.0, closed="neither")
        self.max_enumeration = check_int(max_enumeration, "max_enumeration", owner="ExactDkS", low=1)
        self.on_timeout = check_choice(on_timeout, "on_timeout", ("raise", "best"), owner="ExactDkS")
        self.num_workers = check_int(num_workers, "num_workers", owner="ExactDkS", low=1)
        self.precision = check_float(precision, "precision", owner="ExactDkS", low=0.0, high=1.0, closed="right")
        self.last_upper_bound = np.nan
        self.last_method = ""

    def __repr__(self) -> str:
        return (
            f"ExactDkS(time_limit={self.time_limit!r}, max_enumeration={self.max_enumeration!r}, "
            f"on_timeout={self.on_timeout!r}, num_workers={self.num_workers!r}, "
            f"precision={self.precision!r})"
        )

    def solve(self, Wt: Any, k: int) -> tuple[NDArray[np.bool_], float]:
        W0, k = _check_graph(Wt, k, "ExactDkS")
        return self._solve(W0, k)

    def _solve(self, W0: NDArray[np.float64], k: int) -> tuple[NDArray[np.bool_], float]:
        """:meth:`solve` on a validated instance (symmetric, non-negative, zero diagonal)."""
        n = W0.shape[0]
        if _enumeration_affordable(n, k, self.max_enumeration):
            mask, _ = _enumerate_qp(W0, k)
            val = subgraph_weight(W0, mask)
            self.last_method, self.last_upper_bound = "enumeration", val
            return mask, val
        mask, status, bound = _cpsat_qp(
            W0, np.zeros(n), k,
            time_limit=self.time_limit, num_workers=self.num_workers, precision=self.precision,
        )
        self.last_method = "cp-sat"
        if status != "OPTIMAL" and (self.on_timeout == "raise" or status != "FEASIBLE"):
            raise OracleError(
                f"ExactDkS: CP-SAT did not prove optimality within time_limit="
                f"{self.time_limit!r} s (status {status}, n={n}, k={k}). Raise time_limit, "
                f"use on_timeout='best', or use an approximate oracle ('peeling', 'fpk')."
            )
        val = subgraph_weight(W0, mask)
        self.last_upper_bound = max(val, bound)
        return mask, val

    def alpha(self, n: int, k: int) -> float:
        n = check_int(n, "n", owner="ExactDkS", low=1)
        k = check_int(k, "k", owner="ExactDkS", low=1, high=n)
        return 1.0 if self.on_timeout == "raise" else (1.0 if _trivial_alpha(n, k) else 0.0)


DKS_ORACLES: dict[str, type[DkSOracle]] = {
    "peeling": GreedyPeeling,
    "fpk": FeigePelegKortsarz,
    "exact": ExactDkS,
}


def get_dks_oracle(oracle: str | DkSOracle, *, owner: str | None = None) -> DkSOracle:
    """Return a DkS oracle instance from a registry name (see :data:`DKS_ORACLES`) or an
    object with ``name``, ``solve`` and ``alpha`` (returned unchanged)."""
    if isinstance(oracle, str):
        if oracle not in DKS_ORACLES:
            raise param_error("dks", owner, f"one of {sorted(DKS_ORACLES)!r} or a DkS oracle instance", oracle)
        return DKS_ORACLES[oracle]()
    if all(callable(getattr(oracle, a, None)) for a in ("solve", "alpha")) and hasattr(oracle, "name"):
        return oracle
    raise param_error("dks", owner, f"one of {sorted(DKS_ORACLES)!r} or a DkS oracle instance", oracle)
