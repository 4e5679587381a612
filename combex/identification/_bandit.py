"""The characteristic time T*(mu) of best-arm, Best-K and decision-class identification.

Every delta-correct algorithm satisfies ``E[tau] >= T*(mu) log(1 / (2.4 delta))`` with
(Garivier & Kaufmann 2016, Theorem 1)

    T*(mu)^{-1} = max_{w in simplex} min_{lambda in Alt(S*)} sum_i w_i d(mu_i, lambda_i).

For Gaussian arms (variance sigma^2) and an answer S among members of a decision class
(sum of means; the best arm is the class of singletons, Best-K the class of K-sets), the
alternative "S' beats S by eps" costs ``(mu(S) - mu(S') + eps)^2 / (2 sigma^2 sum_{S xor S'} 1/w_i)``,
so ``T* = min s`` subject to ``sum_{i in S xor S'} 1/w_i <= c_{S'} s`` for every S', with
``c_{S'} = (mu(S) - mu(S') + eps)^2 / (2 sigma^2)`` and ``sum w = 1``: a convex program
(solved with cvxpy). With ``epsilon > 0`` the value is computed for the best answer S*
(``T_eps(mu, S*)``); for the best arm the minimum over all epsilon-good answers is taken
(the epsilon lower bound of Garivier & Kaufmann 2019 / Jourdan et al. 2023).

* best arm: exact, by the root-finding of Garivier & Kaufmann (2016), Theorem 5
  (:func:`bai_optimal_weights`, Gaussian and Bernoulli);
* Best-K (``epsilon = 0``): exact (the alternatives are the K (N - K) swaps, a bipartite
  set of pairs: :func:`pair_maxmin_weights`, an interior-point method with a dual
  certificate, to 1e-7 relative; cvxpy's answer was up to 1% off on random means);
* decision classes: exact when the class can be enumerated (``enumerate()``, at most
  ``max_members`` members); otherwise the constraints are restricted to the members found
  by ``argmax_excluding`` from one-element changes of S*, which gives a *lower bound* of T*
  (fewer constraints), so the reported ratio is then an upper bound (``exact=False``).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._jit import compiled
from .._validation import check_choice, param_error
from ..estimation._glr import kl_bernoulli
from ..exceptions import InvalidParameterError
from ..oracles import DecisionClass, TopK
from ._pairs_kernel import pairs_barrier_kernel

__all__ = ["BanditLowerBound", "bai_optimal_weights", "bandit_characteristic_time", "bandit_lower_bound_info",
           "pair_maxmin_weights"]


@dataclass(frozen=True)
class BanditLowerBound:
    """T*(mu), the optimal proportions, the answer it is computed for, exactness."""

    T_star: float
    allocation: NDArray[np.float64]
    answer: Any
    exact: bool
    method: str

    def samples_bound(self, delta: float) -> float:
        return self.T_star * math.log(1.0 / delta)


# ----------------------------------------------------------------------------- best arm
def _x_of_y_bernoulli(ma: float, mj: NDArray[np.float64], y: float) -> NDArray[np.float64]:
    """x_j(y): the solution of g_j(x) = d(ma, m) + x d(mj, m) = y, m = (ma + x mj)/(1 + x)."""
    lo = np.full(mj.shape, -30.0)
    hi = np.full(mj.shape, 30.0)
    for _ in range(70):
        lx = 0.5 * (lo + hi)
        x = np.exp(lx)
        m = (ma + x * mj) / (1.0 + x)
        g = kl_bernoulli(ma, m) + x * kl_bernoulli(mj, m)
        big = g > y
        hi = np.where(big, lx, hi)
        lo = np.where(big, lo, lx)
    return np.exp(0.5 * (lo + hi))


def gaussian_bai_weights(mu: Any, a: int, epsilon: float, s2x2: float) -> tuple[NDArray[np.float64], float]:
    """Theorem 5 of Garivier & Kaufmann (2016) for Gaussian arms (:func:`bai_optimal_weights`
    with ``divergence="gaussian"``; ``s2x2 = 2 sigma^2``): ``(w*, 1 / T)`` for answer ``a``,
    uniform weights and 0 when ``a`` is not (strictly) epsilon-good.

    ``g_j(x) = c_j x / (1 + x)`` with ``c_j = (mu_a - mu_j + eps)^2 / (2 sigma^2)``, so
    ``x_j(y) = y / (c_j - y)``; ``F(y) = sum_j x_j(y)^2 - 1`` is increasing and convex on
    ``(0, min c)``: Newton's method (``F' = sum_j 2 x_j c_j / (c_j - y)^2``), kept in the
    bracket ``[lo, hi]`` of the signs seen (a step out of it bisects), to a relative step of
    1e-15: 13 steps on average where bisection needed about 50 (20,000 random instances,
    gaps over six decades: the same root within 1.6e-15 relative). Written in numba's subset:
    Track-and-Stop's compiled loop solves with it inline and Python calls its compiled form
    (:func:`gaussian_bai_weights_kernel`), so the two give the same bits; numpy's form (sums
    pairwise, not in index order) agrees to rounding."""
    K = mu.shape[0]
    others = np.flatnonzero(np.arange(K) != a)
    gaps = mu[a] - mu[others] + epsilon
    w = np.empty(K)
    if np.any(gaps <= 0):
        w[:] = 1.0 / K
        return w, 0.0
    c = gaps * gaps / s2x2
    lo, hi = 0.0, c.min()
    y = 0.5 * hi
    for _ in range(200):
        d = c - y
        x = y / d
        F = np.sum(x * x) - 1.0
        if F > 0.0:
            hi = y
        elif F < 0.0:
            lo = y
        else:
            break
        step = y - F / np.sum(2.0 * x * c / (d * d))
        if not lo < step < hi:
            step = 0.5 * (lo + hi)
        if abs(step - y) <= 1e-15 * y:
            y = step
            break
        y = step
    x = y / (c - y)
    wa = 1.0 / (1.0 + np.sum(x))
    w[a] = wa
    w[others] = x * wa
    return w, wa * y


def gaussian_bai_weights_kernel() -> Any:
    """The compiled :func:`gaussian_bai_weights`, or None without numba."""
    return compiled(gaussian_bai_weights)


def bai_optimal_weights(
    mu: Any, *, answer: int | None = None, epsilon: float = 0.0, divergence: str = "gaussian", sigma: float = 1.0
) -> tuple[NDArray[np.float64], float]:
    """Optimal proportions w*(mu) and ``T_eps(mu, a)^{-1}`` for answer ``a`` (default: the best arm).

    Garivier & Kaufmann (2016), Theorem 5: ``w*_j = x_j(y*) w*_a`` where
    ``x_j(y)`` solves ``g_j(x) = y`` (``g_j(x) = d(mu_a, m) + x d(mu_j, m)``, m the weighted
    mean; with ``epsilon`` the alternative is ``lambda_j = lambda_a + eps``) and ``y*`` is the
    root of ``F(y) = sum_j d(mu_a, m_j) / d(mu_j, m_j) = 1`` on ``(0, min_j g_j(inf))``.
    Gaussian: ``g_j(x) = c_j x / (1 + x)`` with ``c_j = (mu_a - mu_j + eps)^2 / (2 sigma^2)``,
    so ``x_j(y) = y / (c_j - y)`` and the ratio is ``x_j^2`` (the root by a safeguarded Newton
    method, :func:`gaussian_bai_weights`, compiled when numba is installed). Bernoulli (``epsilon = 0``): nested bisections. Returns ``(w, 1 / T)``; ``1/T = 0`` when ``a`` is not eps-good
    (strictly).
    """
    mu = np.asarray(mu, dtype=np.float64)
    K = mu.shape[0]
    a = int(np.argmax(mu)) if answer is None else int(answer)
    if not 0 <= a < K:
        raise param_error("answer", "bai_optimal_weights", f"an arm index in the range [0, {K - 1}]", answer)
    if divergence == "gaussian":
        root = gaussian_bai_weights_kernel() or gaussian_bai_weights
        w, inv = root(np.ascontiguousarray(mu), a, float(epsilon), float(2.0 * sigma * sigma))
        return w, float(inv)
    others = np.flatnonzero(np.arange(K) != a)
    gaps = mu[a] - mu[others] + epsilon
    if np.any(gaps <= 0):
        w = np.full(K, 1.0 / K)
        return w, 0.0
    if divergence == "bernoulli":
        if epsilon != 0.0:
            raise InvalidParameterError("bai_optimal_weights: Bernoulli weights with epsilon > 0 are not implemented.")
        ma, mj = float(mu[a]), mu[others]
        lo, hi = 0.0, float(kl_bernoulli(ma, mj).min())
        for _ in range(60):
            y = 0.5 * (lo + hi)
            x = _x_of_y_bernoulli(ma, mj, y)
            m = (ma + x * mj) / (1.0 + x)
            F = float(np.sum(kl_bernoulli(ma, m) / np.maximum(kl_bernoulli(mj, m), 1e-300)))
            if F > 1.0:
                hi = y
            else:
                lo = y
        y = 0.5 * (lo + hi)
        x = _x_of_y_bernoulli(ma, mj, y)
    else:
        raise InvalidParameterError(f"Unknown divergence {divergence!r} (expected 'gaussian' or 'bernoulli').")
    wa = 1.0 / (1.0 + float(x.sum()))
    w = np.empty(K)
    w[a] = wa
    w[others] = x * wa
    return w, wa * y


# ----------------------------------------------------------------------------- sets
#: Oracle calls a solver may spend listing a class's members through its oracle.
MEMBER_LISTING_CALLS = 20_000

_MEMBERS_CACHE: "weakref.WeakKeyDictionary[Any, dict[tuple[int, int], Any]]" = weakref.WeakKeyDictionary()


def class_members(decision_class: Any, max_members: int = 5000, *,
                  max_calls: int = MEMBER_LISTING_CALLS) -> NDArray[np.bool_] | None:
    """All members of a small decision class, as a ``(m, n)`` bool array, or None.

    A class with its own ``enumerate()`` lists through it; a class with only the generic
    one of :class:`~combex.oracles.DecisionClass` (``2^n`` membership tests), or whose own
    refuses its size, is listed through its oracle instead, by Lawler's partition: the best
    member under constraints (``argmax_constrained``) of a part of the class, then one
    sub-part per free element (the members that agree with it on the elements before that
    one and differ on it), so each member costs at most ``n + 1`` oracle calls whatever
    ``n``. None when the class has more than ``max_members`` members, the listing would
    take more than ``max_calls`` oracle calls, the class declines (its ``enumerate()``
    raises ``NotImplementedError``, or it has neither method), or its oracle is approximate
    (``exact = False``: it could miss members). With the list, the GLR
    against the closest alternative is exact (a minimum over the members) instead of the
    certified Lagrangian lower bound of :func:`class_glr_lower_bound`. The list is cached
    per class object (classes are immutable after construction).

    >>> from combex.oracles import TopK
    >>> class_members(TopK(4, 2)).shape
    (6, 4)
    """
    dc = decision_class
    try:
        cached = _MEMBERS_CACHE.get(dc)
    except TypeError:  # not weak-referenceable: no cache
        cached = None
    key = (int(max_members), int(max_calls))
    if cached is not None and key in cached:
        return cached[key]
    out = _list_members(dc, *key)
    try:
        _MEMBERS_CACHE.setdefault(dc, {})[key] = out
    except TypeError:
        pass
    return out


def _list_members(dc: Any, max_members: int, max_calls: int) -> NDArray[np.bool_] | None:
    size = getattr(dc, "size", None)
    size = size() if callable(size) else size
    if size is not None and int(size) > max_members:
        return None
    own = getattr(type(dc), "enumerate", None)
    if callable(own) and own is not DecisionClass.enumerate:
        rows = []
        try:
            for m in dc.enumerate():
                rows.append(np.asarray(m, dtype=bool))
                if len(rows) > max_members:
                    return None
            return np.array(rows, dtype=bool) if rows else None
        except NotImplementedError:  # the class declines to be listed
            return None
        except (TypeError, InvalidParameterError):  # too large for its own method: the oracle's
            pass
    if not callable(getattr(dc, "argmax_constrained", None)) or not getattr(dc, "exact", True):
        return None  # an approximate oracle could miss members: a partial list is no exact GLR
    return _members_by_partition(dc, max_members, max_calls)


def _members_by_partition(dc: Any, max_members: int, max_calls: int) -> NDArray[np.bool_] | None:
    """Lawler's partition (see :func:`class_members`), depth first; None past a limit."""
    n = int(dc.n)
    zero = np.zeros(n)
    rows: list[NDArray[np.bool_]] = []
    parts: list[tuple[tuple[int, ...], tuple[int, ...]]] = [((), ())]
    calls = 0
    while parts:
        inc, exc = parts.pop()
        calls += 1
        if calls > max_calls:
            return None
        m = dc.argmax_constrained(zero, include=inc, exclude=exc)
        if m is None:
            continue
        m = np.asarray(m, dtype=bool)
        rows.append(m)
        if len(rows) > max_members:
            return None
        fixed = set(inc) | set(exc)
        agree_in, agree_out = list(inc), list(exc)
        for e in range(n):
            if e in fixed:
                continue
            if m[e]:  # the members without e that agree with m before it
                parts.append((tuple(agree_in), tuple(agree_out + [e])))
                agree_in.append(e)
            else:
                parts.append((tuple(agree_in + [e]), tuple(agree_out)))
                agree_out.append(e)
    return np.array(rows, dtype=bool) if rows else None


