"""MIPS (and nearest-neighbour search) as a MAB-BP problem solved by BoundedME.

Liu, Wu and Mozafari (AAAI 2019): arm ``i`` is the vector ``v_i``; its reward list is
``R_i = {f(i, j) : j = 1..N}`` with ``f(i, j) = v_i^(j) q^(j)`` for MIPS and
``f(i, j) = -(q^(j) - v_i^(j))^2`` for nearest-neighbour search; the list mean is
``q^T v_i / N`` (resp. ``-||q - v_i||^2 / N``). Rewards are scaled into ``[0, 1]`` by
their range: with ``h = max|V_ij| max|q|``, ``v_ij q_j`` lies in ``[-h, h]`` and
``(q_j - v_ij)^2`` in ``[0, (max|V_ij| + max|q|)^2]``.

**The guarantee, on its own scale.** With probability at least ``1 - delta`` the k-th
best inner product among the returned vectors is within ``epsilon N w`` of the true k-th
best, where ``w`` is the reward width (``2 max|V_ij| max|q|`` for MIPS): ``epsilon`` is a
fraction of the scaled range ``[0, 1]`` and Lemma 1 needs ``0 < epsilon < 1``; from 1 on
the statement is empty (every answer satisfies it) and ``epsilon`` is only a knob setting
how much is read. Every result says which (``informative``). The schedule, and so what is
read, does not depend on ``w``: ``max|V_ij|`` is needed only to state the guarantee in
inner-product units. A default call does not scan ``V`` for it (``info["v_max"]`` is
None and the guarantee is stated in scaled units); a bound ``v_max`` the caller states is
checked, at no extra reading, against every partial sum read (a necessary condition:
``|sum_j v_ij q_j| <= v_max sum_j |q_j|``), and :class:`BoundedMEIndex` computes and
checks it once, as preprocessing.

**Random reading order.** Lemma 1 needs every list read in a uniformly random order. The
search draws its own: one random permutation of the coordinates (or blocks) shared by all
vectors (each vector's draws are then a uniform sequence without replacement, which is all
Lemma 1 and the union / Markov argument of Lemma 4 use; sharing also makes two vectors be
compared on the same coordinates). Data are never trusted to be in random order.

**Reading at memory speed** (see :mod:`combex.mips._cost` for the cost model). Exact
search streams V once at the bandwidth limit; BoundedME wins only by reading fewer bytes.

* :class:`BoundedMEIndex` permutes the coordinates once (preprocessing, timed): round
  ``l`` then reads one contiguous segment of each surviving row -- streaming, no copy, no
  pass over eliminated rows (compiled row loop, :mod:`combex.mips._kernels`; with numba
  the whole schedule, reads and eliminations, is one compiled call). Each query
  also draws a random cyclic offset into the permuted order, so different queries read
  different coordinates (each query's guarantee holds for its own draw; the permutation is
  shared, so failures of different queries are not independent).
* Raw row-major ``V``: single coordinates are scattered (a random 25 % of a row touches
  nearly every cache line), so coordinate sampling moves as many bytes as exact search
  at many times its cost; ``block=B`` reads contiguous blocks, but block sums span ``B``
  times the per-coordinate range, so at an informative epsilon the schedule reads nearly
  all of the short block list. The cost model then says exact search is faster and
  ``mips_top_k`` (``method="auto"``) runs it and says so.
* Raw dimension-major ``V`` (Fortran order): coordinate ``j`` is a contiguous row of
  ``V^T``; whole coordinate rows are streamed while more than ``n/8`` vectors survive,
  the survivors' entries gathered afterwards.

Block mode: list items are sums over ``ceil(N/B)`` contiguous blocks of ``B``
coordinates (zero-padded virtually to a multiple of ``B``), still a MAB-BP instance; the
schedule runs at ``epsilon N / (B ceil(N/B))`` so that ``epsilon`` keeps its meaning on
the per-coordinate scale (:func:`~combex.mips._cost.schedule_epsilon`).
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_probability, check_rng, param_error
from ..environments._mips_instances import max_abs_entry
from ..exceptions import InvalidParameterError
from . import _kernels
from ._bounded_me import _schedule, bounded_me
from ._common import MIPSResult, check_finite_scores, check_k, check_query, check_vectors
from ._cost import LINE_BYTES, ReadCost, _read_cost, columns_stream, schedule_epsilon
from ._exact import _exact_search

__all__ = ["mips_top_k", "nn_top_k", "BoundedMEIndex"]

_AUTO_BLOCKS = (1, 16, 64, 256, 1024, 4096)
_CHUNK_BYTES = 1 << 24  # row chunks of the one-time permutation


# ---------------------------------------------------------------------- index
class BoundedMEIndex:
    """Vectors prepared once for bandit search: a random coordinate order laid out
    contiguously, and the bound ``max |V_ij|``.

    Preprocessing (timed in :attr:`preprocess_seconds` and reported in every result):
    one pass for the bound and the finiteness check, and the permutation of the
    coordinates. Queries then read each surviving vector's next coordinates as one
    contiguous segment (see the module docstring); pass the index to
    :func:`mips_top_k` / :func:`nn_top_k` in place of ``V``. With numba, the first query
    with given argument values (``k``, ``epsilon``, ``delta``, ``method``, ...) checks
    them and plans the query (the cost model's choice, the schedule); later queries with
    the same values reuse the plan and run as one compiled call (copies and pickles start
    without plans).

    Parameters
    ----------
    V : array of shape (n, N)
        The vectors (float32 kept; other types converted to float64).
    permute : {"copy", "inplace", "none"}, default "copy"
        ``"copy"`` stores a row-major copy with permuted columns (memory of a second V);
        ``"inplace"`` permutes the columns of ``V`` itself (row-major float32/float64
        input; ``V`` is modified: its rows keep their order, their coordinates do not);
        ``"none"`` keeps ``V`` as given (only the bound is cached; queries read it like a
        raw array).
    v_max : float, optional
        A bound on ``|V_ij|``. Checked against the data in the preprocessing pass
        (refused when smaller than ``max |V_ij|``); computed there when omitted.
    check_finite : bool, default True
        Refuse non-finite entries (checked in the same pass). With ``False`` and a stated
        ``v_max`` no pass is made; the bound is then checked only through the partial sums
        each query reads.
    rng : None, int, SeedSequence or Generator
        Draws the permutation.

    Attributes
    ----------
    V : array
        The stored vectors (permuted coordinates unless ``permute="none"``).
    perm : int array of shape (N,) or None
        ``V[:, j]`` holds original coordinate ``perm[j]``.
    v_max : float
    layout : {"permuted", "rows", "columns"}
    bound_seconds, permute_seconds, preprocess_seconds : float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V = rng.standard_normal((200, 5_000)).astype(np.float32)
    >>> V[17] += 0.2
    >>> index = BoundedMEIndex(V, rng=0)
    >>> res = mips_top_k(index, np.ones(5_000, np.float32), 1, epsilon=0.1, rng=1)
    >>> res.indices.tolist(), res.informative, res.info["layout"]
    ([17], True, 'permuted')
    """

    def __init__(
        self,
        V: Any,
        *,
        permute: str = "copy",
        v_max: float | None = None,
        check_finite: bool = True,
        rng: Any = None,
    ) -> None:
        owner = "BoundedMEIndex"
        permute = check_choice(permute, "permute", ["copy", "inplace", "none"], owner=owner)
        V = check_vectors(V, owner, check_finite=False)
        gen = check_rng(rng)
        stated = None if v_max is None else check_float(v_max, "v_max", owner=owner, low=0.0)
        t0 = time.perf_counter()
        self.bound_checked = check_finite or stated is None
        if self.bound_checked:
            found = max_abs_entry(V, owner)
            if stated is not None and stated < found:
                raise param_error("v_max", owner, f"at least max |V_ij| = {found!r} (a smaller bound voids the "
                                  "guarantee's stated width)", stated)
            self.v_max = found if stated is None else stated
        else:
            self.v_max = stated
        self.bound_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        n, dim = V.shape
        if permute == "none":
            self.perm = None
            self.V = V
        else:
            perm = gen.permutation(dim)
            if permute == "inplace":
                if not V.flags.c_contiguous or not V.flags.writeable:
                    raise param_error("V", owner, "a writeable row-major (C-contiguous) array when "
                                      "permute='inplace'", f"an array with flags {V.flags}")
                step = max(1, _CHUNK_BYTES // (dim * V.itemsize))
                for r0 in range(0, n, step):
                    V[r0 : r0 + step] = V[r0 : r0 + step][:, perm]
                self.V = V
            else:
                out = np.empty((n, dim), dtype=V.dtype)
                step = max(1, _CHUNK_BYTES // (dim * V.itemsize))
                for r0 in range(0, n, step):
                    out[r0 : r0 + step] = V[r0 : r0 + step][:, perm]
                self.V = out
            self.perm = perm
        self.permute_seconds = time.perf_counter() - t0
        self.layout = "permuted" if self.perm is not None else _layout(self.V)
        self.n, self.dim = n, dim
        # Query plans by argument values (see _index_query): validated once, then reused.
        self._plans: dict[Any, _Plan] = {}

    def __getstate__(self) -> dict[str, Any]:
        # Plans hold the address offset of V within a cache line, which a copy need not
        # share: copies and pickles start without plans.
        state = dict(self.__dict__)
        state["_plans"] = {}
        return state

    @property
    def preprocess_seconds(self) -> float:
        """Bound pass plus permutation, in seconds."""
        return self.bound_seconds + self.permute_seconds

    def query(self, q: Any, k: int = 1, **kwargs: Any) -> MIPSResult:
        """:func:`mips_top_k` on this index (same keyword arguments)."""
        return mips_top_k(self, q, k, **kwargs)

    def __repr__(self) -> str:
        return (f"BoundedMEIndex(n={self.n}, dim={self.dim}, layout={self.layout!r}, v_max={self.v_max:g}, "
                f"preprocess_seconds={self.preprocess_seconds:.3f})")


def _layout(V: NDArray[Any]) -> str:
    """``"rows"`` when each row is contiguous, ``"columns"`` when each column is (Fortran
    order), ``"strided"`` otherwise (read only by exact search)."""
    if V.strides[1] == V.itemsize:
        return "rows"
    if V.strides[0] == V.itemsize:
        return "columns"
    return "strided"


# ---------------------------------------------------------------------- reader
class _Reader:
    """Partial sums of ``f(i, j)`` over coordinate sets, with counts of the products
    evaluated and of the 64-byte lines of V touched (the measured read fraction)."""

    def __init__(self, data: NDArray[Any], q: NDArray[Any], nn: bool, layout: str, v_max: float | None) -> None:
        self.data, self.q, self.nn, self.layout, self.v_max = data, q, nn, layout, v_max
        self.excess = 0.0  # sum of max(|V_ij| - v_max, 0) over the entries read (v_max given)
        self.n = data.shape[0]
        self.s = data.itemsize
        self.compiled = _kernels.HAVE_NUMBA and _USE_COMPILED
        self.products = 0
        self.lines = 0
        self.width = 0  # coordinates of the last run read
        base = data.ctypes.data
        if layout == "columns":
            self.VT = data.T  # C-contiguous rows = coordinates
            self.pitch = self.VT.strides[0]
        else:
            self.VT = None
            self.pitch = data.strides[0]
        self.base = base
        # Row start offsets within a line repeat with this period in the row index.
        self.period = LINE_BYTES // math.gcd(int(self.pitch), LINE_BYTES)

    # -- byte accounting (exact lines from addresses, grouped by offset modulo a line)
    def _offset_classes(self, idx: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Distinct start offsets (within a line) of the rows ``idx`` and their counts:
        row ``i`` starts at ``(base + i pitch) % 64``, periodic in ``i`` with period
        ``64 / gcd(pitch, 64)``."""
        period = self.period
        counts = np.bincount(idx % period, minlength=period) if period > 1 else np.array([idx.size])
        vals = (self.base + np.arange(period) * self.pitch) % LINE_BYTES
        keep = counts > 0
        return vals[keep], counts[keep]

    def _count_runs(self, rows: NDArray[np.int64], starts: NDArray[np.int64], stops: NDArray[np.int64]) -> None:
        s = self.s
        if self.period == 1 and starts.size <= 2:  # the permuted layout's 1-2 runs: scalars
            o = self.base % LINE_BYTES
            per = sum((o + int(b) * s - 1) // LINE_BYTES - (o + int(a) * s) // LINE_BYTES + 1
                      for a, b in zip(starts.tolist(), stops.tolist()))
            self.lines += rows.size * per
            return
        vals, counts = self._offset_classes(rows)
        first = (vals[:, None] + starts[None, :] * s) // LINE_BYTES
        last = (vals[:, None] + stops[None, :] * s - 1) // LINE_BYTES
        self.lines += int(((last - first + 1).sum(axis=1) * counts).sum())

    def _count_gather(self, rows: NDArray[np.int64], coords: NDArray[np.int64]) -> None:
        vals, counts = self._offset_classes(rows)
        for o, c in zip(vals.tolist(), counts.tolist()):
            ln = (o + coords * self.s) // LINE_BYTES
            self.lines += c * (1 + int(np.count_nonzero(np.diff(ln))))

    def _count_columns(self, coords: NDArray[np.int64], rows: NDArray[np.int64] | None) -> None:
        vals, counts = self._offset_classes(coords)
        s = self.s
        for o, c in zip(vals.tolist(), counts.tolist()):
            if rows is None:
                per = (o + self.n * s - 1) // LINE_BYTES + 1
            else:
                ln = (o + rows * s) // LINE_BYTES
                per = 1 + int(np.count_nonzero(np.diff(ln)))
            self.lines += c * per

    # -- reads
    def runs(self, rows: NDArray[np.int64], starts: NDArray[np.int64], stops: NDArray[np.int64]) -> NDArray[np.float64]:
        out = np.zeros(rows.size, dtype=np.float64)
        self.excess += _kernels.rows_runs(self.data, rows, starts, stops, self.q, out, nn=self.nn,
                                          compiled=self.compiled, v_max=self.v_max)
        self.width = int((stops - starts).sum())
        self.products += rows.size * self.width
        self._count_runs(rows, starts, stops)
        return out

    def gather(self, rows: NDArray[np.int64], coords: NDArray[np.int64]) -> NDArray[np.float64]:
        out = np.zeros(rows.size, dtype=np.float64)
        if self.layout == "columns":
            assert self.VT is not None
            if columns_stream(rows.size, self.n):
                full = np.zeros(self.n, dtype=np.float64)
                every = np.arange(self.n, dtype=np.int64)
                self.excess += _kernels.cols_gather(self.VT, coords, every, self.q, full, nn=self.nn,
                                                    compiled=self.compiled, v_max=self.v_max)
                self.products += self.n * coords.size
                self._count_columns(coords, None)
                return full if rows.size == self.n else full[rows]
            self.excess += _kernels.cols_gather(self.VT, coords, rows, self.q, out, nn=self.nn,
                                                compiled=self.compiled, v_max=self.v_max)
            self._count_columns(coords, rows)
        else:
            self.excess += _kernels.rows_gather(self.data, rows, coords, self.q, out, nn=self.nn,
                                                compiled=self.compiled, v_max=self.v_max)
            self._count_gather(rows, coords)
        self.products += rows.size * coords.size
        return out


# Tests switch this off to compare the numpy read path with the compiled one.
_USE_COMPILED = True


def _merge_runs(blocks: NDArray[np.int64], block: int, dim: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Sorted block ids -> contiguous coordinate intervals [start, stop)."""
    if blocks.size == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e
    br = np.flatnonzero(np.diff(blocks) != 1)
    starts = np.r_[blocks[0], blocks[br + 1]] * block
    stops = np.minimum((np.r_[blocks[br], blocks[-1]] + 1) * block, dim)
    return starts.astype(np.int64), stops.astype(np.int64)


def _wrap_runs(a: int, b: int, shift: int, dim: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Positions [a, b) of the order shifted by ``shift`` (mod dim) as 1-2 runs."""
    s, e = (a + shift) % dim, (b + shift) % dim
    if b - a >= dim:
        return np.array([0], np.int64), np.array([dim], np.int64)
    if s < e or e == 0:
        return np.array([s], np.int64), np.array([e if e else dim], np.int64)
    return np.array([s, 0], np.int64), np.array([dim, e], np.int64)


# ---------------------------------------------------------------------- search
def _choose(
    layout: str, n: int, dim: int, k: int, epsilon: float, delta: float, block: int | None,
    itemsize: int, offset: int, method: str,
) -> tuple[str, ReadCost | None, str]:
    """(method to run, its cost model or None, why) following the cost model."""
    if layout == "strided":
        if method == "bandit":
            raise InvalidParameterError(
                "The 'V' parameter of mips_top_k must have contiguous rows or columns for "
                "method='bandit' (got a strided view); pass a contiguous array or a BoundedMEIndex."
            )
        return "exact", None, "V has neither contiguous rows nor contiguous columns"
    if block is not None:
        blocks = [block]
    elif layout == "rows":
        blocks = [b for b in _AUTO_BLOCKS if b <= dim]
    else:
        blocks = [1]
    # _search has checked every argument: the cached model without re-checking them.
    costs = [_read_cost(int(n), int(dim), int(k), float(epsilon), float(delta), int(b), layout, int(itemsize),
                        int(offset)) for b in blocks]
    best = min(costs, key=lambda c: c.time_fraction)
    if method == "bandit":
        return "bandit", best, "method='bandit'"
    if method == "exact":
        return "exact", best, "method='exact'"
    if best.exact_faster:
        return "exact", best, (f"the cost model predicts exact search is faster ({best.summary()}; exact "
                               "search reads 100% at the bandwidth limit)")
    return "bandit", best, best.summary()


def _search(
    V: Any, q: Any, k: int, *, epsilon: float, delta: float, rng: Any, block: int | None,
    v_max: float | None, check_finite: bool, method: str, nn: bool, owner: str, _shift: int | None = None,
) -> MIPSResult:
    index = V if isinstance(V, BoundedMEIndex) else None
    if index is not None and _shift is None:
        res = _index_query(index, q, k, epsilon, delta, rng, block, v_max, check_finite, method, nn, owner)
        if res is not None:
            return res
    if index is not None:
        if v_max is not None:
            raise param_error("v_max", owner, "None when V is a BoundedMEIndex (its bound is computed or "
                              "stated at construction)", v_max)
        data, layout, v_max, pre = index.V, index.layout, index.v_max, index.preprocess_seconds
    else:
        data = check_vectors(V, owner, check_finite=False)
        layout, pre = _layout(data), 0.0
        if v_max is not None:
            v_max = check_float(v_max, "v_max", owner=owner, low=0.0)
    n, dim = data.shape
    k = check_k(k, n, owner)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    if block is not None:
        block = check_int(block, "block", owner=owner, low=1, high=1 if layout == "permuted" else dim)
    method = check_choice(method, "method", ["auto", "bandit", "exact"], owner=owner)
    qv = check_query(q, dim, owner, dtype=data.dtype)
    gen = check_rng(rng)
    q_max = float(np.abs(qv).max())
    if nn:
        width = None if v_max is None else (v_max + q_max) ** 2
    else:
        width = None if v_max is None else 2.0 * v_max * q_max
    run, cost, why = _choose(layout, n, dim, k, epsilon, delta, block, data.itemsize,
                             data.ctypes.data % LINE_BYTES, method)
    info: dict[str, Any] = {
        "method": run,
        "reason": why,
        "layout": layout,
        "v_max": v_max,
        "reward_width": width,
        "preprocess_seconds": pre,
        "model_fraction_read": None if cost is None else cost.fraction_read,
        "model_time_fraction": None if cost is None else cost.time_fraction,
    }
    if run == "exact":
        return _exact(data, qv, k, index, nn, check_finite, owner, info)
    assert cost is not None
    blk = cost.block
    n_items = -(-dim // blk)
    eps_s = schedule_epsilon(epsilon, dim, blk)
    # The stored coordinate order: an index holds V[:, perm], so q is read as q[perm].
    stored_perm = None if index is None else index.perm
    qs = qv if stored_perm is None else qv[stored_perm]
    # A stated bound that nothing has checked yet is checked against every entry read.
    track = v_max is not None and (index is None or not index.bound_checked)
    reader = _Reader(data, qs, nn, layout, v_max if track else None)
    read = [0]  # coordinates read so far by every survivor (all survivors read each round)
    if layout == "permuted":
        # (_index_query hands over the offset it drew when it falls back to this path)
        shift = int(gen.integers(dim)) if _shift is None else _shift
        perm = None
    else:
        shift = 0
        perm = gen.permutation(n_items).astype(np.int64)

    def pull(arms: NDArray[np.intp], start: int, stop: int) -> NDArray[np.float64]:
        rows = arms.astype(np.int64, copy=False)
        if layout == "permuted":
            starts, stops = _wrap_runs(start, stop, shift, dim)
            sums = reader.runs(rows, starts, stops)
            read_idx: Any = (starts, stops)
        else:
            drawn = np.sort(perm[start:stop])
            if blk == 1:
                sums = reader.gather(rows, drawn)
                read_idx = drawn
            elif layout == "columns":
                cols = (drawn[:, None] * blk + np.arange(blk)[None, :]).ravel()
                cols = cols[cols < dim]
                sums = reader.gather(rows, cols)
                read_idx = cols
            else:
                starts, stops = _merge_runs(drawn, blk, dim)
                sums = reader.runs(rows, starts, stops)
                read_idx = (starts, stops)
        read[0] += reader.width if isinstance(read_idx, tuple) else read_idx.size
        _check_read(sums, rows, read_idx, data, stored_perm, reader.excess, v_max, check_finite, owner)
        return sums

    fast = None
    if layout == "permuted" and reader.compiled and reader.period == 1 and _USE_SCHEDULE_LOOP:
        fast = _permuted_fast(reader, data, qs, n, k, n_items, eps_s, delta, shift, nn, v_max if track else None)
    if fast is not None:
        sel, raw, schedule = fast
        read[0] = reader.width
    else:
        out = bounded_me(pull, n, k, n_items, epsilon=eps_s, delta=delta, value_range=1.0, rng=gen,
                         _compiled=reader.compiled)
        sel, schedule = out.arms, out.schedule
        raw = out.means * out.pulls[sel]  # raw partial sums of the returned arms
    # Estimated full score: mean over the coordinates read, times N.
    est = raw / read[0] * dim if read[0] > 0 else np.zeros(sel.size)
    v_bytes = n * dim * data.itemsize
    info.update({
        "block": blk,
        "list_size": n_items,
        "schedule_epsilon": eps_s,
        "rounds": len(schedule),
        "t": [r.t for r in schedule],
        "fraction_read": reader.lines * LINE_BYTES / v_bytes,
        "fraction_products": reader.products / float(n * dim),
        "compiled": reader.compiled,
    })
    return _result(sel.astype(np.intp), est.astype(np.float64), int(reader.products), epsilon, delta, width,
                   dim, pre, info)


# Tests switch this off to compare the one-call schedule with the round-by-round path.
_USE_SCHEDULE_LOOP = True


@functools.lru_cache(maxsize=256)
def _schedule_arrays(
    n: int, k: int, n_items: int, eps_s: float, delta: float
) -> tuple[tuple[Any, ...], NDArray[np.int64], NDArray[np.int64]]:
    """The schedule and its ``t`` and ``n_removed`` as (read-only) arrays, cached."""
    schedule = _schedule(n, k, n_items, eps_s, delta, 1.0)
    ts = np.array([r.t for r in schedule], dtype=np.int64)
    n_rem = np.array([r.n_removed for r in schedule], dtype=np.int64)
    ts.setflags(write=False)
    n_rem.setflags(write=False)
    return schedule, ts, n_rem


def _permuted_fast(
    reader: _Reader, data: NDArray[Any], qs: NDArray[Any], n: int, k: int, n_items: int, eps_s: float,
    delta: float, shift: int, nn: bool, v_max: float | None,
) -> tuple[NDArray[np.intp], NDArray[np.float64], Any] | None:
    """BoundedME's whole schedule on an index in one compiled call
    (:func:`combex.mips._kernels.permuted_schedule`): the same reads, sums, eliminations
    and answer as the round-by-round path, without its per-round Python. None
    when that path must run instead (a non-finite sum, a stated bound exceeded, a tie
    needing a random draw: it then reports or draws exactly as always). Fills the
    reader's counts as the round-by-round reads would."""
    schedule, ts, n_rem = _schedule_arrays(n, k, n_items, eps_s, delta)
    res = _kernels.permuted_schedule(data, qs, n, ts, n_rem, shift, nn=nn, v_max=v_max)
    if res is None or res[2] > 0.0:
        return None
    sums, active, _ = res
    dim, s, o = data.shape[1], reader.s, reader.base % LINE_BYTES

    def lines(a: int, b: int) -> int:  # 64-byte lines of the run [a, b) of a row
        return (o + b * s - 1) // LINE_BYTES - (o + a * s) // LINE_BYTES + 1

    t_prev = 0
    for rnd in schedule:
        if rnd.t > t_prev:
            # the runs of _wrap_runs(t_prev, rnd.t, shift, dim), in scalars
            a, b = (t_prev + shift) % dim, (rnd.t + shift) % dim
            if rnd.t - t_prev >= dim:
                per = lines(0, dim)
            elif a < b or b == 0:
                per = lines(a, b if b else dim)
            else:
                per = lines(a, dim) + lines(0, b)
            reader.lines += rnd.n_arms * per
            reader.products += rnd.n_arms * (rnd.t - t_prev)
        t_prev = rnd.t
    reader.width = t_prev  # coordinates read by each survivor
    # As bounded_me: survivors ranked by mean (pulls = t_prev each), best first, stably.
    pulls = float(t_prev)
    means = sums[active] / pulls if t_prev > 0 else np.zeros(active.size)
    order = np.argsort(-means, kind="stable")
    return active[order], means[order] * pulls if t_prev > 0 else np.zeros(active.size), list(schedule)


# Tests switch this off to compare the planned query with the general path.
_USE_QUERY_PLAN = True
_MAX_PLANS = 64


class _Plan:
    """What a query on an index needs besides ``q`` and the random offset, for one set of
    argument values: the checked arguments, the cost model's choice, the schedule as
    arrays, the products it evaluates and the constant part of ``info``."""

    __slots__ = ("general", "k", "epsilon", "delta", "ts", "n_rem", "n_arms", "products", "info", "t", "kernel",
                 "args")

    def __init__(self, general: bool, **kw: Any) -> None:
        self.general = general
        for name in self.__slots__[1:]:
            setattr(self, name, kw.get(name))


def _make_plan(
    index: BoundedMEIndex, k: Any, epsilon: Any, delta: Any, block: Any, method: Any, nn: bool, owner: str,
) -> _Plan:
    """Check the arguments as :func:`_search` does (raising the same errors) and plan the
    query; ``general=True`` when the general path must run it (exact search, a layout
    other than the permuted one, rows not a whole number of lines apart)."""
    data = index.V
    n, dim = data.shape
    k = check_k(k, n, owner)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    if block is not None:
        block = check_int(block, "block", owner=owner, low=1, high=1 if index.layout == "permuted" else dim)
    method = check_choice(method, "method", ["auto", "bandit", "exact"], owner=owner)
    if index.layout != "permuted" or data.strides[0] % LINE_BYTES != 0:
        return _Plan(True)
    run, cost, why = _choose(index.layout, n, dim, k, epsilon, delta, block, data.itemsize,
                             data.ctypes.data % LINE_BYTES, method)
    if run != "bandit":
        return _Plan(True)
    assert cost is not None
    eps_s = schedule_epsilon(epsilon, dim, 1)
    schedule, ts, n_rem = _schedule_arrays(n, k, dim, eps_s, delta)
    n_arms = np.array([r.n_arms for r in schedule], dtype=np.int64)
    t_prev, products = 0, 0
    for r in schedule:
        products += r.n_arms * max(r.t - t_prev, 0)
        t_prev = max(t_prev, r.t)
    info = {  # the general path's keys, in its order (None: filled per query)
        "method": run, "reason": why, "layout": index.layout, "v_max": index.v_max, "reward_width": None,
        "preprocess_seconds": None, "model_fraction_read": cost.fraction_read,
        "model_time_fraction": cost.time_fraction, "block": 1, "list_size": dim, "schedule_epsilon": eps_s,
        "rounds": len(schedule), "t": None, "fraction_read": None,
        "fraction_products": products / float(n * dim), "compiled": True,
    }
    track = not index.bound_checked  # a stated bound nothing has checked: checked through the reads
    vm = data.dtype.type(index.v_max if track else 0.0)
    sched = np.stack([ts, n_rem, n_arms]).astype(np.int64)
    iargs = np.array([nn, track, data.ctypes.data % LINE_BYTES, data.itemsize], dtype=np.int64)
    sched.setflags(write=False)
    iargs.setflags(write=False)
    return _Plan(False, k=k, epsilon=epsilon, delta=delta, ts=ts, n_rem=n_rem, n_arms=n_arms, products=products,
                 info=info, t=ts.tolist(), kernel=_kernels.index_query_kernel(), args=(sched, iargs, vm))


def _index_query(
    index: BoundedMEIndex, q: Any, k: Any, epsilon: Any, delta: Any, rng: Any, block: Any, v_max: Any,
    check_finite: bool, method: Any, nn: bool, owner: str,
) -> MIPSResult | None:
    """A query on a permuted index with numba, with the per-query work cut to what depends
    on ``q`` and the random offset.

    Profile that motivated it (2,000 x 20,000 float32 index, epsilon 0.3, each query right
    after an exact search, as in the benchmark): the schedule call took 1.72 ms, the rest of
    the query 0.46 ms -- about twenty Python and numpy steps (argument checks, the cost
    model, ``q[perm]``, ``max |q|``, the line count, the ranking, the result), each 10-110 us
    when it runs after a 10 ms pass over V (warm: 1-8 us). Here the argument checks, the
    cost model's choice, the schedule and the constant part of ``info`` are computed once
    per set of argument values and kept on the index (a plan; arguments are keyed with
    their types, so only values that were checked before reuse one), and the rest is one
    compiled call (:func:`combex.mips._kernels.index_query`): the check of ``q``, ``q`` in
    the stored order, the schedule, the line count and the ranking. Same answers, scores
    (bit for bit), counts and random stream as the general path
    (``tests/test_mips.py::test_planned_index_query_equals_the_general_path``). None when
    the general path must run (a stated ``v_max``, which an index refuses; exact search;
    no numba); after the offset is drawn, a non-finite sum or entry of ``q``, a bound
    exceeded or a tie needing a random draw run the general path with the same generator
    and offset, which raises or draws exactly as it always does.
    """
    if v_max is not None or not (_USE_QUERY_PLAN and _USE_SCHEDULE_LOOP and _USE_COMPILED and _kernels.HAVE_NUMBA):
        return None
    try:
        key = (type(k), k, type(epsilon), epsilon, type(delta), delta, type(block), block, type(method), method,
               bool(nn))
        plan = index._plans.get(key)
    except TypeError:  # unhashable arguments: the general path checks them
        return None
    if plan is None:
        plan = _make_plan(index, k, epsilon, delta, block, method, nn, owner)
        if len(index._plans) >= _MAX_PLANS:
            index._plans.clear()
        index._plans[key] = plan
    if plan.general:
        return None
    data = index.V
    n, dim = data.shape
    if type(q) is np.ndarray and q.dtype == data.dtype and q.shape == (dim,) and q.flags.c_contiguous:
        qv = q
    else:
        qv = np.ascontiguousarray(check_query(q, dim, owner, dtype=data.dtype))
    gen = check_rng(rng)
    shift = int(gen.integers(dim))
    v_max = index.v_max
    status, sel, est, lines, q_max, excess = plan.kernel(data, qv, index.perm, *plan.args, shift)
    if status != 0 or excess > 0.0:
        return _search(index, q, k, epsilon=epsilon, delta=delta, rng=gen, block=block, v_max=None,
                       check_finite=check_finite, method=method, nn=nn, owner=owner, _shift=shift)
    info = dict(plan.info)
    info["reward_width"] = width = (v_max + q_max) ** 2 if nn else 2.0 * v_max * q_max
    info["preprocess_seconds"] = pre = index.preprocess_seconds
    info["t"] = list(plan.t)
    info["fraction_read"] = lines * LINE_BYTES / (n * dim * data.itemsize)
    return _result(sel, est, plan.products, plan.epsilon, plan.delta, width, dim, pre, info)


def _check_read(
    sums: NDArray[np.float64], rows: NDArray[np.int64], read_idx: Any, data: NDArray[Any],
    perm: NDArray[Any] | None, excess: float, v_max: float | None, check_finite: bool, owner: str,
) -> None:
    """Refuse non-finite entries among those just read (they make their sums non-finite)
    and a stated ``v_max`` below an entry read; both checks read nothing more."""
    if check_finite and not math.isfinite(float(sums.sum())) and not np.all(np.isfinite(sums)):
        cols = (np.concatenate([np.arange(a, b) for a, b in zip(*read_idx)])
                if isinstance(read_idx, tuple) else read_idx)
        check_finite_scores(sums, data, owner, rows=rows, cols=cols, perm=perm)
    if v_max is not None and excess > 0.0:
        # Name the largest entry of this round's reads (this pass only runs on the error).
        cols = (np.concatenate([np.arange(a, b) for a, b in zip(*read_idx)])
                if isinstance(read_idx, tuple) else read_idx)
        sub = np.abs(data[np.ix_(rows, cols)])
        r, c = np.unravel_index(int(np.argmax(sub)), sub.shape)
        j = int(cols[c]) if perm is None else int(perm[cols[c]])
        raise param_error("v_max", owner, f"a bound on |V_ij|: an entry read exceeds it, |V[{int(rows[r])}, {j}]| = "
                          f"{float(sub[r, c])!r}", v_max)


def _exact(
    data: NDArray[Any], qv: NDArray[Any], k: int, index: BoundedMEIndex | None, nn: bool, check_finite: bool,
    owner: str, info: dict[str, Any],
) -> MIPSResult:
    """Exact search on the stored data (one BLAS pass), with the same checks."""
    # An index stores V[:, perm]: its rows' inner products with q[perm] are the originals.
    q_eff = qv if index is None or index.perm is None else qv[index.perm]
    res = _exact_search(data, q_eff, k, nn=nn, check_finite=check_finite, owner=owner)
    # Exact answers carry epsilon = 0: no reward width enters their statement.
    info["reward_width"] = None
    dim = data.shape[1]
    info.update({"block": None, "rounds": 0, "fraction_read": 1.0, "fraction_products": 1.0})
    return _result(res.indices, res.scores, res.n_products, 0.0, 0.0, info["reward_width"], dim,
                   info["preprocess_seconds"], info)


def _result(
    idx: NDArray[np.intp], scores: NDArray[np.float64], products: int, epsilon: float, delta: float,
    width: float | None, dim: int, pre: float, info: dict[str, Any],
) -> MIPSResult:
    info["epsilon"] = epsilon
    info["informative"] = epsilon < 1.0
    info["epsilon_score"] = None if width is None else epsilon * dim * width
    return MIPSResult(idx, scores, products, info, epsilon=epsilon, delta=delta, preprocess_seconds=pre)


# ---------------------------------------------------------------------- public functions
_PARAMS_DOC = """
    Parameters
    ----------
    V : array of shape (n, N) or BoundedMEIndex
        The vectors (float32 kept, other types converted to float64; not copied), or an
        index prepared by :class:`BoundedMEIndex` (contiguous reads; its preprocessing
        time is reported in ``preprocess_seconds``).
    q : array of shape (N,)
        The query.
    k : int, default 1
        Number of vectors to return, in ``[1, n]``.
    epsilon : float, default 0.1
        On the guarantee's scale, > 0: rewards scaled into ``[0, 1]`` by their range, the
        k-th best true score among the returned vectors is within ``epsilon N w`` of the
        k-th best overall (``w`` the reward width, ``info["reward_width"]``). Informative
        below 1; from 1 on the guarantee is empty and epsilon only sets how much is read
        (the result says ``informative=False``).
    delta : float, default 0.05
        Failure probability in (0, 1).
    rng : None, int, SeedSequence or Generator
        Draws the random reading order (and breaks ties).
    block : int, optional
        Sampling unit: 1 samples coordinates (the paper), ``B`` contiguous blocks of
        ``B`` coordinates (row-major data; the schedule is corrected so epsilon keeps its
        scale). Default: chosen by the cost model (1 for an index or dimension-major data).
    v_max : float, optional
        A bound on ``|V_ij|``, to state the guarantee in score units
        (``info["epsilon_score"]``). Checked against every partial sum read (no extra
        pass); ``V`` is not scanned for it when omitted.
    check_finite : bool, default True
        Refuse NaN / inf among the entries read (through the sums they enter: no extra
        pass). Entries never read are not checked (a :class:`BoundedMEIndex` checks all
        of them once).
    method : {"auto", "bandit", "exact"}, default "auto"
        ``"auto"`` runs BoundedME unless the cost model (:func:`combex.mips.read_cost`)
        predicts exact search to be faster, and then runs exact search;
        ``info["method"]`` and ``info["reason"]`` say which and why.

    Returns
    -------
    MIPSResult
        ``epsilon`` / ``delta`` of the guarantee (0 after exact search), ``informative``;
        ``info`` holds the method, the layout, the block, the measured
        ``fraction_read`` (64-byte lines of V touched / V's bytes) beside the model's
        ``model_fraction_read``, ``fraction_products``, ``rounds``, ``v_max``,
        ``reward_width`` and ``epsilon_score`` (None when no bound was given).

    Raises
    ------
    InvalidParameterError
        k outside [1, n], epsilon <= 0, delta outside (0, 1), a non-finite entry read, a
        query of the wrong dimension, a ``v_max`` contradicted by the data.
"""


def mips_top_k(
    V: Any,
    q: Any,
    k: int = 1,
    *,
    epsilon: float = 0.1,
    delta: float = 0.05,
    rng: Any = None,
    block: int | None = None,
    v_max: float | None = None,
    check_finite: bool = True,
    method: str = "auto",
) -> MIPSResult:
    return _search(V, q, k, epsilon=epsilon, delta=delta, rng=rng, block=block, v_max=v_max,
                   check_finite=check_finite, method=method, nn=False, owner="mips_top_k")


mips_top_k.__doc__ = """Approximate top-k maximum inner product search by BoundedME.

    No full pass over ``V`` and no copy of it: the search reads the coordinates its
    schedule needs (or, when the cost model says exact search is faster, runs exact
    search and says so in the result).
""" + _PARAMS_DOC + """
    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V = rng.standard_normal((50, 400))
    >>> V[7] += 1.0
    >>> q = np.ones(400)
    >>> res = mips_top_k(V, q, 1, epsilon=0.05, delta=0.05, rng=1, method="bandit")
    >>> res.indices.tolist(), res.informative
    ([7], True)
    >>> mips_top_k(V, q, 1).info["method"]  # row-major data: exact search is faster
    'exact'
"""


def nn_top_k(
    V: Any,
    q: Any,
    k: int = 1,
    *,
    epsilon: float = 0.1,
    delta: float = 0.05,
    rng: Any = None,
    block: int | None = None,
    v_max: float | None = None,
    check_finite: bool = True,
    method: str = "auto",
) -> MIPSResult:
    return _search(V, q, k, epsilon=epsilon, delta=delta, rng=rng, block=block, v_max=v_max,
                   check_finite=check_finite, method=method, nn=True, owner="nn_top_k")


nn_top_k.__doc__ = """Approximate k-nearest-neighbour search by BoundedME, ``f(i, j) = -(q_j - v_ij)^2``.

    Same parameters as :func:`mips_top_k`; rewards span ``[-(v_max + max|q|)^2, 0]``.
    ``scores`` are minus estimated squared distances.
""" + _PARAMS_DOC + """
    Examples
    --------
    >>> V = np.zeros((20, 100)); V[3] = 1.0
    >>> nn_top_k(V, np.ones(100), 1, epsilon=0.05, rng=0, method="bandit").indices.tolist()
    [3]
"""
