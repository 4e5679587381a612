"""Cost model of BoundedME's MIPS search: how much of ``V`` a schedule reads.

Exact search (one ``V @ q``) streams every byte of ``V`` once and runs at the memory
bandwidth limit. BoundedME can only win by moving fewer bytes, so its best possible
speedup is ``1 / fraction_read``, where ``fraction_read`` is the fraction of V's bytes --
counted in 64-byte cache lines, the unit memory moves in -- that the schedule touches.
That fraction depends on four things:

* the **schedule** (:func:`~combex.mips._bounded_me.bounded_me_schedule`): round ``l``
  reads ``t_l - t_{l-1}`` list items of each of the ``|S_l|`` surviving vectors; it is
  fixed by ``(n, k, list size, epsilon, delta)`` before any data is read;
* the **sampling unit** ``block`` ``B``: single coordinates (``B = 1``, the paper) or
  contiguous blocks of ``B`` coordinates. Block sums span ``B`` times the per-coordinate
  range, so to keep the guarantee at ``epsilon`` on the per-coordinate scale the schedule
  runs at ``epsilon N / (B ceil(N/B))`` on a list of ``ceil(N/B)`` items (the zero padding
  of the last block weakens the bound by ``B ceil(N/B) / N``); with ``B > 1`` the list is
  short and the schedule reads most of it at any informative epsilon;
* the **layout** of ``V``:

  - ``"permuted"``: row-major with the coordinates permuted once at random
    (:class:`~combex.mips.BoundedMEIndex`, preprocessing): round ``l`` reads one
    contiguous segment per survivor, so bytes = products (plus partial lines);
  - ``"rows"``: row-major as given: blocks are contiguous runs; single coordinates are
    scattered and touch a line per drawn coordinate unless several share it;
  - ``"columns"``: dimension-major (Fortran order): a coordinate is a contiguous row of
    ``V^T``; all vectors' entries are streamed while more than ``n / 8`` survive, the
    survivors' entries gathered (touching the lines that hold them) afterwards;

* the element size (4 bytes for float32).

:func:`read_cost` evaluates this model; :func:`combex.mips.mips_top_k` uses it to choose
between BoundedME and exact search, and measures the lines its reads touch
(``info["fraction_read"]``), which ``tests/test_mips.py`` compares with the model.

The model also estimates the *time* of a search relative to exact search
(``time_fraction``): bytes plus a fixed cost per contiguous run (a new stream) and per
gathered element, plus the fixed costs of each round of elimination and of the query, in
streamed-byte equivalents (constants below, measured on a 2-core x86-64 with float32
data). These constants only decide between access paths (and say whether the speed
target ``time <= 1.15 x fraction_read x exact`` is within reach: ``meets_target``); the
byte counts do not depend on them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_probability
from ._bounded_me import BoundedMERound, bounded_me_schedule
from ._kernels import HAVE_NUMBA

__all__ = ["ReadCost", "read_cost", "schedule_epsilon", "LINE_BYTES", "EXACT_ABOVE"]

LINE_BYTES = 64
#: BoundedME is chosen over exact search only when its predicted time is below this
#: fraction of an exact search's (per-round overheads and model error make the margin).
EXACT_ABOVE = 0.8
#: A survivor subset denser than this fraction of the vectors is read by streaming whole
#: coordinate rows of dimension-major data (cheaper than gathering its entries).
STREAM_DENSITY = 1.0 / 8.0
# Streamed-byte equivalents of fixed costs, measured on the idle 2-core test machine
# (float32, 4,000 x 50,000, one core; exact search at 32 GB/s): starting a run costs about
# 1 KB of streaming (runs of 256 B: 4.8x their bytes, 4 KB: 1.26x, 16 KB: 0.97x); a
# scattered coordinate of a row-major row 65-150 B (densities 25 %-1 %); a cache line of a
# coordinate row touched by a survivor gather costs 1.5-2.7 streamed lines (survivor
# densities 1/16 to 1/100; the sparser, the less the prefetcher helps).
RUN_BYTES = 1024.0
GATHER_BYTES = 100.0
COLUMN_GATHER_LINE = 2.0
# Fixed costs of a search that do not depend on the bytes read, in
# streamed-byte equivalents at the idle machine's 32 GB/s. Round by round, each round of
# the schedule costs about 20 us (a partition of the survivors' sums, about twenty numpy
# calls and the kernel call: 26 us measured on the loaded machine, the slope of the search
# time over 6-14 rounds on cache-resident data). On an index with numba the whole schedule
# is one compiled call (``combex.mips._kernels.permuted_schedule``): about 5 us a round. A
# query costs about 80 us besides (argument checks, the cost model, the reading order;
# 90 us measured loaded). On a 2,000 x 20,000 float32 index (160 MB) this is 2.7 % of an
# exact search (round by round: 6 %); on 10^4 x 10^5, 0.1 %; on a 200 x 5,000 V more than
# an exact search itself.
#
# The planned query: on an index with numba a query reuses a plan (its arguments checked, the cost
# model's choice and the schedule made once per set of argument values) and runs as one
# compiled call, q's check and permutation and the ranking included. Measured per query
# besides the reads (64-1,024 x 256 float32 index, 6-10 rounds, load 2.7): 15-20 us
# against about 40 us in a warm loop, 250-440 us against 400-790 us right after a pass over
# a 160 MB array (the benchmark's alternation with exact search; a NumPy call then costs
# 15-150 us instead of 1-8 us; ``default_rng(seed)`` alone 110-150 us, a Generator passed
# in 17 us). The reads of that path (sixteen rows at a time, the next group's first lines
# prefetched) cost less per byte than exact search's ``sgemv``: 0.75-0.88 x its time per
# byte in rounds 0-3 of the 2,000 x 20,000 schedule (cycle counts, cold). Fitted on the 36
# index rows with fraction read < 0.6 of three runs of ``benchmarks/mips.py
# --skip-figure1`` (load 2.6-2.9, epsilon 0.1-0.3, all three data sets): time / exact =
# 0.735 x fraction read + 0.069 (residual sd 0.011; the rows at 0.03-0.07 agree within
# 0.13), hence READ_FACTOR_ONE_CALL = 0.75, no per-run cost, and a fixed cost of 0.069 x
# 160 MB = 11 MB of streaming per query (11 rounds of 5 us at 32 GB/s, the rest charged
# to the query). Conservative for small V: cold, a whole 64-1,024 x 256 query costs
# 250-440 us, less than this fixed cost (about 0.6 ms at 2,000 x 20,000 speeds). The
# round-by-round constants above were fitted separately and are not re-fitted here.
STREAM_BYTES_PER_SECOND = 32e9
ROUND_BYTES = 20e-6 * STREAM_BYTES_PER_SECOND
ROUND_BYTES_ONE_CALL = 5e-6 * STREAM_BYTES_PER_SECOND
QUERY_BYTES = 80e-6 * STREAM_BYTES_PER_SECOND
QUERY_BYTES_ONE_CALL = 0.069 * 2000 * 20000 * 4 - 11 * ROUND_BYTES_ONE_CALL
READ_FACTOR_ONE_CALL = 0.75
#: The speed target: a search should take at most this factor times
#: ``fraction_read`` times an exact search (:attr:`ReadCost.meets_target`).
TARGET_FACTOR = 1.15

LAYOUTS = ("permuted", "rows", "columns")


def schedule_epsilon(epsilon: float, dim: int, block: int) -> float:
    """The schedule's epsilon for a list of ``ceil(dim/block)`` block sums that keeps the
    guarantee at ``epsilon`` on the per-coordinate scale.

    A block sum spans ``block`` times the per-coordinate range and the list mean is the
    inner product over ``ceil(dim/block)`` items instead of ``dim``; on the scaled
    ``[0, 1]`` block rewards a gap ``g`` of inner products is ``g / (2 h block L)``
    against ``g / (2 h dim)`` per coordinate (``h = v_max max|q|``, ``L = ceil(dim /
    block)``), hence ``epsilon dim / (block L)`` (equal to ``epsilon`` when ``block``
    divides ``dim``; smaller by the zero padding otherwise).

    Examples
    --------
    >>> schedule_epsilon(0.1, 1000, 1), schedule_epsilon(0.1, 1000, 100)
    (0.1, 0.1)
    >>> round(schedule_epsilon(0.1, 1000, 300), 6)  # 4 blocks of 300 cover 1,200 coordinates
    0.083333
    """
    n_items = -(-dim // block)
    return float(epsilon) * dim / (block * n_items)


def expected_lines(width_bytes: float, itemsize: int, offsets: Any = None) -> float:
    """Expected 64-byte lines spanned by a contiguous run of ``width_bytes`` bytes whose
    start lies at one of ``offsets`` (bytes within a line, equally likely; default: any
    element offset)."""
    if width_bytes <= 0:
        return 0.0
    if offsets is None:
        return (width_bytes + LINE_BYTES - itemsize) / LINE_BYTES
    offs = np.asarray(offsets, dtype=np.float64)
    return float(np.mean(np.floor((offs + width_bytes - 1.0) / LINE_BYTES) + 1.0))


def start_offsets(offset: int | None, *strides: int) -> NDArray[np.int64] | None:
    """Byte offsets within a line at which runs start: ``offset`` (of the first element)
    plus any combination of the given strides, modulo 64 (None when ``offset`` is None)."""
    if offset is None:
        return None
    g = LINE_BYTES
    for st in strides:
        g = math.gcd(g, int(st))
    return (int(offset) + np.arange(0, LINE_BYTES, g)) % LINE_BYTES


def lines_touched_fraction(density: float, itemsize: int) -> float:
    """Expected fraction of a row's lines holding at least one of a uniformly random
    subset of its elements of the given density."""
    per_line = max(1, LINE_BYTES // itemsize)
    return 1.0 - (1.0 - min(max(density, 0.0), 1.0)) ** per_line


def columns_stream(n_survivors: int, n: int) -> bool:
    """Whether dimension-major data is read by streaming whole coordinate rows (dense
    survivor sets) rather than gathering the survivors' entries."""
    return n_survivors >= n * STREAM_DENSITY


