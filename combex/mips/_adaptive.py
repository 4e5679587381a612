"""The adaptive MIPS solver M(c, r, epsilon, delta): Algorithm 1 of Yang et al. (ICML 2022).

"Linear Bandit Algorithms with Sublinear Time Complexity". A query ``q`` is first rounded
to the nearest point of the epsilon-net whose coordinates are multiples of ``epsilon/d``
(line 10), then sent to ``kappa`` independent single-query MIPS structures
``S_i(c, r, 0)`` (line 11); any point returned by any of them is the answer (line 12),
after the sanity check ``<q, p> >= c r - epsilon`` that makes "a point was returned" a
certificate of success (Section 3.3). Rounding makes the sequence of (possibly adaptive)
queries range over a finite set, which is what lets a union bound cover all of them
(Theorem 3.3, with ``kappa = d log(K d / (epsilon delta))`` copies).

Practical choices (Section 7 of the paper): each ``S_i`` is an HNSW graph
(:class:`~combex.mips.HNSWIndex`: faiss, usearch or hnswlib) returning a *shortlist* of ``p`` candidates that are re-ranked by their exact inner
product with the (unrounded) query; ``index="exact"`` is the linear-scan reference. The
theoretical ``kappa`` is available (:meth:`AdaptiveMIPS.theoretical_kappa`,
``n_indexes="theory"``) but the default is one index, as in the paper's experiments.
Points can be inserted and deleted (lines 5-7; deletions as in Algorithm 2 line 13).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_probability, check_rng, param_error
from ._common import check_query
from ._exact import ExactIndex
from ._hnsw import HNSWIndex, _resolve_backend

__all__ = ["AdaptiveMIPS"]


class AdaptiveMIPS:
    """Adaptive MIPS solver ``M(c, r, epsilon, delta)`` with insertion and deletion.

    Parameters
    ----------
    dim : int
        Dimension ``d`` of points and queries.
    c, r : float, optional
        The (c, r, epsilon)-MIPS thresholds of Definition 3.1 (``c <= 1``, ``r > 0``).
        When given, :meth:`query` returns ``None`` unless the best candidate ``p`` has
        ``<q, p> >= c r - epsilon``. When omitted, the best candidate is always returned.
    epsilon : float, default 0.0
        Rounding precision: queries are rounded to multiples of ``epsilon / d`` (line 10)
        and ``epsilon`` is the additive slack. ``0`` disables rounding.
    delta : float, default 0.05
        Failure probability (only used for the theoretical number of indexes).
    index : {"hnsw", "exact"}, default "hnsw"
    n_indexes : int or "theory", default 1
        ``kappa``, the number of independent indexes (ignored for ``"exact"``).
    shortlist : int, default 30
        ``p``: candidates fetched from each index and re-ranked exactly.
    capacity : int, default 1024
        Initial capacity (indexes grow as needed).
    expected_size : int, optional
        ``K`` used by ``n_indexes="theory"`` (default ``capacity``).
    hnsw_M, ef_construction, ef : int
        HNSW parameters (``ef`` is raised to ``shortlist`` when smaller).
    backend : {"auto", "faiss", "usearch", "hnswlib"}, default "auto"
        The graph library (:class:`~combex.mips.HNSWIndex`).
    build_threads : int, default 1
        Threads for building and batch-inserting into the graphs (queries use one).
    exact_below : int, default 2048
        While the set holds at most this many points (``index="hnsw"``), queries are
        answered by an exact scan (faster than a graph search at that size); the HNSW
        indexes are dropped when the set shrinks below half of it, and when deleted
        nodes outnumber the live ones. ``0`` allows HNSW at every size.
    build : {"eager", "lazy"}, default "eager"
        When points enter the HNSW graphs. ``"eager"``: at insertion (the graphs are
        built as soon as the set exceeds ``exact_below``, and every later insertion goes
        into them). ``"lazy"`` (a ski-rental rule, for sets that change in large batches
        such as the stages of Sub-Elim): points not yet in a graph are kept in an exact
        *pending* buffer that every query scans, and they are inserted (or the graphs
        built) only once the queries have spent ``build_after`` point-scans per pending
        point on them -- about the cost of inserting them -- so a batch that leaves the
        set before being queried much never costs a graph insertion, and a set that is
        queried often gets its graph after at most twice the optimal cost.
    build_after : float, default 2000
        The ski-rental ratio of ``build="lazy"``: the cost of inserting one point into
        an HNSW graph in units of one point of exact scan (about 2,000-4,000 for
        ``M = 16``, ``ef_construction = 100`` and ``d ~ 100`` with numpy's scan).
    rng : None, int, SeedSequence or Generator
        Seeds the independent indexes.

    Examples
    --------
    >>> m = AdaptiveMIPS(2, index="exact")
    >>> m.add([[1.0, 0.0], [0.0, 1.0]], [5, 6])
    >>> m.query([0.1, 1.0])
    (6, 1.0)
    >>> m.remove([6]); m.query([0.1, 1.0])[0]
    5
    """

    def __init__(
        self,
        dim: int,
        *,
        c: float | None = None,
        r: float | None = None,
        epsilon: float = 0.0,
        delta: float = 0.05,
        index: str = "hnsw",
        n_indexes: Any = 1,
        shortlist: int = 30,
        capacity: int = 1024,
        expected_size: int | None = None,
        hnsw_M: int = 16,
        ef_construction: int = 40,
        ef: int = 50,
        backend: str = "auto",
        build_threads: int = 1,
        exact_below: int = 2048,
        build: str = "eager",
        build_after: float = 2000.0,
        rng: Any = None,
    ) -> None:
        owner = "AdaptiveMIPS"
        self.dim = check_int(dim, "dim", owner=owner, low=1)
        if (c is None) != (r is None):
            raise param_error("c", owner, "given together with 'r' (or both omitted)", c)
        self.c = None if c is None else check_float(c, "c", owner=owner, high=1.0)
        self.r = None if r is None else check_float(r, "r", owner=owner, low=0.0, closed="neither")
        self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)
        self.delta = check_probability(delta, "delta", owner=owner)
        self.index = check_choice(index, "index", ["hnsw", "exact"], owner=owner)
        self.shortlist = check_int(shortlist, "shortlist", owner=owner, low=1)
        capacity = check_int(capacity, "capacity", owner=owner, low=1)
        if isinstance(n_indexes, str):
            check_choice(n_indexes, "n_indexes", ["theory"], owner=owner)
            k_size = capacity if expected_size is None else check_int(expected_size, "expected_size", owner=owner, low=1)
            kappa = self.theoretical_kappa(k_size, self.dim, max(self.epsilon, 1e-12), self.delta)
        else:
            kappa = check_int(n_indexes, "n_indexes", owner=owner, low=1)
        self.n_indexes = 1 if self.index == "exact" else kappa
        self.exact_below = check_int(exact_below, "exact_below", owner=owner, low=0)
        self.build = check_choice(build, "build", ["eager", "lazy"], owner=owner)
        self.build_after = check_float(build_after, "build_after", owner=owner, low=0.0)
        self._store = ExactIndex(self.dim, capacity=capacity)
        # Points in the store but not yet in the graphs (lazy mode, once built).
        self._pending = ExactIndex(self.dim, capacity=64)
        self._credit = 0.0  # point-scans spent on points outside the graphs
        self._indexes: list[Any] = []
        self._gen = check_rng(rng)
        self._built = False
        self.backend = None
        if self.index == "hnsw":
            self.backend = _resolve_backend(backend, owner)
        self._hnsw_args = {"M": hnsw_M, "ef_construction": ef_construction, "ef": max(ef, self.shortlist),
                           "backend": self.backend or "auto",
                           "threads": check_int(build_threads, "build_threads", owner=owner, low=1)}
        self.n_queries = 0
        self.n_null = 0
        self.n_builds = 0
        #: Queries the graphs answered with no point (answered by an exact scan instead).
        self.n_graph_misses = 0
        #: Points scanned exactly by queries (sets below ``exact_below``, unbuilt lazy
        #: sets, pending buffers).
        self.n_scanned = 0
        #: Wall time spent inserting, deleting and (re)building (index maintenance).
        self.maintenance_seconds = 0.0

    def _build(self) -> None:
        """(Re)build the independent HNSW indexes over the live points."""
        P, ids = self._store.live()
        self._indexes = []
        for s in self._gen.spawn(self.n_indexes):
            ix = HNSWIndex(self.dim, capacity=max(1, 2 * len(ids)), rng=s, **self._hnsw_args)
            if len(ids):
                ix.add(P, ids)
            self._indexes.append(ix)
        self._built = True
        self._pending = ExactIndex(self.dim, capacity=64)
        self._credit = 0.0
        self.n_builds += 1

    def _drop(self) -> None:
        self._indexes, self._built = [], False
        self._pending = ExactIndex(self.dim, capacity=64)
        self._credit = 0.0

    def build_now(self) -> None:
        """Build the HNSW graphs over the current points now (e.g. as preprocessing)
        when the set is larger than ``exact_below`` (no-op for ``index="exact"``)."""
        t0 = time.perf_counter()
        if self.index == "hnsw" and len(self._store) > self.exact_below:
            self._build()
        self.maintenance_seconds += time.perf_counter() - t0

    def _maybe_switch(self) -> None:
        if self.index != "hnsw":
            return
        n = len(self._store)
        if self._built and (n <= self.exact_below // 2 or self._indexes[0]._dead > max(n, 1024)):
            # Small sets are scanned exactly; a graph mostly made of deleted nodes is
            # dropped (amortized: at most once per ``n`` deletions) and rebuilt when due.
            if self.build == "lazy" or n <= self.exact_below // 2:
                self._drop()
            else:
                self._build()
        elif not self._built and self.build == "eager" and n > self.exact_below:
            self._build()

    def _pay(self, scanned: int) -> None:
        """Lazy mode: charge ``scanned`` point-scans; build / flush when they paid for it."""
        if self.build != "lazy" or self.index != "hnsw" or scanned == 0:
            return
        self._credit += scanned
        t0 = time.perf_counter()
        if not self._built:
            n = len(self._store)
            if n > self.exact_below and self._credit >= self.build_after * n:
                self._build()
        else:
            m = len(self._pending)
            if self._credit >= self.build_after * m:
                P, ids = self._pending.live()
                for ix in self._indexes:
                    ix.add(P, ids)
                self._pending = ExactIndex(self.dim, capacity=64)
                self._credit = 0.0
        self.maintenance_seconds += time.perf_counter() - t0

    # ------------------------------------------------------------------ theory
    @staticmethod
    def theoretical_kappa(K: int, d: int, epsilon: float, delta: float) -> int:
        """``kappa = ceil(d log(K d / (epsilon delta)))`` of Algorithm 1 line 3.

        Examples
        --------
        >>> AdaptiveMIPS.theoretical_kappa(1000, 2, 0.1, 0.1)  # ceil(2 log(2e5))
        25
        """
        return max(1, math.ceil(d * math.log(K * d / (epsilon * delta))))

    # ------------------------------------------------------------------ updates
    def __len__(self) -> int:
        return len(self._store)

    def add(self, points: Any, ids: Any) -> None:
        """Insert points (shape (m, d)) under new labels ``ids`` into every index (line 7)."""
        t0 = time.perf_counter()
        try:
            self._add(points, ids)
        finally:
            self.maintenance_seconds += time.perf_counter() - t0

    def _add(self, points: Any, ids: Any) -> None:
        self._store.add(points, ids)
        if self._built:
            if self.build == "lazy":
                self._pending.add(points, ids)
            else:
                for ix in self._indexes:
                    ix.add(points, ids)
        self._maybe_switch()

    def remove(self, ids: Any) -> None:
        """Delete the points with labels ``ids`` from every index."""
        t0 = time.perf_counter()
        try:
            self._remove(ids)
        finally:
            self.maintenance_seconds += time.perf_counter() - t0

    def _remove(self, ids: Any) -> None:
        self._store.remove(ids)
        n = len(self._store)
        if self._built and self.build == "lazy" and (
            n <= self.exact_below // 2 or self._indexes[0]._dead + len(self._indexes[0]) > 2 * n
        ):
            # Most of the graph is leaving (a Sub-Elim stage emptied by a rescan): drop it
            # instead of marking every point deleted; the queries rebuild it when due.
            self._drop()
        if self._built:
            lab = np.asarray(ids, dtype=np.int64).reshape(-1)
            if len(self._pending):
                pend = self._pending.contains(lab)
                if pend.any():
                    self._pending.remove(lab[pend])
                lab = lab[~pend]
            for ix in self._indexes:
                ix.remove(lab)
        self._maybe_switch()

    def round_query(self, q: Any) -> NDArray[np.float64]:
        """Line 10: the nearest point whose coordinates are multiples of ``epsilon / d``."""
        qv = check_query(q, self.dim, "AdaptiveMIPS.round_query")
        if self.epsilon == 0:
            return qv
        step = self.epsilon / self.dim
        return np.round(qv / step) * step

    @property
    def threshold(self) -> float | None:
        """``c r - epsilon`` (the sanity check), or None."""
        if self.c is None or self.r is None:
            return None
        return self.c * self.r - self.epsilon

    def candidates(self, q: Any) -> NDArray[np.int64]:
        """Union of the shortlists of every index for the rounded query."""
        return self._candidates(check_query(q, self.dim, "AdaptiveMIPS.candidates"))

    def _candidates(self, qv: NDArray[np.float64]) -> NDArray[np.int64]:
        return self._shortlists(qv)[0]

    def _shortlists(self, qv: NDArray[np.float64], k_exact: int = 1) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Candidates and their inner products with the ROUNDED query (``k_exact`` of them
        from the points that are scanned exactly)."""
        if self.epsilon > 0:
            step = self.epsilon / self.dim
            qv = np.round(qv / step) * step
        if not self._built:
            self.n_scanned += len(self._store)
            self._pay(len(self._store))
            return self._store._query(qv, k_exact)
        q32 = qv.astype(np.float32)
        found = [f for f in (ix._query(q32, self.shortlist) for ix in self._indexes if len(ix)) if f[0].size]
        if not found and not len(self._pending):
            # The graphs returned nothing (a graph too sparse to reach a live point): the
            # exact scan answers instead (never worse than any approximate answer).
            self.n_graph_misses += 1
            self.n_scanned += len(self._store)
            return self._store._query(qv, k_exact)
        if len(self._pending):
            # Lazy mode: points not yet in the graphs are scanned exactly.
            found.append(self._pending._query(qv, k_exact))
            self.n_scanned += len(self._pending)
            self._pay(len(self._pending))
        if len(found) == 1:
            return found[0]
        lab = np.concatenate([f[0] for f in found])
        val = np.concatenate([f[1] for f in found])
        if len(self._indexes) > 1:  # independent graphs share labels (the pending set does not)
            lab, first = np.unique(lab, return_index=True)
            val = val[first]
        return lab, val

    def _query_all(self, qv: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Every candidate that passes the check ``<q, p> >= c r - epsilon``, best first,
        with its exact inner product (up to ``shortlist`` from each index and from the
        exactly scanned points); empty arrays for a null answer. The first candidate is
        :meth:`query`'s answer."""
        self.n_queries += 1
        if len(self._store) == 0:
            self.n_null += 1
            return np.zeros(0, np.int64), np.zeros(0)
        cand, vals = self._shortlists(qv, self.shortlist)
        if self.epsilon > 0 or not self._built:
            vals = self._store.points(cand) @ qv
        order = np.argsort(-vals, kind="stable")
        cand, vals = cand[order], vals[order]
        thr = self.threshold
        if thr is not None:
            ok = vals >= thr
            if not ok[0]:
                self.n_null += 1
            cand, vals = cand[ok], vals[ok]
        return cand, vals

    def query(self, q: Any) -> tuple[int | None, float]:
        """Lines 9-12: the best candidate ``(label, <q, p>)``; ``(None, value)`` when the
        index is empty or the best fails the check ``<q, p> >= c r - epsilon``."""
        return self._query(check_query(q, self.dim, "AdaptiveMIPS.query"))

    def _query(self, qv: NDArray[np.float64]) -> tuple[int | None, float]:
        """:meth:`query` without argument checks (internal hot path)."""
        self.n_queries += 1
        if len(self._store) == 0:
            self.n_null += 1
            return None, -math.inf
        cand, vals = self._shortlists(qv)
        if self.epsilon > 0 or not self._built:
            # Re-rank the shortlist by the exact inner product with the unrounded query.
            vals = self._store.points(cand) @ qv
        # (Without rounding, the index's scores already are the shortlist's inner products
        # with q -- hnswlib computes them exactly in float32 -- so re-ranking is free.)
        j = int(np.argmax(vals))
        best, val = int(cand[j]), float(vals[j])
        thr = self.threshold
        if thr is not None and val < thr:
            self.n_null += 1
            return None, val
        return best, val
