"""BoundedME: median elimination for finite reward lists (MAB-BP).

Liu, Wu and Mozafari, "A Bandit Approach to Maximum Inner Product Search", AAAI 2019,
Algorithm 1 (top-K version). Arm ``i`` owns a finite list of ``N`` rewards in ``[a, b]``
drawn without replacement (:class:`~combex.environments._lists.RewardLists`). In round
``l`` every surviving arm is pulled up to::

    t_l = m( (b - a)^2 * 2 / eps_l^2 * log( 2 (|S_l| - K) / (delta_l (floor((|S_l| - K)/2) + 1)) ) )

times in total (line 7; ``m`` is eq. (6), :func:`~combex.estimation._without_replacement.
without_replacement_sample_size`), then the ``ceil((|S_l| - K)/2)`` arms with the smallest
empirical means are removed (lines 9-10), with ``eps_1 = eps/4``, ``delta_1 = delta/2``,
``eps_{l+1} = 3/4 eps_l``, ``delta_{l+1} = delta_l / 2`` (lines 4, 11). It stops when
``K`` arms remain. Theorem 1: the K returned arms are epsilon-optimal (the K-th best true
mean among them is within epsilon of the K-th best overall) with probability >= 1 - delta;
Corollary 2: no arm is pulled more than ``N`` times.

Choices where the paper is ambiguous (tested in ``tests/test_bounded_me.py``):

* the log term of line 7 uses ``ceil((|S_l|-K)/2) + 1`` in the algorithm box but
  ``floor((|S_l|-K)/2) + 1`` in the proof of Lemma 4 and in eq. (21); we use the
  **floor** of the proof, which is what the guarantee needs (and asks for at least as
  many samples);
* the integer number of pulls is ``ceil(m(u))`` (at most ``N``), and ``t_l`` is made
  non-decreasing (``t_l = max(t_l, t_{l-1})``) so a round never asks for negative pulls;
* ties in the empirical means are broken at random (the algorithm's generator).
* ``epsilon`` is in the units of the rewards (the paper's rewards lie in [0, 1]); the
  reward width ``b - a`` enters ``u`` as in Lemma 1.

The schedule is fixed in advance, so the ask / tell state is simple: ``ask`` returns the
arms of the current round with the pulls they still need; the round closes (elimination)
when every surviving arm has reached ``t_l``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from .._validation import check_float, check_int, check_probability, check_rng, param_error
from ..estimation._without_replacement import without_replacement_pulls
from ..exceptions import InvalidParameterError, StateError
from ._base import Batch, Exploration, Solver, register_solver

__all__ = ["BoundedME", "BoundedMERound", "bounded_me_schedule", "bounded_me", "BoundedMEOutcome"]


@dataclass(frozen=True)
class BoundedMERound:
    """One round ``l`` of Algorithm 1: ``n_arms = |S_l|``, cumulative pulls ``t``
    (``t_l``), ``epsilon`` (``eps_l``), ``delta`` (``delta_l``), ``n_removed``
    (``ceil((|S_l| - K)/2)``)."""

    n_arms: int
    t: int
    epsilon: float
    delta: float
    n_removed: int


def bounded_me_schedule(
    n_arms: int,
    k: int,
    list_size: int,
    epsilon: float,
    delta: float,
    *,
    value_range: float = 1.0,
) -> list[BoundedMERound]:
    """The fixed schedule of Algorithm 1 (lines 4-11).

    Parameters
    ----------
    n_arms : int
        ``n = |A|``.
    k : int
        ``K``, in ``[1, n]``.
    list_size : int
        ``N``, the length of every reward list.
    epsilon : float
        Target suboptimality, > 0 (reward units).
    delta : float
        Error probability in (0, 1).
    value_range : float, default 1.0
        ``b - a``, the width of the reward interval, > 0.

    Returns
    -------
    list of BoundedMERound
        Empty when ``k == n_arms``.

    Examples
    --------
    >>> [r.n_arms for r in bounded_me_schedule(10, 2, 1000, 0.5, 0.1)]
    [10, 6, 4, 3]
    """
    owner = "BoundedME"
    n = check_int(n_arms, "n_arms", owner=owner, low=1)
    k = check_int(k, "k", owner=owner, low=1, high=n)
    big_n = check_int(list_size, "list_size", owner=owner, low=1)
    epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
    delta = check_probability(delta, "delta", owner=owner)
    value_range = check_float(value_range, "value_range", owner=owner, low=0.0, closed="neither")
    rounds: list[BoundedMERound] = []
    size, eps_l, delta_l, t_prev = n, epsilon / 4.0, delta / 2.0, 0
    while size > k:
        excess = size - k
        log_term = math.log(2.0 * excess / (delta_l * (excess // 2 + 1)))
        u = value_range**2 * 2.0 / eps_l**2 * log_term
        t = max(int(without_replacement_pulls(u, big_n)), t_prev)
        n_removed = (excess + 1) // 2
        rounds.append(BoundedMERound(size, t, eps_l, delta_l, n_removed))
        size -= n_removed
        eps_l *= 0.75
        delta_l /= 2.0
        t_prev = t
    return rounds


def _remove_lowest(
    means: NDArray[np.float64], active: NDArray[np.intp], n_remove: int, rng: np.random.Generator
) -> NDArray[np.intp]:
    """Survivors of ``active`` after removing the ``n_remove`` smallest ``means[active]``
    (ties at random)."""
    if n_remove <= 0:
        return active
    m = means[active]
    tie = rng.random(active.size)
    order = np.lexsort((tie, m))  # ascending mean, random among ties
    keep = np.sort(order[n_remove:])
    return active[keep]


# ---------------------------------------------------------------------- direct function
@dataclass(frozen=True)
class BoundedMEOutcome:
    """Result of :func:`bounded_me`: the K arms (sorted by empirical mean, best first),
    their empirical means, per-arm pulls, total pulls and the schedule used."""

    arms: NDArray[np.intp]
    means: NDArray[np.float64]
    pulls: NDArray[np.int64]
    samples: int
    schedule: list[BoundedMERound]


def bounded_me(
    pull: Callable[[NDArray[np.intp], int, int], NDArray[np.float64]],
    n_arms: int,
    k: int,
    list_size: int,
    *,
    epsilon: float,
    delta: float,
    value_range: float = 1.0,
    rng: Any = None,
) -> BoundedMEOutcome:
    """Run Algorithm 1 directly (no ask / tell), as fast as the ``pull`` callback allows.

    Parameters
    ----------
    pull : callable ``pull(arms, start, stop) -> sums``
        Sum of the rewards at positions ``start..stop-1`` of each arm's (random) draw
        order, for the int array ``arms``. Draw orders must be fixed for the whole run
        (sampling without replacement); e.g. for MIPS with a shared random permutation of
        the coordinates, ``sum(V[arms][:, perm[start:stop]] * q[perm[start:stop]])``.
    n_arms, k, list_size, epsilon, delta, value_range
        As in :func:`bounded_me_schedule`.
    rng : None, int, SeedSequence or Generator
        Breaks ties.

    Returns
    -------
    BoundedMEOutcome

    Examples
    --------
    >>> lists = np.array([[0, 1, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], dtype=float)
    >>> out = bounded_me(lambda a, s, e: lists[a, s:e].sum(axis=1), 3, 1, 4,
    ...                  epsilon=0.1, delta=0.1, rng=0)
    >>> out.arms.tolist(), int(out.pulls.max()) <= 4
    ([2], True)
    """
    rng = check_rng(rng)
    schedule = bounded_me_schedule(n_arms, k, list_size, epsilon, delta, value_range=value_range)
    sums = np.zeros(n_arms, dtype=np.float64)
    pulls = np.zeros(n_arms, dtype=np.int64)
    active = np.arange(n_arms, dtype=np.intp)
    t_prev = 0
    for rnd in schedule:
        if rnd.t > t_prev:
            s = np.asarray(pull(active, t_prev, rnd.t), dtype=np.float64)
            if s.shape != (active.size,) or not np.all(np.isfinite(s)):
                raise InvalidParameterError(
                    "The 'pull' callback of bounded_me must return finite sums of shape "
                    f"({active.size},)."
                )
            sums[active] += s
            pulls[active] = rnd.t
        t_prev = rnd.t
        means = np.divide(sums, pulls, out=np.zeros_like(sums), where=pulls > 0)
        active = _remove_lowest(means, active, rnd.n_removed, rng)
    means = np.divide(sums, pulls, out=np.zeros_like(sums), where=pulls > 0)
    order = np.argsort(-means[active], kind="stable")
    arms = active[order]
    return BoundedMEOutcome(arms, means[arms], pulls, int(pulls.sum()), schedule)


# ---------------------------------------------------------------------- Solver
def _problem_value(problem: Any, key: str, override: Any) -> Any:
    if override is not None:
        return override
    info = getattr(problem, "info", None) or {}
    if key not in info:
        raise InvalidParameterError(
            f"BoundedME needs the reward lists' {key!r}: the problem does not carry it in "
            f"problem.info; pass it to BoundedME({key}=...)."
        )
    return info[key]


@register_solver
class BoundedME(Solver):
    """BoundedME (Algorithm 1 of Liu, Wu and Mozafari 2019) as an ask / tell solver.

    Parameters
    ----------
    k : int, default 1
        ``K``, the number of arms to return.
    epsilon : float, default 0.1
        Target suboptimality (reward units), > 0.
    delta : float, default 0.05
        Error probability in (0, 1).
    list_size : int, optional
        ``N``; read from ``problem.info["list_size"]`` when omitted.
    value_range : float, optional
        ``b - a``; read from ``problem.info`` (``upper - lower``) when omitted.

    Notes
    -----
    See the module docstring for the schedule and the choices made. The answer is an
    int for ``k == 1`` and a bool mask of the ``k`` returned arms otherwise.
    ``certificate`` holds ``epsilon``, ``delta`` and the number of rounds.

    Examples
    --------
    >>> from combex.environments._lists import RewardLists
    >>> rng = np.random.default_rng(0)
    >>> lists = (rng.random((20, 200)) < np.linspace(0.1, 0.9, 20)[:, None]).astype(float)
    >>> env = RewardLists(lists, rng=1)
    >>> res = BoundedME(k=1, epsilon=0.2, delta=0.1).run(env, rng=2)
    >>> res.status, int(res.pulls.max()) <= 200
    ('identified', True)
    """

    name = "bounded-me"
    arm_type = "index"

    @property
    def tolerance(self) -> float:
        """The epsilon of the (epsilon, delta) top-k guarantee (Theorem 1), used for scoring."""
        return float(self.epsilon)

    def __init__(
        self,
        k: int = 1,
        epsilon: float = 0.1,
        delta: float = 0.05,
        *,
        list_size: int | None = None,
        value_range: float | None = None,
    ) -> None:
        owner = type(self).__name__
        self.k = check_int(k, "k", owner=owner, low=1)
        self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
        self.delta = check_probability(delta, "delta", owner=owner)
        self.list_size = None if list_size is None else check_int(list_size, "list_size", owner=owner, low=1)
        self.value_range = (
            None if value_range is None else check_float(value_range, "value_range", owner=owner, low=0.0, closed="neither")
        )

    exploration_class: Any = None  # set below

    def start(self, problem: Any, *, rng: Any = None) -> "BoundedMEExploration":
        return BoundedMEExploration(self, problem, rng)


class BoundedMEExploration(Exploration):
    """State of one BoundedME run (see :class:`BoundedME`)."""

    def __init__(self, solver: BoundedME, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        p = self.problem
        n = int(p.n_arms)
        if solver.k > n:
            raise param_error("k", "BoundedME", f"an int in the range [1, {n}] (the number of arms)", solver.k)
        big_n = int(_problem_value(p, "list_size", solver.list_size))
        if solver.value_range is not None:
            width = solver.value_range
        else:
            width = float(_problem_value(p, "upper", None)) - float(_problem_value(p, "lower", None))
            width = width if width > 0 else 1.0
        self._setup(solver, n, big_n, width)
        self._sums = np.zeros(n, dtype=np.float64)
        self._pulls = np.zeros(n, dtype=np.int64)
        self._active = np.arange(n, dtype=np.intp)
        self._round = 0
        if not self._schedule:
            self.stop("identified", "k equals the number of arms")

    def _setup(self, solver: BoundedME, n: int, big_n: int, width: float) -> None:
        self._k = solver.k
        self._list_size = big_n
        self._width = width
        self._schedule = bounded_me_schedule(n, solver.k, big_n, solver.epsilon, solver.delta, value_range=width)
        self.certificate = {"epsilon": solver.epsilon, "delta": solver.delta, "planned_rounds": len(self._schedule)}

    # ------------------------------------------------------------------ contract
    def _target(self) -> int:
        return self._schedule[self._round].t

    def _next_batch(self) -> Batch:
        need = self._target() - self._pulls[self._active]
        sel = need > 0
        return Batch(self._active[sel].astype(np.int64), need[sel].astype(np.int64))

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        arms = np.asarray(batch.arms, dtype=np.intp)
        if arms.ndim != 1:
            raise StateError("BoundedME expects index arms.")
        np.add.at(self._sums, arms, reward_sums)
        np.add.at(self._pulls, arms, batch.counts)
        if np.any(self._pulls > self._list_size):
            raise StateError(
                f"An arm was reported pulled more than N = {self._list_size} times; reward "
                "lists are sampled without replacement."
            )
        # Close every round whose target is met (several when t_l == t_{l-1}).
        while not self.done and np.all(self._pulls[self._active] >= self._target()):
            rnd = self._schedule[self._round]
            self._active = _remove_lowest(self._means(), self._active, rnd.n_removed, self.rng)
            self.rounds += 1
            self.record(n_active=self._active.size, t=rnd.t, epsilon=rnd.epsilon)
            self._round += 1
            if self._round >= len(self._schedule):
                self.stop("identified", f"{self._k} arms remain after {self.rounds} rounds")

    def _means(self) -> NDArray[np.float64]:
        return np.divide(self._sums, self._pulls, out=np.zeros_like(self._sums), where=self._pulls > 0)

    @property
    def recommendation(self) -> Any:
        means = self._means()
        act = self._active
        top = act[np.argsort(-means[act], kind="stable")[: self._k]]
        if self._k == 1:
            return int(top[0])
        mask = np.zeros(self.problem.n_arms, dtype=bool)
        mask[top] = True
        return mask

    @property
    def pulls(self) -> NDArray[np.int64]:
        return self._pulls

    @property
    def active(self) -> NDArray[np.intp]:
        """Arms still in ``S_l`` (a copy)."""
        return self._active.copy()

    def _info(self) -> dict[str, Any]:
        return {"list_size": self._list_size, "value_range": self._width, "active": self._active.tolist()}

    # ------------------------------------------------------------------ save / resume
    def _extra_state(self) -> dict[str, Any]:
        return {
            "sums": self._sums,
            "pulls_arr": self._pulls,
            "active": self._active.astype(np.int64),
            "round": self._round,
            "list_size": self._list_size,
            "width": self._width,
        }

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        solver = self.solver
        assert isinstance(solver, BoundedME)
        n = int(self.problem.n_arms)
        self._setup(solver, n, int(state["list_size"]), float(state["width"]))
        self._sums = np.asarray(state["sums"], dtype=np.float64).copy()
        self._pulls = np.asarray(state["pulls_arr"], dtype=np.int64).copy()
        self._active = np.asarray(state["active"], dtype=np.intp).copy()
        self._round = int(state["round"])


BoundedME.exploration_class = BoundedMEExploration