@dataclass(frozen=True)
class ReadCost:
    """The cost model's verdict for one search (see the module docstring).

    Attributes
    ----------
    n, dim, k : int
        Vectors, dimension, vectors returned.
    layout : {"permuted", "rows", "columns"}
    block : int
        Sampling unit (1 = coordinates).
    itemsize : int
        Bytes per element.
    epsilon : float
        On the guarantee's scale (per coordinate, rewards scaled into [0, 1]).
    schedule_epsilon : float
        What the schedule runs at (:func:`schedule_epsilon`).
    delta : float
    informative : bool
        ``epsilon < 1``: below the range of the scaled rewards (Lemma 1's ``0 < epsilon
        < 1``); at or above it the guarantee says nothing and epsilon is only a knob.
    rounds : tuple of BoundedMERound
        The schedule (``t`` in list items: coordinates or blocks).
    products : float
        Expected coordinate products ``f(i, j)`` evaluated (streamed coordinate rows of
        dimension-major data evaluate every vector's, survivor or not).
    bytes_read : float
        Expected bytes of V moved (64-byte lines touched).
    time_bytes : float
        Estimated time in streamed-byte equivalents: the reads (bytes plus a fixed cost per
        contiguous run and per gathered element; on an index with numba
        ``READ_FACTOR_ONE_CALL`` times the bytes) plus the fixed costs of the rounds and
        the query (``fixed_bytes``).
    fixed_bytes : float
        The part of ``time_bytes`` that does not depend on the bytes read: per query
        ``QUERY_BYTES_ONE_CALL`` and per round that reads ``ROUND_BYTES_ONE_CALL`` (an
        index whose query is planned and runs as one compiled call), else ``QUERY_BYTES``
        and ``ROUND_BYTES`` (round by round).
    """

    n: int
    dim: int
    k: int
    layout: str
    block: int
    itemsize: int
    epsilon: float
    schedule_epsilon: float
    delta: float
    informative: bool
    rounds: tuple[BoundedMERound, ...] = field(repr=False)
    products: float
    bytes_read: float
    time_bytes: float
    fixed_bytes: float = 0.0

    @property
    def v_bytes(self) -> int:
        """Bytes of V (what exact search streams)."""
        return self.n * self.dim * self.itemsize

    @property
    def fraction_read(self) -> float:
        """Fraction of V's bytes the schedule moves from memory."""
        return self.bytes_read / self.v_bytes

    @property
    def fraction_products(self) -> float:
        """Fraction of the ``n * dim`` products evaluated."""
        return self.products / (self.n * self.dim)

    @property
    def speedup_bound(self) -> float:
        """The best speedup over exact search possible at the bandwidth limit,
        ``1 / fraction_read``."""
        return math.inf if self.bytes_read <= 0 else self.v_bytes / self.bytes_read

    @property
    def time_fraction(self) -> float:
        """Estimated read time relative to one exact search."""
        return self.time_bytes / self.v_bytes

    @property
    def exact_faster(self) -> bool:
        """Whether exact search is expected to be as fast or faster (``time_fraction >=``
        :data:`EXACT_ABOVE`)."""
        return self.time_fraction >= EXACT_ABOVE

    @property
    def fixed_fraction(self) -> float:
        """The per-query and per-round fixed costs relative to one exact search."""
        return self.fixed_bytes / self.v_bytes

    @property
    def meets_target(self) -> bool:
        """Whether the estimated time is within :data:`TARGET_FACTOR` (1.15) times
        ``fraction_read`` times an exact search. False where fixed costs (small V, many
        rounds of small reads) or scattered reads dominate: the search may still beat
        exact search (see :attr:`exact_faster`), but not by what its bytes allow."""
        return self.time_fraction <= TARGET_FACTOR * self.fraction_read

    def summary(self) -> str:
        """One line for results and error messages."""
        return (
            f"layout {self.layout}, block {self.block}: reads {self.fraction_read:.1%} of V's bytes "
            f"({self.fraction_products:.1%} of the products), best speedup {self.speedup_bound:.2f}x, "
            f"estimated time {self.time_fraction:.2f} x exact (fixed costs {self.fixed_fraction:.2f}; "
            f"target {TARGET_FACTOR} x fraction read {'met' if self.meets_target else 'not met'})"
        )


