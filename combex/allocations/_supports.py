"""Polynomial candidate supports for designs over exponentially many super-arms.

A design over all members of a decision class is out of reach (there are exponentially
many), so SAQM, SA-FOA and ICB compute it on a small candidate support: a list of members
whose indicator vectors span R^n (so that the design's information matrix is
invertible). Appendix D of the full-bandit paper: "since the relaxation problem has
exponential number of variables in our setting, we are restricted to the number of
supp(p) instead of dealing with all super-arms".
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_matrix, check_rng
from ..exceptions import AllocationError, InvalidParameterError
from ._design import _inv_psd

__all__ = [
    "support_from_decision_class",
    "topk_support",
    "balanced_topk_support",
    "uniform_topk_information",
    "uniform_topk_g_value",
    "max_g_value_topk",
]


class _SpanTracker:
    """Incremental rank of a set of vectors in R^n (modified Gram-Schmidt, twice)."""

    def __init__(self, n: int, tol: float = 1e-9) -> None:
        self.Q = np.zeros((n, 0))
        self.tol = tol

    @property
    def rank(self) -> int:
        return int(self.Q.shape[1])

    def add(self, x: NDArray[np.float64]) -> bool:
        r = x.astype(np.float64).copy()
        for _ in range(2):
            r -= self.Q @ (self.Q.T @ r)
        nr = float(np.linalg.norm(r))
        if nr > self.tol * max(1.0, float(np.linalg.norm(x))):
            self.Q = np.hstack([self.Q, (r / nr)[:, None]])
            return True
        return False


def _verify_rank(S: NDArray[np.bool_], n: int, what: str) -> None:
    rank = int(np.linalg.matrix_rank(S.astype(np.float64))) if S.size else 0
    if rank < n:
        raise AllocationError(
            f"{what}: the {S.shape[0]} members found span a space of rank {rank} < n = {n}, so "
            f"no design on them has an invertible information matrix. The class's indicator "
            f"vectors may not span R^n (e.g. a single member, or members all equal on some "
            f"coordinates); remedy: increase n_random, or reduce the ground set to the "
            f"coordinates that vary."
        )


def support_from_decision_class(
    dc: Any, *, n_random: int | None = None, rng: Any = None, require_full_rank: bool = True
) -> NDArray[np.bool_]:
    """Members of a decision class whose indicator vectors span R^n.

    Uses only the :class:`~combex.oracles.DecisionClass` contract (``dc.n`` and
    ``dc.argmax(weights) -> bool mask``). Members are collected, without duplicates, from
    the oracle on

    1. the unit vectors ``e_i`` (a best member containing ``i``) and ``-e_i`` (one
       avoiding ``i``), ``i = 0..n-1``;
    2. structured weights: all ones, minus all ones, the ramps ``(0, 1, ..., n-1)`` and
       its reverse;
    3. standard Gaussian weights from ``rng``, until the members span R^n or
       ``n_random`` draws were made.

    Parameters
    ----------
    dc : DecisionClass
        Any object with an int ``n`` and ``argmax(weights)`` returning a bool mask.
    n_random : int, optional
        Maximum number of random weight vectors (default ``10 n``).
    rng : None, int, SeedSequence or Generator
        Randomness for step 3.
    require_full_rank : bool, default=True
        When False, return the members found even if they do not span R^n (classes whose
        members lie in a proper subspace, e.g. bases of a partition matroid with one
        element per group: only the span of the class is identifiable, and solvers work in
        it).

    Returns
    -------
    members : bool array of shape (s, n)
        Distinct members, in the order found; rank n (verified).

    Raises
    ------
    AllocationError
        The members found do not span R^n (message gives the rank achieved).
    """
    n = check_int(getattr(dc, "n", None), "dc.n", owner="support_from_decision_class", low=1)
    n_random = 10 * n if n_random is None else check_int(n_random, "n_random", owner="support_from_decision_class", low=0)
    gen = check_rng(rng)
    seen: set[bytes] = set()
    members: list[NDArray[np.bool_]] = []
    span = _SpanTracker(n)

    def offer(weights: NDArray[np.float64]) -> None:
        m = np.asarray(dc.argmax(weights))
        if m.shape != (n,):
            raise InvalidParameterError(
                f"The 'dc' parameter of support_from_decision_class must return masks of shape "
                f"({n},) from argmax. Got an array of shape {m.shape} instead."
            )
        m = m.astype(bool)
        key = np.packbits(m).tobytes()
        if key in seen:
            return
        seen.add(key)
        members.append(m)
        span.add(m.astype(np.float64))

    eye = np.eye(n)
    for i in range(n):
        offer(eye[i])
        offer(-eye[i])
    ramp = np.arange(n, dtype=np.float64)
    for w in (np.ones(n), -np.ones(n), ramp, ramp[::-1].copy()):
        offer(w)
    draws = 0
    while span.rank < n and draws < n_random:
        offer(gen.standard_normal(n))
        draws += 1
    S = np.array(members, dtype=bool).reshape(-1, n)
    if require_full_rank:
        _verify_rank(S, n, f"support_from_decision_class({dc!r})")
    return S


def _windows(n: int, k: int, offsets: NDArray[np.intp]) -> NDArray[np.bool_]:
    idx = (np.arange(n)[:, None] + offsets[None, :]) % n
    S = np.zeros((n, n), dtype=bool)
    np.put_along_axis(S, idx, True, axis=1)
    return S


def topk_support(n: int, k: int) -> NDArray[np.bool_]:
    """A structured support of k-subsets of ``{0..n-1}`` spanning R^n.

    The ``n`` cyclic windows ``{i, i+1, ..., i+k-1} (mod n)``. Their indicator matrix is
    circulant with eigenvalues ``sum_{j<k} w^{ij}`` (``w = exp(2 pi sqrt(-1) / n)``), all
    nonzero iff ``gcd(n, k) = 1``. Otherwise the ``n`` gapped windows
    ``{i, ..., i+k-2, i+k}`` are added: at a frequency where the window symbol vanishes
    the gapped one equals ``1 - w^{-i} != 0``, so the ``2n`` members span R^n. The rank
    is verified numerically.

    Parameters
    ----------
    n : int
        Ground-set size, >= 1.
    k : int
        Subset size, ``1 <= k <= n``; ``k = n`` is allowed only for ``n = 1``.

    Returns
    -------
    members : bool array of shape (n, n) or (2n, n)

    Raises
    ------
    InvalidParameterError
        ``k`` outside ``[1, n]``.
    AllocationError
        ``k = n > 1``: the only k-subset cannot give an invertible design.
    """
    n = check_int(n, "n", owner="topk_support", low=1)
    k = check_int(k, "k", owner="topk_support", low=1, high=n)
    if k == n:
        if n == 1:
            return np.ones((1, 1), dtype=bool)
        raise AllocationError(
            f"topk_support: with k = n = {n} the only super-arm is the whole ground set, whose "
            f"indicator spans a space of rank 1 < n; no invertible design exists (the problem "
            f"is trivial: the answer is the whole set)."
        )
    S = _windows(n, k, np.arange(k))
    if math.gcd(n, k) > 1:
        gapped = np.concatenate([np.arange(k - 1), [k]]).astype(np.intp)
        S = np.vstack([S, _windows(n, k, gapped)])
    _verify_rank(S, n, f"topk_support(n={n}, k={k})")
    return S


def uniform_topk_information(n: int, k: int) -> NDArray[np.float64]:
    """Information matrix of the uniform design over all k-subsets, in closed form.

    ``E[chi chi^T] = (k/n) [(1 - c) I + c 11^T]`` with ``c = (k-1)/(n-1)`` (``[[1]]`` for
    ``n = 1``).
    """
    n = check_int(n, "n", owner="uniform_topk_information", low=1)
    k = check_int(k, "k", owner="uniform_topk_information", low=1, high=n)
    if n == 1:
        return np.ones((1, 1))
    c = (k - 1) / (n - 1)
    return (k / n) * ((1 - c) * np.eye(n) + c * np.ones((n, n)))


def uniform_topk_g_value(n: int, k: int) -> float:
    """G-value ``max_chi chi^T A^{-1} chi`` of the uniform design over all k-subsets.

    By symmetry every k-subset gives the same value. Split ``chi`` along ``1`` (squared
    norm ``k^2/n``, eigenvalue ``k^2/n``) and ``1^perp`` (squared norm ``k(n-k)/n``,
    eigenvalue ``k(n-k)/(n(n-1))``): the value is ``1 + (n - 1) = n``, the dimension; the
    uniform design over all k-subsets is G-optimal (Kiefer-Wolfowitz). Requires
    ``k < n`` (or ``n = 1``) for an invertible design.
    """
    n = check_int(n, "n", owner="uniform_topk_g_value", low=1)
    k = check_int(k, "k", owner="uniform_topk_g_value", low=1, high=n)
    if n == 1:
        return 1.0
    if k == n:
        raise AllocationError(f"uniform_topk_g_value: k = n = {n} gives a singular information matrix (rank 1).")
    lam1 = k * k / n
    lam2 = k * (n - k) / (n * (n - 1))
    return float((k * k / n) / lam1 + (k - k * k / n) / lam2)


def max_g_value_topk(A: Any, k: int, *, limit: int = 200_000) -> float:
    """``max over all k-subsets chi of chi^T A^{-1} chi`` by enumeration (small n only).

    The G-value of a design (information matrix ``A``) over the whole top-k class, to
    compare a support design with the uniform design over all k-subsets (value ``n``).

    Raises
    ------
    InvalidParameterError
        ``C(n, k) > limit`` (enumeration refused) or bad ``A``/``k``.
    """
    Aa = check_matrix(A, "A", owner="max_g_value_topk", symmetric=True)
    n = Aa.shape[0]
    if Aa.shape != (n, n):
        raise InvalidParameterError(f"The 'A' parameter of max_g_value_topk must be square. Got shape {Aa.shape} instead.")
    k = check_int(k, "k", owner="max_g_value_topk", low=1, high=n)
    total = math.comb(n, k)
    if total > limit:
        raise InvalidParameterError(
            f"The 'k' parameter of max_g_value_topk gives C({n}, {k}) = {total} subsets, more than "
            f"limit={limit}; enumeration refused. Got k={k} instead."
        )
    Ainv = _inv_psd(Aa, "max_g_value_topk")
    best = -np.inf
    combos = combinations(range(n), k)
    while True:
        chunk = np.array([c for _, c in zip(range(20_000), combos)], dtype=np.intp)
        if chunk.size == 0:
            break
        sums = Ainv[chunk[:, :, None], chunk[:, None, :]].sum(axis=(1, 2))
        best = max(best, float(sums.max()))
    return best


def balanced_topk_support(n: int, k: int, *, n_blocks: int | None = None, n_candidates: int = 64,
                          rng: Any = 0) -> NDArray[np.bool_]:
    """A cyclic support of k-subsets whose information matrix is close to the uniform one.

    The support is the union of the ``n`` cyclic shifts of ``r`` base blocks. The
    information matrix of the uniform design over a cyclic support is circulant, with
    off-diagonal entry at distance ``d`` proportional to ``lambda_d``, the number of pairs
    at cyclic difference ``+-d`` inside the base blocks. The uniform design over *all*
    k-subsets (the G-optimal design for top-k, whose G-value is n by Kiefer-Wolfowitz) has
    all ``lambda_d`` equal; a cyclic difference family reaches that exactly. Base blocks are
    chosen greedily (each the best of ``n_candidates`` random k-subsets) to make the
    difference counts as even as possible, which brings the G-value over all k-subsets
    close to n (contrast :func:`topk_support`, whose consecutive windows are far from
    balanced). ``r`` defaults to ``max(2, ceil(8 (n - 1) / (k (k - 1))))``, so each
    difference occurs about 8 times (measured: G-value over all 10-subsets of 20 arms 21.5
    with 160 members, against 313 for G-optimal weights on cyclic windows; n is optimal). The rank of the support is verified.

    Deterministic for a given ``rng`` seed (default 0).
    """
    n = check_int(n, "n", owner="balanced_topk_support", low=2)
    k = check_int(k, "k", owner="balanced_topk_support", low=1, high=n - 1)
    g = check_rng(rng)
    if k == 1:
        return np.eye(n, dtype=bool)
    r = n_blocks if n_blocks is not None else max(2, math.ceil(8 * (n - 1) / (k * (k - 1))))
    r = check_int(r, "n_blocks", owner="balanced_topk_support", low=1)
    lam = np.zeros(n, dtype=np.int64)  # lam[d] = pairs at cyclic difference +-d
    blocks: list[NDArray[np.intp]] = []
    for _ in range(r):
        best, best_score, best_diff = None, np.inf, None
        for _c in range(n_candidates):
            b = np.sort(g.choice(n, size=k, replace=False))
            diff = (b[:, None] - b[None, :]) % n
            cnt = np.bincount(diff[~np.eye(k, dtype=bool)], minlength=n)
            new = lam + cnt
            score = float(np.var(new[1:]))
            if score < best_score:
                best, best_score, best_diff = b, score, cnt
        blocks.append(best)  # type: ignore[arg-type]
        lam = lam + best_diff  # type: ignore[operator]
    S = np.zeros((r * n, n), dtype=bool)
    for j, b in enumerate(blocks):
        for s in range(n):
            S[j * n + s, (b + s) % n] = True
    S = np.unique(S, axis=0)
    if np.linalg.matrix_rank(S.astype(float)) < n:
        S = np.vstack([S, topk_support(n, k)])
    _verify_rank(S, n, f"balanced_topk_support(n={n}, k={k})")
    return S
