"""Read kernels of BoundedME's MIPS search: partial sums of ``f(i, j)`` over coordinate sets.

Each kernel has a compiled (numba) and a numpy version that return the same sums up to
summation order (tested in ``tests/test_mips.py``):

* :func:`rows_runs` -- ``V`` row-major (C order): for each listed row ``i`` and each
  column run ``[a, b)``, ``sum_j f(V[i, j], q[j])``. Every row segment is contiguous, so
  the compiled loop streams it (eight rows at a time, for memory-level parallelism), never
  touches a row that is not listed (eliminated vectors are not read) and copies nothing.
  numpy cannot multiply a row subset without copying it: its version reads all rows
  through a strided view (BLAS, no copy) and copies survivors' segments in cache-sized
  groups otherwise (about 2x the streamed cost per product, measured).
* :func:`rows_gather` -- C order, scattered coordinates (the paper's coordinate sampling
  on row-major data): each element read is a gather; slow, kept for completeness (the
  cost model never picks it).
* :func:`cols_gather` -- ``V`` stored dimension-major (``VT = V.T`` C-contiguous): for
  each listed coordinate ``j`` (a contiguous row ``VT[j]``), the entries of the listed
  vectors; with every vector listed it streams whole coordinate rows.

``f(v, q) = v q`` (``nn=False``) or ``-(v - q)^2`` (``nn=True``, nearest-neighbour
search). Sums accumulate in the data's precision within a run (as BLAS's ``sgemv`` does
for float32) and in float64 across runs. Given a bound ``v_max``, each kernel also returns the excess
``sum max(|V_ij| - v_max, 0)`` of the entries it read (fused into the same pass: about
15 % more time, no more bytes), so a stated bound is checked against every entry read.
Profile that motivated the compiled path (4,000 x
50,000 float32, one core): numpy's survivor copies cost 2-3.6x a streamed product; the
compiled row loop costs 0.8-0.9x BLAS's full ``V @ q`` per byte read.

numba is optional (the ``mips`` extra); without it the numpy versions run.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._jit import compiled

__all__ = ["HAVE_NUMBA", "rows_runs", "rows_gather", "cols_gather"]

# numba is imported (and the kernels compiled, or loaded from numba's on-disk cache) on the
# first call, so that importing combex does not pay for it.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

_GROUP_BYTES = 1 << 20  # numpy version: bytes of survivor segments copied per group
_CHUNK = 2048  # compiled row loop: entries per row read before the next row's
_COMPILED: dict[str, Any] = {}


def _make_prefetch() -> Any:
    """``_prefetch(A, i, j)``: a software prefetch of the cache line holding ``A[i, j]``
    (2-d array) into every cache level, as a numba intrinsic (LLVM's ``llvm.prefetch``;
    no effect on results)."""
    # numba (with its llvmlite) is optional (the mips extra)
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, arr, i, j):  # pragma: no cover - compiled
        sig = types.void(arr, i, j)

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]], wraparound=False)
            i8p = ir.IntType(8).as_pointer()
            # typed (older LLVM) or opaque pointers
            name = "llvm.prefetch.p0" if str(i8p) == "ptr" else "llvm.prefetch.p0i8"
            fnty = ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(32), ir.IntType(32), ir.IntType(32)])
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            i32 = ir.IntType(32)
            # read, locality 3 (keep in all levels), data cache
            builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    return prefetch


_prefetch: Any = None  # set to the intrinsic before the kernels are compiled


def _compiled(name: str) -> Any:
    """The numba-compiled version of the kernel ``name`` (compiled once per process)."""
    fn = _COMPILED.get(name)
    if fn is None:
        global _prefetch
        if _prefetch is None:
            _prefetch = _make_prefetch()

        fn = compiled(globals()[name], fastmath=True, boundscheck=False)
        _COMPILED[name] = fn
    return fn


def _nb_kth_smallest(w, k):  # pragma: no cover - compiled
    # The k-th smallest (0-based) of w by an in-place quickselect (median of three, Hoare
    # partition); w is reordered. A value, so the same whatever the method (measured
    # 25-35 % faster than numba's np.partition, which copies and checks for NaN).
    lo = 0
    hi = w.size - 1
    while hi > lo:
        mid = (lo + hi) >> 1
        a = w[lo]
        b = w[mid]
        c = w[hi]
        if a > b:
            a, b = b, a
        if b > c:
            b, c = c, b
        if a > b:
            a, b = b, a
        piv = b
        i = lo
        j = hi
        while i <= j:
            while w[i] < piv:
                i += 1
            while w[j] > piv:
                j -= 1
            if i <= j:
                t = w[i]
                w[i] = w[j]
                w[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return w[k]
    return w[k]


def _nb_remove_lowest(means, active, n_remove):  # pragma: no cover - compiled
    # The survivors of median elimination without the ~8 numpy calls of the numpy version:
    # the n_remove-th smallest mean by a quickselect, then one pass. When the threshold is
    # tied and only some of the tied arms must go (a random choice), report it
    # (ok = False) and let the caller run the numpy version, which draws the choice.
    m = np.empty(active.size)
    for i in range(active.size):
        m[i] = means[active[i]]
    kth = _JIT_KTH(m.copy(), n_remove - 1)
    less = 0
    eq = 0
    for i in range(m.size):
        if m[i] < kth:
            less += 1
        elif m[i] == kth:
            eq += 1
    if n_remove - less < eq:
        return active[:0], False
    out = np.empty(active.size - n_remove, dtype=active.dtype)
    j = 0
    for i in range(m.size):
        if m[i] > kth:
            out[j] = active[i]
            j += 1
    return out, True


def remove_lowest(means: NDArray[np.float64], active: NDArray[np.intp], n_remove: int) -> NDArray[np.intp] | None:
    """Compiled median-elimination step for finite ``means`` (see
    :func:`combex.mips._bounded_me._remove_lowest`): the survivors, or None when numba is
    missing or the threshold is tied and some tied arms must be chosen at random (the
    caller then runs the numpy version, which draws the choice: results and random
    streams are identical to the numpy version's either way)."""
    if not HAVE_NUMBA:
        return None
    fn = _COMPILED.get("_nb_remove_lowest")
    if fn is None:
        global _JIT_KTH
        # No fastmath: the comparisons must be exact.
        _JIT_KTH = compiled(_nb_kth_smallest)
        fn = compiled(_nb_remove_lowest)
        _COMPILED["_nb_remove_lowest"] = fn
    out, ok = fn(means, active, n_remove)
    return out if ok else None


_JIT_KTH: Any = None  # the compiled _nb_kth_smallest (set before _nb_remove_lowest is compiled)


# ---------------------------------------------------------------------- compiled kernels
# Plain Python source, compiled by numba on first use (far too slow interpreted).
def _nb_rows_runs(V, rows, starts, stops, q, out, nn, track, vm):  # pragma: no cover - compiled
    # Eight rows at a time: eight independent streams keep enough cache misses in flight
    # (cold reads of the 2,000 x 20,000 schedule: 0.97x the streamed time per byte against
    # 1.15x with four rows). A last group of fewer than eight repeats its first row (cached)
    # and drops those sums.
    zero = V.dtype.type(0)
    sign = -1.0 if nn else 1.0
    excess = 0.0  # sum over the entries read of max(|V_ij| - vm, 0)
    n_rows = rows.size
    line = max(1, 64 // V.itemsize)  # entries per 64-byte line
    r = 0
    while r < n_rows:
        if not nn and not track and n_rows - r >= 16:
            # Sixteen rows at a time for inner products (no bound check): sixteen streams
            # read the short runs of the schedule's early rounds 10-15 % faster than eight
            # (measured on cold reads of 1-3 KB to 12 KB per row, AVX-512: the sixteen
            # accumulators stay in registers).
            if starts.size > 0 and stops[0] > starts[0]:
                for c in range(r + 16, min(r + 32, n_rows)):
                    _prefetch(V, rows[c], starts[0])
                    if starts[0] + line < stops[0]:
                        _prefetch(V, rows[c], starts[0] + line)
            k0 = rows[r + 0]
            k1 = rows[r + 1]
            k2 = rows[r + 2]
            k3 = rows[r + 3]
            k4 = rows[r + 4]
            k5 = rows[r + 5]
            k6 = rows[r + 6]
            k7 = rows[r + 7]
            k8 = rows[r + 8]
            k9 = rows[r + 9]
            k10 = rows[r + 10]
            k11 = rows[r + 11]
            k12 = rows[r + 12]
            k13 = rows[r + 13]
            k14 = rows[r + 14]
            k15 = rows[r + 15]
            t16 = np.zeros(16)
            for u in range(starts.size):
                for a in range(starts[u], stops[u], _CHUNK):
                    b = min(stops[u], a + _CHUNK)
                    qs = q[a:b]
                    y0 = V[k0, a:b]
                    y1 = V[k1, a:b]
                    y2 = V[k2, a:b]
                    y3 = V[k3, a:b]
                    y4 = V[k4, a:b]
                    y5 = V[k5, a:b]
                    y6 = V[k6, a:b]
                    y7 = V[k7, a:b]
                    y8 = V[k8, a:b]
                    y9 = V[k9, a:b]
                    y10 = V[k10, a:b]
                    y11 = V[k11, a:b]
                    y12 = V[k12, a:b]
                    y13 = V[k13, a:b]
                    y14 = V[k14, a:b]
                    y15 = V[k15, a:b]
                    p0 = zero
                    p1 = zero
                    p2 = zero
                    p3 = zero
                    p4 = zero
                    p5 = zero
                    p6 = zero
                    p7 = zero
                    p8 = zero
                    p9 = zero
                    p10 = zero
                    p11 = zero
                    p12 = zero
                    p13 = zero
                    p14 = zero
                    p15 = zero
                    for j in range(b - a):
                        y = qs[j]
                        p0 += y0[j] * y
                        p1 += y1[j] * y
                        p2 += y2[j] * y
                        p3 += y3[j] * y
                        p4 += y4[j] * y
                        p5 += y5[j] * y
                        p6 += y6[j] * y
                        p7 += y7[j] * y
                        p8 += y8[j] * y
                        p9 += y9[j] * y
                        p10 += y10[j] * y
                        p11 += y11[j] * y
                        p12 += y12[j] * y
                        p13 += y13[j] * y
                        p14 += y14[j] * y
                        p15 += y15[j] * y
                    t16[0] += p0
                    t16[1] += p1
                    t16[2] += p2
                    t16[3] += p3
                    t16[4] += p4
                    t16[5] += p5
                    t16[6] += p6
                    t16[7] += p7
                    t16[8] += p8
                    t16[9] += p9
                    t16[10] += p10
                    t16[11] += p11
                    t16[12] += p12
                    t16[13] += p13
                    t16[14] += p14
                    t16[15] += p15
            for c in range(16):
                out[r + c] += t16[c]
            r += 16
            continue
        m = min(8, n_rows - r)
        # Prefetch the first two lines of the next group's first run: its eight streams then
        # start without a memory round trip each (measured on cold reads of the 2,000 x
        # 20,000 schedule's first rounds, 5-6 KB per row, about 10 % faster).
        if starts.size > 0 and stops[0] > starts[0]:
            for c in range(r + m, min(r + m + 8, n_rows)):
                _prefetch(V, rows[c], starts[0])
                if starts[0] + line < stops[0]:
                    _prefetch(V, rows[c], starts[0] + line)
        i0 = rows[r]
        i1 = rows[r + 1] if m > 1 else i0
        i2 = rows[r + 2] if m > 2 else i0
        i3 = rows[r + 3] if m > 3 else i0
        i4 = rows[r + 4] if m > 4 else i0
        i5 = rows[r + 5] if m > 5 else i0
        i6 = rows[r + 6] if m > 6 else i0
        i7 = rows[r + 7] if m > 7 else i0
        t = np.zeros(8)
        for u in range(starts.size):
            # Runs in chunks of _CHUNK entries: eight chunks (64 KB of float32) stay in
            # cache for the optional second pass of the bound check.
            for a in range(starts[u], stops[u], _CHUNK):
                b = min(stops[u], a + _CHUNK)
                qs = q[a:b]
                x0 = V[i0, a:b]
                x1 = V[i1, a:b]
                x2 = V[i2, a:b]
                x3 = V[i3, a:b]
                x4 = V[i4, a:b]
                x5 = V[i5, a:b]
                x6 = V[i6, a:b]
                x7 = V[i7, a:b]
                a0 = zero
                a1 = zero
                a2 = zero
                a3 = zero
                a4 = zero
                a5 = zero
                a6 = zero
                a7 = zero
                if nn:
                    for j in range(b - a):
                        y = qs[j]
                        d0 = x0[j] - y
                        d1 = x1[j] - y
                        d2 = x2[j] - y
                        d3 = x3[j] - y
                        d4 = x4[j] - y
                        d5 = x5[j] - y
                        d6 = x6[j] - y
                        d7 = x7[j] - y
                        a0 += d0 * d0
                        a1 += d1 * d1
                        a2 += d2 * d2
                        a3 += d3 * d3
                        a4 += d4 * d4
                        a5 += d5 * d5
                        a6 += d6 * d6
                        a7 += d7 * d7
                else:
                    for j in range(b - a):
                        y = qs[j]
                        a0 += x0[j] * y
                        a1 += x1[j] * y
                        a2 += x2[j] * y
                        a3 += x3[j] * y
                        a4 += x4[j] * y
                        a5 += x5[j] * y
                        a6 += x6[j] * y
                        a7 += x7[j] * y
                if track:
                    # Second pass over the cache-resident chunks: the excess of |x| over
                    # the bound (a sum of maxima with 0 vectorizes; a running float
                    # maximum does not).
                    e0 = zero
                    for x in (x0, x1, x2, x3, x4, x5, x6, x7):
                        for j in range(b - a):
                            e0 += max(abs(x[j]) - vm, zero)
                    excess += e0
                t[0] += a0
                t[1] += a1
                t[2] += a2
                t[3] += a3
                t[4] += a4
                t[5] += a5
                t[6] += a6
                t[7] += a7
        for c in range(m):
            out[r + c] += sign * t[c]
        r += m
    return excess


def _nb_rows_gather(V, rows, coords, q, out, nn, track, vm):  # pragma: no cover - compiled
    zero = V.dtype.type(0)
    excess = 0.0
    qs = q[coords]
    for r in range(rows.size):
        x = V[rows[r]]
        acc = zero
        if nn:
            for u in range(coords.size):
                d = x[coords[u]] - qs[u]
                acc += d * d
            out[r] -= acc
        else:
            for u in range(coords.size):
                acc += x[coords[u]] * qs[u]
            out[r] += acc
        if track:  # the row's gathered lines are still in cache
            e = zero
            for u in range(coords.size):
                e += max(abs(x[coords[u]]) - vm, zero)
            excess += e
    return excess

def _nb_cols_gather(VT, coords, rows, q, out, nn, all_rows, track, vm):  # pragma: no cover - compiled
    zero = VT.dtype.type(0)
    excess = 0.0
    one = VT.dtype.type(1)
    n_out = out.size
    acc = np.zeros(n_out, dtype=VT.dtype)
    n_c = coords.size
    c = 0
    since_flush = 0
    while c < n_c:
        m = min(4, n_c - c)
        j0 = coords[c]
        j1 = coords[c + 1] if m > 1 else j0
        j2 = coords[c + 2] if m > 2 else j0
        j3 = coords[c + 3] if m > 3 else j0
        # Weights 0 switch off the repeated rows of a last group of fewer than 4.
        w1 = one if m > 1 else zero
        w2 = one if m > 2 else zero
        w3 = one if m > 3 else zero
        y0 = q[j0]
        y1 = q[j1]
        y2 = q[j2]
        y3 = q[j3]
        x0 = VT[j0]
        x1 = VT[j1]
        x2 = VT[j2]
        x3 = VT[j3]
        if all_rows:
            if nn:
                for i in range(n_out):
                    d0 = x0[i] - y0
                    d1 = x1[i] - y1
                    d2 = x2[i] - y2
                    d3 = x3[i] - y3
                    acc[i] += d0 * d0 + w1 * (d1 * d1) + w2 * (d2 * d2) + w3 * (d3 * d3)
            else:
                for i in range(n_out):
                    acc[i] += x0[i] * y0 + w1 * (x1[i] * y1) + w2 * (x2[i] * y2) + w3 * (x3[i] * y3)
        else:
            if nn:
                for r in range(n_out):
                    i = rows[r]
                    d0 = x0[i] - y0
                    d1 = x1[i] - y1
                    d2 = x2[i] - y2
                    d3 = x3[i] - y3
                    acc[r] += d0 * d0 + w1 * (d1 * d1) + w2 * (d2 * d2) + w3 * (d3 * d3)
            else:
                for r in range(n_out):
                    i = rows[r]
                    acc[r] += x0[i] * y0 + w1 * (x1[i] * y1) + w2 * (x2[i] * y2) + w3 * (x3[i] * y3)
        if track:  # the four coordinate rows are still in cache
            e = zero
            for r in range(n_out):
                i = r if all_rows else rows[r]
                e += (max(abs(x0[i]) - vm, zero) + w1 * max(abs(x1[i]) - vm, zero)
                      + w2 * max(abs(x2[i]) - vm, zero) + w3 * max(abs(x3[i]) - vm, zero))
            excess += e
        c += m
        since_flush += m
        # Flush the data-precision accumulator into float64 every 256 coordinates.
        if since_flush >= 256 or c >= n_c:
            since_flush = 0
            for r in range(n_out):
                out[r] += -acc[r] if nn else acc[r]
                acc[r] = zero
    return excess



# ---------------------------------------------------------------------- numpy versions
def _np_rows_runs(
    V: NDArray[Any], rows: NDArray[np.int64], starts: NDArray[np.int64], stops: NDArray[np.int64],
    q: NDArray[Any], out: NDArray[np.float64], nn: bool, track: bool, vm: float,
) -> float:
    excess = 0.0
    full = rows.size == V.shape[0]
    width = int((stops - starts).sum())
    step = rows.size if full else max(1, _GROUP_BYTES // max(1, width * V.itemsize))
    for r0 in range(0, rows.size, step):
        rr = rows[r0 : r0 + step]
        acc = out[r0 : r0 + rr.size]
        for a, b in zip(starts.tolist(), stops.tolist()):
            # All rows: a strided view read by BLAS without a copy; a row subset: a copy.
            sub = V[:, a:b] if full else V[rr, a:b]
            if nn:
                d = sub - q[a:b]
                acc -= np.einsum("ij,ij->i", d, d)
            else:
                acc += sub @ q[a:b]
            if track:
                excess += _np_excess(sub, vm)
    return excess


def _np_excess(sub: NDArray[Any], vm: float) -> float:
    """``sum max(|x| - vm, 0)`` over ``sub``, computed only when an entry exceeds ``vm``."""
    if sub.size == 0 or max(float(sub.max()), -float(sub.min())) <= vm:
        return 0.0
    return float(np.maximum(np.abs(sub) - vm, 0.0).sum())


def _np_rows_gather(
    V: NDArray[Any], rows: NDArray[np.int64], coords: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], nn: bool, track: bool, vm: float,
) -> float:
    excess = 0.0
    step = 2048
    full = rows.size == V.shape[0]
    for c0 in range(0, coords.size, step):
        cc = coords[c0 : c0 + step]
        sub = V[:, cc] if full else V[np.ix_(rows, cc)]
        if nn:
            d = sub - q[cc]
            out -= np.einsum("ij,ij->i", d, d)
        else:
            out += sub @ q[cc]
        if track:
            excess += _np_excess(sub, vm)
    return excess


def _np_cols_gather(
    VT: NDArray[Any], coords: NDArray[np.int64], rows: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], nn: bool, all_rows: bool, track: bool, vm: float,
) -> float:
    excess = 0.0
    step = max(16, (1 << 21) // max(1, VT.shape[1]))
    for c0 in range(0, coords.size, step):
        cc = coords[c0 : c0 + step]
        sub = VT[cc] if all_rows else VT[np.ix_(cc, rows)]
        qs = q[cc]
        if nn:
            d = sub - qs[:, None]
            out -= np.einsum("ij,ij->j", d, d)
        else:
            out += qs @ sub
        if track:
            excess += _np_excess(sub, vm)
    return excess


# ---------------------------------------------------------------------- entry points
def rows_runs(
    V: NDArray[Any], rows: NDArray[np.int64], starts: NDArray[np.int64], stops: NDArray[np.int64],
    q: NDArray[Any], out: NDArray[np.float64], *, nn: bool = False, compiled: bool = True,
    v_max: float | None = None,
) -> float:
    """Add ``sum over runs [a, b) of sum_j f(V[rows[r], j], q[j])`` to ``out[r]``.

    ``V`` with contiguous rows, ``rows`` sorted int64 (all rows: ``arange(n)``), runs
    disjoint. With ``v_max``, returns ``sum max(|V_ij| - v_max, 0)`` over the entries read
    (positive iff one exceeds it), else 0.0.
    """
    if compiled and HAVE_NUMBA:
        return float(_compiled("_nb_rows_runs")(V, rows, starts, stops, q, out, nn, v_max is not None,
                                                V.dtype.type(v_max or 0.0)))
    return _np_rows_runs(V, rows, starts, stops, q, out, nn, v_max is not None, v_max or 0.0)


def rows_gather(
    V: NDArray[Any], rows: NDArray[np.int64], coords: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], *, nn: bool = False, compiled: bool = True, v_max: float | None = None,
) -> float:
    """Add ``sum_{j in coords} f(V[rows[r], j], q[j])`` to ``out[r]`` (``coords`` sorted);
    ``v_max`` as in :func:`rows_runs`."""
    if compiled and HAVE_NUMBA:
        return float(_compiled("_nb_rows_gather")(V, rows, coords, q, out, nn, v_max is not None,
                                                  V.dtype.type(v_max or 0.0)))
    return _np_rows_gather(V, rows, coords, q, out, nn, v_max is not None, v_max or 0.0)


def cols_gather(
    VT: NDArray[Any], coords: NDArray[np.int64], rows: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], *, nn: bool = False, compiled: bool = True, v_max: float | None = None,
) -> float:
    """Add ``sum_{j in coords} f(VT[j, rows[r]], q[j])`` to ``out[r]`` (``VT`` with
    contiguous rows, shape (N, n)); when ``rows`` lists every vector, ``out`` has length n
    and whole coordinate rows are streamed. ``v_max`` as in :func:`rows_runs`."""
    all_rows = rows.size == VT.shape[1]
    if compiled and HAVE_NUMBA:
        return float(_compiled("_nb_cols_gather")(VT, coords, rows, q, out, nn, all_rows, v_max is not None,
                                                  VT.dtype.type(v_max or 0.0)))
    return _np_cols_gather(VT, coords, rows, q, out, nn, all_rows, v_max is not None, v_max or 0.0)


