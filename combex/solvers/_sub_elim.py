"""Sub-Elim (Algorithm 3 with the arm sets of Algorithm 2) and its linear-time baseline.

Yang et al., "Linear Bandit Algorithms with Sublinear Time Complexity", ICML 2022; see
:mod:`combex.solvers.sublinear` for the family. One run is a state object with the
algorithm's named steps (:class:`_SubElimRun`: ``arrive`` = lines 8-12, ``choose`` =
lines 14-27 with ``rescan`` = lines 19-24, ``observe`` = lines 29-31); the loop over
steps is :meth:`combex.solvers.RegretPolicy.run`.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, check_choice, check_float, check_int, check_probability
from ..estimation import LeastSquares
from ..exceptions import InvalidParameterError
from ..mips import AdaptiveMIPS
from ._registry import register_solver
from ._regret import RegretPolicy, RegretRun

__all__ = ["SubElim", "LinElim"]


def _ridge(d: int) -> LeastSquares:
    """Online ridge regression of eq. (1): ``V = I + sum x x^T``, ``theta_hat = V^{-1} sum r x``
    (Sherman-Morrison updates of ``V^{-1}``, refactorized every 1000 updates)."""
    return LeastSquares(d, ridge=1.0, refactor_every=1000)


class _LinearBanditPolicy(RegretPolicy):
    """Settings shared by the four policies: confidence (``delta``, ``eta``, ``beta``) and,
    for Sub-Elim / Sub-TS, the MIPS index (shortlist ``p``, HNSW parameters)."""

    default_index = "exact"

    def _set_confidence(self, *, delta: Any, eta: Any, eta_high: float, beta: Any) -> None:
        owner = type(self).__name__
        self.delta = check_probability(delta, "delta", owner=owner)
        self.eta = None if eta is None else check_float(eta, "eta", owner=owner, low=0.0, high=eta_high, closed="neither")
        self.beta = None if beta is None else check_float(beta, "beta", owner=owner, low=0.0, closed="neither")

    def _set_index_settings(
        self, *, shortlist: Any, delta: Any, eta: Any, eta_high: float, index: Any, ef: Any,
        hnsw_M: Any, ef_construction: Any, exact_below: Any, beta: Any, lazy: Any, build_after: Any,
        backend: Any, build_threads: Any,
    ) -> None:
        owner = type(self).__name__
        self.lazy = check_bool(lazy, "lazy", owner=owner)
        self.build_after = check_float(build_after, "build_after", owner=owner, low=0.0)
        self._set_confidence(delta=delta, eta=eta, eta_high=eta_high, beta=beta)
        self.exact_below = check_int(exact_below, "exact_below", owner=owner, low=0)
        self.shortlist = check_int(shortlist, "shortlist", owner=owner, low=1)
        self.index = check_choice(self.default_index if index is None else index, "index", ["hnsw", "exact"], owner=owner)
        self.ef = None if ef is None else check_int(ef, "ef", owner=owner, low=1)
        self.hnsw_M = check_int(hnsw_M, "hnsw_M", owner=owner, low=2)
        self.ef_construction = check_int(ef_construction, "ef_construction", owner=owner, low=1)
        self.backend = check_choice(backend, "backend", ["auto", "faiss", "usearch", "hnswlib"], owner=owner)
        self.build_threads = check_int(build_threads, "build_threads", owner=owner, low=1)

    def _mips(self, dim: int, rng: Any, **kw: Any) -> AdaptiveMIPS:
        """An adaptive MIPS solver with this policy's index settings."""
        return AdaptiveMIPS(
            dim, index=self.index, shortlist=self.shortlist, hnsw_M=self.hnsw_M,
            ef_construction=self.ef_construction, ef=self.shortlist if self.ef is None else self.ef,
            exact_below=self.exact_below, build="lazy" if self.lazy else "eager", build_after=self.build_after,
            backend=self.backend, build_threads=self.build_threads, rng=rng, **kw,
        )


