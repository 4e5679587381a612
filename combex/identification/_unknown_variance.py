"""T* bracketed with two certified ends, on every structure: the unknown-variance Gaussian
model (``uv_*``) and Bernoulli arms under the KL divergence (``kl_*``, :class:`_KLAlternatives`:
the same construction with a convex per-arm cost).

The characteristic time of Jourdan, Degenne & Kaufmann (2023) for Gaussian arms whose
variances are unknown: ``1 / T* = max_w min_{lambda in Alt(S)} sum_a w_a 1/2 log(1 + (mu_a -
lambda_a)^2 / sigma_a^2)`` (the per-arm cost is the KL from ``N(mu_a, sigma_a^2)`` to the
closest Gaussian of mean ``lambda_a`` and *any* variance). The answer ``S`` is the true
one (the best arm, the top K, ``argmax`` of a class).

**Alternatives.** An alternative member ``m`` of ``S`` (``lambda(m) >= lambda(S) + eps``)
moves only the arms of ``D = S xor m``: with ``u_a >= 0`` the move of arm a (down on ``S \\
m``, up on ``m \\ S``), the constraint is ``sum_{a in D} u_a >= c = mu(S) - mu(m) + eps``,
and the cost is increasing in each ``u_a``, so

    F_m(w) = inf { sum_{a in D} w_a h_a(u_a) : u >= 0, sum u = c },  h_a(u) = 1/2 log(1 + u^2 / sigma_a^2).

``h_a`` is convex on ``[0, sigma_a]`` and concave beyond, so the inner problem is not convex
(which is why T* is simplest on the pair forms, where ``|D| = 2`` and the
minimum is the root of a cubic: :func:`~combex.estimation._glr_unknown_variance.pair_glr_unknown_variance`).

**The bracket ``T_lo <= T* <= T_hi``**, both certified, for any set of alternatives:

* ``T_lo`` (so ``samples / (T_lo log(1/delta))`` is a certified *upper* bound of the ratio):
  any feasible ``u`` of an alternative gives ``F_m(v) <= sum_a v_a h_a(u_a)`` for *every*
  ``v`` (``u`` does not depend on ``v``). So ``1 / T* <= max_v min_r M_r . v``, the value of
  a matrix game whose rows ``M_r = (h_a(u_a))_a`` are candidate moves of the alternatives;
  any mixed strategy ``y`` of the row player bounds that value by ``max_a (y^T M)_a``
  (weak duality), which is how the bound is computed: from the LP's dual solution,
  re-evaluated exactly, so the LP solver's tolerance does not enter the certificate. A
  subset of the alternatives only raises the game's value, so ``T_lo`` stays a lower
  bound when the class cannot be enumerated.
* ``T_hi`` (needs *every* alternative): any ``w`` gives ``1 / T* >= min_m F_m(w)``, and
  ``F_m(w)`` is bounded below by Lagrangian weak duality, ``F_m(w) >= eta c + sum_a min_{u
  in [0, c]} (w_a h_a(u) - eta u)`` for every ``eta >= 0`` (each 1-d minimum is at the
  smaller root of ``eta u^2 - w_a u + eta sigma_a^2 = 0`` or at ``c``); on pairs
  ``F_m`` is exact.

The weights come from exponentiated subgradient ascent on the candidate moves, then a few
rounds of the game (its row player's ``v`` is a better ``w``; every round keeps the best of
both bounds). ``lower_bound_exact`` is True when every alternative is in and ``T_hi <=
(1 + 1e-3) T_lo``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

from ..estimation._glr_unknown_variance import kl_gaussian_unknown_variance, pair_glr_unknown_variance
from ..oracles import TopK
from ._bandit import _maxmin_weights, _set_alternatives
from ._swaps import exchange_pairs, is_matroid_base_class

__all__ = ["UVBound", "uv_characteristic_time", "uv_lower_bound_info", "kl_characteristic_time", "kl_lower_bound_info"]

#: A bracket narrower than this (relative) counts as exact.
EXACT_RTOL = 1e-3


@dataclass(frozen=True)
class UVBound:
    """``T_lo <= T*(mu, sigma^2) <= T_hi`` (``T_hi`` inf when not every alternative is in)
    and the weights ``w`` that gave ``T_hi``."""

    T_lo: float
    T_hi: float
    w: NDArray[np.float64]
    complete: bool

    @property
    def exact(self) -> bool:
        return self.complete and math.isfinite(self.T_hi) and self.T_hi <= (1.0 + EXACT_RTOL) * self.T_lo


def _h(u: Any, var: Any) -> Any:
    """The per-arm cost of moving a mean by u: ``1/2 log(1 + u^2 / var)``."""
    return kl_gaussian_unknown_variance(u, 0.0, var)


def _pair_moves(var: NDArray[np.float64], D: NDArray[np.intp], c: NDArray[np.float64],
                w: NDArray[np.float64]) -> NDArray[np.float64]:
    """The exact minimizing moves ``u`` (m, 2) of two-arm alternatives: with ``u_0 + u_1 = c``
    the minimum of ``w_0 h_0(u_0) + w_1 h_1(u_1)`` is the pair GLR of arms with means ``c``
    and ``0`` (the root of a cubic, :func:`pair_glr_unknown_variance`)."""

    i, j = D[:, 0], D[:, 1]
    zero = np.zeros(c.shape)
    _, x = pair_glr_unknown_variance(zero + c, zero, w[i], w[j], var[i], var[j], epsilon=0.0)
    ui = np.clip(c - x, 0.0, c)
    return np.stack([ui, c - ui], axis=1)


def _smaller_root(wD: NDArray[np.float64], vD: NDArray[np.float64],
                  e: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """The smaller root of ``e u^2 - w u + e var = 0`` (where ``w h'(u) = e``), written without
    cancellation as ``2 e var / (w + sqrt(w^2 - 4 e^2 var))``, and whether it is real."""
    disc = wD * wD - 4.0 * e * e * vD
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * e * vD / (wD + np.sqrt(np.maximum(disc, 0.0))), disc >= 0


def _box_min(vD: NDArray[np.float64], wD: NDArray[np.float64], L: NDArray[np.float64], R: NDArray[np.float64],
             eta: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``min_{u in [L, R]} w h(u) - eta u`` per arm and its argmin. For ``eta > 0`` the
    stationary points are the roots of ``eta u^2 - w u + eta var = 0``, the smaller a local
    minimum and the larger a local maximum, so the minimum is at ``L``, ``R`` or the smaller
    root clipped to ``[L, R]`` (for ``eta <= 0`` the function increases: at ``L``)."""
    e = eta[:, None]
    r, real = _smaller_root(wD, vD, e)
    r1 = np.where((e > 0) & real, r, L)
    cands = np.stack([L, R, np.clip(r1, L, R)])
    f = wD * _h(cands, vD) - e * cands
    k = np.argmin(f, axis=0)
    return np.take_along_axis(f, k[None], 0)[0], np.take_along_axis(cands, k[None], 0)[0]


def _box_dual(vD: NDArray[np.float64], wD: NDArray[np.float64], L: NDArray[np.float64], R: NDArray[np.float64],
              c: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A lower bound of ``min {sum_a w_a h_a(u_a) : u_a in [L_a, R_a], sum u = c}`` per row:
    ``max_eta g(eta)``, ``g(eta) = eta c + sum_a min_{[L_a, R_a]} (w_a h_a(u) - eta u)`` (weak
    Lagrangian duality: every eta gives a lower bound; g is concave, golden-section search
    on ``[0, max w / (2 sigma)]``, beyond which g cannot grow); +inf where the boxes cannot
    sum to c. Also the argmins at the best eta (a point of the boxes, not always summing to c)."""
    infeasible = (L.sum(axis=1) > c * (1 + 1e-12)) | (R.sum(axis=1) < c * (1 - 1e-12))
    lo = np.zeros(c.shape)
    hi = np.max(wD / (2.0 * np.sqrt(vD)), axis=1) * 1.0001 + 1e-300

    def g(eta: NDArray[np.float64]) -> NDArray[np.float64]:
        return eta * c + _box_min(vD, wD, L, R, eta)[0].sum(axis=1)

    gr = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo + (1 - gr) * (hi - lo), lo + gr * (hi - lo)
    ga, gb = g(a), g(b)
    for _ in range(60):  # golden-section search, one new evaluation per round
        left = ga >= gb
        hi = np.where(left, b, hi)
        lo = np.where(left, lo, a)
        new = np.where(left, lo + (1 - gr) * (hi - lo), lo + gr * (hi - lo))
        gn = g(new)
        a, b, ga, gb = (np.where(left, new, b), np.where(left, a, new),
                        np.where(left, gn, gb), np.where(left, ga, gn))
    eta = np.where(ga >= gb, a, b)
    best = np.maximum(np.maximum(ga, gb), g(np.zeros(c.shape)))
    return np.where(infeasible, np.inf, best), _box_min(vD, wD, L, R, eta)[1]


def _convex_moves(vD: NDArray[np.float64], wD: NDArray[np.float64], cap: NDArray[np.float64],
                  budget: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``min {sum_a w_a h_a(u_a) : 0 <= u_a <= cap_a, sum u = budget}`` with ``cap_a <=
    sigma_a`` (where ``h_a`` is convex) per row, and its minimizer: ``u_a(eta) = min(cap_a,
    smaller root of eta u^2 - w_a u + eta var_a)`` (``cap_a`` when no root) grows with the
    multiplier eta, so bisection on ``sum u(eta) = budget``; the value is inf where the caps
    sum below the budget. The returned u sums to the budget (the last step's remainder
    goes to the arms below their caps)."""

    def u_of(eta: NDArray[np.float64]) -> NDArray[np.float64]:
        r, real = _smaller_root(wD, vD, eta[:, None])
        return np.minimum(np.maximum(np.where(real, r, cap), 0.0), cap)

    lo = np.zeros(budget.shape)
    hi = np.max(np.where(cap > 0, wD / (2.0 * np.sqrt(vD)), 0.0), axis=1) * 1.0001 + 1e-300
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        over = u_of(mid).sum(axis=1) >= budget
        hi = np.where(over, mid, hi)
        lo = np.where(over, lo, mid)
    u = u_of(hi)
    room = cap - u_of(lo)
    short = budget - u_of(lo).sum(axis=1)
    tot = room.sum(axis=1)
    u = u_of(lo) + room * np.where(tot > 0, short / np.where(tot > 0, tot, 1.0), 0.0)[:, None]
    feasible = cap.sum(axis=1) >= budget * (1 - 1e-12)
    val = np.sum(wD * _h(u, vD), axis=1)
    return np.where(feasible, val, np.inf), u


def _dense_rows(alts: Any, costs: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """The per-entry costs (m, Dmax) of each move spread over the N arms: one (m, N) block
    per move, stacked."""
    out = []
    for vals in costs:
        M = np.zeros((alts.D.shape[0], alts.N))
        np.add.at(M, (alts._r[alts.mask], alts.D[alts.mask]), vals[alts.mask])
        out.append(M)
    return np.concatenate(out, axis=0)


class _Alternatives:
    """The alternatives' rows (``D`` -1 padded, gaps ``c``), the two-arm rows solved exactly."""

    def __init__(self, var: NDArray[np.float64], D: NDArray[np.intp], c: NDArray[np.float64], N: int) -> None:
        self.mask = D >= 0
        self.D = np.where(self.mask, D, 0)
        self.c, self.N = c, N
        self.var = var
        self.vD = np.where(self.mask, var[self.D], 1.0)
        self.pair = self.mask.sum(axis=1) == 2
        self.pair_cols = np.argsort(~self.mask[self.pair], axis=1, kind="stable")[:, :2]
        self._r = np.repeat(np.arange(D.shape[0]), D.shape[1]).reshape(D.shape)

    def subset(self, rows: NDArray[np.intp]) -> _Alternatives:
        return _Alternatives(self.var, np.where(self.mask[rows], self.D[rows], -1), self.c[rows], self.N)

    def _wD(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(self.mask, w[self.D], 1.0)

    def _set_pairs(self, u: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.pair.any():
            rows = np.flatnonzero(self.pair)
            cols = self.pair_cols
            Dp = np.take_along_axis(self.D[rows], cols, 1)
            u = u.copy()
            u[rows[:, None], cols] = _pair_moves(self.var, Dp, self.c[rows], w)
        return u

    def moves(self, w: NDArray[np.float64], dual: bool) -> list[NDArray[np.float64]]:
        """Feasible moves ``u`` (m, Dmax) of every alternative: the known-variance split
        ``u_a ~ sigma_a^2 / w_a``, everything on the one arm where it costs least, and
        (``dual``) the point of the best Lagrange multiplier rescaled to ``sum u = c``; the
        exact move on two-arm rows."""
        mask, c, wD, vD = self.mask, self.c, self._wD(w), self.vD
        share = np.where(mask, vD / np.maximum(wD, 1e-300), 0.0)
        kv = c[:, None] * share / share.sum(axis=1, keepdims=True)
        one_cost = np.where(mask, wD * _h(c[:, None], vD), np.inf)
        one = np.where(np.arange(mask.shape[1])[None, :] == np.argmin(one_cost, axis=1)[:, None], c[:, None], 0.0)
        out = [self._set_pairs(kv, w)]
        if (~self.pair).any():
            out.append(self._set_pairs(one, w))
            if dual:
                R = np.where(mask, c[:, None], 0.0)
                _, u = _box_dual(vD, wD, np.zeros_like(R), R, c)
                out.append(self._set_pairs(self._rescale(u, kv), w))
        return out

    def _rescale(self, u: NDArray[np.float64], fallback: NDArray[np.float64]) -> NDArray[np.float64]:
        u = np.where(self.mask, u, 0.0)
        tot = u.sum(axis=1, keepdims=True)
        ok = tot[:, 0] > 0
        return np.where(ok[:, None], u * self.c[:, None] / np.where(ok[:, None], tot, 1.0), fallback)

    def refined_moves(self, w: NDArray[np.float64], rows: NDArray[np.intp], grid: int = 24) -> NDArray[np.float64]:
        """Near-exact moves of the rows ``rows`` (others: the known-variance split): a
        global minimizer has at most one arm in its concave region (see :meth:`lower`), so
        the best of "every arm in ``[0, min(sigma_a, c)]``" (convex: :func:`_convex_moves`)
        and, for each arm j, ``u_j = t`` on a grid of ``[sigma_j, c]`` with the others
        convex on the budget ``c - t``."""
        u_all = self.moves(w, False)[0]
        if rows.size == 0:
            return u_all
        mask, vD, c = self.mask[rows], self.vD[rows], self.c[rows]
        wD = self._wD(w)[rows]
        sig = np.sqrt(vD)
        cap = np.where(mask, np.minimum(sig, c[:, None]), 0.0)
        best_val, best_u = _convex_moves(vD, wD, cap, c)
        for j in range(mask.shape[1]):
            ok = mask[:, j] & (sig[:, j] < c)
            if not ok.any():
                continue
            capj = cap.copy()
            capj[:, j] = 0.0
            for k in range(1, grid + 1):
                t = np.where(ok, sig[:, j] + (c - sig[:, j]) * k / grid, 0.0)
                val, u = _convex_moves(vD, wD, capj, np.maximum(c - t, 0.0))
                val = np.where(c - t <= 0, 0.0, val) + wD[:, j] * _h(t, vD[:, j])
                u[:, j] = t
                better = ok & (val < best_val)
                best_val = np.where(better, val, best_val)
                best_u = np.where(better[:, None], u, best_u)
        u_all = u_all.copy()
        u_all[rows] = np.where(mask, best_u, 0.0)
        return u_all

    def rows(self, moves: list[NDArray[np.float64]]) -> NDArray[np.float64]:
        """Rows ``M_r = (h_a(u_a))_a`` (dense over the N arms) of every candidate move."""
        return _dense_rows(self, [_h(u, self.vD) for u in moves])

    def lower(self, w: NDArray[np.float64], refine_below: float = -math.inf) -> NDArray[np.float64]:
        """Lower bounds of ``F_m(w)`` per alternative: exact on two-arm rows, the Lagrangian
        dual otherwise; rows whose dual is below ``refine_below`` are refined by splitting
        (a global minimizer has at most one arm in its concave region ``u_a > sigma_a``,
        where ``h_a'' < 0``: two such arms could trade mass along a direction of negative
        curvature. So the minimum is the least over the cases "every arm in ``[0,
        sigma_a]``" and "arm j in a piece of ``[sigma_j, c]``, the others in ``[0,
        sigma_a]``" of the case's minimum, each bounded by its own dual; on ``[0, sigma]``
        the problem is convex and the dual exact, and on the pieces of the concave arm the
        relaxation is a chord.)"""
        mask, c, wD, vD = self.mask, self.c, self._wD(w), self.vD
        if c.size > 64:
            # a cheap lower bound first: the dual at three multipliers around the one of the
            # quadratic (known-variance) problem, eta = c / sum(var / w); rows whose cheap
            # bound exceeds the least known-variance-split value (an upper bound of the
            # minimum) keep it, the others get the full dual search
            eta0 = c / np.sum(np.where(mask, vD / wD, 0.0), axis=1)
            R0 = np.where(mask, c[:, None], 0.0)
            crude = np.max([f * eta0 * c + _box_min(vD, wD, np.zeros_like(R0), R0, f * eta0)[0].sum(axis=1)
                            for f in (0.5, 1.0, 2.0)], axis=0)
            kv = self.moves(w, False)[0]
            top = float(np.min(np.sum(np.where(mask, wD * _h(kv, vD), 0.0), axis=1)))
            near = np.flatnonzero(crude < top)
            if near.size < c.size:
                out = crude.copy()
                out[near] = self.subset(near).lower(w, refine_below)
                return out
        R = np.where(mask, c[:, None], 0.0)
        out, _ = _box_dual(vD, wD, np.zeros_like(R), R, c)
        if self.pair.any():
            rows = np.flatnonzero(self.pair)
            u = self._set_pairs(np.zeros_like(R), w)[rows]
            out[rows] = np.sum(np.where(mask[rows], wD[rows] * _h(u, vD[rows]), 0.0), axis=1)
        todo = np.flatnonzero(~self.pair & (out < refine_below))
        if todo.size:
            out[todo] = np.maximum(out[todo], self._split_bound(todo, wD, pieces=16))
        return out

    def _split_bound(self, rows: NDArray[np.intp], wD: NDArray[np.float64], pieces: int) -> NDArray[np.float64]:
        mask, vD, c = self.mask[rows], self.vD[rows], self.c[rows]
        w_, d = wD[rows], mask.shape[1]
        sig = np.sqrt(vD)
        cap = np.where(mask, np.minimum(sig, c[:, None]), 0.0)
        Ls, Rs = [np.zeros_like(cap)], [cap]
        for j in range(d):
            for k in range(pieces):
                a = sig[:, j] + (c - sig[:, j]) * k / pieces
                b = sig[:, j] + (c - sig[:, j]) * (k + 1) / pieces
                L, R = np.zeros_like(cap), cap.copy()
                ok = mask[:, j] & (sig[:, j] < c)
                L[:, j] = np.where(ok, a, 0.0)
                R[:, j] = np.where(ok, b, cap[:, j])
                Ls.append(L)
                Rs.append(R)
        n = len(Ls)
        vals, _ = _box_dual(np.tile(vD, (n, 1)), np.tile(w_, (n, 1)), np.concatenate(Ls), np.concatenate(Rs),
                            np.tile(c, n))
        return vals.reshape(n, rows.size).min(axis=0)


def _kl_move(m: Any, u: Any) -> Any:
    """``kl(m, m - u)`` of a Bernoulli mean m moved down by ``u in [0, m)`` (an upward move
    of mu is a downward move of ``1 - mu``), in log1p form, without clipping."""
    m = np.asarray(m, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(m > 0, -m * np.log1p(-u / np.where(m > 0, m, 1.0)), 0.0)
        b = np.where(m < 1, -(1.0 - m) * np.log1p(u / np.where(m < 1, 1.0 - m, 1.0)), 0.0)
    return a + b


class _KLAlternatives:
    """Alternatives of a Bernoulli instance under the KL divergence: the arms of the answer
    move down, the others up, each by ``u_a`` in ``[0, m_a)`` (``m_a`` = mu_a or ``1 - mu_a``),
    ``sum u = c``, cost ``sum w_a kl(m_a, m_a - u_a)``: a convex problem, whose minimizer
    for a multiplier eta is the root of ``w u = eta (m - u)(1 - m + u)`` in every arm
    (bisection on eta for ``sum u = c``). Alternatives the means cannot reach (``sum m_a <=
    c``) are not alternatives and are dropped."""

    pair: NDArray[np.bool_]

    def __init__(self, mu: NDArray[np.float64], S: NDArray[np.bool_], D: NDArray[np.intp], c: NDArray[np.float64],
                 N: int) -> None:
        mask = D >= 0
        Dz = np.where(mask, D, 0)
        mD = np.where(mask, np.where(S[Dz], mu[Dz], 1.0 - mu[Dz]), 0.0)
        keep = mD.sum(axis=1) > c * (1 + 1e-12)
        self.mu, self.S, self.N = mu, S, N
        self.mask, self.D, self.c, self.mD = mask[keep], Dz[keep], c[keep], mD[keep]
        self.pair = np.zeros(self.c.shape, dtype=bool)
        self._r = np.repeat(np.arange(self.D.shape[0]), self.D.shape[1]).reshape(self.D.shape)

    def subset(self, rows: NDArray[np.intp]) -> _KLAlternatives:
        return _KLAlternatives(self.mu, self.S, np.where(self.mask[rows], self.D[rows], -1), self.c[rows], self.N)

    def _u(self, wD: NDArray[np.float64], eta: NDArray[np.float64]) -> NDArray[np.float64]:
        e = eta[:, None]
        m = self.mD
        q = m * (1.0 - m)
        b = wD - e * (2.0 * m - 1.0)
        root = np.sqrt(b * b + 4.0 * e * e * q)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.where(b > 0, 2.0 * e * q / (b + root), (root - b) / (2.0 * e))
        return np.where(self.mask & (e > 0), np.clip(u, 0.0, m), 0.0)

    def _solve(self, w: NDArray[np.float64], steps: int = 100) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """A feasible move near the minimizer (``steps`` of bisection on eta: the move sums
        to c whatever the accuracy) and the dual value at that eta (a lower bound)."""
        wD = np.where(self.mask, np.maximum(w[self.D], 1e-300), 1.0)
        c = self.c
        lo, hi = np.zeros(c.shape), np.ones(c.shape)
        for _ in range(400):
            short = self._u(wD, hi).sum(axis=1) < c
            if not short.any():
                break
            hi = np.where(short, 2.0 * hi, hi)
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            over = self._u(wD, mid).sum(axis=1) >= c
            hi = np.where(over, mid, hi)
            lo = np.where(over, lo, mid)
        u_lo, u_hi = self._u(wD, lo), self._u(wD, hi)
        # a feasible move: between the two, summing to c exactly
        gap = (u_hi - u_lo).sum(axis=1)
        t = np.where(gap > 0, (c - u_lo.sum(axis=1)) / np.where(gap > 0, gap, 1.0), 1.0)
        u = u_lo + np.clip(t, 0.0, 1.0)[:, None] * (u_hi - u_lo)
        cost = np.where(self.mask, wD * _kl_move(self.mD, u_hi), 0.0).sum(axis=1)
        dual = hi * c + cost - hi * u_hi.sum(axis=1)
        return u, dual

    def moves(self, w: NDArray[np.float64], dual: bool) -> list[NDArray[np.float64]]:
        return [self._solve(w, 100 if dual else 30)[0]]  # the ascent needs only a good feasible move

    def refined_moves(self, w: NDArray[np.float64], rows: NDArray[np.intp]) -> NDArray[np.float64]:
        return self._solve(w)[0]

    def lower(self, w: NDArray[np.float64], refine_below: float = -math.inf) -> NDArray[np.float64]:
        return np.maximum(self._solve(w)[1], 0.0)

    def rows(self, moves: list[NDArray[np.float64]]) -> NDArray[np.float64]:
        return _dense_rows(self, [_kl_move(self.mD, u) for u in moves])


def _game_upper(M: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """A certified upper bound of ``max_{v in simplex} min_r M_r . v`` (from the LP's dual
    solution y, re-evaluated as ``max_a (y^T M)_a``) and the LP's v."""

    R, N = M.shape
    scale = float(np.max(M)) or 1.0
    cost = np.zeros(N + 1)
    cost[-1] = -1.0
    A_ub = np.hstack([-M / scale, np.ones((R, 1))])
    A_eq = np.hstack([np.ones((1, N)), np.zeros((1, 1))])
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(R), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * N + [(None, None)], method="highs")
    if res.status != 0:  # pragma: no cover - an LP of this shape is always feasible and bounded
        return float(np.max(M.max(axis=0))), np.full(N, 1.0 / N)
    y = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    if not y.sum() > 0:  # pragma: no cover
        y = np.full(R, 1.0 / R)
    y /= y.sum()
    v = np.maximum(np.asarray(res.x[:N], dtype=float), 0.0)
    return float(np.max(y @ M)), v / v.sum() if v.sum() > 0 else np.full(N, 1.0 / N)


def uv_characteristic_time(mu: Any, var: Any, D: NDArray[np.intp], c: NDArray[np.float64], *,
                           complete: bool = True, iters: int | None = None, rounds: int | None = None) -> UVBound:
    """Bracket ``T_lo <= T*(mu, sigma^2) <= T_hi`` of the unknown-variance model over the
    alternatives given as rows of ``D`` (arm indices of ``S xor m``, -1 padded) with gaps
    ``c = mu(S) - mu(m) + eps`` (see the module docstring). ``complete``: the rows are every
    alternative (else ``T_hi`` is inf). A non-positive gap (a tie: another member is as
    good) gives ``T* = inf``."""
    mu, D, c, trivial = _checked(mu, D, c, complete)
    if trivial is not None:
        return trivial
    var = np.broadcast_to(np.asarray(var, dtype=np.float64), mu.shape)
    return _bracket(_Alternatives(var, D, c, mu.shape[0]), mu.shape[0], complete, iters, rounds)


def _checked(mu: Any, D: Any, c: Any, complete: bool) -> tuple[Any, Any, Any, UVBound | None]:
    """The arrays, and the bound itself when trivial: no alternative (T* = 0) or a
    non-positive gap (a tie: T* = inf)."""
    mu = np.asarray(mu, dtype=np.float64)
    N = mu.shape[0]
    D = np.atleast_2d(np.asarray(D, dtype=np.intp))
    c = np.asarray(c, dtype=np.float64)
    trivial = None
    if D.shape[0] == 0:
        trivial = UVBound(0.0, 0.0, np.full(N, 1.0 / N), complete)
    elif np.any(c <= 0):
        trivial = UVBound(math.inf, math.inf, np.full(N, 1.0 / N), complete)
    return mu, D, c, trivial


def kl_characteristic_time(mu: Any, S: Any, D: NDArray[np.intp], c: NDArray[np.float64], *,
                           complete: bool = True, iters: int | None = None, rounds: int | None = None) -> UVBound:
    """The same bracket for Bernoulli arms and the KL divergence (``kl(mu_a, lambda_a)``,
    convex in the move, so the Lagrangian bound is exact up to the search and no split is
    needed); ``S`` the answer (its arms move down, the others up)."""
    mu, D, c, trivial = _checked(mu, D, c, complete)
    if trivial is not None:
        return trivial
    alts = _KLAlternatives(mu, np.asarray(S, dtype=bool), D, c, mu.shape[0])
    return _bracket(alts, mu.shape[0], complete, iters, rounds)


def _bracket(alts: Any, N: int, complete: bool, iters: int | None, rounds: int | None) -> UVBound:
    """The ascent, Kelley's cutting planes and the final refinement (module docstring)."""
    m = alts.c.shape[0]
    if m == 0:  # nothing the means can reach: nothing to identify
        return UVBound(0.0, 0.0, np.full(N, 1.0 / N), complete)
    small = alts.D.size <= 20_000  # else thousands of alternatives over tens of arms: fewer steps
    if rounds is None:
        rounds = 30 if small else 10
    if iters is None:
        iters = 300 if small else 100

    def costs(w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        M = alts.rows(alts.moves(w, False))
        F = (M @ w).reshape(-1, m)
        k = np.argmin(F, axis=0)
        return F[k, np.arange(m)], M.reshape(-1, m, N)[k, np.arange(m)]

    def cuts(w: NDArray[np.float64]) -> NDArray[np.float64]:
        """The rows of the moves at w of the alternatives within 2x of the least value there
        (by the cheap moves; every row is valid, far ones only slow the LP)."""
        F = costs(w)[0]
        keep = np.flatnonzero(F <= 2.0 * F.min() + 1e-300)
        sub = alts.subset(keep)
        M = sub.rows(sub.moves(w, True)).reshape(-1, keep.size, N)
        k = np.argmin(M @ w, axis=0)
        return M[k, np.arange(keep.size)]

    w = _maxmin_weights(costs, N, iters=iters)
    best_lo, best_w = float(alts.lower(w).min()), w
    best_up = math.inf
    rows = cuts(w)  # a subset of the alternatives only raises the game's value: still a bound
    v = w
    for _ in range(rounds):  # Kelley's cutting planes: every row stays a valid upper bound
        up, v = _game_upper(rows)
        best_up = min(best_up, up)
        v = np.maximum(v, 1e-12)  # any weights give a lower bound; zero ones make the pair cubic degenerate
        v /= v.sum()
        lv = float(alts.lower(v).min())
        if lv > best_lo:
            best_lo, best_w = lv, v
        if best_up <= (1.0 + EXACT_RTOL / 4) * best_lo:
            break
        rows = np.concatenate([rows, cuts(v)], axis=0)
    if best_up > (1.0 + EXACT_RTOL / 4) * best_lo:  # refine the near-binding rows once
        lows = alts.lower(best_w)
        near = np.flatnonzero(~alts.pair & (lows < best_up))
        for w_ in (best_w, v):
            rows = np.concatenate([rows, alts.rows([alts.refined_moves(w_, near)])], axis=0)
        best_up = min(best_up, _game_upper(rows)[0])
        best_lo = max(best_lo, float(alts.lower(best_w, refine_below=best_up).min()))
    T_lo = 1.0 / best_up if best_up > 0 else math.inf
    T_hi = (1.0 / best_lo if best_lo > 0 else math.inf) if complete else math.inf
    return UVBound(T_lo, max(T_hi, T_lo), best_w, complete)


_CACHE: dict[Any, UVBound] = {}


def _alternatives(mu: NDArray[np.float64], K: int, dc: Any, eps: float,
                  max_members: int) -> tuple[NDArray[np.intp], NDArray[np.float64], bool, NDArray[np.bool_]] | None:
    """``(D, c, complete, S)`` of the true answer S; None when there is nothing to identify."""
    N = mu.shape[0]
    if dc is None and (K == 1 or eps == 0):  # best arm, or Best-K at eps = 0: the pairs in x out
        order = np.argsort(-mu, kind="stable")
        ins, outs = order[:K], order[K:]
        I, J = np.repeat(ins, outs.size), np.tile(outs, ins.size)
        S = np.zeros(N, dtype=bool)
        S[ins] = True
    elif dc is not None and eps == 0 and is_matroid_base_class(dc):  # the exchangeable pairs
        S = np.asarray(dc.argmax(mu), dtype=bool)
        ins, outs, E = exchange_pairs(dc, S)
        a, b = np.nonzero(E)
        I, J = ins[a], outs[b]
    else:  # members: S xor m of every member m (enumerated) or of the one-change members
        if dc is None:

            dc = TopK(N, K)
        S = np.asarray(dc.argmax(mu), dtype=bool)
        alts, complete = _set_alternatives(mu, S, dc, 1, max_members)
        if not alts:
            return None
        diff = np.array([S ^ m for m in alts], dtype=bool)
        width = int(diff.sum(axis=1).max())
        D = np.full((len(alts), width), -1, dtype=np.intp)
        for r, row in enumerate(diff):
            idx = np.flatnonzero(row)
            D[r, : idx.size] = idx
        muS = float(mu[S].sum())
        c = np.array([muS - float(mu[m].sum()) + eps for m in alts])
        return D, c, complete, S
    if I.size == 0:
        return None
    return np.stack([I, J], axis=1), mu[I] - mu[J] + eps, True, S


def uv_lower_bound_info(env: Any, delta: float, samples: int, K: int, dc: Any, eps: float, *,
                        max_members: int = 5000) -> dict[str, Any]:
    """``lower_bound_ratio`` of an unknown-variance run against T*(mu, sigma^2) of the
    unknown-variance model (module docstring), for the best arm, Best-K, and every decision
    class, at every epsilon. The ratio is ``samples / (T_lo log(1/delta))``, a certified
    upper bound of the exact ratio; ``lower_bound_ratio_range`` is ``(samples / (T_hi
    log(1/delta)), ratio)`` (its low end 0 when the class could not be enumerated), and
    ``lower_bound_exact`` says whether the two ends agree to 0.1%. The alternatives: the
    pairs (best arm; Best-K and classes of matroid bases at epsilon = 0, where a base is
    optimal iff no single exchange improves it), every member otherwise (enumerated up to
    ``max_members``, else the one-change members found by the oracle). With epsilon > 0 the
    answer is the best one, as for the known-variance T*. ``{}`` without a truth (means and
    per-arm sigma)."""
    means, sig = getattr(env, "means", None), getattr(env, "sigma", None)
    if not callable(means) or sig is None:
        return {}
    mu = np.asarray(means(), dtype=np.float64)
    var = np.ascontiguousarray(np.broadcast_to(np.asarray(sig() if callable(sig) else sig, dtype=np.float64) ** 2,
                                               mu.shape))
    return _info("unknown-variance", mu, var, delta, samples, K, dc, eps, max_members)


def kl_lower_bound_info(mu: Any, delta: float, samples: int, K: int, dc: Any, eps: float, *,
                        max_members: int = 5000) -> dict[str, Any]:
    """The same for Bernoulli arms of means ``mu`` and the KL divergence (T* of the Bernoulli
    model; :func:`kl_characteristic_time`)."""
    mu = np.asarray(mu, dtype=np.float64)
    return _info("bernoulli", mu, None, delta, samples, K, dc, eps, max_members)


def _info(model: str, mu: NDArray[np.float64], var: Any, delta: float, samples: int, K: int, dc: Any, eps: float,
          max_members: int) -> dict[str, Any]:
    key = (model, mu.tobytes(), None if var is None else var.tobytes(), K, id(dc) if dc is not None else None,
           eps, max_members)
    bound = _CACHE.get(key)
    if bound is None:
        alts = _alternatives(mu, K, dc, eps, max_members)
        if alts is None:
            return {}
        D, c, complete, S = alts
        if model == "bernoulli":
            bound = kl_characteristic_time(mu, S, D, c, complete=complete)
        else:
            bound = uv_characteristic_time(mu, var, D, c, complete=complete)
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = bound
    if not math.isfinite(bound.T_lo) or bound.T_lo <= 0:
        return {}
    L = math.log(1.0 / delta)
    hi = samples / (bound.T_lo * L)
    lo = samples / (bound.T_hi * L) if math.isfinite(bound.T_hi) else 0.0
    what = "the unknown-variance model" if model != "bernoulli" else "the Bernoulli model (KL)"
    if bound.exact:
        kind = f"exact to 0.1% (T* of {what} over every alternative, bracketed)"
    elif bound.complete:
        kind = (f"certified upper bound of the ratio (T* of {what} bracketed in "
                f"[{bound.T_lo:.4g}, {bound.T_hi:.4g}] over every alternative)")
    else:
        kind = (f"certified upper bound of the ratio (T* of {what} bounded below over the "
                "one-change alternatives found by the oracle; the class is too large to enumerate)")
    return {"T_star": bound.T_lo, "lower_bound_samples": bound.T_lo * L, "lower_bound_ratio": hi,
            "lower_bound_ratio_range": (lo, hi), "lower_bound_ratio_kind": kind, "lower_bound_exact": bound.exact}