# ---------------------------------------------------------------------- the whole schedule
# Set to the compiled kernels before _nb_schedule_loop is compiled (numba resolves them
# as globals; the loop is then cached on disk like the kernels).
_JIT_ROWS_RUNS: Any = None
_JIT_BLOCK_RUNS: Any = None


def _nb_block_runs(t_prev, t, shift, dim, starts, stops):  # pragma: no cover - compiled
    # The coordinates t_prev .. t - 1 of a round, shifted by the query's random offset
    # modulo dim, as at most two contiguous runs [starts[r], stops[r]); returns the count.
    s = (t_prev + shift) % dim
    e = (t + shift) % dim
    if t - t_prev >= dim:
        starts[0] = 0
        stops[0] = dim
        return 1
    if s < e or e == 0:
        starts[0] = s
        stops[0] = e if e != 0 else dim
        return 1
    starts[0] = s
    stops[0] = dim
    starts[1] = 0
    stops[1] = e
    return 2
_JIT_REMOVE_LOWEST: Any = None


def _nb_schedule_loop(V, q, sums, active, ts, n_removed, shift, dim, nn, track, vm):  # pragma: no cover - compiled
    # Returns (rounds completed, survivors, excess, status): status 0 = done,
    # 1 = a round's sums are not finite, 2 = a tie needs a random choice (the
    # caller reruns the numpy path, which reports / draws exactly as it would).
    excess = 0.0
    t_prev = 0
    starts = np.empty(2, dtype=np.int64)
    stops = np.empty(2, dtype=np.int64)
    for l in range(ts.size):
        t = ts[l]
        if t > t_prev:
            nr = _JIT_BLOCK_RUNS(t_prev, t, shift, dim, starts, stops)
            out = np.zeros(active.size)
            excess += _JIT_ROWS_RUNS(V, active, starts[:nr], stops[:nr], q, out, nn, track, vm)
            tot = 0.0
            for i in range(out.size):
                tot += out[i]
            if not np.isfinite(tot):
                for i in range(out.size):
                    if not np.isfinite(out[i]):
                        return l, active, excess, 1
            for i in range(active.size):
                sums[active[i]] += out[i]
        t_prev = t
        if n_removed[l] > 0:
            nxt, ok = _JIT_REMOVE_LOWEST(sums, active, n_removed[l])
            if not ok:
                return l, active, excess, 2
            active = nxt
    return ts.size, active, excess, 0