def _set_alternatives(mu: NDArray[np.float64], S: NDArray[np.bool_], dc: Any, K: int, max_members: int) -> tuple[list[NDArray[np.bool_]], bool]:
    """Members S' != S used as constraints, and whether they are all of them."""
    N = mu.shape[0]
    if dc is None:  # top-K: the swaps (enough when epsilon = 0)
        ins, outs = np.flatnonzero(S), np.flatnonzero(~S)
        alts = []
        for i in ins:
            for j in outs:
                m = S.copy()
                m[i], m[j] = False, True
                alts.append(m)
        return alts, True
    # the yardstick may spend more oracle calls than a solver's start
    members = class_members(dc, max_members, max_calls=10 * MEMBER_LISTING_CALLS)
    if members is not None:
        return [m for m in members if not np.array_equal(m, S)], True
    # one-element changes of S through the oracle: best member without e / with e
    alts = []
    seen: set[bytes] = set()
    big = 1e6 * (1.0 + float(np.max(np.abs(mu))))
    for e in range(N):
        w = mu.copy()
        w[e] += -big if S[e] else big
        m = dc.argmax_excluding(w, S)
        if m is None:
            continue
        m = np.asarray(m, dtype=bool)
        if m.tobytes() not in seen:
            seen.add(m.tobytes())
            alts.append(m)
    return alts, False


