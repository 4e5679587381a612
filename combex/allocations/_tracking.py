"""Tracking a design: pull ``argmin_{M in supp(p)} T_M / p_M`` (SAQM, SA-FOA, ICB; eq. (12)
of LinGapE), one pull at a time with a heap or in batches up to a checkpoint."""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int
from ..exceptions import InvalidParameterError, StateError
from ._design import _check_distribution
from ._rounding import _fill

__all__ = ["Tracker"]


class Tracker:
    """The tracking rule ``M_t = argmin_{M in supp(p)} T_M(t) / p_M``.

    Algorithm 2 (SAQM) of the full-bandit paper samples this super-arm at every round;
    LinGapE's ratio rule (eq. (12)) is the same rule for the L1 design.

    Parameters
    ----------
    p : array of shape (m,) or Design
        The design: a probability vector (divided by its sum). Only indices with
        ``p_j > 0`` are ever pulled.
    counts : int array of shape (m,), optional
        Pulls already made (default zeros); must be nonnegative and zero outside the
        support.

    Notes
    -----
    Tie rule: among the support points attaining the minimum of ``T_j / p_j`` (computed
    as the float ``T_j / p_j``), the lowest index ``j`` is pulled. Equivalently, pull
    ``c -> c + 1`` of point ``j`` has key ``(c / p_j, j)`` and pulls are made in
    increasing key order. From zero counts the first ``s`` pulls visit the support in
    index order, and for ``t >= s`` the counts equal :func:`apportion(p, t)
    <combex.allocations.apportion>`.

    :meth:`next` costs O(log s) (heap). :meth:`advance` adds the pulls of many
    :meth:`next` calls at once in O(s log s) and gives exactly the same counts (it adds
    the first seats in key order; see :mod:`combex.allocations._rounding`).

    Examples
    --------
    >>> tr = Tracker([0.5, 0.25, 0.25])
    >>> [tr.next() for _ in range(4)]
    [0, 1, 2, 0]
    >>> tr.advance(8).tolist()
    [2, 1, 1]
    >>> tr.counts.tolist()
    [4, 2, 2]
    """

    def __init__(self, p: Any, *, counts: Any = None) -> None:
        self._p = _check_distribution(p, "Tracker")
        self._support = np.flatnonzero(self._p > 0)
        self._q = self._p[self._support]
        if counts is None:
            c = np.zeros(self._p.size, dtype=np.int64)
        else:
            c = self._check_counts(counts)
        self._counts = c
        self._rebuild_heap()

    # ------------------------------------------------------------------ internals
    def _check_counts(self, counts: Any) -> NDArray[np.int64]:
        arr = np.asarray(counts)
        if arr.shape != self._p.shape:
            raise InvalidParameterError(
                f"The 'counts' parameter of Tracker must be an int array of shape "
                f"{self._p.shape}. Got an array of shape {arr.shape} instead."
            )
        if arr.dtype.kind not in "iu":
            if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise InvalidParameterError(
                    f"The 'counts' parameter of Tracker must contain integers. Got dtype "
                    f"{arr.dtype} instead."
                )
        if np.any(arr < 0):
            bad = int(np.flatnonzero(arr < 0)[0])
            raise InvalidParameterError(
                f"The 'counts' parameter of Tracker must be nonnegative. Got {int(arr[bad])} at "
                f"index {bad} instead."
            )
        off = (self._p == 0) & (arr != 0)
        if np.any(off):
            bad = int(np.flatnonzero(off)[0])
            raise InvalidParameterError(
                f"The 'counts' parameter of Tracker must be zero outside the support of p. Got "
                f"{int(arr[bad])} at index {bad}, where p is 0, instead."
            )
        return arr.astype(np.int64, copy=True)

    def _rebuild_heap(self) -> None:
        c = self._counts[self._support]
        self._heap = [(float(c[i] / self._q[i]), i) for i in range(self._q.size)]
        heapq.heapify(self._heap)

    # ------------------------------------------------------------------ public
    @property
    def p(self) -> NDArray[np.float64]:
        """The design (a copy)."""
        return self._p.copy()

    @property
    def support(self) -> NDArray[np.intp]:
        return self._support.copy()

    @property
    def counts(self) -> NDArray[np.int64]:
        """Pulls per candidate so far (a copy)."""
        return self._counts.copy()

    @property
    def t(self) -> int:
        """Total pulls so far."""
        return int(self._counts.sum())

    def next(self) -> int:
        """Pull once: return the candidate index ``argmin_j T_j / p_j`` (lowest index on
        ties) and count the pull. O(log s)."""
        _, i = heapq.heappop(self._heap)
        j = int(self._support[i])
        self._counts[j] += 1
        heapq.heappush(self._heap, (float(self._counts[j] / self._q[i]), i))
        return j

    def advance(self, total: Any) -> NDArray[np.int64]:
        """Pull until ``total`` pulls in all; return the pulls added per candidate.

        The result equals what ``total - t`` calls of :meth:`next` would add.

        Raises
        ------
        InvalidParameterError
            If ``total`` is not an int at least the current number of pulls ``t``.
        """
        total = check_int(total, "total", owner="Tracker.advance", low=self.t)
        k = total - self.t
        add = np.zeros_like(self._counts)
        if k == 0:
            return add
        base = self._counts[self._support]
        new = _fill(base, self._q, k)
        add[self._support] = new - base
        self._counts[self._support] = new
        self._rebuild_heap()
        return add

    def state_dict(self) -> dict[str, Any]:
        """The tracker's state (for :func:`combex._state.save_state`)."""
        return {"p": self._p.copy(), "counts": self._counts.copy()}

    @classmethod
    def from_state(cls, state: Any) -> "Tracker":
        """Rebuild a tracker from :meth:`state_dict`."""
        if not isinstance(state, dict) or set(state) != {"p", "counts"}:
            raise StateError(
                "A Tracker state must be a dict with exactly the keys 'p' and 'counts'. Got "
                f"{type(state).__name__} with keys {sorted(state) if isinstance(state, dict) else None}."
            )
        return cls(state["p"], counts=state["counts"])

    def __repr__(self) -> str:
        return f"Tracker(support_size={self._support.size}, t={self.t})"
