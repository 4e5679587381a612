"""The ask / tell solver ``"bounded-me"``: BoundedME (Liu, Wu and Mozafari, AAAI 2019,
Algorithm 1) on finite reward lists (MAB-BP environments).

The algorithm -- its schedule and its direct loop -- lives in :mod:`combex.mips._bounded_me`
(public through :mod:`combex.mips`), used by :func:`combex.mips.mips_top_k` and by this
solver; see that module for the schedule and the choices made where the paper is
ambiguous. This module adds the ask / tell state (the schedule is fixed in advance, so
``ask`` returns the arms of the current round with the pulls they still need; the round
closes, with its elimination, when every surviving arm has reached ``t_l``) and two checks
at ``start`` that keep the guarantee honest:

* **Reading order.** Lemma 1 needs each list read in a uniformly random order. The
  solver cannot choose which entry an environment returns, so it requires the problem to
  declare ``info["order"] == "random"`` (``RewardLists(shuffle=True)``,
  ``BinaryRewardLists(order="random")``, the MIPS environments) and refuses any other
  order -- the adversarial data set of the paper's Figure 1 returns the ones first, and
  with lists longer than the schedule reads, BoundedME then answers wrongly in every run.
  ``BoundedME(assume_random_order=True)`` runs anyway (to reproduce Figure 1); such a run
  is heuristic and its certificate says so (``"guaranteed": False``).
* **Reward width.** A ``value_range`` smaller than the problem's known reward interval
  ``upper - lower`` would void the width the schedule is computed for: refused.

The certificate reports ``epsilon`` in reward units, the ``value_range`` it is relative to,
and whether the guarantee is *informative* (``epsilon < value_range``: list means cannot
differ by the whole width, so a larger epsilon promises nothing).
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_bool, check_float, check_int, check_probability, param_error
from ..exceptions import InvalidParameterError, StateError
from ..mips._bounded_me import (
    BoundedMEOutcome,
    BoundedMERound,
    _remove_lowest,
    bounded_me,
    bounded_me_schedule,
)
from ._base import Batch, Exploration, Solver
from ._registry import register_solver

# The algorithm's names are re-exported for code written against this module.
# BoundedME's schedule and loop are public in combex.mips (their one home); imported here for
# the solver only.
__all__ = ["BoundedME"]


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
    K : int, default 1
        The number of arms to return (the paper's k). ``k`` is a deprecated alias.
    epsilon : float, default 0.1
        Target suboptimality (reward units), > 0.
    delta : float, default 0.05
        Error probability in (0, 1).
    list_size : int, optional
        ``N``; read from ``problem.info["list_size"]`` when omitted.
    value_range : float, optional
        ``b - a``; read from ``problem.info`` (``upper - lower``) when omitted. A value
        smaller than the problem's ``upper - lower`` is refused at :meth:`start` (it would
        void the guarantee).
    assume_random_order : bool, default False
        Run on lists whose reading order is not declared uniformly random
        (``problem.info["order"] != "random"``), e.g. the ones-first lists of the paper's
        Figure 1. Such a run carries no guarantee (``certificate["guaranteed"]`` is False);
        without this flag the solver refuses it.

    Notes
    -----
    See the module docstring and :mod:`combex.mips._bounded_me` for the schedule and the
    choices made. The answer is an int for ``k == 1`` and a bool mask of the ``k``
    returned arms otherwise. ``certificate`` holds ``epsilon`` (reward units),
    ``value_range``, ``delta``, ``informative`` (``epsilon < value_range``),
    ``guaranteed`` (informative and read in a random order), the list ``order`` and the
    number of planned rounds.

    Examples
    --------
    >>> from combex.environments._lists import RewardLists
    >>> rng = np.random.default_rng(0)
    >>> lists = (rng.random((20, 200)) < np.linspace(0.1, 0.9, 20)[:, None]).astype(float)
    >>> env = RewardLists(lists, rng=1)
    >>> res = BoundedME(K=1, epsilon=0.2, delta=0.1).run(env, rng=2)
    >>> res.status, int(res.pulls.max()) <= 200
    ('identified', True)
    """

    name = "bounded-me"
    arm_type = "index"
    families = ("mips", "semi-bandit")
    renamed_params: ClassVar[Mapping[str, str]] = {"k": "K"}

    @property
    def tolerance(self) -> float:
        """The epsilon of the (epsilon, delta) top-k guarantee (Theorem 1), used for scoring."""
        return float(self.epsilon)

    def __init__(
        self,
        K: int = 1,
        epsilon: float = 0.1,
        delta: float = 0.05,
        *,
        list_size: int | None = None,
        value_range: float | None = None,
        assume_random_order: bool = False,
    ) -> None:
        owner = type(self).__name__
        self.K = check_int(K, "K", owner=owner, low=1)
        self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0, closed="neither")
        self.delta = check_probability(delta, "delta", owner=owner)
        self.list_size = None if list_size is None else check_int(list_size, "list_size", owner=owner, low=1)
        self.value_range = (
            None if value_range is None else check_float(value_range, "value_range", owner=owner, low=0.0, closed="neither")
        )
        self.assume_random_order = check_bool(assume_random_order, "assume_random_order", owner=owner)

    exploration_class: Any = None  # set below

    def start(self, problem: Any, *, rng: Any = None) -> "BoundedMEExploration":
        return BoundedMEExploration(self, problem, rng)


