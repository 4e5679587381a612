"""The GLR pairs loop compiled: Top-Two (EB-TCI with IDS or a fixed beta), Track-and-Stop
with D-tracking, Frank-Wolfe sampling and CombGame on a simulated Gaussian environment, many
samples per call.

The fast path of :meth:`~combex.solvers.glr.GLRExploration._simulate` spends
30-60 us of Python per sample on arithmetic worth well under a microsecond at K <= 100.
:func:`top_two_steps` runs the same samples -- the leader coin of the algorithm's
generator and the selection (:meth:`_TopTwoExploration.next_arm`), or D-tracking's
selection (:meth:`_TrackAndStopExploration.next_arm`: forced exploration, then
``argmax t w_a - N_a``; w* is solved at the step where :meth:`_TrackAndStopExploration._solve`
would solve it again, in the loop by the functions Python's solve calls compiled (Theorem 5's
root for the best arm, the barrier method on the complete pairs for Best-K; the loop returns
:data:`RESOLVE` where Python's solve takes another way: a pair with no gap, a failed solve),
or Frank-Wolfe's
(:meth:`_FWExploration.next_arm` with one r-active alternative: its gradient's vertex; with
two or more the loop returns :data:`PYTHON_STEP` and the step's arm comes from Python's
game, its reward drawn by the loop), or CombGame's (:meth:`_CombGameExploration.next_arm`:
AdaHedge's play and update by the functions the learner calls compiled, nature's closest pair
and the optimistic gains), the environment's reward
(as :meth:`GaussianArms.pull_many <combex.environments.GaussianArms.pull_many>` draws it for one arm), the one-arm update
(:meth:`GLRExploration._update_one`, Welford's deviation included), the schedule of the
test of the declared scale and the GLR check against the per-pair thresholds
(:meth:`GLRExploration._check_stop`) -- with the Python path's operations in its order
(same operands, no fused multiply-add, first index on ties, NaN first as numpy's
``argmin``), so the trajectory, the result and the final states of both generators are
bit-identical (tested):

* the draws: numba's ``Generator.random`` and ``standard_normal`` are numpy's algorithms on
  the same bit generator (its state advances in place), bit for bit;
* ``np.log`` of the counts in the challenger's penalty may differ from the C library's
  ``log`` in the last bit (numpy's own vectorized logarithm): the kernel reads them from a
  table computed by ``np.log`` (:func:`log_table`);
* ``x ** 2`` of a numpy float is the C library's ``pow(x, 2.0)``, which is not always
  ``x * x``: the kernel calls ``pow`` with an exponent it only knows at run time (so the
  compiler cannot turn it into a product);
* the per-arm threshold terms (``math.log1p`` / ``math.log`` of Python) are the C
  library's, as in the kernel;
* the test of the declared scale (every 50 samples at least) is evaluated in the kernel
  with a margin: when it could reject, the kernel hands the sample over to Python before the
  test; otherwise the test's record is rebuilt at the exit from the residual sums of the
  last test (:func:`advance`).

The same function serves ask / tell one sample at a time (a live study, or any caller of
``ask`` / ``tell`` with ``batch_size=1``): specialized without generators, it folds in one
reward told from outside and checks (:func:`tell_one`), and :func:`top_two_select` picks the
next arm from the kept pairs and a leader coin drawn in Python (:func:`select_one`), the
other rules' selections likewise (:func:`track_one`, :func:`rule_one`); the pairs
are kept between calls in a :class:`Steps` the exploration drops whenever its statistics
change otherwise. About 40 us of Python a sample become some 10 us, most of it the ask / tell
protocol's own checks (benchmarks/optimal.py, section ``ask-tell``).

numba is optional (the ``mips`` extra). The kernel is compiled (or loaded from numba's
on-disk cache) the first time an exploration has run :data:`COMPILE_AFTER` rounds, so short
runs never pay for the compilation; once compiled, every run of the process uses it from its
first check. Without numba the Python path runs.

Why one file of about 1,000 lines: the loop and every helper it inlines (the pairs, the
four rules' steps, the test of the scale) are compiled together into one function, and each
mirrors a method of the Python rules operation by operation; kept side by side, a change to
the shared state's slots (``I_*``, ``J_*``, ``F_*``) is made in one place, where every reader
of them is.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Any, Callable

import numpy as np

from .._jit import compiled
from .._state import generator_state, restore_generator
from ..environments import Environment, GaussianArms
from ..estimation._glr import GLRThreshold
from ..estimation._variance import NOISE_CHECK_ALPHA, _L_UP
from ..allocations import AdaHedge, hedge_update, hedge_weights
from ..identification._bandit import gaussian_bai_weights
from ..identification._pairs_kernel import COMPLETE_PAIRS_HELPERS, complete_pairs_weights
from .stopping import PairStop

__all__ = ["HAVE_NUMBA", "ENABLED", "COMPILE_AFTER", "CHUNK", "top_two_steps", "compiled_steps", "log_table",
           "top_two_select", "compiled_select", "Steps", "select_one", "track_one", "rule_one", "rule_step", "tell_one",
           "applicable", "advance"]

HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: Whether explorations use the compiled loop (when numba is installed); set it to False
#: to run the Python path (the tests compare the two).
ENABLED = True

#: Rounds of an exploration on the Python path before the kernel is compiled and used.
COMPILE_AFTER = 256

#: Samples per kernel call at least (a call then grows with the run: the log table is
#: extended geometrically).
CHUNK = 4096

# exit codes of top_two_steps
STOPPED, STEPS_DONE, SCALE_TEST, RESOLVE, PYTHON_STEP = 0, 1, 2, 3, 4

# sampling rules of top_two_steps
TOP_TWO, D_TRACKING, FW_SAMPLING, COMB_GAME = 0, 1, 2, 3

# slots of the integer state vector
I_NOBS, I_NOISE_N, I_SAMPLES, I_ROUNDS, I_ANSWER, I_CI, I_CJ, I_TESTED_AT, I_TESTS, I_STEPS, I_TRACE = range(11)


def _arm_term(n: int, mixture: bool, rho: float) -> float:
    """:meth:`GLRThreshold.arm_term <combex.identification.GLRThreshold.arm_term>` of the Gaussian
    pair thresholds: the same C library calls."""
    m = n if n > 1 else 1
    if mixture:
        return 0.5 * math.log1p(m / rho)
    lg = math.log(m)
    return 2.0 * math.log(4.0 + lg)


def _before(mu: Any, a: int, b: int) -> bool:
    """Whether arm a comes before arm b in ``argsort(-mu, kind="stable")`` (larger mean
    first, lower index first on ties, NaN last)."""
    ka, kb = -mu[a], -mu[b]
    if ka != ka:
        return kb != kb and a < b
    if kb != kb or ka < kb:
        return True
    return ka == kb and a < b


def _argmin(v: Any, P: int) -> int:
    """numpy's ``argmin`` of ``v[:P]``: the first minimum, or the first NaN."""
    best = math.inf
    kb = 0
    for k in range(P):
        x = v[k]
        if not (x >= best):
            if x != x:
                return k
            best = x
            kb = k
    return kb