def read_cost(
    n: int,
    dim: int,
    k: int = 1,
    *,
    epsilon: float = 0.1,
    delta: float = 0.05,
    block: int = 1,
    layout: str = "permuted",
    itemsize: int = 4,
    offset: int | None = None,
) -> ReadCost:
    """Predict the bytes and time BoundedME's reads cost (see the module docstring).

    Parameters
    ----------
    n, dim : int
        Shape of ``V``.
    k : int, default 1
        Vectors returned, in ``[1, n]``.
    epsilon : float, default 0.1
        On the guarantee's scale (> 0; informative below 1).
    delta : float, default 0.05
        In (0, 1).
    block : int, default 1
        Sampling unit in ``[1, dim]``; the ``"permuted"`` layout reads single coordinates.
    layout : {"permuted", "rows", "columns"}
    itemsize : int, default 4
        Bytes per element (4 for float32, 8 for float64).
    offset : int, optional
        Byte offset of V's first element within a 64-byte line (``V.ctypes.data % 64``);
        when omitted, runs are taken to start anywhere in a line (the expectation).
        Rows (coordinate rows for ``"columns"``) are taken to be stored back to back.

    Returns
    -------
    ReadCost

    Examples
    --------
    >>> c = read_cost(10_000, 100_000, 5, epsilon=0.1, delta=0.1)
    >>> c.informative, round(c.fraction_read, 3), c.exact_faster
    (True, 0.247, False)
    >>> read_cost(10_000, 100_000, 5, epsilon=0.1, delta=0.1, block=4096, layout="rows").fraction_read > 0.9
    True
    """
    owner = "read_cost"
    n = check_int(n, "n", owner=owner, low=1)
    dim = check_int(dim, "dim", owner=owner, low=1)
    k = check_int(k, "k", owner=owner, low=1, high=n)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    layout = check_choice(layout, "layout", LAYOUTS, owner=owner)
    block = check_int(block, "block", owner=owner, low=1, high=1 if layout == "permuted" else dim)
    itemsize = check_int(itemsize, "itemsize", owner=owner, low=1)
    if offset is not None:
        offset = check_int(offset, "offset", owner=owner, low=0, high=LINE_BYTES - 1)
    return _read_cost(n, dim, k, epsilon, delta, block, layout, itemsize, offset)


