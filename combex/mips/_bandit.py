"""MIPS (and nearest-neighbour search) as a MAB-BP problem solved by BoundedME.

Liu, Wu and Mozafari (AAAI 2019): arm ``i`` is the vector ``v_i``; its reward list is
``R_i = {f(i, j) : j = 1..N}`` with ``f(i, j) = v_i^(j) q^(j)`` for MIPS and
``f(i, j) = -(q^(j) - v_i^(j))^2`` for nearest-neighbour search; the list mean is
``q^T v_i / N`` (resp. ``-||q - v_i||^2 / N``). Rewards are scaled into ``[0, 1]`` by
known bounds: with ``|v_ij| <= v_max``, ``v_ij q_j`` lies in ``[-v_max max|q|,
v_max max|q|]`` and ``(q_j - v_ij)^2`` in ``[0, (v_max + max|q|)^2]``. ``epsilon`` is in
those scaled units: a returned set is epsilon-optimal when the k-th best scaled mean it
holds is within ``epsilon`` of the true k-th best.

No preprocessing of ``V``: the only work is reading coordinates. Sampling without
replacement is implemented with ONE random permutation shared by all arms (each arm's
draws are then a uniformly random sequence without replacement, which is all Lemma 1 and
the per-arm union/Markov argument of Lemma 4 use; sharing also makes the comparison of two
arms use the same coordinates, which cancels common noise).

Sampling unit (``block``): ``block=1`` draws single coordinates, exactly the paper's
setting; reading scattered coordinates of a row-major matrix is memory-bound, so it is
slower per product than BLAS. ``block=B`` makes the list items the sums over ``ceil(N/B)``
contiguous blocks of ``B`` coordinates (the matrix padded virtually with zero columns to a
multiple of ``B``): still a MAB-BP instance (the paper notes MAB-BP solves any
``argmax_i sum_j f(i, j)``), with a list of ``ceil(N/B)`` items in the same scaled
range, so Theorem 1 holds as stated for it, but ``m(u)`` counts blocks (``B`` times more
products for the same ``u`` when ``u << N/B``). It is read with BLAS on strided views.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from .._validation import check_float, check_int, check_probability, check_rng
from ..solvers.mips import bounded_me
from ._common import MIPSResult, check_k, check_query, check_vectors

__all__ = ["mips_top_k", "nn_top_k"]

_CHUNK = 8192  # columns per BLAS call on a row subset (bounds temporary memory)
_ROWS = 32  # rows per copied group (32 x 8192 float32 = 1 MB, cache-resident)


def _runs(blocks: NDArray[np.int64], block: int, dim: int) -> list[tuple[int, int]]:
    """Merge sorted block ids into contiguous coordinate intervals [start, stop)."""
    if blocks.size == 0:
        return []
    br = np.flatnonzero(np.diff(blocks) != 1)
    starts = np.r_[blocks[0], blocks[br + 1]]
    ends = np.r_[blocks[br], blocks[-1]] + 1
    return [(int(s) * block, min(int(e) * block, dim)) for s, e in zip(starts, ends)]


class _Reader:
    """Partial sums of f(i, j) over coordinate sets, with product counting."""

    def __init__(self, V: NDArray[Any], q: NDArray[Any], kind: str) -> None:
        self.V, self.q, self.kind = V, q, kind
        self.n = V.shape[0]
        # Fortran-ordered V (dimension-major): its transpose is C-contiguous.
        self.VT = V.T if (V.flags.f_contiguous and not V.flags.c_contiguous) else None
        self.products = 0

    def _f(self, sub: NDArray[Any], qs: NDArray[Any]) -> NDArray[Any]:
        if self.kind == "ip":
            return sub @ qs
        d = sub - qs
        return -np.einsum("ij,ij->i", d, d)

    def runs(self, rows: NDArray[np.intp], runs: list[tuple[int, int]]) -> NDArray[np.float64]:
        # While many vectors survive, a BLAS pass over the strided view V[:, a:b] of ALL
        # vectors (no copy) beats copying the survivors' segments first (measured at
        # 4,000 x 10^5 float32, 8 blocks of 4096: 0.155 ns per streamed product against
        # 0.31 ns per survivor product copied in 32-row groups), so every row is read until
        # fewer than n/2 (C order) or n/16 (dimension-major order, where a row subset
        # touches every cache line) survive.
        full = rows.size == self.n
        ratio = 16 if self.VT is not None else 2
        stream = full or rows.size * ratio > self.n
        if stream:
            out = np.zeros(self.n, dtype=np.float64)
            for a, b in runs:
                out += self._f(self.V[:, a:b], self.q[a:b])
                self.products += self.n * (b - a)
            return out if full else out[rows]
        # Survivors only: copy their segments in small row groups (the copy stays in cache,
        # about 2x a streamed product per element, against 3.6x for one large copy).
        out = np.zeros(rows.size, dtype=np.float64)
        for r0 in range(0, rows.size, _ROWS):
            rr = rows[r0 : r0 + _ROWS]
            acc = out[r0 : r0 + rr.size]
            for a, b in runs:
                for c0 in range(a, b, _CHUNK):
                    c1 = min(b, c0 + _CHUNK)
                    acc += self._f(self.V[rr, c0:c1], self.q[c0:c1])
        self.products += rows.size * sum(b - a for a, b in runs)
        return out

    def gather(self, rows: NDArray[np.intp], cols: NDArray[np.int64]) -> NDArray[np.float64]:
        out = np.zeros(rows.size, dtype=np.float64)
        full = rows.size == self.n
        if self.VT is not None:
            # Dimension-major storage: coordinate j of every vector is the contiguous row
            # VT[j]; read the drawn coordinates row by row in cache-sized chunks.
            # While many vectors survive, streaming whole coordinate rows through BLAS and
            # keeping the survivors' entries beats an element-wise gather (about 50x
            # cheaper per element); below n/32 survivors, gather.
            stream = full or rows.size * 32 > self.n
            if stream and self.kind == "ip":
                # A 1 x N sparse row (the drawn coordinates of q) times VT: scipy's CSR
                # kernel adds q_j * VT[j] for the drawn j only, with no copy of VT.
                qs = sparse.csr_matrix(
                    (self.q[cols], cols, np.array([0, cols.size])), shape=(1, self.VT.shape[0])
                )
                part = np.asarray(qs @ self.VT, dtype=np.float64).ravel()
                self.products += self.n * cols.size
                return part if full else part[rows]
            step = max(16, (1 << 21) // max(1, self.n if stream else rows.size))
            buf = None
            for c0 in range(0, cols.size, step):
                cc = cols[c0 : c0 + step]
                if stream:
                    if buf is None or buf.shape[0] != cc.size:
                        buf = np.empty((cc.size, self.n), dtype=self.VT.dtype)
                    sub = np.take(self.VT, cc, axis=0, out=buf)
                else:
                    sub = self.VT[np.ix_(cc, rows)]
                qs = self.q[cc]
                if self.kind == "ip":
                    part = qs @ sub
                else:
                    d = sub - qs[:, None]
                    part = -np.einsum("ij,ij->j", d, d)
                out += part if (full or not stream) else part[rows]
            if stream and not full:
                self.products += (self.n - rows.size) * cols.size  # extra work, counted
        else:
            step = 2048
            for c0 in range(0, cols.size, step):
                cc = cols[c0 : c0 + step]
                sub = self.V[:, cc] if full else self.V[np.ix_(rows, cc)]
                out += self._f(sub, self.q[cc])
        self.products += rows.size * cols.size
        return out


def _search(
    V: Any,
    q: Any,
    k: int,
    *,
    epsilon: float,
    delta: float,
    rng: Any,
    block: int,
    v_max: float | None,
    check_finite: bool,
    kind: str,
    owner: str,
) -> MIPSResult:
    V = check_vectors(V, owner, check_finite=check_finite)
    n, dim = V.shape
    k = check_k(k, n, owner)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    block = check_int(block, "block", owner=owner, low=1, high=dim)
    qv = check_query(q, dim, owner, dtype=V.dtype)
    gen = check_rng(rng)
    t_bound = 0.0
    if v_max is None:
        t0 = time.perf_counter()
        v_max = float(np.abs(V).max())
        t_bound = time.perf_counter() - t0
    else:
        v_max = check_float(v_max, "v_max", owner=owner, low=0.0)
    q_max = float(np.abs(qv).max())
    n_blocks = math.ceil(dim / block)
    perm = gen.permutation(n_blocks)
    reader = _Reader(V, qv, kind)
    coords = np.zeros(n, dtype=np.int64)

    def pull(arms: NDArray[np.intp], start: int, stop: int) -> NDArray[np.float64]:
        blocks = np.sort(perm[start:stop])
        if block == 1:
            sums = reader.gather(arms, blocks)
            coords[arms] += blocks.size
            return sums
        runs = _runs(blocks, block, dim)
        coords[arms] += sum(b - a for a, b in runs)
        return reader.runs(arms, runs)

    out = bounded_me(pull, n, k, n_blocks, epsilon=epsilon, delta=delta, value_range=1.0, rng=gen)
    sel = out.arms
    # Estimated full score: mean over the coordinates read, times N.
    raw = out.means * out.pulls[sel]  # raw partial sums of the returned arms
    est = np.where(coords[sel] > 0, raw / np.maximum(coords[sel], 1) * dim, 0.0)
    width = 2.0 * v_max * q_max if kind == "ip" else (v_max + q_max) ** 2
    return MIPSResult(
        sel.astype(np.intp),
        est.astype(np.float64),
        int(reader.products),
        {
            "rounds": len(out.schedule),
            "t": [r.t for r in out.schedule],
            "block": block,
            "list_size": n_blocks,
            "reward_width": width,
            "v_max": v_max,
            "bound_seconds": t_bound,
            "fraction_read": reader.products / float(n * dim),
        },
    )


def mips_top_k(
    V: Any,
    q: Any,
    k: int = 1,
    *,
    epsilon: float = 0.1,
    delta: float = 0.05,
    rng: Any = None,
    block: int = 1,
    v_max: float | None = None,
    check_finite: bool = True,
) -> MIPSResult:
    """Approximate top-k maximum inner product search by BoundedME (no preprocessing).

    Parameters
    ----------
    V : array of shape (n, N)
        The vectors (float32 kept).
    q : array of shape (N,)
        The query.
    k : int, default 1
        Number of vectors to return, in ``[1, n]``.
    epsilon : float, default 0.1
        Suboptimality allowed, > 0, in scaled units: rewards ``v_ij q_j`` are mapped to
        ``[0, 1]`` through ``[-v_max max|q|, v_max max|q|]``, so the guarantee reads
        ``(q^T v*_(k) - q^T v_hat_(k)) / (N 2 v_max max|q|) < epsilon`` (k-th best values).
    delta : float, default 0.05
        Failure probability in (0, 1).
    rng : None, int, SeedSequence or Generator
        Draws the coordinate permutation and breaks ties.
    block : int, default 1
        Sampling unit (see the module docstring); 1 is the paper's coordinate sampling.
    v_max : float, optional
        A known bound on ``|V_ij|``. When omitted it is computed (one pass over V, timed
        in ``info["bound_seconds"]``).
    check_finite : bool, default True
        Check V for NaN / inf (a full pass over V).

    Returns
    -------
    MIPSResult
        ``scores`` are estimated inner products (exact when a row was read entirely).

    Raises
    ------
    InvalidParameterError
        k outside [1, n], epsilon <= 0, delta outside (0, 1), non-finite V or q, a query
        of the wrong dimension.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V = rng.standard_normal((50, 400))
    >>> V[7] += 1.0
    >>> q = np.ones(400)
    >>> mips_top_k(V, q, 1, epsilon=0.05, delta=0.05, rng=1).indices.tolist()
    [7]
    """
    return _search(V, q, k, epsilon=epsilon, delta=delta, rng=rng, block=block, v_max=v_max,
                   check_finite=check_finite, kind="ip", owner="mips_top_k")


def nn_top_k(
    V: Any,
    q: Any,
    k: int = 1,
    *,
    epsilon: float = 0.1,
    delta: float = 0.05,
    rng: Any = None,
    block: int = 1,
    v_max: float | None = None,
    check_finite: bool = True,
) -> MIPSResult:
    """Approximate k-nearest-neighbour search by BoundedME, ``f(i, j) = -(q_j - v_ij)^2``.

    Same parameters as :func:`mips_top_k`; rewards are scaled through
    ``[-(v_max + max|q|)^2, 0]``. ``scores`` are minus estimated squared distances.

    Examples
    --------
    >>> V = np.zeros((20, 100)); V[3] = 1.0
    >>> nn_top_k(V, np.ones(100), 1, epsilon=0.05, rng=0).indices.tolist()
    [3]
    """
    return _search(V, q, k, epsilon=epsilon, delta=delta, rng=rng, block=block, v_max=v_max,
                   check_finite=check_finite, kind="nn", owner="nn_top_k")