def _cvx_time(mu: NDArray[np.float64], S: NDArray[np.bool_], alts: list[NDArray[np.bool_]], epsilon: float,
              sigma: float) -> tuple[float, NDArray[np.float64]]:
    import cvxpy as cp  # cvxpy is slow to import (~0.5 s): only this solve loads it

    N = mu.shape[0]
    muS = float(mu[S].sum())
    D = np.array([S ^ m for m in alts], dtype=float)
    c = np.array([(muS - float(mu[m].sum()) + epsilon) for m in alts])
    if np.any(c <= 0):
        return math.inf, np.full(N, 1.0 / N)
    c = c * c / (2.0 * sigma * sigma)
    # scale for conditioning: T* ~ 1/c
    scale = float(np.median(c))
    w = cp.Variable(N, pos=True)
    s = cp.Variable()
    cons = [cp.sum(w) == 1, D @ cp.inv_pos(w) <= (c / scale) * s]
    prob = cp.Problem(cp.Minimize(s), cons)
    try:
        prob.solve(solver="CLARABEL")
    except Exception:  # pragma: no cover - solver fallback
        prob.solve(solver="SCS")
    if w.value is None or not np.all(np.isfinite(w.value)):
        # no solution (a near-tie, c_S' ~ 1e-9 beside c ~ 1, leaves the program too badly
        # conditioned for the conic solvers): the subgradient ascent's weights; any weights
        # give the value they attain below, so T stays an upper bound of T*
        def costs(v: NDArray[np.float64]) -> tuple[Any, Any]:
            inv = 1.0 / v
            den = D @ inv
            z = c / den
            a = int(np.argmin(z))
            return z, c[a] * D[a] * inv * inv / (den[a] * den[a])

        wv = _maxmin_weights(costs, N, iters=300)
    else:
        wv = np.maximum(np.asarray(w.value, dtype=float), 1e-12)
    wv /= wv.sum()
    # exact value at the returned weights (an upper bound of the optimum's T*... of its max-min)
    vals = c / (D @ (1.0 / wv))
    return 1.0 / float(vals.min()), wv