def _elim_constants(d: int, T: int, delta: float, eta: float | None, beta: float | None) -> tuple[float, float, int]:
    """``eta(T)`` (default ``1/sqrt(T)``, capped below 1/8), ``beta(delta/2)`` of Algorithm 3
    line 3 (unless given) and ``s_max = ceil(log2(1/(8 eta)))`` of line 4 (at least 1)."""
    eta = eta if eta is not None else min(1.0 / math.sqrt(T), 0.124)
    if beta is None:
        beta = 1.0 + math.sqrt(2.0 * math.log(2.0 / delta) + d * math.log(1.0 + T / d))
    return eta, beta, max(1, math.ceil(math.log2(1.0 / (8.0 * eta))))


# ---------------------------------------------------------------------- packing
class _Packer:
    """vec(x x^T / d) and vec(A / d) packed on the upper triangle with sqrt(2) weights on
    the off-diagonal, so <pack_query(A), pack_point(x)> = x^T A x / d^2 exactly, in
    d(d+1)/2 instead of d^2 dimensions."""

    def __init__(self, d: int) -> None:
        self.d = d
        self.iu = np.triu_indices(d)
        self.w = np.where(self.iu[0] == self.iu[1], 1.0, math.sqrt(2.0))
        self.dim = self.iu[0].size

    def points(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return X[:, self.iu[0]] * X[:, self.iu[1]] * self.w / self.d

    def query(self, A: NDArray[np.float64]) -> NDArray[np.float64]:
        return A[self.iu] * self.w / self.d


class _StageMembers:
    """Members of every ``Psi_s`` (an arm is in at most one stage): one dense array per
    stage plus the global position of each arm, so batches of arms are inserted and
    removed in O(batch) numpy operations and a uniform member is drawn in O(1)."""

    def __init__(self, n_stages: int, n_total: int) -> None:
        self.items = [np.empty(16, dtype=np.int64) for _ in range(n_stages)]
        self.count = np.zeros(n_stages, dtype=np.int64)
        self.pos = np.full(n_total, -1, dtype=np.int64)
        self._mark = np.zeros(n_total, dtype=bool)

    def members(self, s: int) -> NDArray[np.int64]:
        return self.items[s][: self.count[s]]

    def add(self, s: int, ids: NDArray[np.int64]) -> None:
        c = int(self.count[s])
        need = c + ids.size
        if need > self.items[s].size:
            grown = np.empty(max(need, 2 * self.items[s].size), dtype=np.int64)
            grown[:c] = self.items[s][:c]
            self.items[s] = grown
        self.items[s][c:need] = ids
        self.pos[ids] = np.arange(c, need)
        self.count[s] = need

    def remove(self, s: int, ids: NDArray[np.int64]) -> None:
        """Remove the (distinct, present) arms ``ids`` from stage ``s``: the surviving
        arms of the tail fill the holes left before the new end."""
        c = int(self.count[s])
        new = c - ids.size
        arr = self.items[s]
        holes = self.pos[ids]
        holes = np.sort(holes[holes < new])
        self._mark[ids] = True
        tail = arr[new:c]
        movers = tail[~self._mark[tail]]
        self._mark[ids] = False
        arr[holes] = movers
        self.pos[movers] = holes
        self.pos[ids] = -1
        self.count[s] = new


# ---------------------------------------------------------------------- Sub-Elim
@register_solver
class SubElim(_LinearBanditPolicy):
    """Sublinear time elimination (Algorithm 3 with the arm sets of Algorithm 2).

    Parameters
    ----------
    shortlist : int, default 30
        ``p``, candidates fetched from HNSW and re-ranked exactly (Section 7).
    delta : float, default 0.05
        Failure probability in (0, 1).
    eta : float, optional
        ``eta(T)`` in (0, 1/8); default ``1 / sqrt(T)`` (Corollary 5.3).
    index : {"hnsw", "exact"}, default "hnsw"
        The MIPS structure of every ``Psi_s``; ``"exact"`` scans the queried stage
        (Algorithm 3 with exact queries; the linear-time baseline is :class:`LinElim`).
    ef : int, optional
        HNSW search breadth; default ``shortlist`` (at least the shortlist size).
    hnsw_M, ef_construction : int
        HNSW parameters (:class:`~combex.mips.HNSWIndex`).
    backend : {"auto", "faiss", "usearch", "hnswlib"}, default "auto"
        The graph library of the stage indexes (:class:`~combex.mips.HNSWIndex`).
    build_threads : int, default 1
        Threads for building the stage graphs (queries use one thread).
    exact_below : int, default 2048
        Arm sets of at most this size are scanned exactly instead of searched with HNSW
        (see :class:`~combex.mips.AdaptiveMIPS`); 0 always uses HNSW.
    lazy : bool, default True
        Stage indexes insert arms lazily (``AdaptiveMIPS(build="lazy")``, a ski-rental
        rule): arms moved into a stage are scanned exactly until the queries have paid
        for their graph insertion. The rescans of lines 19-27 move up to K arms at once
        and most of them are eliminated or moved again before the stage is queried
        much, so eager insertion spends most of the online time building HNSW graphs
        (about 30x slower than the linear scan at K = 10^5). The initial stage
        ``Psi_{s_min}`` is built eagerly (line 5, the preprocessing).
    build_after : float, default 2000
        The ski-rental ratio of the lazy stage indexes (see
        :class:`~combex.mips.AdaptiveMIPS`).
    beta : float, optional
        Confidence width; default ``beta(delta/2)`` of line 3 (about 12 at d = 16,
        T = 20,000). A smaller value is the usual practical tuning (it voids the
        guarantee; see ``docs/mips.md`` for the regrets it gives).
    refresh : bool, default True
        Fresh bounds, O(d^2) each, for the few arms the algorithm touches anyway (keys
        stay upper confidence bounds, so no guarantee is lost):

        * the candidates a stage query returns (the shortlist re-ranked above the check
          ``c r - epsilon``): their lower bounds may raise the threshold ``r``, those whose
          upper bound ``x^T theta_hat + beta ||x||_{V^-1}`` is below ``r`` are eliminated,
          and the best surviving candidate is played (re-query if none survives; each
          round eliminates an arm, so this work is paid once per arm);
        * the played arm, after the update: new heap key
          ``x^T theta_hat + max(2^{-s}, beta ||x||_{V^-1})`` (eliminated if below ``r``);
        * the arm that set ``r``: its lower bound is recomputed every step, so ``r``
          tightens as the estimate does.

        The box keys an arm with the estimate of the time it entered its stage and
        re-keys it only at a rescan (lines 19-27), and raises ``r`` only from arrivals and
        rescans. An arm whose early estimate was too high then stays in the queried stage,
        however bad, while the stage's queries are non-null, and is played over and over:
        on sublinear-synthetic (K = 5,000, T = 20,000, seed 0) the box's regret is 14,522
        against 3,819 with ``refresh`` and 3,925 for the linear scan :class:`LinElim`
        (the paper reports 3,758 and 3,866). ``False`` is the box as printed (with the
        arrival rule below).

    Notes
    -----
    Faithful to the boxes, with these documented choices:

    * line 3: ``beta(delta/2) = 1 + sqrt(2 log(2/delta) + d log(1 + T/d))``; line 4:
      ``s_max = ceil(log2(1 / (8 eta)))`` (at least 1); each ``Psi_s`` has an adaptive
      MIPS solver of parameters ``(1/4, 2^{-2s-2}(1 - eta^2)/(d^2 beta^2),
      2^{-2s-2} eta^2/(d^2 beta^2), delta/(2 s_max))`` over the points
      ``vec(x x^T / d)`` (Algorithm 2 line 3; packed on the upper triangle, same inner
      products);
    * line 5 puts every initial arm in ``Psi_0`` with heap key ``x^T theta_hat_1 + 2^0``.
      That key is an upper confidence bound only if the uncertainty
      ``beta ||x||_{V^-1} = beta ||x||`` (at t = 1) is at most 1, which fails even under
      Assumption 4.3 (beta > 1) and badly on Section 7's unnormalized features; a too-low
      key lets the threshold eliminate good arms. We therefore start the stages at
      ``s_min = min(0, floor(-log2(max_a beta ||x_a||)))`` (``s = s_min..s_max``), put the
      initial arms in ``Psi_{s_min}`` (line 5 with the index shifted), and keep every key a
      valid bound: ``x^T theta_hat + max(2^{-s}, beta ||x||_{V^-1})``;
    * lines 8 and 21 write ``s = ceil(-log2(beta ||x||_{V^-1}))``, but Section 5.1 and the
      proof of Lemma 5.1 need every arm of ``Psi_s`` to have uncertainty at most
      ``2^{-s}``, which the ceiling breaks (u = 0.3 gives s = 2 and 2^{-2} < 0.3); we use
      the **floor**, clamped to ``[s_min, s_max]`` (and never below the current stage);
    * line 9 reads ``x_{a_t}^T theta_hat``; it must be ``x_a^T theta_hat`` (a is the new
      arm); an arriving arm whose key is already below ``r`` is eliminated at once
      (Algorithm 2's invariant that every key in a heap is at least ``r``; lines 10-11
      only pop heaps when ``r`` rises, which would leave it in place and playable);
    * lines 19-27: after a null answer every arm of ``Psi_{s_t}`` is re-placed by its exact
      uncertainty; if some stay in ``Psi_{s_t}`` (possible only when an approximate index
      missed them), the one with the largest uncertainty (computed anyway) is played,
      which the exact query of line 26 would return; this prevents an endless loop; a
      moved arm whose new heap key is already below the threshold (updated from the
      rescanned arms' lower bounds first) is eliminated instead of inserted and popped;
    * if every arm were ever eliminated (a failure event of probability <= delta), the arm
      that set the threshold is put back.
    """

    name = "sub-elim"
    default_index = "hnsw"

    def __init__(
        self,
        shortlist: int = 30,
        *,
        delta: float = 0.05,
        eta: float | None = None,
        index: str | None = None,
        ef: int | None = None,
        hnsw_M: int = 16,
        ef_construction: int = 40,
        exact_below: int = 2048,
        lazy: bool = True,
        build_after: float = 2000.0,
        beta: float | None = None,
        refresh: bool = True,
        backend: str = "auto",
        build_threads: int = 1,
    ) -> None:
        self.refresh = check_bool(refresh, "refresh", owner=type(self).__name__)
        self._set_index_settings(shortlist=shortlist, delta=delta, eta=eta, eta_high=0.125, index=index, ef=ef,
                                 hnsw_M=hnsw_M, ef_construction=ef_construction, exact_below=exact_below,
                                 beta=beta, lazy=lazy, build_after=build_after, backend=backend,
                                 build_threads=build_threads)


class _SubElimRun(RegretRun):
    """One run of Sub-Elim: the stages ``Psi_s`` (an adaptive MIPS index, a member list
    and a heap of upper confidence bounds each), the threshold ``r`` and the ridge
    estimate, with the steps of Algorithm 3 as methods. Building it is line 5 (the
    preprocessing)."""

    owner = "SubElim"

    def __init__(self, policy: SubElim, env: Any, T: int, gen: np.random.Generator) -> None:
        self.policy, self.env, self.gen = policy, env, gen
        self.refresh = policy.refresh
        X = self.X = env.features
        n_total, d = X.shape
        self.eta, self.beta, self.s_max = eta, beta, s_max = _elim_constants(d, T, policy.delta, policy.eta, policy.beta)
        self.packer = _Packer(d)
        self.ridge = _ridge(d)
        scale = 1.0 / (d * d * beta * beta)
        init = env.initial.astype(np.int64)
        # Line 5's Psi_0 must hold every initial arm with uncertainty <= 2^{-s}; at t = 1
        # (V = I) the uncertainty is beta ||x||, so the first stage is s_min <= 0.
        u_top = beta * float(np.sqrt((X[init] ** 2).sum(axis=1).max())) if init.size else 1.0
        self.s_min = s_min = min(0, int(math.floor(-math.log2(u_top))))
        n_st = self.n_st = s_max - s_min + 1  # internal stage index = s - s_min
        self.top = n_st - 1  # internal index of s_max
        self.members = _StageMembers(n_st, n_total)
        self.heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(n_st)]
        self.stage_of = np.full(n_total, -1, dtype=np.int64)
        self.version = np.zeros(n_total, dtype=np.int64)
        # vec(x x^T / d) of every arm, computed once (preprocessing / arrival).
        self.packed = np.zeros((n_total, self.packer.dim), dtype=np.float64)
        n_init = max(1, env.initial.size)
        seeds = gen.spawn(n_st)
        self.stages = [
            policy._mips(
                self.packer.dim,
                seeds[i],
                c=0.25,
                r=2.0 ** (-2 * (i + s_min) - 2) * (1 - eta**2) * scale,
                epsilon=2.0 ** (-2 * (i + s_min) - 2) * eta**2 * scale,
                delta=policy.delta / (2 * s_max),
                capacity=n_init if i == 0 else 1024,
            )
            for i in range(n_st)
        ]
        self.stats = {"null_queries": 0, "rescans": 0, "eliminated": 0, "moves": 0, "restored": 0,
                      "refresh_eliminated": 0, "bound_evaluations": 0}
        self.r_low = -math.inf
        self.r_arm = -1
        # Line 5: all initial arms into the first stage (this is the preprocessing).
        if init.size:
            self.packed[init] = self.packer.points(X[init])
            z0 = np.zeros(init.size, dtype=np.int64)
            self.place(init, z0, self.keys_of(init, z0, self.bounds(init)[1]))
            if policy.index == "hnsw":
                self.stages[0].build_now()

    # ------------------------------------------------------------------ arm sets
    def bounds(self, ids: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Means ``x^T theta_hat`` and uncertainties ``beta ||x||_{V^-1}`` of the arms."""
        m, nrm = self.ridge._means_and_norms(self.X[ids])
        self.stats["bound_evaluations"] += m.size
        return m, self.beta * nrm

    def stage_for(self, u: NDArray[np.float64]) -> NDArray[np.int64]:
        """Internal stage index ``floor(-log2 u)`` clamped to ``[s_min, s_max]`` (see Notes)."""
        with np.errstate(divide="ignore"):
            s = np.floor(-np.log2(np.maximum(u, 1e-300)))
        return (np.clip(s, self.s_min, self.s_max) - self.s_min).astype(np.int64)

    def keys_of(self, ids: NDArray[np.int64], s_arr: NDArray[np.int64], u: NDArray[np.float64]) -> NDArray[np.float64]:
        """Heap keys ``x^T theta_hat + max(2^{-s}, u)`` (upper confidence bounds)."""
        return self.X[ids] @ self.ridge.theta + np.maximum(2.0 ** (-(s_arr + self.s_min).astype(np.float64)), u)

    def place(self, ids: NDArray[np.int64], s_arr: NDArray[np.int64], keys: NDArray[np.float64]) -> None:
        """Insert arms into their stages (Algorithm 2 line 7: index and heap)."""
        self.version[ids] += 1
        self.stage_of[ids] = s_arr
        for s in np.unique(s_arr):
            sel = np.flatnonzero(s_arr == s)
            a_s = ids[sel]
            self.stages[s].add(self.packed[a_s], a_s)
            self.members.add(int(s), a_s)
            entries = list(zip(keys[sel].tolist(), self.version[a_s].tolist(), a_s.tolist()))
            h = self.heaps[s]
            if len(entries) > 8 and len(entries) * 8 > len(h):
                h.extend(entries)
                heapq.heapify(h)
            else:
                for e in entries:
                    heapq.heappush(h, e)

    def unplace(self, ids: NDArray[np.int64]) -> None:
        """Remove arms from their stages (index, members; heap entries go stale)."""
        st = self.stage_of[ids]
        for s in np.unique(st):
            a_s = ids[st == s]
            self.stages[s].remove(a_s)
            self.members.remove(int(s), a_s)
        self.stage_of[ids] = -1
        self.version[ids] += 1

    def raise_threshold(self, lcb: float, arm: int) -> bool:
        """``r = max(r, lcb)``; whether it rose (the caller then pops the heaps)."""
        if lcb > self.r_low:
            self.r_low, self.r_arm = lcb, arm
            return True
        return False

    def eliminate(self) -> None:
        """Pop every heap entry below the threshold r (lines 10-12 / 23-24)."""
        dead: list[int] = []
        for s in range(self.n_st):
            h = self.heaps[s]
            while h and h[0][0] < self.r_low:
                _, ver, a = heapq.heappop(h)
                if self.stage_of[a] == s and self.version[a] == ver:
                    dead.append(a)
        if dead:
            self.unplace(np.asarray(dead, dtype=np.int64))
            self.stats["eliminated"] += len(dead)

    def lowest_stage(self) -> int:
        nz = np.flatnonzero(self.members.count)
        return int(nz[0]) if nz.size else -1

    def restore(self) -> int:
        """Failure event (every arm eliminated): put the threshold arm back in Psi_{s_max}."""
        self.stats["restored"] += 1
        a0 = np.array([self.r_arm if self.r_arm >= 0 else int(self.env.present()[0])])
        top = np.array([self.top])
        self.place(a0, top, self.keys_of(a0, top, self.bounds(a0)[1]))
        return self.top

    # ------------------------------------------------------------------ steps
    def arrive(self, added: NDArray[np.int64]) -> None:
        """Lines 8-12: new arms into the stage of their uncertainty; the threshold rises
        with their lower bounds. An arrival whose key is already below the threshold is
        eliminated instead of inserted (inserting it and running lines 11-13 would pop it
        at once)."""
        self.packed[added] = self.packer.points(self.X[added])
        m_new, u = self.bounds(added)
        s_new = self.stage_for(u)
        k_new = self.keys_of(added, s_new, u)
        lcb = m_new - u
        j = int(np.argmax(lcb))
        raised = self.raise_threshold(float(lcb[j]), int(added[j]))
        keep = k_new >= self.r_low
        self.stats["eliminated"] += int(keep.size - keep.sum())
        self.place(added[keep], s_new[keep], k_new[keep])
        if raised:
            self.eliminate()

    def tighten_threshold(self) -> None:
        """``refresh``: the arm that set the threshold gets a fresh lower bound every step,
        so the threshold tightens as the estimate does (O(d^2))."""
        if self.r_arm < 0:
            return
        m_r, u_r = self.bounds(np.array([self.r_arm]))
        lcb_r = float(m_r[0] - u_r[0])
        if lcb_r > self.r_low:
            self.r_low = lcb_r
            self.eliminate()

    def query_stage(self, s: int) -> int | None:
        """Query Psi_s with vec(V^{-1}/d) (line 18 / 26). With ``refresh``, the candidates
        get fresh bounds first: those whose upper bound is below the threshold (raised by
        their lower bounds) are eliminated, and the best surviving candidate is returned;
        re-query if none survives (each round eliminates at least one arm, so the extra
        work is paid once per arm)."""
        qv = self.packer.query(self.ridge.A_inv)
        stage = self.stages[s]
        if not self.refresh:
            return stage._query(qv)[0]
        while True:
            cand, _ = stage._query_all(qv)
            if cand.size == 0:
                return None
            m, u = self.bounds(cand)
            j = int(np.argmax(m - u))
            raised = self.raise_threshold(float(m[j] - u[j]), int(cand[j]))
            ok = m + u >= self.r_low
            if not ok.all():
                dead = cand[~ok]
                self.unplace(dead)
                self.stats["eliminated"] += dead.size
                self.stats["refresh_eliminated"] += dead.size
            if raised:
                self.eliminate()
            live = np.flatnonzero(ok & (self.stage_of[cand] >= 0))
            if live.size:
                return int(cand[int(live[0])])
            if self.members.count[s] == 0:
                return None

    def rescan(self, s_t: int) -> int | None:
        """Lines 19-24 after a null answer: re-place every arm of Psi_{s_t} by its exact
        uncertainty (moved arms whose new key is already below the threshold are
        eliminated instead of inserted). Returns the arm to play when some arms stay in
        Psi_{s_t} -- only an approximate index can miss them: the one of largest
        uncertainty, which the exact query of line 26 would return -- else None."""
        self.stats["null_queries"] += 1
        self.stats["rescans"] += 1
        ids = self.members.members(s_t).copy()
        means, u = self.bounds(ids)
        lcb = means - u
        new_s = np.maximum(self.stage_for(u), s_t)
        move = new_s != s_t
        j = int(np.argmax(lcb))
        self.raise_threshold(float(lcb[j]), int(ids[j]))
        if move.any():
            mv, s_mv, u_mv = ids[move], new_s[move], u[move]
            k_mv = means[move] + np.maximum(2.0 ** (-(s_mv + self.s_min).astype(np.float64)), u_mv)
            self.unplace(mv)
            keep = k_mv >= self.r_low
            self.stats["moves"] += int(move.sum())
            self.stats["eliminated"] += int((~keep).sum())
            self.place(mv[keep], s_mv[keep], k_mv[keep])
        self.eliminate()
        stay = np.flatnonzero(~move & (self.stage_of[ids] == s_t))
        if stay.size:
            return int(ids[stay[int(np.argmax(u[stay]))]])
        return None

    def choose(self, t: int) -> int:
        """Lines 14-27: query the lowest non-empty stage; a null answer rescans it
        (lines 19-24) and moves on to the next lowest (line 25); in Psi_{s_max} a uniform
        member is played (lines 15-16)."""
        if self.refresh:
            self.tighten_threshold()
        s_t = self.lowest_stage()  # line 14
        while True:
            if s_t < 0:  # failure event: restore the threshold arm
                s_t = self.restore()
            if s_t == self.top:  # lines 15-16
                items = self.members.members(s_t)
                return int(items[int(self.gen.integers(items.size))])
            a_t = self.query_stage(s_t)  # lines 18 / 26
            if a_t is not None:
                return a_t
            if self.members.count[s_t] == 0:  # emptied by the fresh checks of `refresh`
                s_t = self.lowest_stage()
                continue
            a_t = self.rescan(s_t)
            if a_t is not None:
                return a_t
            s_t = self.lowest_stage()  # line 25

    def observe(self, arm: int, reward: float) -> None:
        """Lines 29-31: the ridge update; with ``refresh``, the played arm's fresh bounds
        (new heap key, eliminated if below the threshold, which its lower bound may raise)."""
        self.ridge._add(self.X[arm], reward, 1)
        if not self.refresh or self.stage_of[arm] < 0:
            return
        m_a, u_a = (float(v[0]) for v in self.bounds(np.array([arm])))
        s_a = int(self.stage_of[arm])
        key = m_a + max(2.0 ** (-(s_a + self.s_min)), u_a)
        raised = self.raise_threshold(m_a - u_a, arm)
        if key < self.r_low:
            self.unplace(np.array([arm]))
            self.stats["eliminated"] += 1
            self.stats["refresh_eliminated"] += 1
        else:
            self.version[arm] += 1
            heapq.heappush(self.heaps[s_a], (key, int(self.version[arm]), arm))
        if raised:
            self.eliminate()

    # ------------------------------------------------------------------ reporting
    @property
    def maintenance_seconds(self) -> float:
        return sum(st.maintenance_seconds for st in self.stages)

    def info(self) -> dict[str, Any]:
        return dict(
            self.stats, s_max=self.s_max, s_min=self.s_min, beta=self.beta, eta=self.eta, threshold=self.r_low,
            final_sizes=self.members.count.tolist(), mips_builds=[st.n_builds for st in self.stages],
            mips_null=[st.n_null for st in self.stages], mips_queries=[st.n_queries for st in self.stages],
            stage_scans=sum(st.n_scanned for st in self.stages), backend=self.stages[0].backend,
        )


# ---------------------------------------------------------------------- Lin-Elim
@register_solver
class LinElim(_LinearBanditPolicy):
    """The linear-time baseline of Algorithm 3 (Section 7): elimination by a linear scan.

    Every step scans every live arm with the current estimate: uncertainty
    ``u_a = beta ||x_a||_{V^-1}`` and mean ``m_a = x_a^T theta_hat`` (one BLAS product of the
    live arms with ``[V^{-1} | theta_hat]``); the threshold ``r`` is raised to
    ``max_a m_a - u_a`` (it never decreases, as in Algorithm 3), arms with
    ``m_a + u_a < r`` are eliminated for good, and the arm of largest uncertainty is played
    -- or a uniform live arm when every uncertainty is below ``2^{-s_max}`` (the
    lowest-nonempty-stage rule of lines 14-16 evaluated exactly). Per step this is
    Theta(live arms x d^2): no stages, heaps or indexes. Same constants as
    :class:`SubElim` (``beta(delta/2)``, ``s_max``), same ``delta``, ``eta``, ``beta``.

    ``compact`` (default True) drops eliminated arms from the scanned array, so the scan
    shrinks with elimination (on sublinear-synthetic nearly every arm is gone within a few
    hundred steps). ``compact=False`` keeps scanning every arm that ever arrived
    (eliminated ones masked), Theta(K d^2) per step: the cost the paper's Linear Elim
    timings imply (221 s at K = 10^5, about 11 ms per step). Both make identical
    decisions (tested); only the time differs.

    ``SubElim(index="exact")`` is a third reference: Algorithm 3 with its stages and heaps
    but exact stage queries (what the MIPS index buys inside Algorithm 3).
    """

    name = "lin-elim"
    default_index = "exact"

    def __init__(self, *, delta: float = 0.05, eta: float | None = None, beta: float | None = None,
                 compact: bool = True) -> None:
        self._set_confidence(delta=delta, eta=eta, eta_high=0.125, beta=beta)
        self.compact = check_bool(compact, "compact", owner=type(self).__name__)


class _LinElimRun(RegretRun):
    """One run of linear elimination: the live arms (ids and a contiguous copy of their
    features, compacted on elimination), the threshold and the ridge estimate."""

    owner = "LinElim"

    def __init__(self, policy: LinElim, env: Any, T: int, gen: np.random.Generator) -> None:
        self.gen, self.compact = gen, policy.compact
        X = self.X = env.features
        d = X.shape[1]
        self.eta, self.beta, self.s_max = _elim_constants(d, T, policy.delta, policy.eta, policy.beta)
        self.ridge = _ridge(d)
        self.ids = env.initial.astype(np.int64).copy()
        self.Xa = np.ascontiguousarray(X[self.ids], dtype=np.float64)
        self.alive = np.ones(self.ids.size, dtype=bool)  # used when not compacting
        self.r_low = -math.inf
        self.u_floor = 2.0 ** (-self.s_max)
        self.stats = {"eliminated": 0, "restored": 0, "random_plays": 0, "arm_scans": 0}

    def arrive(self, added: NDArray[np.int64]) -> None:
        self.ids = np.concatenate([self.ids, added])
        self.Xa = np.concatenate([self.Xa, self.X[added]])
        self.alive = np.concatenate([self.alive, np.ones(added.size, dtype=bool)])

    def choose(self, t: int) -> int:
        """Scan the live arms: raise the threshold, drop the arms below it, play the arm
        of largest uncertainty (a uniform live arm below ``2^{-s_max}``)."""
        if self.ids.size == 0:
            raise InvalidParameterError(f"{self.owner}: the arm set is empty at step {t}.")
        m, nrm = self.ridge._means_and_norms(self.Xa)
        self.stats["arm_scans"] += m.size
        u = self.beta * nrm
        if self.compact:
            live_ids, lm, lu = self.ids, m, u
        else:  # the full scan is paid; decisions use the live arms only
            live = np.flatnonzero(self.alive)
            live_ids, lm, lu = self.ids[live], m[live], u[live]
        lcb = lm - lu
        j = int(np.argmax(lcb))
        if lcb[j] > self.r_low:
            self.r_low = float(lcb[j])
        keep = lm + lu >= self.r_low
        if not keep.any():  # failure event (probability <= delta): keep the best upper bound
            self.stats["restored"] += 1
            keep[int(np.argmax(lm + lu))] = True
        if not keep.all():
            self.stats["eliminated"] += int(keep.size - keep.sum())
            if self.compact:
                self.ids, self.Xa = self.ids[keep], self.Xa[keep]
            else:
                self.alive[live[~keep]] = False
            live_ids, lu = live_ids[keep], lu[keep]
        k = int(np.argmax(lu))
        if lu[k] <= self.u_floor:
            self.stats["random_plays"] += 1
            k = int(self.gen.integers(live_ids.size))
        return int(live_ids[k])

    def observe(self, arm: int, reward: float) -> None:
        self.ridge._add(self.X[arm], reward, 1)

    def info(self) -> dict[str, Any]:
        return dict(self.stats, s_max=self.s_max, beta=self.beta, eta=self.eta, threshold=self.r_low,
                    final_size=int(self.ids.size if self.compact else self.alive.sum()))


SubElim._run_class = _SubElimRun
LinElim._run_class = _LinElimRun