def _make_schedule_loop() -> Any:
    """Compile :func:`_nb_schedule_loop` (the loop of :func:`permuted_schedule`), once per
    process (from numba's on-disk cache after the first time): the reads of
    :func:`rows_runs` and the elimination step of :func:`remove_lowest`, round after round,
    in one compiled call instead of about twenty numpy calls and two kernel dispatches per
    round."""
    global _JIT_ROWS_RUNS, _JIT_REMOVE_LOWEST, _JIT_BLOCK_RUNS
    _JIT_ROWS_RUNS = _compiled("_nb_rows_runs")
    _JIT_BLOCK_RUNS = compiled(_nb_block_runs)
    remove_lowest(np.zeros(32), np.arange(32, dtype=np.intp), 1)  # compile the step
    _JIT_REMOVE_LOWEST = _COMPILED["_nb_remove_lowest"]
    return compiled(_nb_schedule_loop)


def permuted_schedule(
    V: NDArray[Any], q: NDArray[Any], n: int, ts: NDArray[np.int64], n_removed: NDArray[np.int64], shift: int,
    *, nn: bool = False, v_max: float | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.intp], float] | None:
    """BoundedME's whole schedule on permuted row-major data in one compiled call.

    Round ``l`` reads positions ``[t_{l-1}, t_l)`` of the order shifted by ``shift``
    (mod ``dim``) of every survivor, adds the partial sums, and removes the ``n_removed[l]``
    lowest sums (:func:`remove_lowest`). Returns ``(sums, survivors, excess)``, or None when
    numba is missing, a round's sums are not finite, or a tie needs a random choice: the
    caller then runs the numpy-driven path from the start, which raises / draws exactly as
    it always does (so results and random streams never depend on this shortcut).
    """
    if not HAVE_NUMBA:
        return None
    fn = _COMPILED.get("_schedule_loop")
    if fn is None:
        fn = _COMPILED["_schedule_loop"] = _make_schedule_loop()
    sums = np.zeros(n, dtype=np.float64)
    active = np.arange(n, dtype=np.intp)
    done, surv, excess, status = fn(V, q, sums, active, ts, n_removed, int(shift), int(V.shape[1]), nn,
                                    v_max is not None, V.dtype.type(v_max or 0.0))
    if status != 0:
        return None
    return sums, surv, float(excess)