def bandit_characteristic_time(
    means: Any,
    *,
    K: int = 1,
    decision_class: Any = None,
    epsilon: float = 0.0,
    divergence: str = "gaussian",
    sigma: float = 1.0,
    max_members: int = 5000,
) -> BanditLowerBound:
    """T*(mu) for the best arm (``K = 1``), Best-K, or a decision class (see the module docstring).

    Examples
    --------
    Two Gaussian arms with gap 1, unit variance: ``w* = (1/2, 1/2)`` and
    ``T* = 2 sigma^2 (1/w_1 + 1/w_2) / 1 = 8``.

    >>> round(bandit_characteristic_time([1.0, 0.0]).T_star, 6)
    8.0
    """
    mu = np.asarray(means, dtype=np.float64)
    N = mu.shape[0]
    if decision_class is None and K == 1:
        best = int(np.argmax(mu))
        if epsilon > 0:
            cands = np.flatnonzero(mu >= mu[best] - epsilon)
        else:
            cands = np.array([best])
        bestT, bestw, bestans = math.inf, np.full(N, 1.0 / N), best
        for a in cands:
            w, inv = bai_optimal_weights(mu, answer=int(a), epsilon=epsilon, divergence=divergence, sigma=sigma)
            T = math.inf if inv <= 0 else 1.0 / inv
            if T < bestT:
                bestT, bestw, bestans = T, w, int(a)
        return BanditLowerBound(bestT, bestw, bestans, True, "garivier-kaufmann-theorem-5")
    if divergence != "gaussian":
        raise InvalidParameterError("bandit_characteristic_time: sets need the Gaussian divergence.")
    if decision_class is None:
        order = np.argsort(-mu, kind="stable")
        S = np.zeros(N, dtype=bool)
        S[order[:K]] = True
        if epsilon == 0 and np.isscalar(sigma):
            # Best-K: the closest alternatives are the swaps (some j outside reaches some i
            # inside), a bipartite set of pairs: solved exactly (cvxpy was up to 1% off)
            I, J = np.repeat(order[:K], N - K), np.tile(order[K:], K)
            c = (mu[I] - mu[J]) ** 2 / (2.0 * float(sigma) ** 2)
            if np.all(c > 0):
                w, val = pair_maxmin_weights(I, J, c, N)
                return BanditLowerBound(1.0 / val, w, S, True, "pairs-interior-point")
        if epsilon > 0:
            decision_class = TopK(N, K)
    else:
        S = np.asarray(decision_class.argmax(mu), dtype=bool)
    alts, exact = _set_alternatives(mu, S, decision_class, K, max_members)
    if not alts:
        return BanditLowerBound(0.0, np.full(N, 1.0 / N), S, True, "single-member")
    T, w = _cvx_time(mu, S, alts, epsilon, sigma)
    return BanditLowerBound(T, w, S, exact, "cvxpy-" + ("all-alternatives" if exact else "one-change-alternatives"))


