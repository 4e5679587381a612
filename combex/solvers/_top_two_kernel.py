"""Top-Two (EB-TCI with IDS or a fixed beta) on a simulated Gaussian environment, many
samples per call, as a compiled loop.

The fast path of :meth:`~combex.solvers.glr.GLRExploration._simulate` spends
30-60 us of Python per sample on arithmetic worth well under a microsecond at K <= 100.
:func:`top_two_steps` runs the same samples -- the leader coin of the algorithm's
generator, the selection (:meth:`_TopTwoExploration.next_arm`), the environment's reward
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

numba is optional (the ``mips`` extra). The kernel is compiled (or loaded from numba's
on-disk cache) the first time an exploration has run :data:`COMPILE_AFTER` rounds, so short
runs never pay for the compilation; once compiled, every run of the process uses it from its
first check. Without numba the Python path runs.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Any, Callable

import numpy as np

from .._state import generator_state, restore_generator
from ..environments import Environment, GaussianArms
from ..estimation._glr import GLRThreshold
from ..estimation._variance import NOISE_CHECK_ALPHA, _L_UP, scale_check_dict

__all__ = ["HAVE_NUMBA", "ENABLED", "COMPILE_AFTER", "CHUNK", "top_two_steps", "compiled_steps", "log_table",
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
STOPPED, STEPS_DONE, SCALE_TEST = 0, 1, 2

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
    at the current statistics: ``z`` (pair_costs), ``b`` (_pair_thresholds), ``z - b`` (the
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


def top_two_steps(arng: Any, erng: Any, means: Any, sig: Any, T: Any, sums: Any, mu: Any, m2: Any, h: Any,
                  inv: Any, snap: Any, mask: Any, ist: Any, fst: Any, topk: bool, K: int, ids: bool, beta: float,
                  eps: float, s2x2: float, mixture: bool, rho: float, pconst: float, two: float, do_test: bool,
                  lgrid: Any, lcoef: Any, s0sq: float, target: float, logtab: Any, max_steps: int,
                  tr_t: Any, tr_r: Any, growth: float) -> int:
    """Up to ``max_steps`` samples of Top-Two from the state of a step boundary (the
    answer of the last check in ``mask``, and in ``ist[I_ANSWER]`` for the best arm).
    ``T``, ``sums``, ``mu``, ``m2``, ``h`` (the exploration's arrays) and ``inv``
    (``1.0 / T``) change in place; ``ist`` / ``fst`` hold the integer / float scalars (slots
    ``I_*``; ``fst``: the last check's statistic and threshold, and the samples of the last
    point of the progress trace). The checks' points of
    :class:`~combex.solvers._bisect.ProgressTrace` (samples, statistic / threshold, kept when
    the samples grew by ``growth``) go to ``tr_t`` / ``tr_r`` (``ist[I_TRACE]`` of them). Returns :data:`STOPPED`
    (the rule holds after the last sample), :data:`STEPS_DONE`, or :data:`SCALE_TEST` (the
    last sample is folded in, and the test of the declared scale is due and might reject:
    the caller runs the test and the check). ``logtab[n] = np.log(n)`` must cover twice the
    largest count after ``max_steps`` samples.

    The pairs' values are kept between samples: a sample of arm a changes only the pairs
    with a (each recomputed by the same expression), a new answer all of them; the two
    argmins are taken again over the kept values."""
    N = T.shape[0]
    if not topk:
        K = 1
    NO = N - K
    P = K * NO
    ins = np.empty(K, dtype=np.int64)
    outs = np.empty(NO, dtype=np.int64)
    rank = np.empty(N, dtype=np.int64)
    zv, bv, vs, vp = np.empty(P), np.empty(P), np.empty(P), np.empty(P)
    ans = ist[I_ANSWER]
    c1 = 1.0
    sq1 = math.sqrt(c1)
    # the pairs at the counts of the last check: the selection of the first sample
    _ranks(mask, ins, outs, rank)
    _pairs(0, K, 0, NO, NO, ins, outs, T, mu, h, inv, topk, eps, s2x2, mixture, rho, pconst, logtab, zv, bv, vs, vp)
    kp = _argmin(vp, P)
    steps = 0
    while True:
        u = arng.random()
        pi, pj = ins[kp // NO], outs[kp % NO]
        # x of the selected pair, as pair_costs computes it
        ni, nj = float(T[pi]), float(T[pj])
        x = (ni * mu[pi] + nj * (mu[pj] - eps)) / (ni + nj)
        if ids:
            hi = math.pow(mu[pi] - x, two)
            hj = math.pow(mu[pj] - (x + eps), two)
            hi = ni * hi
            hj = nj * hj
            tot = hi + hj
            p = hi / tot if tot > 0 else 0.5
            a = pi if u < p else pj
        else:
            lead = u < beta
            if topk:
                a = pi if lead else pj
            else:
                a = ans if lead else pj
        zr = erng.standard_normal()
        r = c1 * means[a] + sq1 * sig[a] * zr
        ist[I_SAMPLES] += 1
        # _update_one: Welford's deviation, the sums, the counts, the arm term, the mean
        n = T[a]
        dev = r - c1 * (sums[a] / n)
        m2[a] += dev * dev / c1 * n / (n + 1)
        ist[I_NOBS] += 1
        sums[a] += r
        T[a] = n + 1
        inv[a] = 1.0 / float(n + 1)
        h[a] = _arm_term(n + 1, mixture, rho)
        mu[a] = sums[a] / T[a]
        ist[I_ROUNDS] += 1
        steps += 1
        ist[I_STEPS] = steps
        # the schedule of the test of the declared scale (_test_declared_scale)
        nobs = ist[I_NOBS]
        dof = nobs - N
        if do_test and not (dof < 1 or (nobs < 1.02 * ist[I_NOISE_N] and nobs - ist[I_NOISE_N] < 50 and dof > 5)):
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
                    return SCALE_TEST
            ist[I_NOISE_N] = nobs
            ist[I_TESTED_AT] = ist[I_SAMPLES]
            ist[I_TESTS] += 1
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
                ist[I_ANSWER] = ans
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
        fst[0] = zv[ks]
        fst[1] = bv[ks]
        # ProgressTrace.record: a point when the samples grew by `growth` since the last one
        zk, bk = zv[ks], bv[ks]
        if (zk - zk == 0.0) and (bk - bk == 0.0) and bk > 0.0:
            tk = float(ist[I_SAMPLES])
            if fst[2] < 0.0 or tk >= growth * fst[2]:
                tr_t[ist[I_TRACE]] = tk
                tr_r[ist[I_TRACE]] = zk / bk
                ist[I_TRACE] += 1
                fst[2] = tk
        ist[I_CI] = ins[ks // NO]
        ist[I_CJ] = outs[ks % NO]
        if zv[ks] >= bv[ks] and not (dof < 5):
            return STOPPED
        if steps >= max_steps:
            return STEPS_DONE


_COMPILED: Callable[..., Any] | None = None


def compiled_steps() -> Callable[..., Any] | None:
    """The numba-compiled :func:`top_two_steps` (compiled once per process, or loaded from
    numba's cache), or None without numba."""
    global _COMPILED
    if _COMPILED is None and HAVE_NUMBA:
        import numba
        from numba.extending import register_jitable

        # fastmath off: no reassociation, no fused multiply-add (bit-identical to numpy).
        for f in (_arm_term, _before, _argmin, _ranks, _pairs):
            register_jitable(f)
        _COMPILED = numba.njit(cache=True, nogil=True, boundscheck=False)(top_two_steps)
    return _COMPILED


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
_REPLICATED = ("next_arm", "_select_one", "prepare_batch", "_ids_leader", "_leader_probability", "pair_costs",
               "pair_costs_now", "_pairs", "_compute_answer", "_check_stop", "_binding_pairs", "_pair_thresholds",
               "_arm_term", "_refresh_terms", "_update_one", "_fold_deviation",
               "_test_declared_scale", "_untested_scale", "stop")


def applicable(exp: Any, env: Any) -> bool:
    """Whether :func:`advance` may run ``exp`` on ``env``: Top-Two with IDS or a fixed beta,
    best arm or Best-K pairs, the known-variance Gaussian GLR with per-pair thresholds
    (``"valid"`` or ``"valid-kk"``), no trace; ``env`` a :class:`GaussianArms` whose pulls
    are its own (no subclass changes them) and both generators numpy Generators; none of
    the exploration's methods in :data:`_REPLICATED` changed by a subclass."""
    from .optimal import _TopTwoExploration

    s = exp.solver
    own = all(getattr(type(exp), m) is getattr(_TopTwoExploration, m) for m in _REPLICATED)
    return (HAVE_NUMBA and own and exp.structure in ("bai", "topk") and exp.divergence == "gaussian" and not exp._uv
            and exp._pair_const is not None and not exp._pair_kl and not exp.record_trace
            and type(exp.stopping_threshold) is GLRThreshold
            and (s.beta == "ids" or not isinstance(s.beta, str))
            and isinstance(env, GaussianArms) and _gaussian_draws(type(env))
            and type(env).pull_many is Environment.pull_many
            and type(env).state_dict is Environment.state_dict and type(env).load_state_dict is Environment.load_state_dict
            and isinstance(exp.rng, np.random.Generator))


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
    if not ENABLED or (exp.rounds < COMPILE_AFTER and _COMPILED is None):  # compiled once: used from the start
        return False
    ok = exp.__dict__.get("_kernel_ok")
    if ok is None:
        ok = exp._kernel_ok = applicable(exp, env)
    if not ok or not bool(np.all(exp.T >= 1)):
        return False
    fn = compiled_steps()
    if fn is None:
        return False

    s = exp.solver
    N = exp.N
    topk = exp.structure == "topk"
    t = int(exp.T.sum())
    steps = max(CHUNK, t)
    if budget is not None:
        steps = min(steps, budget - exp.samples)
    if steps < 1:
        return False
    logtab = log_table(2 * (int(exp.T.max()) + steps) + 2)
    rec = exp._noise_record
    do_test = not (rec is not None and rec["rejected"])
    ans = exp._answer
    mask = np.asarray(ans, dtype=bool).copy() if topk else np.zeros(N, dtype=bool)
    if not topk:
        mask[int(ans)] = True
    ist = np.array([exp._n_obs, exp._noise_n, exp.samples, exp.rounds, -1 if topk else int(ans), -1, -1, -1, 0, 0, 0],
                   dtype=np.int64)
    trace = exp._progress_trace
    fst = np.array([0.0, 0.0, trace.t[-1] if trace.t else -1.0])
    cap = int(math.log((exp.samples + steps + 1.0) / max(trace.t[-1] if trace.t else 1.0, 1.0))
              / math.log(trace.GROWTH)) + 3
    tr_t, tr_r = np.zeros(cap), np.zeros(cap)
    inv = 1.0 / exp.T.astype(np.float64)
    snap = np.zeros(N)
    for name in ("T", "sums", "mu", "m2", "_h"):  # changed in place: contiguous, of the kernel's types
        arr = getattr(exp, name)
        want = np.int64 if name == "T" else np.float64
        if arr.dtype != want or not arr.flags.c_contiguous or not arr.flags.writeable:
            setattr(exp, name, np.ascontiguousarray(arr, dtype=want).copy())
    beta = 0.5 if isinstance(s.beta, str) else float(s.beta)
    sigma = exp.sigma
    # the environment's generator through its public state: a copy advanced by the kernel,
    # then put back (load_state_dict), as the LinGapE fast path rewinds
    env_state = env.state_dict()
    env_gen = restore_generator(env_state["rng_type"], env_state["rng"], source="the environment")
    code = fn(exp.rng, env_gen, env.means(), env.sigma, exp.T, exp.sums, exp.mu, exp.m2, exp._h, inv, snap, mask,
              ist, fst, topk, int(exp.K), s.beta == "ids", beta, exp.eps, 2.0 * sigma * sigma, bool(exp._pair_mixture),
              float(exp.stopping_threshold.rho) if exp._pair_mixture else 1.0, float(exp._pair_const), 2.0, do_test,
              _L_UP, 0.5 * np.log1p(-2.0 * _L_UP), sigma * sigma, math.log(1.0 / NOISE_CHECK_ALPHA), logtab, steps,
              tr_t, tr_r, trace.GROWTH)
    trace.t.extend(tr_t[:ist[I_TRACE]].tolist())
    trace.r.extend(tr_r[:ist[I_TRACE]].tolist())
    env_state["rng"] = generator_state(env_gen)
    env.load_state_dict(env_state)
    exp._zc = None
    exp._n_obs = int(ist[I_NOBS])
    exp._noise_n = int(ist[I_NOISE_N])
    exp.samples = int(ist[I_SAMPLES])
    exp.rounds = int(ist[I_ROUNDS])
    if ist[I_TESTS] > 0:  # the record of the kernel's last test, as _test_declared_scale makes it
        rss = float(snap.sum())
        n = exp._noise_n
        chk = scale_check_dict(rss, n, sigma, rss / max(n - N, 1) if n > N else math.nan)
        chk["at_sample"] = int(ist[I_TESTED_AT])
        exp._noise_record = chk
    checked = ist[I_CI] >= 0  # the kernel's own checks (else the one before the call stands)
    if checked:
        exp._answer = mask if topk else int(ist[I_ANSWER])
        exp._stat = float(fst[0])
        exp._beta_t = float(fst[1])
        exp._closest = (int(ist[I_CI]), int(ist[I_CJ]))
    if code == SCALE_TEST:  # the rest of _update_one for the last sample
        if not exp._test_declared_scale():
            exp._check_stop()
    elif code == STOPPED:
        exp.stop("identified", f"the GLR against the closest alternative exceeds the threshold ({exp.stopping_threshold.name})")
    return True
