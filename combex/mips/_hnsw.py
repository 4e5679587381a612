"""HNSW graphs (Malkov and Yashunin 2018) for inner-product search: hnswlib, faiss or usearch.

The graph libraries are optional dependencies (the ``mips`` extra: ``pip install
combex[mips]`` installs faiss-cpu and usearch; hnswlib is accepted when installed). One
class, :class:`HNSWIndex`, gives the three the same dynamic interface (insert, delete,
query the ``k`` best by inner product); a query returns labels and exact float32 inner
products, so the candidates can be re-ranked exactly (a *shortlist*, as in Section 7 of the
sublinear-bandits paper).

Which backend (``backend="auto"``) is chosen by measurement, ``benchmarks/sublinear.py
--index-libraries`` (docs/mips.md, "Index libraries"): at K = 10^5 Gaussian arms in
d = 16 -- Sub-TS's index -- faiss builds the graph fastest at equal recall and answers a
shortlist query in about the time of hnswlib; usearch builds more slowly at equal recall
but deletes natively. hnswlib (unmaintained since 2023) is only used when asked for.
Deletion: hnswlib and usearch delete natively; faiss's HNSW cannot remove points, so
deleted points stay in the graph as routing nodes and are filtered out of the results by
an ID selector (the same "mark deleted" semantics as hnswlib).
"""

from __future__ import annotations

import importlib.util
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_int, check_rng, param_error
from ..exceptions import InvalidParameterError
from ._common import MIPSResult, check_k, check_query, check_vectors, top_k_of

__all__ = ["HNSWIndex", "hnsw_top_k", "require_hnswlib", "hnsw_backends", "GRAPH_BACKENDS"]

#: Graph libraries in the order ``backend="auto"`` tries them (measured, see the module docstring).
GRAPH_BACKENDS = ("faiss", "usearch", "hnswlib")
_MODULE = {"faiss": "faiss", "usearch": "usearch", "hnswlib": "hnswlib"}
_PIP = {"faiss": "faiss-cpu", "usearch": "usearch", "hnswlib": "hnswlib"}


def hnsw_backends() -> list[str]:
    """The graph libraries installed here, in ``backend="auto"`` order.

    Examples
    --------
    >>> set(hnsw_backends()) <= set(GRAPH_BACKENDS)
    True
    """
    return [b for b in GRAPH_BACKENDS if importlib.util.find_spec(_MODULE[b]) is not None]


def _resolve_backend(backend: Any, owner: str) -> str:
    backend = check_choice(backend, "backend", ["auto", *GRAPH_BACKENDS], owner=owner)
    if backend == "auto":
        found = hnsw_backends()
        if not found:
            raise ImportError(
                "HNSW search needs one of the optional graph libraries faiss-cpu, usearch or hnswlib; "
                "install them with `pip install combex[mips]`."
            )
        return found[0]
    if importlib.util.find_spec(_MODULE[backend]) is None:
        raise ImportError(
            f"{owner}(backend={backend!r}) needs the optional dependency {_PIP[backend]}; install it with "
            f"`pip install {_PIP[backend]}` (or `pip install combex[mips]`)."
        )
    return backend


def require_hnswlib() -> Any:
    """Check that a graph library is installed (ImportError naming the ``mips`` extra)."""
    return _resolve_backend("auto", "HNSWIndex")