def _argmax(v: Any, P: int) -> int:
    """numpy's ``argmax`` of ``v[:P]``: the first maximum, or the first NaN."""
    best = -math.inf
    kb = 0
    for k in range(P):
        x = v[k]
        if not (x <= best):
            if x != x:
                return k
            best = x
            kb = k
    return kb


def _ranks(mask: Any, ins: Any, outs: Any, rank: Any) -> None:
    """The members and the others of the answer in increasing order (numpy's order of the
    pairs: ``I = repeat(ins, len(outs))``, ``J = tile(outs, len(ins))``), and each arm's
    position in its list."""
    ni, no = 0, 0
    for a in range(mask.shape[0]):
        if mask[a]:
            ins[ni] = a
            rank[a] = ni
            ni += 1
        else:
            outs[no] = a
            rank[a] = no
            no += 1


def _pairs(q0: int, q1: int, r0: int, r1: int, NO: int, ins: Any, outs: Any, T: Any, mu: Any, h: Any, inv: Any,
           topk: bool, eps: float, s2x2: float, mixture: bool, rho: float, pconst: float, logtab: Any, zv: Any,
           bv: Any, vs: Any, vp: Any) -> None:
    """Pairs ``k = q * NO + r`` = (``ins[q]``, ``outs[r]``) for q in [q0, q1), r in [r0, r1)
    at the current statistics: ``z`` (pair_costs), ``b`` (PairStop.pair_thresholds), ``z - b`` (the
    check's argmin) and ``z + pen`` (the selection's)."""
    for q in range(q0, q1):
        i = ins[q]
        ii = inv[i]
        mi = mu[i]
        hi = pconst + h[i]
        for r in range(r0, r1):
            j = outs[r]
            k = q * NO + r
            ij = inv[j]
            gap = (mi - mu[j]) + eps
            s = ii + ij
            z = gap * gap / (s2x2 * s) if gap > 0 else 0.0
            if mixture:
                b = ((s + rho * (ii * ii + ij * ij)) / s) * (hi + h[j])
            else:
                b = hi + h[j]
            zv[k] = z
            bv[k] = b
            vs[k] = z - b
            vp[k] = z + (logtab[T[i] + T[j]] if topk else logtab[T[j]])


# the kept state (:class:`Steps`): the integer vector holds the I_* slots, then these, then
# the answer's members, the others and each arm's rank in its list; the float vector the
# last check's statistic and threshold and the samples of the last trace point, then these,
# then 1 / T, the residual sums of the last test, the rule's vector (D-tracking's allocation
# w, Frank-Wolfe's cumulated directions) and for D-tracking the answer w was solved for
# (one-hot or mask, as floats)
J_K, J_TOPK, J_IDS, J_MIX, J_TEST, J_KP, J_RULE, J0 = 11, 12, 13, 14, 15, 16, 17, 18
(F_EPS, F_S2X2, F_RHO, F_PCONST, F_BETA, F_TWO, F_S0SQ, F_TARGET, F_GROWTH, F_TSOLVED, F_RGROWTH, F_WTOL, F_DELTA, F_SIGMA,
 F0) = range(3, 18)