_CACHE: dict[bytes, BanditLowerBound] = {}


def bandit_lower_bound_info(env: Any, delta: float, samples: int, *, K: int = 1, decision_class: Any = None,
                            epsilon: float = 0.0, divergence: str | None = None) -> dict[str, Any]:
    """``{"T_star", "lower_bound_samples", "lower_bound_ratio", "lower_bound_exact"}`` from an
    environment's truth (its ``means()``); ``{}`` when the truth is unknown or T* fails."""
    means = getattr(env, "means", None)
    if not callable(means):
        return {}
    try:
        mu = np.asarray(means(), dtype=np.float64)
    except Exception:  # pragma: no cover - environments without a truth
        return {}
    noise = getattr(env, "noise", None)
    kind = getattr(noise, "kind", "gaussian")
    sigma = float(getattr(noise, "sigma", 1.0))
    if kind == "bernoulli":
        # the instance's own T* is the KL one, whatever model the solver assumed (a 1/2-sub-
        # Gaussian T* would be larger: kl(p, q) >= 2 (p - q)^2): exact by Theorem 5 for the
        # best arm at epsilon = 0, bracketed (combex.identification._unknown_variance) otherwise
        if not (decision_class is None and K == 1 and epsilon == 0):
            from ._unknown_variance import kl_lower_bound_info  # _unknown_variance imports this module

            return kl_lower_bound_info(mu, delta, samples, K, decision_class, epsilon)
        divergence = "bernoulli"
    elif divergence is None or divergence == "bernoulli":
        divergence = "gaussian"
    key = mu.tobytes() + repr((K, id(decision_class), epsilon, divergence, sigma)).encode()
    lb = _CACHE.get(key)
    if lb is None:
        try:
            lb = bandit_characteristic_time(mu, K=K, decision_class=decision_class, epsilon=epsilon,
                                            divergence=divergence, sigma=sigma)
        except Exception:
            return {}
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = lb
    denom = lb.samples_bound(delta)
    ok = math.isfinite(denom) and denom > 0
    out = {
        "T_star": lb.T_star,
        "lower_bound_samples": denom,
        "lower_bound_ratio": samples / denom if ok else float("nan"),
        "lower_bound_exact": lb.exact,
    }
    if not lb.exact:  # a class too large to enumerate: fewer alternatives, a smaller T*
        out["lower_bound_ratio_kind"] = ("upper bound of the ratio (T* over the one-change alternatives found by "
                                         "the oracle, a lower bound of T*; the class is too large to enumerate)")
    return out