# ---------------------------------------------------------------------- a whole query on an index
_JIT_SCHEDULE_LOOP: Any = None


def _nb_index_query(V, q, perm, sched, iargs, vm, shift):  # pragma: no cover - compiled
    # One query on a permuted index: the check of q (finite) and max |q|, q in the stored
    # coordinate order, the schedule, the 64-byte lines it touched (as _bandit's reader
    # counts them) and the survivors ranked best first with their estimated full scores.
    # sched = (t_l, n_removed_l, n_arms_l) as rows; iargs = (nn, track, offset of V in a
    # line, itemsize): few arguments, as each costs a few us of dispatch when the caches
    # are cold. Returns (status, survivors, estimates, lines, max |q|, excess): status 0
    # = done, 1 = a round's sums are not finite, 2 = a tie needs a random choice, 3 = q
    # has a non-finite entry (the caller then takes the general path, which raises or
    # draws exactly as it always does).
    ts = sched[0]
    n_removed = sched[1]
    n_arms = sched[2]
    nn = iargs[0] != 0
    track = iargs[1] != 0
    o = iargs[2]
    s = iargs[3]
    n, dim = V.shape
    e_i = np.zeros(0, dtype=np.intp)
    e_f = np.zeros(0)
    q_max = 0.0
    qs = np.empty(dim, dtype=V.dtype)
    for j in range(dim):  # q in the stored order, checked on the way
        x = q[perm[j]]
        qs[j] = x
        if not np.isfinite(x):
            return 3, e_i, e_f, 0, 0.0, 0.0
        a = abs(x)
        if a > q_max:
            q_max = a
    # The schedule as _nb_schedule_loop and _nb_remove_lowest run it, with buffers
    # allocated once per query instead of four per round (their lines stay cached from
    # round to round).
    sums = np.zeros(n)
    active = np.arange(n)
    spare = np.empty(n, dtype=active.dtype)
    out_b = np.empty(n)
    m_b = np.empty(n)
    w_b = np.empty(n)
    starts = np.empty(2, dtype=np.int64)
    stops = np.empty(2, dtype=np.int64)
    excess = 0.0
    na = n
    t_prev = 0
    for l in range(ts.size):
        t = ts[l]
        if t > t_prev:
            nr = _JIT_BLOCK_RUNS(t_prev, t, shift, dim, starts, stops)
            out = out_b[:na]
            for i in range(na):
                out[i] = 0.0
            excess += _JIT_ROWS_RUNS(V, active[:na], starts[:nr], stops[:nr], qs, out, nn, track, vm)
            tot = 0.0
            for i in range(na):
                tot += out[i]
            if not np.isfinite(tot):
                for i in range(na):
                    if not np.isfinite(out[i]):
                        return 1, e_i, e_f, 0, q_max, excess
            for i in range(na):
                sums[active[i]] += out[i]
        t_prev = t
        k = n_removed[l]
        if k > 0:
            m = m_b[:na]
            w = w_b[:na]
            for i in range(na):
                m[i] = sums[active[i]]
                w[i] = m[i]
            kth = _JIT_KTH(w, k - 1)
            less = 0
            eq = 0
            for i in range(na):
                if m[i] < kth:
                    less += 1
                elif m[i] == kth:
                    eq += 1
            if k - less < eq:
                return 2, e_i, e_f, 0, q_max, excess
            j = 0
            for i in range(na):
                if m[i] > kth:
                    spare[j] = active[i]
                    j += 1
            active, spare = spare, active
            na = j
    surv = active[:na]
    # 64-byte lines of the runs read, round by round (the reader's count).
    lines = 0
    t_prev = 0
    for l in range(ts.size):
        t = ts[l]
        if t > t_prev:
            a = (t_prev + shift) % dim
            b = (t + shift) % dim
            if t - t_prev >= dim:
                per = (o + dim * s - 1) // 64 - o // 64 + 1
            elif a < b or b == 0:
                bb = b if b != 0 else dim
                per = (o + bb * s - 1) // 64 - (o + a * s) // 64 + 1
            else:
                per = ((o + dim * s - 1) // 64 - (o + a * s) // 64 + 1) + ((o + b * s - 1) // 64 - o // 64 + 1)
            lines += n_arms[l] * per
        t_prev = t
    # As bounded_me: survivors ranked by mean (pulls = t_prev each), best first, stably;
    # estimated full score = mean over the coordinates read times dim.
    m = surv.size
    neg = np.zeros(m)
    means = np.zeros(m)
    if t_prev > 0:
        pulls = float(t_prev)
        for i in range(m):
            means[i] = sums[surv[i]] / pulls
            neg[i] = -means[i]
    order = np.argsort(neg, kind="mergesort")
    sel = np.empty(m, dtype=np.intp)
    est = np.zeros(m)
    for i in range(m):
        sel[i] = surv[order[i]]
        if t_prev > 0:
            est[i] = means[order[i]] * float(t_prev) / float(t_prev) * dim
    return 0, sel, est, lines, q_max, excess


def index_query_kernel() -> Any:
    """The compiled function behind :func:`index_query` (compiled once per process; numba
    required), for callers that pass its arguments themselves: ``(V, q, perm, sched,
    iargs, vm, shift)`` with ``sched`` the int64 rows ``(t_l, n_removed_l, n_arms_l)``,
    ``iargs`` the int64 ``(nn, track, V.ctypes.data % 64, V.itemsize)`` and ``vm`` the
    bound (V's dtype; read when ``track``)."""
    fn = _COMPILED.get("_index_query")
    if fn is None:
        global _JIT_SCHEDULE_LOOP
        loop = _COMPILED.get("_schedule_loop")
        if loop is None:  # (compiles the read loop and the elimination step too)
            loop = _COMPILED["_schedule_loop"] = _make_schedule_loop()
        _JIT_SCHEDULE_LOOP = loop
        # No fastmath: the ranking and the estimates must equal numpy's bit for bit.
        fn = _COMPILED["_index_query"] = compiled(_nb_index_query)
    return fn


def index_query(
    V: NDArray[Any], q: NDArray[Any], perm: NDArray[np.intp], ts: NDArray[np.int64], n_removed: NDArray[np.int64],
    n_arms: NDArray[np.int64], shift: int, *, nn: bool, v_max: float | None,
) -> tuple[int, NDArray[np.intp], NDArray[np.float64], int, float, float]:
    """A whole BoundedME query on a permuted index in one compiled call (numba required).

    ``q`` in the caller's coordinate order, of ``V``'s dtype; ``perm`` the index's
    permutation. Returns ``(status, survivors best first, estimated scores, 64-byte lines
    read, max |q|, excess)``; status 0 = done, 1 = non-finite sums, 2 = a tie needing a
    random choice, 3 = a non-finite entry of ``q``. The caller takes the general path on
    any non-zero status (it raises or draws exactly as it always does).
    """
    fn = index_query_kernel()
    sched = np.stack([ts, n_removed, n_arms]).astype(np.int64)
    iargs = np.array([nn, v_max is not None, V.ctypes.data % 64, V.itemsize], dtype=np.int64)
    status, sel, est, lines, q_max, excess = fn(V, q, perm, sched, iargs, V.dtype.type(v_max or 0.0), int(shift))
    return int(status), sel, est, int(lines), float(q_max), float(excess)
