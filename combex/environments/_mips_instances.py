"""Named instances of the MIPS and sublinear-bandit papers.

* :func:`mips_gaussian`, :func:`mips_uniform`: the synthetic MIPS data sets of the
  BoundedME paper (Liu, Wu and Mozafari 2019, Figures 2-3): ``n`` vectors and queries
  with i.i.d. N(0, 1) (resp. U[0, 1)) coordinates.
* :func:`mips_adversarial`: the adversarial MAB-BP data set of its Figure 1: each arm
  has a true mean ``r_a ~ U[0, 1]`` and a 0/1 list of ``N`` rewards (each 1 with
  probability ``r_a``) returned ones first.
* :func:`mips_gaussian_env`, :func:`mips_uniform_env`, :func:`mips_adversarial_env`: the
  same data as MAB-BP *environments* for the experiment runner and the CLI (registered as
  ``mips-gaussian``, ``mips-uniform``, ``mips-adversarial``): one query ``q``, arm ``i``'s
  reward list ``v_ij q_j`` scaled into ``[0, 1]`` exactly as :func:`combex.mips.mips_top_k`
  scales it (:func:`mips_reward_lists`), scored top-k aware (:class:`MIPSRewardLists`).
* :func:`sublinear_synthetic`: the synthetic environment of Section 7 of Yang et al.
  (2022): ``theta* ~ N(0, I_d)``, arms ~ N(0, I_d), unit Gaussian noise, ``change`` arms
  added every ``every`` steps (and optionally as many deleted, Appendix C), final size K.
* :func:`wine_dynamic`: a real-data analogue of their Table 3 (MovieLens may not be
  redistributed): the 4,898 white wines of the UCI Wine Quality data (Cortez et al.
  2009), standardized features plus an intercept, ``theta*`` fitted by ridge
  regression of the quality, arms revealed over time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import _reject_complex, check_bool, check_choice, check_float, check_int, check_rng, param_error
from ..datasets import load_wine_quality
from ..exceptions import InvalidParameterError
from ._lists import BinaryRewardLists, RewardLists, _list_noise

__all__ = [
    "MIPSData",
    "max_abs_entry",
    "mips_gaussian",
    "mips_uniform",
    "mips_adversarial",
    "mips_reward_lists",
    "MIPSRewardLists",
    "MIPSBinaryRewardLists",
    "mips_gaussian_env",
    "mips_uniform_env",
    "mips_adversarial_env",
    "DynamicLinearArms",
    "sublinear_synthetic",
    "wine_dynamic",
]


# ---------------------------------------------------------------------- MIPS data
_CHUNK_BYTES = 1 << 24


def max_abs_entry(V: NDArray[Any], owner: str, *, name: str = "V") -> float:
    """``max |V_ij|`` of a 2-d array in row chunks (no copy of V); a non-finite entry is
    refused, naming its position."""
    n, dim = V.shape
    step = max(1, _CHUNK_BYTES // max(1, dim * V.itemsize))
    best = 0.0
    for r0 in range(0, n, step):
        chunk = V[r0 : r0 + step]
        hi, lo = float(chunk.max()), float(chunk.min())
        if not (np.isfinite(hi) and np.isfinite(lo)):
            i, j = np.argwhere(~np.isfinite(chunk))[0]
            raise InvalidParameterError(
                f"The {name!r} parameter of {owner} must have finite entries. Got "
                f"{float(chunk[i, j])!r} at [{r0 + int(i)}, {int(j)}] instead."
            )
        best = max(best, hi, -lo)
    return best


@dataclass(frozen=True)
class MIPSData:
    """Vectors, queries and a known bound ``v_max >= max |V_ij|``.

    The bound is checked at construction (one pass over ``V``, no copy): a smaller
    ``v_max`` would void the reward width every guarantee on these data is stated in, so
    it is refused.
    """

    V: NDArray[Any]
    queries: NDArray[Any]
    v_max: float
    name: str
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        v_max = check_float(self.v_max, "v_max", owner="MIPSData", low=0.0)
        found = max_abs_entry(np.asarray(self.V), "MIPSData")
        if v_max < found:
            raise param_error("v_max", "MIPSData", f"at least max |V_ij| = {found!r}", v_max)


def _mips_args(n: Any, dim: Any, n_queries: Any, dtype: Any, order: Any, owner: str) -> tuple[int, int, int, Any, str]:
    n = check_int(n, "n", owner=owner, low=1)
    dim = check_int(dim, "dim", owner=owner, low=1)
    nq = check_int(n_queries, "n_queries", owner=owner, low=1)
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise param_error("dtype", owner, "float32 or float64", dtype)
    order = check_choice(order, "order", ["C", "F"], owner=owner)
    return n, dim, nq, dt, order


def mips_gaussian(
    n: int = 10_000,
    dim: int = 100_000,
    *,
    n_queries: int = 1,
    dtype: Any = np.float32,
    order: str = "C",
    rng: Any = None,
) -> MIPSData:
    """``n`` vectors and ``n_queries`` queries with i.i.d. N(0, 1) coordinates.

    ``order="F"`` stores V dimension-major (a sampled coordinate is then a contiguous row
    of ``V^T``; see :mod:`combex.mips._cost`). ``v_max`` is the realized maximum of
    ``|V_ij|`` (computed while generating, i.e. a known bound).

    Examples
    --------
    >>> d = mips_gaussian(10, 5, rng=0)
    >>> d.V.shape, d.queries.shape, d.V.dtype.name
    ((10, 5), (1, 5), 'float32')
    """
    n, dim, nq, dt, order = _mips_args(n, dim, n_queries, dtype, order, "mips_gaussian")
    g = check_rng(rng)
    V = np.empty((n, dim), dtype=dt, order=order)
    step = max(1, (1 << 24) // dim)
    vmax = 0.0
    for s in range(0, n, step):
        blk = g.standard_normal((min(step, n - s), dim), dtype=dt)
        V[s : s + blk.shape[0]] = blk
        vmax = max(vmax, float(np.abs(blk).max()))
    Q = g.standard_normal((nq, dim), dtype=dt)
    return MIPSData(V, Q, vmax, "mips-gaussian", {"n": n, "dim": dim})


def mips_uniform(
    n: int = 10_000,
    dim: int = 100_000,
    *,
    n_queries: int = 1,
    dtype: Any = np.float32,
    order: str = "C",
    rng: Any = None,
) -> MIPSData:
    """``n`` vectors and ``n_queries`` queries with i.i.d. U[0, 1) coordinates
    (``v_max = 1``).

    Examples
    --------
    >>> d = mips_uniform(4, 3, rng=0)
    >>> bool((d.V >= 0).all() and (d.V < 1).all()), d.v_max
    (True, 1.0)
    """
    n, dim, nq, dt, order = _mips_args(n, dim, n_queries, dtype, order, "mips_uniform")
    g = check_rng(rng)
    V = np.empty((n, dim), dtype=dt, order=order)
    step = max(1, (1 << 24) // dim)
    for s in range(0, n, step):
        V[s : min(n, s + step)] = g.random((min(step, n - s), dim), dtype=dt)
    Q = g.random((nq, dim), dtype=dt)
    return MIPSData(V, Q, 1.0, "mips-uniform", {"n": n, "dim": dim})


def mips_adversarial(n: int = 10_000, dim: int = 100_000, *, rng: Any = None) -> BinaryRewardLists:
    """The adversarial MAB-BP data set of the BoundedME paper (Figure 1).

    Each of the ``n`` arms draws ``r_a ~ U[0, 1]``; each of its ``dim`` rewards is 1 with
    probability ``r_a`` (so the list holds ``Binomial(dim, r_a)`` ones), and the ones are
    returned before the zeros ("to make the arms as indistinguishable as possible").
    That order breaks the random reading order BoundedME's guarantee needs: the solver
    refuses these lists unless run with ``assume_random_order=True`` (the paper's
    Figure 1 experiment, a heuristic run; with ``dim`` much longer than the schedule
    reads, most answers are then wrong).

    Returns
    -------
    BinaryRewardLists
        ``means()`` are the list means (the true means of the MAB-BP arms).

    Examples
    --------
    >>> env = mips_adversarial(5, 100, rng=0)
    >>> env.n_arms, env.list_size, env.order
    (5, 100, 'ones-first')
    """
    return _adversarial(n, dim, rng, BinaryRewardLists, "mips_adversarial")


def _adversarial(n: Any, dim: Any, rng: Any, cls: type, owner: str) -> Any:
    n = check_int(n, "n", owner=owner, low=1)
    dim = check_int(dim, "dim", owner=owner, low=1)
    g = check_rng(rng)
    r = g.random(n)
    ones = g.binomial(dim, r)
    env_rng = g.spawn(1)[0]
    return cls(ones.astype(np.int64), dim, order="ones-first", rng=env_rng)


# ---------------------------------------------------------------------- MIPS environments
def mips_reward_lists(V: Any, q: Any, v_max: float) -> NDArray[np.float64]:
    """The MAB-BP reward lists of MIPS query ``q``, scaled into ``[0, 1]``.

    Arm ``i``'s list is ``f(i, j) = V_ij q_j`` (Liu, Wu and Mozafari 2019), mapped through
    the known range ``[-v_max max|q|, v_max max|q|]`` (width ``2 v_max max|q|``, the
    ``info["reward_width"]`` of :func:`combex.mips.mips_top_k`):
    ``(V_ij q_j + v_max max|q|) / (2 v_max max|q|)``. ``epsilon`` of BoundedME on these
    lists is therefore in the same scaled units as ``mips_top_k``'s. A zero width
    (``q = 0`` or ``V = 0``: every product is 0) gives constant lists of 0.5. A ``v_max``
    below ``max |V_ij|`` would put rewards outside ``[0, 1]``: refused (nothing is clipped
    beyond rounding).

    Examples
    --------
    >>> mips_reward_lists(np.array([[1.0, -2.0]]), np.array([0.5, 1.0]), 2.0).tolist()
    [[0.625, 0.0]]
    """
    V = np.asarray(V)
    qv = np.asarray(q, dtype=np.float64)
    half = float(v_max) * float(np.abs(qv).max(initial=0.0))
    prod = V.astype(np.float64, copy=False) * qv
    if half <= 0.0:
        return np.full(prod.shape, 0.5)
    prod += half
    prod /= 2.0 * half
    # Rounding may leave -1e-17 or 1 + 1e-16; the exact values lie in [0, 1] unless v_max
    # is too small, which is refused rather than clipped.
    lo, hi = float(prod.min()), float(prod.max())
    if lo < -1e-9 or hi > 1.0 + 1e-9:
        raise param_error("v_max", "mips_reward_lists", "at least max |V_ij| (a product falls outside the "
                          "range it implies)", v_max)
    return np.clip(prod, 0.0, 1.0, out=prod)


class _TopKScoring:
    """Top-k aware scoring of index answers (the guarantee of BoundedME's Theorem 1)."""

    n_arms: int
    means: Any  # provided by the reward-list class mixed with

    def answer_arms(self, answer: Any) -> NDArray[np.intp]:
        """The arms of ``answer``: an index (k = 1), a bool mask of length ``n_arms`` or an
        array of distinct indices (k = its size)."""
        owner = type(self).__name__
        a = np.asarray(answer)
        if a.ndim == 0:
            return np.array([self._check_index(answer)], dtype=np.intp)  # type: ignore[attr-defined]
        if a.ndim == 1 and a.dtype == bool and a.size == self.n_arms and a.any():
            return np.flatnonzero(a)
        if (a.ndim == 1 and a.size and np.issubdtype(a.dtype, np.integer) and a.min() >= 0
                and a.max() < self.n_arms and np.unique(a).size == a.size):
            return a.astype(np.intp)
        raise param_error("answer", owner, f"an arm index, a non-empty bool mask of length {self.n_arms} "
                          "or distinct arm indices", answer)

    def top_k_gap(self, answer: Any) -> float:
        """``mu_(k) - min_{i in answer} mu_i`` with ``k = |answer|`` and ``mu_(k)`` the k-th
        largest mean: how far the k-th best arm of the answer falls short of the true k-th
        best (<= 0 when the answer is the exact top k)."""
        arms = self.answer_arms(answer)
        mu = self.means()
        kth = float(np.partition(mu, mu.size - arms.size)[mu.size - arms.size])
        return kth - float(mu[arms].min())

    def is_correct(self, answer: Any, epsilon: float = 0.0) -> bool:
        """Whether ``answer`` (k arms) is epsilon-optimal in the sense of Theorem 1 of
        Liu, Wu and Mozafari (2019): the k-th best true mean among the returned arms is
        within ``epsilon`` of the k-th best mean overall (up to 1e-12). For ``k = 1`` this
        is the usual ``max mu - mu_answer <= epsilon``."""
        return self.top_k_gap(answer) <= float(epsilon) + 1e-12


class MIPSRewardLists(_TopKScoring, RewardLists):
    """:class:`RewardLists` of a scaled MIPS query: rewards known to lie in ``[0, 1]``
    (``problem.info`` reports ``lower = 0``, ``upper = 1``, the known bounds, not the
    realized extremes, so BoundedME uses ``value_range = 1`` as ``mips_top_k`` does) and
    top-k aware :meth:`is_correct`."""

    def __init__(self, lists: Any, *, shuffle: bool = True, rng: Any = None) -> None:
        super().__init__(lists, shuffle=shuffle, rng=rng)
        if self.lower < 0.0 or self.upper > 1.0:
            raise param_error("lists", type(self).__name__, "an array with entries in [0, 1]", lists)
        self.lower, self.upper = 0.0, 1.0
        self.noise = _list_noise(0.0, 1.0)


class MIPSBinaryRewardLists(_TopKScoring, BinaryRewardLists):
    """:class:`BinaryRewardLists` with top-k aware :meth:`is_correct`."""


def _mips_env(data: MIPSData) -> MIPSRewardLists:
    lists = mips_reward_lists(data.V, data.queries[0], data.v_max)
    env = MIPSRewardLists(lists)
    env.name = data.name  # type: ignore[attr-defined]
    return env


def mips_gaussian_env(n: int = 2_000, dim: int = 2_000, *, rng: Any = None) -> MIPSRewardLists:
    """:func:`mips_gaussian` data (one query) as a MAB-BP environment.

    Arm ``i``'s list is ``V_ij q_j`` scaled by :func:`mips_reward_lists` (``v_max`` the
    realized maximum of ``|V_ij|``); each list is read in its own random order
    (reshuffled at every ``reset``; ``mips_top_k`` shares one permutation across arms,
    both are sampling without replacement as Lemma 1 needs). Memory: ``8 n dim`` bytes.

    Examples
    --------
    >>> env = mips_gaussian_env(5, 40, rng=0)
    >>> env.n_arms, env.list_size, env.problem.info["upper"]
    (5, 40, 1.0)
    """
    owner = "mips_gaussian_env"
    n = check_int(n, "n", owner=owner, low=1)
    dim = check_int(dim, "dim", owner=owner, low=1)
    return _mips_env(mips_gaussian(n, dim, rng=rng))


def mips_uniform_env(n: int = 2_000, dim: int = 2_000, *, rng: Any = None) -> MIPSRewardLists:
    """:func:`mips_uniform` data (one query) as a MAB-BP environment (``v_max = 1``);
    see :func:`mips_gaussian_env`."""
    owner = "mips_uniform_env"
    n = check_int(n, "n", owner=owner, low=1)
    dim = check_int(dim, "dim", owner=owner, low=1)
    return _mips_env(mips_uniform(n, dim, rng=rng))


def mips_adversarial_env(n: int = 2_000, dim: int = 10_000, *, rng: Any = None) -> MIPSBinaryRewardLists:
    """:func:`mips_adversarial` (same draws for the same ``rng``) with top-k aware
    :meth:`~MIPSBinaryRewardLists.is_correct`."""
    return _adversarial(n, dim, rng, MIPSBinaryRewardLists, "mips_adversarial_env")


# ---------------------------------------------------------------------- dynamic arms
class DynamicLinearArms:
    """A linear bandit whose arm set changes over time (Section 4 of Yang et al. 2022).

    The reward of arm ``a`` is ``x_a^T theta* + noise`` (Gaussian, standard deviation
    ``noise_sigma``). At step ``t`` (1-based) the arms ``events[t] = (added, removed)``
    enter / leave the set before the learner chooses. The environment tracks the best
    mean among present arms, so :meth:`regret` of a played arm is exact.

    Parameters
    ----------
    features : array of shape (n_total, d)
        Every arm that is ever present.
    theta : array of shape (d,)
    initial : int array
        Arms present at the start.
    events : dict int -> (int array, int array)
        Arrivals and departures per step.
    horizon : int
        ``T``.
    noise_sigma : float, default 1.0
    rng : None, int, SeedSequence or Generator
        Noise generator.
    name : str
    """

    def __init__(
        self,
        features: Any,
        theta: Any,
        initial: Any,
        events: dict[int, tuple[NDArray[np.int64], NDArray[np.int64]]],
        horizon: int,
        *,
        noise_sigma: float = 1.0,
        rng: Any = None,
        name: str = "dynamic-linear",
        info: dict[str, Any] | None = None,
    ) -> None:
        owner = "DynamicLinearArms"
        _reject_complex(features, "features", owner)
        _reject_complex(theta, "theta", owner)
        X = np.asarray(features, dtype=np.float64)
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise param_error("features", owner, "a finite 2-d array", features)
        th = np.asarray(theta, dtype=np.float64)
        if th.shape != (X.shape[1],) or not np.all(np.isfinite(th)):
            raise param_error("theta", owner, f"a finite array of shape ({X.shape[1]},)", theta)
        self.features = X
        self.theta = th
        self.d = X.shape[1]
        self.initial = np.asarray(initial, dtype=np.int64)
        self.events = events
        self.horizon = check_int(horizon, "horizon", owner=owner, low=1)
        self.noise_sigma = check_float(noise_sigma, "noise_sigma", owner=owner, low=0.0)
        self.name = name
        self.info = dict(info or {})
        self._values = X @ th
        self.max_size = self._max_size()
        self.reset(rng)

    def _max_size(self) -> int:
        size = peak = self.initial.size
        for t in sorted(self.events):
            a, r = self.events[t]
            size += a.size - r.size
            peak = max(peak, size)
        return int(peak)

    def reset(self, rng: Any = None) -> "DynamicLinearArms":
        """Restore the initial arm set with a new noise generator; returns self."""
        self.rng = check_rng(rng)
        return self.restart()

    def restart(self) -> "DynamicLinearArms":
        """Restore the initial arm set; the noise generator continues (a regret policy's
        ``run`` starts with this). Returns self."""
        self._present = np.zeros(self.features.shape[0], dtype=bool)
        self._present[self.initial] = True
        self._best = float(self._values[self.initial].max()) if self.initial.size else -np.inf
        return self

    def changes(self, t: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Apply and return the arrivals / departures of step ``t``."""
        ev = self.events.get(t)
        if ev is None:
            return _EMPTY, _EMPTY
        added, removed = ev
        if added.size:
            self._present[added] = True
            self._best = max(self._best, float(self._values[added].max()))
        if removed.size:
            self._present[removed] = False
            if np.any(self._values[removed] >= self._best):
                self._best = float(self._values[self._present].max())
        return added, removed

    def pull(self, arm: int) -> float:
        """A noisy reward of a present arm."""
        return float(self._values[arm] + self.noise_sigma * self.rng.standard_normal())

    def regret(self, arm: int) -> float:
        """``max_{a present} x_a^T theta* - x_arm^T theta*``."""
        return self._best - float(self._values[arm])

    def present(self) -> NDArray[np.int64]:
        return np.flatnonzero(self._present)

    def __repr__(self) -> str:
        return (f"DynamicLinearArms(name={self.name!r}, d={self.d}, initial={self.initial.size}, "
                f"max_size={self.max_size}, horizon={self.horizon})")


_EMPTY = np.zeros(0, dtype=np.int64)


def _schedule(
    n_initial: int, n_added: int, horizon: int, change: int, every: int, deletions: bool, g: np.random.Generator
) -> tuple[NDArray[np.int64], dict[int, tuple[NDArray[np.int64], NDArray[np.int64]]]]:
    initial = np.arange(n_initial, dtype=np.int64)
    events: dict[int, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}
    nxt = n_initial
    present = list(range(n_initial))
    for t in range(every, horizon + 1, every):
        if nxt >= n_initial + n_added:
            break
        add = np.arange(nxt, min(nxt + change, n_initial + n_added), dtype=np.int64)
        nxt += add.size
        rem = _EMPTY
        if deletions and present:
            pick = g.choice(len(present), size=min(change, len(present)), replace=False)
            rem = np.asarray(sorted(present[i] for i in pick), dtype=np.int64)
            keep = set(rem.tolist())
            present = [a for a in present if a not in keep]
        present.extend(add.tolist())
        events[t] = (add, rem)
    return initial, events


def sublinear_synthetic(
    K: int = 5_000,
    d: int = 16,
    T: int = 20_000,
    change: int = 2,
    *,
    every: int = 20,
    deletions: bool = False,
    rng: Any = None,
) -> DynamicLinearArms:
    """The synthetic environment of Section 7 (Tables 1-2; Appendix C with deletions).

    ``theta* ~ N(0, I_d)``; arms ~ N(0, I_d); unit Gaussian noise; ``change`` new arms
    every ``every`` steps over the horizon ``T``; without deletions the final arm-set size
    is ``K`` (so the run starts with ``K - change * floor(T / every)`` arms). With
    ``deletions=True`` (Appendix C) the run starts with ``K`` arms and ``change`` random
    present arms also leave at every change.

    Examples
    --------
    >>> env = sublinear_synthetic(K=300, d=4, T=200, rng=0)
    >>> env.initial.size, env.max_size
    (280, 300)
    """
    owner = "sublinear_synthetic"
    K = check_int(K, "K", owner=owner, low=1)
    d = check_int(d, "d", owner=owner, low=1)
    T = check_int(T, "T", owner=owner, low=1)
    change = check_int(change, "change", owner=owner, low=0)
    every = check_int(every, "every", owner=owner, low=1)
    deletions = check_bool(deletions, "deletions", owner=owner)
    n_added = change * (T // every)
    if not deletions and n_added >= K:
        raise InvalidParameterError(
            f"The 'K' parameter of {owner} must exceed the {n_added} arms added over the horizon "
            f"(change * floor(T / every)). Got {K} instead."
        )
    n_initial = K if deletions else K - n_added
    g = check_rng(rng)
    theta = g.standard_normal(d)
    X = g.standard_normal((n_initial + n_added, d))
    initial, events = _schedule(n_initial, n_added, T, change, every, deletions, g)
    return DynamicLinearArms(
        X, theta, initial, events, T, noise_sigma=1.0, rng=g.spawn(1)[0], name="sublinear-synthetic",
        info={"K": K, "d": d, "T": T, "change": change, "every": every, "deletions": deletions},
    )


def load_white_wine(path: Any = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The 4,898 white wines: (11 physicochemical features, quality), shipped in combex
    (:func:`combex.datasets.load_wine_quality`); ``path``: a data root of your own."""
    data = load_wine_quality("white", data_home=path)
    return np.array(data.data), np.array(data.target)


def wine_dynamic(
    T: int = 20_000,
    *,
    change: int = 2,
    every: int = 20,
    ridge: float = 1.0,
    path: Any = None,
    rng: Any = None,
) -> DynamicLinearArms:
    """A real-data dynamic linear bandit (Table 3 analogue) from the white-wine data.

    Arms are the 4,898 white wines; features are the 11 standardized physicochemical
    measurements plus a constant 1 (d = 12); ``theta*`` is the ridge-regression fit
    (penalty ``ridge``, intercept unpenalized) of the quality on them, and the noise is
    Gaussian with the fit's residual standard deviation. As in the paper's MovieLens
    environment, the run starts with part of the set and ``change`` arms arrive every
    ``every`` steps, revealing all 4,898 wines by the end (the wines are put in a random
    order first, so the arrivals are a random subset). The data are shipped in combex;
    ``path`` reads a data root of your own instead.
    """
    owner = "wine_dynamic"
    T = check_int(T, "T", owner=owner, low=1)
    change = check_int(change, "change", owner=owner, low=0)
    every = check_int(every, "every", owner=owner, low=1)
    ridge = check_float(ridge, "ridge", owner=owner, low=0.0)
    Xraw, y = load_white_wine(path)
    Z = (Xraw - Xraw.mean(axis=0)) / Xraw.std(axis=0)
    X = np.hstack([Z, np.ones((Z.shape[0], 1))])
    pen = ridge * np.eye(X.shape[1])
    pen[-1, -1] = 0.0
    theta = np.linalg.solve(X.T @ X + pen, X.T @ y)
    sigma = float(np.std(y - X @ theta))
    g = check_rng(rng)
    order = g.permutation(X.shape[0])
    X = X[order]
    n_added = min(change * (T // every), X.shape[0] - 1)
    initial, events = _schedule(X.shape[0] - n_added, n_added, T, max(change, 1), every, False, g)
    return DynamicLinearArms(
        X, theta, initial, events, T, noise_sigma=sigma, rng=g.spawn(1)[0], name="wine-dynamic",
        info={"d": X.shape[1], "T": T, "change": change, "every": every, "ridge": ridge, "n_wines": X.shape[0]},
    )