def _maxmin_weights(costs: Any, N: int, w0: NDArray[np.float64] | None = None, iters: int = 150) -> NDArray[np.float64]:
    """Approximate ``argmax_w min_a F_a(w)`` on the simplex by exponentiated subgradient
    ascent (averaged iterate); ``costs(w) -> (values, gradients)``: the (m, N) gradients,
    or only the gradient (N,) of the minimizing alternative."""
    w = np.full(N, 1.0 / N) if w0 is None else np.maximum(w0, 1e-6) / np.maximum(w0, 1e-6).sum()
    avg = np.zeros(N)
    tot = 0.0
    for k in range(iters):
        F, G = costs(w)
        g = G if G.ndim == 1 else G[int(np.argmin(F))]
        scale = float(np.max(np.abs(g))) or 1.0
        eta = 1.0 / math.sqrt(k + 1)
        w = w * np.exp(eta * g / scale)
        w = np.maximum(w / w.sum(), 1e-9)
        w /= w.sum()
        avg += w * (k + 1)
        tot += k + 1
    return avg / tot


def pair_maxmin_weights(I: Any, J: Any, c: Any, N: int, *, tol: float = 1e-7, w0: Any = None,
                        method: str = "interior-point") -> tuple[NDArray[np.float64], float]:
    """``w* = argmax_{w in simplex} min_e c_e / (1/w_{I_e} + 1/w_{J_e})`` and its value, for
    Gaussian pair alternatives (best arm, Best-K and swaps of matroid bases: every ``I_e``
    is in the answer and every ``J_e`` outside, so the pairs form a bipartite graph).

    With ``u = w / tau`` the max-min becomes ``min sum_a u_a`` s.t. ``1/u_i + 1/u_j <=
    c_e``, and with ``v = 1/u``: ``min f(v) = sum_a 1/v_a`` s.t. ``A v <= c`` (row e of A
    has ones at I_e and J_e), a convex objective over a polyhedron; ``tau* = 1 / min f`` and
    ``w* = (1/v) / sum(1/v)``. Its Lagrange dual is explicit: for multipliers ``lam >= 0``,
    ``g(lam) = min_v f(v) + lam^T (A v - c) = sum_a 2 sqrt(Lam_a) - lam^T c`` with ``Lam =
    A^T lam`` (``min_v 1/v + Lam v = 2 sqrt(Lam)``), a lower bound of ``min f``.

    Solved by a primal-dual interior-point method (Mehrotra's predictor-corrector, the
    slacks ``s = c - A v`` kept feasible), stopped when ``f(v) - g(lam) <= tol f(v)``: the
    dual bound certifies that the value is within ``tol`` (relative) of the optimum. The
    Newton systems are ``(H + A^T D A) dv = r`` with ``H`` diagonal; since no pair joins two
    answer arms or two outsiders, ``A^T D A`` has diagonal blocks, and the Schur complement
    leaves a system of the answer side's size. About 1-5 ms up to 100 arms; if it has not
    certified the value in 60 iterations, a primal log-barrier Newton method finishes
    (:func:`_pairs_barrier`; 0 of 400 random instances needed it). The value returned is
    the one ``w`` attains.

    ``method="barrier"`` runs the barrier method alone. When the optimal ``w`` is not unique,
    its central path ends at the analytic centre of the optimal face, a spread-out ``w``;
    the interior-point method stops wherever its certificate holds. Track-and-Stop uses the
    barrier for that reason: on the partition matroid of ``benchmarks/optimal.py``
    D-tracking needed 737 samples with it against 850 (20 runs each).

    Arms in no pair get ``w = 0``. ``(uniform, 0.0)`` if some ``c_e <= 0`` (a tie under the
    estimate: every allocation has value 0). ``w0`` (positive on the paired arms, e.g. the
    last solve's answer for nearby means) gives the starting point ``v ~ 1/w0``, scaled to
    90% of the nearest constraint.
    """
    I = np.asarray(I, dtype=np.intp)
    J = np.asarray(J, dtype=np.intp)
    c = np.asarray(c, dtype=np.float64)
    if c.size == 0 or not np.all(c > 0) or not np.all(np.isfinite(c)):
        return np.full(N, 1.0 / N), 0.0
    L, li = np.unique(I, return_inverse=True)
    R, ri = np.unique(J, return_inverse=True)
    if np.intersect1d(L, R).size or np.unique(li * R.size + ri).size != li.size:
        raise InvalidParameterError("pair_maxmin_weights needs distinct pairs (i, j) with I and J disjoint.")
    nL, nR = L.size, R.size
    cap_L = np.full(nL, np.inf)
    np.minimum.at(cap_L, li, c)
    cap_R = np.full(nR, np.inf)
    np.minimum.at(cap_R, ri, c)
    vL, vR = 0.25 * cap_L, 0.25 * cap_R  # strictly feasible: v_i + v_j <= c_e / 2
    warm = False
    if w0 is not None:
        w0 = np.asarray(w0, dtype=np.float64)
        if w0.shape == (N,) and np.all(w0[L] > 0) and np.all(w0[R] > 0):
            uL, uR = 1.0 / w0[L], 1.0 / w0[R]
            scale = 0.9 / float(np.max((uL[li] + uR[ri]) / c))
            vL, vR, warm = scale * uL, scale * uR, True
    method = check_choice(method, "method", ("interior-point", "barrier"), owner="pair_maxmin_weights")
    out = _pairs_primal_dual(li, ri, c, nL, nR, vL, vR, tol) if method == "interior-point" else None
    vL, vR = out if out is not None else _pairs_barrier(li, ri, c, nL, nR, vL, vR, tol, warm=warm)
    w = np.zeros(N)
    w[L], w[R] = 1.0 / vL, 1.0 / vR
    w /= w.sum()
    return w, float(np.min(c / (1.0 / w[I] + 1.0 / w[J])))


