"""Efficient apportionment: rounding a continuous design to integer pull counts.

Appendix D of the full-bandit paper (Kuroki et al.), after Pukelsheim (2006, ch. 12):
given a design ``p`` with support of size ``s`` and a sample size ``t``, set
``t_i = ceil((t - s/2) p_i)`` on the support; then, until ``sum_i t_i = t``, either raise
a count ``t_j`` attaining ``min_i t_i / p_i`` by one, or lower a count ``t_j`` attaining
``max_i (t_i - 1) / p_i`` by one.

Seats view (used for ties and for batched tracking). Think of count ``c -> c + 1`` of
support point ``j`` as a *seat* with key ``(c / p_j, j)``, ordered lexicographically
(value first, then index). The initial vector ``ceil(mu p)`` (multiplier ``mu``) holds
exactly the seats of value ``< mu``, and raising the smallest next seat / lowering the
largest held seat keeps "holds the first seats in key order". Hence, with the tie rule
used here (raise the *lowest* index among ties, lower the *highest*), the result is the
set of the ``t`` first seats, which is also what the tracking rule
``argmin_j T_j / p_j`` (ties to the lowest index) reaches after ``t`` pulls from zero.
Consequences (tested): the rounding is house monotone (the counts for ``t + 1`` dominate
those for ``t``) and ``-s p_i <= t_i - t p_i <= 1``.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int
from ._design import _check_distribution

__all__ = ["apportion"]


def _keys_ok(base: NDArray[np.int64], n: NDArray[np.int64], q: NDArray[np.float64]) -> tuple[bool, int, int]:
    """Whether the seats added to ``base`` (giving ``n``) are the first ones in key order.

    Returns ``(ok, j_last, j_next)``: the party holding the largest added seat and the party
    owning the smallest next seat (keys compared lexicographically as (value, index)).
    """
    added = n > base
    if not np.any(added):
        return True, -1, -1
    last_val = np.where(added, (n - 1) / q, -np.inf)
    vmax = last_val.max()
    j_last = int(np.flatnonzero(last_val == vmax)[-1])
    next_val = n / q
    vmin = next_val.min()
    j_next = int(np.flatnonzero(next_val == vmin)[0])
    ok = (vmax < vmin) or (vmax == vmin and j_last < j_next)
    return ok, j_last, j_next


def _canonicalize(base: NDArray[np.int64], n: NDArray[np.int64], q: NDArray[np.float64]) -> NDArray[np.int64]:
    """Move seats until ``n - base`` holds the first seats in key order (guards float ties)."""
    n = n.copy()
    for _ in range(4 * n.size + 16):
        ok, j_last, j_next = _keys_ok(base, n, q)
        if ok:
            return n
        n[j_last] -= 1
        n[j_next] += 1
    return n  # pragma: no cover - unreachable for finite positive q


def _fill(base: NDArray[np.int64], q: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """Add the ``k`` first seats (in key order) to ``base``; return the new counts.

    Equal to ``k`` steps of ``argmin_j n_j / q_j`` (ties to the lowest index) from
    ``base``. Runs in O(s log s + s * 64): a bisection on the seat value ``theta`` (the
    counts ``max(base_j, ceil(theta q_j))`` hold every next seat of value ``< theta``),
    then a heap for the remaining seats, then :func:`_canonicalize`.
    """
    base = base.astype(np.int64)
    if k <= 0:
        return base.copy()

    def counts_at(theta: float) -> NDArray[np.int64]:
        return np.maximum(base, np.ceil(theta * q).astype(np.int64))

    target = int(base.sum()) + k
    lo = 0.0
    hi = float(np.max((base + k) / q)) + 1.0
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if counts_at(mid).sum() <= target:
            lo = mid
        else:
            hi = mid
    n = counts_at(lo)
    rest = target - int(n.sum())
    if rest < 0:  # pragma: no cover - counts_at(0) == base guarantees rest >= 0
        n = base.copy()
        rest = k
    if rest > 0:
        heap = [(float(n[j] / q[j]), j) for j in range(q.size)]
        heapq.heapify(heap)
        for _ in range(rest):
            _, j = heapq.heappop(heap)
            n[j] += 1
            heapq.heappush(heap, (float(n[j] / q[j]), j))
    return _canonicalize(base, n, q)


def apportion(p: Any, t: Any) -> NDArray[np.int64]:
    """Round the design ``p`` to integer counts summing to ``t`` (efficient apportionment).

    Implements Appendix D of the full-bandit paper (Pukelsheim's efficient design
    apportionment): with ``s = |supp(p)|``, start from ``t_i = ceil((t - s/2) p_i)`` for
    ``i`` in the support, then while ``sum t_i < t`` raise the ``t_j`` attaining
    ``min t_j / p_j`` and while ``sum t_i > t`` lower the ``t_j`` attaining
    ``max (t_j - 1) / p_j``.

    Parameters
    ----------
    p : array of shape (m,) or Design
        A probability vector (entries >= 0 summing to 1 within 1e-8; it is divided by its
        sum). Entries equal to zero are outside the support and get no pulls.
    t : int
        Total number of pulls, >= 0.

    Returns
    -------
    counts : int64 array of shape (m,)
        Nonnegative, summing to ``t``, zero outside the support.

    Raises
    ------
    InvalidParameterError
        If ``p`` is not a probability vector or ``t`` is not a nonnegative int.

    Notes
    -----
    Tie rule (the paper leaves it open): when raising, the lowest index among the ``j``
    attaining the minimum; when lowering, the highest index among those attaining the
    maximum. Afterwards the counts are checked to hold the first ``t`` seats in key order
    ``(c / p_j, j)`` (see the module docstring), fixing any float-rounding tie. With this
    rule the result equals the counts of :class:`~combex.allocations.Tracker` after ``t``
    pulls and is house monotone.

    For ``t >= s`` every support point gets at least one pull, and the paper's procedure
    applies verbatim. For ``t < s`` (where the paper's multiplier ``t - s/2`` may make
    initial counts negative) we return the first ``t`` seats, i.e. one pull to each of
    the ``t`` lowest-indexed support points: the tracking rule's answer.

    Examples
    --------
    >>> apportion([0.5, 0.3, 0.2], 10).tolist()
    [5, 3, 2]
    >>> apportion([0.5, 0.0, 0.5], 3).tolist()
    [2, 0, 1]
    """
    q_full = _check_distribution(p, "apportion")
    t = check_int(t, "t", owner="apportion", low=0)
    supp = np.flatnonzero(q_full > 0)
    q = q_full[supp]
    s = supp.size
    out = np.zeros(q_full.size, dtype=np.int64)
    zero = np.zeros(s, dtype=np.int64)
    if t < s:
        out[supp] = _fill(zero, q, t)
        return out
    n = np.ceil((t - s / 2.0) * q).astype(np.int64)
    total = int(n.sum())
    if total < t:
        heap = [(float(n[j] / q[j]), j) for j in range(s)]
        heapq.heapify(heap)
        while total < t:
            _, j = heapq.heappop(heap)
            n[j] += 1
            total += 1
            heapq.heappush(heap, (float(n[j] / q[j]), j))
    elif total > t:
        # max-heap of ((n_j - 1) / q_j, j): highest value, then highest index, first
        heap2 = [(-float((n[j] - 1) / q[j]), -j) for j in range(s) if n[j] >= 1]
        heapq.heapify(heap2)
        while total > t:
            _, mj = heapq.heappop(heap2)
            j = -mj
            n[j] -= 1
            total -= 1
            if n[j] >= 1:
                heapq.heappush(heap2, (-float((n[j] - 1) / q[j]), -j))
    out[supp] = _canonicalize(zero, n, q)
    return out
