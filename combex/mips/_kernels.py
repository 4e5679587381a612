"""Read kernels of BoundedME's MIPS search: partial sums of ``f(i, j)`` over coordinate sets.

Each kernel has a compiled (numba) and a numpy version that return the same sums up to
summation order (tested in ``tests/test_mips.py``):

* :func:`rows_runs` -- ``V`` row-major (C order): for each listed row ``i`` and each
  column run ``[a, b)``, ``sum_j f(V[i, j], q[j])``. Every row segment is contiguous, so
  the compiled loop streams it (four rows at a time, for memory-level parallelism), never
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
for float32) and in float64 across runs. Profile that motivated the compiled path (4,000 x
50,000 float32, one core): numpy's survivor copies cost 2-3.6x a streamed product; the
compiled row loop costs 0.8-0.9x BLAS's full ``V @ q`` per byte read.

numba is optional (the ``mips`` extra); without it the numpy versions run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

import importlib.util

__all__ = ["HAVE_NUMBA", "rows_runs", "rows_gather", "cols_gather"]

# numba is imported (and the kernels compiled, or loaded from numba's on-disk cache) on the
# first call, so that importing combex does not pay for it.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

_GROUP_BYTES = 1 << 20  # numpy version: bytes of survivor segments copied per group
_COMPILED: dict[str, Any] = {}


def _compiled(name: str) -> Any:
    """The numba-compiled version of the kernel ``name`` (compiled once per process)."""
    fn = _COMPILED.get(name)
    if fn is None:
        import numba

        fn = numba.njit(fastmath=True, nogil=True, cache=True, boundscheck=False)(globals()[name])
        _COMPILED[name] = fn
    return fn


# ---------------------------------------------------------------------- compiled kernels
# Plain Python source, compiled by numba on first use (far too slow interpreted).
def _nb_rows_runs(V, U, mask, rows, starts, stops, q, out, nn, track):  # pragma: no cover - compiled
    zero = V.dtype.type(0)
    sign = -1.0 if nn else 1.0
    top = mask & 0  # largest |V_ij| read, as the bits of its absolute value
    n_rows = rows.size
    r = 0
    while r < n_rows:
        m = min(4, n_rows - r)
        i0 = rows[r]
        i1 = rows[r + 1] if m > 1 else i0
        i2 = rows[r + 2] if m > 2 else i0
        i3 = rows[r + 3] if m > 3 else i0
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        for u in range(starts.size):
            a = starts[u]
            b = stops[u]
            qs = q[a:b]
            x0 = V[i0, a:b]
            x1 = V[i1, a:b]
            x2 = V[i2, a:b]
            x3 = V[i3, a:b]
            a0 = zero
            a1 = zero
            a2 = zero
            a3 = zero
            if track:
                # Fused with the products; an integer max of the bits of |x| (vectorizes,
                # where a float max does not).
                u0 = U[i0, a:b]
                u1 = U[i1, a:b]
                u2 = U[i2, a:b]
                u3 = U[i3, a:b]
                m0 = mask & 0
                m1 = mask & 0
                for j in range(b - a):
                    y = qs[j]
                    if nn:
                        d0 = x0[j] - y
                        d1 = x1[j] - y
                        d2 = x2[j] - y
                        d3 = x3[j] - y
                        a0 += d0 * d0
                        a1 += d1 * d1
                        a2 += d2 * d2
                        a3 += d3 * d3
                    else:
                        a0 += x0[j] * y
                        a1 += x1[j] * y
                        a2 += x2[j] * y
                        a3 += x3[j] * y
                    m0 = max(m0, max(u0[j] & mask, u1[j] & mask))
                    m1 = max(m1, max(u2[j] & mask, u3[j] & mask))
                top = max(top, max(m0, m1))
            elif nn:
                for j in range(b - a):
                    y = qs[j]
                    d0 = x0[j] - y
                    d1 = x1[j] - y
                    d2 = x2[j] - y
                    d3 = x3[j] - y
                    a0 += d0 * d0
                    a1 += d1 * d1
                    a2 += d2 * d2
                    a3 += d3 * d3
            else:
                for j in range(b - a):
                    y = qs[j]
                    a0 += x0[j] * y
                    a1 += x1[j] * y
                    a2 += x2[j] * y
                    a3 += x3[j] * y
            t0 += a0
            t1 += a1
            t2 += a2
            t3 += a3
        out[r] += sign * t0
        if m > 1:
            out[r + 1] += sign * t1
        if m > 2:
            out[r + 2] += sign * t2
        if m > 3:
            out[r + 3] += sign * t3
        r += m
    return top

def _nb_rows_gather(V, U, mask, rows, coords, q, out, nn, track):  # pragma: no cover - compiled
    zero = V.dtype.type(0)
    top = mask & 0
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
            ux = U[rows[r]]
            for u in range(coords.size):
                top = max(top, ux[coords[u]] & mask)
    return top

def _nb_cols_gather(VT, UT, mask, coords, rows, q, out, nn, all_rows, track):  # pragma: no cover - compiled
    zero = VT.dtype.type(0)
    top = mask & 0
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
            v0 = UT[j0]
            v1 = UT[j1]
            v2 = UT[j2]
            v3 = UT[j3]
            m0 = mask & 0
            m1 = mask & 0
            for r in range(n_out):
                i = r if all_rows else rows[r]
                m0 = max(m0, max(v0[i] & mask, v1[i] & mask))
                m1 = max(m1, max(v2[i] & mask, v3[i] & mask))
            top = max(top, max(m0, m1))
        c += m
        since_flush += m
        # Flush the data-precision accumulator into float64 every 256 coordinates.
        if since_flush >= 256 or c >= n_c:
            since_flush = 0
            for r in range(n_out):
                out[r] += -acc[r] if nn else acc[r]
                acc[r] = zero
    return top



# ---------------------------------------------------------------------- numpy versions
def _np_rows_runs(
    V: NDArray[Any], rows: NDArray[np.int64], starts: NDArray[np.int64], stops: NDArray[np.int64],
    q: NDArray[Any], out: NDArray[np.float64], nn: bool, track: bool,
) -> float:
    top = 0.0
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
                top = _np_max_abs(sub, top)
    return top


def _np_max_abs(sub: NDArray[Any], top: float) -> float:
    return top if sub.size == 0 else max(top, float(sub.max()), -float(sub.min()))


def _np_rows_gather(
    V: NDArray[Any], rows: NDArray[np.int64], coords: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], nn: bool, track: bool,
) -> float:
    top = 0.0
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
            top = _np_max_abs(sub, top)
    return top


def _np_cols_gather(
    VT: NDArray[Any], coords: NDArray[np.int64], rows: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], nn: bool, all_rows: bool, track: bool,
) -> float:
    top = 0.0
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
            top = _np_max_abs(sub, top)
    return top


# ---------------------------------------------------------------------- entry points
_MASKS = {4: (np.uint32, np.uint32(0x7FFFFFFF)), 8: (np.uint64, np.uint64(0x7FFFFFFFFFFFFFFF))}


def _bits(data: NDArray[Any]) -> tuple[NDArray[Any], Any]:
    """The unsigned-integer view of ``data`` and the mask clearing the sign bit."""
    ut, mask = _MASKS[data.itemsize]
    return data.view(ut), mask


def _from_bits(top: Any, data: NDArray[Any]) -> float:
    ut, _ = _MASKS[data.itemsize]
    return float(np.array([top], dtype=ut).view(data.dtype)[0])


def rows_runs(
    V: NDArray[Any], rows: NDArray[np.int64], starts: NDArray[np.int64], stops: NDArray[np.int64],
    q: NDArray[Any], out: NDArray[np.float64], *, nn: bool = False, compiled: bool = True,
    track: bool = False,
) -> float:
    """Add ``sum over runs [a, b) of sum_j f(V[rows[r], j], q[j])`` to ``out[r]``.

    ``V`` with contiguous rows, ``rows`` sorted int64 (all rows: ``arange(n)``), runs
    disjoint. With ``track``, returns the largest ``|V_ij|`` read (else 0.0).
    """
    if compiled and HAVE_NUMBA:
        U, mask = _bits(V)
        return _from_bits(_compiled("_nb_rows_runs")(V, U, mask, rows, starts, stops, q, out, nn, track), V)
    return _np_rows_runs(V, rows, starts, stops, q, out, nn, track)


def rows_gather(
    V: NDArray[Any], rows: NDArray[np.int64], coords: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], *, nn: bool = False, compiled: bool = True, track: bool = False,
) -> float:
    """Add ``sum_{j in coords} f(V[rows[r], j], q[j])`` to ``out[r]`` (``coords`` sorted);
    with ``track``, return the largest ``|V_ij|`` read."""
    if compiled and HAVE_NUMBA:
        U, mask = _bits(V)
        return _from_bits(_compiled("_nb_rows_gather")(V, U, mask, rows, coords, q, out, nn, track), V)
    return _np_rows_gather(V, rows, coords, q, out, nn, track)


def cols_gather(
    VT: NDArray[Any], coords: NDArray[np.int64], rows: NDArray[np.int64], q: NDArray[Any],
    out: NDArray[np.float64], *, nn: bool = False, compiled: bool = True, track: bool = False,
) -> float:
    """Add ``sum_{j in coords} f(VT[j, rows[r]], q[j])`` to ``out[r]`` (``VT`` with
    contiguous rows, shape (N, n)); when ``rows`` lists every vector, ``out`` has length n
    and whole coordinate rows are streamed. With ``track``, return the largest ``|V_ij|``
    read."""
    all_rows = rows.size == VT.shape[1]
    if compiled and HAVE_NUMBA:
        UT, mask = _bits(VT)
        return _from_bits(
            _compiled("_nb_cols_gather")(VT, UT, mask, coords, rows, q, out, nn, all_rows, track), VT)
    return _np_cols_gather(VT, coords, rows, q, out, nn, all_rows, track)
