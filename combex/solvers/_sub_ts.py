"""Sub-TS (Algorithm 4) and its linear-time baseline, linear Thompson sampling.

Yang et al., "Linear Bandit Algorithms with Sublinear Time Complexity", ICML 2022; see
:mod:`combex.solvers.sublinear` for the family.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg.blas import dtrmv as _trmv
from scipy.linalg.lapack import dpotrf as _potrf

from .._validation import check_bool
from ..exceptions import InvalidParameterError
from ._registry import register_solver
from ._regret import RegretRun
from ._sub_elim import _LinearBanditPolicy, _ridge

__all__ = ["SubTS", "LinTS"]


@register_solver
class SubTS(_LinearBanditPolicy):
    """Sublinear time Thompson sampling (Algorithm 4).

    Parameters
    ----------
    shortlist : int, default 30
        ``p`` (Section 7).
    delta : float, default 0.05
    eta : float, optional
        ``eta(T)`` in (0, 1); default ``1/sqrt(T)`` (Corollary 6.2).
    index : {"hnsw", "exact"}, default "hnsw"
    ef : int, optional
        HNSW search breadth; default ``shortlist`` (at least the shortlist size).
    hnsw_M, ef_construction : int, default 8 and 32
        HNSW parameters (:class:`~combex.mips.HNSWIndex`). The initial build is Sub-TS's
        whole preprocessing, and it must be earned back online: at K = 10^5, d = 16, a
        graph of degree 8 built with ``ef_construction = 32`` costs about a fifth of an
        hnswlib ``M = 16, ef_construction = 100`` build with the same regret
        (``docs/mips.md``, "Sub-TS end to end"), which lets the total time (build +
        online) beat linear TS.
    backend : {"auto", "faiss", "usearch", "hnswlib"}, default "auto"
        The graph library (:class:`~combex.mips.HNSWIndex`).
    build_threads : int, default 1
        Threads for the initial graph build (line 3, the preprocessing); queries and the
        insertion of arrivals use one thread.
    exact_below : int, default 2048
        Arm sets of at most this size are scanned exactly instead of searched with HNSW
        (see :class:`~combex.mips.AdaptiveMIPS`); 0 always uses HNSW.
    beta : float, optional
        Scale of the posterior perturbation; default ``beta(delta/4T)`` of line 2 (about
        13 at d = 16, T = 20,000). Smaller values are the usual practical tuning (they void
        the guarantee).
    lazy : bool, default False
        Arrivals wait in a small buffer that every query scans exactly and join the HNSW
        graph in batches once the queries have paid for their insertion
        (``AdaptiveMIPS(build="lazy")``, ratio ``build_after``); the answers can only be
        better than with eager insertion (the buffer is searched exactly). The initial
        graph is built as preprocessing (line 3). At K = 10^5, T = 20,000 both take
        about 1.1 s online (the insertions are paid either way: 0.30 s lazy, 0.34 s
        eager), so the default stays eager, the measured configuration of ``docs/mips.md``.
    build_after : float, default 2000
        The ski-rental ratio of the lazy mode.
    keep_previous : bool, default True
        The arm played at the previous step stays a candidate: it replaces the index's
        answer when its inner product with the new ``theta_tilde`` is larger (one extra
        dot product; the answer is never worse than the index's, and with an exact index
        nothing changes). Late in a run ``theta_tilde`` concentrates, so an arm that HNSW
        misses for one direction it misses for the next ones too: at K = 10^5,
        beta = 2 (5 runs), one run had 1,322 regret without it and 552 with it; the means
        were 806 without and 650 with, linear TS's 650.

    Notes
    -----
    * line 2: ``beta(delta/4T) = 1 + sqrt(2 log(4T/delta) + d log((d+T)/d))``; line 8:
      ``theta_tilde = theta_hat + beta V^{-1/2} xi`` with ``xi ~ N(0, I)`` (spherical
      Gaussian D^TS); any square root of ``V^{-1}`` gives the same law, we use its
      Cholesky factor;
    * line 3 builds ``ceil(d/eta)`` copies of Algorithm 1 with parameters
      ``(1 - 1/(i+1), i eta/d, eta/d, delta eta/(2d))``; as in Section 7 they share ONE
      practical index over the arms (a shortlist of ``p`` candidates re-ranked exactly
      for ``theta_tilde``): the copies then differ only in their acceptance thresholds
      ``c_i r_i - eta/d``, and line 9's "non-null result with largest m" is the best
      candidate with the largest accepting level ``i`` (recorded in
      ``info["levels"]``). When no level accepts (the largest estimated reward is
      negative, which Section 6 rules out by assumption or by a feature transform), the
      best candidate is still played and the query counted in ``info["null_queries"]``.
    """

    name = "sub-ts"
    default_index = "hnsw"

    def __init__(
        self,
        shortlist: int = 30,
        *,
        delta: float = 0.05,
        eta: float | None = None,
        index: str | None = None,
        ef: int | None = None,
        hnsw_M: int = 8,
        ef_construction: int = 32,
        exact_below: int = 2048,
        beta: float | None = None,
        lazy: bool = False,
        build_after: float = 2000.0,
        keep_previous: bool = True,
        backend: str = "auto",
        build_threads: int = 1,
    ) -> None:
        self.keep_previous = check_bool(keep_previous, "keep_previous", owner=type(self).__name__)
        self._set_index_settings(shortlist=shortlist, delta=delta, eta=eta, eta_high=1.0, index=index, ef=ef,
                                 hnsw_M=hnsw_M, ef_construction=ef_construction, exact_below=exact_below,
                                 beta=beta, lazy=lazy, build_after=build_after, backend=backend,
                                 build_threads=build_threads)


class _SubTSRun(RegretRun):
    """One run of Sub-TS: the shared MIPS index over the present arms (built over the
    initial arms as preprocessing, line 3), the ridge estimate and the previous answer."""

    owner = "SubTS"

    def __init__(self, policy: SubTS, env: Any, T: int, gen: np.random.Generator) -> None:
        self.gen, self.keep_previous = gen, policy.keep_previous
        X = self.X = env.features
        d = self.d = X.shape[1]
        self.eta = policy.eta if policy.eta is not None else 1.0 / math.sqrt(T)
        self.beta = policy.beta if policy.beta is not None else (
            1.0 + math.sqrt(2.0 * math.log(4.0 * T / policy.delta) + d * math.log((d + T) / d)))
        self.n_levels = math.ceil(d / self.eta)
        self.ridge = _ridge(d)
        self.index = policy._mips(d, gen.spawn(1)[0], capacity=max(1, env.initial.size) + 64,
                                  delta=policy.delta * self.eta / (2 * d))
        init = env.initial.astype(np.int64)
        if init.size:
            self.index.add(X[init], init)  # lines 3-4 (preprocessing)
            self.index.build_now()
        self.levels = np.zeros(T, dtype=np.int64)
        self.null = 0
        self.alive = np.zeros(X.shape[0], dtype=bool)
        self.alive[init] = True
        self.prev, self.kept = -1, 0

    def leave(self, removed: NDArray[np.int64]) -> None:  # line 6
        self.index.remove(removed)
        self.alive[removed] = False

    def arrive(self, added: NDArray[np.int64]) -> None:  # line 6
        self.index.add(self.X[added], added)
        self.alive[added] = True

    def choose(self, t: int) -> int:
        """Lines 7-9: ``theta_tilde = theta_hat + beta L xi`` with ``L L^T = V^{-1}``, and
        the index's best arm for it (LAPACK potrf + BLAS trmv directly: the numpy wrappers
        cost more than the math at d = 16)."""
        ridge = self.ridge
        L, info = _potrf(ridge.A_inv, lower=1, clean=0)
        if info != 0:
            L = np.linalg.cholesky(ridge.A_inv)
        theta_t = ridge.theta + self.beta * _trmv(L, self.gen.standard_normal(self.d), lower=1)
        nrm = math.sqrt(float(theta_t @ theta_t))
        q = theta_t / nrm if nrm > 0 else theta_t
        a, val = self.index._query(q)  # line 9
        if a is None:
            raise InvalidParameterError(f"{self.owner}: the arm set is empty at step {t}.")
        prev = self.prev
        if self.keep_previous and prev >= 0 and self.alive[prev] and prev != a:
            # The previous answer stays a candidate (re-ranked exactly with this query).
            v_prev = float(self.X[prev] @ q)
            if v_prev > val:
                a, val = prev, v_prev
                self.kept += 1
        self.prev = a
        # Largest accepting level i: (1 - 1/(i+1)) i eta/d - eta/d <= val.
        lvl = _ts_level(val, self.eta, self.d, self.n_levels)
        self.levels[t - 1] = lvl
        if lvl == 0:
            self.null += 1
        return a

    def observe(self, arm: int, reward: float) -> None:  # lines 10-12
        self.ridge._add(self.X[arm], reward, 1)

    @property
    def maintenance_seconds(self) -> float:
        return self.index.maintenance_seconds

    def info(self) -> dict[str, Any]:
        return {"beta": self.beta, "eta": self.eta, "n_levels": self.n_levels, "null_queries": self.null,
                "levels": self.levels, "final_size": len(self.index), "kept_previous": self.kept,
                "backend": self.index.backend}


def _ts_level(val: float, eta: float, d: int, n_levels: int) -> int:
    """Largest i in [1, n_levels] with (1 - 1/(i+1)) i eta/d - eta/d <= val (0 if none).

    ``g(i) = i^2/(i+1) * eta/d - eta/d`` is increasing; solve ``i^2/(i+1) <= val d/eta + 1``.
    """
    c = val * d / eta + 1.0
    if c < 0.5:  # g(1) = eta/(2d) - eta/d = -eta/(2d)
        return 0
    i = int(math.floor((c + math.sqrt(c * c + 4 * c)) / 2.0))  # root of i^2 - c i - c = 0
    while i > 0 and i * i / (i + 1) > c:
        i -= 1
    return int(min(max(i, 1), n_levels))


SubTS._run_class = _SubTSRun


@register_solver
class LinTS(SubTS):
    """The linear-time baseline of Algorithm 4 (linear Thompson sampling, Section 7):
    the arm maximizing ``x^T theta_tilde`` is found by a linear scan (``index="exact"``)."""

    name = "lin-ts"
    default_index = "exact"

    def __init__(self, *, delta: float = 0.05, eta: float | None = None, beta: float | None = None) -> None:
        super().__init__(1, delta=delta, eta=eta, index="exact", beta=beta)
