"""Best-arm identification in linear bandits: LinGapE, XY-static, XY-adaptive, XY-oracle.

Arms are the rows ``x_1, ..., x_K`` of ``problem.features`` (shape (K, d), spanning R^d);
pulling arm ``a`` returns ``x_a^T theta`` plus noise. The solvers return an arm ``a_hat``
with ``P[(x* - x_a_hat)^T theta > epsilon] <= delta`` (eq. (1) of Xu, Honda & Sugiyama 2018).

* :class:`LinGapE` -- Algorithms 1-2 of Xu et al. (2018): regularized least squares, the
  self-normalized radius C_t of eq. (3), the gap index B(t), i_t (empirical best) and j_t
  (most ambiguous arm); arm selection by the greedy rule (9) or the ratio rule (12) with p*
  from the L1 design (10)-(11). Per round O(K d + d^2) (Sherman-Morrison updates).
* :class:`LinGapEOracle` -- LinGapE on a decision class (full-bandit features = indicator
  vectors of super-arms): i_t from the linear oracle, j_t from a quadratic oracle, and a
  certified upper bound on B(t) (see its docstring).
* :class:`XYStatic`, :class:`XYAdaptive`, :class:`XYOracle` -- the baselines of Soare, Lazaric
  & Munos (2014) as Section 4 and 7 of Xu et al. describe them, with the static confidence
  bound of Proposition 1 (eq. (2)); batched pulls between stopping checks on a geometric
  schedule.

Every :meth:`run` of these solvers reports ``info["lower_bound_ratio"]`` =
``samples / (T*(theta) log(1/delta))`` for their ``"linear"``
:class:`~combex.identification.Query`, computed from the environment's truth *after* the
run (the exploration never reads it).

Why one file of more than 1,000 lines: the seed paper's algorithm (LinGapE) and the
baselines it compares with (XY-static, XY-adaptive, XY-oracle, LinGapE-oracle) share the
confidence bounds, the least-squares state and the width rule ``B(t) <= epsilon``; a reader
checks the paper's Section 4 and 7 against one file. The compiled round of LinGapE lives in
:mod:`combex.solvers._lingape_kernel`.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_probability,
    param_error,
)
from ..allocations import apportion, l1_design, pairwise_differences, xy_optimal_design
from ..environments import LinearBandit
from ..estimation import STATIC_CONSTANTS, LeastSquares, log_binomial, self_normalized_radius, static_radius
from ..exceptions import InvalidParameterError, StateError
from ..identification import Query, characteristic_time, check_features
from ..oracles.quadratic import QuadraticMaximization
from . import _lingape_kernel as _kernel
from ._base import Batch, Exploration, Result, Solver
from ._checks import warn_if_tied
from ._registry import register_solver

__all__ = ["LinGapE", "LinGapEOracle", "XYStatic", "XYAdaptive", "XYOracle"]

_PI2 = math.pi**2


# ====================================================================== helpers
def _log_pairs(k: int) -> float:
    """``log(K(K-1)/2)``: the static bound is union-bounded over the differences ``x - x'``."""
    return log_binomial(k, 2) if k >= 2 else 0.0


def _resolve_noise(solver: Any, problem: Any, attr: str) -> float:
    v = getattr(solver, attr)
    if v is not None:
        return float(v)
    return float(problem.noise.sigma)


_UNIT_MEAN_NOISES = ("bernoulli", "data")


def _mean_range(problem: Any) -> tuple[float, float] | None:
    """A known range [lo, hi] of the expected reward of one arm (index problems) or one
    base arm (mask problems): ``problem.info["reward_range"]``, else [0, 1] for Bernoulli
    and data-backed {0, 1} rewards, else None (Gaussian noise says nothing of the means)."""
    info = getattr(problem, "info", None) or {}
    rr = info.get("reward_range")
    if rr is not None:
        lo, hi = (float(v) for v in rr)
        return lo, hi
    if getattr(problem.noise, "kind", None) in _UNIT_MEAN_NOISES:
        return 0.0, 1.0
    return None


def _resolve_S(solver: Any, problem: Any, features: Any = None) -> float:
    """The bound S >= ||theta||_2 used in C_t (eq. (3)); never a guess.

    In order: the solver's ``S``; ``problem.info["S"]``; a bound derived from a known range
    [lo, hi] of the means (:func:`_mean_range`) with ``m = max(|lo|, |hi|)``:
    full-bandit (mask) problems, theta = the base-arm means, so ``||theta||_2 <= m sqrt(n)``;
    index problems with features X of full column rank, ``theta = X^+ mu`` with
    ``mu = X theta`` in [lo, hi]^K, so ``||theta||_2 <= ||mu||_2 / s_min(X) <= m sqrt(K) /
    s_min(X)``. Otherwise :class:`~combex.exceptions.InvalidParameterError` naming ``S``:
    a fixed default such as S = 1.0 would return the wrong arm on theta = (50, 50.8).
    """
    if solver.S is not None:
        return float(solver.S)
    s = (getattr(problem, "info", None) or {}).get("S")
    if s is not None:
        return float(s)
    rng_ = _mean_range(problem)
    owner = type(solver).__name__
    if rng_ is not None:
        m = max(abs(rng_[0]), abs(rng_[1]))
        if features is None:
            return m * math.sqrt(int(problem.n_arms))
        X = np.asarray(features, dtype=np.float64)
        smin = float(np.linalg.svd(X, compute_uv=False).min())
        if smin > 0:
            return m * math.sqrt(X.shape[0]) / smin
    raise InvalidParameterError(
        f"The 'S' parameter of {owner} is required here: S must bound ||theta||_2 (the "
        f"confidence radius C_t of eq. (3) is only valid when ||theta||_2 <= S), and this "
        f"problem carries neither info['S'] nor a known reward range. Choose S from what "
        f"you know of the rewards: e.g. means in [-m, m] on a full-bandit problem of n base "
        f"arms give S = m sqrt(n); arm means in [-m, m] with features X give "
        f"S = m sqrt(K) / s_min(X). Got S=None instead."
    )


class _PseudoInverse:
    """A^{+} of a PSD matrix with the test 'y in range(A)' (directions estimable by OLS)."""

    def __init__(self, A: NDArray[np.float64]) -> None:
        e, v = np.linalg.eigh(A)
        tol = max(float(e.max(initial=0.0)), 1e-300) * 1e-10
        keep = e > tol
        self.rank = int(keep.sum())
        self.v = v[:, keep]
        self.inv = (self.v / e[keep]) @ self.v.T

    def norms_sq(self, Y: NDArray[np.float64]) -> NDArray[np.float64]:
        """``||y||^2_{A^+}`` per row, ``inf`` for rows not in the range of A."""
        q = np.einsum("ij,jk,ik->i", Y, self.inv, Y)
        proj = Y @ self.v
        resid = np.einsum("ij,ij->i", Y, Y) - np.einsum("ij,ij->i", proj, proj)
        scale = np.maximum(np.einsum("ij,ij->i", Y, Y), 1e-300)
        return np.where(resid <= 1e-9 * scale, np.maximum(q, 0.0), np.inf)


class _LinearRun:
    """Mixin: the query of the linear solvers (the best arm of a linear model), whose
    yardstick :meth:`Solver.run` attaches from the environment's truth (features and
    theta), never seen by the exploration."""

    delta: float

    @property
    def tolerance(self) -> float:
        return float(self.epsilon)

    def query(self, problem: Any) -> Query:
        return Query("linear", self.delta, float(getattr(self, "epsilon", 0.0)))


def _check_common(self: Any, owner: str, delta: Any, epsilon: Any) -> None:
    self.delta = check_probability(delta, "delta", owner=owner)
    self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)


def _check_lingape(self: Any, owner: str, delta: Any, epsilon: Any, ridge: Any, S: Any, sigma: Any,
                   refactor_every: Any) -> None:
    """Settings shared by :class:`LinGapE` and :class:`LinGapEOracle`."""
    _check_common(self, owner, delta, epsilon)
    self.ridge = check_float(ridge, "ridge", owner=owner, low=0.0, closed="neither")
    self.S = None if S is None else check_float(S, "S", owner=owner, low=0.0)
    self.sigma = None if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
    self.refactor_every = check_int(refactor_every, "refactor_every", owner=owner, low=1)


