"""Exact maximum inner product search: one BLAS matrix-vector product + argpartition."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, param_error
from ..exceptions import InvalidParameterError
from ._common import MIPSResult, check_finite_scores, check_k, check_query, check_vectors, top_k_of

__all__ = ["exact_top_k", "exact_nn_top_k", "ExactIndex"]


def exact_top_k(V: Any, q: Any, k: int = 1, *, check_finite: bool = True) -> MIPSResult:
    """The ``k`` rows of ``V`` with the largest inner product with ``q`` (exact).

    Parameters
    ----------
    V : array of shape (n, dim)
        The vectors (float32 is kept; the product runs in V's precision).
    q : array of shape (dim,)
        The query.
    k : int, default 1
        In ``[1, n]``.
    check_finite : bool, default True
        Refuse non-finite entries of V. Checked through the scores they enter (a NaN or
        inf entry makes its row's score non-finite), so the check reads nothing more.

    Returns
    -------
    MIPSResult
        ``scores`` are the exact inner products; ``n_products = n * dim``.

    Examples
    --------
    >>> V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> exact_top_k(V, [1.0, 1.0], k=2).indices.tolist()
    [1, 2]
    """
    owner = "exact_top_k"
    V = check_vectors(V, owner, check_finite=False)
    k = check_k(k, V.shape[0], owner)
    qv = check_query(q, V.shape[1], owner, dtype=V.dtype)
    return _exact_search(V, qv, k, nn=False, check_finite=check_finite, owner=owner)


def _exact_search(V: NDArray[Any], qv: NDArray[Any], k: int, *, nn: bool, check_finite: bool, owner: str) -> MIPSResult:
    """Exact top-k by inner product (``nn=False``) or nearest neighbours (checked inputs)."""
    if nn:
        scores = -(np.einsum("ij,ij->i", V, V) - 2.0 * (V @ qv) + float(qv @ qv))
    else:
        scores = V @ qv
    if check_finite:
        check_finite_scores(scores, V, owner)
    idx = top_k_of(scores, k)
    return MIPSResult(idx, scores[idx].astype(np.float64), int(V.size), epsilon=0.0, delta=0.0)


def exact_nn_top_k(V: Any, q: Any, k: int = 1, *, check_finite: bool = True) -> MIPSResult:
    """The ``k`` rows of ``V`` nearest to ``q`` in Euclidean distance (exact).

    ``scores`` are minus the squared distances, best (nearest) first.

    Examples
    --------
    >>> exact_nn_top_k([[0.0, 0.0], [3.0, 4.0]], [2.9, 4.1]).indices.tolist()
    [1]
    """
    owner = "exact_nn_top_k"
    V = check_vectors(V, owner, check_finite=False)
    k = check_k(k, V.shape[0], owner)
    qv = check_query(q, V.shape[1], owner, dtype=V.dtype)
    return _exact_search(V, qv, k, nn=True, check_finite=check_finite, owner=owner)


class ExactIndex:
    """A growable exact MIPS index with insertion and deletion (the reference index).

    Points are stored in a buffer that doubles when full; deleted points are masked.
    ``query`` is a linear scan (one matrix-vector product over the live points).

    Parameters
    ----------
    dim : int
        Dimension of the points.
    capacity : int, default 1024
        Initial buffer size.

    Examples
    --------
    >>> idx = ExactIndex(2)
    >>> idx.add([[1.0, 0.0], [0.0, 1.0]], [10, 11])
    >>> idx.query([0.2, 1.0], 1)[0].tolist()
    [11]
    >>> idx.remove([11]); idx.query([0.2, 1.0], 1)[0].tolist()
    [10]
    """

    kind = "exact"

    def __init__(self, dim: int, *, capacity: int = 1024) -> None:
        self.dim = check_int(dim, "dim", owner="ExactIndex", low=1)
        cap = check_int(capacity, "capacity", owner="ExactIndex", low=1)
        self._data = np.zeros((cap, self.dim), dtype=np.float64)
        self._ids = np.full(cap, -1, dtype=np.int64)
        self._alive = np.zeros(cap, dtype=bool)
        self._n = 0
        self._where: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._where)

    def _grow(self, need: int) -> None:
        cap = self._data.shape[0]
        if need > 0 and self._n + need <= cap:
            return
        # Compact the live points, then double until they fit.
        live = np.flatnonzero(self._alive[: self._n])
        new_cap = max(cap, 1)
        while live.size + need > new_cap:
            new_cap *= 2
        data = np.zeros((new_cap, self.dim), dtype=np.float64)
        ids = np.full(new_cap, -1, dtype=np.int64)
        alive = np.zeros(new_cap, dtype=bool)
        data[: live.size] = self._data[live]
        ids[: live.size] = self._ids[live]
        alive[: live.size] = True
        self._data, self._ids, self._alive, self._n = data, ids, alive, int(live.size)
        self._where = {int(i): p for p, i in enumerate(ids[: live.size])}

    def add(self, points: Any, ids: Any) -> None:
        """Insert ``points`` (shape (m, dim)) under the integer labels ``ids`` (new labels)."""
        P = check_vectors(np.atleast_2d(np.asarray(points, dtype=np.float64)), "ExactIndex.add", name="points")
        if P.shape[1] != self.dim:
            raise InvalidParameterError(
                f"The 'points' parameter of ExactIndex.add must have shape (m, {self.dim}). Got an "
                f"array of shape {P.shape} instead."
            )
        lab = np.asarray(ids, dtype=np.int64).reshape(-1)
        if lab.size != P.shape[0]:
            raise param_error("ids", "ExactIndex.add", f"an int array of length {P.shape[0]}", ids)
        dup = [int(i) for i in lab if int(i) in self._where]
        if dup or np.unique(lab).size != lab.size:
            raise param_error("ids", "ExactIndex.add", "labels not already in the index", dup or lab.tolist())
        self._grow(P.shape[0])
        s = self._n
        self._data[s : s + P.shape[0]] = P
        self._ids[s : s + P.shape[0]] = lab
        self._alive[s : s + P.shape[0]] = True
        for j, i in enumerate(lab):
            self._where[int(i)] = s + j
        self._n += P.shape[0]

    def remove(self, ids: Any) -> None:
        """Delete the points with labels ``ids`` (unknown labels raise)."""
        lab = np.asarray(ids, dtype=np.int64).reshape(-1).tolist()
        w = self._where
        missing = [i for i in lab if i not in w]
        if missing or len(set(lab)) != len(lab):
            raise param_error("ids", "ExactIndex.remove", "distinct labels present in the index", missing[0] if missing else lab)
        self._alive[[w.pop(i) for i in lab]] = False
        # Keep the linear scan proportional to the live points: compact when more than
        # half of the used buffer is dead.
        if self._n > 64 and 2 * len(self._where) < self._n:
            self._grow(0)

    def query(self, q: Any, k: int = 1) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Labels and inner products of the ``min(k, len(self))`` best live points."""
        qv = check_query(q, self.dim, "ExactIndex.query")
        return self._query(qv, k)

    def _query(self, qv: NDArray[np.float64], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """:meth:`query` without argument checks (internal hot path)."""
        if len(self) == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        scores = self._data[: self._n] @ qv
        scores[~self._alive[: self._n]] = -np.inf
        if int(k) == 1:
            top = np.array([int(np.argmax(scores))])
        else:
            top = top_k_of(scores, min(int(k), len(self)))
        return self._ids[top].copy(), scores[top]

    def contains(self, ids: Any) -> NDArray[np.bool_]:
        """Whether each label of ``ids`` is live in the index."""
        w = self._where
        return np.fromiter((int(i) in w for i in np.asarray(ids, dtype=np.int64).reshape(-1)), dtype=bool)

    def live(self) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """All live points and their labels (copies)."""
        m = self._alive[: self._n]
        return self._data[: self._n][m].copy(), self._ids[: self._n][m].copy()

    def points(self, ids: Any) -> NDArray[np.float64]:
        """The stored points of the labels ``ids``."""
        w = self._where
        pos = [w[i] for i in np.asarray(ids, dtype=np.int64).reshape(-1).tolist()]
        return self._data[pos]
