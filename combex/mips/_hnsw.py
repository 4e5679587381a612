"""HNSW (Malkov and Yashunin 2018) through hnswlib, for inner-product search.

hnswlib is an optional dependency (the ``mips`` extra: ``pip install combex[mips]``).
The index uses hnswlib's ``"ip"`` space (distance ``1 - <q, v>``), so a nearest-neighbour
query is a MIPS query; the top candidates can be re-ranked exactly (a *shortlist*, as in
Section 7 of the sublinear-bandits paper).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_int, check_rng, param_error
from ..exceptions import InvalidParameterError
from ._common import MIPSResult, check_k, check_query, check_vectors, top_k_of

__all__ = ["HNSWIndex", "hnsw_top_k", "require_hnswlib"]


def require_hnswlib() -> Any:
    """Import hnswlib or raise an ImportError naming the ``mips`` extra."""
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "HNSW search needs the optional dependency hnswlib; install it with "
            "`pip install combex[mips]` (or `pip install hnswlib`)."
        ) from exc
    return hnswlib


class HNSWIndex:
    """A dynamic HNSW index for inner-product search (insert, delete, query).

    Parameters
    ----------
    dim : int
        Dimension of the points.
    M : int, default 16
        Graph degree (hnswlib ``M``).
    ef_construction : int, default 100
    ef : int, default 50
        Search breadth (raised to the number of results asked when smaller).
    capacity : int, default 1024
        Initial ``max_elements``; doubled when full.
    space : {"ip", "l2", "cosine"}, default "ip"
    rng : None, int, SeedSequence or Generator
        Seeds the graph's level generator (independent indexes get independent seeds).

    Examples
    --------
    >>> idx = HNSWIndex(2, rng=0)
    >>> idx.add([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]], [0, 1, 2])
    >>> idx.query([1.0, 0.1], 1)[0].tolist()
    [0]
    """

    kind = "hnsw"

    def __init__(
        self,
        dim: int,
        *,
        M: int = 16,
        ef_construction: int = 100,
        ef: int = 50,
        capacity: int = 1024,
        space: str = "ip",
        rng: Any = None,
    ) -> None:
        hnswlib = require_hnswlib()
        owner = "HNSWIndex"
        self.dim = check_int(dim, "dim", owner=owner, low=1)
        self.M = check_int(M, "M", owner=owner, low=2)
        self.ef_construction = check_int(ef_construction, "ef_construction", owner=owner, low=1)
        self.ef = check_int(ef, "ef", owner=owner, low=1)
        self.space = check_choice(space, "space", ["ip", "l2", "cosine"], owner=owner)
        cap = check_int(capacity, "capacity", owner=owner, low=1)
        seed = int(check_rng(rng).integers(0, 2**31 - 1))
        self._index = hnswlib.Index(space=self.space, dim=self.dim)
        self._index.init_index(max_elements=cap, ef_construction=self.ef_construction, M=self.M, random_seed=seed)
        self._index.set_ef(self.ef)
        self._index.set_num_threads(1)
        self._live: set[int] = set()
        self._dead = 0

    def __len__(self) -> int:
        return len(self._live)

    def add(self, points: Any, ids: Any) -> None:
        """Insert ``points`` (shape (m, dim)) under new integer labels ``ids``."""
        P = check_vectors(np.atleast_2d(np.asarray(points, dtype=np.float32)), "HNSWIndex.add", name="points")
        if P.shape[1] != self.dim:
            raise InvalidParameterError(
                f"The 'points' parameter of HNSWIndex.add must have shape (m, {self.dim}). Got an "
                f"array of shape {P.shape} instead."
            )
        lab = np.asarray(ids, dtype=np.int64).reshape(-1)
        if lab.size != P.shape[0]:
            raise param_error("ids", "HNSWIndex.add", f"an int array of length {P.shape[0]}", ids)
        if np.unique(lab).size != lab.size or any(int(i) in self._live for i in lab):
            raise param_error("ids", "HNSWIndex.add", "labels not already in the index", lab.tolist())
        need = self._index.get_current_count() + P.shape[0]
        cap = self._index.get_max_elements()
        if need > cap:
            while need > cap:
                cap *= 2
            self._index.resize_index(cap)
        self._index.add_items(P, lab, num_threads=1)
        self._live.update(int(i) for i in lab)

    def remove(self, ids: Any) -> None:
        """Delete (mark deleted) the points with labels ``ids``."""
        for i in np.asarray(ids, dtype=np.int64).reshape(-1):
            if int(i) not in self._live:
                raise param_error("ids", "HNSWIndex.remove", "labels present in the index", int(i))
            self._index.mark_deleted(int(i))
            self._live.discard(int(i))
            self._dead += 1

    def query(self, q: Any, k: int = 1) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Labels and hnswlib scores of up to ``k`` approximate best points.

        For ``space="ip"`` the score is the inner product (``1 - distance``).
        """
        qv = check_query(q, self.dim, "HNSWIndex.query", dtype=np.float32)
        return self._query(qv, k)

    def _query(self, qv: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """:meth:`query` without argument checks (internal hot path)."""
        kk = min(int(k), len(self))
        if kk == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        if self.ef < kk:
            self._index.set_ef(kk)
        try:
            labels, dist = self._index.knn_query(qv[None, :], k=kk, num_threads=1)
        except RuntimeError:
            # hnswlib could not find kk live neighbours (many deletions): widen the search.
            self._index.set_ef(max(self.ef, kk) * 4 + self._dead)
            labels, dist = self._index.knn_query(qv[None, :], k=kk, num_threads=1)
            self._index.set_ef(self.ef)
        if self.ef < kk:
            self._index.set_ef(self.ef)
        score = (1.0 - dist[0]) if self.space == "ip" else -dist[0]
        return labels[0].astype(np.int64), score.astype(np.float64)


def hnsw_top_k(
    V: Any,
    q: Any,
    k: int = 1,
    *,
    index: HNSWIndex | None = None,
    ef: int = 50,
    M: int = 16,
    ef_construction: int = 100,
    rng: Any = None,
    check_finite: bool = True,
) -> MIPSResult:
    """Top-k MIPS with an HNSW index (built here unless ``index`` is given).

    The returned ``k`` candidates are re-ranked by their exact inner products.
    ``info["build_seconds"]`` is the preprocessing time (0 when ``index`` is given),
    ``info["query_seconds"]`` the query time.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V = rng.standard_normal((200, 8))
    >>> q = rng.standard_normal(8)
    >>> res = hnsw_top_k(V, q, 5, rng=0)
    >>> res.indices.size
    5
    """
    owner = "hnsw_top_k"
    V = check_vectors(V, owner, check_finite=check_finite)
    k = check_k(k, V.shape[0], owner)
    qv = check_query(q, V.shape[1], owner)
    build = 0.0
    if index is None:
        t0 = time.perf_counter()
        index = HNSWIndex(V.shape[1], M=M, ef_construction=ef_construction, ef=ef, capacity=V.shape[0], rng=rng)
        index.add(V, np.arange(V.shape[0]))
        build = time.perf_counter() - t0
    t0 = time.perf_counter()
    labels, _ = index.query(qv, k)
    exact = V[labels] @ qv.astype(V.dtype)
    order = top_k_of(exact, labels.size)
    seconds = time.perf_counter() - t0
    return MIPSResult(
        labels[order].astype(np.intp),
        exact[order].astype(np.float64),
        int(labels.size * V.shape[1]),
        {"build_seconds": build, "query_seconds": seconds, "ef": index.ef},
    )
