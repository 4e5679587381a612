"""Sign-random-projection LSH for MIPS through the standard MIPS-to-NNS transform.

The transform (Bachrach et al. 2014; "simple LSH" of Neyshabur and Srebro 2015): with
``M >= max_i ||v_i||``,

    P(v) = [v / M, sqrt(1 - ||v||^2 / M^2)],     Q(q) = [q / ||q||, 0],

so every ``P(v)`` is a unit vector and ``<P(v), Q(q)> = <v, q> / (M ||q||)``: the cosine
between ``P(v)`` and ``Q(q)`` is increasing in ``<v, q>``, so the maximum inner product is
the minimum angle, i.e. the nearest neighbour on the sphere. Sign random projections
(Charikar's SimHash) hash by angle: ``P[h(x) = h(y)] = 1 - angle(x, y) / pi``. The index
is the standard amplification: ``b`` tables (OR), each keyed by ``a`` concatenated sign
bits (AND). A query gathers the union of its ``b`` buckets and re-ranks the candidates by
their exact inner products.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_rng
from ..exceptions import InvalidParameterError
from ._common import MIPSResult, check_k, check_query, check_vectors, top_k_of

__all__ = ["mips_to_nns", "nns_query", "SignLSHIndex", "lsh_top_k"]

_CHUNK_ELEMENTS = 1 << 24  # rows of V hashed at a time: this many float64 elements (128 MB)


def mips_to_nns(V: Any, *, max_norm: float | None = None) -> tuple[NDArray[np.float64], float]:
    """The transform ``P(v) = [v / M, sqrt(1 - ||v||^2 / M^2)]`` of every row.

    Parameters
    ----------
    V : array of shape (n, dim)
    max_norm : float, optional
        ``M``; defaults to the largest row norm. Must be at least that.

    Returns
    -------
    (P, M) : array of shape (n, dim + 1) with unit rows, and M.

    Examples
    --------
    >>> P, M = mips_to_nns([[3.0, 4.0], [0.0, 1.0]])
    >>> M, np.round(np.linalg.norm(P, axis=1), 12).tolist()
    (5.0, [1.0, 1.0])
    """
    A = check_vectors(V, "mips_to_nns").astype(np.float64, copy=False)
    norms = np.linalg.norm(A, axis=1)
    top = float(norms.max())
    if max_norm is None:
        M = top if top > 0 else 1.0
    else:
        M = float(max_norm)
        if not np.isfinite(M) or M < top or M <= 0:
            raise InvalidParameterError(
                f"The 'max_norm' parameter of mips_to_nns must be a float >= the largest row norm "
                f"({top!r}). Got {max_norm!r} instead."
            )
    extra = np.sqrt(np.maximum(1.0 - (norms / M) ** 2, 0.0))
    return np.hstack([A / M, extra[:, None]]), M


def nns_query(q: Any, dim: int) -> NDArray[np.float64]:
    """The query transform ``Q(q) = [q / ||q||, 0]`` (a zero query stays zero)."""
    qv = check_query(q, dim, "nns_query")
    nrm = float(np.linalg.norm(qv))
    return np.r_[qv / (nrm if nrm > 0 else 1.0), 0.0]


class SignLSHIndex:
    """``b`` tables of ``a`` sign random projections over the transformed vectors.

    Parameters
    ----------
    V : array of shape (n, dim)
    a : int, default 8
        Bits per table (AND construction), in [1, 62].
    b : int, default 10
        Number of tables (OR construction).
    rng : None, int, SeedSequence or Generator
        Draws the projections.

    Attributes
    ----------
    build_seconds : float
        Preprocessing time (transform, hashing, bucketing).
    """

    def __init__(self, V: Any, *, a: int = 8, b: int = 10, rng: Any = None, check_finite: bool = True) -> None:
        owner = "SignLSHIndex"
        t0 = time.perf_counter()
        self._V = check_vectors(V, owner, check_finite=check_finite)
        self.a = check_int(a, "a", owner=owner, low=1, high=62)
        self.b = check_int(b, "b", owner=owner, low=1)
        gen = check_rng(rng)
        n, dim = self._V.shape
        self.dim = dim
        self._R = gen.standard_normal((self.a * self.b, dim + 1))
        # P(v) = [v / M, sqrt(1 - ||v||^2 / M^2)] (see mips_to_nns), hashed in row chunks so
        # no transformed (float64) copy of V is ever held: 10^4 x 10^5 float32 is 4 GB.
        step = max(1, _CHUNK_ELEMENTS // max(1, dim))
        norms = np.concatenate([np.linalg.norm(self._V[s : s + step].astype(np.float64), axis=1)
                                for s in range(0, n, step)]) if n else np.zeros(0)
        top = float(norms.max()) if n else 0.0
        self.max_norm = top if top > 0 else 1.0
        codes = np.empty((n, self.b), dtype=np.int64)
        for s in range(0, n, step):
            chunk = self._V[s : s + step].astype(np.float64) / self.max_norm
            extra = np.sqrt(np.maximum(1.0 - (norms[s : s + step] / self.max_norm) ** 2, 0.0))
            codes[s : s + chunk.shape[0]] = self._codes(np.hstack([chunk, extra[:, None]]))
        self._tables = []
        for t in range(self.b):
            order = np.argsort(codes[:, t], kind="stable")
            keys, starts = np.unique(codes[order, t], return_index=True)
            self._tables.append((keys, np.r_[starts, n], order))
        self.build_seconds = time.perf_counter() - t0

    def _codes(self, P: NDArray[np.float64]) -> NDArray[np.int64]:
        bits = (P @ self._R.T) > 0  # (m, a*b)
        w = (1 << np.arange(self.a, dtype=np.int64))
        return (bits.reshape(P.shape[0], self.b, self.a) * w).sum(axis=2)

    def candidates(self, q: Any) -> NDArray[np.intp]:
        """Union of the ``b`` buckets of ``q``."""
        code = self._codes(nns_query(q, self.dim)[None, :])[0]
        found = []
        for t, (keys, bounds, order) in enumerate(self._tables):
            j = int(np.searchsorted(keys, code[t]))
            if j < keys.size and keys[j] == code[t]:
                found.append(order[bounds[j] : bounds[j + 1]])
        if not found:
            return np.zeros(0, dtype=np.intp)
        return np.unique(np.concatenate(found)).astype(np.intp)

    def query(self, q: Any, k: int = 1) -> MIPSResult:
        """Top-k among the candidates, re-ranked exactly (fewer than ``k`` when the
        buckets hold fewer vectors)."""
        qv = check_query(q, self.dim, "SignLSHIndex.query")
        k = check_k(k, self._V.shape[0], "SignLSHIndex.query")
        t0 = time.perf_counter()
        cand = self.candidates(qv)
        scores = self._V[cand] @ qv.astype(self._V.dtype)
        top = top_k_of(scores, min(k, cand.size)) if cand.size else np.zeros(0, np.intp)
        sec = time.perf_counter() - t0
        return MIPSResult(
            cand[top],
            scores[top].astype(np.float64),
            int(cand.size * self.dim + self._R.size),
            {"candidates": int(cand.size), "query_seconds": sec, "build_seconds": self.build_seconds},
        )


def lsh_top_k(V: Any, q: Any, k: int = 1, *, a: int = 8, b: int = 10, rng: Any = None, check_finite: bool = True) -> MIPSResult:
    """Build a :class:`SignLSHIndex` and answer one query (see there).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V = rng.standard_normal((500, 4))
    >>> res = lsh_top_k(V, V[0] * 10, 1, a=4, b=20, rng=1)
    >>> res.info["candidates"] > 0
    True
    """
    index = SignLSHIndex(V, a=a, b=b, rng=rng, check_finite=check_finite)
    return index.query(q, k)