class BoundedMEExploration(Exploration):
    """State of one BoundedME run (see :class:`BoundedME`)."""

    stops_when = "the elimination schedule ends"

    def __init__(self, solver: BoundedME, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        p = self.problem
        n = int(p.n_arms)
        if solver.K > n:
            raise param_error("K", "BoundedME", f"an int in the range [1, {n}] (the number of arms)", solver.K)
        big_n = int(_problem_value(p, "list_size", solver.list_size))
        info = getattr(p, "info", None) or {}
        self._order = str(info.get("order", "undeclared"))
        if self._order != "random" and not solver.assume_random_order:
            raise InvalidParameterError(
                "BoundedME needs each reward list read in a uniformly random order (Lemma 1 "
                f"of Liu, Wu and Mozafari 2019); this problem's lists are read in the order "
                f"{self._order!r} (problem.info['order']). Use an environment that reads at "
                "random (RewardLists(shuffle=True), BinaryRewardLists(order='random')), declare "
                "problem.info['order'] = 'random' if yours does, or pass "
                "BoundedME(assume_random_order=True) (CLI: --param assume_random_order=true) for a heuristic run "
                "without guarantee."
            )
        known = "upper" in info and "lower" in info
        known_width = float(info["upper"]) - float(info["lower"]) if known else None
        if solver.value_range is not None:
            width = solver.value_range
            if known_width is not None and width < known_width * (1.0 - 1e-12):
                raise param_error(
                    "value_range", "BoundedME",
                    f"at least the width of the problem's reward interval, upper - lower = {known_width!r} "
                    "(a smaller width voids the guarantee)", width,
                )
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
        self._k = solver.K
        self._list_size = big_n
        self._width = width
        self._schedule = bounded_me_schedule(n, solver.K, big_n, solver.epsilon, solver.delta, value_range=width)
        informative = bool(solver.epsilon < width)
        order = getattr(self, "_order", "random")
        self.certificate = {
            "epsilon": solver.epsilon,
            "value_range": width,
            "delta": solver.delta,
            "informative": informative,
            "guaranteed": informative and order == "random",
            "order": order,
            "planned_rounds": len(self._schedule),
        }

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
            "order": self._order,
        }

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        solver = self.solver
        assert isinstance(solver, BoundedME)
        n = int(self.problem.n_arms)
        self._order = str(state.get("order", "random"))
        self._setup(solver, n, int(state["list_size"]), float(state["width"]))
        self._sums = np.asarray(state["sums"], dtype=np.float64).copy()
        self._pulls = np.asarray(state["pulls_arr"], dtype=np.int64).copy()
        self._active = np.asarray(state["active"], dtype=np.intp).copy()
        self._round = int(state["round"])


BoundedME.exploration_class = BoundedMEExploration