# ====================================================================== LinGapE
@register_solver
class LinGapE(_LinearRun, Solver):
    """LinGapE (Xu, Honda & Sugiyama, AISTATS 2018, Algorithms 1 and 2).

    Parameters
    ----------
    delta : float, default 0.05
        Confidence: the returned arm is epsilon-optimal with probability >= 1 - delta.
    epsilon : float, default 0.0
        Accuracy (stop when B(t) <= epsilon, Algorithm 1 line 10).
    ridge : float, default 1.0
        lambda > 0 of the regularized least squares ``A_t = lambda I + sum x x^T``.
    rule : {"greedy", "ratio"}, default "greedy"
        Arm selection: the greedy rule (9) or the ratio rule (12) with p* of (10).
    S : float, optional
        Bound on ||theta||_2 in C_t. None: ``problem.info["S"]`` when the problem carries
        it, else a bound derived from a known range of the arm means
        (``problem.info["reward_range"]``, or [0, 1] for Bernoulli / data-backed rewards):
        ``max(|lo|, |hi|) sqrt(K) / s_min(X)``; else an error naming S (there is no
        default: S = 1.0 would return the wrong arm on theta = (50, 50.8)). The
        value used is reported in ``Result.info["S"]``. Too small an S voids the guarantee.
    sigma : float, optional
        Sub-Gaussian scale of the noise (the paper's R). None: ``problem.noise.sigma``.
        ``R`` is a deprecated alias.
    radius : {"logdet", "dimension"}, default "logdet"
        C_t of eq. (3) (log-determinant form) or its worst-case bound (4),
        ``R sqrt(d log((1 + t L^2 / lambda) / delta)) + lambda^{1/2} S``.
    union_bound : bool, default False
        Replace delta by delta / K^2 in C_t, as in Lemma 5 of the paper (and in the
        authors' code). Not needed for validity: eq. (3) comes from Theorem 2 of
        Abbasi-Yadkori et al. (2011), a bound on ``||theta_hat - theta||_{A_t}`` that holds
        for every direction x at once.
    growth : float, default 0.0
        0 runs Algorithm 1 exactly (one pull, one stopping check per round). g > 0 pulls
        the arm chosen by the rule ``m_t = max(1, floor(g t))`` times before the next check
        (t = samples so far): about ``log(t) / g`` checks instead of t. Still
        (epsilon, delta)-PAC (C_t holds for any adaptive sequence, uniformly in t), at the
        price of up to a factor ``1 + g`` more samples.
    refactor_every : int, default 4096
        Recompute A_t^{-1} (Cholesky) every this many updates to stop round-off drift of
        the Sherman-Morrison updates.

    Notes
    -----
    One round (Algorithm 1 lines 9-17) costs O(K d + d^2), with no inversion: the pulls
    are folded by count-weighted Sherman-Morrison updates (``c`` pulls of one arm = one
    rank-one update; Cholesky refresh every ``refactor_every`` updates) of
    ``u = X theta_hat``, ``g_k = ||x_k||^2_{A^{-1}}`` and, for K <= 64, the rows of
    ``G = X A^{-1} X^T`` (larger K: of a :class:`~combex.estimation.LeastSquares`); the pulls of the current arm since the last change of arm
    (a *streak*) are applied in closed form on top. Then ``||x_j - x_i||^2_{A^{-1}} =
    g_j - 2 G_{ij} + g_i`` with row i of ``G = X A^{-1} X^T`` (one matrix-vector product),
    and the greedy rule (9) is ``argmax_a (G_{ia} - G_{ja})^2 / (1 + g_a)``
    (Sherman-Morrison). C_t is :func:`combex.estimation.self_normalized_radius`.

    :meth:`run` on a simulated :class:`~combex.environments.LinearBandit` with
    ``growth=0`` evaluates whole blocks of rounds at once (the rewards of a streak are
    drawn ahead; the block is cut at the first round that stops or switches arm, and the
    environment is rewound to the pulls used): one vectorized step, or, once the run is
    past ``8 *`` :data:`~combex.solvers._lingape_kernel.COMPILE_AFTER` samples and numba
    is installed, a compiled loop over the block's rounds. It gives exactly the result of
    the ask/tell loop (same pulls, stop, trace and final generator state; tested) at
    under a microsecond per round on ``soare`` d = 5 (about 3.8e5 rounds, idle machine).

    Algorithm 1 starts by pulling every arm once (one batch of K pulls); afterwards every
    ``ask()`` is one pull and every ``tell`` one stopping check (``rounds``).
    Ties (argmax) go to the lowest index. B(t) >= 0 always, since j = i_t gives 0.

    Examples
    --------
    >>> from combex.environments import LinearBandit
    >>> env = LinearBandit([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]], [1.0, 0.0], rng=1)
    >>> res = LinGapE(S=1.0).run(env, rng=0)
    >>> res.answer, res.status
    (0, 'identified')
    """

    name: ClassVar[str] = "lingape"
    renamed_params: ClassVar[Mapping[str, str]] = {"R": "sigma"}
    arm_type: ClassVar[str] = "index"
    families: ClassVar[tuple[str, ...]] = ("linear",)

    def __init__(
        self,
        delta: float = 0.05,
        epsilon: float = 0.0,
        *,
        ridge: float = 1.0,
        rule: str = "greedy",
        S: float | None = None,
        sigma: float | None = None,
        radius: str = "logdet",
        union_bound: bool = False,
        growth: float = 0.0,
        refactor_every: int = 4096,
    ) -> None:
        owner = type(self).__name__
        _check_lingape(self, owner, delta, epsilon, ridge, S, sigma, refactor_every)
        self.rule = check_choice(rule, "rule", ("greedy", "ratio"), owner=owner)
        self.growth = check_float(growth, "growth", owner=owner, low=0.0)
        self.radius = check_choice(radius, "radius", ("logdet", "dimension"), owner=owner)
        self.union_bound = check_bool(union_bound, "union_bound", owner=owner)

    def start(self, problem: Any, *, rng: Any = None) -> "LinGapEExploration":
        return LinGapEExploration(self, problem, rng)

    def _simulate(self, env: Any, *, rng: Any, budget: int | None, trace: bool, callback: Any = None) -> Result:
        """The ask/tell loop, or its exact fast path on a simulated Gaussian linear bandit
        (``growth=0``, no callback): same random stream, same pulls, same result
        (:meth:`LinGapEExploration._simulate`)."""
        fast = callback is None and self.growth == 0.0 and isinstance(env, LinearBandit) and env.sequential_draws
        if not fast:
            return Solver._simulate(self, env, rng=rng, budget=budget, trace=trace, callback=callback)
        warn_if_tied(self, env)
        t0 = time.perf_counter()
        exp = self.start(env, rng=rng)
        exp.record_trace = trace
        exp._simulate(env, budget)
        return exp.result(wall_seconds=time.perf_counter() - t0)

    @property
    def exploration_class(self) -> type[Exploration]:
        return LinGapEExploration


class _WidthRule:
    """The seed papers' rule of the linear solvers: stop once the width ``B(t)`` of the
    last check is at most ``epsilon``."""

    B: float
    solver: Any

    def stopping_statistic(self) -> tuple[float, float]:
        """``B(t)`` of the last check against ``epsilon``."""
        return (float(self.B), float(self.solver.epsilon)) if math.isfinite(self.B) else (math.nan, math.nan)