def _schur_solve(li: Any, ri: Any, dL: Any, dR: Any, off: Any, bL: Any, bR: Any) -> tuple[Any, Any]:
    """Solve ``[[diag(dL), B], [B^T, diag(dR)]] x = b`` with ``B[li, ri] = off`` (bipartite)."""
    B = np.zeros((dL.size, dR.size))
    B[li, ri] = off  # the pairs are distinct
    BdR = B / dR
    xL = np.linalg.solve(np.diag(dL) - BdR @ B.T, bL - BdR @ bR)
    return xL, (bR - B.T @ xL) / dR


def _max_step(x: Any, dx: Any) -> float:
    neg = dx < 0
    return float(np.min(-x[neg] / dx[neg])) if neg.any() else math.inf


def _pairs_primal_dual(li: Any, ri: Any, c: Any, nL: int, nR: int, vL: Any, vR: Any, tol: float,
                       max_iter: int = 60) -> tuple[Any, Any] | None:
    """Mehrotra predictor-corrector for ``min sum 1/v`` s.t. ``v_i + v_j <= c_e`` (see
    :func:`pair_maxmin_weights`); ``None`` if not certified within ``max_iter``."""
    m = c.size
    s = c - vL[li] - vR[ri]
    lam = (float(np.sum(1.0 / vL) + np.sum(1.0 / vR)) / m) / s  # centred: lam_e s_e equal
    with np.errstate(all="ignore"):
        for _ in range(max_iter):
            f = float(np.sum(1.0 / vL) + np.sum(1.0 / vR))
            lamL, lamR = np.bincount(li, lam, nL), np.bincount(ri, lam, nR)
            g = float(2.0 * (np.sum(np.sqrt(lamL)) + np.sum(np.sqrt(lamR))) - lam @ c)  # dual bound
            if not math.isfinite(f) or not math.isfinite(g):
                return None
            if f - g <= tol * f:
                return vL, vR
            rdL, rdR = lamL - 1.0 / vL**2, lamR - 1.0 / vR**2  # grad f + A^T lam
            D = lam / s
            dL = 2.0 / vL**3 + np.bincount(li, D, nL)
            dR = 2.0 / vR**3 + np.bincount(ri, D, nR)

            def direction(rc: Any) -> tuple[Any, Any, Any, Any]:
                # (H + A^T D A) dv = -r_d + A^T (rc / s); ds = -A dv; dlam = -(rc + lam ds) / s
                t = rc / s
                xL, xR = _schur_solve(li, ri, dL, dR, D, -rdL + np.bincount(li, t, nL),
                                      -rdR + np.bincount(ri, t, nR))
                ds = -(xL[li] + xR[ri])
                return xL, xR, ds, -(rc + lam * ds) / s

            mu = float(lam @ s) / m
            xL, xR, ds, dlam = direction(lam * s)  # predictor (affine scaling)
            a_p = min(1.0, _max_step(s, ds), _max_step(vL, xL), _max_step(vR, xR))
            a_d = min(1.0, _max_step(lam, dlam))
            sigma = (float((lam + a_d * dlam) @ (s + a_p * ds)) / m / mu) ** 3
            xL, xR, ds, dlam = direction(lam * s - sigma * mu + ds * dlam)  # corrector
            # 80% of the way to the boundary: with 0.99 (the usual choice) the slacks of wide
            # ranges of c_e collapsed and 63% of 400 random instances needed the fallback;
            # with 0.9 6%, with 0.8 none
            a_p = min(1.0, 0.8 * min(_max_step(s, ds), _max_step(vL, xL), _max_step(vR, xR)))
            a_d = min(1.0, 0.8 * _max_step(lam, dlam))
            vL, vR = vL + a_p * xL, vR + a_p * xR
            s = c - vL[li] - vR[ri]
            lam = lam + a_d * dlam
            if np.any(s <= 0) or np.any(lam <= 0) or np.any(vL <= 0) or np.any(vR <= 0):
                return None
    return None


