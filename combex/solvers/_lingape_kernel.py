"""One LinGapE round (Algorithm 2 of Xu, Honda & Sugiyama 2018, greedy rule (9)) for one
state, as a compiled loop.

:meth:`LinGapEExploration._evaluate` scores m states with about thirty numpy calls; for the
single state of an ask / tell round those calls on arrays of K entries are the whole cost
(about 40 us on the Soare instance, against well under a microsecond of arithmetic).
:func:`lingape_round` does the same arithmetic, operation for operation (same operands,
same order, no fused multiply-add, first index on ties), so its ``(i_t, j_t, B(t),
a_{t+1})`` are bit-identical to the numpy path's (tested); C_t is computed by the caller
with the numpy path's own expression.

:func:`lingape_switch` is a change of arm (the fold of the streak into u, g and the rows of
G, then the new streak's vectors) and :func:`lingape_block` the rounds of a streak drawn
ahead by the fast path, up to the first that stops or changes arm; both with the numpy
path's operations in its order (tested bit for bit against it).

numba is optional (the ``mips`` extra). The kernels are compiled (or loaded from numba's
on-disk cache) the first time an exploration has run :data:`COMPILE_AFTER` rounds, so short
runs never pay for the compilation; without numba the numpy path runs.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable

import numpy as np

from .._jit import compiled

__all__ = [
    "HAVE_NUMBA", "ENABLED", "COMPILE_AFTER", "MAX_ARMS", "lingape_round", "lingape_switch", "compiled_round",
    "compiled_switch",
    "lingape_block", "compiled_block",
]

HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: Whether explorations use the compiled round (when numba is installed); set it to False
#: to run the numpy path (the tests compare the two).
ENABLED = True

#: Rounds of an exploration on the numpy path before the kernel is compiled and used.
COMPILE_AFTER = 512

#: Largest K for the kernel: LinGapE keeps the rows of G = X A^{-1} X^T it has computed
#: in a (K, K) buffer updated at every change of arm (beyond, per streak only; and one round
#: is then dominated by O(K) numpy work anyway).
MAX_ARMS = 64


def lingape_round(
    u: Any, g: Any, ga: Any, ga2: Any, rows: Any, have: Any,
    kf: float, ssum: float, ua: float, q: float, C: float, greedy: bool,
) -> tuple[int, int, float, int, int]:
    """One round at the state 'base + kf pulls of the streak arm with reward sum ssum'.

    ``u``, ``g``: ``X theta_hat`` and ``||x_k||^2_{A^{-1}}`` of the base; ``ga``, ``ga2``:
    column a of G and its square; ``rows[i]`` row i of the base G where ``have[i]``;
    ``ua = u[a]``; ``q = G[a, a]``; ``C`` = C_t. Returns ``(i, j, B, next, need)``: when a
    needed row of G is missing, ``need`` is its index (the caller computes it and calls
    again), else -1. ``next`` is -1 unless ``greedy``.
    """
    K = u.shape[0]
    return round_into(u, g, ga, ga2, rows, have, kf, ssum, ua, q, C, greedy, np.empty(K), np.empty(K), np.empty(K))


def round_into(
    u: Any, g: Any, ga: Any, ga2: Any, rows: Any, have: Any,
    kf: float, ssum: float, ua: float, q: float, C: float, greedy: bool, U: Any, Gd: Any, Wi: Any,
) -> tuple[int, int, float, int, int]:
    """:func:`lingape_round` with its three work vectors (length K) given: the block loop
    allocates them once."""
    K = u.shape[0]
    kq = kf * q
    den = 1.0 + kq
    coef = (ssum - kf * ua) / den
    fk = kf / den
    i = 0
    for k in range(K):
        U[k] = u[k] + coef * ga[k]
        Gd[k] = g[k] - fk * ga2[k]
        if U[k] > U[i]:
            i = k
    if not have[i]:
        return i, -1, 0.0, -1, i
    fi = fk * ga[i]
    Ui = U[i]
    Gi = Gd[i]
    j = 0
    B = 0.0
    for k in range(K):
        w = rows[i, k] - fi * ga[k]
        Wi[k] = w
        n2 = (Gd[k] - 2.0 * w) + Gi
        if not n2 >= 0.0:  # np.maximum(n2, 0.0) (NaN kept)
            n2 = 0.0 if n2 < 0.0 else n2
        f = (U[k] - Ui) + C * np.sqrt(n2)
        if k == i:
            f = 0.0
        if k == 0 or f > B:
            j, B = k, f
    if not greedy:
        return i, j, B, -1, -1
    if not have[j]:
        return i, j, B, -1, j
    fj = fk * ga[j]
    nxt = 0
    best = 0.0
    for k in range(K):
        s = Wi[k] - (rows[j, k] - fj * ga[k])
        s = s * s
        s = s / (1.0 + Gd[k])
        if k == 0 or s > best:
            nxt, best = k, s
    return i, j, B, nxt, -1


def lingape_switch(
    u: Any, g: Any, G: Any, have: Any, ga: Any, ga2: Any,
    kf: float, ssum: float, ua: float, q: float, b: int, load: bool,
) -> tuple[bool, float, float]:
    """A change of arm: fold the streak (``kf`` pulls of arm a, reward sum ``ssum``) into the
    base, in place, then load the streak vectors of the new arm ``b``.

    The fold is the count-weighted Sherman-Morrison update of ``u = X theta_hat``,
    ``g_k = ||x_k||^2_{A^{-1}}`` and the rows of ``G = X A^{-1} X^T`` (``ga``, ``ga2``:
    column a of G and its square, ``ua = u[a]``, ``q = G[a, a]``), with the numpy path's
    operations in its order (:meth:`LinGapEExploration._fold`). Then, when ``load`` and row
    b of G is present, ``ga <- G[b]``, ``ga2 <- ga * ga`` and the return is
    ``(True, G[b, b], u[b])``; else ``(False, 0, 0)`` and the caller does it (a refresh of
    the base, or a row of G to compute).
    """
    K = u.shape[0]
    den = 1.0 + kf * q
    fk = kf / den
    coef = (ssum - kf * ua) / den
    for k in range(K):
        u[k] = u[k] + coef * ga[k]
        g[k] = g[k] - fk * ga2[k]
    for i in range(K):
        t = fk * ga[i]
        for k in range(K):
            G[i, k] = G[i, k] - t * ga[k]
    if not load or not have[b]:
        return False, 0.0, 0.0
    for k in range(K):
        v = G[b, k]
        ga[k] = v
        ga2[k] = v * v
    return True, ga[b], u[b]


def lingape_block(
    u: Any, g: Any, ga: Any, ga2: Any, rows: Any, have: Any, k0: int, Ss: Any, ua: float, q: float,
    C: Any, eps: float, a: int, start: int, out_i: Any, out_j: Any, out_B: Any, out_next: Any,
) -> tuple[int, int]:
    """Rounds ``r = start, start + 1, ...`` of a streak of arm ``a`` drawn ahead (the fast
    path of :meth:`LinGapEExploration._simulate`): state r is the base plus ``k0 + r + 1``
    pulls of a with reward sum ``Ss[r]``, and C_t ``C[r]`` (computed by the caller with
    :meth:`LinGapEExploration._radius`). Each round is :func:`lingape_round`; its
    ``(i, j, B, next)`` go to ``out_*[r]``. Stops after the first round that stops
    (``B <= eps``) or changes arm, or at the end of the block. Returns ``(n, need)``:
    ``n`` rounds done (from 0), or, when a row of G is missing at round r, ``(r, row)``
    (the caller computes the row and calls again with ``start = r``).
    """
    m = Ss.shape[0]
    K = u.shape[0]
    U, Gd, Wi = np.empty(K), np.empty(K), np.empty(K)
    for r in range(start, m):
        i, j, B, nxt, need = round_into(u, g, ga, ga2, rows, have, float(k0 + r + 1), Ss[r], ua, q, C[r], True,
                                        U, Gd, Wi)
        if need >= 0:
            return r, need
        out_i[r] = i
        out_j[r] = j
        out_B[r] = B
        out_next[r] = nxt
        if B <= eps or nxt != a:
            return r + 1, -1
    return m, -1


def compiled_round() -> Callable[..., Any] | None:
    """The numba-compiled :func:`lingape_round` (compiled once per process), or None
    without numba."""
    return compiled(lingape_round, helpers=(round_into,), boundscheck=False)


def compiled_switch() -> Callable[..., Any] | None:
    """The numba-compiled :func:`lingape_switch` (compiled once per process), or None
    without numba."""
    return compiled(lingape_switch, boundscheck=False)


def compiled_block() -> Callable[..., Any] | None:
    """The numba-compiled :func:`lingape_block` (its rounds are :func:`lingape_round`,
    compiled inline), or None without numba."""
    return compiled(lingape_block, helpers=(round_into,), boundscheck=False)