class LinGapEExploration(_WidthRule, Exploration):
    """State of one LinGapE run (see :class:`LinGapE`).

    The statistics are kept as a *base* (the pulls folded so far, with ``u = X theta_hat``
    and ``g_k = ||x_k||^2_{A^{-1}}``) plus the current *streak*: ``k`` pulls of one arm ``a``
    with reward sum ``S`` since the last change of arm. The state after the streak is the
    count-weighted Sherman-Morrison update of the base (``c = k`` pulls of ``x_a`` are one
    rank-one term), evaluated by :meth:`_evaluate` for one or many prefixes ``(k, S)`` at
    once with the same arithmetic. A streak is folded into the base when another arm is
    pulled. ``ask``/``tell`` evaluates one prefix per round; :meth:`LinGapE.run` on a
    simulated :class:`~combex.environments.LinearBandit` evaluates whole blocks of rounds
    and reproduces the ask/tell run exactly (same rewards, pulls, stop and final
    generator state).

    For K <= :data:`~combex.solvers._lingape_kernel.MAX_ARMS` the base is its pull counts
    and reward sums (``Tb``, ``sb``), ``u``, ``g``, the rows of ``G = X A^{-1} X^T``
    computed so far and ``log det A``, all carried through a fold by the rank-one update
    (``log det`` by the matrix determinant lemma, ``+= log1p(k G_aa)``): a change of arm
    costs O(K^2) arithmetic and no d x d work. ``A^{-1}`` and ``theta_hat`` are computed
    from ``Tb``, ``sb`` by Cholesky only when a row of G is missing, for the reported
    estimate, and at the refresh every ``refactor_every`` folds (which recomputes u, g,
    log det and the rows, so round-off drift stays bounded). For larger K the base is a
    :class:`~combex.estimation.LeastSquares` (Sherman-Morrison at each fold) and the rows
    of G are cached per streak.
    """

    solver: LinGapE

    def __init__(self, solver: LinGapE, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._setup(solver)
        k, d = self.X.shape
        # K <= MAX_ARMS: the base is (Tb, sb) and the carried u, g, rows of G, log det A;
        # larger K: a LeastSquares updated at every fold.
        self.ls: LeastSquares | None = None
        if self._Gbuf is None:
            self.ls = LeastSquares(d, ridge=solver.ridge, refactor_every=solver.refactor_every)
        self.Tb = np.zeros(k, dtype=np.int64)
        self.sb = np.zeros(k)
        self._logdet_base = d * math.log(solver.ridge)
        self._n_folds = 0
        self.u = np.zeros(k)
        self.g = np.einsum("ij,ij->i", self.X, self.X) / solver.ridge
        self.T = np.zeros(k, dtype=np.int64)
        self.sums = np.zeros(k)
        self.streak_arm = -1
        self.streak_k = 0
        self.streak_S = 0.0
        self.phase = "init"
        self.next_arm = -1
        self.next_count = 1
        self.i_t = 0
        self.j_t = 0
        self.B = float("inf")
        self.C = float("nan")
        self._streak_vectors()

    def _setup(self, solver: LinGapE) -> None:
        self.X = check_features(self.problem.features, owner="LinGapE")
        k, d = self.X.shape
        self.R = _resolve_noise(solver, self.problem, "sigma")
        self.S = _resolve_S(solver, self.problem, self.X)
        self.log_union = 2.0 * math.log(k) if solver.union_bound else 0.0
        self._logdet_radius = solver.radius == "logdet"
        self._ridge_term = math.sqrt(solver.ridge) * self.S  # lambda^{1/2} S of eq. (3)
        self._ld_floor = d * math.log(solver.ridge)
        self._ld_shift = 2.0 * (self.log_union - math.log(solver.delta))
        # validates the settings once (and is the reference of _radius)
        self_normalized_radius(self._ld_floor, d, solver.delta, R=self.R, ridge=solver.ridge, S=self.S,
                               log_union_size=self.log_union)
        self.delta_eff = solver.delta / (k * k) if solver.union_bound else solver.delta
        self.L2 = float(np.max(np.einsum("ij,ij->i", self.X, self.X)))
        self._ratio_cache: dict[tuple[int, int], NDArray[np.float64]] = {}
        # Small K (<= _kernel.MAX_ARMS): the rows of G computed so far are kept in a (K, K)
        # buffer and carried through every fold; larger K: cached per streak only.
        self._kernel: Any = None
        self._np_rounds = 0
        small = k <= _kernel.MAX_ARMS
        self._Gbuf: NDArray[np.float64] | None = np.zeros((k, k)) if small else None
        self._have: NDArray[np.bool_] | None = np.zeros(k, dtype=bool) if small else None
        self._switch: Any = None
        self._block: Any = None
        self._l1p = (math.nan, math.nan)
        self._solved: tuple[NDArray[np.float64], NDArray[np.float64], float] | None = None

    # ------------------------------------------------------------------ linear algebra
    def _streak_vectors(self) -> None:
        """Quantities of the base needed to evaluate the current streak:
        ``ga = X A^{-1} x_a`` (column a of ``G = X A^{-1} X^T``, = row a), its square,
        ``q = ||x_a||^2_{A^{-1}}``, ``log det A`` (and ``mx = A^{-1} x_a`` on demand).

        Rows of G are cached by :meth:`_row`: for K <= 64 in a (K, K) buffer carried from
        streak to streak by the rank-one update of the fold (:meth:`_fold`; recomputed from
        ``A^{-1}`` after each Cholesky refresh), for larger K per streak."""
        if self._Gbuf is None:
            self._rows: dict[int, NDArray[np.float64]] = {}
        a = getattr(self, "streak_arm", -1)
        self._mx_cache: NDArray[np.float64] | None = None
        if a < 0:
            self._ga = np.zeros(self.X.shape[0])
            self._q = 0.0
        else:
            self._ga = self._row(a).copy()
            self._q = float(self._ga[a])
        self._ga2 = self._ga * self._ga
        self._logdet = self._logdet_base if self.ls is None else self.ls.logdet()
        self._ua = float(self.u[a]) if a >= 0 else 0.0

    def _base_A_inv(self) -> NDArray[np.float64]:
        return self._base_solve()[0] if self.ls is None else self.ls.A_inv

    def _base_theta(self) -> NDArray[np.float64]:
        return self._base_solve()[1] if self.ls is None else self.ls.theta

    def _base_solve(self) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """``(A^{-1}, theta_hat, log det A)`` of the base from its counts and sums
        (``A = lambda I + sum_k Tb_k x_k x_k^T``, ``b = sum_k sb_k x_k``) by Cholesky;
        cached until the next fold (K <= MAX_ARMS)."""
        if self._solved is None:
            X = self.X
            d = X.shape[1]
            A = self.solver.ridge * np.eye(d) + (X * self.Tb.astype(np.float64)[:, None]).T @ X
            try:
                L = np.linalg.cholesky(A)
                Li = np.linalg.inv(L)
                A_inv = Li.T @ Li
                logdet = 2.0 * float(np.sum(np.log(np.diagonal(L))))
            except np.linalg.LinAlgError:  # A numerically not positive definite (a tiny ridge)
                w, V = np.linalg.eigh(A)
                w = np.maximum(w, np.finfo(float).tiny)
                A_inv = (V / w) @ V.T
                logdet = float(np.sum(np.log(w)))
            A_inv = 0.5 * (A_inv + A_inv.T)
            theta = A_inv @ (X.T @ self.sb)
            self._solved = (A_inv, theta, logdet)
        return self._solved

    @property
    def _mx(self) -> NDArray[np.float64]:
        """``A^{-1} x_a`` of the base (the streak's direction in theta_hat)."""
        if self._mx_cache is None:
            a = self.streak_arm
            self._mx_cache = self._base_A_inv() @ self.X[a] if a >= 0 else np.zeros(self.X.shape[1])
        return self._mx_cache

    def _row(self, i: int) -> NDArray[np.float64]:
        """Row i of ``G = X A^{-1} X^T`` for the base (O(K d + d^2) the first time; cached)."""
        if self._Gbuf is not None:
            if not self._have[i]:
                self._Gbuf[i] = self.X @ (self._base_A_inv() @ self.X[i])
                self._have[i] = True
            return self._Gbuf[i]
        r = self._rows.get(i)
        if r is None:
            r = self._rows[i] = self.X @ (self._base_A_inv() @ self.X[i])
        return r

    def _fold(self) -> None:
        """Fold the streak into the base: one count-weighted rank-one update of u, g and
        the buffered rows of G (K <= MAX_ARMS; ``log det A += log1p(k q)``, counts and sums
        into ``Tb``, ``sb``) or of the least squares (larger K)."""
        a, k, S = self.streak_arm, self.streak_k, self.streak_S
        if a < 0 or k <= 0:
            return
        kf = float(k)
        den = 1.0 + kf * self._q
        fk = kf / den
        ga = self._ga
        self.u = self.u + ((S - kf * self._ua) / den) * ga
        self.g = self.g - fk * self._ga2
        if self.ls is not None:
            self.ls._add(self.X[a], S, k)  # = update(); X, S and k were checked at the boundary
            if self.ls.n_updates % self.solver.refactor_every == 0:  # LeastSquares refactorized
                self.u = self.X @ self.ls.theta
                self.g = np.einsum("ij,jk,ik->i", self.X, self.ls.A_inv, self.X)
        else:
            # rows after the fold: entry (i, k) is the Wi[k] of _evaluate (same arithmetic)
            self._Gbuf -= (fk * ga)[:, None] * ga
            self._fold_counts(a, k, S)
        self.streak_k, self.streak_S = 0, 0.0

    def _fold_counts(self, a: int, k: int, S: float) -> None:
        """The scalar part of a fold (K <= MAX_ARMS), shared by the numpy and compiled
        paths; the refresh of the base every ``refactor_every`` folds."""
        kq = k * self._q
        # log1p(k q) is the one C_t of the streak's last round used (cached by _radius_one)
        l1p = self._l1p[1] if self._l1p[0] == kq else float(np.log1p(kq))
        self._logdet_base = self._logdet_base + l1p
        self.Tb[a] += k
        self.sb[a] += S
        self._n_folds += 1
        self._solved = None
        if self._n_folds % self.solver.refactor_every == 0:
            self._refresh()

    def _refresh(self) -> None:
        """Recompute u, g and log det A of the base from its counts and sums (Cholesky) and
        drop the carried rows of G (they are recomputed when needed)."""
        A_inv, theta, logdet = self._base_solve()
        self.u = self.X @ theta
        self.g = np.einsum("ij,jk,ik->i", self.X, A_inv, self.X)
        self._logdet_base = logdet
        self._have.fill(False)

    def _start_streak(self, a: int) -> None:
        if self._switch is not None and self.streak_k > 0:
            # compiled fold (K <= MAX_ARMS), then the new streak's vectors when its row is there
            k = self.streak_k
            refresh = (self._n_folds + 1) % self.solver.refactor_every == 0
            ok, q, ua = self._switch(self.u, self.g, self._Gbuf, self._have, self._ga, self._ga2, float(k),
                                     self.streak_S, self._ua, self._q, a, not refresh)
            self._fold_counts(self.streak_arm, k, self.streak_S)
            self.streak_k, self.streak_S = 0, 0.0
            self.streak_arm = a
            if ok:
                self._q, self._ua = q, ua
                self._logdet = self._logdet_base
                self._mx_cache = None
                return
            self._streak_vectors()
            return
        self._fold()
        self.streak_arm = a
        self._streak_vectors()

    def _tell_one(self, a: int, c: int, s: float) -> None:
        if c <= 0:
            return
        if a != self.streak_arm:
            self._start_streak(a)
        self.streak_k += c
        self.streak_S += s
        self.T[a] += c
        self.sums[a] += s

    def confidence_radius(self) -> float:
        """C_t at the current state: eq. (3) (``radius="logdet"``) or eq. (4)."""
        k = np.array([self.streak_k], dtype=np.int64)
        return float(self._radius(np.log1p(k * self._q), np.array([float(self.samples)]))[0])

    def _radius(self, dlogdet: NDArray[np.float64], t: NDArray[np.float64]) -> NDArray[np.float64]:
        """C_t for log det A_t = base + ``dlogdet`` after ``t`` samples (arrays)."""
        s = self.solver
        d = self.X.shape[1]
        if s.radius == "logdet":
            # combex.estimation.self_normalized_radius, term for term (so bit for bit; a
            # test checks it): its argument checks cost more than a round here.
            arg = np.maximum((self._logdet + dlogdet) - self._ld_floor + self._ld_shift, 0.0)
            return self.R * np.sqrt(arg) + math.sqrt(s.ridge) * self.S
        return self.R * np.sqrt(d * np.log((1.0 + t * self.L2 / s.ridge) / self.delta_eff)) + math.sqrt(s.ridge) * self.S

    # ------------------------------------------------------------------ Algorithm 2
    def _evaluate(
        self, ks: NDArray[np.int64], Ss: NDArray[np.float64], Ta: NDArray[np.int64], t: NDArray[np.float64]
    ) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
        """Select-direction (Algorithm 2), B(t) and the next arm for m states at once.

        State r is the base plus ``ks[r]`` pulls of the streak arm a with reward sum
        ``Ss[r]``, ``Ta[r]`` pulls of a in all and ``t[r]`` samples. Returns
        ``(i_t, j_t, B(t), C_t, a_{t+1})`` arrays of shape (m,). Vectorized over states and
        arms; the arithmetic of one state does not depend on m.
        """
        a = self.streak_arm
        ga = self._ga
        kf = ks.astype(np.float64)
        kq = kf * self._q
        den = 1.0 + kq
        coef = (Ss - kf * float(self.u[a])) / den
        fk = kf / den
        U = self.u + coef[:, None] * ga  # u_k = X theta_hat (m, K)
        Gd = self.g - fk[:, None] * self._ga2  # ||x_k||^2_{A^{-1}}
        C = self._radius(np.log1p(kq), t)
        m = ks.shape[0]
        r = np.arange(m)
        i = U.argmax(axis=1)
        Wi = self._rows_for(i) - (fk * ga[i])[:, None] * ga  # rows G[i_t, :]
        n2 = Gd - 2.0 * Wi + Gd[r, i][:, None]  # ||x_j - x_i||^2_{A^{-1}}
        np.maximum(n2, 0.0, out=n2)
        np.sqrt(n2, out=n2)
        F = U - U[r, i][:, None] + C[:, None] * n2
        F[r, i] = 0.0  # the exact value (round-off in n2[i] must not block the stop)
        j = F.argmax(axis=1)
        B = F[r, j]
        if self.solver.rule == "greedy":
            # (9): argmin_a y^T (A + x_a x_a^T)^{-1} y = argmax_a (y^T A^{-1} x_a)^2 / (1 + g_a)
            Wj = self._rows_for(j) - (fk * ga[j])[:, None] * ga
            score = Wi - Wj
            score *= score
            score /= 1.0 + Gd
            nxt = score.argmax(axis=1)
        else:
            # (12): argmin_{p*_a > 0} T_a / p*_a with p* of the L1 design (10)-(11)
            P = self._pstar_rows(i, j)
            Tm = np.broadcast_to(self.T.astype(np.float64), (m, self.T.shape[0])).copy()
            Tm[:, a] = Ta
            ratio = np.where(P > 0, Tm / np.where(P > 0, P, 1.0), np.inf)
            nxt = ratio.argmin(axis=1)
        return i, j, B, C, nxt

    def _rows_for(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """Rows ``G[idx[r], :]`` of the base (shape (m, K))."""
        first = int(idx[0])
        if idx.shape[0] == 1 or not (idx != first).any():
            return self._row(first)[None, :]
        uniq, inv = np.unique(idx, return_inverse=True)
        rows = np.stack([self._row(int(v)) for v in uniq.tolist()])
        return rows[inv.reshape(-1)]

    def _pstar_rows(self, i: NDArray[np.intp], j: NDArray[np.intp]) -> NDArray[np.float64]:
        key = i * self.X.shape[0] + j
        uniq, inv = np.unique(key, return_inverse=True)
        k = self.X.shape[0]
        rows = np.stack([self._pstar(int(v) // k, int(v) % k) for v in uniq.tolist()])
        return rows[inv.reshape(-1)]

    def _pstar(self, i: int, j: int) -> NDArray[np.float64]:
        """p*(y(i, j)) of eq. (10) by :func:`combex.allocations.l1_design` (cached)."""
        if i == j:
            return np.where(np.arange(self.X.shape[0]) == i, 1.0, 0.0)
        key = (min(i, j), max(i, j))
        p = self._ratio_cache.get(key)
        if p is None:
            p = self._ratio_cache[key] = np.asarray(l1_design(self.X, self.X[key[0]] - self.X[key[1]]).p)
        return p

    def _decide(self) -> None:
        """One round (Algorithm 1 lines 9-17) at the current state.

        After :data:`~combex.solvers._lingape_kernel.COMPILE_AFTER` rounds (when numba is
        installed, K is at most MAX_ARMS and the rule is greedy) by the compiled kernel, which
        gives bit for bit what :meth:`_evaluate` gives for one state."""
        if self._kernel is None and self._np_rounds >= 0:
            self._np_rounds += 1
            if self._np_rounds >= _kernel.COMPILE_AFTER:
                self._use_kernel()
        if self._kernel is not None:
            self._decide_compiled()
            return
        a = self.streak_arm
        i, j, B, C, nxt = self._evaluate(
            np.array([self.streak_k], dtype=np.int64), np.array([self.streak_S]),
            np.array([self.T[a]], dtype=np.int64), np.array([float(self.samples)]),
        )
        self._apply(int(i[0]), int(j[0]), float(B[0]), float(C[0]), int(nxt[0]))

    def _use_kernel(self) -> None:
        """Switch to the compiled round, change of arm and block (numba installed, K <=
        MAX_ARMS, greedy rule), or to the numpy path for good."""
        usable = self._Gbuf is not None and self.solver.rule == "greedy" and _kernel.ENABLED
        self._kernel = _kernel.compiled_round() if usable else None
        self._switch = _kernel.compiled_switch() if usable else None
        self._block = _kernel.compiled_block() if usable else None
        if self._kernel is None:
            self._np_rounds = -1  # the numpy path for good

    def _radius_one(self, kq: float, t: float) -> float:
        """:meth:`_radius` for one state, with the same operations (C_t bit for bit)."""
        if self._logdet_radius:
            l1p = float(np.log1p(kq))
            self._l1p = (kq, l1p)
            arg = (self._logdet + l1p) - self._ld_floor + self._ld_shift
            return self.R * math.sqrt(arg if arg > 0.0 else 0.0) + self._ridge_term
        s = self.solver
        d = self.X.shape[1]
        return self.R * math.sqrt(d * float(np.log((1.0 + t * self.L2 / s.ridge) / self.delta_eff))) + math.sqrt(
            s.ridge
        ) * self.S

    def _decide_compiled(self) -> None:
        kf = float(self.streak_k)
        C = self._radius_one(kf * self._q, float(self.samples))
        while True:
            i, j, B, nxt, need = self._kernel(
                self.u, self.g, self._ga, self._ga2, self._Gbuf, self._have, kf, self.streak_S, self._ua,
                self._q, C, True,
            )
            if need < 0:
                break
            self._row(need)
        self._apply(i, j, B, C, nxt)

    def _apply(self, i: int, j: int, B: float, C: float, nxt: int) -> None:
        self.i_t, self.j_t, self.B, self.C = i, j, B, C
        self.rounds += 1
        if self.record_trace:
            self.record(B=B, C=C, i=i, j=j)
        eps = self.solver.epsilon
        if B <= eps:
            self.certificate = {"B": B, "C_t": C, "epsilon": eps, "i_t": i, "j_t": j}
            self.stop("identified", f"B(t) = {B:.6g} <= epsilon = {eps}")
            return
        g = self.solver.growth
        self.next_count = max(1, int(g * self.samples)) if g else 1
        self.next_arm = nxt

    # ------------------------------------------------------------------ contract
    def _next_batch(self) -> Batch:
        if self.phase == "init":
            k = self.X.shape[0]
            return Batch(np.arange(k), np.ones(k, dtype=np.int64))
        if self.next_count != 1:
            return Batch(np.array([self.next_arm]), np.array([self.next_count], dtype=np.int64))
        # one pull of one arm (Algorithm 1): one immutable batch per arm, made once
        cache = self.__dict__.setdefault("_one_pull", {})
        b = cache.get(self.next_arm)
        if b is None:
            arms = np.array([self.next_arm])
            counts = np.ones(1, dtype=np.int64)
            arms.setflags(write=False)
            counts.setflags(write=False)
            b = cache[self.next_arm] = Batch(arms, counts)
        return b

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = batch.arms
        if arms.ndim != 1:
            raise StateError("LinGapE pulls index arms; got super-arm masks.")
        if arms.shape[0] == 1:
            self._tell_one(int(arms[0]), int(batch.counts[0]), float(reward_sums[0]))
        else:
            for a, c, s in zip(arms.tolist(), batch.counts.tolist(), reward_sums.tolist()):
                self._tell_one(int(a), int(c), float(s))
        self.phase = "run"
        self._decide()

    # ------------------------------------------------------------------ fast simulation
    def _simulate(self, env: Any, budget: int | None) -> None:
        """Algorithm 1 (growth = 0) against a simulated :class:`LinearBandit`, many rounds
        per numpy call, with exactly the pulls, rewards and stopping round of the ask/tell
        loop of :meth:`Solver.run`.

        A :class:`LinearBandit` draws the reward sums of a batch entry by entry from its
        generator (``env.sequential_draws``), so pulling arm a m times in one call gives the
        rewards of m successive single pulls. A block of rounds that keeps pulling the
        streak arm is drawn and evaluated at once by :meth:`_evaluate` and cut at the first
        round whose decision is to stop or to switch arm; when cut, the environment is put
        back into its state before the block (its public
        :meth:`~combex.environments.Environment.state_dict` /
        :meth:`~combex.environments.Environment.load_state_dict`) and the pulls actually
        used are drawn again, so its stream stays the one of the ask/tell loop. With the
        compiled kernels (:func:`~combex.solvers._lingape_kernel.lingape_block`) the rounds
        of a block are evaluated one after the other up to the cut, with the C_t of
        :meth:`_radius`, instead of all at once by :meth:`_evaluate`: the same values bit
        for bit (tested). Streaks that have been short for this arm run round by round
        (:meth:`_decide`, the compiled round when available): there a block costs more than
        it saves.
        """
        batch = self.ask()  # initialization: every arm once
        if budget is not None:
            batch = batch.truncated(budget - self.samples)
        self.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
        last_len = np.full(self.X.shape[0], 4, dtype=np.int64)
        one = np.ones(1, dtype=np.int64)
        single = [np.full(1, b, dtype=np.intp) for b in range(self.X.shape[0])]
        m = 4
        eps = self.solver.epsilon
        cap = 1 << 14
        outs = (np.empty(cap, dtype=np.intp), np.empty(cap, dtype=np.intp), np.empty(cap), np.empty(cap, dtype=np.intp))
        watch = self.noise_watch  # the pulls here bypass tell_batch: fold them into the test
        while not self.done:
            if self._kernel is None and self._np_rounds >= 0 and self.samples >= 8 * _kernel.COMPILE_AFTER:
                # a long run: the kernels now (blocks do not count as rounds of _decide);
                # later than for ask / tell, as a block of rounds is already vectorized
                self._use_kernel()
            if budget is not None and self.samples >= budget:
                self.stop("budget_exhausted", f"budget of {budget} samples exhausted")
                break
            a = self.next_arm
            if a != self.streak_arm:  # a new streak: block size from a's last streak
                self._start_streak(a)
                m = int(min(last_len[a], 1 << 14))
                last_len[a] = 0
            if budget is not None:
                m = min(m, budget - self.samples)
            if m < 8:  # round by round: the ask / tell step without its checks
                r1 = float(env.pull_many(single[a], one)[0])
                self._pending = None
                self.samples += 1
                if watch is not None:
                    watch.add_rewards(a, r1)
                self._tell_one(a, 1, r1)
                self._decide()
                last_len[a] += 1
                m = 8 if last_len[a] >= 8 and self.next_arm == a else m
                continue
            state = env.state_dict()
            r = env.pull_many(np.full(m, a, dtype=np.intp), np.ones(m, dtype=np.int64))
            Ss = np.cumsum(np.concatenate([[self.streak_S], r]))[1:]
            steps = np.arange(1, m + 1, dtype=np.int64)
            if self._block is not None:
                # compiled: round after round up to the first that stops or changes arm;
                # C_t for the block as _evaluate computes it
                C = self._radius(np.log1p((self.streak_k + steps).astype(np.float64) * self._q),
                                 self.samples + steps.astype(np.float64))
                n, need = 0, 0
                while True:
                    n, need = self._block(self.u, self.g, self._ga, self._ga2, self._Gbuf, self._have, self.streak_k,
                                          Ss, self._ua, self._q, C, eps, a, n, *outs)
                    if need < 0:
                        break
                    self._row(need)
                i, j, B, nxt = (o[:n] for o in outs)
            else:
                i, j, B, C, nxt = self._evaluate(
                    self.streak_k + steps, Ss, self.T[a] + steps, self.samples + steps.astype(np.float64)
                )
                cut = np.flatnonzero((B <= eps) | (nxt != a))
                n = int(cut[0]) + 1 if cut.size else m
            if n < m:  # rewind the environment and redraw the n rewards used (same values)
                env.load_state_dict(state)
                env.pull_many(np.full(n, a, dtype=np.intp), np.ones(n, dtype=np.int64))
            self._pending = None
            self.samples += n
            if watch is not None:
                watch.add_rewards(a, r[:n])
            self.rounds += n - 1
            self.streak_k += n
            self.streak_S = float(Ss[n - 1])
            self.T[a] += n
            self.sums[a] += float(r[:n].sum())
            if self.record_trace:
                for key, v in (("B", B), ("C", C), ("i", i), ("j", j)):
                    self._trace.setdefault(key, []).extend(v[: n - 1].tolist())
            self._apply(int(i[n - 1]), int(j[n - 1]), float(B[n - 1]), float(C[n - 1]), int(nxt[n - 1]))
            last_len[a] += n
            m = min(2 * m, 1 << 14) if n == m else m

    # ------------------------------------------------------------------ reporting
    @property
    def recommendation(self) -> int:
        return int(self.i_t) if self.rounds else 0

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T

    @property
    def theta(self) -> NDArray[np.float64]:
        """theta_hat at the current state (the base estimate plus the streak)."""
        a, k = self.streak_arm, self.streak_k
        th = np.array(self._base_theta(), dtype=np.float64)
        if a >= 0 and k > 0:
            th = th + ((self.streak_S - k * float(self.u[a])) / (1.0 + k * self._q)) * self._mx
        return th

    def _info(self) -> dict[str, Any]:
        out = {"S": self.S, "R": self.R, "C_t": self.C, "B": self.B, "theta_hat": self.theta}
        if self.done and self.status != "identified" and self.phase == "run" and np.isfinite(self.C):
            out["indistinguishable"] = self._indistinguishable()
        return out

    def _indistinguishable(self) -> list[int]:
        """Arms j != i_t that the data cannot rule out: ``(x_j - x_i)^T theta_hat + C_t
        ||x_j - x_i||_{A^-1} >= epsilon`` (the terms of B(t)), least separated first."""
        a, k = self.streak_arm, self.streak_k
        A_inv = self._base_A_inv()
        if a >= 0 and k > 0:  # the streak on top of the base (Sherman-Morrison)
            A_inv = A_inv - (k / (1.0 + k * self._q)) * np.outer(self._mx, self._mx)
        u = self.X @ self.theta
        i = int(u.argmax())
        D = self.X - self.X[i]
        f = u - u[i] + self.C * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", D, A_inv, D), 0.0))
        f[i] = -np.inf
        idx = np.flatnonzero(f >= self.solver.epsilon)
        return [int(j) for j in idx[np.argsort(-f[idx], kind="stable")]]

    def _extra_state(self) -> dict[str, Any]:
        return {
            "ls": None if self.ls is None else self.ls.state_dict(), "Tb": self.Tb.copy(), "sb": self.sb.copy(),
            "logdet": self._logdet_base, "n_folds": self._n_folds, "u": self.u.copy(), "g": self.g.copy(), "T": self.T.copy(),
            "sums": self.sums.copy(), "streak_arm": self.streak_arm, "streak_k": self.streak_k,
            "streak_S": self.streak_S, "phase": self.phase, "next_arm": self.next_arm,
            "next_count": self.next_count, "i_t": self.i_t, "j_t": self.j_t, "B": self.B, "C": self.C,
            "G_rows": None if self._Gbuf is None else self._Gbuf.copy(),
            "G_have": None if self._have is None else self._have.copy(),
        }

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._setup(self.solver)  # type: ignore[arg-type]
        n_arms = self.X.shape[0]
        self.u = np.array(state["u"], dtype=np.float64)
        self.g = np.array(state["g"], dtype=np.float64)
        self.T = np.array(state["T"], dtype=np.int64)
        self.sums = np.array(state["sums"], dtype=np.float64)
        if "Tb" in state:
            self.Tb = np.array(state["Tb"], dtype=np.int64)
            self.sb = np.array(state["sb"], dtype=np.float64)
            self._logdet_base = float(state["logdet"])
            self._n_folds = int(state["n_folds"])
        else:  # saved when the base was a LeastSquares only: its counts and sums from T, sums
            a, k = int(state["streak_arm"]), int(state["streak_k"])
            self.Tb, self.sb = self.T.copy(), self.sums.copy()
            if a >= 0 and k > 0:
                self.Tb[a] -= k
                self.sb[a] -= float(state["streak_S"])
            ls_state = state["ls"]
            self._logdet_base = float(ls_state["logdet"])
            self._n_folds = int(ls_state["n_updates"])
        for name in ("u", "g", "T", "sums", "Tb", "sb"):
            v = getattr(self, name)
            if v.shape != (n_arms,) or not np.isfinite(v).all() or (name in ("T", "Tb") and (v < 0).any()):
                raise StateError(f"LinGapE state: '{name}' must be {n_arms} finite values (counts >= 0); got {v!r}.")
        for k in ("streak_arm", "streak_k", "next_arm", "next_count", "i_t", "j_t"):
            setattr(self, k, int(state[k]))
        self.streak_S = float(state["streak_S"])
        self.phase = str(state["phase"])
        self.B, self.C = float(state["B"]), float(state["C"])
        self.ls = None
        if self._Gbuf is None:
            if state.get("ls") is None:
                raise StateError(f"LinGapE state: 'ls' (the least squares) is required for K = {n_arms} > MAX_ARMS.")
            self.ls = LeastSquares.from_state(state["ls"])
        if self._Gbuf is not None and state.get("G_rows") is not None:
            self._Gbuf = np.array(state["G_rows"], dtype=np.float64).reshape(self._Gbuf.shape)
            self._have = np.array(state["G_have"], dtype=bool).reshape(self._have.shape)
        self._streak_vectors()


# ====================================================================== static family
class _StaticBase(_LinearRun, Solver):
    """Shared settings of the XY solvers (static confidence bound, batched checks)."""

    arm_type: ClassVar[str] = "index"
    families: ClassVar[tuple[str, ...]] = ("linear",)

    def _init_static(self, delta: Any, epsilon: Any, sigma: Any, ridge: Any, growth: Any, design_method: Any,
                     radius: Any = "proposition-1") -> None:
        owner = type(self).__name__
        _check_common(self, owner, delta, epsilon)
        self.radius = check_choice(radius, "radius", STATIC_CONSTANTS, owner=owner)
        self.sigma = None if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
        self.ridge = check_float(ridge, "ridge", owner=owner, low=0.0)
        self.growth = check_float(growth, "growth", owner=owner, low=0.0)
        self.design_method = check_choice(design_method, "design_method", ("auto", "cvxpy", "frank-wolfe"), owner=owner)


class _StaticExploration(_WidthRule, Exploration):
    """Tracked fixed allocation p, static stopping rule (Proposition 1), checks on the
    geometric schedule n_{k+1} = max(n_k + 1, ceil((1 + g) n_k))."""

    solver: Any
    _ARRAYS: tuple[str, ...] = ("p", "T", "sums", "T_all")

    def __init__(self, solver: Any, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._setup(solver)
        k = self.X.shape[0]
        self.p = self._allocation()
        self.T = np.zeros(k, dtype=np.int64)  # statistics of the current phase
        self.T_all = np.zeros(k, dtype=np.int64)
        self.sums = np.zeros(k)
        self.n_phase = 0
        self.n_next = max(1, int(np.count_nonzero(self.p)))
        self.phase_checks = 0
        self.best = 0
        self.B = float("inf")

    def _setup(self, solver: Any) -> None:
        self.X = check_features(self.problem.features, owner=type(solver).__name__)
        k = self.X.shape[0]
        self.sigma = _resolve_noise(solver, self.problem, "sigma")
        self.log_hyp = _log_pairs(k)
        self._pairs = pairwise_differences(self.X)
        self._pair_i, self._pair_j = np.triu_indices(k, k=1)

    def _allocation(self) -> NDArray[np.float64]:
        """Subclass hook: the static design p over the arms (XY-adaptive sets its own per phase)."""
        raise TypeError(f"{type(self).__name__} defines no static allocation")

    def _design(self, active: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """The XY-optimal design over the differences of the ``active`` arms (all: None),
        by :func:`combex.allocations.xy_optimal_design` (its ``active`` direction mask)."""
        mask = None
        if active is not None and not active.all():
            mask = active[self._pair_i] & active[self._pair_j]
        des = xy_optimal_design(self.X, self._pairs, method=self.solver.design_method, active=mask)
        return np.asarray(des.weights, dtype=np.float64)

    # ------------------------------------------------------------------ statistics
    def _estimate(self) -> tuple[NDArray[np.float64], _PseudoInverse]:
        d = self.X.shape[1]
        A = self.solver.ridge * np.eye(d) + (self.X * self.T[:, None]).T @ self.X
        pinv = _PseudoInverse(A)
        theta = pinv.inv @ (self.X.T @ self.sums)
        return theta, pinv

    def _static_B(self, theta: NDArray[np.float64], pinv: _PseudoInverse, active: NDArray[np.bool_], delta: float) -> tuple[int, float]:
        """The stopping index over ``active`` arms: ``max_j (u_j - u_i) + c ||x_i - x_j||``."""
        u = self.X @ theta
        idx = np.flatnonzero(active)
        i = int(idx[np.argmax(u[idx])])
        c = self._radius(delta)
        n2 = pinv.norms_sq(self.X[idx] - self.X[i])
        with np.errstate(invalid="ignore"):
            f = (u[idx] - u[i]) + c * np.sqrt(n2)
        f[idx == i] = 0.0
        return i, float(np.max(f))

    def _radius(self, delta: float) -> float:
        """C of the static bound at this check. ``radius="proposition-1"``: Proposition 1
        as printed, a union over every sample count of the phase. ``"sub-gaussian"``: the
        sub-Gaussian constant with the union over the phase's checks instead, whose sample
        counts the growth schedule fixes before any reward is seen (n_1 = the design's
        support, n_{k+1} = max(n_k + 1, ceil((1 + g) n_k))), so check k uses t = k."""
        if self.solver.radius == "sub-gaussian":
            t = max(self.phase_checks, 1)
        else:
            t = max(self.n_phase, 1)
        return float(static_radius(t, delta, sigma=self.sigma, log_n_hypotheses=self.log_hyp,
                                   constant=self.solver.radius))

    def _schedule(self) -> None:
        g = self.solver.growth
        self.n_next = max(self.n_phase + 1, int(math.ceil((1.0 + g) * self.n_phase)))

    # ------------------------------------------------------------------ contract
    def _next_batch(self) -> Batch:
        target = apportion(self.p, self.n_next)
        add = np.maximum(target - self.T, 0)
        arms = np.flatnonzero(add)
        if arms.size == 0:  # counts told out of the plan: take one step of the sequence
            target = apportion(self.p, self.n_phase + 1)
            add = np.maximum(target - self.T, 0)
            arms = np.flatnonzero(add)
            if arms.size == 0:
                arms = np.array([int(np.argmax(self.p))])
                add = np.zeros_like(self.T)
                add[arms] = 1
        return Batch(arms, add[arms].astype(np.int64))

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        if batch.arms.ndim != 1:
            raise StateError(f"{type(self.solver).__name__} pulls index arms; got super-arm masks.")
        np.add.at(self.T, batch.arms, batch.counts)
        np.add.at(self.T_all, batch.arms, batch.counts)
        np.add.at(self.sums, batch.arms, reward_sums)
        self.n_phase += batch.total
        if self.n_phase >= self.n_next:
            prev = getattr(self, "_prev_check", 0)
            if 0 < prev < self.n_phase:
                self.max_check_ratio = max(getattr(self, "max_check_ratio", 1.0), self.n_phase / prev)
            self.phase_checks += 1
            self._check()
            self._prev_check = self.n_phase  # 0 when _check started a new phase
            if not self.done:
                self._schedule()

    def _check(self) -> None:
        theta, pinv = self._estimate()
        active = np.ones(self.X.shape[0], dtype=bool)
        i, B = self._static_B(theta, pinv, active, self.solver.delta)
        self.best, self.B = i, B
        self.rounds += 1
        self.record(B=B, n=self.n_phase)
        if B <= self.solver.epsilon:
            self.certificate = {"B": B, "epsilon": self.solver.epsilon, "best": i}
            self.stop("identified", f"arm {i} certified against every other arm (B = {B:.6g})")

    @property
    def recommendation(self) -> int:
        return int(self.best)

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T_all

    def _info(self) -> dict[str, Any]:
        return {"allocation": self.p.copy(), "max_check_ratio": float(getattr(self, "max_check_ratio", 1.0)),
                "sigma": self.sigma}

    def _extra_state(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k).copy() for k in self._ARRAYS}
        out.update(n_phase=self.n_phase, n_next=self.n_next, best=self.best, B=self.B, phase_checks=self.phase_checks,
                   prev_check=int(getattr(self, "_prev_check", 0)),
                   max_check_ratio=float(getattr(self, "max_check_ratio", 1.0)))
        return out

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._setup(self.solver)
        for k in self._ARRAYS:
            v = np.asarray(state[k])
            setattr(self, k, v.astype(np.int64) if v.dtype.kind in "iub" or k in ("T", "T_all") else v.astype(np.float64))
        for k in ("n_phase", "n_next", "best"):
            setattr(self, k, int(state[k]))
        self.B = float(state["B"])
        self._prev_check = int(state.get("prev_check", 0))
        self.phase_checks = int(state.get("phase_checks", self.rounds))
        self.max_check_ratio = float(state.get("max_check_ratio", 1.0))


_STATIC_NOTES = """
    Notes
    -----
    The confidence width is Proposition 1 of Soare et al. (eq. (2) of Xu et al.):
    ``c_n = 2 sigma sqrt(2 log(6 n^2 H / (delta pi^2)))``, valid for a sequence of arms fixed
    in advance. Eq. (2) prints ``H = K``; the stopping rule applies the bound to the
    ``K(K-1)/2`` differences ``x - x'``, so combex takes ``H = K(K-1)/2`` (a union bound over
    the directions actually used). Proposition 1 is stated for noise bounded in
    [-sigma, sigma]; for sigma-sub-Gaussian noise (Gaussian) the same form holds by the
    sub-Gaussian Azuma inequality.

    Stopping: at a check after n samples, with ``theta_hat`` the least squares estimate
    (pseudo-inverse when A_n is singular: only directions in its range are certified;
    ridge > 0 gives the regularized estimate of Appendix A), stop when the empirical best
    arm i satisfies ``(x_i - x_j)^T theta_hat - c_n ||x_i - x_j||_{A_n^{-1}} >= -epsilon``
    for every j, i.e. ``B = max_j (u_j - u_i + c_n ||x_i - x_j||) <= epsilon``.

    Pulls follow the nested tracking sequence of the allocation: after n samples the
    counts are :func:`combex.allocations.apportion` ``(p, n)``, the counts of the tracking
    rule ``argmin_{p_a > 0} T_a / p_a`` (lowest index on ties; :class:`~combex.allocations.Tracker`).
    Checks happen on the geometric schedule ``n_{k+1} = max(n_k + 1, ceil((1 + g) n_k))``
    (``growth=g``); ``growth=0`` checks after every sample. What this guarantees: two
    consecutive checks satisfy ``n_{k+1} <= max(n_k + 1, (1 + g) n_k + 1)``, so if the rule
    holds at every sample count from n on, the run stops by ``(1 + g) n + 1``;
    ``info["max_check_ratio"]`` is the largest ``n_{k+1} / n_k`` of the run (it exceeds
    ``1 + g`` while ``n_k < 1 / g``, where the ``n_k + 1`` term rules). It is *not* a bound on
    the ratio of the batched to the per-round stopping time: the rule is not monotone in n
    (a crossing can be undone by the next samples), so the stop can come later than
    ``(1 + g)`` times the first crossing; it is not within a factor 1 + g of the per-round
    stop in that sense (mean sample ratios of 1.027 at g = 0.01 and 1.064-1.069 at
    g = 0.05 were measured for the full-bandit solvers).
"""


@register_solver
class XYStatic(_StaticBase):
    __doc__ = """XY-static allocation (Soare, Lazaric & Munos 2014), eq. (5) of Xu et al. (2018).

    The allocation is the XY-optimal design ``argmin_p max_{y in Y} ||y||^2_{A(p)^{-1}}``
    over all differences ``Y = {x - x'}``, tracked; stopping by Proposition 1.

    Parameters
    ----------
    delta : float, default 0.05
    epsilon : float, default 0.0
    sigma : float, optional
        Noise scale in Proposition 1; None: ``problem.noise.sigma``.
    ridge : float, default 0.0
        0 for ordinary least squares (the setting of Proposition 1); Appendix A of Xu et al.
        uses 0.01 on real data.
    growth : float, default 0.01
        g of the geometric check schedule (0: check after every sample).
    design_method : {"auto", "cvxpy", "frank-wolfe"}
        Method of :func:`combex.allocations.xy_optimal_design` ("auto": cvxpy for small
        direction sets, Frank-Wolfe otherwise).
    radius : {"proposition-1", "sub-gaussian"}, default "proposition-1"
        The constants of Proposition 1's width, :func:`combex.estimation.static_radius`:
        as printed, or the sub-Gaussian tail's (about 3.8x fewer samples, equally valid).
    """ + _STATIC_NOTES

    name: ClassVar[str] = "xy-static"

    def __init__(
        self,
        delta: float = 0.05,
        epsilon: float = 0.0,
        *,
        sigma: float | None = None,
        ridge: float = 0.0,
        growth: float = 0.01,
        design_method: str = "auto",
        radius: str = "proposition-1",
    ) -> None:
        self._init_static(delta, epsilon, sigma, ridge, growth, design_method, radius)

    def start(self, problem: Any, *, rng: Any = None) -> Exploration:
        return XYStaticExploration(self, problem, rng)

    @property
    def exploration_class(self) -> type[Exploration]:
        return XYStaticExploration


class XYStaticExploration(_StaticExploration):
    def _allocation(self) -> NDArray[np.float64]:
        return self._design()


@register_solver
class XYOracle(_StaticBase):
    __doc__ = """XY-oracle allocation (Soare et al. 2014), eq. (18) of Xu et al. (2018).

    The allocation ``argmin_p max_{i != a*} ||x* - x_i||^2_{A(p)^{-1}} / Delta_i^2`` uses the
    TRUE theta; it is a benchmark, not a usable algorithm. Stopping as :class:`XYStatic`.

    Parameters
    ----------
    theta : array of shape (d,), optional
        The true parameter. None: :meth:`run` takes ``env.theta``; :meth:`start` then
        needs it given.
    delta, epsilon, sigma, ridge, growth, design_method, radius
        As :class:`XYStatic`.
    """ + _STATIC_NOTES

    name: ClassVar[str] = "xy-oracle"

    def __init__(
        self,
        delta: float = 0.05,
        epsilon: float = 0.0,
        *,
        theta: Any = None,
        sigma: float | None = None,
        ridge: float = 0.0,
        growth: float = 0.01,
        design_method: str = "auto",
        radius: str = "proposition-1",
    ) -> None:
        self._init_static(delta, epsilon, sigma, ridge, growth, design_method, radius)
        if theta is not None:
            th = np.asarray(theta, dtype=np.float64)
            if th.ndim != 1 or not np.all(np.isfinite(th)):
                raise param_error("theta", "XYOracle", "a finite 1-d array", theta)
            theta = tuple(th.tolist())
        self.theta = theta

    def with_truth(self, env: Any) -> "XYOracle":
        """See :meth:`Solver.with_truth`: a copy given the environment's ``theta`` when the
        ``theta`` setting is None."""
        if self.theta is not None:
            return self
        truth = getattr(env, "theta", None)
        if truth is None:
            raise InvalidParameterError("XYOracle needs the true theta: give theta=... or an environment with .theta.")
        params = self.get_params()
        params["theta"] = np.asarray(truth)
        return type(self)(**params)

    def start(self, problem: Any, *, rng: Any = None) -> Exploration:
        if self.theta is None:
            raise InvalidParameterError("XYOracle.start needs theta=... (the true parameter).")
        return XYOracleExploration(self, problem, rng)

    @property
    def exploration_class(self) -> type[Exploration]:
        return XYOracleExploration


class XYOracleExploration(_StaticExploration):
    def _allocation(self) -> NDArray[np.float64]:
        th = np.asarray(self.solver.theta, dtype=np.float64)
        if th.shape != (self.X.shape[1],):
            raise InvalidParameterError(
                f"The 'theta' parameter of XYOracle must have shape ({self.X.shape[1]},). "
                f"Got an array of shape {th.shape} instead."
            )
        lb = characteristic_time(self.X, th)
        return lb.allocation


@register_solver
class XYAdaptive(_StaticBase):
    __doc__ = """XY-adaptive allocation (Soare et al. 2014), as Section 4 of Xu et al. (2018) describes.

    Phases j = 1, 2, ...: the statistics (A, b) are reset at the start of each phase, so the
    static bound of Proposition 1 applies within the phase. In phase j the arms follow the
    XY-optimal design over ``Y_hat_j = {x - x' : x, x' in X_hat_j}`` (over all K arms as
    candidates), tracked. The phase ends at the first check where
    ``rho_j(n) / n < alpha rho_{j-1} / n_{j-1}``, with ``rho_j(n) = max_{y in Y_hat_j}
    ||y||^2_{A_n^{-1}}`` (Soare et al.'s rule; ``rho_0 = 1``, ``n_0 = d(d+1) + 1``). Then
    ``X_hat_{j+1}`` keeps every arm of X that no arm of X beats with certainty with the
    phase-j statistics -- ``(x' - x)^T theta_hat >= c ||x' - x||_{A^{-1}}`` -- so arms not
    discardable with the phase's design come back (the "forgetting" of Section 7.1.1);
    ``readmit=False`` keeps only arms of ``X_hat_j`` (an arm once discarded stays out, as
    in Fiez et al.'s (2019) code), which is still valid: an arm leaves only when an arm
    beats it with certainty.
    The run stops when one arm is left, or, within a phase, when the empirical best active
    arm is certified against every active arm (the XY-static rule). Phase j uses the
    confidence ``delta_j = 6 delta / (pi^2 j^2)`` (union over phases).

    Parameters
    ----------
    delta, epsilon, sigma, ridge, growth, design_method
        As :class:`XYStatic` (phase ends are tested at the checks of the geometric schedule,
        so a phase overruns by at most a factor 1 + g).
    alpha : float, default 0.1
        The phase-length constant alpha in (0, 1) (Soare et al. and the reference
        implementations use 1/10).
    readmit : bool, default True
        True: ``X_hat_{j+1}`` is chosen among all of X (Soare et al.'s algorithm as
        printed); False: among ``X_hat_j`` only.
    radius : {"proposition-1", "sub-gaussian"}, default "proposition-1"
        The constants of the confidence width, :func:`combex.estimation.static_radius`:
        as printed, or the sub-Gaussian tail's (about 3.8x fewer samples, equally valid).
    """ + _STATIC_NOTES

    name: ClassVar[str] = "xy-adaptive"

    def __init__(
        self,
        delta: float = 0.05,
        epsilon: float = 0.0,
        *,
        alpha: float = 0.1,
        readmit: bool = True,
        sigma: float | None = None,
        ridge: float = 0.0,
        growth: float = 0.01,
        design_method: str = "auto",
        radius: str = "proposition-1",
    ) -> None:
        self._init_static(delta, epsilon, sigma, ridge, growth, design_method, radius)
        self.alpha = check_float(alpha, "alpha", owner="XYAdaptive", low=0.0, high=1.0, closed="neither")
        self.readmit = check_bool(readmit, "readmit", owner="XYAdaptive")

    def start(self, problem: Any, *, rng: Any = None) -> Exploration:
        return XYAdaptiveExploration(self, problem, rng)

    @property
    def exploration_class(self) -> type[Exploration]:
        return XYAdaptiveExploration


class XYAdaptiveExploration(_StaticExploration):
    _ARRAYS = ("p", "T", "sums", "T_all", "active")

    def __init__(self, solver: Any, problem: Any, rng: Any) -> None:
        self.active = None
        Exploration.__init__(self, solver, problem, rng)
        self._setup(solver)
        k, d = self.X.shape
        self.active = np.ones(k, dtype=bool)
        self.phase = 1
        self.rho_prev = 1.0
        self.n_prev = d * (d + 1) + 1
        self.T_all = np.zeros(k, dtype=np.int64)
        self.best = 0
        self.B = float("inf")
        self._new_phase()

    def _new_phase(self) -> None:
        k = self.X.shape[0]
        self.p = self._design(self.active)
        self.T = np.zeros(k, dtype=np.int64)
        self.sums = np.zeros(k)
        self.n_phase = 0
        self.n_next = max(1, int(np.count_nonzero(self.p)))
        self.phase_checks = 0

    def _check(self) -> None:
        s = self.solver
        theta, pinv = self._estimate()
        delta_j = 6.0 * s.delta / (_PI2 * self.phase**2)
        i, B = self._static_B(theta, pinv, self.active, delta_j)
        self.best, self.B = i, B
        self.rounds += 1
        pair_active = self.active[self._pair_i] & self.active[self._pair_j]
        rho = float(np.max(pinv.norms_sq(self._pairs[pair_active])))
        self.record(B=B, n=self.n_phase, phase=self.phase, rho=rho)
        if B <= s.epsilon:
            self.certificate = {"B": B, "epsilon": s.epsilon, "best": i, "phase": self.phase}
            self.stop("identified", f"arm {i} certified against the active arms in phase {self.phase}")
            return
        if not (rho / self.n_phase < s.alpha * self.rho_prev / self.n_prev):
            return
        # end of phase j: elimination over all of X with the phase-j statistics
        u = self.X @ theta
        c = self._radius(delta_j)
        diff = self.X[None, :, :] - self.X[:, None, :]  # diff[x, x'] = x' - x
        k, d = self.X.shape
        n2 = pinv.norms_sq(diff.reshape(-1, d)).reshape(k, k)
        lead = u[None, :] - u[:, None]  # (x' - x)^T theta_hat
        with np.errstate(invalid="ignore"):
            beaten = (lead >= c * np.sqrt(n2)) & np.isfinite(n2)
        np.fill_diagonal(beaten, False)
        keep = ~beaten.any(axis=1)
        if not s.readmit:
            keep &= self.active
        if not keep.any():  # pragma: no cover - impossible: the empirical best is never beaten
            keep[int(np.argmax(u))] = True
        self.active = keep
        self.rho_prev, self.n_prev = rho, self.n_phase
        if keep.sum() == 1:
            self.best = int(np.flatnonzero(keep)[0])
            self.certificate = {"epsilon": s.epsilon, "best": self.best, "phase": self.phase}
            self.stop("identified", f"one arm left after phase {self.phase}")
            return
        self.phase += 1
        self._new_phase()

    def _schedule(self) -> None:
        if self.n_phase == 0:
            return  # a new phase has just started inside _check: its schedule is set
        super()._schedule()

    def _info(self) -> dict[str, Any]:
        out = super()._info()
        out.update(phases=self.phase, active=np.flatnonzero(self.active).tolist(), alpha=self.solver.alpha)
        return out

    def _extra_state(self) -> dict[str, Any]:
        out = super()._extra_state()
        out.update(phase=self.phase, rho_prev=self.rho_prev, n_prev=self.n_prev)
        return out

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        super()._load_extra_state(state)
        self.active = np.asarray(state["active"]).astype(bool)
        self.phase = int(state["phase"])
        self.rho_prev = float(state["rho_prev"])
        self.n_prev = int(state["n_prev"])


# ====================================================================== decision-class LinGapE
class _SpectralQuadratic:
    """Certified bound ``max_{|S|=k} 1_S^T W 1_S <= k lambda_max(W)`` (since ||1_S||^2 = k);
    the candidate is the k largest diagonal entries. Cheap and always valid, but loose."""

    def maximize(self, W: NDArray[np.float64], k: int) -> tuple[NDArray[np.bool_], Any]:
        n = W.shape[0]
        idx = np.argsort(-np.diag(W), kind="stable")[:k]
        mask = np.zeros(n, dtype=bool)
        mask[idx] = True
        val = float(W[np.ix_(idx, idx)].sum())
        ub = k * float(np.linalg.eigvalsh(W)[-1])
        return mask, _Cert(val, max(ub, val))


class _Cert:
    def __init__(self, value: float, upper_bound: float) -> None:
        self.value = value
        self.upper_bound = upper_bound
        self.certified_ratio = value / upper_bound if upper_bound > 0 else 1.0


@register_solver
class LinGapEOracle(_LinearRun, Solver):
    """LinGapE on a decision class (full-bandit features are indicators of super-arms).

    The arms are the members M of ``problem.decision_class`` (bool masks over n base arms),
    with features ``x_M = 1_M`` in R^n and reward ``1_M^T theta + noise``; they are never
    enumerated. Each round, with ``theta_hat``, ``A_t`` and C_t of eq. (3) (d = n):

    * ``i_t = argmax_M 1_M^T theta_hat`` -- the linear oracle (Algorithm 2 line 3);
    * ``M_2 = argmax_{M != i_t} 1_M^T theta_hat`` (``argmax_excluding``), the empirical gap
      ``gap = (1_{i_t} - 1_{M_2})^T theta_hat >= 0``;
    * the quadratic oracle on ``W = A_t^{-1}``: a member Q and a certified
      ``U >= max_{|S| = k} 1_S^T W 1_S``;
    * **the stopping quantity** ``B_bar(t) = max(0, -gap + C_t (sqrt(U) + ||1_{i_t}||_W))``.

    ``B_bar(t) >= B(t)`` of exhaustive LinGapE (Algorithm 2 line 5) on the same state:
    ``B(t) = max_M f(M)`` with ``f(M) = (1_M - 1_{i_t})^T theta_hat + C_t ||1_M - 1_{i_t}||_W``;
    ``f(i_t) = 0``; for ``M != i_t`` the first term is at most ``-gap`` (M_2 is the best
    member other than i_t) and by the triangle inequality ``||1_M - 1_{i_t}||_W <=
    ||1_M||_W + ||1_{i_t}||_W <= sqrt(U) + ||1_{i_t}||_W``. So stopping when
    ``B_bar(t) <= epsilon`` keeps Theorem 1's (epsilon, delta) guarantee, whatever the
    quadratic oracle's approximation ratio (only its certified upper bound is used).

    A second certified bound keeps the per-member gaps (it is the bound of CLUCB, Chen et
    al. 2014, in the norm of ``W``): ``1_M - 1_{i_t}`` is ``+1`` on ``M - i_t`` and ``-1`` on
    ``i_t - M`` (set differences), so ``||1_M - 1_{i_t}||_W <= sum_{e in M xor i_t} d_e`` with
    ``d_e = sqrt(W_ee)`` (triangle inequality), hence ``f(M) <= w(M) - w(i_t)`` with
    ``w_e = theta_hat_e + C_t d_e`` off ``i_t`` and ``theta_hat_e - C_t d_e`` on it, and
    ``B_elem(t) = max(0, max_{M != i_t} w(M) - w(i_t))`` is one ``argmax_excluding`` call (the
    maximizer is L). The stop uses ``min(B_bar, B_elem) >= B(t)``.

    ``j_t`` is L when ``B_elem <= B_bar``, else the candidate of ``{M_2, Q, L}`` with the
    larger ``f``. The pulled member is the one of ``{i_t, j_t, M_2, Q, L}`` that most lowers
    the bound the stop uses after one pull (Sherman-Morrison lookahead on W with
    ``theta_hat`` and C_t held fixed; ``||1_Q||_W`` stands for ``sqrt(U)``). The plain greedy
    rule (9) for ``y = 1_{i_t} - 1_{j_t}`` reduces ``||y||_W`` only, while the stop needs
    the norm of *every* member small: on ``topk_gaussian((3, 2.5, 0, 0, 0, 0), k=2)``
    (ridge 0.1, S = 4) it never stops (B_bar 1.5-1.7 from 2e4 to 2e5 rounds); this rule stops
    after 271-408 samples (seeds 0-4; exhaustive LinGapE over the 15 teams: 117-175).
    There is no initialization phase (ridge > 0 keeps A_t invertible). The ratio rule (12)
    needs an L1 design over all members and is not offered.

    Parameters
    ----------
    delta, epsilon, ridge, S, union_bound, refactor_every
        As :class:`LinGapE` (the union bound would be over ``|class|^2`` pairs: not offered).
        With ``S=None`` and no ``problem.info["S"]``, S is derived from a known range
        [lo, hi] of the base-arm means (``problem.info["reward_range"]``, or [0, 1] for
        Bernoulli / data-backed rewards): theta = the base-arm means, so
        ``||theta||_2 <= max(|lo|, |hi|) sqrt(n)``; else an error naming S.
    sigma : float, optional
        Sub-Gaussian scale of one super-arm observation (the paper's R). None: ``sqrt(k)
        sigma`` for independent per-base-arm noise of scale sigma (``problem.noise``),
        ``k sigma`` otherwise. ``R`` is a deprecated alias.
    quadratic : {"peeling", "spectral"} or object, default "peeling"
        The quadratic oracle: ``"peeling"`` is
        ``combex.oracles.quadratic.QuadraticMaximization(dks="peeling")``; ``"spectral"`` the
        built-in bound ``k lambda_max(W)``; or any object with ``maximize(W, k) -> (mask,
        certificate)`` whose certificate has ``upper_bound``.

    Notes
    -----
    Members must all have the same size k (top-k, matroid bases, perfect matchings,
    spanning trees): k is read from ``argmax(ones)`` and checked against ``argmax(-ones)``.
    """

    name: ClassVar[str] = "lingape-oracle"
    renamed_params: ClassVar[Mapping[str, str]] = {"R": "sigma"}
    arm_type: ClassVar[str] = "mask"
    families: ClassVar[tuple[str, ...]] = ("full-bandit",)

    def __init__(
        self,
        delta: float = 0.05,
        epsilon: float = 0.0,
        *,
        ridge: float = 1.0,
        S: float | None = None,
        sigma: float | None = None,
        quadratic: Any = "peeling",
        refactor_every: int = 4096,
    ) -> None:
        owner = type(self).__name__
        _check_lingape(self, owner, delta, epsilon, ridge, S, sigma, refactor_every)
        if isinstance(quadratic, str):
            check_choice(quadratic, "quadratic", ("peeling", "spectral"), owner=owner)
        elif not callable(getattr(quadratic, "maximize", None)):
            raise param_error("quadratic", owner, "'peeling', 'spectral' or an object with maximize(W, k)", quadratic)
        self.quadratic = quadratic

    def query(self, problem: Any) -> Query:
        """The best team as a linear model of its members; its yardstick enumerates at most
        500 teams (beyond, no ratio)."""
        return Query("linear", self.delta, float(self.epsilon), max_enumerate=500)

    def start(self, problem: Any, *, rng: Any = None) -> "LinGapEOracleExploration":
        return LinGapEOracleExploration(self, problem, rng)

    @property
    def exploration_class(self) -> type[Exploration]:
        return LinGapEOracleExploration


class LinGapEOracleExploration(_WidthRule, Exploration):
    """State of one :class:`LinGapEOracle` run."""

    solver: LinGapEOracle

    def __init__(self, solver: LinGapEOracle, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        self._setup(solver)
        n = self.n
        # A = lambda I + sum c 1_M 1_M^T, b, A^{-1}, log det A (count-weighted Sherman-Morrison)
        self.ls = LeastSquares(n, ridge=solver.ridge, refactor_every=solver.refactor_every)
        self.T = np.zeros(n, dtype=np.int64)
        self.n_pulls = 0  # number of super-arm pulls folded
        self.best_mask = self.dc.argmax(self.theta)
        self.next_mask = self.best_mask.copy()
        self.B = float("inf")
        self.C = float("nan")
        self._select()

    def _setup(self, solver: LinGapEOracle) -> None:
        owner = "LinGapEOracle"
        dc = self.problem.decision_class
        if dc is None:
            raise InvalidParameterError(f"{owner} needs a problem with a decision class (full-bandit features).")
        self.dc = dc
        self.n = int(dc.n)
        big = np.asarray(dc.argmax(np.ones(self.n)), dtype=bool)
        small = np.asarray(dc.argmax(-np.ones(self.n)), dtype=bool)
        self.k = int(big.sum())
        if int(small.sum()) != self.k:
            raise InvalidParameterError(
                f"{owner} needs members of equal size; the decision class has members of sizes "
                f"{int(small.sum())} and {self.k}."
            )
        noise = self.problem.noise
        if solver.sigma is not None:
            self.R = float(solver.sigma)
        else:
            self.R = noise.scale(self.k, owner=type(self.solver).__name__)
        self.S = _resolve_S(solver, self.problem)
        q = solver.quadratic
        if q == "spectral":
            self.quad: Any = _SpectralQuadratic()
        elif q == "peeling":

            self.quad = QuadraticMaximization(dks="peeling")
        else:
            self.quad = q

    @property
    def M(self) -> NDArray[np.float64]:
        """A_t^{-1} (read-only)."""
        return self.ls.A_inv

    @property
    def theta(self) -> NDArray[np.float64]:
        """theta_hat (read-only)."""
        return self.ls.theta

    def confidence_radius(self) -> float:
        """C_t of eq. (3) with d = n (:func:`combex.estimation.self_normalized_radius`)."""
        s = self.solver
        return float(self_normalized_radius(self.ls.logdet(), self.n, s.delta, R=self.R, ridge=s.ridge, S=self.S))

    def _norm(self, v: NDArray[np.float64]) -> float:
        return math.sqrt(max(float(v @ self.M @ v), 0.0))

    def _select(self) -> None:
        """One LinGapE round through the oracles (see :class:`LinGapEOracle`)."""
        s = self.solver
        C = self.confidence_radius()
        th = self.theta
        I = np.asarray(self.dc.argmax(th), dtype=bool)
        xi = I.astype(np.float64)
        M2 = self.dc.argmax_excluding(th, I)
        if M2 is None:  # a single member
            self.best_mask, self.B, self.C = I, 0.0, C
            self.certificate = {"B": 0.0, "C_t": C}
            self.stop("identified", "the decision class has one member")
            return
        M2 = np.asarray(M2, dtype=bool)
        gap = float(th[I].sum() - th[M2].sum())
        Q, cert = self.quad.maximize(0.5 * (self.M + self.M.T), self.k)
        Q = np.asarray(Q, dtype=bool)
        U = float(cert.upper_bound)
        norm_i = self._norm(xi)
        N = math.sqrt(max(U, 0.0)) + norm_i
        B_quad = max(0.0, -gap + C * N)
        # element-wise bound: ||1_M - 1_I||_W <= sum_{e in M xor I} sqrt(W_ee), so
        # f(M) <= w(M) - w(I) with w_e = theta_e + C d_e off I and theta_e - C d_e on I
        dvec = np.sqrt(np.maximum(np.diag(self.M), 0.0))
        w = th + np.where(I, -C, C) * dvec
        L = np.asarray(self.dc.argmax_excluding(w, I), dtype=bool)
        B_elem = max(0.0, float(w[L].sum() - w[I].sum()))
        B = min(B_quad, B_elem)
        self.best_mask, self.B, self.C, self.bound_U = I, B, C, U
        self.rounds += 1
        self.record(B=B, C=C, gap=gap, U=U, B_elem=B_elem)
        if B <= s.epsilon:
            self.certificate = {"B": B, "C_t": C, "gap": gap, "norm_bound": N, "B_quadratic": B_quad,
                                "B_elementwise": B_elem, "epsilon": s.epsilon,
                                "certified_ratio": float(getattr(cert, "certified_ratio", float("nan")))}
            self.stop("identified", f"B_bar(t) = {B:.6g} <= epsilon = {s.epsilon}")
            return
        cands = [m for m in (M2, Q, L) if not np.array_equal(m, I)]
        fvals = [float(th[m].sum() - th[I].sum()) + C * self._norm(m.astype(np.float64) - xi) for m in cands]
        J = L if B_elem <= B_quad else cands[int(np.argmax(fvals))]
        self.j_mask = J
        y = xi - J.astype(np.float64)
        pool = [I, J, M2, Q, L]
        # The pull that most lowers the bound the stop uses (one-step lookahead on W with
        # theta_hat and C_t held fixed): min of the quadratic bound, with ||1_Q||_W as the
        # proxy of sqrt(U), and the element-wise bound.
        xq = Q.astype(np.float64)
        act = I ^ L
        w_gap = float(w[L].sum() - w[I].sum()) - C * float(dvec[act].sum())  # the theta part
        Mx = self.M
        best_a, best_val = I, math.inf
        for m in pool:
            xm = m.astype(np.float64)
            wx = Mx @ xm
            den = 1.0 + float(xm @ wx)
            nq = float(xq @ Mx @ xq) - float(wx @ xq) ** 2 / den
            ni = float(xi @ Mx @ xi) - float(wx @ xi) ** 2 / den
            quad = -gap + C * (math.sqrt(max(nq, 0.0)) + math.sqrt(max(ni, 0.0)))
            dn = np.diag(Mx) - wx * wx / den
            elem = w_gap + C * float(np.sqrt(np.maximum(dn[act], 0.0)).sum())
            val = min(quad, elem)
            if val < best_val - 1e-12:
                best_a, best_val = m, val
        self.next_mask = best_a.copy()

    def _fold(self, mask: NDArray[np.bool_], c: int, s: float) -> None:
        if c <= 0:
            return
        self.ls.update(mask.astype(np.float64), s, c)
        self.T[mask] += c
        self.n_pulls += c

    def _next_batch(self) -> Batch:
        return Batch(self.next_mask[None, :].copy(), np.ones(1, dtype=np.int64))

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = batch.arms
        if arms.ndim != 2 or arms.shape[1] != self.n:
            raise StateError(f"LinGapEOracle pulls super-arm masks of shape (m, {self.n}).")
        for m, c, s in zip(arms, batch.counts.tolist(), reward_sums.tolist()):
            self._fold(np.asarray(m, dtype=bool), c, s)
        self._select()

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        return self.best_mask.copy()

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self.T

    def _info(self) -> dict[str, Any]:
        return {"S": self.S, "R": self.R, "C_t": self.C, "B_bar": self.B, "k": self.k, "super_arm_pulls": self.n_pulls}

    def _extra_state(self) -> dict[str, Any]:
        return {
            "ls": self.ls.state_dict(), "T": self.T.copy(), "next_mask": self.next_mask.copy(),
            "best_mask": self.best_mask.copy(), "n_pulls": self.n_pulls, "B": self.B, "C": self.C,
        }

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._setup(self.solver)  # type: ignore[arg-type]
        self.ls = LeastSquares.from_state(state["ls"])
        self.T = np.array(state["T"], dtype=np.int64)
        self.next_mask = np.array(state["next_mask"], dtype=bool)
        self.best_mask = np.array(state["best_mask"], dtype=bool)
        self.n_pulls = int(state["n_pulls"])
        self.B, self.C = float(state["B"]), float(state["C"])