# ---------------------------------------------------------------------- backends
class _HnswlibGraph:
    def __init__(self, dim: int, space: str, M: int, ef_construction: int, ef: int, capacity: int,
                 seed: int, threads: int) -> None:
        import hnswlib  # hnswlib is optional (used when installed)

        self.threads = threads
        self.g = hnswlib.Index(space=space, dim=dim)
        self.g.init_index(max_elements=capacity, ef_construction=ef_construction, M=M, random_seed=seed)
        self.g.set_ef(ef)
        self.g.set_num_threads(1)

    def add(self, P: NDArray[np.float32], lab: NDArray[np.int64], threads: int) -> None:
        need = self.g.get_current_count() + P.shape[0]
        cap = self.g.get_max_elements()
        if need > cap:
            while need > cap:
                cap *= 2
            self.g.resize_index(cap)
        self.g.add_items(P, lab, num_threads=threads)

    def delete(self, lab: NDArray[np.int64]) -> None:
        for i in lab.tolist():
            self.g.mark_deleted(i)

    def set_ef(self, ef: int) -> None:
        self.g.set_ef(ef)

    def search(self, q: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        labels, dist = self.g.knn_query(q[None, :], k=k, num_threads=1)
        return labels[0].astype(np.int64), dist[0].astype(np.float64)  # 1 - ip, or squared L2


class _UsearchGraph:
    def __init__(self, dim: int, space: str, M: int, ef_construction: int, ef: int, capacity: int,
                 seed: int, threads: int) -> None:
        from usearch.index import Index  # usearch is optional (the mips extra)

        metric = {"ip": "ip", "l2": "l2sq", "cosine": "cos"}[space]
        self.g = Index(ndim=dim, metric=metric, dtype="f32", connectivity=M, expansion_add=ef_construction,
                       expansion_search=ef)

    def add(self, P: NDArray[np.float32], lab: NDArray[np.int64], threads: int) -> None:
        self.g.add(lab.astype(np.uint64), P, threads=threads)

    def delete(self, lab: NDArray[np.int64]) -> None:
        self.g.remove(lab.astype(np.uint64))

    def set_ef(self, ef: int) -> None:
        self.g.expansion_search = ef

    def search(self, q: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        m = self.g.search(q, k, threads=1)
        return np.asarray(m.keys, dtype=np.int64), np.asarray(m.distances, dtype=np.float64)


class _FaissGraph:
    """faiss ``IndexHNSWFlat``; labels live in a side table (faiss numbers points 0, 1, ...),
    deletions are a bitmap filter on the search (the points stay as routing nodes)."""

    def __init__(self, dim: int, space: str, M: int, ef_construction: int, ef: int, capacity: int,
                 seed: int, threads: int) -> None:
        import faiss  # faiss is optional (the mips extra)

        self._faiss = faiss
        metric = faiss.METRIC_L2 if space == "l2" else faiss.METRIC_INNER_PRODUCT
        self.g = faiss.IndexHNSWFlat(dim, M, metric)
        self.g.hnsw.efConstruction = ef_construction
        self.g.hnsw.efSearch = ef
        self.ef = ef
        self.labels = np.empty(max(16, capacity), dtype=np.int64)
        self.alive = np.empty(0, dtype=np.uint8)  # bitmap over internal ids, built on first delete
        self._pos: dict[int, int] = {}
        self._params: Any = None

    def add(self, P: NDArray[np.float32], lab: NDArray[np.int64], threads: int) -> None:
        n0 = self.g.ntotal
        need = n0 + P.shape[0]
        if need > self.labels.size:
            grown = np.empty(max(need, 2 * self.labels.size), dtype=np.int64)
            grown[:n0] = self.labels[:n0]
            self.labels = grown
        self.labels[n0:need] = lab
        self._pos.update(zip(lab.tolist(), range(n0, need)))
        faiss = self._faiss
        before = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(threads)
        try:
            self.g.add(np.ascontiguousarray(P))
        finally:
            faiss.omp_set_num_threads(before)
        if self.alive.size:
            self._grow_bitmap(need)
            self._set_bits(np.arange(n0, need), True)

    def _grow_bitmap(self, n: int) -> None:
        nbytes = (n + 7) // 8
        if nbytes > self.alive.size:
            grown = np.zeros(max(nbytes, 2 * self.alive.size), dtype=np.uint8)
            grown[: self.alive.size] = self.alive
            self.alive = grown
        self._params = None

    def _set_bits(self, internal: NDArray[np.int64], value: bool) -> None:
        byte, bit = internal // 8, (internal % 8).astype(np.uint8)
        mask = np.left_shift(np.uint8(1), bit)
        if value:
            np.bitwise_or.at(self.alive, byte, mask)
        else:
            np.bitwise_and.at(self.alive, byte, ~mask)

    def delete(self, lab: NDArray[np.int64]) -> None:
        if not self.alive.size:
            n = self.g.ntotal
            self.alive = np.zeros(0, dtype=np.uint8)
            self._grow_bitmap(max(n, 8))
            self._set_bits(np.arange(n), True)
        self._set_bits(np.array([self._pos.pop(int(i)) for i in lab], dtype=np.int64), False)

    def set_ef(self, ef: int) -> None:
        self.ef = ef
        self.g.hnsw.efSearch = ef
        self._params = None

    def search(self, q: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        if self.alive.size:
            if self._params is None:
                faiss = self._faiss
                sel = faiss.IDSelectorBitmap(self.alive.size * 8, faiss.swig_ptr(self.alive))
                self._params = faiss.SearchParametersHNSW(sel=sel, efSearch=self.ef)
                self._params._sel = sel  # keep the selector alive with the parameters
            sim, idx = self.g.search(q[None, :], k, params=self._params)
        else:
            sim, idx = self.g.search(q[None, :], k)
        idx = idx[0]
        ok = idx >= 0
        lab = self.labels[idx[ok]]
        s = sim[0][ok].astype(np.float64)
        return lab, (1.0 - s) if self.g.metric_type == self._faiss.METRIC_INNER_PRODUCT else s


_GRAPHS = {"hnswlib": _HnswlibGraph, "usearch": _UsearchGraph, "faiss": _FaissGraph}


class HNSWIndex:
    """A dynamic HNSW index for inner-product search (insert, delete, query).

    Parameters
    ----------
    dim : int
        Dimension of the points.
    M : int, default 16
        Graph degree (hnswlib / faiss ``M``, usearch ``connectivity``).
    ef_construction : int, default 40
        Candidate-list size while inserting (usearch ``expansion_add``). The build time is
        about proportional to it: at K = 10^5, d = 16, 40 builds 2.5-4x faster than 100 with
        the same shortlist recall (``docs/mips.md``, "Index libraries").
    ef : int, default 50
        Search breadth (raised to the number of results asked when smaller).
    capacity : int, default 1024
        Initial capacity; grown as needed.
    space : {"ip", "l2", "cosine"}, default "ip"
    backend : {"auto", "faiss", "usearch", "hnswlib"}, default "auto"
        The graph library; ``"auto"`` is the first installed of :data:`GRAPH_BACKENDS`.
    threads : int, default 1
        Threads for batch insertions (the build); queries use one thread. More than one
        thread makes the graph depend on the thread schedule (not reproducible).
    rng : None, int, SeedSequence or Generator
        Seeds the graph (hnswlib's level generator; for faiss and usearch, whose level
        generators have fixed seeds, the insertion order of each batch), so independent
        indexes get independent graphs.

    Examples
    --------
    >>> idx = HNSWIndex(2, rng=0)
    >>> idx.add([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]], [0, 1, 2])
    >>> idx.query([1.0, 0.1], 1)[0].tolist()
    [0]
    >>> idx.remove([0]); idx.query([1.0, 0.1], 1)[0].tolist()
    [2]
    """

    kind = "hnsw"

    def __init__(
        self,
        dim: int,
        *,
        M: int = 16,
        ef_construction: int = 40,
        ef: int = 50,
        capacity: int = 1024,
        space: str = "ip",
        backend: str = "auto",
        threads: int = 1,
        rng: Any = None,
    ) -> None:
        owner = "HNSWIndex"
        self.dim = check_int(dim, "dim", owner=owner, low=1)
        self.M = check_int(M, "M", owner=owner, low=2)
        self.ef_construction = check_int(ef_construction, "ef_construction", owner=owner, low=1)
        self.ef = check_int(ef, "ef", owner=owner, low=1)
        self.space = check_choice(space, "space", ["ip", "l2", "cosine"], owner=owner)
        self.threads = check_int(threads, "threads", owner=owner, low=1)
        cap = check_int(capacity, "capacity", owner=owner, low=1)
        self.backend = _resolve_backend(backend, owner)
        self._gen = check_rng(rng)
        seed = int(self._gen.integers(0, 2**31 - 1))
        self._graph = _GRAPHS[self.backend](self.dim, self.space, self.M, self.ef_construction, self.ef, cap,
                                            seed, self.threads)
        self._normalize = self.space == "cosine" and self.backend == "faiss"
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
        if lab.size and lab.min() < 0:
            raise param_error("ids", "HNSWIndex.add", "non-negative integer labels", lab.tolist())
        if np.unique(lab).size != lab.size or any(int(i) in self._live for i in lab):
            raise param_error("ids", "HNSWIndex.add", "labels not already in the index", lab.tolist())
        if self.backend != "hnswlib" and lab.size > 1:
            order = self._gen.permutation(lab.size)  # the seed of graphs with a fixed level generator
            P, lab = P[order], lab[order]
        if self._normalize:
            P = P / np.maximum(np.linalg.norm(P, axis=1, keepdims=True), np.finfo(np.float32).tiny)
        self._graph.add(np.ascontiguousarray(P), lab, self.threads)
        self._live.update(lab.tolist())

    def remove(self, ids: Any) -> None:
        """Delete the points with labels ``ids`` (they stop being returned)."""
        lab = np.asarray(ids, dtype=np.int64).reshape(-1)
        for i in lab.tolist():
            if i not in self._live:
                raise param_error("ids", "HNSWIndex.remove", "labels present in the index", i)
        self._graph.delete(lab)
        self._live.difference_update(lab.tolist())
        self._dead += lab.size

    def query(self, q: Any, k: int = 1) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Labels and scores of up to ``k`` approximate best points (possibly fewer, even
        none, when a sparse graph cannot reach ``k`` live points).

        For ``space="ip"`` the score is the inner product (computed in float32), for
        ``"cosine"`` the cosine, for ``"l2"`` minus the squared distance.
        """
        qv = check_query(q, self.dim, "HNSWIndex.query", dtype=np.float32)
        return self._query(qv, k)

    def _query(self, qv: NDArray[np.float32], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """:meth:`query` without argument checks (internal hot path)."""
        kk = min(int(k), len(self))
        if kk == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        if self._normalize:
            qv = qv / max(float(np.linalg.norm(qv)), float(np.finfo(np.float32).tiny))
        g = self._graph
        if self.ef < kk:
            g.set_ef(kk)
        try:
            labels, dist = g.search(qv, kk)
        except RuntimeError:
            # hnswlib could not find kk live neighbours (many deletions): widen the search.
            g.set_ef(max(self.ef, kk) * 4 + self._dead)
            try:
                labels, dist = g.search(qv, kk)
            except RuntimeError:  # a graph too sparse to reach kk live points: none found
                labels, dist = np.zeros(0, np.int64), np.zeros(0)
            g.set_ef(self.ef)
        if self.ef < kk:
            g.set_ef(self.ef)
        score = (1.0 - dist) if self.space != "l2" else -dist
        return labels, score


def hnsw_top_k(
    V: Any,
    q: Any,
    k: int = 1,
    *,
    index: HNSWIndex | None = None,
    ef: int = 50,
    M: int = 16,
    ef_construction: int = 40,
    backend: str = "auto",
    threads: int = 1,
    rng: Any = None,
    check_finite: bool = True,
) -> MIPSResult:
    """Top-k MIPS with an HNSW index (built here unless ``index`` is given).

    The returned ``k`` candidates are re-ranked by their exact inner products.
    ``info["build_seconds"]`` is the preprocessing time (0 when ``index`` is given),
    ``info["query_seconds"]`` the query time. ``backend`` and ``threads`` (for the build)
    are those of :class:`HNSWIndex`.

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
        index = HNSWIndex(V.shape[1], M=M, ef_construction=ef_construction, ef=ef, capacity=V.shape[0],
                          backend=backend, threads=threads, rng=rng)
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
        {"build_seconds": build, "query_seconds": seconds, "ef": index.ef, "backend": index.backend},
    )