def _select(u: float, kp: int, NO: int, ins: Any, outs: Any, T: Any, mu: Any, ids: bool, beta: float, topk: bool,
            ans: int, eps: float, two: float) -> int:
    """:meth:`_TopTwoExploration.next_arm` from the leader coin ``u`` and the pair ``kp`` of
    the selection's argmin: IDS (``x`` of the pair as ``pair_costs`` computes it) or the
    fixed beta."""
    pi, pj = ins[kp // NO], outs[kp % NO]
    if ids:
        ni, nj = float(T[pi]), float(T[pj])
        x = (ni * mu[pi] + nj * (mu[pj] - eps)) / (ni + nj)
        hi = math.pow(mu[pi] - x, two)
        hj = math.pow(mu[pj] - (x + eps), two)
        hi = ni * hi
        hj = nj * hj
        tot = hi + hj
        p = hi / tot if tot > 0 else 0.5
        return pi if u < p else pj
    lead = u < beta
    if topk:
        return pi if lead else pj
    return ans if lead else pj


def _resolve_due(t: float, t_solved: float, growth: float, solved: Any, topk: bool, ans: int, mask: Any) -> bool:
    """Whether :meth:`_TrackAndStopExploration._solve` solves w* again at ``t`` samples: not
    when t grew by less than ``growth`` since the last solve and either by less than 1% or
    the answer (``ans`` / ``mask``) is the one it was solved for (``solved``)."""
    if not (t_solved > 0 and t < growth * t_solved):
        return True
    if t < 1.01 * t_solved:
        return False
    if not topk:
        return solved[ans] != 1.0
    for b in range(mask.shape[0]):
        if solved[b] != (1.0 if mask[b] else 0.0):
            return True
    return False


def _bai_solve(t: float, mu: Any, ans: int, eps: float, s2x2: float, w: Any, solved: Any, ff: Any) -> None:
    """:meth:`_TrackAndStopExploration._solve` on the best arm (Gaussian): w* by Theorem 5
    (:func:`~combex.identification._bandit.gaussian_bai_weights`, the function Python's solve
    calls compiled, so the same bits; uniform when the answer is not epsilon-good), the answer
    and the samples it was solved at."""
    wv, inv = gaussian_bai_weights(mu, ans, eps, s2x2)
    N = mu.shape[0]
    for b in range(N):
        w[b] = wv[b] if inv > 0 else 1.0 / N
        solved[b] = 1.0 if b == ans else 0.0
    ff[F_TSOLVED] = t


def _topk_solve(t: float, mu: Any, ins: Any, outs: Any, NO: int, eps: float, s2x2: float, w: Any, solved: Any,
                mask: Any, ff: Any) -> bool:
    """:meth:`_TrackAndStopExploration._solve` on Best-K (Gaussian): w* on the complete pairs
    by the barrier method (:func:`~combex.identification._pairs_kernel.complete_pairs_weights`,
    the function Python's solve calls compiled, so the same bits), warm-started from ``w``,
    the answer and the samples it was solved at. False (nothing changed) where Python's solve
    takes another way: a pair with no gap, or a failed solve."""
    N = mu.shape[0]
    P = ins.shape[0] * NO
    c = np.empty(P)
    for k in range(P):
        gap = mu[ins[k // NO]] - mu[outs[k % NO]] + eps
        c[k] = gap * gap / s2x2 if gap > 0 else 0.0
        if not c[k] > 0.0:
            return False
    out = np.empty(N)
    val = complete_pairs_weights(ins, outs, c, N, 1e-6 if t <= N + 1 else ff[F_WTOL], w, out)
    if not val > 0.0:
        return False
    for b in range(N):
        w[b] = out[b]
        solved[b] = 1.0 if mask[b] else 0.0
    ff[F_TSOLVED] = t
    return True


def _forced_arm(t: float, T: Any) -> int:
    """The forced exploration of :meth:`GLRExploration._forced`: the least sampled arm with
    ``N_a < sqrt(t) - K/2`` (first on ties), or -1."""
    N = T.shape[0]
    lim = math.sqrt(t) - N / 2.0
    f = -1
    for b in range(N):
        if T[b] < lim and (f < 0 or T[b] < T[f]):
            f = b
    return f


def _d_tracking(t: float, w: Any, T: Any, v: Any) -> int:
    """:meth:`_TrackAndStopExploration.next_arm` with D-tracking: the forced exploration,
    else ``argmax_a t w_a - N_a`` (the first maximum, or the first NaN; ``v``: room for the
    values, one per arm)."""
    N = T.shape[0]
    f = _forced_arm(t, T)
    if f >= 0:
        return f
    for b in range(N):
        v[b] = t * w[b] - T[b]
    return _argmax(v, N)


def _fw_cost(i: int, j: int, t: float, T: Any, mu: Any, eps: float, s2x2: float) -> float:
    """The pair (i, j)'s GLR at the proportions ``x = N / t``: ``GaussianDivergence.pair``'s
    arithmetic."""
    xi = T[i] / t
    xj = T[j] / t
    gap = mu[i] - mu[j] + eps
    return gap * gap / (s2x2 * (1.0 / xi + 1.0 / xj)) if gap > 0 else 0.0


def _fw_step(t: float, T: Any, mu: Any, ins: Any, outs: Any, K: int, NO: int, eps: float, s2x2: float,
             cum: Any, fz: Any, vals: Any) -> int:
    """:meth:`_FWExploration.next_arm` on the pairs: the forced exploration; else the pair
    costs at the proportions ``x = N / t`` (``GaussianDivergence.pair``'s arithmetic), the
    r-active pairs (``F <= min F + r max(min F, 1e-12)``, ``r = t^-0.9 / N``) and, when one
    is active, the Frank-Wolfe vertex of its gradient row (``d(mu_i, x_ij)``,
    ``d(mu_j, x_ij + eps)`` at its two arms, 0 elsewhere; the first maximum) added to
    ``cum``, then ``argmax cum - N + 1 - 1e-9 N``. -1 (nothing changed) when two or more
    pairs are active: the caller's Python step solves the direction's game. ``fz``: room
    for the pair costs (``K (N - K)``), ``vals`` for one value per arm."""
    N = T.shape[0]
    f = _forced_arm(t, T)
    if f >= 0:
        return f
    fmin = math.inf
    P = K * NO
    for k in range(P):
        z = _fw_cost(ins[k // NO], outs[k % NO], t, T, mu, eps, s2x2)
        if z != z:
            return -1
        fz[k] = z
        if z < fmin:
            fmin = z
    lim = fmin + (math.pow(t, -0.9) / N) * max(fmin, 1e-12)
    hq, hr, count = -1, -1, 0
    for k in range(P):
        if fz[k] <= lim:
            count += 1
            hq, hr = k // NO, k % NO
    if count != 1:
        return -1
    i, j = ins[hq], outs[hr]
    xi, xj = T[i] / t, T[j] / t
    xx = (xi * mu[i] + xj * (mu[j] - eps)) / (xi + xj)
    di = mu[i] - xx
    dj = mu[j] - xx - eps
    gi = di * di / s2x2
    gj = dj * dj / s2x2
    k = 0  # argmax of the row: gi at i, gj at j, 0 elsewhere
    best = gi if i == 0 else (gj if j == 0 else 0.0)
    if best == best:
        for b in range(1, N):
            v = gi if b == i else (gj if b == j else 0.0)
            if v != v:
                k = b
                break
            if v > best:
                best = v
                k = b
    cum[k] += 1.0
    for b in range(N):
        vals[b] = cum[b] - T[b] + 1.0 - 1e-9 * T[b]
    return _argmax(vals, N)


def _comb_game_step(t: float, T: Any, mu: Any, ins: Any, outs: Any, K: int, NO: int, eps: float, s2x2: float,
                    sigma: float, two: float, cum: Any, L: Any, ff: Any, zv: Any, xv: Any, v: Any) -> int:
    """:meth:`_CombGameExploration.next_arm` on the pairs (known-variance Gaussian): AdaHedge's
    play ``w`` (:func:`~combex.allocations.hedge_weights`, the function the learner calls
    compiled), nature's best response (the pair of least GLR at ``max(w, 1e-12)``,
    ``GaussianDivergence.pair``'s arithmetic, and its alternative ``lambda``), the optimistic
    gains ``(|mu - lambda| + sqrt(2 sigma^2 log max(t, 2) / N))^2 / (2 sigma^2)`` (the C
    library's ``pow`` for ``sigma ** 2``, as Python's), the learner's update by the losses
    ``-gains`` (:func:`~combex.allocations.hedge_update`; ``L`` and ``ff[F_DELTA]``), ``cum +=
    w``, then ``argmax cum - N`` (the first maximum, or the first NaN). ``zv`` / ``xv``: room
    for the pairs' GLR and alternatives, ``v`` for one value per arm."""
    N = T.shape[0]
    w = hedge_weights(L, ff[F_DELTA])
    P = K * NO
    for k in range(P):  # GaussianDivergence.pair at the weights max(w, 1e-12)
        i, j = ins[k // NO], outs[k % NO]
        mi, mj = mu[i], mu[j]
        ni, nj = max(w[i], 1e-12), max(w[j], 1e-12)
        gap = mi - mj + eps
        xv[k] = (ni * mi + nj * (mj - eps)) / (ni + nj)
        zv[k] = gap * gap / (s2x2 * (1.0 / ni + 1.0 / nj)) if gap > 0 else 0.0
    kb = _argmin(zv, P)
    bi, bj = ins[kb // NO], outs[kb % NO]
    s2 = math.pow(sigma, two)
    coef = 2.0 * s2 * math.log(max(t, 2.0))
    den = 2.0 * s2
    losses = np.empty(N)
    for b in range(N):
        lam = mu[b]
        if zv[kb] > 0:
            if b == bi:
                lam = xv[kb]
            elif b == bj:
                lam = xv[kb] + eps
        q = abs(mu[b] - lam) + math.sqrt(coef / float(T[b]))
        losses[b] = -(q * q / den)
    newL, delta = hedge_update(L, ff[F_DELTA], losses, w)
    for b in range(N):
        L[b] = newL[b]
    ff[F_DELTA] = delta
    for b in range(N):
        cum[b] += w[b]
        v[b] = cum[b] - T[b]
    return _argmax(v, N)


def _build(T: Any, mu: Any, h: Any, ii: Any, ff: Any, pv: Any, mask: Any, logtab: Any) -> int:
    """The kept pairs of a step boundary (the answer of the last check in ``mask``): the
    members and the others, every pair's values; returns the pair of the next selection."""
    N = T.shape[0]
    K = ii[J_K]
    NO = N - K
    ins, outs, rank = ii[J0:J0 + K], ii[J0 + K:J0 + N], ii[J0 + N:J0 + 2 * N]
    _ranks(mask, ins, outs, rank)
    _pairs(0, K, 0, NO, NO, ins, outs, T, mu, h, ff[F0:F0 + N], ii[J_TOPK] != 0, ff[F_EPS], ff[F_S2X2],
           ii[J_MIX] != 0, ff[F_RHO], ff[F_PCONST], logtab, pv[0], pv[1], pv[2], pv[3])
    kp = _argmin(pv[3], K * NO)
    ii[J_KP] = kp
    return kp


def top_two_steps(arng: Any, erng: Any, means: Any, sig: Any, T: Any, sums: Any, mu: Any, m2: Any, h: Any,
                  ii: Any, ff: Any, pv: Any, mask: Any, lgrid: Any, lcoef: Any, logtab: Any, max_steps: int,
                  tr_t: Any, tr_r: Any, told_a: int, told_r: float) -> int:
    """Up to ``max_steps`` samples of Top-Two from a step boundary, on the kept state of
    :class:`Steps` (``ii`` / ``ff``: the scalars of slots ``I_*`` / ``J_*`` / ``F_*`` and
    the arrays after them; ``pv``: each pair's GLR, threshold, their difference and the
    selection's value; ``mask``: the answer of the last check, also in ``ii[I_ANSWER]`` for
    the best arm; the pairs are built first when ``ii[J_KP] < 0``). ``T``, ``sums``, ``mu``,
    ``m2``, ``h`` (the exploration's arrays) change in place. With generators, each sample
    is selected and drawn here; with ``arng`` and ``erng`` None (a specialization without
    them: a generator argument costs numba some 15 us to unbox), one sample only: the reward
    ``told_r`` of arm ``told_a`` told from outside. The checks' points of
    :class:`~combex.solvers._bisect.ProgressTrace` (samples, statistic / threshold, kept when
    the samples grew by its growth factor) go to ``tr_t`` / ``tr_r`` (``ii[I_TRACE]`` of
    them). Returns :data:`STOPPED` (the rule holds after the last sample), :data:`STEPS_DONE`,
    or :data:`SCALE_TEST` (the last sample is folded in, and the test of the declared scale
    is due and might reject: the caller runs the test and the check; the kept pairs are
    stale). ``logtab[n] = np.log(n)`` must cover twice the largest count after ``max_steps``
    samples.

    The pairs' values are kept between samples (and calls): a sample of arm a changes only
    the pairs with a (each recomputed by the same expression), a new answer all of them; the
    two argmins are taken again over the kept values."""
    N = T.shape[0]
    K = ii[J_K]
    NO = N - K
    P = K * NO
    ins, outs, rank = ii[J0:J0 + K], ii[J0 + K:J0 + N], ii[J0 + N:J0 + 2 * N]
    inv, snap = ff[F0:F0 + N], ff[F0 + N:F0 + 2 * N]
    rv, solved = ff[F0 + 2 * N:F0 + 3 * N], ff[F0 + 3 * N:F0 + 4 * N]
    tracking, fw, comb = ii[J_RULE] == D_TRACKING, ii[J_RULE] == FW_SAMPLING, ii[J_RULE] == COMB_GAME
    zv, bv, vs, vp = pv[0], pv[1], pv[2], pv[3]
    topk, ids, mixture, do_test = ii[J_TOPK] != 0, ii[J_IDS] != 0, ii[J_MIX] != 0, ii[J_TEST] != 0
    eps, s2x2, rho, pconst, beta, two = ff[F_EPS], ff[F_S2X2], ff[F_RHO], ff[F_PCONST], ff[F_BETA], ff[F_TWO]
    s0sq, target, growth = ff[F_S0SQ], ff[F_TARGET], ff[F_GROWTH]
    c1 = 1.0
    sq1 = math.sqrt(c1)
    ii[I_CI], ii[I_CJ], ii[I_TESTS], ii[I_STEPS], ii[I_TRACE] = -1, -1, 0, 0, 0  # this call's
    kp = ii[J_KP]
    if kp < 0:  # the pairs at the counts of the last check: the selection of the first sample
        kp = _build(T, mu, h, ii, ff, pv, mask, logtab)
    ans = ii[I_ANSWER]
    steps = 0
    t = 0.0  # the samples (sum of the counts), kept as the loop adds one
    for b in range(N):
        t += T[b]
    fz = np.empty(P if (fw or comb) else 0)
    fx = np.empty(P if comb else 0)
    argbuf = np.empty(N if (fw or comb or tracking) else 0)  # the rules' values per arm (their argmax)
    while True:
        if arng is None:  # one reward told from outside
            a = told_a
            r = told_r
        else:
            if told_a >= 0:  # the first step's arm, chosen by the caller's Python step
                a = told_a
                told_a = -1
            elif comb:
                a = _comb_game_step(t, T, mu, ins, outs, K, NO, eps, s2x2, ff[F_SIGMA], two, rv, solved, ff, fz, fx, argbuf)
            elif fw or tracking:
                if fw:
                    a = _fw_step(t, T, mu, ins, outs, K, NO, eps, s2x2, rv, fz, argbuf)
                    if a < 0:
                        return PYTHON_STEP  # at a step boundary: the caller takes this step in Python
                else:
                    if _resolve_due(t, ff[F_TSOLVED], ff[F_RGROWTH], solved, topk, ans, mask):
                        if topk:
                            if not _topk_solve(t, mu, ins, outs, NO, eps, s2x2, rv, solved, mask, ff):
                                return RESOLVE  # at a step boundary: the caller solves w* (its fallbacks)
                        else:
                            _bai_solve(t, mu, ans, eps, s2x2, rv, solved, ff)
                    a = _d_tracking(t, rv, T, argbuf)
            else:
                u = arng.random()
                a = _select(u, kp, NO, ins, outs, T, mu, ids, beta, topk, ans, eps, two)
            zr = erng.standard_normal()
            r = c1 * means[a] + sq1 * sig[a] * zr
        ii[I_SAMPLES] += 1
        # _update_one: Welford's deviation, the sums, the counts, the arm term, the mean
        n = T[a]
        dev = r - c1 * (sums[a] / n)
        m2[a] += dev * dev / c1 * n / (n + 1)
        ii[I_NOBS] += 1
        sums[a] += r
        T[a] = n + 1
        t += 1.0
        inv[a] = 1.0 / float(n + 1)
        h[a] = _arm_term(n + 1, mixture, rho)
        mu[a] = sums[a] / T[a]
        ii[I_ROUNDS] += 1
        steps += 1
        ii[I_STEPS] = steps
        # the schedule of the test of the declared scale (_test_declared_scale)
        nobs = ii[I_NOBS]
        dof = nobs - N
        if do_test and not (dof < 1 or (nobs < 1.02 * ii[I_NOISE_N] and nobs - ii[I_NOISE_N] < 50 and dof > 5)):
            rss = 0.0
            for b in range(N):
                rss += m2[b]
            if rss > 0.0:
                mx = -math.inf
                for g in range(lgrid.shape[0]):
                    v = lgrid[g] * rss / s0sq + nobs * lcoef[g]
                    if v > mx:
                        mx = v
                acc = 0.0
                for g in range(lgrid.shape[0]):
                    acc += math.exp(lgrid[g] * rss / s0sq + nobs * lcoef[g] - mx)
                stat = mx + math.log(acc / lgrid.shape[0])
                g = lgrid.shape[0] - 1  # the largest terms: a margin for rounding (the sum's order included)
                margin = 1e-7 + 1e-12 * (lgrid[g] * rss / s0sq + nobs * abs(lcoef[g]))
                if not (stat < target - margin):
                    ii[J_KP] = -1
                    return SCALE_TEST
            ii[I_NOISE_N] = nobs
            ii[I_TESTED_AT] = ii[I_SAMPLES]
            ii[I_TESTS] += 1
            for b in range(N):
                snap[b] = m2[b]
        # _check_stop: the answer (only arm a's mean changed), then the pairs
        new = -1  # the arm that enters the answer
        out = -1  # the arm that leaves it
        if topk:
            if mask[a]:
                o = -1
                for b in range(N):  # the first of the others
                    if not mask[b] and (o < 0 or _before(mu, b, o)):
                        o = b
                if _before(mu, o, a):
                    new, out = o, a
            else:
                w = -1
                for b in range(N):  # the last of the members
                    if mask[b] and (w < 0 or _before(mu, w, b)):
                        w = b
                if _before(mu, a, w):
                    new, out = a, w
        else:
            va, vb = mu[a], mu[ans]
            if va != va or vb != vb or a == ans:  # argmax again: the first maximum, or the first NaN
                best, na = 0.0, -1
                for b in range(N):
                    v = mu[b]
                    if v != v:
                        na = b
                        break
                    if na < 0 or v > best:
                        best, na = v, b
            else:
                na = a if (va > vb or (va == vb and a < ans)) else ans
            if na != ans:
                new, out = na, ans
                ans = na
                ii[I_ANSWER] = ans
        if new >= 0:
            mask[out] = False
            mask[new] = True
            _ranks(mask, ins, outs, rank)
            q0, q1, r0, r1 = 0, K, 0, NO
        elif mask[a]:
            q0, q1, r0, r1 = rank[a], rank[a] + 1, 0, NO
        else:
            q0, q1, r0, r1 = 0, K, rank[a], rank[a] + 1
        _pairs(q0, q1, r0, r1, NO, ins, outs, T, mu, h, inv, topk, eps, s2x2, mixture, rho, pconst, logtab,
               zv, bv, vs, vp)
        ks = _argmin(vs, P)
        kp = _argmin(vp, P)
        ii[J_KP] = kp
        ff[0] = zv[ks]
        ff[1] = bv[ks]
        # ProgressTrace.record: a point when the samples grew by `growth` since the last one
        zk, bk = zv[ks], bv[ks]
        if (zk - zk == 0.0) and (bk - bk == 0.0) and bk > 0.0:
            tk = float(ii[I_SAMPLES])
            if ff[2] < 0.0 or tk >= growth * ff[2]:
                tr_t[ii[I_TRACE]] = tk
                tr_r[ii[I_TRACE]] = zk / bk
                ii[I_TRACE] += 1
                ff[2] = tk
        ii[I_CI] = ins[ks // NO]
        ii[I_CJ] = outs[ks % NO]
        if zv[ks] >= bv[ks] and not (dof < 5):
            return STOPPED
        if steps >= max_steps:
            return STEPS_DONE


def top_two_select(u: float, T: Any, mu: Any, h: Any, ii: Any, ff: Any, pv: Any, mask: Any, logtab: Any) -> int:
    """The arm of the next sample from the leader coin ``u`` and the kept pairs (built first
    when ``ii[J_KP] < 0``)."""
    N = T.shape[0]
    K = ii[J_K]
    kp = ii[J_KP]
    if kp < 0:
        kp = _build(T, mu, h, ii, ff, pv, mask, logtab)
    return _select(u, kp, N - K, ii[J0:J0 + K], ii[J0 + K:J0 + N], T, mu, ii[J_IDS] != 0, ff[F_BETA],
                   ii[J_TOPK] != 0, ii[I_ANSWER], ff[F_EPS], ff[F_TWO])


def rule_step(t: float, T: Any, mu: Any, ii: Any, ff: Any, mask: Any) -> int:
    """The next arm of Frank-Wolfe sampling's or CombGame's rule from the kept state (the
    answer's members and the others listed first when the kept pairs are stale): the same
    step as the loop's; -1 for a Frank-Wolfe step with two or more active alternatives
    (Python's game)."""
    N = T.shape[0]
    K = ii[J_K]
    NO = N - K
    ins, outs = ii[J0:J0 + K], ii[J0 + K:J0 + N]
    if ii[J_KP] < 0:
        _ranks(mask, ins, outs, ii[J0 + N:J0 + 2 * N])
    rv, solved = ff[F0 + 2 * N:F0 + 3 * N], ff[F0 + 3 * N:F0 + 4 * N]
    fz = np.empty(K * NO)
    if ii[J_RULE] == FW_SAMPLING:
        return _fw_step(t, T, mu, ins, outs, K, NO, ff[F_EPS], ff[F_S2X2], rv, fz, np.empty(N))
    return _comb_game_step(t, T, mu, ins, outs, K, NO, ff[F_EPS], ff[F_S2X2], ff[F_SIGMA], ff[F_TWO], rv, solved, ff,
                           fz, np.empty(K * NO), np.empty(N))


_HELPERS = (_arm_term, _before, _argmin, _argmax, _ranks, _pairs, _select, _build, _resolve_due, gaussian_bai_weights, _bai_solve,
            complete_pairs_weights, *COMPLETE_PAIRS_HELPERS, _topk_solve, hedge_weights, hedge_update, _comb_game_step,
            _forced_arm, _d_tracking, _fw_cost, _fw_step)
_COMPILED: Callable[..., Any] | None = None  # set once compiled (the kept-state path then applies from the start)
_SELECT: Callable[..., Any] | None = None


def compiled_steps() -> Callable[..., Any] | None:
    """The numba-compiled :func:`top_two_steps` (compiled once per process, or loaded from
    numba's cache), or None without numba."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = compiled(top_two_steps, helpers=_HELPERS, boundscheck=False)
    return _COMPILED


def compiled_select() -> Callable[..., Any] | None:
    """The numba-compiled :func:`top_two_select`, or None without numba."""
    global _SELECT
    if _SELECT is None and compiled_steps() is not None:
        _SELECT = compiled(top_two_select, helpers=_HELPERS, boundscheck=False)
    return _SELECT


_LOG = np.log(np.arange(1.0, 2.0))


def log_table(n: int) -> Any:
    """``np.log(k)`` for ``k = 0 .. n - 1`` at least (entry 0 unused), computed by numpy
    (its logarithm of a count is the same whatever the array around it)."""
    global _LOG
    if _LOG.shape[0] < n:
        with np.errstate(divide="ignore"):
            _LOG = np.log(np.arange(float(max(n, 2 * _LOG.shape[0]))))
    return _LOG


#: The methods of the exploration whose arithmetic the kernel repeats: a subclass that
#: changes one of them (a threshold scaled by a test harness, ...) keeps the Python path.
_REPLICATED = ("next_arm", "_select_one", "prepare_batch", "pair_costs",
               "pair_costs_now", "_pairs", "_compute_answer", "_check_stop",
               "_arm_term", "_refresh_terms", "_update_one", "_fold_deviation",
               "_test_declared_scale", "_untested_scale", "stop")
#: ... and those of each rule.
_REPLICATED_TOP_TWO = ("_ids_leader", "_leader_probability")
_REPLICATED_TRACKING = ("_solve", "_forced")
_REPLICATED_FW = ("_forced", "_values_grads", "pair_gradients")
_REPLICATED_COMB = ("L", "Delta")


def _rule(exp: Any) -> int:
    """The kernel's sampling rule for ``exp`` (:data:`D_TRACKING` for Track-and-Stop,
    :data:`FW_SAMPLING` for Frank-Wolfe sampling)."""
    from .optimal import _CombGameExploration, _FWExploration, _TrackAndStopExploration  # .optimal imports this module

    if isinstance(exp, _TrackAndStopExploration):
        return D_TRACKING
    if isinstance(exp, _CombGameExploration):
        return COMB_GAME
    return FW_SAMPLING if isinstance(exp, _FWExploration) else TOP_TWO


def _rule_applicable(exp: Any) -> bool:
    """Whether the kernel repeats ``exp``'s rule: Top-Two with IDS or a fixed beta, or
    Track-and-Stop with D-tracking (w* solved in Python when due); best arm or Best-K pairs,
    the known-variance Gaussian GLR with per-pair thresholds (``"valid"`` or
    ``"valid-kk"``), none of the exploration's methods in :data:`_REPLICATED` changed by a
    subclass, a numpy Generator."""
    from .optimal import (  # .optimal imports this module
        _CombGameExploration, _FWExploration, _TopTwoExploration, _TrackAndStopExploration)

    s = exp.solver
    rule = _rule(exp)
    if rule == D_TRACKING:
        base, names = _TrackAndStopExploration, _REPLICATED + _REPLICATED_TRACKING
        rule_ok = s.tracking == "D"
    elif rule == FW_SAMPLING:
        base, names, rule_ok = _FWExploration, _REPLICATED + _REPLICATED_FW, True
    elif rule == COMB_GAME:
        base, names, rule_ok = _CombGameExploration, _REPLICATED + _REPLICATED_COMB, type(exp.learner) is AdaHedge
    else:
        base, names = _TopTwoExploration, _REPLICATED + _REPLICATED_TOP_TWO
        rule_ok = s.beta == "ids" or not isinstance(s.beta, str)
    own = isinstance(exp, base) and all(getattr(type(exp), m) is getattr(base, m) for m in names)
    return (HAVE_NUMBA and own and rule_ok and exp.structure in ("bai", "topk") and exp.divergence == "gaussian"
            and not exp._uv and type(exp.stopping_rule) is PairStop and exp.stopping_rule.const is not None
            and not exp.stopping_rule.kl and type(exp.stopping_threshold) is GLRThreshold
            and isinstance(exp.rng, np.random.Generator))


def applicable(exp: Any, env: Any) -> bool:
    """Whether :func:`advance` may run ``exp`` on ``env``: the rule as
    :func:`_rule_applicable` says, no trace; ``env`` a :class:`GaussianArms` whose pulls
    are its own (no subclass changes them)."""
    return (_rule_applicable(exp) and not exp.record_trace
            and isinstance(env, GaussianArms) and _gaussian_draws(type(env))
            and type(env).pull_many is Environment.pull_many
            and type(env).state_dict is Environment.state_dict and type(env).load_state_dict is Environment.load_state_dict)


def _gaussian_draws(cls: type) -> bool:
    """Whether ``cls`` draws its rewards as :class:`GaussianArms` does (no class between it
    and GaussianArms redefines the draw)."""
    mro = cls.__mro__
    return all("_pull_many" not in vars(c) for c in mro[:mro.index(GaussianArms)])


def advance(exp: Any, env: Any, budget: int | None) -> bool:
    """Samples of ``exp`` through the kernel, from a step boundary of
    :meth:`GLRExploration._simulate` (ready, known variance): False (nothing done) when
    the kernel does not apply or is not compiled yet; else True, with the exploration at a
    step boundary again (stopped, or the caller checks the budget)."""
    ok = exp.__dict__.get("_kernel_ok")
    if ok is None:
        ok = exp._kernel_ok = applicable(exp, env)
    st = _steps(exp) if ok else None
    if st is None:
        return False
    t = int(exp.T.sum())
    steps = max(CHUNK, t)
    if budget is not None:
        steps = min(steps, budget - exp.samples)
    if steps < 1:
        return False
    logtab = log_table(2 * (int(exp.T.max()) + steps) + 2)
    trace = exp._progress_trace
    cap = int(math.log((exp.samples + steps + 1.0) / max(trace.t[-1] if trace.t else 1.0, 1.0))
              / math.log(trace.GROWTH)) + 3
    tr_t, tr_r = np.zeros(cap), np.zeros(cap)
    st.start(exp)
    # the environment's generator through its public state: a copy advanced by the kernel,
    # then put back (load_state_dict), as the LinGapE fast path rewinds
    env_state = env.state_dict()
    env_gen = restore_generator(env_state["rng_type"], env_state["rng"], source="the environment")
    means, sig = env.means(), env.sigma
    st.allocation(exp)
    first = -1
    while True:
        code = _COMPILED(exp.rng, env_gen, means, sig, exp.T, exp.sums, exp.mu, exp.m2,  # type: ignore[misc]
                         exp._h, st.ii, st.ff, st.pv, st.mask, _L_UP, _LCOEF, logtab, steps, tr_t, tr_r, first, 0.0)
        st.rule_back(exp)
        if code != RESOLVE and code != PYTHON_STEP:
            break
        # a step boundary (and steps left: the loop returns these before a step only): D-tracking's
        # w* is due again, or a Frank-Wolfe direction needs its game solved, in Python; then on
        done = int(st.ii[I_STEPS])
        st.finish(exp, code, tr_t, tr_r)
        first = -1
        if code == RESOLVE:
            exp._solve()
        else:
            first = exp._select_one()  # the arm of this step (its reward is drawn by the loop)
        st.allocation(exp)
        steps -= done
        st.start(exp)
    env_state["rng"] = generator_state(env_gen)
    env.load_state_dict(env_state)
    st.finish(exp, code, tr_t, tr_r)
    return True


class Steps:
    """The kernel's kept state for one exploration: its scalars and the pairs at the last
    check, as :func:`top_two_steps` keeps them between samples and between calls (``ii`` /
    ``ff``: slots ``I_*`` / ``J_*`` / ``F_*`` and the arrays after them; ``pv``: each pair's
    GLR, threshold, difference and selection value; ``mask``: the answer). Valid while the
    exploration's statistics change only through the kernel: the exploration drops it
    (``_steps = None``) whenever they change otherwise."""

    __slots__ = ("ii", "ff", "pv", "mask", "topk", "tr_t", "tr_r", "logtab")

    def __init__(self, exp: Any) -> None:
        s = exp.solver
        N = exp.N
        self.topk = topk = exp.structure == "topk"
        K = int(exp.K) if topk else 1
        ans = exp._answer
        self.mask = np.asarray(ans, dtype=bool).copy() if topk else np.zeros(N, dtype=bool)
        if not topk:
            self.mask[int(ans)] = True
        rec = exp._noise_record
        self.ii = ii = np.zeros(J0 + 2 * N, dtype=np.int64)
        ii[I_ANSWER] = -1 if topk else int(ans)
        beta = getattr(s, "beta", 0.5)  # (Track-and-Stop has none)
        ii[J_K], ii[J_TOPK], ii[J_IDS] = K, topk, beta == "ids"
        ii[J_MIX], ii[J_TEST], ii[J_KP] = bool(exp.stopping_rule.mixture), not (rec is not None and rec["rejected"]), -1
        ii[J_RULE] = _rule(exp)
        self.ff = ff = np.zeros(F0 + 4 * N)
        sigma = exp.sigma
        trace = exp._progress_trace
        ff[2] = trace.t[-1] if trace.t else -1.0
        ff[F_EPS], ff[F_S2X2] = exp.eps, 2.0 * sigma * sigma
        ff[F_RHO] = float(exp.stopping_threshold.rho) if exp.stopping_rule.mixture else 1.0
        ff[F_PCONST], ff[F_BETA], ff[F_TWO] = float(exp.stopping_rule.const), 0.5 if isinstance(beta, str) else float(beta), 2.0
        ff[F_S0SQ], ff[F_TARGET], ff[F_GROWTH] = sigma * sigma, math.log(1.0 / NOISE_CHECK_ALPHA), trace.GROWTH
        ff[F0:F0 + N] = 1.0 / exp.T.astype(np.float64)
        self.allocation(exp)
        self.pv = np.empty((4, K * (N - K)))
        self.tr_t, self.tr_r = np.zeros(1), np.zeros(1)
        self.logtab = log_table(2 * int(exp.T.sum()) + 16)

    def allocation(self, exp: Any) -> None:
        """The rule's vector from the exploration: D-tracking's allocation and the solve it
        comes from, Frank-Wolfe's cumulated directions (before a call of the loop)."""
        N = exp.N
        ff = self.ff
        if self.ii[J_RULE] == D_TRACKING:
            ff[F_TSOLVED], ff[F_RGROWTH] = exp._t_solved, exp._GROWTH[exp.structure if exp.structure == "bai" else "sets"]
            ff[F_WTOL] = getattr(exp, "_WARM_TOL", 1e-6)
            ff[F0 + 2 * N:F0 + 3 * N] = exp.w
            ff[F0 + 3 * N:F0 + 4 * N] = exp._solved_for
        elif self.ii[J_RULE] == FW_SAMPLING:
            ff[F0 + 2 * N:F0 + 3 * N] = exp.cum
        elif self.ii[J_RULE] == COMB_GAME:  # the learner: its cumulative losses and mixability gap
            ff[F0 + 2 * N:F0 + 3 * N] = exp.cum
            ff[F0 + 3 * N:F0 + 4 * N] = exp.learner.L
            ff[F_DELTA], ff[F_SIGMA] = exp.learner.Delta, exp.sigma

    def rule_back(self, exp: Any) -> None:
        """The rule's vectors the loop changed, back to the exploration (after a call of the
        loop): Frank-Wolfe's cumulated directions, D-tracking's allocation with the answer and
        the samples of its last solve (the best arm's solves run in the loop)."""
        N = exp.N
        ff = self.ff
        if self.ii[J_RULE] == FW_SAMPLING:
            exp.cum[:] = ff[F0 + 2 * N:F0 + 3 * N]
        elif self.ii[J_RULE] == COMB_GAME:
            exp.cum[:] = ff[F0 + 2 * N:F0 + 3 * N]
            exp.learner.L = ff[F0 + 3 * N:F0 + 4 * N].copy()
            exp.learner.Delta = float(ff[F_DELTA])
        elif self.ii[J_RULE] == D_TRACKING and ff[F_TSOLVED] != exp._t_solved:
            exp.w = ff[F0 + 2 * N:F0 + 3 * N].copy()
            exp._solved_for = ff[F0 + 3 * N:F0 + 4 * N].copy()
            exp._t_solved = float(ff[F_TSOLVED])

    def start(self, exp: Any, told: int = 0) -> None:
        """The exploration's counters before a kernel call (``told``: samples already counted
        by ``tell_batch`` that the kernel counts again)."""
        self.ii[:I_ANSWER] = (exp._n_obs, exp._noise_n, exp.samples - told, exp.rounds)

    def finish(self, exp: Any, code: int, tr_t: Any, tr_r: Any) -> None:
        """The exploration after a kernel call: its counters, the test of the scale, the
        progress trace, the last check and the stop (``code``)."""
        v = self.ii[:J_K].tolist()
        if v[I_TRACE]:
            trace = exp._progress_trace
            trace.t.extend(tr_t[:v[I_TRACE]].tolist())
            trace.r.extend(tr_r[:v[I_TRACE]].tolist())
        exp._zc = None
        exp._n_obs, exp._noise_n, exp.samples, exp.rounds = v[:I_ANSWER]
        if v[I_TESTS] > 0:  # the record of the kernel's last test, as _test_declared_scale makes it
            exp._record_scale_test(exp._noise_n, float(self.ff[F0 + exp.N:F0 + 2 * exp.N].sum()), v[I_TESTED_AT], later=True)
        if v[I_CI] >= 0:  # the kernel's own checks (else the one before the call stands)
            exp._answer = self.mask.copy() if self.topk else v[I_ANSWER]
            exp._stat, exp._beta_t = self.ff[:2].tolist()
            exp._closest = (v[I_CI], v[I_CJ])
        if code == SCALE_TEST:  # the rest of _update_one for the last sample
            exp._steps = None
            if not exp._test_declared_scale():
                exp._check_stop()
        elif code == STOPPED:
            exp.stop("identified", f"the GLR against the closest alternative exceeds the threshold ({exp.stopping_threshold.name})")


_LCOEF = 0.5 * np.log1p(-2.0 * _L_UP)


def _steps(exp: Any) -> Steps | None:
    """The exploration's kept state, made at a step boundary where the kernel applies
    (compiled once an exploration has run :data:`COMPILE_AFTER` rounds, then used from the
    start), else None."""
    st = exp._steps
    if st is not None:
        return st
    if not ENABLED or exp.record_trace or (exp.rounds < COMPILE_AFTER and _COMPILED is None):
        return None
    ok = exp.__dict__.get("_rule_ok")
    if ok is None:
        ok = exp._rule_ok = _rule_applicable(exp)
    if not ok or exp._uv or exp._answer is None or not exp._ready or not bool(np.all(exp.T >= 1)):
        return None  # (_uv: the rule after a rejected scale)
    if compiled_select() is None:
        return None
    for name in ("T", "sums", "mu", "m2", "_h"):  # changed in place: contiguous, of the kernel's types
        arr = getattr(exp, name)
        want = np.int64 if name == "T" else np.float64
        if arr.dtype != want or not arr.flags.c_contiguous or not arr.flags.writeable:
            setattr(exp, name, np.ascontiguousarray(arr, dtype=want).copy())
    exp._steps = st = Steps(exp)
    return st


def select_one(exp: Any) -> int:
    """The arm of :meth:`GLRExploration._select_one` from the kept pairs (the leader coin
    drawn from the exploration's generator, as ``next_arm`` draws it), or -1 where the
    kernel does not apply (the caller's Python path runs)."""
    st = _steps(exp)
    if st is None or exp.record_trace:
        return -1
    return int(_SELECT(exp.rng.random(), exp.T, exp.mu, exp._h, st.ii, st.ff, st.pv, st.mask,  # type: ignore[misc]
                       st.logtab))


def rule_one(exp: Any) -> int:
    """The arm of :meth:`GLRExploration._select_one` for Frank-Wolfe sampling and CombGame:
    the rule's state into the kept vectors, the compiled step (:func:`rule_step`), the state
    back; -1 where the kernel does not apply or a Frank-Wolfe step needs Python's game."""
    st = _steps(exp)
    if st is None or exp.record_trace or st.ii[J_RULE] not in (FW_SAMPLING, COMB_GAME):
        return -1
    global _RULE_STEP
    if _RULE_STEP is None:
        _RULE_STEP = compiled(rule_step, helpers=_HELPERS, boundscheck=False)
    st.allocation(exp)
    a = int(_RULE_STEP(float(exp.T.sum()), exp.T, exp.mu, st.ii, st.ff, st.mask))
    st.rule_back(exp)
    return a


_RULE_STEP: Callable[..., Any] | None = None


def track_one(exp: Any) -> int:
    """The arm of :meth:`GLRExploration._select_one` for D-tracking: w* solved first when due
    (:meth:`_TrackAndStopExploration.prepare_batch`, Python), then the compiled selection
    (forced exploration, ``argmax t w_a - N_a``); -1 where the kernel does not apply."""
    st = _steps(exp)
    if st is None or exp.record_trace or st.ii[J_RULE] != D_TRACKING:
        return -1
    exp.prepare_batch()
    return int(compiled(_d_tracking)(float(exp.T.sum()), exp.w, exp.T, np.empty(exp.N)))


def tell_one(exp: Any, a: int, r: float) -> bool:
    """:meth:`GLRExploration._update_one` of one reward told from outside, through the
    kernel (its specialization without generators): False (nothing done) where the kernel
    does not apply."""
    st = _steps(exp)
    if st is None or exp.record_trace:
        return False
    if exp.samples + 2 >= st.logtab.shape[0]:  # T_i + T_j <= the samples
        st.logtab = log_table(2 * exp.samples + 16)
    st.start(exp, told=1)
    code = _COMPILED(None, None, _NONE, _NONE, exp.T, exp.sums, exp.mu, exp.m2, exp._h,  # type: ignore[misc]
                     st.ii, st.ff, st.pv, st.mask, _L_UP, _LCOEF, st.logtab, 1, st.tr_t, st.tr_r, a, r)
    st.finish(exp, code, st.tr_t, st.tr_r)
    return True


_NONE = np.zeros(0)