@functools.lru_cache(maxsize=1024)
def _read_cost(
    n: int, dim: int, k: int, epsilon: float, delta: float, block: int, layout: str, itemsize: int,
    offset: int | None,
) -> ReadCost:
    """:func:`read_cost` on checked arguments (cached: repeated queries of one size)."""
    n_items = -(-dim // block)
    eps_s = schedule_epsilon(epsilon, dim, block)
    rounds = tuple(bounded_me_schedule(n, k, n_items, eps_s, delta))
    products = bytes_read = time_bytes = 0.0
    # the one-call schedule and planned query (an index, numba, rows a whole number of
    # lines apart)
    one_call = layout == "permuted" and HAVE_NUMBA and (dim * itemsize) % LINE_BYTES == 0
    per_round = ROUND_BYTES_ONE_CALL if one_call else ROUND_BYTES
    fixed = QUERY_BYTES_ONE_CALL if one_call else QUERY_BYTES
    t_prev = 0
    coords_per_item = dim / n_items  # the last block may be short: its expected share
    for rnd in rounds:
        s, new = rnd.n_arms, rnd.t - t_prev
        t_prev = rnd.t
        if new <= 0:
            continue
        coords = new * coords_per_item
        # Streamed coordinate rows of dimension-major data evaluate every vector's product.
        products += (n if layout == "columns" and columns_stream(s, n) else s) * coords
        b, tb = _round_cost(layout, n, dim, s, new, n_items, coords, block, itemsize, offset, one_call)
        bytes_read += b
        time_bytes += tb
        fixed += per_round
    return ReadCost(
        n=n, dim=dim, k=k, layout=layout, block=block, itemsize=itemsize, epsilon=epsilon,
        schedule_epsilon=eps_s, delta=delta, informative=epsilon < 1.0, rounds=rounds,
        products=products, bytes_read=bytes_read, time_bytes=time_bytes + fixed, fixed_bytes=fixed,
    )


def _round_cost(
    layout: str, n: int, dim: int, s: int, new: int, n_items: int, coords: float, block: int, itemsize: int,
    offset: int | None, one_call: bool = False,
) -> tuple[float, float]:
    """(bytes, time in streamed-byte equivalents) of one round reading ``new`` list items
    (``coords`` coordinates) of ``s`` survivors."""
    pitch = dim * itemsize
    if layout == "permuted":
        # One contiguous segment per survivor (two when the per-query offset wraps; rare).
        lines = expected_lines(coords * itemsize, itemsize, start_offsets(offset, pitch, itemsize))
        if one_call:  # the planned query's read loop
            return s * lines * LINE_BYTES, READ_FACTOR_ONE_CALL * s * lines * LINE_BYTES
        return s * lines * LINE_BYTES, s * (coords * itemsize + RUN_BYTES)
    if layout == "rows":
        if block == 1:
            frac = lines_touched_fraction(new / dim, itemsize)
            lines = frac * expected_lines(pitch, itemsize, start_offsets(offset, pitch))
            return s * lines * LINE_BYTES, s * new * GATHER_BYTES
        # Drawn blocks merge into runs when adjacent: E[runs] = new - E[adjacent pairs].
        runs = max(1.0, new - new * (new - 1) / max(n_items, 1))
        # Runs are whole blocks: each spans its bytes plus the same partial-line excess
        # as one block starting where it starts.
        unit = block * itemsize
        excess = expected_lines(unit, itemsize, start_offsets(offset, pitch, unit)) - unit / LINE_BYTES
        lines = coords * itemsize / LINE_BYTES + runs * excess
        return s * lines * LINE_BYTES, s * (coords * itemsize + runs * RUN_BYTES)
    # columns: `coords` coordinate rows of n elements each.
    row_lines = expected_lines(n * itemsize, itemsize, start_offsets(offset, n * itemsize))
    if columns_stream(s, n):
        return coords * row_lines * LINE_BYTES, coords * (n * itemsize + RUN_BYTES)
    lines = row_lines * lines_touched_fraction(s / n, itemsize)
    return coords * lines * LINE_BYTES, coords * (lines * LINE_BYTES * COLUMN_GATHER_LINE + RUN_BYTES)