def _pairs_barrier(li: Any, ri: Any, c: Any, nL: int, nR: int, vL: Any, vR: Any,
                   tol: float, warm: bool = False) -> tuple[Any, Any]:
    """Primal log-barrier Newton method for ``min sum 1/v`` s.t. ``v_i + v_j <= c_e`` (see
    :func:`pair_maxmin_weights`): ``f(v) - mu sum_e log(c_e - v_i - v_j)``, mu divided by 10
    per round until the barrier's duality gap ``mu |E|`` is below ``tol f``; it starts at
    ``mu`` = the objective over ``|E|``, or ``min(0.01, tol)`` times that from a warm start
    (a warm solve with ``tol >= 1e-3`` is a single centring round). With numba, the same
    method in one compiled loop (:mod:`._pairs_kernel`; the same steps, sums in index
    order)."""
    kernel = pairs_barrier_kernel()
    if kernel is not None:
        kL = np.array(vL, dtype=np.float64)
        kR = np.array(vR, dtype=np.float64)
        if kernel(np.asarray(li, dtype=np.intp), np.asarray(ri, dtype=np.intp), np.asarray(c, dtype=np.float64),
                  int(nL), int(nR), kL, kR, float(tol), bool(warm)):
            return kL, kR

    def phi(vL: Any, vR: Any, mu: float) -> float:
        s = c - vL[li] - vR[ri]
        if np.any(s <= 0) or np.any(vL <= 0) or np.any(vR <= 0):
            return math.inf
        return float(np.sum(1.0 / vL) + np.sum(1.0 / vR) - mu * np.sum(np.log(s)))

    f = float(np.sum(1.0 / vL) + np.sum(1.0 / vR))
    mu = (min(0.01, tol) if warm else 1.0) * f / c.size
    for _ in range(200):
        for _ in range(50):  # Newton on the barrier problem at this mu
            s = c - vL[li] - vR[ri]
            inv_s, inv_s2 = 1.0 / s, 1.0 / (s * s)
            gL = -1.0 / vL**2 + mu * np.bincount(li, inv_s, nL)
            gR = -1.0 / vR**2 + mu * np.bincount(ri, inv_s, nR)
            xL, xR = _schur_solve(li, ri, 2.0 / vL**3 + mu * np.bincount(li, inv_s2, nL),
                                  2.0 / vR**3 + mu * np.bincount(ri, inv_s2, nR), mu * inv_s2, -gL, -gR)
            dec = float(-(gL @ xL + gR @ xR))  # Newton decrement squared
            if dec < 1e-12 * max(f, 1.0):
                break
            # the longest step that stays strictly inside, then backtracking on phi
            ds = -(xL[li] + xR[ri])
            step = min(1.0, 0.99 * min(_max_step(s, ds), _max_step(vL, xL), _max_step(vR, xR)))
            cur = phi(vL, vR, mu)
            while step > 1e-12 and phi(vL + step * xL, vR + step * xR, mu) > cur - 0.25 * step * dec:
                step *= 0.5
            vL, vR = vL + step * xL, vR + step * xR
            if step * step * dec < 1e-14 * max(f, 1.0):
                break
        f = float(np.sum(1.0 / vL) + np.sum(1.0 / vR))
        if mu * c.size <= tol * f:
            break
        mu /= 10.0
    return vL, vR
